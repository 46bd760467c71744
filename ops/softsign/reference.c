/*
 * softsign — trusted reference (plain C, double precision).
 *
 * Each element is computed in double from the fp32 input and rounded once
 * to fp32, so the reference's own error is far below any fp32 kernel's.
 * See op.json's description for the exact definition.
 */
#include <math.h>
#include <stdint.h>

static double softsign_ref(float xf)
{
    double v = xf;
    return v / (1.0 + fabs(v));
}

void softsign(const float *x, float *y, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        y[i] = (float)softsign_ref(x[i]);
}
