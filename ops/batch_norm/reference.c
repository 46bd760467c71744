/*
 * batch_norm — trusted reference, inference mode, NCHW flattened as
 * [n x c x hw] with per-channel running statistics and affine parameters.
 *
 *   y[i][ch][p] = (x[i][ch][p] - mean[ch]) / sqrt(var[ch] + eps) * gamma[ch] + beta[ch]
 *
 * Computed in double; the only fp32 rounding is the final conversion of y.
 */
#include <math.h>
#include <stdint.h>

void batch_norm(const float *x, const float *mean, const float *var,
                const float *gamma, const float *beta, float *y, int64_t n,
                int64_t c, int64_t hw, float eps)
{
    for (int64_t i = 0; i < n; i++)
        for (int64_t ch = 0; ch < c; ch++) {
            const double inv = 1.0 / sqrt((double)var[ch] + (double)eps);
            const float *xp = x + (i * c + ch) * hw;
            float *yp = y + (i * c + ch) * hw;
            for (int64_t p = 0; p < hw; p++)
                yp[p] = (float)(((double)xp[p] - (double)mean[ch]) * inv *
                                    (double)gamma[ch] +
                                (double)beta[ch]);
        }
}
