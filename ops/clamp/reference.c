/*
 * clamp — trusted reference (plain C, double precision).
 *
 * Each element is computed in double from the fp32 input and rounded once
 * to fp32, so the reference's own error is far below any fp32 kernel's.
 * See op.json's description for the exact definition.
 */
#include <math.h>
#include <stdint.h>

static double clamp_ref(float xf, float lo, float hi)
{
    double v = xf;
    if (v < (double)lo)
        return lo;
    if (v > (double)hi)
        return hi;
    return v;
}

void clamp(const float *x, float *y, int64_t n, float lo, float hi)
{
    for (int64_t i = 0; i < n; i++)
        y[i] = (float)clamp_ref(x[i], lo, hi);
}
