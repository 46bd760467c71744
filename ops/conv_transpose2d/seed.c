/*
 * conv_transpose2d — seed kernel. NCHW transposed 2-D convolution with
 * [cin x cout x kh x kw] weights, bias, one stride and one padding for both
 * spatial dimensions, fp32.
 *
 * Row-scatter form. The work items are (image, output channel, band of RB
 * output rows) triples, collapsed into one OpenMP loop, so every output
 * row belongs to exactly one item (no races). For an output row r the
 * accumulator row starts at the bias; then for every input channel c and
 * kernel row i whose input row p = (r + pad - i) / stride is exact and in
 * range, each kernel column j scatters w[c][o][i][j] * x[b][c][p][q] into
 * output column q*stride - pad + j for the valid q (one pass over the
 * input row, optionally `omp simd`; unit stride when stride is 1). ORDER
 * chooses whether the channel loop or the kernel-row loop is outer, which
 * changes the summation order and the access pattern.
 */
#include <stdint.h>

#define PARALLEL 1   // @knob layer=parallel values=0,1 "distribute (image, channel, row band) items across OpenMP threads"
#define RB 4         // @knob layer=tiling values=1,4,16 "output rows per work item"
#define ORDER 0      // @knob layer=algorithm values=0,1 "0 channel loop outside the kernel-row loop, 1 inside"
#define SIMD 1       // @knob layer=vectorize values=0,1 "omp simd on the input column loop"

#define CT_PRAGMA_(x) _Pragma(#x)
#define CT_PRAGMA(x) CT_PRAGMA_(x)
#if SIMD
#define CT_SIMD CT_PRAGMA(omp simd)
#else
#define CT_SIMD
#endif

static int64_t ct_min(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t ct_max(int64_t a, int64_t b) { return a > b ? a : b; }

typedef struct {
    int64_t cin, cout, ih, iw, kh, kw, stride, pad, oh, ow;
} ct_shape;

/* yr[q*stride - pad + j] += wv * xr[q] for every q that lands inside the row. */
static void ct_scatter(const ct_shape *sh, const float *restrict xr,
                       float *restrict yr, float wv, int64_t j)
{
    const int64_t first = sh->pad - j <= 0 ? 0 : (sh->pad - j + sh->stride - 1) / sh->stride;
    const int64_t last = sh->ow - 1 + sh->pad - j;
    const int64_t hi = last < 0 ? 0 : ct_min(sh->iw, last / sh->stride + 1);
    float *yj = yr - sh->pad + j;
    CT_SIMD
    for (int64_t q = ct_max(0, first); q < hi; q++)
        yj[q * sh->stride] += wv * xr[q];
}

/* Input row p of channel c for output row r and kernel row i, or -1. */
static int64_t ct_src_row(const ct_shape *sh, int64_t r, int64_t i)
{
    const int64_t t = r + sh->pad - i;
    if (t < 0 || t % sh->stride != 0 || t / sh->stride >= sh->ih)
        return -1;
    return t / sh->stride;
}

static void ct_tap_row(const ct_shape *sh, const float *xb, const float *w,
                       float *yr, int64_t o, int64_t c, int64_t i, int64_t p)
{
    const float *xr = xb + (c * sh->ih + p) * sh->iw;
    const float *wr = w + ((c * sh->cout + o) * sh->kh + i) * sh->kw;
    for (int64_t j = 0; j < sh->kw; j++)
        ct_scatter(sh, xr, yr, wr[j], j);
}

static void ct_row(const ct_shape *sh, const float *xb, const float *w,
                   float bias, float *yr, int64_t o, int64_t r)
{
    for (int64_t s = 0; s < sh->ow; s++)
        yr[s] = bias;
#if ORDER == 0
    for (int64_t c = 0; c < sh->cin; c++)
        for (int64_t i = 0; i < sh->kh; i++) {
            const int64_t p = ct_src_row(sh, r, i);
            if (p >= 0)
                ct_tap_row(sh, xb, w, yr, o, c, i, p);
        }
#else
    for (int64_t i = 0; i < sh->kh; i++) {
        const int64_t p = ct_src_row(sh, r, i);
        if (p < 0)
            continue;
        for (int64_t c = 0; c < sh->cin; c++)
            ct_tap_row(sh, xb, w, yr, o, c, i, p);
    }
#endif
}

/* Work item it: (image, output channel, band of RB output rows). */
static void ct_item(const ct_shape *sh, const float *x, const float *w,
                    const float *bias, float *y, int64_t nb, int64_t it)
{
    const int64_t plane = it / nb, b = plane / sh->cout, o = plane % sh->cout;
    const int64_t r0 = (it % nb) * RB;
    for (int64_t r = r0; r < ct_min(sh->oh, r0 + RB); r++)
        ct_row(sh, x + b * sh->cin * sh->ih * sh->iw, w, bias[o],
               y + (plane * sh->oh + r) * sh->ow, o, r);
}

void conv_transpose2d(const float *x, const float *w, const float *bias,
                      float *y, int64_t n, int64_t cin, int64_t cout,
                      int64_t ih, int64_t iw, int64_t kh, int64_t kw,
                      int64_t stride, int64_t pad)
{
    const ct_shape sh = {cin, cout, ih, iw, kh, kw, stride, pad,
                         (ih - 1) * stride - 2 * pad + kh,
                         (iw - 1) * stride - 2 * pad + kw};
    const int64_t nb = (sh.oh + RB - 1) / RB, items = n * cout * nb;
    /* Small problems run serially without any OpenMP call (about 1 us). */
    if (!PARALLEL || items == 1 || n * cin * ih * iw * cout * kh * kw < 65536) {
        for (int64_t it = 0; it < items; it++)
            ct_item(&sh, x, w, bias, y, nb, it);
        return;
    }
#pragma omp parallel for schedule(static)
    for (int64_t it = 0; it < items; it++)
        ct_item(&sh, x, w, bias, y, nb, it);
}
