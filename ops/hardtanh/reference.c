/*
 * hardtanh — trusted reference (plain C, double precision).
 *
 * Each element is computed in double from the fp32 input and rounded once
 * to fp32, so the reference's own error is far below any fp32 kernel's.
 * See op.json's description for the exact definition.
 */
#include <math.h>
#include <stdint.h>

static double hardtanh_ref(float xf, float min_val, float max_val)
{
    double v = xf;
    if (v < (double)min_val)
        return min_val;
    if (v > (double)max_val)
        return max_val;
    return v;
}

void hardtanh(const float *x, float *y, int64_t n, float min_val, float max_val)
{
    for (int64_t i = 0; i < n; i++)
        y[i] = (float)hardtanh_ref(x[i], min_val, max_val);
}
