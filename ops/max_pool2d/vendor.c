/*
 * max_pool2d — vendor baseline: oneDNN (2.6) pooling_v2 with
 * pooling_max, forward_inference, no dilation. oneDNN's max pooling
 * ignores the padding like torch does. The blocked layout (reorders
 * counted in the time) and the primitive cache are the shared helper
 * ops/_vendor/dnnl_pool.h.
 */
#define KV_NAME "max_pool2d"
#include "../_vendor/dnnl_pool.h"

void max_pool2d(const float *x, float *y, int64_t n, int64_t c, int64_t ih,
                int64_t iw, int64_t kh, int64_t kw, int64_t stride,
                int64_t pad)
{
    kv_pool2d(dnnl_pooling_max, x, y, n, c, ih, iw, kh, kw, stride, pad);
}
