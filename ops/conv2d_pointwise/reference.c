/*
 * conv2d_pointwise — trusted reference. NCHW 1x1 convolution with
 * [cout x cin x 1 x 1] weights and bias (stride 1, no padding).
 *
 * The textbook loops: every output is the bias plus the sum over input
 * channels of weight * input at the same pixel, accumulated in double.
 */
#include <stdint.h>

void conv2d_pointwise(const float *x, const float *w, const float *bias,
                      float *y, int64_t n, int64_t cin, int64_t cout,
                      int64_t ih, int64_t iw)
{
    const int64_t hw = ih * iw;
    for (int64_t b = 0; b < n; b++)
        for (int64_t o = 0; o < cout; o++)
            for (int64_t p = 0; p < hw; p++) {
                double acc = bias[o];
                for (int64_t c = 0; c < cin; c++)
                    acc += (double)w[o * cin + c] * (double)x[(b * cin + c) * hw + p];
                y[(b * cout + o) * hw + p] = (float)acc;
            }
}
