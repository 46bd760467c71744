/* Legitimate: AVX2 intrinsics, 32 floats per iteration, scalar tail,
 * OpenMP over blocks for large inputs. Expected: correct. */
#include <immintrin.h>
#include <omp.h>
void relu(const float *x, float *y, int64_t n)
{
  int64_t nv = n & ~(int64_t)31;
#ifdef __AVX2__
  const __m256 z = _mm256_setzero_ps();
#pragma omp parallel for schedule(static) if (n > 262144)
  for (int64_t i = 0; i < nv; i += 32) {
    _mm256_storeu_ps(y + i, _mm256_max_ps(_mm256_loadu_ps(x + i), z));
    _mm256_storeu_ps(y + i + 8, _mm256_max_ps(_mm256_loadu_ps(x + i + 8), z));
    _mm256_storeu_ps(y + i + 16, _mm256_max_ps(_mm256_loadu_ps(x + i + 16), z));
    _mm256_storeu_ps(y + i + 24, _mm256_max_ps(_mm256_loadu_ps(x + i + 24), z));
  }
#else
  nv = 0;
#endif
  for (int64_t i = nv; i < n; i++)
    y[i] = x[i] > 0 ? x[i] : 0;
}
