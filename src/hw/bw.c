/*
 * Hardware profile, bandwidth per memory level: a STREAM-style triad
 * (a = b + s * c) over working sets sized to sit in L1d, L2, L3 and far
 * beyond the last-level cache (DRAM), each on every thread the process may
 * use and on one thread. The arrays are allocated once at the DRAM size
 * and first-touched by the threads that sweep them; a cache level's
 * working set is a prefix of them, split into one contiguous chunk per
 * thread, and swept many times inside one timed parallel region so a
 * 16 KB sweep is not lost in the clock. A level whose size the profile
 * does not know is not measured (0); DRAM always is.
 *
 * STREAM's byte convention: 3 * 4 bytes per element and sweep (read b and
 * c, write a); the write-allocate read of a is not counted, so the figure
 * is what a kernel moving that many bytes can count on. The best of a few
 * repetitions is kept.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <omp.h>
#include "kope/core.h"
#include "hw/hw_int.h"

#define HW_TRIAD_REPS 5
#define HW_LEVEL_REPS 4
#define HW_LEVEL_REP_S 0.01            /* target seconds per cache-level repetition */
#define HW_TRIAD_MIN (64 * HW_MIB)     /* smallest DRAM array */
#define HW_TRIAD_MAX (1024 * HW_MIB)   /* largest DRAM array */

/* Written with every benchmark result so no loop can be optimised away. */
static volatile float hw_sink;

struct hw_triad {
  float *a, *b, *c;
  long n;
};

/* Bytes per array: the three arrays together span at least 4x the
 * last-level cache, each at least HW_TRIAD_MIN; capped at HW_TRIAD_MAX and
 * an eighth of physical memory so the run stays short and safe. */
static size_t hw_triad_bytes(const kope_hw *hw)
{
  size_t llc = (size_t)(hw->cache[3] > 0 ? hw->cache[3] : hw->cache[2]);
  size_t want = 4 * llc / 3, cap = HW_TRIAD_MAX;
  long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);

  if (pages > 0 && psz > 0 && (size_t)pages / 8 * (size_t)psz < cap)
    cap = (size_t)pages / 8 * (size_t)psz;
  if (want < HW_TRIAD_MIN)
    want = HW_TRIAD_MIN;
  if (want > cap)
    want = cap;
  if (want < HW_MIB)
    want = HW_MIB;
  return want & ~(size_t)4095;
}

static void hw_triad_release(struct hw_triad *t)
{
  free(t->a);
  free(t->b);
  free(t->c);
  t->a = t->b = t->c = NULL;
  t->n = 0;
}

/* Allocate three arrays, halving the size while allocation fails. */
static int hw_triad_alloc(struct hw_triad *t, size_t bytes)
{
  for (; bytes >= HW_MIB; bytes = (bytes / 2) & ~(size_t)4095) {
    t->a = aligned_alloc(64, bytes);
    t->b = aligned_alloc(64, bytes);
    t->c = aligned_alloc(64, bytes);
    if (t->a && t->b && t->c) {
      t->n = (long)(bytes / sizeof(float));
      return 0;
    }
    hw_triad_release(t);
  }
  return -1;
}

/* First touch with the triad's own static schedule, so each thread's pages
 * sit on its own NUMA node. */
HW_BENCH static void hw_triad_init(struct hw_triad *t, int nt)
{
  float *restrict a = t->a, *restrict b = t->b, *restrict c = t->c;
  long i, n = t->n;

#pragma omp parallel for schedule(static) num_threads(nt)
  for (i = 0; i < n; i++) {
    a[i] = 0.0f;
    b[i] = 1.0f;
    c[i] = 2.0f;
  }
}

/* One thread's share: reps sweeps over elements [lo, hi). The empty asm
 * with a memory clobber keeps every sweep's stores. */
HW_BENCH static void hw_triad_chunk(struct hw_triad *t, long lo, long hi, long reps, float s)
{
  float *restrict a = t->a;
  const float *restrict b = t->b, *restrict c = t->c;
  long i, r;

  for (r = 0; r < reps; r++) {
    for (i = lo; i < hi; i++)
      a[i] = b[i] + s * c[i];
    __asm__ __volatile__("" : : "r"(a) : "memory");
  }
}

