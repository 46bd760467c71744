/*
 * matmul_tb — vendor baseline: OpenBLAS cblas_sgemm, row-major, A not
 * transposed (lda = k), B transposed (stored [n x k], ldb = k),
 * C = 1.0 * A * B^T + 0.0 * C. OpenBLAS keeps no per-shape state, so there
 * is nothing to cache. See ops/matmul/vendor.c for the OPENBLAS_CORETYPE
 * caveat.
 */
#include <stdint.h>
#include <cblas.h>

void matmul_tb(const float *a, const float *b, float *c, int64_t m, int64_t n,
               int64_t k)
{
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (blasint)m,
                (blasint)n, (blasint)k, 1.0f, a, (blasint)k, b, (blasint)k,
                0.0f, c, (blasint)n);
}
