/*
 * gqa_attention — trusted reference, grouped-query attention, no mask.
 *
 * Query head h (of hq = hkv*group) of batch n reads key/value head
 * h / group:
 *   o[n][h][i][:] = sum_j p_j v[n][h/group][j][:],
 *   p = softmax_j(q[n][h][i] . k[n][h/group][j] / sqrt(d)),  j in [0, s)
 *
 * Scores, softmax and the weighted sum are in double (a scratch row of s
 * doubles); the only fp32 rounding is the final conversion.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void gqa_attention(const float *q, const float *k, const float *v, float *o,
                   int64_t b, int64_t hkv, int64_t group, int64_t s,
                   int64_t d)
{
    const int64_t hq = hkv * group;
    const double scale = 1.0 / sqrt((double)d);
    double *p = malloc((size_t)s * sizeof(double));
    double *acc = malloc((size_t)d * sizeof(double));
    if (!p || !acc)
        abort();
    for (int64_t n = 0; n < b; n++) {
        for (int64_t h = 0; h < hq; h++) {
            const float *qh = q + (n * hq + h) * s * d;
            const float *kh = k + (n * hkv + h / group) * s * d;
            const float *vh = v + (n * hkv + h / group) * s * d;
            float *oh = o + (n * hq + h) * s * d;
            for (int64_t i = 0; i < s; i++) {
                double m = -INFINITY;
                for (int64_t j = 0; j < s; j++) {
                    double t = 0.0;
                    for (int64_t c = 0; c < d; c++)
                        t += (double)qh[i * d + c] * (double)kh[j * d + c];
                    p[j] = t * scale;
                    if (p[j] > m)
                        m = p[j];
                }
                double l = 0.0;
                for (int64_t c = 0; c < d; c++)
                    acc[c] = 0.0;
                for (int64_t j = 0; j < s; j++) {
                    double w = exp(p[j] - m);
                    l += w;
                    for (int64_t c = 0; c < d; c++)
                        acc[c] += w * (double)vh[j * d + c];
                }
                for (int64_t c = 0; c < d; c++)
                    oh[i * d + c] = (float)(acc[c] / l);
            }
        }
    }
    free(p);
    free(acc);
}
