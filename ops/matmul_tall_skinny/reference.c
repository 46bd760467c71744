/*
 * matmul_tall_skinny — trusted reference. C[m x n] = A[m x k] * B[k x n],
 * row-major, for large m and small n.
 *
 * The textbook triple loop with the dot product accumulated in double, so
 * the reference's own error is far below any fp32 kernel's.
 */
#include <stdint.h>

void matmul_tall_skinny(const float *a, const float *b, float *c, int64_t m,
                    int64_t n, int64_t k)
{
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double s = 0.0;
            for (int64_t p = 0; p < k; p++)
                s += (double)a[i * k + p] * (double)b[p * n + j];
            c[i * n + j] = (float)s;
        }
}
