/*
 * avg_pool2d — trusted reference. NCHW 2-D average pooling with a
 * kh x kw window, one stride and one zero padding for both spatial
 * dimensions, count_include_pad: the divisor is always kh * kw.
 *
 * The textbook loops: each window is summed in double over the taps
 * inside the input (padding taps add zero) and divided by kh * kw.
 */
#include <stdint.h>

void avg_pool2d(const float *x, float *y, int64_t n, int64_t c, int64_t ih,
                int64_t iw, int64_t kh, int64_t kw, int64_t stride,
                int64_t pad)
{
    const int64_t oh = (ih + 2 * pad - kh) / stride + 1;
    const int64_t ow = (iw + 2 * pad - kw) / stride + 1;
    for (int64_t p = 0; p < n * c; p++)
        for (int64_t r = 0; r < oh; r++)
            for (int64_t s = 0; s < ow; s++) {
                double sum = 0.0;
                for (int64_t i = 0; i < kh; i++) {
                    const int64_t row = r * stride - pad + i;
                    if (row < 0 || row >= ih)
                        continue;
                    for (int64_t j = 0; j < kw; j++) {
                        const int64_t col = s * stride - pad + j;
                        if (col < 0 || col >= iw)
                            continue;
                        sum += x[(p * ih + row) * iw + col];
                    }
                }
                y[(p * oh + r) * ow + s] = (float)(sum / (double)(kh * kw));
            }
}
