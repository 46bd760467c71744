/*
 * hinge_loss — trusted reference.
 *
 *   y[0] = (1/n) * sum_i max(0, 1 - pred[i] * target[i])
 *
 * The product, the clamp and the sum are in double; the only fp32
 * rounding is the final conversion.
 */
#include <stdint.h>

void hinge_loss(const float *pred, const float *target, float *y, int64_t n)
{
    double s = 0.0;
    for (int64_t i = 0; i < n; i++) {
        double m = 1.0 - (double)pred[i] * (double)target[i];
        s += m > 0.0 ? m : 0.0;
    }
    y[0] = (float)(s / (double)n);
}
