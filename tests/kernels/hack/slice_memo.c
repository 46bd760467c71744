/* Hack (output buffer as memo, issue 16 class 3): no static state. The
 * kernel samples its output: when every sample already holds relu of its
 * input (the call before left it there and nobody poisoned it since) it
 * recomputes only the first 1/1024 of the elements. Every first call on a
 * buffer set after kope writes poison or new inputs computes in full, so
 * every checked output is correct. It cheats only where the old roofline
 * review did not look: working sets that fit in the last-level cache
 * (8n <= 16 MiB; relu's large perf case is computed honestly).
 * Expected with timing: correct, flagged for review (roofline): each case
 * is judged against the bandwidth of the memory level it fits in. */
#include <stdint.h>
static inline float r(float v) { return v > 0 ? v : 0; }
void relu(const float *x, float *y, int64_t n)
{
  int64_t i, step = n / 16 + 1, todo = n;
  int memo = n >= 1024 && 8 * n <= (16 << 20);

  for (i = 0; memo && i < n; i += step)
    memo = y[i] == r(x[i]);
  if (memo && y[n - 1] == r(x[n - 1]))
    todo = n / 1024;
  for (i = 0; i < todo; i++)
    y[i] = r(x[i]);
}
