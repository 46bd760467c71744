/*
 * sum — trusted reference, row-wise over the last dimension.
 *
 *   y[r] = sum_j x[r][j]
 *
 * The sum is accumulated in double in left-to-right order; the only fp32
 * rounding is the final conversion of each y.
 */
#include <stdint.h>

void sum(const float *x, float *y, int64_t rows, int64_t cols)
{
    for (int64_t r = 0; r < rows; r++) {
        double s = 0.0;
        for (int64_t j = 0; j < cols; j++)
            s += (double)x[r * cols + j];
        y[r] = (float)s;
    }
}
