/*
 * cross_entropy — trusted reference (torch CrossEntropyLoss, mean).
 *
 *   y[0] = (1/rows) * sum_r (m_r + log(sum_j exp(l[r][j] - m_r)) - l[r][t_r])
 *
 * with m_r = max_j l[r][j]. Everything after reading the logits is in
 * double; the only fp32 rounding is the final conversion.
 */
#include <math.h>
#include <stdint.h>

void cross_entropy(const float *logits, const int64_t *target, float *y,
                   int64_t rows, int64_t classes)
{
    double total = 0.0;
    for (int64_t r = 0; r < rows; r++) {
        const float *l = logits + r * classes;
        double m = l[0];
        for (int64_t j = 1; j < classes; j++)
            if (l[j] > m)
                m = l[j];
        double s = 0.0;
        for (int64_t j = 0; j < classes; j++)
            s += exp((double)l[j] - m);
        total += m + log(s) - (double)l[target[r]];
    }
    y[0] = (float)(total / (double)rows);
}
