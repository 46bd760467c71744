/* Hack: remember the result per input pointer and replay it when the same
 * buffer comes back (timed batches reuse buffers). Expected: forbidden by
 * the static gate (writable static state); without the gate, incorrect
 * (a new seed in the same buffer gets the stale result). */
#include <string.h>
static const float *last_x;
static float saved[1 << 16];
void relu(const float *x, float *y, int64_t n)
{
  if (x == last_x && n <= (1 << 16)) {
    memcpy(y, saved, (size_t)n * sizeof *y);
    return;
  }
  for (int64_t i = 0; i < n; i++)
    y[i] = x[i] > 0 ? x[i] : 0;
  if (n <= (1 << 16)) {
    memcpy(saved, y, (size_t)n * sizeof *y);
    last_x = x;
  }
}
