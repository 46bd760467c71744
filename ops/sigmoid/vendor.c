/*
 * sigmoid — vendor baseline: oneDNN (2.6) eltwise logistic, forward_inference,
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

#define SIGMOID_DNNL_CHECK(call)                                             \
    do {                                                                     \
        dnnl_status_t st_ = (call);                                          \
        if (st_ != dnnl_success) {                                           \
            fprintf(stderr, "sigmoid vendor: %s failed (status %d)\n",       \
                    #call, (int)st_);                                        \
            abort();                                                         \
        }                                                                    \
    } while (0)

#define SIGMOID_NSTEPS 1

static dnnl_engine_t sigmoid_engine;
static dnnl_stream_t sigmoid_stream;
static dnnl_primitive_t sigmoid_prim[SIGMOID_NSTEPS];
static dnnl_memory_t sigmoid_src, sigmoid_dst;
static int64_t sigmoid_n = -1;

static dnnl_primitive_t sigmoid_make(const dnnl_memory_desc_t *md,
                                    dnnl_alg_kind_t alg, float alpha, float beta)
{
    dnnl_eltwise_desc_t desc;
    SIGMOID_DNNL_CHECK(dnnl_eltwise_forward_desc_init(
        &desc, dnnl_forward_inference, alg, md, alpha, beta));
    dnnl_primitive_desc_t pd;
    dnnl_primitive_t prim;
    SIGMOID_DNNL_CHECK(dnnl_primitive_desc_create(&pd, &desc, NULL, sigmoid_engine, NULL));
    SIGMOID_DNNL_CHECK(dnnl_primitive_create(&prim, pd));
    dnnl_primitive_desc_destroy(pd);
    return prim;
}

static void sigmoid_setup(int64_t n)
{
    if (!sigmoid_engine) {
        SIGMOID_DNNL_CHECK(dnnl_engine_create(&sigmoid_engine, dnnl_cpu, 0));
        SIGMOID_DNNL_CHECK(dnnl_stream_create(&sigmoid_stream, sigmoid_engine,
                                              dnnl_stream_default_flags));
    }
    if (sigmoid_prim[0]) {
        for (int s = 0; s < SIGMOID_NSTEPS; s++)
            dnnl_primitive_destroy(sigmoid_prim[s]);
        dnnl_memory_destroy(sigmoid_src);
        dnnl_memory_destroy(sigmoid_dst);
        sigmoid_prim[0] = NULL;
    }
    dnnl_dims_t dims = {n};
    dnnl_memory_desc_t md;
    SIGMOID_DNNL_CHECK(dnnl_memory_desc_init_by_tag(&md, 1, dims, dnnl_f32, dnnl_a));
    sigmoid_prim[0] = sigmoid_make(&md, dnnl_eltwise_logistic, 0.0f, 0.0f);
    SIGMOID_DNNL_CHECK(dnnl_memory_create(&sigmoid_src, &md, sigmoid_engine, DNNL_MEMORY_NONE));
    SIGMOID_DNNL_CHECK(dnnl_memory_create(&sigmoid_dst, &md, sigmoid_engine, DNNL_MEMORY_NONE));
    sigmoid_n = n;
}

void sigmoid(const float *x, float *y, int64_t n)
{
    if (n != sigmoid_n)
        sigmoid_setup(n);
    SIGMOID_DNNL_CHECK(dnnl_memory_set_data_handle(sigmoid_src, (void *)x));
    SIGMOID_DNNL_CHECK(dnnl_memory_set_data_handle(sigmoid_dst, y));
    for (int s = 0; s < SIGMOID_NSTEPS; s++) {
        dnnl_exec_arg_t args[2] = {
            {DNNL_ARG_SRC, s == 0 ? sigmoid_src : sigmoid_dst},
            {DNNL_ARG_DST, sigmoid_dst}};
        SIGMOID_DNNL_CHECK(dnnl_primitive_execute(sigmoid_prim[s], sigmoid_stream, 2, args));
    }
    SIGMOID_DNNL_CHECK(dnnl_stream_wait(sigmoid_stream));
}
