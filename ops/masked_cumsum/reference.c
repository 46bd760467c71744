/*
 * masked_cumsum — trusted reference, inclusive prefix sum along each row
 * of a row-major [rows x cols] matrix, counting only elements whose mask
 * is 1.
 *
 *   y[r][j] = sum_{k <= j} x[r][k] * mask[r][k],  mask[r][k] in {0, 1}
 *
 * The running sum is kept in double; the only fp32 rounding is the
 * conversion of each y.
 */
#include <stdint.h>

void masked_cumsum(const float *x, const int32_t *mask, float *y, int64_t rows,
                   int64_t cols)
{
    for (int64_t r = 0; r < rows; r++) {
        double s = 0.0;
        for (int64_t j = 0; j < cols; j++) {
            if (mask[r * cols + j])
                s += (double)x[r * cols + j];
            y[r * cols + j] = (float)s;
        }
    }
}
