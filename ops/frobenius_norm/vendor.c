/*
 * frobenius_norm — vendor baseline composed from oneDNN (2.6) primitives:
 *
 *   1. eltwise_square: s = x * x into a [rows x cols] scratch buffer;
 *   2. reduction_sum of s over both axes into [1 x 1], with an eltwise_sqrt
 *      post-op: y[0] = sqrt(sum s).
 *
 * Why not one reduction_norm_lp_sum with p = 2: in oneDNN 2.6 the lp-norm
 * reductions only have the slow reference implementation, while sum is
 * JIT-compiled (the same choice as ops/rms_norm/vendor.c). oneDNN rejects
 * a reduction whose source and destination shapes are equal, so for a
 * 1 x 1 input y[0] = |x[0]| comes from one eltwise_abs.
 *
 * The engine and stream are created once; the primitives, memory objects
 * and the scratch buffer are cached for the last (rows, cols) seen, so a
 * repeated call only rebinds the data pointers and executes. Any oneDNN
 * error aborts with a message: a baseline must never silently produce
 * garbage.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <oneapi/dnnl/dnnl.h>

#define FRO_DNNL_CHECK(call)                                                  \
    do {                                                                      \
        dnnl_status_t st_ = (call);                                           \
        if (st_ != dnnl_success) {                                            \
            fprintf(stderr, "frobenius_norm vendor: %s failed (status %d)\n", \
                    #call, (int)st_);                                         \
            abort();                                                          \
        }                                                                     \
    } while (0)

static dnnl_engine_t fro_engine;
static dnnl_stream_t fro_stream;
static dnnl_primitive_t fro_first, fro_reduce;
static dnnl_memory_t fro_src, fro_sq, fro_dst;
static float *fro_sq_buf;
static int64_t fro_rows = -1, fro_cols = -1;

static void fro_release(void)
{
    if (!fro_first)
        return;
    dnnl_primitive_destroy(fro_first);
    if (fro_reduce)
        dnnl_primitive_destroy(fro_reduce);
    dnnl_memory_destroy(fro_src);
    dnnl_memory_destroy(fro_dst);
    if (fro_sq)
        dnnl_memory_destroy(fro_sq);
    free(fro_sq_buf);
    fro_first = fro_reduce = NULL;
    fro_sq = NULL;
    fro_sq_buf = NULL;
}

static dnnl_primitive_t fro_make(const_dnnl_op_desc_t desc,
                                 const_dnnl_primitive_attr_t attr)
{
    dnnl_primitive_desc_t pd;
    dnnl_primitive_t prim;
    FRO_DNNL_CHECK(dnnl_primitive_desc_create(&pd, desc, attr, fro_engine, NULL));
    FRO_DNNL_CHECK(dnnl_primitive_create(&prim, pd));
    dnnl_primitive_desc_destroy(pd);
    return prim;
}

static void fro_setup(int64_t rows, int64_t cols)
{
    if (!fro_engine) {
        FRO_DNNL_CHECK(dnnl_engine_create(&fro_engine, dnnl_cpu, 0));
        FRO_DNNL_CHECK(dnnl_stream_create(&fro_stream, fro_engine,
                                          dnnl_stream_default_flags));
    }
    fro_release();
    const int one = rows * cols == 1;
    dnnl_dims_t xdims = {rows, cols}, ddims = {1, 1};
    dnnl_memory_desc_t xmd, dmd;
    FRO_DNNL_CHECK(dnnl_memory_desc_init_by_tag(&xmd, 2, xdims, dnnl_f32, dnnl_ab));
    FRO_DNNL_CHECK(dnnl_memory_desc_init_by_tag(&dmd, 2, ddims, dnnl_f32, dnnl_ab));
    dnnl_eltwise_desc_t edesc;
    FRO_DNNL_CHECK(dnnl_eltwise_forward_desc_init(
        &edesc, dnnl_forward_inference, one ? dnnl_eltwise_abs : dnnl_eltwise_square,
        &xmd, 0.0f, 0.0f));
    fro_first = fro_make(&edesc, NULL);
    FRO_DNNL_CHECK(dnnl_memory_create(&fro_src, &xmd, fro_engine, DNNL_MEMORY_NONE));
    FRO_DNNL_CHECK(dnnl_memory_create(&fro_dst, &dmd, fro_engine, DNNL_MEMORY_NONE));
    if (!one) {
        dnnl_post_ops_t po;
        dnnl_primitive_attr_t attr;
        FRO_DNNL_CHECK(dnnl_post_ops_create(&po));
        FRO_DNNL_CHECK(dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_sqrt, 0.0f, 0.0f));
        FRO_DNNL_CHECK(dnnl_primitive_attr_create(&attr));
        FRO_DNNL_CHECK(dnnl_primitive_attr_set_post_ops(attr, po));
        dnnl_reduction_desc_t rdesc;
        FRO_DNNL_CHECK(dnnl_reduction_desc_init(&rdesc, dnnl_reduction_sum, &xmd, &dmd,
                                                0.0f, 0.0f));
        fro_reduce = fro_make(&rdesc, attr);
        dnnl_primitive_attr_destroy(attr);
        dnnl_post_ops_destroy(po);
        fro_sq_buf = malloc((size_t)rows * (size_t)cols * sizeof(float));
        if (!fro_sq_buf) {
            fprintf(stderr, "frobenius_norm vendor: out of memory\n");
            abort();
        }
        FRO_DNNL_CHECK(dnnl_memory_create(&fro_sq, &xmd, fro_engine, fro_sq_buf));
    }
    fro_rows = rows;
    fro_cols = cols;
}

void frobenius_norm(const float *x, float *y, int64_t rows, int64_t cols)
{
    if (rows != fro_rows || cols != fro_cols)
        fro_setup(rows, cols);
    FRO_DNNL_CHECK(dnnl_memory_set_data_handle(fro_src, (void *)x));
    FRO_DNNL_CHECK(dnnl_memory_set_data_handle(fro_dst, y));
    /* For a single element, |x| is the norm: write it directly. */
    dnnl_exec_arg_t eargs[2] = {{DNNL_ARG_SRC, fro_src},
                                {DNNL_ARG_DST, fro_reduce ? fro_sq : fro_dst}};
    FRO_DNNL_CHECK(dnnl_primitive_execute(fro_first, fro_stream, 2, eargs));
    if (fro_reduce) {
        dnnl_exec_arg_t rargs[2] = {{DNNL_ARG_SRC, fro_sq}, {DNNL_ARG_DST, fro_dst}};
        FRO_DNNL_CHECK(dnnl_primitive_execute(fro_reduce, fro_stream, 2, rargs));
    }
    FRO_DNNL_CHECK(dnnl_stream_wait(fro_stream));
}
