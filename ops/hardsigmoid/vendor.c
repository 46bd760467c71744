/*
 * hardsigmoid — vendor baseline: oneDNN (2.6) eltwise linear then clip, forward_inference,
 * on a 1-D f32 tensor of n elements, on the CPU engine.
 * The first primitive reads x and writes y; the next ones run in place on
 * y (separate primitives: in oneDNN 2.6 an eltwise primitive with eltwise
 * post-ops only has the slow reference implementation, while each plain
 * eltwise primitive is JIT-compiled).
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

#define HARDSIGMOID_DNNL_CHECK(call)                                         \
    do {                                                                     \
        dnnl_status_t st_ = (call);                                          \
        if (st_ != dnnl_success) {                                           \
            fprintf(stderr, "hardsigmoid vendor: %s failed (status %d)\n",   \
                    #call, (int)st_);                                        \
            abort();                                                         \
        }                                                                    \
    } while (0)

#define HARDSIGMOID_NSTEPS 2

static dnnl_engine_t hardsigmoid_engine;
static dnnl_stream_t hardsigmoid_stream;
static dnnl_primitive_t hardsigmoid_prim[HARDSIGMOID_NSTEPS];
static dnnl_memory_t hardsigmoid_src, hardsigmoid_dst;
static int64_t hardsigmoid_n = -1;

static dnnl_primitive_t hardsigmoid_make(const dnnl_memory_desc_t *md,
                                        dnnl_alg_kind_t alg, float alpha, float beta)
{
    dnnl_eltwise_desc_t desc;
    HARDSIGMOID_DNNL_CHECK(dnnl_eltwise_forward_desc_init(
        &desc, dnnl_forward_inference, alg, md, alpha, beta));
    dnnl_primitive_desc_t pd;
    dnnl_primitive_t prim;
    HARDSIGMOID_DNNL_CHECK(dnnl_primitive_desc_create(&pd, &desc, NULL, hardsigmoid_engine, NULL));
    HARDSIGMOID_DNNL_CHECK(dnnl_primitive_create(&prim, pd));
    dnnl_primitive_desc_destroy(pd);
    return prim;
}

static void hardsigmoid_setup(int64_t n)
{
    if (!hardsigmoid_engine) {
        HARDSIGMOID_DNNL_CHECK(dnnl_engine_create(&hardsigmoid_engine, dnnl_cpu, 0));
        HARDSIGMOID_DNNL_CHECK(dnnl_stream_create(&hardsigmoid_stream, hardsigmoid_engine,
                                                  dnnl_stream_default_flags));
    }
    if (hardsigmoid_prim[0]) {
        for (int s = 0; s < HARDSIGMOID_NSTEPS; s++)
            dnnl_primitive_destroy(hardsigmoid_prim[s]);
        dnnl_memory_destroy(hardsigmoid_src);
        dnnl_memory_destroy(hardsigmoid_dst);
        hardsigmoid_prim[0] = NULL;
    }
    dnnl_dims_t dims = {n};
    dnnl_memory_desc_t md;
    HARDSIGMOID_DNNL_CHECK(dnnl_memory_desc_init_by_tag(&md, 1, dims, dnnl_f32, dnnl_a));
    hardsigmoid_prim[0] = hardsigmoid_make(&md, dnnl_eltwise_linear, 1.0f / 6.0f, 0.5f);
    hardsigmoid_prim[1] = hardsigmoid_make(&md, dnnl_eltwise_clip, 0.0f, 1.0f);
    HARDSIGMOID_DNNL_CHECK(dnnl_memory_create(&hardsigmoid_src, &md, hardsigmoid_engine, DNNL_MEMORY_NONE));
    HARDSIGMOID_DNNL_CHECK(dnnl_memory_create(&hardsigmoid_dst, &md, hardsigmoid_engine, DNNL_MEMORY_NONE));
    hardsigmoid_n = n;
}

void hardsigmoid(const float *x, float *y, int64_t n)
{
    if (n != hardsigmoid_n)
        hardsigmoid_setup(n);
    HARDSIGMOID_DNNL_CHECK(dnnl_memory_set_data_handle(hardsigmoid_src, (void *)x));
    HARDSIGMOID_DNNL_CHECK(dnnl_memory_set_data_handle(hardsigmoid_dst, y));
    for (int s = 0; s < HARDSIGMOID_NSTEPS; s++) {
        dnnl_exec_arg_t args[2] = {
            {DNNL_ARG_SRC, s == 0 ? hardsigmoid_src : hardsigmoid_dst},
            {DNNL_ARG_DST, hardsigmoid_dst}};
        HARDSIGMOID_DNNL_CHECK(dnnl_primitive_execute(hardsigmoid_prim[s], hardsigmoid_stream, 2, args));
    }
    HARDSIGMOID_DNNL_CHECK(dnnl_stream_wait(hardsigmoid_stream));
}
