/*
 * gelu — trusted reference (plain C, double precision).
 *
 * Each element is computed in double from the fp32 input and rounded once
 * to fp32, so the reference's own error is far below any fp32 kernel's.
 * See op.json's description for the exact definition.
 */
#include <math.h>
#include <stdint.h>

static double gelu_ref(float xf)
{
    double v = xf;
    return 0.5 * v * erfc(-v * 0.70710678118654752440);
}

void gelu(const float *x, float *y, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        y[i] = (float)gelu_ref(x[i]);
}
