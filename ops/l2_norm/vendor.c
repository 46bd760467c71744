/*
 * l2_norm — vendor baseline composed from oneDNN (2.6) primitives, since
 * oneDNN has no row-normalize primitive:
 *
 *   1. eltwise_square: s = x * x into a [rows x cols] scratch buffer;
 *   2. reduction_sum of s over axis 1 into d [rows x 1], with two eltwise
 *      post-ops: sqrt, then clip to [eps, FLT_MAX], i.e.
 *      d = max(sqrt(sum s), eps);
 *   3. binary_div: y = x / d, d broadcast along each row.
 *
 * Why not reduction_norm_lp_max with p = 2: in oneDNN 2.6 the lp-norm
 * reductions only have the slow reference implementation, while sum is
 * JIT-compiled (the same choice as ops/rms_norm/vendor.c). For cols == 1,
 * which oneDNN's reduction rejects (source and destination shapes equal),
 * step 1 is an eltwise_abs writing |x| = sqrt(x^2) straight into d and
 * step 2 is an eltwise_clip of d in place.
 *
 * The engine and stream are created once; the primitives, memory objects
 * and the scratch buffers are cached for the last (rows, cols, eps) seen,
 * so a repeated call only rebinds the data pointers and executes. Any
 * oneDNN error aborts with a message: a baseline must never silently
 * produce garbage.
 */
#include <float.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <oneapi/dnnl/dnnl.h>

#define L2N_DNNL_CHECK(call)                                                  \
    do {                                                                      \
        dnnl_status_t st_ = (call);                                           \
        if (st_ != dnnl_success) {                                            \
            fprintf(stderr, "l2_norm vendor: %s failed (status %d)\n", #call, \
                    (int)st_);                                                \
            abort();                                                          \
        }                                                                     \
    } while (0)

static dnnl_engine_t l2n_engine;
static dnnl_stream_t l2n_stream;
static dnnl_primitive_t l2n_first, l2n_norm, l2n_div;
static dnnl_memory_t l2n_src, l2n_sq, l2n_d, l2n_dst;
static float *l2n_sq_buf, *l2n_d_buf;
static int64_t l2n_rows = -1, l2n_cols = -1;
static float l2n_eps;

static void l2n_release(void)
{
    if (!l2n_first)
        return;
    dnnl_primitive_destroy(l2n_first);
    dnnl_primitive_destroy(l2n_norm);
    dnnl_primitive_destroy(l2n_div);
    dnnl_memory_destroy(l2n_src);
    dnnl_memory_destroy(l2n_d);
    dnnl_memory_destroy(l2n_dst);
    if (l2n_sq)
        dnnl_memory_destroy(l2n_sq);
    free(l2n_sq_buf);
    free(l2n_d_buf);
    l2n_first = l2n_norm = l2n_div = NULL;
    l2n_sq = NULL;
    l2n_sq_buf = l2n_d_buf = NULL;
}

static dnnl_primitive_t l2n_make(const_dnnl_op_desc_t desc,
                                 const_dnnl_primitive_attr_t attr)
{
    dnnl_primitive_desc_t pd;
    dnnl_primitive_t prim;
    L2N_DNNL_CHECK(dnnl_primitive_desc_create(&pd, desc, attr, l2n_engine, NULL));
    L2N_DNNL_CHECK(dnnl_primitive_create(&prim, pd));
    dnnl_primitive_desc_destroy(pd);
    return prim;
}

static void *l2n_alloc(size_t n)
{
    void *p = malloc(n);
    if (!p) {
        fprintf(stderr, "l2_norm vendor: out of memory\n");
        abort();
    }
    return p;
}

