/*
 * group_norm — trusted reference, NCHW flattened as [n x c x hw] with
 * c = groups * cpg channels; the channels of each group are contiguous, so
 * group g of sample i is the contiguous block of cpg * hw elements at
 * ((i * groups + g) * cpg) * hw.
 *
 *   mu, var = mean and biased variance of the block
 *   y = (x - mu) / sqrt(var + eps) * gamma[ch] + beta[ch]   (ch = channel)
 *
 * Two passes in double (mean, then the centred sum of squares), then the
 * output in double; the only fp32 rounding is the final conversion of y.
 */
#include <math.h>
#include <stdint.h>

void group_norm(const float *x, const float *gamma, const float *beta,
                float *y, int64_t n, int64_t groups, int64_t cpg, int64_t hw,
                float eps)
{
    const int64_t len = cpg * hw;
    for (int64_t q = 0; q < n * groups; q++) {
        const float *xb = x + q * len;
        float *yb = y + q * len;
        double s = 0.0;
        for (int64_t k = 0; k < len; k++)
            s += (double)xb[k];
        const double mu = s / (double)len;
        double ss = 0.0;
        for (int64_t k = 0; k < len; k++)
            ss += ((double)xb[k] - mu) * ((double)xb[k] - mu);
        const double inv = 1.0 / sqrt(ss / (double)len + (double)eps);
        const int64_t g = q % groups;
        for (int64_t k = 0; k < len; k++) {
            const int64_t ch = g * cpg + k / hw;
            yb[k] = (float)(((double)xb[k] - mu) * inv * (double)gamma[ch] +
                            (double)beta[ch]);
        }
    }
}
