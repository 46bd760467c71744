/*
 * leaky_relu — vendor baseline: oneDNN (2.6) eltwise relu, forward_inference,
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

#define LEAKY_RELU_DNNL_CHECK(call)                                          \
    do {                                                                     \
        dnnl_status_t st_ = (call);                                          \
        if (st_ != dnnl_success) {                                           \
            fprintf(stderr, "leaky_relu vendor: %s failed (status %d)\n",    \
                    #call, (int)st_);                                        \
            abort();                                                         \
        }                                                                    \
    } while (0)

#define LEAKY_RELU_NSTEPS 1

static dnnl_engine_t leaky_relu_engine;
static dnnl_stream_t leaky_relu_stream;
static dnnl_primitive_t leaky_relu_prim[LEAKY_RELU_NSTEPS];
static dnnl_memory_t leaky_relu_src, leaky_relu_dst;
static int64_t leaky_relu_n = -1;
static float leaky_relu_k_negative_slope;

static dnnl_primitive_t leaky_relu_make(const dnnl_memory_desc_t *md,
                                       dnnl_alg_kind_t alg, float alpha, float beta)
{
    dnnl_eltwise_desc_t desc;
    LEAKY_RELU_DNNL_CHECK(dnnl_eltwise_forward_desc_init(
        &desc, dnnl_forward_inference, alg, md, alpha, beta));
    dnnl_primitive_desc_t pd;
    dnnl_primitive_t prim;
    LEAKY_RELU_DNNL_CHECK(dnnl_primitive_desc_create(&pd, &desc, NULL, leaky_relu_engine, NULL));
    LEAKY_RELU_DNNL_CHECK(dnnl_primitive_create(&prim, pd));
    dnnl_primitive_desc_destroy(pd);
    return prim;
}

static void leaky_relu_setup(int64_t n, float negative_slope)
{
    if (!leaky_relu_engine) {
        LEAKY_RELU_DNNL_CHECK(dnnl_engine_create(&leaky_relu_engine, dnnl_cpu, 0));
        LEAKY_RELU_DNNL_CHECK(dnnl_stream_create(&leaky_relu_stream, leaky_relu_engine,
                                                 dnnl_stream_default_flags));
    }
    if (leaky_relu_prim[0]) {
        for (int s = 0; s < LEAKY_RELU_NSTEPS; s++)
            dnnl_primitive_destroy(leaky_relu_prim[s]);
        dnnl_memory_destroy(leaky_relu_src);
        dnnl_memory_destroy(leaky_relu_dst);
        leaky_relu_prim[0] = NULL;
    }
    dnnl_dims_t dims = {n};
    dnnl_memory_desc_t md;
    LEAKY_RELU_DNNL_CHECK(dnnl_memory_desc_init_by_tag(&md, 1, dims, dnnl_f32, dnnl_a));
    leaky_relu_prim[0] = leaky_relu_make(&md, dnnl_eltwise_relu, negative_slope, 0.0f);
    LEAKY_RELU_DNNL_CHECK(dnnl_memory_create(&leaky_relu_src, &md, leaky_relu_engine, DNNL_MEMORY_NONE));
    LEAKY_RELU_DNNL_CHECK(dnnl_memory_create(&leaky_relu_dst, &md, leaky_relu_engine, DNNL_MEMORY_NONE));
    leaky_relu_n = n;
    leaky_relu_k_negative_slope = negative_slope;
}

void leaky_relu(const float *x, float *y, int64_t n, float negative_slope)
{
    if (n != leaky_relu_n || negative_slope != leaky_relu_k_negative_slope)
        leaky_relu_setup(n, negative_slope);
    LEAKY_RELU_DNNL_CHECK(dnnl_memory_set_data_handle(leaky_relu_src, (void *)x));
    LEAKY_RELU_DNNL_CHECK(dnnl_memory_set_data_handle(leaky_relu_dst, y));
    for (int s = 0; s < LEAKY_RELU_NSTEPS; s++) {
        dnnl_exec_arg_t args[2] = {
            {DNNL_ARG_SRC, s == 0 ? leaky_relu_src : leaky_relu_dst},
            {DNNL_ARG_DST, leaky_relu_dst}};
        LEAKY_RELU_DNNL_CHECK(dnnl_primitive_execute(leaky_relu_prim[s], leaky_relu_stream, 2, args));
    }
    LEAKY_RELU_DNNL_CHECK(dnnl_stream_wait(leaky_relu_stream));
}
