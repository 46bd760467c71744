/*
 * cumsum_exclusive — trusted reference, exclusive prefix sum along each
 * row of a row-major [rows x cols] matrix.
 *
 *   y[r][j] = sum_{k < j} x[r][k]   (y[r][0] = 0)
 *
 * The running sum is kept in double and stored before each add; the only
 * fp32 rounding is the conversion of each y.
 */
#include <stdint.h>

void cumsum_exclusive(const float *x, float *y, int64_t rows, int64_t cols)
{
    for (int64_t r = 0; r < rows; r++) {
        double s = 0.0;
        for (int64_t j = 0; j < cols; j++) {
            y[r * cols + j] = (float)s;
            s += (double)x[r * cols + j];
        }
    }
}
