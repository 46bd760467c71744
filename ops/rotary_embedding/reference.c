/*
 * rotary_embedding — trusted reference (HF apply_rotary_pos_emb).
 *
 *   y[s][h][j] = x[s][h][j] * cos_t[s][j] + r[j] * sin_t[s][j]
 *   r[j] = -x[s][h][j + half]   (j <  half)
 *        =  x[s][h][j - half]   (j >= half)
 *
 * Both products and the sum are in double; the only fp32 rounding is the
 * final conversion.
 */
#include <stdint.h>

void rotary_embedding(const float *x, const float *cos_t, const float *sin_t,
                      float *y, int64_t seq, int64_t heads, int64_t half)
{
    const int64_t dim = 2 * half;
    for (int64_t s = 0; s < seq; s++) {
        const float *c = cos_t + s * dim;
        const float *sn = sin_t + s * dim;
        for (int64_t h = 0; h < heads; h++) {
            const float *xv = x + (s * heads + h) * dim;
            float *yv = y + (s * heads + h) * dim;
            for (int64_t j = 0; j < dim; j++) {
                double r = j < half ? -(double)xv[j + half] : (double)xv[j - half];
                yv[j] = (float)((double)xv[j] * c[j] + r * sn[j]);
            }
        }
    }
}
