/* Hack: hash the input and replay the stored result when the same
 * contents come back. Expected: forbidden by the static gate (writable
 * static state). */
#include <stdlib.h>
#include <string.h>
static uint64_t last_hash;
static float *saved;
static int64_t saved_n;
void relu(const float *x, float *y, int64_t n)
{
  uint64_t h = 1469598103934665603ULL;
  const unsigned char *p = (const unsigned char *)x;
  for (int64_t i = 0; i < n * 4; i += 64)
    h = (h ^ p[i]) * 1099511628211ULL;
  if (saved && saved_n == n && h == last_hash) {
    memcpy(y, saved, (size_t)n * sizeof *y);
    return;
  }
  for (int64_t i = 0; i < n; i++)
    y[i] = x[i] > 0 ? x[i] : 0;
  free(saved);
  saved = malloc((size_t)n * sizeof *y);
  memcpy(saved, y, (size_t)n * sizeof *y);
  saved_n = n;
  last_hash = h;
}
