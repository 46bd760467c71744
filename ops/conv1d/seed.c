/*
 * conv1d — seed kernel. NCL 1-D convolution with [cout x cin x kl]
 * weights, bias, stride and zero padding, fp32.
 *
 * Direct convolution. The work items are (image, group of OU output
 * channels, block of OLB output positions) triples, collapsed into one
 * OpenMP loop. A block's outputs are held in a local OU x OLB accumulator
 * array; for every input channel and kernel tap the valid output
 * positions (those whose input position is inside the signal, so the
 * padding costs nothing) receive weight * input in one unit-stride pass
 * over the accumulators (optionally `omp simd`), and each input value
 * loaded feeds OU output channels. The bias is added when the block is
 * stored.
 */
#include <stdint.h>

#define PARALLEL 1   // @knob layer=parallel values=0,1 "distribute (image, channel group, block) items across OpenMP threads"
#define OLB 256      // @knob layer=tiling values=64,256,1024 "output positions per accumulator block"
#define OU 2         // @knob layer=instruction values=1,2,4 "output channels computed together (input reuse)"
#define SIMD 1       // @knob layer=vectorize values=0,1 "omp simd on the position loop"

#define C1_PRAGMA_(x) _Pragma(#x)
#define C1_PRAGMA(x) C1_PRAGMA_(x)
#if SIMD
#define C1_SIMD C1_PRAGMA(omp simd)
#else
#define C1_SIMD
#endif

static int64_t c1_min(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t c1_max(int64_t a, int64_t b) { return a > b ? a : b; }

typedef struct {
    int64_t cin, l, kl, stride, pad, lo;
} c1_shape;

/* Outputs y[o0 .. o0+ou)[t0 .. t1) of one image. */
static void c1_block(const c1_shape *sh, const float *restrict xb,
                     const float *restrict w, const float *restrict bias,
                     float *restrict yb, int64_t o0, int64_t ou, int64_t t0,
                     int64_t t1)
{
    float acc[OU][OLB];
    for (int64_t u = 0; u < ou; u++)
        for (int64_t t = 0; t < t1 - t0; t++)
            acc[u][t] = 0.0f;
    for (int64_t j = 0; j < sh->kl; j++) {
        /* valid t: 0 <= t*stride - pad + j < l */
        const int64_t first = sh->pad - j <= 0 ? 0 : (sh->pad - j + sh->stride - 1) / sh->stride;
        const int64_t last = sh->l - 1 + sh->pad - j;
        const int64_t lo = c1_max(t0, first);
        const int64_t hi = last < 0 ? t0 : c1_min(t1, last / sh->stride + 1);
        for (int64_t c = 0; c < sh->cin; c++) {
            const float *xc = xb + c * sh->l - sh->pad + j;
            for (int64_t u = 0; u < ou; u++) {
                const float wv = w[((o0 + u) * sh->cin + c) * sh->kl + j];
                float *au = acc[u] - t0;
                C1_SIMD
                for (int64_t t = lo; t < hi; t++)
                    au[t] += wv * xc[t * sh->stride];
            }
        }
    }
    for (int64_t u = 0; u < ou; u++) {
        float *yr = yb + (o0 + u) * sh->lo;
        for (int64_t t = t0; t < t1; t++)
            yr[t] = acc[u][t - t0] + bias[o0 + u];
    }
}

/* Work item it: (image, channel group, position block). */
static void c1_item(const c1_shape *sh, const float *x, const float *w,
                    const float *bias, float *y, int64_t cout, int64_t ng,
                    int64_t nt, int64_t it)
{
    const int64_t b = it / (ng * nt), g = (it / nt) % ng, q = it % nt;
    const int64_t o0 = g * OU;
    c1_block(sh, x + b * sh->cin * sh->l, w, bias, y + b * cout * sh->lo, o0,
             c1_min(OU, cout - o0), q * OLB, c1_min(sh->lo, q * OLB + OLB));
}

void conv1d(const float *x, const float *w, const float *bias, float *y,
            int64_t n, int64_t cin, int64_t cout, int64_t l, int64_t kl,
            int64_t stride, int64_t pad)
{
    const c1_shape sh = {cin, l, kl, stride, pad, (l + 2 * pad - kl) / stride + 1};
    const int64_t ng = (cout + OU - 1) / OU, nt = (sh.lo + OLB - 1) / OLB;
    const int64_t items = n * ng * nt;
    /* Small problems run serially without any OpenMP call (about 1 us). */
    if (!PARALLEL || items == 1 || n * cout * sh.lo * cin * kl < 65536) {
        for (int64_t it = 0; it < items; it++)
            c1_item(&sh, x, w, bias, y, cout, ng, nt, it);
        return;
    }
#pragma omp parallel for schedule(static)
    for (int64_t it = 0; it < items; it++)
        c1_item(&sh, x, w, bias, y, cout, ng, nt, it);
}
