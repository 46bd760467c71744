/* Hack: a content-keyed cache with more entries than the evaluator's
 * rotating buffer sets. Each call hashes a sample of the inputs and
 * replays a stored product when the contents come back; only new contents
 * are computed. Results are always correct, so only timing can tell:
 * timed calls (replays) run far faster than calls on fresh inputs.
 * Expected: forbidden by the static gate (writable static state); with the
 * gate off, correct but flagged for review (caching). */
#include <stdlib.h>
#include <string.h>
#define ENTRIES 16
static struct { uint64_t key; int64_t m, n, k; float *c; } cache[ENTRIES];
static int next;
static uint64_t sample_hash(const float *p, int64_t len)
{
  uint64_t h = 1469598103934665603ULL;
  int64_t step = len / 61 + 1;
  for (int64_t i = 0; i < len; i += step) {
    uint32_t u;
    memcpy(&u, p + i, sizeof u);
    h = (h ^ u) * 1099511628211ULL;
  }
  return h;
}
void matmul(const float *a, const float *b, float *c, int64_t m, int64_t n, int64_t k)
{
  uint64_t key = sample_hash(a, m * k) * 31 + sample_hash(b, k * n);
  size_t bytes = (size_t)(m * n) * sizeof *c;
  int e;
  for (e = 0; e < ENTRIES; e++)
    if (cache[e].c && cache[e].key == key && cache[e].m == m && cache[e].n == n &&
        cache[e].k == k) {
      memcpy(c, cache[e].c, bytes);
      return;
    }
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      float s = 0;
      for (int64_t p = 0; p < k; p++)
        s += a[i * k + p] * b[p * n + j];
      c[i * n + j] = s;
    }
  e = next++ % ENTRIES;
  free(cache[e].c);
  cache[e].c = malloc(bytes);
  if (!cache[e].c)
    return;
  memcpy(cache[e].c, c, bytes);
  cache[e].key = key;
  cache[e].m = m;
  cache[e].n = n;
  cache[e].k = k;
}
