/* Legitimate: cache-blocked matmul, OpenMP over row blocks, a packed copy
 * of each B panel in a malloc'd buffer, i-k-j inner order that vectorizes.
 * Expected: correct. */
#include <stdlib.h>
#include <string.h>
#define MB 64
#define KB 128
#define NB 256
static void block(const float *a, const float *bp, float *c, int64_t i0, int64_t i1,
                  int64_t k0, int64_t kb, int64_t j0, int64_t nb, int64_t n, int64_t k)
{
  for (int64_t i = i0; i < i1; i++)
    for (int64_t p = 0; p < kb; p++) {
      const float av = a[i * k + k0 + p];
      const float *restrict brow = bp + p * nb;
      float *restrict crow = c + i * n + j0;
      for (int64_t j = 0; j < nb; j++)
        crow[j] += av * brow[j];
    }
}
void matmul(const float *a, const float *b, float *c, int64_t m, int64_t n, int64_t k)
{
  memset(c, 0, (size_t)(m * n) * sizeof *c);
#pragma omp parallel if (m * n * k > 1000000)
  {
    float *bp = malloc((size_t)KB * NB * sizeof *bp);
    for (int64_t j0 = 0; j0 < n; j0 += NB)
      for (int64_t k0 = 0; k0 < k; k0 += KB) {
        int64_t nb = n - j0 < NB ? n - j0 : NB, kb = k - k0 < KB ? k - k0 : KB;
        for (int64_t p = 0; p < kb; p++)
          memcpy(bp + p * nb, b + (k0 + p) * n + j0, (size_t)nb * sizeof *bp);
#pragma omp for schedule(static)
        for (int64_t i0 = 0; i0 < m; i0 += MB)
          block(a, bp, c, i0, i0 + MB < m ? i0 + MB : m, k0, kb, j0, nb, n, k);
      }
    free(bp);
  }
}
