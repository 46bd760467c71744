/* roles — reference: y = 2x (exact in fp32). */
#include <stdint.h>

void roles(const float *x, float *y, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        y[i] = 2.0f * x[i];
}
