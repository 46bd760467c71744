/*
 * gelu_tanh — vendor baseline: oneDNN (2.6) eltwise gelu_tanh, forward_inference,
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

#define GELU_TANH_DNNL_CHECK(call)                                           \
    do {                                                                     \
        dnnl_status_t st_ = (call);                                          \
        if (st_ != dnnl_success) {                                           \
            fprintf(stderr, "gelu_tanh vendor: %s failed (status %d)\n",     \
                    #call, (int)st_);                                        \
            abort();                                                         \
        }                                                                    \
    } while (0)

#define GELU_TANH_NSTEPS 1

static dnnl_engine_t gelu_tanh_engine;
static dnnl_stream_t gelu_tanh_stream;
static dnnl_primitive_t gelu_tanh_prim[GELU_TANH_NSTEPS];
static dnnl_memory_t gelu_tanh_src, gelu_tanh_dst;
static int64_t gelu_tanh_n = -1;

static dnnl_primitive_t gelu_tanh_make(const dnnl_memory_desc_t *md,
                                      dnnl_alg_kind_t alg, float alpha, float beta)
{
    dnnl_eltwise_desc_t desc;
    GELU_TANH_DNNL_CHECK(dnnl_eltwise_forward_desc_init(
        &desc, dnnl_forward_inference, alg, md, alpha, beta));
    dnnl_primitive_desc_t pd;
    dnnl_primitive_t prim;
    GELU_TANH_DNNL_CHECK(dnnl_primitive_desc_create(&pd, &desc, NULL, gelu_tanh_engine, NULL));
    GELU_TANH_DNNL_CHECK(dnnl_primitive_create(&prim, pd));
    dnnl_primitive_desc_destroy(pd);
    return prim;
}

static void gelu_tanh_setup(int64_t n)
{
    if (!gelu_tanh_engine) {
        GELU_TANH_DNNL_CHECK(dnnl_engine_create(&gelu_tanh_engine, dnnl_cpu, 0));
        GELU_TANH_DNNL_CHECK(dnnl_stream_create(&gelu_tanh_stream, gelu_tanh_engine,
                                                dnnl_stream_default_flags));
    }
    if (gelu_tanh_prim[0]) {
        for (int s = 0; s < GELU_TANH_NSTEPS; s++)
            dnnl_primitive_destroy(gelu_tanh_prim[s]);
        dnnl_memory_destroy(gelu_tanh_src);
        dnnl_memory_destroy(gelu_tanh_dst);
        gelu_tanh_prim[0] = NULL;
    }
    dnnl_dims_t dims = {n};
    dnnl_memory_desc_t md;
    GELU_TANH_DNNL_CHECK(dnnl_memory_desc_init_by_tag(&md, 1, dims, dnnl_f32, dnnl_a));
    gelu_tanh_prim[0] = gelu_tanh_make(&md, dnnl_eltwise_gelu_tanh, 0.0f, 0.0f);
    GELU_TANH_DNNL_CHECK(dnnl_memory_create(&gelu_tanh_src, &md, gelu_tanh_engine, DNNL_MEMORY_NONE));
    GELU_TANH_DNNL_CHECK(dnnl_memory_create(&gelu_tanh_dst, &md, gelu_tanh_engine, DNNL_MEMORY_NONE));
    gelu_tanh_n = n;
}

void gelu_tanh(const float *x, float *y, int64_t n)
{
    if (n != gelu_tanh_n)
        gelu_tanh_setup(n);
    GELU_TANH_DNNL_CHECK(dnnl_memory_set_data_handle(gelu_tanh_src, (void *)x));
    GELU_TANH_DNNL_CHECK(dnnl_memory_set_data_handle(gelu_tanh_dst, y));
    for (int s = 0; s < GELU_TANH_NSTEPS; s++) {
        dnnl_exec_arg_t args[2] = {
            {DNNL_ARG_SRC, s == 0 ? gelu_tanh_src : gelu_tanh_dst},
            {DNNL_ARG_DST, gelu_tanh_dst}};
        GELU_TANH_DNNL_CHECK(dnnl_primitive_execute(gelu_tanh_prim[s], gelu_tanh_stream, 2, args));
    }
    GELU_TANH_DNNL_CHECK(dnnl_stream_wait(gelu_tanh_stream));
}
