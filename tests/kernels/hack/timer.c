/* Hack: interpose the clock so any timer in the worker sees a call take no
 * time. Expected: forbidden (a global symbol other than the entry point). */
struct timespec { long tv_sec, tv_nsec; };
int clock_gettime(int clk, struct timespec *ts)
{
  (void)clk;
  ts->tv_sec = 0;
  ts->tv_nsec = 0;
  return 0;
}
void relu(const float *x, float *y, int64_t n)
{
  for (int64_t i = 0; i < n; i++)
    y[i] = x[i] > 0 ? x[i] : 0;
}
