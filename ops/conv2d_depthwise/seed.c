/*
 * conv2d_depthwise — seed kernel. NCHW depthwise 2-D convolution
 * (groups = channels, multiplier 1), [c x 1 x kh x kw] weights, bias, one
 * stride and one zero padding for both spatial dimensions, fp32.
 *
 * Channels do not mix, so the work items are (image, channel, band of RB
 * output rows) triples, collapsed into one OpenMP loop. For one output
 * row, the columns are produced in blocks of OWB held in a local
 * accumulator array; every kernel tap adds weight * input to the valid
 * columns (those whose input column is inside the image, so the padding
 * costs nothing) in one unit-stride pass (optionally `omp simd`). The bias
 * is added when the block is stored. Row passes pay a fixed cost per tap,
 * which dominates on narrow outputs, so ALGO can instead compute each
 * output with the plain window loop (ALGO 2 picks by output width).
 */
#include <stdint.h>

#define PARALLEL 1   // @knob layer=parallel values=0,1 "distribute (image, channel, row band) items across OpenMP threads"
#define RB 4         // @knob layer=tiling values=1,4,16 "output rows per work item"
#define OWB 128      // @knob layer=tiling values=32,128,512 "output columns per accumulator block"
#define SIMD 1       // @knob layer=vectorize values=0,1 "omp simd on the column loop"
#define ALGO 2       // @knob layer=algorithm values=0,1,2 "0 window loop per output, 1 tap-outer row passes, 2 row passes only when ow >= 8"

#define DW_PRAGMA_(x) _Pragma(#x)
#define DW_PRAGMA(x) DW_PRAGMA_(x)
#if SIMD
#define DW_SIMD DW_PRAGMA(omp simd)
#else
#define DW_SIMD
#endif

static int64_t dw_min(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t dw_max(int64_t a, int64_t b) { return a > b ? a : b; }

typedef struct {
    int64_t ih, iw, kh, kw, stride, pad, oh, ow;
} dw_shape;

/* One output by the plain window loop (taps inside the input only). */
static float dw_direct(const dw_shape *sh, const float *restrict xp,
                       const float *restrict wp, float bias, int64_t r,
                       int64_t s)
{
    float sum = 0.0f;
    for (int64_t i = dw_max(0, sh->pad - r * sh->stride);
         i < dw_min(sh->kh, sh->ih + sh->pad - r * sh->stride); i++) {
        const float *xr = xp + (r * sh->stride - sh->pad + i) * sh->iw +
                          s * sh->stride - sh->pad;
        for (int64_t j = dw_max(0, sh->pad - s * sh->stride);
             j < dw_min(sh->kw, sh->iw + sh->pad - s * sh->stride); j++)
            sum += wp[i * sh->kw + j] * xr[j];
    }
    return sum + bias;
}

/* Output row r, columns [s0, s1), of one (image, channel) plane. */
static void dw_block(const dw_shape *sh, const float *restrict xp,
                     const float *restrict wp, float bias,
                     float *restrict yp, int64_t r, int64_t s0, int64_t s1)
{
    float acc[OWB];
    for (int64_t t = 0; t < s1 - s0; t++)
        acc[t] = 0.0f;
    float *a = acc - s0;
    for (int64_t i = 0; i < sh->kh; i++) {
        const int64_t row = r * sh->stride - sh->pad + i;
        if (row < 0 || row >= sh->ih)
            continue;
        const float *xr = xp + row * sh->iw - sh->pad;
        for (int64_t j = 0; j < sh->kw; j++) {
            const int64_t first = sh->pad - j <= 0 ? 0 : (sh->pad - j + sh->stride - 1) / sh->stride;
            const int64_t last = sh->iw - 1 + sh->pad - j;
            const int64_t lo = dw_max(s0, first);
            const int64_t hi = last < 0 ? s0 : dw_min(s1, last / sh->stride + 1);
            const float wv = wp[i * sh->kw + j];
            DW_SIMD
            for (int64_t s = lo; s < hi; s++)
                a[s] += wv * xr[s * sh->stride + j];
        }
    }
    float *yr = yp + r * sh->ow;
    for (int64_t s = s0; s < s1; s++)
        yr[s] = a[s] + bias;
}

/* Work item it: (image, channel, band of RB output rows); rows selects
 * row passes over the per-output window loop. */
static void dw_item(const dw_shape *sh, const float *x, const float *w,
                    const float *bias, float *y, int64_t c, int64_t nb,
                    int rows, int64_t it)
{
    const int64_t plane = it / nb, ch = plane % c, r0 = (it % nb) * RB;
    const float *xp = x + plane * sh->ih * sh->iw;
    const float *wp = w + ch * sh->kh * sh->kw;
    float *yp = y + plane * sh->oh * sh->ow;
    for (int64_t r = r0; r < dw_min(sh->oh, r0 + RB); r++) {
        if (!rows) {
            for (int64_t s = 0; s < sh->ow; s++)
                yp[r * sh->ow + s] = dw_direct(sh, xp, wp, bias[ch], r, s);
            continue;
        }
        for (int64_t s0 = 0; s0 < sh->ow; s0 += OWB)
            dw_block(sh, xp, wp, bias[ch], yp, r, s0, dw_min(sh->ow, s0 + OWB));
    }
}

void conv2d_depthwise(const float *x, const float *w, const float *bias,
                      float *y, int64_t n, int64_t c, int64_t ih, int64_t iw,
                      int64_t kh, int64_t kw, int64_t stride, int64_t pad)
{
    const dw_shape sh = {ih, iw, kh, kw, stride, pad,
                         (ih + 2 * pad - kh) / stride + 1,
                         (iw + 2 * pad - kw) / stride + 1};
    const int64_t nb = (sh.oh + RB - 1) / RB, items = n * c * nb;
    const int rows = ALGO == 1 || (ALGO == 2 && sh.ow >= 8);
    /* Small problems run serially without any OpenMP call (about 1 us). */
    if (!PARALLEL || items == 1 || n * c * sh.oh * sh.ow * kh * kw < 65536) {
        for (int64_t it = 0; it < items; it++)
            dw_item(&sh, x, w, bias, y, c, nb, rows, it);
        return;
    }
#pragma omp parallel for schedule(static)
    for (int64_t it = 0; it < items; it++)
        dw_item(&sh, x, w, bias, y, c, nb, rows, it);
}
