/* roles: one pass on the perf cases, 20000 passes on the 7-element check
 * case (thousands of times slower there; check cases are never timed). */
#include <stdint.h>

void roles(const float *x, float *y, int64_t n)
{
    int passes = n > 7 ? 1 : 20000;

    for (int r = 0; r < passes; r++) {
        for (int64_t i = 0; i < n; i++)
            y[i] = 2.0f * x[i];
        __asm__ volatile("" ::: "memory");
    }
}
