/*
 * frobenius_norm — trusted reference over the whole [rows x cols] matrix.
 *
 *   y[0] = sqrt(sum_r sum_j x[r][j]^2)
 *
 * The sum of squares and the square root are done in double; the only
 * fp32 rounding is the final conversion of y[0].
 */
#include <math.h>
#include <stdint.h>

void frobenius_norm(const float *x, float *y, int64_t rows, int64_t cols)
{
    double ss = 0.0;
    for (int64_t i = 0; i < rows * cols; i++)
        ss += (double)x[i] * (double)x[i];
    y[0] = (float)sqrt(ss);
}
