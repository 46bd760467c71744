/*
 * kl_div — trusted reference (torch kl_div, reduction 'batchmean').
 *
 *   y[0] = (1/rows) * sum_{r,j} t * (log t - log_pred),  t = target[r][j]
 *
 * with a term of t == 0 counted as 0 (torch's xlogy convention). The log
 * and the sum are in double; the only fp32 rounding is the final
 * conversion.
 */
#include <math.h>
#include <stdint.h>

void kl_div(const float *log_pred, const float *target, float *y, int64_t rows,
            int64_t cols)
{
    double s = 0.0;
    for (int64_t i = 0; i < rows * cols; i++) {
        double t = target[i];
        if (t > 0.0)
            s += t * (log(t) - (double)log_pred[i]);
    }
    y[0] = (float)(s / (double)rows);
}
