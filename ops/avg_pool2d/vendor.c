/*
 * avg_pool2d — vendor baseline: oneDNN (2.6) pooling_v2 with
 * pooling_avg_include_padding (divisor kh * kw, torch's
 * count_include_pad=True), forward_inference, no dilation. The blocked
 * layout (reorders counted in the time) and the primitive cache are the
 * shared helper ops/_vendor/dnnl_pool.h.
 */
#define KV_NAME "avg_pool2d"
#include "../_vendor/dnnl_pool.h"

void avg_pool2d(const float *x, float *y, int64_t n, int64_t c, int64_t ih,
                int64_t iw, int64_t kh, int64_t kw, int64_t stride,
                int64_t pad)
{
    kv_pool2d(dnnl_pooling_avg_include_padding, x, y, n, c, ih, iw, kh, kw, stride, pad);
}
