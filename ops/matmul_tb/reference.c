/*
 * matmul_tb — trusted reference. C[m x n] = A * B^T with A row-major
 * [m x k] and B stored row-major [n x k].
 *
 * The textbook triple loop, C[i][j] = sum_p A[i][p] * B[j][p], with the
 * dot product accumulated in double, so the reference's own error is far
 * below any fp32 kernel's.
 */
#include <stdint.h>

void matmul_tb(const float *a, const float *b, float *c, int64_t m, int64_t n,
               int64_t k)
{
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double s = 0.0;
            for (int64_t p = 0; p < k; p++)
                s += (double)a[i * k + p] * (double)b[j * k + p];
            c[i * n + j] = (float)s;
        }
}
