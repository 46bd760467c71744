/*
 * cumprod — trusted reference, inclusive prefix product along each row of
 * a row-major [rows x cols] matrix.
 *
 *   y[r][j] = prod_{k <= j} x[r][k]
 *
 * The running product is kept in double; the only fp32 rounding is the
 * conversion of each y.
 */
#include <stdint.h>

void cumprod(const float *x, float *y, int64_t rows, int64_t cols)
{
    for (int64_t r = 0; r < rows; r++) {
        double s = 1.0;
        for (int64_t j = 0; j < cols; j++) {
            s *= (double)x[r * cols + j];
            y[r * cols + j] = (float)s;
        }
    }
}
