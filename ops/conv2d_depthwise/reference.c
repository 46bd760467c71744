/*
 * conv2d_depthwise — trusted reference. NCHW depthwise 2-D convolution
 * (groups = channels, multiplier 1) with [c x 1 x kh x kw] weights, bias,
 * one stride and one zero padding for both spatial dimensions.
 *
 * The textbook loops: every output is its channel's bias plus the sum
 * over the channel's kernel taps, accumulated in double; taps that fall
 * into the padding are skipped (they multiply zeros).
 */
#include <stdint.h>

void conv2d_depthwise(const float *x, const float *w, const float *bias,
                      float *y, int64_t n, int64_t c, int64_t ih, int64_t iw,
                      int64_t kh, int64_t kw, int64_t stride, int64_t pad)
{
    const int64_t oh = (ih + 2 * pad - kh) / stride + 1;
    const int64_t ow = (iw + 2 * pad - kw) / stride + 1;
    for (int64_t b = 0; b < n; b++)
        for (int64_t ch = 0; ch < c; ch++)
            for (int64_t r = 0; r < oh; r++)
                for (int64_t s = 0; s < ow; s++) {
                    double acc = bias[ch];
                    for (int64_t i = 0; i < kh; i++) {
                        const int64_t row = r * stride - pad + i;
                        if (row < 0 || row >= ih)
                            continue;
                        for (int64_t j = 0; j < kw; j++) {
                            const int64_t col = s * stride - pad + j;
                            if (col < 0 || col >= iw)
                                continue;
                            acc += (double)w[(ch * kh + i) * kw + j] *
                                   (double)x[((b * c + ch) * ih + row) * iw + col];
                        }
                    }
                    y[((b * c + ch) * oh + r) * ow + s] = (float)acc;
                }
}
