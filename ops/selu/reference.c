/*
 * selu — trusted reference (plain C, double precision).
 *
 * Each element is computed in double from the fp32 input and rounded once
 * to fp32, so the reference's own error is far below any fp32 kernel's.
 * See op.json's description for the exact definition.
 */
#include <math.h>
#include <stdint.h>

static double selu_ref(float xf)
{
    double v = xf;
    return 1.0507009873554804934193349852946 *
           (v > 0 ? v : 1.6732632423543772848170429916717 * expm1(v));
}

void selu(const float *x, float *y, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        y[i] = (float)selu_ref(x[i]);
}
