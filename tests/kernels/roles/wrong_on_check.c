/* roles: correct on the perf cases, a wrong element on the 7-element check
 * case only. */
#include <stdint.h>

void roles(const float *x, float *y, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        y[i] = 2.0f * x[i];
    if (n == 7)
        y[3] = -y[3] + 1.0f;
}
