/*
 * amin — trusted reference, row-wise over the last dimension.
 *
 *   y[r] = min_j x[r][j]
 *
 * A plain left-to-right scan; the minimum of floats is exact, so any
 * correct kernel returns the same bits.
 */
#include <stdint.h>

void amin(const float *x, float *y, int64_t rows, int64_t cols)
{
    for (int64_t r = 0; r < rows; r++) {
        float m = x[r * cols];
        for (int64_t j = 1; j < cols; j++)
            if (x[r * cols + j] < m)
                m = x[r * cols + j];
        y[r] = m;
    }
}
