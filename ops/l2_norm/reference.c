/*
 * l2_norm — trusted reference, row-wise over the last dimension
 * (torch.nn.functional.normalize(x, p=2, dim=1, eps)).
 *
 *   y[r][j] = x[r][j] / max(sqrt(sum_k x[r][k]^2), eps)
 *
 * The sum of squares, the norm and the division are done in double; the
 * only fp32 rounding is the final conversion of each y.
 */
#include <math.h>
#include <stdint.h>

void l2_norm(const float *x, float *y, int64_t rows, int64_t cols, float eps)
{
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * cols;
        float *yr = y + r * cols;
        double ss = 0.0;
        for (int64_t j = 0; j < cols; j++)
            ss += (double)xr[j] * (double)xr[j];
        double d = sqrt(ss);
        if (d < (double)eps)
            d = (double)eps;
        for (int64_t j = 0; j < cols; j++)
            yr[j] = (float)((double)xr[j] / d);
    }
}
