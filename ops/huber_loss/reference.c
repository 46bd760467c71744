/*
 * huber_loss — trusted reference (torch.nn.HuberLoss, reduction 'mean').
 *
 *   d = pred[i] - target[i]
 *   l_i = 0.5 * d^2                 if |d| < delta
 *       = delta * (|d| - 0.5*delta)  otherwise
 *   y[0] = (1/n) * sum_i l_i
 *
 * Everything is computed in double; the only fp32 rounding is the final
 * conversion.
 */
#include <math.h>
#include <stdint.h>

void huber_loss(const float *pred, const float *target, float *y, int64_t n,
                float delta)
{
    const double dl = (double)delta;
    double s = 0.0;
    for (int64_t i = 0; i < n; i++) {
        double a = fabs((double)pred[i] - (double)target[i]);
        s += a < dl ? 0.5 * a * a : dl * (a - 0.5 * dl);
    }
    y[0] = (float)(s / (double)n);
}
