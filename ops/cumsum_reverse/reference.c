/*
 * cumsum_reverse — trusted reference, inclusive suffix sum (reverse
 * cumulative sum) along each row of a row-major [rows x cols] matrix.
 *
 *   y[r][j] = sum_{k >= j} x[r][k]
 *
 * The running sum, from the last column down, is kept in double; the only
 * fp32 rounding is the conversion of each y.
 */
#include <stdint.h>

void cumsum_reverse(const float *x, float *y, int64_t rows, int64_t cols)
{
    for (int64_t r = 0; r < rows; r++) {
        double s = 0.0;
        for (int64_t j = cols - 1; j >= 0; j--) {
            s += (double)x[r * cols + j];
            y[r * cols + j] = (float)s;
        }
    }
}
