/*
 * Shared helper of the trusted oneDNN (2.6) 2-D pooling baselines
 * (avg_pool2d, max_pool2d): pooling_v2 with the given algorithm,
 * forward_inference, no dilation, square stride and symmetric padding.
 *
 * Layout: on plain nchw tensors oneDNN 2.6 only offers its generic
 * `simple_nchw` pooling, which is many times slower than a plain C loop
 * (measured for max pooling: about 60 ms for 8x64x56x56 on one core against
 * a few ms), so that would not be a fair bar. Instead each call reorders x
 * into the blocked nChw8c layout (jit reorder), pools with the JIT
 * (jit:avx2 / avx512) implementation and reorders the result back into y —
 * the way oneDNN is meant to be used from plain tensors; both reorders are
 * counted in the baseline's time.
 *
 * The three primitives, the blocked scratch tensors and the memory objects
 * are cached for the last (algorithm, shape) seen, so a call with the same
 * shape only rebinds the data pointers and executes.
 */
#ifndef KV_DNNL_POOL_H
#define KV_DNNL_POOL_H

#include "dnnl.h"

#define KV_PL_NKEY 9

static dnnl_primitive_t kv_pl_pool, kv_pl_rin, kv_pl_rout;
static dnnl_memory_t kv_pl_src, kv_pl_dst, kv_pl_bsrc, kv_pl_bdst;
static int64_t kv_pl_key[KV_PL_NKEY] = {-1};

static inline void kv_pool_release(void)
{
    if (!kv_pl_pool)
        return;
    dnnl_primitive_destroy(kv_pl_pool);
    dnnl_primitive_destroy(kv_pl_rin);
    dnnl_primitive_destroy(kv_pl_rout);
    dnnl_memory_destroy(kv_pl_src);
    dnnl_memory_destroy(kv_pl_dst);
    dnnl_memory_destroy(kv_pl_bsrc);
    dnnl_memory_destroy(kv_pl_bdst);
    kv_pl_pool = NULL;
}

/* key: algorithm, n, c, ih, iw, kh, kw, stride, pad. */
static inline void kv_pool_setup(const int64_t *key)
{
    const int64_t n = key[1], c = key[2], ih = key[3], iw = key[4],
                  kh = key[5], kw = key[6], stride = key[7], pad = key[8];
    kv_init();
    kv_pool_release();
    const int64_t oh = (ih + 2 * pad - kh) / stride + 1;
    const int64_t ow = (iw + 2 * pad - kw) / stride + 1;
    dnnl_dims_t sd = {n, c, ih, iw}, dd = {n, c, oh, ow};
    dnnl_dims_t strides = {stride, stride}, kernel = {kh, kw},
                dilation = {0, 0}, padding = {pad, pad};
    dnnl_memory_desc_t smd = kv_md(4, sd, dnnl_nchw), dmd = kv_md(4, dd, dnnl_nchw);
    dnnl_memory_desc_t bsmd = kv_md(4, sd, dnnl_nChw8c), bdmd = kv_md(4, dd, dnnl_nChw8c);
    dnnl_pooling_v2_desc_t desc;
    KV_CHECK(dnnl_pooling_v2_forward_desc_init(
        &desc, dnnl_forward_inference, (dnnl_alg_kind_t)key[0], &bsmd, &bdmd, strides,
        kernel, dilation, padding, padding));
    kv_pl_pool = kv_make(&desc, NULL);
    kv_pl_rin = kv_reorder(&smd, &bsmd);
    kv_pl_rout = kv_reorder(&bdmd, &dmd);
    kv_pl_src = kv_mem(&smd, 0);
    kv_pl_dst = kv_mem(&dmd, 0);
    kv_pl_bsrc = kv_mem(&bsmd, 1);
    kv_pl_bdst = kv_mem(&bdmd, 1);
    memcpy(kv_pl_key, key, sizeof kv_pl_key);
}

/* y = the pooling alg of x [n x c x ih x iw], kernel kh x kw. */
static inline void kv_pool2d(dnnl_alg_kind_t alg, const float *x, float *y, int64_t n,
                             int64_t c, int64_t ih, int64_t iw, int64_t kh, int64_t kw,
                             int64_t stride, int64_t pad)
{
    const int64_t key[KV_PL_NKEY] = {alg, n, c, ih, iw, kh, kw, stride, pad};
    if (memcmp(key, kv_pl_key, sizeof key))
        kv_pool_setup(key);
    KV_CHECK(dnnl_memory_set_data_handle(kv_pl_src, (void *)x));
    KV_CHECK(dnnl_memory_set_data_handle(kv_pl_dst, y));
    kv_run2(kv_pl_rin, DNNL_ARG_FROM, kv_pl_src, DNNL_ARG_TO, kv_pl_bsrc);
    kv_run2(kv_pl_pool, DNNL_ARG_SRC, kv_pl_bsrc, DNNL_ARG_DST, kv_pl_bdst);
    kv_run2(kv_pl_rout, DNNL_ARG_FROM, kv_pl_bdst, DNNL_ARG_TO, kv_pl_dst);
    KV_CHECK(dnnl_stream_wait(kv_stream));
}

#endif
