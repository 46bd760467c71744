/*
 * conv_transpose2d — trusted reference. NCHW transposed 2-D convolution
 * with [cin x cout x kh x kw] weights (torch's layout), bias, one stride
 * and one padding for both spatial dimensions, output_padding 0.
 *
 * Written in gather form so each output is one double accumulation: for
 * output (r, s) and tap (i, j), the input pixel that scatters there is
 * p = (r + pad - i) / stride, q = (s + pad - j) / stride, provided the
 * division is exact and (p, q) lies inside the input; the sum over input
 * channels is innermost so the exactness tests run once per tap.
 */
#include <stdint.h>

void conv_transpose2d(const float *x, const float *w, const float *bias,
                      float *y, int64_t n, int64_t cin, int64_t cout,
                      int64_t ih, int64_t iw, int64_t kh, int64_t kw,
                      int64_t stride, int64_t pad)
{
    const int64_t oh = (ih - 1) * stride - 2 * pad + kh;
    const int64_t ow = (iw - 1) * stride - 2 * pad + kw;
    for (int64_t b = 0; b < n; b++)
        for (int64_t o = 0; o < cout; o++)
            for (int64_t r = 0; r < oh; r++)
                for (int64_t s = 0; s < ow; s++) {
                    double acc = bias[o];
                    for (int64_t i = 0; i < kh; i++) {
                        const int64_t tp = r + pad - i;
                        if (tp < 0 || tp % stride != 0 || tp / stride >= ih)
                            continue;
                        const int64_t p = tp / stride;
                        for (int64_t j = 0; j < kw; j++) {
                            const int64_t tq = s + pad - j;
                            if (tq < 0 || tq % stride != 0 || tq / stride >= iw)
                                continue;
                            const int64_t q = tq / stride;
                            for (int64_t c = 0; c < cin; c++)
                                acc += (double)x[((b * cin + c) * ih + p) * iw + q] *
                                       (double)w[((c * cout + o) * kh + i) * kw + j];
                        }
                    }
                    y[((b * cout + o) * oh + r) * ow + s] = (float)acc;
                }
}
