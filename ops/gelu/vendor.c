/*
 * gelu — vendor baseline: oneDNN (2.6) eltwise gelu_erf, forward_inference,
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

#define GELU_DNNL_CHECK(call)                                                \
    do {                                                                     \
        dnnl_status_t st_ = (call);                                          \
        if (st_ != dnnl_success) {                                           \
            fprintf(stderr, "gelu vendor: %s failed (status %d)\n",          \
                    #call, (int)st_);                                        \
            abort();                                                         \
        }                                                                    \
    } while (0)

#define GELU_NSTEPS 1

static dnnl_engine_t gelu_engine;
static dnnl_stream_t gelu_stream;
static dnnl_primitive_t gelu_prim[GELU_NSTEPS];
static dnnl_memory_t gelu_src, gelu_dst;
static int64_t gelu_n = -1;

static dnnl_primitive_t gelu_make(const dnnl_memory_desc_t *md,
                                 dnnl_alg_kind_t alg, float alpha, float beta)
{
    dnnl_eltwise_desc_t desc;
    GELU_DNNL_CHECK(dnnl_eltwise_forward_desc_init(
        &desc, dnnl_forward_inference, alg, md, alpha, beta));
    dnnl_primitive_desc_t pd;
    dnnl_primitive_t prim;
    GELU_DNNL_CHECK(dnnl_primitive_desc_create(&pd, &desc, NULL, gelu_engine, NULL));
    GELU_DNNL_CHECK(dnnl_primitive_create(&prim, pd));
    dnnl_primitive_desc_destroy(pd);
    return prim;
}

static void gelu_setup(int64_t n)
{
    if (!gelu_engine) {
        GELU_DNNL_CHECK(dnnl_engine_create(&gelu_engine, dnnl_cpu, 0));
        GELU_DNNL_CHECK(dnnl_stream_create(&gelu_stream, gelu_engine,
                                           dnnl_stream_default_flags));
    }
    if (gelu_prim[0]) {
        for (int s = 0; s < GELU_NSTEPS; s++)
            dnnl_primitive_destroy(gelu_prim[s]);
        dnnl_memory_destroy(gelu_src);
        dnnl_memory_destroy(gelu_dst);
        gelu_prim[0] = NULL;
    }
    dnnl_dims_t dims = {n};
    dnnl_memory_desc_t md;
    GELU_DNNL_CHECK(dnnl_memory_desc_init_by_tag(&md, 1, dims, dnnl_f32, dnnl_a));
    gelu_prim[0] = gelu_make(&md, dnnl_eltwise_gelu_erf, 0.0f, 0.0f);
    GELU_DNNL_CHECK(dnnl_memory_create(&gelu_src, &md, gelu_engine, DNNL_MEMORY_NONE));
    GELU_DNNL_CHECK(dnnl_memory_create(&gelu_dst, &md, gelu_engine, DNNL_MEMORY_NONE));
    gelu_n = n;
}

void gelu(const float *x, float *y, int64_t n)
{
    if (n != gelu_n)
        gelu_setup(n);
    GELU_DNNL_CHECK(dnnl_memory_set_data_handle(gelu_src, (void *)x));
    GELU_DNNL_CHECK(dnnl_memory_set_data_handle(gelu_dst, y));
    for (int s = 0; s < GELU_NSTEPS; s++) {
        dnnl_exec_arg_t args[2] = {
            {DNNL_ARG_SRC, s == 0 ? gelu_src : gelu_dst},
            {DNNL_ARG_DST, gelu_dst}};
        GELU_DNNL_CHECK(dnnl_primitive_execute(gelu_prim[s], gelu_stream, 2, args));
    }
    GELU_DNNL_CHECK(dnnl_stream_wait(gelu_stream));
}
