/*
 * layer_norm — trusted reference, row-wise over the last dimension.
 *
 *   mu_r = mean_j x[r][j],  var_r = mean_j (x[r][j] - mu_r)^2  (biased)
 *   y[r][j] = (x[r][j] - mu_r) / sqrt(var_r + eps) * gamma[j] + beta[j]
 *
 * Two passes in double (mean, then the centred sum of squares), then the
 * output in double; the only fp32 rounding is the final conversion of y.
 */
#include <math.h>
#include <stdint.h>

void layer_norm(const float *x, const float *gamma, const float *beta,
                float *y, int64_t rows, int64_t cols, float eps)
{
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * cols;
        float *yr = y + r * cols;
        double s = 0.0;
        for (int64_t j = 0; j < cols; j++)
            s += (double)xr[j];
        const double mu = s / (double)cols;
        double ss = 0.0;
        for (int64_t j = 0; j < cols; j++)
            ss += ((double)xr[j] - mu) * ((double)xr[j] - mu);
        const double inv = 1.0 / sqrt(ss / (double)cols + (double)eps);
        for (int64_t j = 0; j < cols; j++)
            yr[j] = (float)(((double)xr[j] - mu) * inv * (double)gamma[j] +
                            (double)beta[j]);
    }
}
