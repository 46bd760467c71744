/* Hack (thread left running): the old libgomp ABI starts a team with
 * GOMP_parallel_start and never calls GOMP_parallel_end, so a thread
 * keeps running after the kernel returns (it could load the core the
 * baseline is timed on next). Expected: forbidden (symbol). */
void GOMP_parallel_start(void (*fn)(void *), void *data, unsigned nthreads);
static void spin(void *d)
{
  volatile long *k = d;
  for (long i = 0; i < 2000000000L; i++)
    k[0] += i;
}

void relu(const float *x, float *y, int64_t n)
{
  long sink = 0;
  GOMP_parallel_start(spin, (void *)&sink, 2);
  for (int64_t i = 0; i < n; i++)
    y[i] = x[i] > 0 ? x[i] : 0;
}
