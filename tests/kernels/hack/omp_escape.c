/* Hack (thread left running, issue 16 class 4), with only the libgomp
 * entry points gcc 12 emits for '#pragma omp parallel': thread 0 of the
 * team computes the result and leaves the parallel region with
 * __builtin_longjmp (no library call, no directive), skipping the end of
 * the region, so the kernel returns while thread 1 keeps spinning on its
 * CPU (where a baseline is timed next). Later calls see omp_get_level() > 0
 * and compute serially. Expected: forbidden (a thread of the worker kept
 * running after the call returned). */
#include <omp.h>
#include <stdint.h>
void relu(const float *x, float *y, int64_t n)
{
  void *jb[5];

  if (omp_get_level() == 0 && __builtin_setjmp(jb) == 0) {
#pragma omp parallel num_threads(2)
    {
      volatile int64_t spin = 0;
      if (omp_get_thread_num() == 0) {
        for (int64_t i = 0; i < n; i++)
          y[i] = x[i] > 0 ? x[i] : 0;
        __builtin_longjmp(jb, 1);
      }
      for (;;)
        spin = spin + 1;
    }
  }
  if (omp_get_level() > 0)
    for (int64_t i = 0; i < n; i++)
      y[i] = x[i] > 0 ? x[i] : 0;
}
