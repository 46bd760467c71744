/*
 * rms_norm — trusted reference, row-wise.
 *
 *   y[r][j] = x[r][j] / sqrt(mean_j(x[r][j]^2) + eps) * w[j]
 *
 * The mean of squares, the scale and the products are computed in double;
 * the only fp32 rounding is the final conversion of each y.
 */
#include <math.h>
#include <stdint.h>

void rms_norm(const float *x, const float *w, float *y, int64_t rows,
              int64_t cols, float eps)
{
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * cols;
        float *yr = y + r * cols;
        double ss = 0.0;
        for (int64_t j = 0; j < cols; j++)
            ss += (double)xr[j] * (double)xr[j];
        double inv = 1.0 / sqrt(ss / (double)cols + (double)eps);
        for (int64_t j = 0; j < cols; j++)
            yr[j] = (float)((double)xr[j] * inv * (double)w[j]);
    }
}
