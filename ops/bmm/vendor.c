/*
 * bmm — vendor baseline: one OpenBLAS cblas_sgemm per batch entry,
 * row-major, no transpose, C[b] = 1.0 * A[b] * B[b] + 0.0 * C[b].
 * (Debian's OpenBLAS 0.3.21 has no batched sgemm entry point; each call
 * uses OpenBLAS's own thread pool.) Nothing to cache. See
 * ops/matmul/vendor.c for the OPENBLAS_CORETYPE caveat on recent CPUs.
 */
#include <stdint.h>
#include <cblas.h>

void bmm(const float *a, const float *b, float *c, int64_t batch, int64_t m,
         int64_t n, int64_t k)
{
    for (int64_t t = 0; t < batch; t++)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (blasint)m,
                    (blasint)n, (blasint)k, 1.0f, a + t * m * k, (blasint)k,
                    b + t * k * n, (blasint)n, 0.0f, c + t * m * n,
                    (blasint)n);
}
