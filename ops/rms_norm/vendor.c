/*
 * rms_norm — vendor baseline built from oneDNN (2.6) primitives, since
 * oneDNN 2.6 has no RMS-norm primitive (its layer normalization always
 * subtracts a mean unless the statistics are supplied):
 *
 *   1. eltwise_square: s = x * x into a [rows x cols] scratch buffer;
 *   2. reduction_mean over axis 1: v[r] = mean_j s[r][j];
 *   3. layer_normalization forward_inference with use_global_stats and
 *      use_scale, mean = 0 and variance = v:
 *      y = (x - 0) / sqrt(v + eps) * w, which is exactly RMS norm.
 *
 * Why not one reduction with p = 2: in oneDNN 2.6 the lp-norm reduction
 * algorithms (norm_lp_power_p_sum) only have the slow reference
 * implementation (about 100x slower than a plain loop), while sum/mean
 * are JIT-compiled; squaring into a scratch buffer first costs one extra
 * write and read of the data but keeps every step on a JIT kernel. For
 * cols == 1, which oneDNN's reduction rejects (source and destination
 * shapes equal), step 1 writes the variance directly and step 2 is
 * skipped.
 *
 * The engine and stream are created once; the primitives, memory objects,
 * the scratch buffer and the two [rows] stat buffers are cached for the
 * last (rows, cols, eps) seen, so a repeated call only rebinds the data
 * pointers and executes. Any oneDNN error aborts with a message: a
 * baseline must never silently produce garbage.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <oneapi/dnnl/dnnl.h>

#define RMS_DNNL_CHECK(call)                                                   \
    do {                                                                       \
        dnnl_status_t st_ = (call);                                            \
        if (st_ != dnnl_success) {                                             \
            fprintf(stderr, "rms_norm vendor: %s failed (status %d)\n", #call, \
                    (int)st_);                                                 \
            abort();                                                           \
        }                                                                      \
    } while (0)

static dnnl_engine_t rms_engine;
static dnnl_stream_t rms_stream;
static dnnl_primitive_t rms_square, rms_reduce, rms_lnorm;
static dnnl_memory_t rms_src, rms_sq, rms_var2d, rms_var, rms_mean, rms_scale, rms_dst;
static float *rms_mean_buf, *rms_var_buf, *rms_sq_buf;
static int64_t rms_rows = -1, rms_cols = -1;
static float rms_eps;

static void rms_release(void)
{
    if (!rms_lnorm)
        return;
    dnnl_primitive_destroy(rms_square);
    if (rms_reduce)
        dnnl_primitive_destroy(rms_reduce);
    if (rms_sq)
        dnnl_memory_destroy(rms_sq);
    free(rms_sq_buf);
    dnnl_primitive_destroy(rms_lnorm);
    dnnl_memory_destroy(rms_src);
    dnnl_memory_destroy(rms_var2d);
    dnnl_memory_destroy(rms_var);
    dnnl_memory_destroy(rms_mean);
    dnnl_memory_destroy(rms_scale);
    dnnl_memory_destroy(rms_dst);
    free(rms_mean_buf);
    free(rms_var_buf);
    rms_square = rms_reduce = rms_lnorm = NULL;
    rms_sq = NULL;
    rms_sq_buf = NULL;
}

static dnnl_primitive_t rms_make(const_dnnl_op_desc_t desc,
                                 const_dnnl_primitive_attr_t attr)
{
    dnnl_primitive_desc_t pd;
    dnnl_primitive_t prim;
    RMS_DNNL_CHECK(dnnl_primitive_desc_create(&pd, desc, attr, rms_engine, NULL));
    RMS_DNNL_CHECK(dnnl_primitive_create(&prim, pd));
    dnnl_primitive_desc_destroy(pd);
    return prim;
}

static void rms_setup(int64_t rows, int64_t cols, float eps)
{
    if (!rms_engine) {
        RMS_DNNL_CHECK(dnnl_engine_create(&rms_engine, dnnl_cpu, 0));
        RMS_DNNL_CHECK(dnnl_stream_create(&rms_stream, rms_engine,
                                          dnnl_stream_default_flags));
    }
    rms_release();

    dnnl_dims_t xdims = {rows, cols}, vdims2 = {rows, 1}, vdims = {rows},
                wdims = {cols};
    dnnl_memory_desc_t xmd, v2md, vmd, wmd;
    RMS_DNNL_CHECK(dnnl_memory_desc_init_by_tag(&xmd, 2, xdims, dnnl_f32, dnnl_ab));
    RMS_DNNL_CHECK(dnnl_memory_desc_init_by_tag(&v2md, 2, vdims2, dnnl_f32, dnnl_ab));
    RMS_DNNL_CHECK(dnnl_memory_desc_init_by_tag(&vmd, 1, vdims, dnnl_f32, dnnl_a));
    RMS_DNNL_CHECK(dnnl_memory_desc_init_by_tag(&wmd, 1, wdims, dnnl_f32, dnnl_a));

    /* 1. s = x * x;  2. v = mean(s) along axis 1. */
    dnnl_eltwise_desc_t edesc;
    RMS_DNNL_CHECK(dnnl_eltwise_forward_desc_init(&edesc, dnnl_forward_inference,
                                                  dnnl_eltwise_square, &xmd, 0.0f, 0.0f));
    rms_square = rms_make(&edesc, NULL);
    if (cols > 1) {
        dnnl_reduction_desc_t rdesc;
        RMS_DNNL_CHECK(dnnl_reduction_desc_init(&rdesc, dnnl_reduction_mean, &xmd,
                                                &v2md, 0.0f, 0.0f));
        rms_reduce = rms_make(&rdesc, NULL);
    }

    /* 3. y = (x - 0) / sqrt(v + eps) * w. */
    dnnl_layer_normalization_desc_t ldesc;
    RMS_DNNL_CHECK(dnnl_layer_normalization_forward_desc_init(
        &ldesc, dnnl_forward_inference, &xmd, &vmd, eps,
        dnnl_use_global_stats | dnnl_use_scale));
    rms_lnorm = rms_make(&ldesc, NULL);

    rms_mean_buf = calloc((size_t)rows, sizeof(float));
    rms_var_buf = malloc((size_t)rows * sizeof(float));
    if (cols > 1)
        rms_sq_buf = malloc((size_t)rows * (size_t)cols * sizeof(float));
    if (!rms_mean_buf || !rms_var_buf || (cols > 1 && !rms_sq_buf)) {
        fprintf(stderr, "rms_norm vendor: out of memory\n");
        abort();
    }
    RMS_DNNL_CHECK(dnnl_memory_create(&rms_src, &xmd, rms_engine, DNNL_MEMORY_NONE));
    RMS_DNNL_CHECK(dnnl_memory_create(&rms_dst, &xmd, rms_engine, DNNL_MEMORY_NONE));
    RMS_DNNL_CHECK(dnnl_memory_create(&rms_scale, &wmd, rms_engine, DNNL_MEMORY_NONE));
    if (cols > 1)
        RMS_DNNL_CHECK(dnnl_memory_create(&rms_sq, &xmd, rms_engine, rms_sq_buf));
    RMS_DNNL_CHECK(dnnl_memory_create(&rms_var2d, &v2md, rms_engine, rms_var_buf));
    RMS_DNNL_CHECK(dnnl_memory_create(&rms_var, &vmd, rms_engine, rms_var_buf));
    RMS_DNNL_CHECK(dnnl_memory_create(&rms_mean, &vmd, rms_engine, rms_mean_buf));
    rms_rows = rows;
    rms_cols = cols;
    rms_eps = eps;
}

