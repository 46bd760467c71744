/*
 * instance_norm — trusted reference, NCHW flattened as [n x c x hw]: each
 * (sample, channel) plane of hw elements is normalized by its own mean and
 * biased variance, then scaled and shifted per channel.
 *
 *   y[i][ch][p] = (x[i][ch][p] - mu) / sqrt(var + eps) * gamma[ch] + beta[ch]
 *
 * Two passes in double (mean, then the centred sum of squares), then the
 * output in double; the only fp32 rounding is the final conversion of y.
 */
#include <math.h>
#include <stdint.h>

void instance_norm(const float *x, const float *gamma, const float *beta,
                   float *y, int64_t n, int64_t c, int64_t hw, float eps)
{
    for (int64_t q = 0; q < n * c; q++) {
        const float *xp = x + q * hw;
        float *yp = y + q * hw;
        const int64_t ch = q % c;
        double s = 0.0;
        for (int64_t p = 0; p < hw; p++)
            s += (double)xp[p];
        const double mu = s / (double)hw;
        double ss = 0.0;
        for (int64_t p = 0; p < hw; p++)
            ss += ((double)xp[p] - mu) * ((double)xp[p] - mu);
        const double inv = 1.0 / sqrt(ss / (double)hw + (double)eps);
        for (int64_t p = 0; p < hw; p++)
            yp[p] = (float)(((double)xp[p] - mu) * inv * (double)gamma[ch] +
                            (double)beta[ch]);
    }
}
