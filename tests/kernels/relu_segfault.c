/* Test kernel: stores to an unmapped address. Expected: crash (SIGSEGV). */
#include <stdint.h>
void relu(const float *x, float *y, int64_t n)
{
  volatile uintptr_t addr = 16;
  (void)x;
  (void)y;
  *(volatile float *)addr = (float)n;
}
