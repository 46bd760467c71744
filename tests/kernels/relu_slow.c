/* Test kernel: correct, but repeats its work 2000 times on inputs below a
 * million elements. Expected: correct, with a speedup far below 1 there. */
void relu(const float *x, float *y, int64_t n)
{
  int reps = n < 1000000 ? 2000 : 1;
  for (int r = 0; r < reps; r++) {
    for (int64_t i = 0; i < n; i++)
      y[i] = x[i] > 0 ? x[i] : 0;
    __asm__ volatile("" : : "r"(y) : "memory");
  }
}
