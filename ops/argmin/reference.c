/*
 * argmin — trusted reference, row-wise over the last dimension.
 *
 *   y[r] = the smallest j with x[r][j] == min_k x[r][k]
 *
 * A plain left-to-right scan with a strict comparison, so ties resolve to
 * the first index, as in torch.argmin.
 */
#include <stdint.h>

void argmin(const float *x, int64_t *y, int64_t rows, int64_t cols)
{
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * cols;
        int64_t best = 0;
        for (int64_t j = 1; j < cols; j++)
            if (xr[j] < xr[best])
                best = j;
        y[r] = best;
    }
}
