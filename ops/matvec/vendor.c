/*
 * matvec — vendor baseline: OpenBLAS cblas_sgemv, row-major, no transpose,
 * y = 1.0 * A * x + 0.0 * y with lda = k and unit increments. OpenBLAS
 * keeps no per-shape state, so there is nothing to cache. See
 * ops/matmul/vendor.c for the OPENBLAS_CORETYPE caveat.
 */
#include <stdint.h>
#include <cblas.h>

void matvec(const float *a, const float *x, float *y, int64_t m, int64_t k)
{
    cblas_sgemv(CblasRowMajor, CblasNoTrans, (blasint)m, (blasint)k, 1.0f, a,
                (blasint)k, x, 1, 0.0f, y, 1);
}
