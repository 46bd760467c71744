/*
 * conv2d — trusted reference. NCHW 2-D convolution (cross-correlation)
 * with OIHW weights, bias, one stride and one zero padding for both
 * spatial dimensions, as torch.nn.functional.conv2d (groups 1).
 *
 * The textbook seven loops: every output is the bias plus the sum over
 * input channels and kernel taps, accumulated in double; taps that fall
 * into the padding are skipped (they multiply zeros).
 */
#include <stdint.h>

void conv2d(const float *x, const float *w, const float *bias, float *y,
            int64_t n, int64_t cin, int64_t cout, int64_t ih, int64_t iw,
            int64_t kh, int64_t kw, int64_t stride, int64_t pad)
{
    const int64_t oh = (ih + 2 * pad - kh) / stride + 1;
    const int64_t ow = (iw + 2 * pad - kw) / stride + 1;
    for (int64_t b = 0; b < n; b++)
        for (int64_t o = 0; o < cout; o++)
            for (int64_t r = 0; r < oh; r++)
                for (int64_t s = 0; s < ow; s++) {
                    double acc = bias[o];
                    for (int64_t c = 0; c < cin; c++)
                        for (int64_t i = 0; i < kh; i++) {
                            const int64_t row = r * stride - pad + i;
                            if (row < 0 || row >= ih)
                                continue;
                            for (int64_t j = 0; j < kw; j++) {
                                const int64_t col = s * stride - pad + j;
                                if (col < 0 || col >= iw)
                                    continue;
                                acc += (double)w[((o * cin + c) * kh + i) * kw + j] *
                                       (double)x[((b * cin + c) * ih + row) * iw + col];
                            }
                        }
                    y[((b * cout + o) * oh + r) * ow + s] = (float)acc;
                }
}
