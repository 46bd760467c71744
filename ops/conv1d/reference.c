/*
 * conv1d — trusted reference. NCL 1-D convolution (cross-correlation)
 * with [cout x cin x kl] weights, bias, stride and zero padding, as
 * torch.nn.functional.conv1d (groups 1).
 *
 * The textbook loops: every output is the bias plus the sum over input
 * channels and kernel taps, accumulated in double; taps that fall into
 * the padding are skipped (they multiply zeros).
 */
#include <stdint.h>

void conv1d(const float *x, const float *w, const float *bias, float *y,
            int64_t n, int64_t cin, int64_t cout, int64_t l, int64_t kl,
            int64_t stride, int64_t pad)
{
    const int64_t lo = (l + 2 * pad - kl) / stride + 1;
    for (int64_t b = 0; b < n; b++)
        for (int64_t o = 0; o < cout; o++)
            for (int64_t t = 0; t < lo; t++) {
                double acc = bias[o];
                for (int64_t c = 0; c < cin; c++)
                    for (int64_t j = 0; j < kl; j++) {
                        const int64_t pos = t * stride - pad + j;
                        if (pos < 0 || pos >= l)
                            continue;
                        acc += (double)w[(o * cin + c) * kl + j] *
                               (double)x[(b * cin + c) * l + pos];
                    }
                y[(b * cout + o) * lo + t] = (float)acc;
            }
}
