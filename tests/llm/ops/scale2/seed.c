/*
 * scale2 — seed for the optimizer's tests. REPEAT 8 recomputes the output
 * eight times (a deliberate 8x slowdown the tuner must find), NOOP is a
 * knob nothing uses (a correct candidate that is not faster), BUG 1 writes
 * a wrong last element (a candidate that must never be promoted).
 */
#include <stdint.h>

#define REPEAT 8   // @knob layer=algorithm values=1,8 "passes over the data"
#define NOOP 0     // @knob layer=instruction values=0,1 "changes nothing"
#define BUG 0      // @knob layer=memory values=0,1 "1 writes a wrong last element"

void scale2(const float *x, float *y, int64_t n)
{
    for (int r = 0; r < REPEAT; r++) {
        for (int64_t i = 0; i < n; i++)
            y[i] = 2.0f * x[i];
        __asm__ volatile("" ::: "memory");   /* keep every pass */
    }
#if BUG
    y[n - 1] = 0.5f;
#endif
}