static void l2n_setup(int64_t rows, int64_t cols, float eps)
{
    if (!l2n_engine) {
        L2N_DNNL_CHECK(dnnl_engine_create(&l2n_engine, dnnl_cpu, 0));
        L2N_DNNL_CHECK(dnnl_stream_create(&l2n_stream, l2n_engine,
                                          dnnl_stream_default_flags));
    }
    l2n_release();
    dnnl_dims_t xdims = {rows, cols}, ddims = {rows, 1};
    dnnl_memory_desc_t xmd, dmd;
    L2N_DNNL_CHECK(dnnl_memory_desc_init_by_tag(&xmd, 2, xdims, dnnl_f32, dnnl_ab));
    L2N_DNNL_CHECK(dnnl_memory_desc_init_by_tag(&dmd, 2, ddims, dnnl_f32, dnnl_ab));

    dnnl_eltwise_desc_t edesc;
    if (cols > 1) {
        /* 1. s = x * x;  2. d = clip(sqrt(sum s), eps, FLT_MAX). */
        L2N_DNNL_CHECK(dnnl_eltwise_forward_desc_init(
            &edesc, dnnl_forward_inference, dnnl_eltwise_square, &xmd, 0.0f, 0.0f));
        l2n_first = l2n_make(&edesc, NULL);
        dnnl_post_ops_t po;
        dnnl_primitive_attr_t attr;
        L2N_DNNL_CHECK(dnnl_post_ops_create(&po));
        L2N_DNNL_CHECK(dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_sqrt, 0.0f, 0.0f));
        L2N_DNNL_CHECK(dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_clip, eps, FLT_MAX));
        L2N_DNNL_CHECK(dnnl_primitive_attr_create(&attr));
        L2N_DNNL_CHECK(dnnl_primitive_attr_set_post_ops(attr, po));
        dnnl_reduction_desc_t rdesc;
        L2N_DNNL_CHECK(dnnl_reduction_desc_init(&rdesc, dnnl_reduction_sum, &xmd, &dmd,
                                                0.0f, 0.0f));
        l2n_norm = l2n_make(&rdesc, attr);
        dnnl_primitive_attr_destroy(attr);
        dnnl_post_ops_destroy(po);
        l2n_sq_buf = l2n_alloc((size_t)rows * (size_t)cols * sizeof(float));
        L2N_DNNL_CHECK(dnnl_memory_create(&l2n_sq, &xmd, l2n_engine, l2n_sq_buf));
    } else {
        /* 1. d = |x|;  2. d = clip(d, eps, FLT_MAX) in place. */
        L2N_DNNL_CHECK(dnnl_eltwise_forward_desc_init(
            &edesc, dnnl_forward_inference, dnnl_eltwise_abs, &xmd, 0.0f, 0.0f));
        l2n_first = l2n_make(&edesc, NULL);
        L2N_DNNL_CHECK(dnnl_eltwise_forward_desc_init(
            &edesc, dnnl_forward_inference, dnnl_eltwise_clip, &dmd, eps, FLT_MAX));
        l2n_norm = l2n_make(&edesc, NULL);
    }
    /* 3. y = x / d. */
    dnnl_binary_desc_t bdesc;
    L2N_DNNL_CHECK(dnnl_binary_desc_init(&bdesc, dnnl_binary_div, &xmd, &dmd, &xmd));
    l2n_div = l2n_make(&bdesc, NULL);

    l2n_d_buf = l2n_alloc((size_t)rows * sizeof(float));
    L2N_DNNL_CHECK(dnnl_memory_create(&l2n_d, &dmd, l2n_engine, l2n_d_buf));
    L2N_DNNL_CHECK(dnnl_memory_create(&l2n_src, &xmd, l2n_engine, DNNL_MEMORY_NONE));
    L2N_DNNL_CHECK(dnnl_memory_create(&l2n_dst, &xmd, l2n_engine, DNNL_MEMORY_NONE));
    l2n_rows = rows;
    l2n_cols = cols;
    l2n_eps = eps;
}

void l2_norm(const float *x, float *y, int64_t rows, int64_t cols, float eps)
{
    if (rows != l2n_rows || cols != l2n_cols || memcmp(&eps, &l2n_eps, sizeof eps))
        l2n_setup(rows, cols, eps);
    L2N_DNNL_CHECK(dnnl_memory_set_data_handle(l2n_src, (void *)x));
    L2N_DNNL_CHECK(dnnl_memory_set_data_handle(l2n_dst, y));
    dnnl_exec_arg_t args1[2] = {{DNNL_ARG_SRC, l2n_src},
                                {DNNL_ARG_DST, l2n_sq ? l2n_sq : l2n_d}};
    L2N_DNNL_CHECK(dnnl_primitive_execute(l2n_first, l2n_stream, 2, args1));
    dnnl_exec_arg_t args2[2] = {{DNNL_ARG_SRC, l2n_sq ? l2n_sq : l2n_d},
                                {DNNL_ARG_DST, l2n_d}};
    L2N_DNNL_CHECK(dnnl_primitive_execute(l2n_norm, l2n_stream, 2, args2));
    dnnl_exec_arg_t args3[3] = {{DNNL_ARG_SRC_0, l2n_src},
                                {DNNL_ARG_SRC_1, l2n_d},
                                {DNNL_ARG_DST, l2n_dst}};
    L2N_DNNL_CHECK(dnnl_primitive_execute(l2n_div, l2n_stream, 3, args3));
    L2N_DNNL_CHECK(dnnl_stream_wait(l2n_stream));
}
