/*
 * gather — trusted reference: y[i][j] = src[idx[i]][j].
 *
 * A copy, so exact: the spec's tolerance is 0.
 */
#include <stdint.h>

void gather(const float *src, const int64_t *idx, float *y, int64_t rows,
            int64_t cols, int64_t nidx)
{
    (void)rows;
    for (int64_t i = 0; i < nidx; i++)
        for (int64_t j = 0; j < cols; j++)
            y[i * cols + j] = src[idx[i] * cols + j];
}
