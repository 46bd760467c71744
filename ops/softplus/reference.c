/*
 * softplus — trusted reference (plain C, double precision).
 *
 * Each element is computed in double from the fp32 input and rounded once
 * to fp32, so the reference's own error is far below any fp32 kernel's.
 * See op.json's description for the exact definition.
 */
#include <math.h>
#include <stdint.h>

static double softplus_ref(float xf, float beta, float threshold)
{
    double v = xf;
    float b = xf * beta;
    if (b > threshold)
        return v;
    return log1p(exp((double)b)) / (double)beta;
}

void softplus(const float *x, float *y, int64_t n, float beta, float threshold)
{
    for (int64_t i = 0; i < n; i++)
        y[i] = (float)softplus_ref(x[i], beta, threshold);
}
