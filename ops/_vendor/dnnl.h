/*
 * Shared helper of the trusted oneDNN (2.6) vendor baselines: the error
 * check, the CPU engine and stream, and primitive creation. A baseline
 * defines KV_NAME (its operator's name, a string) and includes this file
 * (or a helper that includes it) with `#include "../_vendor/dnnl.h"`; kope
 * puts the text in place when it builds the baseline (src/op/trusted.c,
 * docs/operator-format.md). Every function is static: one baseline is one
 * translation unit. Any oneDNN error aborts with a message: a baseline must
 * never silently produce garbage.
 */
#ifndef KV_DNNL_H
#define KV_DNNL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <oneapi/dnnl/dnnl.h>

#ifndef KV_NAME
#error "define KV_NAME (the operator's name) before including _vendor/dnnl.h"
#endif

#define KV_CHECK(call)                                                    \
    do {                                                                  \
        dnnl_status_t st_ = (call);                                       \
        if (st_ != dnnl_success) {                                        \
            fprintf(stderr, "%s vendor: %s failed (status %d)\n",         \
                    KV_NAME, #call, (int)st_);                            \
            abort();                                                      \
        }                                                                 \
    } while (0)

static dnnl_engine_t kv_engine;
static dnnl_stream_t kv_stream;

/* Create the CPU engine and its stream on first use. */
static inline void kv_init(void)
{
    if (kv_engine)
        return;
    KV_CHECK(dnnl_engine_create(&kv_engine, dnnl_cpu, 0));
    KV_CHECK(dnnl_stream_create(&kv_stream, kv_engine, dnnl_stream_default_flags));
}

/* The primitive of an operation descriptor (attr may be NULL). */
static inline dnnl_primitive_t kv_make(const_dnnl_op_desc_t desc,
                                       const_dnnl_primitive_attr_t attr)
{
    dnnl_primitive_desc_t pd;
    dnnl_primitive_t prim;
    KV_CHECK(dnnl_primitive_desc_create(&pd, desc, attr, kv_engine, NULL));
    KV_CHECK(dnnl_primitive_create(&prim, pd));
    dnnl_primitive_desc_destroy(pd);
    return prim;
}

/* A reorder primitive from one layout to another. */
static inline dnnl_primitive_t kv_reorder(const dnnl_memory_desc_t *from,
                                          const dnnl_memory_desc_t *to)
{
    dnnl_primitive_desc_t pd;
    dnnl_primitive_t prim;
    KV_CHECK(dnnl_reorder_primitive_desc_create(&pd, from, kv_engine, to,
                                                kv_engine, NULL));
    KV_CHECK(dnnl_primitive_create(&prim, pd));
    dnnl_primitive_desc_destroy(pd);
    return prim;
}

/* A plain f32 memory descriptor. */
static inline dnnl_memory_desc_t kv_md(int ndims, const dnnl_dims_t dims,
                                       dnnl_format_tag_t tag)
{
    dnnl_memory_desc_t md;
    KV_CHECK(dnnl_memory_desc_init_by_tag(&md, ndims, dims, dnnl_f32, tag));
    return md;
}

/* A memory object of md: its own buffer (alloc) or one bound later. */
static inline dnnl_memory_t kv_mem(const dnnl_memory_desc_t *md, int alloc)
{
    dnnl_memory_t m;
    KV_CHECK(dnnl_memory_create(&m, md, kv_engine,
                                alloc ? DNNL_MEMORY_ALLOCATE : DNNL_MEMORY_NONE));
    return m;
}

/* Execute a primitive with two arguments (no wait). */
static inline void kv_run2(dnnl_primitive_t prim, int a0, dnnl_memory_t m0, int a1,
                           dnnl_memory_t m1)
{
    dnnl_exec_arg_t args[2] = {{a0, m0}, {a1, m1}};
    KV_CHECK(dnnl_primitive_execute(prim, kv_stream, 2, args));
}

#endif
