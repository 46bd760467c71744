/* scale2 in one pass (the seed makes eight), with a knob for the tuner. */
#include <stdint.h>

#define UNROLL 1   // @knob layer=instruction values=1,4 "elements per loop iteration"

void scale2(const float *x, float *y, int64_t n)
{
    int64_t i = 0;
#if UNROLL == 4
    for (; i + 4 <= n; i += 4) {
        y[i] = 2.0f * x[i];
        y[i + 1] = 2.0f * x[i + 1];
        y[i + 2] = 2.0f * x[i + 2];
        y[i + 3] = 2.0f * x[i + 3];
    }
#endif
    for (; i < n; i++)
        y[i] = 2.0f * x[i];
}
