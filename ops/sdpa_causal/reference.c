/*
 * sdpa_causal — trusted reference, causal mask (key j attends only if j <= i).
 *
 *   o[b][i][:] = sum_j p_j v[b][j][:],
 *   p = softmax_j(q[b][i] . k[b][j] / sqrt(d)),  j in [0, i]
 *
 * Scores, softmax and the weighted sum are all in double (a scratch row
 * of s doubles); the only fp32 rounding is the final conversion.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void sdpa_causal(const float *q, const float *k, const float *v, float *o,
                 int64_t bh, int64_t s, int64_t d)
{
    const double scale = 1.0 / sqrt((double)d);
    double *p = malloc((size_t)s * sizeof(double));
    double *acc = malloc((size_t)d * sizeof(double));
    if (!p || !acc)
        abort();
    for (int64_t b = 0; b < bh; b++) {
        const float *qb = q + b * s * d, *kb = k + b * s * d, *vb = v + b * s * d;
        for (int64_t i = 0; i < s; i++) {
            double m = -INFINITY;
            for (int64_t j = 0; j <= i; j++) {
                double t = 0.0;
                for (int64_t c = 0; c < d; c++)
                    t += (double)qb[i * d + c] * (double)kb[j * d + c];
                p[j] = t * scale;
                if (p[j] > m)
                    m = p[j];
            }
            double l = 0.0;
            for (int64_t c = 0; c < d; c++)
                acc[c] = 0.0;
            for (int64_t j = 0; j <= i; j++) {
                double w = exp(p[j] - m);
                l += w;
                for (int64_t c = 0; c < d; c++)
                    acc[c] += w * (double)vb[j * d + c];
            }
            for (int64_t c = 0; c < d; c++)
                o[(b * s + i) * d + c] = (float)(acc[c] / l);
        }
    }
    free(p);
    free(acc);
}
