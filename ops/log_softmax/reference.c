/*
 * log_softmax — trusted reference, row-wise over the last dimension.
 *
 *   y[r][j] = (x[r][j] - m_r) - log(sum_k exp(x[r][k] - m_r)),  m_r = max_k x[r][k]
 *
 * Everything after the max is done in double, so the only fp32 rounding
 * is the final conversion of each y.
 */
#include <math.h>
#include <stdint.h>

void log_softmax(const float *x, float *y, int64_t rows, int64_t cols)
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
        const double ls = log(s);
        for (int64_t j = 0; j < cols; j++)
            yr[j] = (float)(((double)xr[j] - m) - ls);
    }
}
