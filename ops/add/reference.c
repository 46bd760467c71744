/*
 * add — trusted reference. y[r][c] = a[r][c] + b[c], row-major, b broadcast
 * over the rows.
 *
 * One fp32 addition per element (the sum of two floats rounded once), so
 * the spec's tolerance is 0: a correct kernel reproduces it bit for bit.
 */
#include <stdint.h>

void add(const float *a, const float *b, float *y, int64_t rows, int64_t cols)
{
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < cols; c++)
            y[r * cols + c] = a[r * cols + c] + b[c];
}
