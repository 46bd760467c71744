/*
 * bmm — trusted reference. C[b] = A[b] * B[b] for every batch index b,
 * each a densely packed row-major matrix (A[b] is m x k, B[b] k x n,
 * C[b] m x n).
 *
 * The textbook loops with every dot product accumulated in double, so the
 * reference's own error is far below any fp32 kernel's.
 */
#include <stdint.h>

void bmm(const float *a, const float *b, float *c, int64_t batch, int64_t m,
         int64_t n, int64_t k)
{
    for (int64_t t = 0; t < batch; t++) {
        const float *at = a + t * m * k, *bt = b + t * k * n;
        float *ct = c + t * m * n;
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                double s = 0.0;
                for (int64_t p = 0; p < k; p++)
                    s += (double)at[i * k + p] * (double)bt[p * n + j];
                ct[i * n + j] = (float)s;
            }
    }
}
