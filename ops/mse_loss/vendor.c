/*
 * mse_loss — vendor baseline from two oneDNN (2.6) primitives:
 *
 *   1. binary_sub(pred, target) on 1-D [n] tensors with an eltwise_square
 *      post-op: s = (pred - target)^2 into a cached scratch buffer;
 *   2. reduction_mean of s viewed as [1 x n] over axis 1: y = mean(s).
 *
 * oneDNN has no loss primitive; this is the composition a framework on
 * oneDNN would run. oneDNN's reduction rejects equal source and
 * destination shapes, so for n == 1 step 1 writes y directly and step 2
 * is skipped. The engine, stream, primitives, memory objects and scratch
 * are cached for the last n seen; a call rebinds pointers and executes.
 * Any oneDNN error aborts with a message.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <oneapi/dnnl/dnnl.h>

#define MSE_DNNL_CHECK(call)                                                   \
    do {                                                                       \
        dnnl_status_t st_ = (call);                                            \
        if (st_ != dnnl_success) {                                             \
            fprintf(stderr, "mse_loss vendor: %s failed (status %d)\n", #call, \
                    (int)st_);                                                 \
            abort();                                                           \
        }                                                                      \
    } while (0)

static dnnl_engine_t mse_engine;
static dnnl_stream_t mse_stream;
static dnnl_primitive_t mse_sub, mse_mean;
static dnnl_memory_t mse_p, mse_t, mse_s, mse_y;
static float *mse_buf;
static int64_t mse_n = -1;

static void mse_release(void)
{
    if (!mse_sub)
        return;
    dnnl_primitive_destroy(mse_sub);
    if (mse_mean)
        dnnl_primitive_destroy(mse_mean);
    dnnl_memory_destroy(mse_p);
    dnnl_memory_destroy(mse_t);
    if (mse_s)
        dnnl_memory_destroy(mse_s);
    dnnl_memory_destroy(mse_y);
    free(mse_buf);
    mse_sub = mse_mean = NULL;
    mse_s = NULL;
    mse_buf = NULL;
}

static dnnl_primitive_t mse_make(const_dnnl_op_desc_t desc,
                                 const_dnnl_primitive_attr_t attr)
{
    dnnl_primitive_desc_t pd;
    dnnl_primitive_t prim;
    MSE_DNNL_CHECK(dnnl_primitive_desc_create(&pd, desc, attr, mse_engine, NULL));
    MSE_DNNL_CHECK(dnnl_primitive_create(&prim, pd));
    dnnl_primitive_desc_destroy(pd);
    return prim;
}

static void mse_setup(int64_t n)
{
    if (!mse_engine) {
        MSE_DNNL_CHECK(dnnl_engine_create(&mse_engine, dnnl_cpu, 0));
        MSE_DNNL_CHECK(dnnl_stream_create(&mse_stream, mse_engine,
                                          dnnl_stream_default_flags));
    }
    mse_release();

    dnnl_dims_t xdims = {1, n}, ydims = {1, 1}, fdims = {n};
    dnnl_memory_desc_t xmd, ymd, fmd;
    MSE_DNNL_CHECK(dnnl_memory_desc_init_by_tag(&xmd, 2, xdims, dnnl_f32, dnnl_ab));
    MSE_DNNL_CHECK(dnnl_memory_desc_init_by_tag(&fmd, 1, fdims, dnnl_f32, dnnl_a));
    MSE_DNNL_CHECK(dnnl_memory_desc_init_by_tag(&ymd, 2, ydims, dnnl_f32, dnnl_ab));

    dnnl_post_ops_t ops;
    dnnl_primitive_attr_t attr;
    MSE_DNNL_CHECK(dnnl_post_ops_create(&ops));
    MSE_DNNL_CHECK(dnnl_post_ops_append_eltwise(ops, 1.0f, dnnl_eltwise_square,
                                                0.0f, 0.0f));
    MSE_DNNL_CHECK(dnnl_primitive_attr_create(&attr));
    MSE_DNNL_CHECK(dnnl_primitive_attr_set_post_ops(attr, ops));
    dnnl_binary_desc_t bdesc;
    MSE_DNNL_CHECK(dnnl_binary_desc_init(&bdesc, dnnl_binary_sub, &fmd, &fmd, &fmd));
    mse_sub = mse_make(&bdesc, attr);
    dnnl_primitive_attr_destroy(attr);
    dnnl_post_ops_destroy(ops);

    MSE_DNNL_CHECK(dnnl_memory_create(&mse_p, &fmd, mse_engine, DNNL_MEMORY_NONE));
    MSE_DNNL_CHECK(dnnl_memory_create(&mse_t, &fmd, mse_engine, DNNL_MEMORY_NONE));
    /* y is [1 x 1] for the reduction, or the binary's [1] dst when n == 1. */
    MSE_DNNL_CHECK(dnnl_memory_create(&mse_y, n > 1 ? &ymd : &fmd, mse_engine,
                                      DNNL_MEMORY_NONE));
    if (n > 1) {
        dnnl_reduction_desc_t rdesc;
        MSE_DNNL_CHECK(dnnl_reduction_desc_init(&rdesc, dnnl_reduction_mean, &xmd,
                                                &ymd, 0.0f, 0.0f));
        mse_mean = mse_make(&rdesc, NULL);
        mse_buf = malloc((size_t)n * sizeof(float));
        if (!mse_buf) {
            fprintf(stderr, "mse_loss vendor: out of memory\n");
            abort();
        }
        MSE_DNNL_CHECK(dnnl_memory_create(&mse_s, &xmd, mse_engine, mse_buf));
    }
    mse_n = n;
}

void mse_loss(const float *pred, const float *target, float *y, int64_t n)
{
    if (n != mse_n)
        mse_setup(n);
    MSE_DNNL_CHECK(dnnl_memory_set_data_handle(mse_p, (void *)pred));
    MSE_DNNL_CHECK(dnnl_memory_set_data_handle(mse_t, (void *)target));
    MSE_DNNL_CHECK(dnnl_memory_set_data_handle(mse_y, y));
    dnnl_exec_arg_t bargs[3] = {{DNNL_ARG_SRC_0, mse_p},
                                {DNNL_ARG_SRC_1, mse_t},
                                {DNNL_ARG_DST, mse_mean ? mse_s : mse_y}};
    MSE_DNNL_CHECK(dnnl_primitive_execute(mse_sub, mse_stream, 3, bargs));
    if (mse_mean) {
        dnnl_exec_arg_t rargs[2] = {{DNNL_ARG_SRC, mse_s}, {DNNL_ARG_DST, mse_y}};
        MSE_DNNL_CHECK(dnnl_primitive_execute(mse_mean, mse_stream, 2, rargs));
    }
    MSE_DNNL_CHECK(dnnl_stream_wait(mse_stream));
}
