/* rowsum — reference: row sums of the first min(rows, 64) rows, in double. */
#include <stdint.h>

void rowsum(const float *x, float *y, int64_t rows, int64_t cols)
{
    int64_t r_end = rows < 64 ? rows : 64;
    for (int64_t r = 0; r < r_end; r++) {
        double s = 0.0;
        for (int64_t j = 0; j < cols; j++)
            s += x[r * cols + j];
        y[r] = (float)s;
    }
}
