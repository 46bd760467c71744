/*
 * max_pool2d — trusted reference. NCHW 2-D max pooling with a kh x kw
 * window, one stride and one padding for both spatial dimensions (padding
 * never wins: only taps inside the input are compared).
 *
 * The textbook loops; a maximum is exact, so no wider type is needed.
 */
#include <stdint.h>
#include <math.h>

void max_pool2d(const float *x, float *y, int64_t n, int64_t c, int64_t ih,
                int64_t iw, int64_t kh, int64_t kw, int64_t stride,
                int64_t pad)
{
    const int64_t oh = (ih + 2 * pad - kh) / stride + 1;
    const int64_t ow = (iw + 2 * pad - kw) / stride + 1;
    for (int64_t p = 0; p < n * c; p++)
        for (int64_t r = 0; r < oh; r++)
            for (int64_t s = 0; s < ow; s++) {
                float m = -INFINITY;
                for (int64_t i = 0; i < kh; i++) {
                    const int64_t row = r * stride - pad + i;
                    if (row < 0 || row >= ih)
                        continue;
                    for (int64_t j = 0; j < kw; j++) {
                        const int64_t col = s * stride - pad + j;
                        if (col < 0 || col >= iw)
                            continue;
                        const float v = x[(p * ih + row) * iw + col];
                        if (v > m)
                            m = v;
                    }
                }
                y[(p * oh + r) * ow + s] = m;
            }
}
