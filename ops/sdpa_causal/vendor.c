/*
 * sdpa_causal — vendor baseline built on OpenBLAS: per slice b, two
 * cblas_sgemm calls around a plain C masked softmax, which is how a
 * framework without a fused attention kernel computes it (the full score
 * matrix is computed and the upper triangle masked):
 *
 *   S = (1/sqrt(d)) * Q K^T          sgemm, [s x s], K transposed in place
 *   P = softmax over j <= i of row i  C loop, in place, P[i][j > i] = 0
 *   O = P V                          sgemm, [s x d]
 *
 * The [s x s] score buffer is the only state; it is kept in a static
 * buffer reallocated when a larger s is seen (freed never: a baseline
 * process lives for one evaluation). OpenBLAS threads each sgemm itself;
 * the softmax rows are split across OpenMP threads. An allocation
 * failure aborts with a message.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cblas.h>

static float *sdpa_scores;
static int64_t sdpa_cap;

static float *sdpa_buffer(int64_t s)
{
    if (s * s > sdpa_cap) {
        free(sdpa_scores);
        sdpa_scores = malloc((size_t)(s * s) * sizeof(float));
        if (!sdpa_scores) {
            fprintf(stderr, "sdpa_causal vendor: out of memory for %lld scores\n",
                    (long long)(s * s));
            abort();
        }
        sdpa_cap = s * s;
    }
    return sdpa_scores;
}

static void sdpa_softmax_rows(float *p, int64_t s)
{
#pragma omp parallel for schedule(static) if (s >= 64)
    for (int64_t i = 0; i < s; i++) {
        float *r = p + i * s;
        float m = r[0], l = 0.0f;
        for (int64_t j = 1; j <= i; j++)
            m = r[j] > m ? r[j] : m;
        for (int64_t j = 0; j <= i; j++) {
            r[j] = expf(r[j] - m);
            l += r[j];
        }
        const float inv = 1.0f / l;
        for (int64_t j = 0; j <= i; j++)
            r[j] *= inv;
        for (int64_t j = i + 1; j < s; j++)
            r[j] = 0.0f;
    }
}

void sdpa_causal(const float *q, const float *k, const float *v, float *o,
                 int64_t bh, int64_t s, int64_t d)
{
    const float scale = 1.0f / sqrtf((float)d);
    float *p = sdpa_buffer(s);
    const blasint S = (blasint)s, D = (blasint)d;
    for (int64_t b = 0; b < bh; b++) {
        const int64_t off = b * s * d;
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, S, S, D, scale,
                    q + off, D, k + off, D, 0.0f, p, S);
        sdpa_softmax_rows(p, s);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, S, D, S, 1.0f,
                    p, S, v + off, D, 0.0f, o + off, D);
    }
}
