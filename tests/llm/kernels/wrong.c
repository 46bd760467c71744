/* scale2, as an LLM might get it wrong: the last element is dropped. */
#include <stdint.h>

void scale2(const float *x, float *y, int64_t n)
{
    for (int64_t i = 0; i + 1 < n; i++)
        y[i] = 2.0f * x[i];
}
