/*
 * avg_pool2d — seed kernel. NCHW 2-D average pooling with a kh x kw
 * window, one stride and one zero padding for both spatial dimensions,
 * count_include_pad (divisor kh * kw), fp32.
 *
 * Planes do not mix, so the work items are (plane, band of RB output
 * rows) pairs, collapsed into one OpenMP loop. For one output row, the
 * columns are produced in blocks of OWB held in a local array of sums
 * that starts at zero; every kernel tap adds its input values to the
 * valid columns (those whose input column is inside the image: padding
 * adds nothing) in one unit-stride pass (optionally `omp simd`). The sums
 * are divided by kh * kw when stored, or multiplied by its reciprocal
 * with RECIP (one extra rounding). Row passes pay a fixed cost per tap,
 * which dominates on narrow outputs, so ALGO can instead compute each
 * output with the plain window loop (ALGO 2 picks by output width).
 */
#include <stdint.h>

#define PARALLEL 1   // @knob layer=parallel values=0,1 "distribute (plane, row band) items across OpenMP threads"
#define RB 4         // @knob layer=tiling values=1,4,16 "output rows per work item"
#define OWB 128      // @knob layer=tiling values=32,128,512 "output columns per block"
#define SIMD 1       // @knob layer=vectorize values=0,1 "omp simd on the column loop"
#define ALGO 2       // @knob layer=algorithm values=0,1,2 "0 window loop per output, 1 tap-outer row passes, 2 row passes only when ow >= 8"
#define RECIP 0      // @knob layer=instruction values=0,1 "multiply by 1/(kh*kw) instead of dividing"

#define AP_PRAGMA_(x) _Pragma(#x)
#define AP_PRAGMA(x) AP_PRAGMA_(x)
#if SIMD
#define AP_SIMD AP_PRAGMA(omp simd)
#else
#define AP_SIMD
#endif

static int64_t ap_min(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t ap_max(int64_t a, int64_t b) { return a > b ? a : b; }

typedef struct {
    int64_t ih, iw, kh, kw, stride, pad, oh, ow;
} ap_shape;

/* One output by the plain window loop (taps inside the input only). */
static float ap_direct(const ap_shape *sh, const float *restrict xp,
                       int64_t r, int64_t s)
{
    float sum = 0.0f;
    for (int64_t i = ap_max(0, sh->pad - r * sh->stride);
         i < ap_min(sh->kh, sh->ih + sh->pad - r * sh->stride); i++) {
        const float *xr = xp + (r * sh->stride - sh->pad + i) * sh->iw;
        for (int64_t j = ap_max(0, sh->pad - s * sh->stride);
             j < ap_min(sh->kw, sh->iw + sh->pad - s * sh->stride); j++)
            sum += xr[s * sh->stride - sh->pad + j];
    }
    const float cnt = (float)(sh->kh * sh->kw);
#if RECIP
    return sum * (1.0f / cnt);
#else
    return sum / cnt;
#endif
}

/* Output row r, columns [s0, s1), of one plane. */
static void ap_block(const ap_shape *sh, const float *restrict xp,
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
            const int64_t lo = ap_max(s0, first);
            const int64_t hi = last < 0 ? s0 : ap_min(s1, last / sh->stride + 1);
            AP_SIMD
            for (int64_t s = lo; s < hi; s++) {
                a[s] += xr[s * sh->stride + j];
            }
        }
    }
    float *yr = yp + r * sh->ow;
    const float cnt = (float)(sh->kh * sh->kw);
#if RECIP
    const float inv = 1.0f / cnt;
    for (int64_t s = s0; s < s1; s++)
        yr[s] = a[s] * inv;
#else
    for (int64_t s = s0; s < s1; s++)
        yr[s] = a[s] / cnt;
#endif
}

/* Work item it: (plane, band of RB output rows); rows selects row passes
 * over the per-output window loop. */
static void ap_item(const ap_shape *sh, const float *x, float *y, int64_t nb,
                   int rows, int64_t it)
{
    const int64_t plane = it / nb, r0 = (it % nb) * RB;
    const float *xp = x + plane * sh->ih * sh->iw;
    float *yp = y + plane * sh->oh * sh->ow;
    for (int64_t r = r0; r < ap_min(sh->oh, r0 + RB); r++) {
        if (!rows) {
            for (int64_t s = 0; s < sh->ow; s++)
                yp[r * sh->ow + s] = ap_direct(sh, xp, r, s);
            continue;
        }
        for (int64_t s0 = 0; s0 < sh->ow; s0 += OWB)
            ap_block(sh, xp, yp, r, s0, ap_min(sh->ow, s0 + OWB));
    }
}

void avg_pool2d(const float *x, float *y, int64_t n, int64_t c, int64_t ih,
                int64_t iw, int64_t kh, int64_t kw, int64_t stride,
                int64_t pad)
{
    const ap_shape sh = {ih, iw, kh, kw, stride, pad,
                         (ih + 2 * pad - kh) / stride + 1,
                         (iw + 2 * pad - kw) / stride + 1};
    const int64_t nb = (sh.oh + RB - 1) / RB, items = n * c * nb;
    const int rows = ALGO == 1 || (ALGO == 2 && sh.ow >= 8);
    /* Small problems run serially without any OpenMP call (about 1 us). */
    if (!PARALLEL || items == 1 || n * c * sh.oh * sh.ow * kh * kw < 65536) {
        for (int64_t it = 0; it < items; it++)
            ap_item(&sh, x, y, nb, rows, it);
        return;
    }
#pragma omp parallel for schedule(static)
    for (int64_t it = 0; it < items; it++)
        ap_item(&sh, x, y, nb, rows, it);
}
