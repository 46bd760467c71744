/*
 * softmax_cross_entropy — trusted reference, one loss per row.
 *
 *   lse_r   = m_r + log(sum_j exp(l[r][j] - m_r)),  m_r = max_j l[r][j]
 *   loss[r] = sum_j labels[r][j] * (lse_r - l[r][j])
 *
 * Everything after reading the inputs is in double; the only fp32
 * rounding is the final conversion of each loss.
 */
#include <math.h>
#include <stdint.h>

void softmax_cross_entropy(const float *logits, const float *labels,
                           float *loss, int64_t rows, int64_t classes)
{
    for (int64_t r = 0; r < rows; r++) {
        const float *l = logits + r * classes;
        const float *p = labels + r * classes;
        double m = l[0];
        for (int64_t j = 1; j < classes; j++)
            if (l[j] > m)
                m = l[j];
        double s = 0.0;
        for (int64_t j = 0; j < classes; j++)
            s += exp((double)l[j] - m);
        const double lse = m + log(s);
        double acc = 0.0;
        for (int64_t j = 0; j < classes; j++)
            acc += (double)p[j] * (lse - (double)l[j]);
        loss[r] = (float)acc;
    }
}