/* Seconds for nt threads to sweep the first n elements reps times. */
static double hw_triad_time(struct hw_triad *t, long n, long reps, float s, int nt)
{
  double t0 = kope_now();

#pragma omp parallel num_threads(nt)
  {
    long id = omp_get_thread_num(), k = omp_get_num_threads();

    hw_triad_chunk(t, n * id / k, n * (id + 1) / k, reps, s);
  }
  return kope_now() - t0;
}

/* Sweeps of one thread's chunk of the first n elements (n / nt) that take
 * about HW_LEVEL_REP_S on one thread. Calibrated alone, so a thread the
 * shared machine delays during calibration cannot shrink the count. */
static long hw_triad_reps(struct hw_triad *t, long n, int nt)
{
  long reps = 1, chunk = n / nt > 0 ? n / nt : 1;

  while (hw_triad_time(t, chunk, reps, 1.5f, 1) < HW_LEVEL_REP_S && reps < (1L << 30))
    reps *= 2;
  return reps;
}

/* Best GB/s of a few timed repetitions over the first n elements; a cache
 * level (calibrate) sweeps hw_triad_reps times per repetition. */
static double hw_triad_rate(struct hw_triad *t, long n, int nt, int calibrate)
{
  long reps = calibrate ? hw_triad_reps(t, n, nt) : 1;
  double secs, best = 0.0, bytes = 3.0 * sizeof(float) * (double)n * (double)reps;
  int r, nrep = calibrate ? HW_LEVEL_REPS : HW_TRIAD_REPS;

  for (r = 0; r < nrep; r++) {
    secs = hw_triad_time(t, n, reps, 3.0f + (float)r, nt);
    if (secs > 0 && bytes / secs > best)
      best = bytes / secs;
  }
  hw_sink = t->a[0] + t->a[n / 2] + t->a[n - 1];
  return best / 1e9;
}

/* Elements per array for a cache level's working set: the three arrays
 * fill half of the level (per core for L1 and L2, shared for L3); 0 when
 * the level's size is unknown. */
static long hw_level_elems(const kope_hw *hw, int lv, int cores, long max)
{
  double ws;
  long n;

  if (hw->cache[lv] <= 0)
    return 0;
  ws = (double)hw->cache[lv] / 2.0 * (lv < 3 ? cores : 1);
  n = (long)(ws / (3.0 * sizeof(float))) & ~15L;
  return n < 64 ? 0 : n > max ? max : n;
}

int kope_hw_bench_cores(const kope_hw *hw)
{
  int nt = hw->bench_threads > 0 ? hw->bench_threads : hw->threads;

  return hw->cores > 0 && hw->cores < nt ? hw->cores : nt;
}

int kope_hw_measure_levels(kope_hw *hw, int nt)
{
  struct hw_triad t = {0};
  long n;
  int lv;

  memset(hw->bw, 0, sizeof hw->bw);
  if (hw_triad_alloc(&t, hw_triad_bytes(hw)) != 0)
    return -1;
  hw_triad_init(&t, nt);
  for (lv = 1; lv <= 3; lv++) {
    if ((n = hw_level_elems(hw, lv, kope_hw_bench_cores(hw), t.n)) > 0)
      hw->bw[lv][HW_ALL] = hw_triad_rate(&t, n, nt, 1);
    if ((n = hw_level_elems(hw, lv, 1, t.n)) > 0)
      hw->bw[lv][HW_ONE] = hw_triad_rate(&t, n, 1, 1);
  }
  hw->bw[HW_DRAM][HW_ALL] = hw_triad_rate(&t, t.n, nt, 0);
  hw->bw[HW_DRAM][HW_ONE] = hw_triad_rate(&t, t.n, 1, 0);
  hw->bandwidth_gbs = hw->bw[HW_DRAM][HW_ALL];
  hw_triad_release(&t);
  return 0;
}
