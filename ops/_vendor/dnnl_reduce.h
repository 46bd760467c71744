/*
 * Shared helper of the trusted oneDNN (2.6) row-reduction baselines (amax,
 * amin, mean, sum): the reduction primitive with the given algorithm,
 * reducing axis 1 of a row-major 2-D f32 tensor [rows x cols] (format tag
 * ab) into [rows x 1], on the CPU engine.
 *
 * oneDNN rejects a reduction whose source and destination shapes are
 * equal, so for cols == 1 (where the result is the input itself) the row
 * is copied. The primitive and its two memory objects are cached for the
 * last (algorithm, rows, cols) seen; a call with the same shape only
 * rebinds the data pointers and executes.
 */
#ifndef KV_DNNL_REDUCE_H
#define KV_DNNL_REDUCE_H

#include "dnnl.h"

static dnnl_primitive_t kv_red_prim;
static dnnl_memory_t kv_red_src, kv_red_dst;
static int64_t kv_red_key[3] = {-1, -1, -1};

static inline void kv_red_setup(dnnl_alg_kind_t alg, int64_t rows, int64_t cols)
{
    kv_init();
    if (kv_red_prim) {
        dnnl_primitive_destroy(kv_red_prim);
        dnnl_memory_destroy(kv_red_src);
        dnnl_memory_destroy(kv_red_dst);
        kv_red_prim = NULL;
    }
    kv_red_key[0] = alg;
    kv_red_key[1] = rows;
    kv_red_key[2] = cols;
    if (cols == 1)
        return;
    dnnl_dims_t sdims = {rows, cols}, ddims = {rows, 1};
    dnnl_memory_desc_t smd = kv_md(2, sdims, dnnl_ab), dmd = kv_md(2, ddims, dnnl_ab);
    dnnl_reduction_desc_t desc;
    KV_CHECK(dnnl_reduction_desc_init(&desc, alg, &smd, &dmd, 0.0f, 0.0f));
    kv_red_prim = kv_make(&desc, NULL);
    kv_red_src = kv_mem(&smd, 0);
    kv_red_dst = kv_mem(&dmd, 0);
}

/* y[r] = the reduction alg of row r of x [rows x cols]. */
static inline void kv_reduce_rows(dnnl_alg_kind_t alg, const float *x, float *y,
                                  int64_t rows, int64_t cols)
{
    if (alg != kv_red_key[0] || rows != kv_red_key[1] || cols != kv_red_key[2])
        kv_red_setup(alg, rows, cols);
    if (cols == 1) {
        memcpy(y, x, (size_t)rows * sizeof(float));
        return;
    }
    KV_CHECK(dnnl_memory_set_data_handle(kv_red_src, (void *)x));
    KV_CHECK(dnnl_memory_set_data_handle(kv_red_dst, y));
    kv_run2(kv_red_prim, DNNL_ARG_SRC, kv_red_src, DNNL_ARG_DST, kv_red_dst);
    KV_CHECK(dnnl_stream_wait(kv_stream));
}

#endif
