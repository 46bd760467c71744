/*
 * matvec — trusted reference. y[m] = A[m x k] * x[k], A row-major.
 *
 * One dot product per row, accumulated in double, so the reference's own
 * error is far below any fp32 kernel's.
 */
#include <stdint.h>

void matvec(const float *a, const float *x, float *y, int64_t m, int64_t k)
{
    for (int64_t i = 0; i < m; i++) {
        double s = 0.0;
        for (int64_t p = 0; p < k; p++)
            s += (double)a[i * k + p] * (double)x[p];
        y[i] = (float)s;
    }
}
