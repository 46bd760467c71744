/*
 * hinge_loss — vendor baseline from two oneDNN (2.6) primitives:
 *
 *   1. binary_mul(pred, target) on 1-D [n] tensors with two post-ops,
 *      eltwise_linear (alpha -1, beta 1) and eltwise_relu:
 *      s = max(0, 1 - pred * target) into a cached scratch buffer;
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

#define HINGE_DNNL_CHECK(call)                                                 \
    do {                                                                       \
        dnnl_status_t st_ = (call);                                            \
        if (st_ != dnnl_success) {                                             \
            fprintf(stderr, "hinge_loss vendor: %s failed (status %d)\n", #call, \
                    (int)st_);                                                 \
            abort();                                                           \
        }                                                                      \
    } while (0)

static dnnl_engine_t hinge_engine;
static dnnl_stream_t hinge_stream;
static dnnl_primitive_t hinge_sub, hinge_mean;
static dnnl_memory_t hinge_p, hinge_t, hinge_s, hinge_y;
static float *hinge_buf;
static int64_t hinge_n = -1;

static void hinge_release(void)
{
    if (!hinge_sub)
        return;
    dnnl_primitive_destroy(hinge_sub);
    if (hinge_mean)
        dnnl_primitive_destroy(hinge_mean);
    dnnl_memory_destroy(hinge_p);
    dnnl_memory_destroy(hinge_t);
    if (hinge_s)
        dnnl_memory_destroy(hinge_s);
    dnnl_memory_destroy(hinge_y);
    free(hinge_buf);
    hinge_sub = hinge_mean = NULL;
    hinge_s = NULL;
    hinge_buf = NULL;
}

static dnnl_primitive_t hinge_make(const_dnnl_op_desc_t desc,
                                 const_dnnl_primitive_attr_t attr)
{
    dnnl_primitive_desc_t pd;
    dnnl_primitive_t prim;
    HINGE_DNNL_CHECK(dnnl_primitive_desc_create(&pd, desc, attr, hinge_engine, NULL));
    HINGE_DNNL_CHECK(dnnl_primitive_create(&prim, pd));
    dnnl_primitive_desc_destroy(pd);
    return prim;
}

static void hinge_setup(int64_t n)
{
    if (!hinge_engine) {
        HINGE_DNNL_CHECK(dnnl_engine_create(&hinge_engine, dnnl_cpu, 0));
        HINGE_DNNL_CHECK(dnnl_stream_create(&hinge_stream, hinge_engine,
                                            dnnl_stream_default_flags));
    }
    hinge_release();

    dnnl_dims_t xdims = {1, n}, ydims = {1, 1}, fdims = {n};
    dnnl_memory_desc_t xmd, ymd, fmd;
    HINGE_DNNL_CHECK(dnnl_memory_desc_init_by_tag(&xmd, 2, xdims, dnnl_f32, dnnl_ab));
    HINGE_DNNL_CHECK(dnnl_memory_desc_init_by_tag(&fmd, 1, fdims, dnnl_f32, dnnl_a));
    HINGE_DNNL_CHECK(dnnl_memory_desc_init_by_tag(&ymd, 2, ydims, dnnl_f32, dnnl_ab));

    dnnl_post_ops_t ops;
    dnnl_primitive_attr_t attr;
    HINGE_DNNL_CHECK(dnnl_post_ops_create(&ops));
    HINGE_DNNL_CHECK(dnnl_post_ops_append_eltwise(ops, 1.0f, dnnl_eltwise_linear,
                                                  -1.0f, 1.0f));
    HINGE_DNNL_CHECK(dnnl_post_ops_append_eltwise(ops, 1.0f, dnnl_eltwise_relu,
                                                  0.0f, 0.0f));
    HINGE_DNNL_CHECK(dnnl_primitive_attr_create(&attr));
    HINGE_DNNL_CHECK(dnnl_primitive_attr_set_post_ops(attr, ops));
    dnnl_binary_desc_t bdesc;
    HINGE_DNNL_CHECK(dnnl_binary_desc_init(&bdesc, dnnl_binary_mul, &fmd, &fmd, &fmd));
    hinge_sub = hinge_make(&bdesc, attr);
    dnnl_primitive_attr_destroy(attr);
    dnnl_post_ops_destroy(ops);

    HINGE_DNNL_CHECK(dnnl_memory_create(&hinge_p, &fmd, hinge_engine, DNNL_MEMORY_NONE));
    HINGE_DNNL_CHECK(dnnl_memory_create(&hinge_t, &fmd, hinge_engine, DNNL_MEMORY_NONE));
    /* y is [1 x 1] for the reduction, or the binary's [1] dst when n == 1. */
    HINGE_DNNL_CHECK(dnnl_memory_create(&hinge_y, n > 1 ? &ymd : &fmd, hinge_engine,
                                      DNNL_MEMORY_NONE));
    if (n > 1) {
        dnnl_reduction_desc_t rdesc;
        HINGE_DNNL_CHECK(dnnl_reduction_desc_init(&rdesc, dnnl_reduction_mean, &xmd,
                                                &ymd, 0.0f, 0.0f));
        hinge_mean = hinge_make(&rdesc, NULL);
        hinge_buf = malloc((size_t)n * sizeof(float));
        if (!hinge_buf) {
            fprintf(stderr, "hinge_loss vendor: out of memory\n");
            abort();
        }
        HINGE_DNNL_CHECK(dnnl_memory_create(&hinge_s, &xmd, hinge_engine, hinge_buf));
    }
    hinge_n = n;
}

void hinge_loss(const float *pred, const float *target, float *y, int64_t n)
{
    if (n != hinge_n)
        hinge_setup(n);
    HINGE_DNNL_CHECK(dnnl_memory_set_data_handle(hinge_p, (void *)pred));
    HINGE_DNNL_CHECK(dnnl_memory_set_data_handle(hinge_t, (void *)target));
    HINGE_DNNL_CHECK(dnnl_memory_set_data_handle(hinge_y, y));
    dnnl_exec_arg_t bargs[3] = {{DNNL_ARG_SRC_0, hinge_p},
                                {DNNL_ARG_SRC_1, hinge_t},
                                {DNNL_ARG_DST, hinge_mean ? hinge_s : hinge_y}};
    HINGE_DNNL_CHECK(dnnl_primitive_execute(hinge_sub, hinge_stream, 3, bargs));
    if (hinge_mean) {
        dnnl_exec_arg_t rargs[2] = {{DNNL_ARG_SRC, hinge_s}, {DNNL_ARG_DST, hinge_y}};
        HINGE_DNNL_CHECK(dnnl_primitive_execute(hinge_mean, hinge_stream, 2, rargs));
    }
    HINGE_DNNL_CHECK(dnnl_stream_wait(hinge_stream));
}
