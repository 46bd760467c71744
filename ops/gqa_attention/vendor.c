/*
 * gqa_attention — vendor baseline built on OpenBLAS. The group query
 * heads that share key/value head g are contiguous in q (heads
 * g*group .. g*group+group-1), so per (batch, kv head) they form one
 * [group*s x d] matrix Q_g, and two cblas_sgemm calls around a plain C
 * softmax do the work, as a framework without a fused kernel would:
 *
 *   S = (1/sqrt(d)) * Q_g K^T          sgemm, [group*s x s]
 *   P = softmax over each row of S     C loop, in place, max subtracted
 *   O_g = P V                          sgemm, [group*s x d], into o
 *
 * The score buffer is the only state: a static buffer reallocated when a
 * larger one is needed (never freed: a baseline process lives for one
 * evaluation). OpenBLAS threads each sgemm; the softmax rows are split
 * across OpenMP threads. An allocation failure aborts with a message.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cblas.h>

static float *gqa_scores;
static int64_t gqa_cap;

static float *gqa_buffer(int64_t count)
{
    if (count > gqa_cap) {
        free(gqa_scores);
        gqa_scores = malloc((size_t)count * sizeof(float));
        if (!gqa_scores) {
            fprintf(stderr, "gqa_attention vendor: out of memory for %lld scores\n",
                    (long long)count);
            abort();
        }
        gqa_cap = count;
    }
    return gqa_scores;
}

static void gqa_softmax_rows(float *p, int64_t rows, int64_t cols)
{
#pragma omp parallel for schedule(static) if (rows * cols >= 4096)
    for (int64_t i = 0; i < rows; i++) {
        float *r = p + i * cols;
        float m = r[0], l = 0.0f;
        for (int64_t j = 1; j < cols; j++)
            m = r[j] > m ? r[j] : m;
        for (int64_t j = 0; j < cols; j++) {
            r[j] = expf(r[j] - m);
            l += r[j];
        }
        const float inv = 1.0f / l;
        for (int64_t j = 0; j < cols; j++)
            r[j] *= inv;
    }
}

void gqa_attention(const float *q, const float *k, const float *v, float *o,
                   int64_t b, int64_t hkv, int64_t group, int64_t s,
                   int64_t d)
{
    const float scale = 1.0f / sqrtf((float)d);
    const int64_t gs = group * s;
    float *p = gqa_buffer(gs * s);
    const blasint S = (blasint)s, D = (blasint)d, GS = (blasint)gs;
    for (int64_t n = 0; n < b; n++) {
        for (int64_t g = 0; g < hkv; g++) {
            const int64_t kv = (n * hkv + g) * s * d;
            const int64_t qo = (n * hkv + g) * gs * d;
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, GS, S, D,
                        scale, q + qo, D, k + kv, D, 0.0f, p, S);
            gqa_softmax_rows(p, gs, s);
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, GS, D, S,
                        1.0f, p, S, v + kv, D, 0.0f, o + qo, D);
        }
    }
}
