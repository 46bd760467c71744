/*
 * mlp_block — trusted reference: layer_norm (affine) -> linear -> GELU.
 *
 *   u[c]    = (x[r][c] - mean_r) / sqrt(var_r + eps) * gamma[c] + beta[c]
 *   z[j]    = bias[j] + sum_c u[c] * w[c][j]
 *   y[r][j] = 0.5 * z * (1 + erf(z / sqrt(2)))
 *
 * mean and (biased) variance by two passes, the normalized row, the
 * matmul and the GELU are all in double (scratch rows of d and h
 * doubles); the only fp32 rounding is the final conversion.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void mlp_block(const float *x, const float *gamma, const float *beta,
               const float *w, const float *bias, float *y, int64_t rows,
               int64_t d, int64_t h, float eps)
{
    double *u = malloc((size_t)d * sizeof(double));
    double *z = malloc((size_t)h * sizeof(double));
    if (!u || !z)
        abort();
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * d;
        double mean = 0.0, var = 0.0;
        for (int64_t c = 0; c < d; c++)
            mean += xr[c];
        mean /= (double)d;
        for (int64_t c = 0; c < d; c++)
            var += ((double)xr[c] - mean) * ((double)xr[c] - mean);
        var /= (double)d;
        const double inv = 1.0 / sqrt(var + (double)eps);
        for (int64_t c = 0; c < d; c++)
            u[c] = ((double)xr[c] - mean) * inv * gamma[c] + beta[c];
        for (int64_t j = 0; j < h; j++)
            z[j] = bias[j];
        for (int64_t c = 0; c < d; c++)
            for (int64_t j = 0; j < h; j++)
                z[j] += u[c] * (double)w[c * h + j];
        for (int64_t j = 0; j < h; j++)
            y[r * h + j] = (float)(0.5 * z[j] * (1.0 + erf(z[j] / sqrt(2.0))));
    }
    free(u);
    free(z);
}
