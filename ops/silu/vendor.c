/*
 * silu — vendor baseline: oneDNN (2.6) eltwise swish, forward_inference,
 * on a 1-D f32 tensor of n elements, on the CPU engine.
 *
 * The engine and stream are created once; the primitive(s) and the two
 * memory objects are cached for the last n (and params) seen, so a call
 * with the same shape only rebinds the data pointers and executes. Any
 * oneDNN error aborts with a message: a baseline must never silently
 * produce garbage.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <oneapi/dnnl/dnnl.h>

#define SILU_DNNL_CHECK(call)                                                \
    do {                                                                     \
        dnnl_status_t st_ = (call);                                          \
        if (st_ != dnnl_success) {                                           \
            fprintf(stderr, "silu vendor: %s failed (status %d)\n",          \
                    #call, (int)st_);                                        \
            abort();                                                         \
        }                                                                    \
    } while (0)

#define SILU_NSTEPS 1

static dnnl_engine_t silu_engine;
static dnnl_stream_t silu_stream;
static dnnl_primitive_t silu_prim[SILU_NSTEPS];
static dnnl_memory_t silu_src, silu_dst;
static int64_t silu_n = -1;

static dnnl_primitive_t silu_make(const dnnl_memory_desc_t *md,
                                 dnnl_alg_kind_t alg, float alpha, float beta)
{
    dnnl_eltwise_desc_t desc;
    SILU_DNNL_CHECK(dnnl_eltwise_forward_desc_init(
        &desc, dnnl_forward_inference, alg, md, alpha, beta));
    dnnl_primitive_desc_t pd;
    dnnl_primitive_t prim;
    SILU_DNNL_CHECK(dnnl_primitive_desc_create(&pd, &desc, NULL, silu_engine, NULL));
    SILU_DNNL_CHECK(dnnl_primitive_create(&prim, pd));
    dnnl_primitive_desc_destroy(pd);
    return prim;
}

static void silu_setup(int64_t n)
{
    if (!silu_engine) {
        SILU_DNNL_CHECK(dnnl_engine_create(&silu_engine, dnnl_cpu, 0));
        SILU_DNNL_CHECK(dnnl_stream_create(&silu_stream, silu_engine,
                                           dnnl_stream_default_flags));
    }
    if (silu_prim[0]) {
        for (int s = 0; s < SILU_NSTEPS; s++)
            dnnl_primitive_destroy(silu_prim[s]);
        dnnl_memory_destroy(silu_src);
        dnnl_memory_destroy(silu_dst);
        silu_prim[0] = NULL;
    }
    dnnl_dims_t dims = {n};
    dnnl_memory_desc_t md;
    SILU_DNNL_CHECK(dnnl_memory_desc_init_by_tag(&md, 1, dims, dnnl_f32, dnnl_a));
    silu_prim[0] = silu_make(&md, dnnl_eltwise_swish, 1.0f, 0.0f);
    SILU_DNNL_CHECK(dnnl_memory_create(&silu_src, &md, silu_engine, DNNL_MEMORY_NONE));
    SILU_DNNL_CHECK(dnnl_memory_create(&silu_dst, &md, silu_engine, DNNL_MEMORY_NONE));
    silu_n = n;
}

void silu(const float *x, float *y, int64_t n)
{
    if (n != silu_n)
        silu_setup(n);
    SILU_DNNL_CHECK(dnnl_memory_set_data_handle(silu_src, (void *)x));
    SILU_DNNL_CHECK(dnnl_memory_set_data_handle(silu_dst, y));
    for (int s = 0; s < SILU_NSTEPS; s++) {
        dnnl_exec_arg_t args[2] = {
            {DNNL_ARG_SRC, s == 0 ? silu_src : silu_dst},
            {DNNL_ARG_DST, silu_dst}};
        SILU_DNNL_CHECK(dnnl_primitive_execute(silu_prim[s], silu_stream, 2, args));
    }
    SILU_DNNL_CHECK(dnnl_stream_wait(silu_stream));
}
