/*
 * mean — trusted reference, row-wise over the last dimension.
 *
 *   y[r] = (sum_j x[r][j]) / cols
 *
 * The sum and the division are done in double; the only fp32
 * rounding is the final conversion of each y.
 */
#include <stdint.h>

void mean(const float *x, float *y, int64_t rows, int64_t cols)
{
    for (int64_t r = 0; r < rows; r++) {
        double s = 0.0;
        for (int64_t j = 0; j < cols; j++)
            s += (double)x[r * cols + j];
        y[r] = (float)(s / (double)cols);
    }
}
