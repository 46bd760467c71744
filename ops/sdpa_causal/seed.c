/*
 * sdpa_causal — seed kernel, causal mask:
 *   o[b][i] = sum_{j <= i} softmax_j(q[b][i] . k[b][j] / sqrt(d)) v[b][j]
 *
 * One query row at a time; query i sees keys 0..i only. ALGO 0
 * materializes the row of i+1 scores in a scratch buffer (max, exp and
 * sum, then the weighted sum of v rows);
 * ALGO 1 is the online (flash-attention style) form: keys in blocks of
 * BJ, a running maximum, normalizer and output accumulator that are
 * rescaled whenever the maximum grows, so the scratch is BJ scores. Dot
 * products and v updates are omp simd loops when SIMD. Query rows
 * (bh*s of them) are the OpenMP work items, dealt out in chunks of 8 so
 * the triangular work balances, when PARALLEL and bh*s*s*d is at least
 * PAR_MIN; each thread mallocs its own scratch.
 * All arithmetic is fp32; every combination of knob values is correct
 * to the spec's tolerance.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#define PARALLEL 1      // @knob layer=parallel values=0,1 "distribute query rows across OpenMP threads"
#define PAR_MIN 65536   // @knob layer=parallel values=8192,65536,524288 "fewest multiply-adds (bh*s*s*d) worth an OpenMP region"
#define ALGO 0          // @knob layer=algorithm values=0,1 "0 materialize the score row, 1 online softmax over key blocks"
#define BJ 64           // @knob layer=tiling values=16,64,256 "keys per block (ALGO 1)"
#define SIMD 1          // @knob layer=vectorize values=0,1 "omp simd on dot products and v updates"

#define ATTN_PRAGMA_(x) _Pragma(#x)
#define ATTN_PRAGMA(x) ATTN_PRAGMA_(x)
#if SIMD
#define ATTN_SIMD(clauses) ATTN_PRAGMA(omp simd clauses)
#else
#define ATTN_SIMD(clauses)
#endif

static float attn_dot(const float *restrict a, const float *restrict b,
                      int64_t d)
{
    float t = 0.0f;
    ATTN_SIMD(reduction(+ : t))
    for (int64_t c = 0; c < d; c++)
        t += a[c] * b[c];
    return t;
}

static void attn_axpy(float *restrict acc, float w, const float *restrict x,
                      int64_t d)
{
    ATTN_SIMD()
    for (int64_t c = 0; c < d; c++)
        acc[c] += w * x[c];
}

/* o_i = softmax(q_i . k_j * scale, j < nk) v; buf holds max(s, BJ) + d floats. */
static void attn_row(const float *restrict qi, const float *restrict kb,
                     const float *restrict vb, float *restrict oi, int64_t nk,
                     int64_t d, float scale, float *restrict buf)
{
#if ALGO == 0
    float *acc = buf + nk;
    float m = -INFINITY, l = 0.0f;
    for (int64_t j = 0; j < nk; j++) {
        buf[j] = attn_dot(qi, kb + j * d, d) * scale;
        m = buf[j] > m ? buf[j] : m;
    }
    for (int64_t c = 0; c < d; c++)
        acc[c] = 0.0f;
    for (int64_t j = 0; j < nk; j++) {
        const float w = expf(buf[j] - m);
        l += w;
        attn_axpy(acc, w, vb + j * d, d);
    }
#else
    float *acc = buf + BJ;
    float m = -INFINITY, l = 0.0f;
    for (int64_t c = 0; c < d; c++)
        acc[c] = 0.0f;
    for (int64_t j0 = 0; j0 < nk; j0 += BJ) {
        const int64_t jb = nk - j0 < BJ ? nk - j0 : BJ;
        float bm = -INFINITY;
        for (int64_t t = 0; t < jb; t++) {
            buf[t] = attn_dot(qi, kb + (j0 + t) * d, d) * scale;
            bm = buf[t] > bm ? buf[t] : bm;
        }
        if (bm > m) {
            const float corr = expf(m - bm);
            l *= corr;
            ATTN_SIMD()
            for (int64_t c = 0; c < d; c++)
                acc[c] *= corr;
            m = bm;
        }
        for (int64_t t = 0; t < jb; t++) {
            const float w = expf(buf[t] - m);
            l += w;
            attn_axpy(acc, w, vb + (j0 + t) * d, d);
        }
    }
#endif
    const float inv = 1.0f / l;
    ATTN_SIMD()
    for (int64_t c = 0; c < d; c++)
        oi[c] = acc[c] * inv;
}

static float *attn_scratch(int64_t s, int64_t d)
{
    float *buf = malloc((size_t)((s > BJ ? s : BJ) + d) * sizeof(float));
    if (!buf)
        abort();
    return buf;
}

static void attn_one(const float *q, const float *k, const float *v, float *o,
                     int64_t s, int64_t d, float scale, int64_t r,
                     float *buf)
{
    const int64_t b = r / s;
    attn_row(q + r * d, k + b * s * d, v + b * s * d, o + r * d, r % s + 1, d,
             scale, buf);
}

void sdpa_causal(const float *q, const float *k, const float *v, float *o,
                 int64_t bh, int64_t s, int64_t d)
{
    const float scale = 1.0f / sqrtf((float)d);
    const int64_t nrows = bh * s;
    if (PARALLEL && nrows > 1 && nrows * s * d >= PAR_MIN) {
#pragma omp parallel
        {
            float *buf = attn_scratch(s, d);
#pragma omp for schedule(static, 8)
            for (int64_t r = 0; r < nrows; r++)
                attn_one(q, k, v, o, s, d, scale, r, buf);
            free(buf);
        }
    } else {
        float *buf = attn_scratch(s, d);
        for (int64_t r = 0; r < nrows; r++)
            attn_one(q, k, v, o, s, d, scale, r, buf);
        free(buf);
    }
}
