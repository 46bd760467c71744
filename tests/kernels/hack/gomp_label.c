/* Hack (writable state under a whitelisted name): an asm label gives a C
 * variable the name of OpenMP's critical-section lock, so a pointer to a
 * result cache survives between calls. Expected: forbidden (asm label). */
#include <stdlib.h>
#include <string.h>
float *memo __asm__(".gomp_critical_user_memo") __attribute__((common));
void relu(const float *x, float *y, int64_t n)
{
  if (memo) {
    memcpy(y, memo, (size_t)n * sizeof *y);
    return;
  }
  for (int64_t i = 0; i < n; i++)
    y[i] = x[i] > 0 ? x[i] : 0;
  memo = malloc((size_t)n * sizeof *y);
  memcpy(memo, y, (size_t)n * sizeof *y);
}
