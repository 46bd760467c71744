/* ident — seed: a plain copy. */
#include <stdint.h>

#define PARALLEL 0   // @knob layer=parallel values=0,1 "split across OpenMP threads"

void ident(const float *x, float *y, int64_t n)
{
#pragma omp parallel for if (PARALLEL)
    for (int64_t i = 0; i < n; i++)
        y[i] = x[i];
}
