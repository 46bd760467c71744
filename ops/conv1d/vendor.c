/*
 * conv1d — vendor baseline: oneDNN (2.6) convolution_direct with one
 * spatial dimension, forward_inference, symmetric padding.
 * Layouts chosen by oneDNN (format `any`, reorders counted in the time)
 * and the primitive cache are the shared helper ops/_vendor/dnnl_conv.h.
 */
#define KV_NAME "conv1d"
#include "../_vendor/dnnl_conv.h"

void conv1d(const float *x, const float *w, const float *bias, float *y,
            int64_t n, int64_t cin, int64_t cout, int64_t l, int64_t kl,
            int64_t stride, int64_t pad)
{
    const kv_conv_shape s = {0, 1, n, cin, cout, {l, 0}, {kl, 0}, stride, pad};
    kv_conv(&s, x, w, bias, y);
}
