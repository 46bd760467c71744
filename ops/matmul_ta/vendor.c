/*
 * matmul_ta — vendor baseline: OpenBLAS cblas_sgemm, row-major, A
 * transposed (stored [k x m], lda = m), B not (ldb = n), C = 1.0 * A^T * B
 * + 0.0 * C. OpenBLAS keeps no per-shape state, so there is nothing to
 * cache. See ops/matmul/vendor.c for the OPENBLAS_CORETYPE caveat.
 */
#include <stdint.h>
#include <cblas.h>

void matmul_ta(const float *a, const float *b, float *c, int64_t m, int64_t n,
               int64_t k)
{
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (blasint)m,
                (blasint)n, (blasint)k, 1.0f, a, (blasint)m, b, (blasint)n,
                0.0f, c, (blasint)n);
}
