/* Test kernel: copies its input. Expected: incorrect. */
#include <string.h>
void relu(const float *x, float *y, int64_t n)
{
  memcpy(y, x, (size_t)n * sizeof *x);
}
