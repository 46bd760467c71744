/*
 * matmul_ta — trusted reference. C[m x n] = A^T * B with A stored
 * row-major [k x m] and B row-major [k x n].
 *
 * The textbook triple loop, C[i][j] = sum_p A[p][i] * B[p][j], with the
 * dot product accumulated in double, so the reference's own error is far
 * below any fp32 kernel's.
 */
#include <stdint.h>

void matmul_ta(const float *a, const float *b, float *c, int64_t m, int64_t n,
               int64_t k)
{
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double s = 0.0;
            for (int64_t p = 0; p < k; p++)
                s += (double)a[p * m + i] * (double)b[p * n + j];
            c[i * n + j] = (float)s;
        }
}
