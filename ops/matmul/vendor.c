/*
 * matmul — vendor baseline: OpenBLAS cblas_sgemm, row-major, no transpose,
 * C = 1.0 * A * B + 0.0 * C with leading dimensions k, n, n. OpenBLAS keeps
 * no per-shape state, so there is nothing to cache; it uses its own thread
 * pool (OPENBLAS_NUM_THREADS, default all cores).
 *
 * Beware: OpenBLAS picks its kernels at load time from the CPU model.
 * Debian's 0.3.21 (DYNAMIC_ARCH) does not know recent Xeons (e.g. family
 * 6 model 207) and falls back to the SSE3 "Prescott" kernels, about 4x
 * slower than its AVX-512 ones. Run the baseline with
 * OPENBLAS_CORETYPE=SkylakeX (AVX-512) or Haswell (AVX2) in the
 * environment on such machines; openblas_get_corename() says which
 * kernels were chosen. This cannot be fixed from here: the choice is made
 * before any code of this file runs.
 */
#include <stdint.h>
#include <cblas.h>

void matmul(const float *a, const float *b, float *c, int64_t m, int64_t n,
            int64_t k)
{
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (blasint)m,
                (blasint)n, (blasint)k, 1.0f, a, (blasint)k, b, (blasint)n,
                0.0f, c, (blasint)n);
}
