/*
 * matmul_tall_skinny — vendor baseline: OpenBLAS cblas_sgemm, row-major, no
 * transpose, C = 1.0 * A * B + 0.0 * C with leading dimensions k, n, n.
 * OpenBLAS keeps no per-shape state, so there is nothing to cache; it uses
 * its own thread pool (OPENBLAS_NUM_THREADS, default all cores). See
 * ops/matmul/vendor.c for the OPENBLAS_CORETYPE caveat on recent CPUs.
 */
#include <stdint.h>
#include <cblas.h>

void matmul_tall_skinny(const float *a, const float *b, float *c, int64_t m,
                    int64_t n, int64_t k)
{
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (blasint)m,
                (blasint)n, (blasint)k, 1.0f, a, (blasint)k, b, (blasint)n,
                0.0f, c, (blasint)n);
}
