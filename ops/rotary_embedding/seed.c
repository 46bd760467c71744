/*
 * rotary_embedding — seed kernel (HF apply_rotary_pos_emb, rotate_half):
 *   y[s][h][j] = x[s][h][j]*cos_t[s][j] + r[j]*sin_t[s][j],
 *   r = (-x[half..dim), x[0..half))
 *
 * Each head vector is processed as two halves (j < half and j >= half),
 * so there is no branch in the inner loops and both vectorize (omp simd
 * when SIMD); FMA 1 writes the two products as one fmaf plus a product.
 * The (token, head) vectors are the OpenMP work items, CHUNK per item,
 * when PARALLEL and the tensor has at least PAR_MIN elements. Every
 * combination of knob values is correct to the spec's tolerance.
 */
#include <math.h>
#include <stdint.h>

#define PARALLEL 1     // @knob layer=parallel values=0,1 "distribute (token, head) vectors across OpenMP threads"
#define PAR_MIN 32768  // @knob layer=parallel values=4096,32768,262144 "fewest elements worth an OpenMP region"
#define CHUNK 8        // @knob layer=tiling values=1,8,64 "(token, head) vectors per OpenMP work item"
#define SIMD 1         // @knob layer=vectorize values=0,1 "omp simd on the two half loops"
#define FMA 0          // @knob layer=instruction values=0,1 "1 fuse one product and the add with fmaf"

#define ROPE_PRAGMA_(x) _Pragma(#x)
#define ROPE_PRAGMA(x) ROPE_PRAGMA_(x)
#if SIMD
#define ROPE_SIMD(clauses) ROPE_PRAGMA(omp simd clauses)
#else
#define ROPE_SIMD(clauses)
#endif

#if FMA
#define ROPE_MIX(a, c, b, s) fmaf((a), (c), (b) * (s))
#else
#define ROPE_MIX(a, c, b, s) ((a) * (c) + (b) * (s))
#endif

static void rope_vec(const float *restrict xv, const float *restrict c,
                     const float *restrict sn, float *restrict yv,
                     int64_t half)
{
    ROPE_SIMD()
    for (int64_t j = 0; j < half; j++)
        yv[j] = ROPE_MIX(xv[j], c[j], -xv[j + half], sn[j]);
    ROPE_SIMD()
    for (int64_t j = 0; j < half; j++)
        yv[half + j] = ROPE_MIX(xv[half + j], c[half + j], xv[j], sn[half + j]);
}

void rotary_embedding(const float *x, const float *cos_t, const float *sin_t,
                      float *y, int64_t seq, int64_t heads, int64_t half)
{
    const int64_t dim = 2 * half, nv = seq * heads;
    if (PARALLEL && nv > 1 && nv * dim >= PAR_MIN) {
#pragma omp parallel for schedule(static, CHUNK)
        for (int64_t v = 0; v < nv; v++) {
            const int64_t s = v / heads;
            rope_vec(x + v * dim, cos_t + s * dim, sin_t + s * dim, y + v * dim, half);
        }
    } else {
        for (int64_t v = 0; v < nv; v++) {
            const int64_t s = v / heads;
            rope_vec(x + v * dim, cos_t + s * dim, sin_t + s * dim, y + v * dim, half);
        }
    }
}
