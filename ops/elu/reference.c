/*
 * elu — trusted reference (plain C, double precision).
 *
 * Each element is computed in double from the fp32 input and rounded once
 * to fp32, so the reference's own error is far below any fp32 kernel's.
 * See op.json's description for the exact definition.
 */
#include <math.h>
#include <stdint.h>

static double elu_ref(float xf, float alpha)
{
    double v = xf;
    return v > 0 ? v : (double)alpha * expm1(v);
}

void elu(const float *x, float *y, int64_t n, float alpha)
{
    for (int64_t i = 0; i < n; i++)
        y[i] = (float)elu_ref(x[i], alpha);
}
