/*
 * softmax — trusted reference, row-wise over the last dimension.
 *
 *   y[r][j] = exp(x[r][j] - m_r) / sum_j exp(x[r][j] - m_r),  m_r = max_j x[r][j]
 *
 * Everything after the max is done in double, and the exponentials are
 * recomputed in the output pass rather than stored, so the only fp32
 * rounding is the final conversion of each y.
 */
#include <math.h>
#include <stdint.h>

void softmax(const float *x, float *y, int64_t rows, int64_t cols)
{
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * cols;
        float *yr = y + r * cols;
        double m = xr[0];
        for (int64_t j = 1; j < cols; j++)
            if (xr[j] > m)
                m = xr[j];
        double s = 0.0;
        for (int64_t j = 0; j < cols; j++)
            s += exp((double)xr[j] - m);
        for (int64_t j = 0; j < cols; j++)
            yr[j] = (float)(exp((double)xr[j] - m) / s);
    }
}
