/*
 * gelu_tanh — trusted reference (plain C, double precision).
 *
 * Each element is computed in double from the fp32 input and rounded once
 * to fp32, so the reference's own error is far below any fp32 kernel's.
 * See op.json's description for the exact definition.
 */
#include <math.h>
#include <stdint.h>

static double gelu_tanh_ref(float xf)
{
    double v = xf;
    double z = 0.79788456080286535588 * (v + 0.044715 * v * v * v);
    return v / (1.0 + exp(-2.0 * z));
}

void gelu_tanh(const float *x, float *y, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        y[i] = (float)gelu_tanh_ref(x[i]);
}
