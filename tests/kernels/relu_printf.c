/* Test kernel: correct but chatty (prints on the small cases); output is
 * captured, never a failure. Expected: correct. */
#include <stdio.h>
void relu(const float *x, float *y, int64_t n)
{
  if (n < 8)
    fprintf(stderr, "hello from the kernel (n=%lld)\n", (long long)n);
  for (int64_t i = 0; i < n; i++)
    y[i] = x[i] > 0 ? x[i] : 0;
}