void rms_norm(const float *x, const float *w, float *y, int64_t rows,
              int64_t cols, float eps)
{
    if (rows != rms_rows || cols != rms_cols || memcmp(&eps, &rms_eps, sizeof eps))
        rms_setup(rows, cols, eps);
    RMS_DNNL_CHECK(dnnl_memory_set_data_handle(rms_src, (void *)x));
    RMS_DNNL_CHECK(dnnl_memory_set_data_handle(rms_scale, (void *)w));
    RMS_DNNL_CHECK(dnnl_memory_set_data_handle(rms_dst, y));
    /* For cols == 1 the squares are the variances: write them directly. */
    dnnl_exec_arg_t sargs[2] = {{DNNL_ARG_SRC, rms_src},
                                {DNNL_ARG_DST, rms_reduce ? rms_sq : rms_var2d}};
    RMS_DNNL_CHECK(dnnl_primitive_execute(rms_square, rms_stream, 2, sargs));
    if (rms_reduce) {
        dnnl_exec_arg_t rargs[2] = {{DNNL_ARG_SRC, rms_sq}, {DNNL_ARG_DST, rms_var2d}};
        RMS_DNNL_CHECK(dnnl_primitive_execute(rms_reduce, rms_stream, 2, rargs));
    }
    dnnl_exec_arg_t largs[5] = {{DNNL_ARG_SRC, rms_src},
                                {DNNL_ARG_MEAN, rms_mean},
                                {DNNL_ARG_VARIANCE, rms_var},
                                {DNNL_ARG_SCALE, rms_scale},
                                {DNNL_ARG_DST, rms_dst}};
    RMS_DNNL_CHECK(dnnl_primitive_execute(rms_lnorm, rms_stream, 5, largs));
    RMS_DNNL_CHECK(dnnl_stream_wait(rms_stream));
}
