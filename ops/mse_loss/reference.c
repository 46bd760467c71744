/*
 * mse_loss — trusted reference.
 *
 *   y[0] = (1/n) * sum_i (pred[i] - target[i])^2
 *
 * The differences, squares and the sum are in double, so the only fp32
 * rounding is the final conversion.
 */
#include <stdint.h>

void mse_loss(const float *pred, const float *target, float *y, int64_t n)
{
    double s = 0.0;
    for (int64_t i = 0; i < n; i++) {
        double d = (double)pred[i] - (double)target[i];
        s += d * d;
    }
    y[0] = (float)(s / (double)n);
}
