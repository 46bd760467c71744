/*
 * leaky_relu — trusted reference (plain C, double precision).
 *
 * Each element is computed in double from the fp32 input and rounded once
 * to fp32, so the reference's own error is far below any fp32 kernel's.
 * See op.json's description for the exact definition.
 */
#include <math.h>
#include <stdint.h>

static double leaky_relu_ref(float xf, float negative_slope)
{
    double v = xf;
    return v > 0 ? v : v * (double)negative_slope;
}

void leaky_relu(const float *x, float *y, int64_t n, float negative_slope)
{
    for (int64_t i = 0; i < n; i++)
        y[i] = (float)leaky_relu_ref(x[i], negative_slope);
}
