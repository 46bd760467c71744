/*
 * roles — seed for the case-role tests. FAST 1 makes one pass over the
 * data on the perf-sized cases (the seed makes 32) but 20000 passes on
 * the 7-element check case, thousands of times slower there: since check
 * cases are never timed, FAST 1 must be promoted.
 */
#include <stdint.h>

#define FAST 0   // @knob layer=algorithm values=0,1 "1: one pass on large inputs, many on tiny ones"

void roles(const float *x, float *y, int64_t n)
{
    int passes = n > 7 ? (FAST ? 1 : 32) : (FAST ? 20000 : 1);

    for (int r = 0; r < passes; r++) {
        for (int64_t i = 0; i < n; i++)
            y[i] = 2.0f * x[i];
        __asm__ volatile("" ::: "memory");   /* keep every pass */
    }
}
