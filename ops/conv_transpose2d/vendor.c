/*
 * conv_transpose2d — vendor baseline: oneDNN (2.6) deconvolution_direct,
 * forward_inference, symmetric padding, stride and padding the same in
 * both spatial dimensions. oneDNN's logical deconvolution weights are
 * {cout, cin, kh, kw}; torch's [cin x cout x kh x kw] storage is the iohw
 * layout of them.
 * Layouts chosen by oneDNN (format `any`, reorders counted in the time)
 * and the primitive cache are the shared helper ops/_vendor/dnnl_conv.h.
 */
#define KV_NAME "conv_transpose2d"
#include "../_vendor/dnnl_conv.h"

void conv_transpose2d(const float *x, const float *w, const float *bias,
                      float *y, int64_t n, int64_t cin, int64_t cout,
                      int64_t ih, int64_t iw, int64_t kh, int64_t kw,
                      int64_t stride, int64_t pad)
{
    const kv_conv_shape s = {1, 2, n, cin, cout, {ih, iw}, {kh, kw}, stride, pad};
    kv_conv(&s, x, w, bias, y);
}
