/* Hack: a constructor runs before kope's runtime has set anything up (it
 * could open files, start threads or warm a cache). Expected: forbidden
 * (constructor). */
#include <stdlib.h>
__attribute__((constructor)) static void early(void)
{
  abort();
}
void relu(const float *x, float *y, int64_t n)
{
  for (int64_t i = 0; i < n; i++)
    y[i] = x[i] > 0 ? x[i] : 0;
}
