/* Hack: switch on flush-to-zero / denormals-are-zero and round toward
 * zero for speed and leave them on for everything that runs after.
 * Expected: incorrect (floating-point control state changed). */
#include <immintrin.h>
void relu(const float *x, float *y, int64_t n)
{
  _mm_setcsr(_mm_getcsr() | 0x8040 | 0x6000);
  for (int64_t i = 0; i < n; i++)
    y[i] = x[i] > 0 ? x[i] : 0;
}
