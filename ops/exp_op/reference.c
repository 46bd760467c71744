/*
 * exp_op — trusted reference (plain C, double precision).
 *
 * Each element is computed in double from the fp32 input and rounded once
 * to fp32, so the reference's own error is far below any fp32 kernel's.
 * See op.json's description for the exact definition.
 */
#include <math.h>
#include <stdint.h>

static double exp_op_ref(float xf)
{
    double v = xf;
    return exp(v);
}

void exp_op(const float *x, float *y, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        y[i] = (float)exp_op_ref(x[i]);
}
