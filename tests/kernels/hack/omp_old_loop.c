/* Hack (thread left running): the old ABI's combined parallel loop start,
 * again without its end. Expected: forbidden (symbol). */
void GOMP_parallel_loop_static_start(void (*fn)(void *), void *data, unsigned nthreads,
                                     long start, long end, long incr, long chunk);
static void work(void *d) { (void)d; for (volatile long i = 0; i < 100000000L; i++) {} }
void relu(const float *x, float *y, int64_t n)
{
  GOMP_parallel_loop_static_start(work, (void *)0, 2, 0, 1, 1, 1);
  for (int64_t i = 0; i < n; i++)
    y[i] = x[i] > 0 ? x[i] : 0;
}
