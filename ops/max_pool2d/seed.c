/*
 * max_pool2d — seed kernel. NCHW 2-D max pooling with a kh x kw window,
 * one stride and one padding for both spatial dimensions, fp32 (exact).
 *
 * Planes do not mix, so the work items are (plane, band of RB output
 * rows) pairs, collapsed into one OpenMP loop. For one output row, the
 * columns are produced in blocks of OWB held in a local array that starts
 * at -infinity; every kernel tap folds its input values into the valid
 * columns (those whose input column is inside the image, so the padding
 * is never compared) with one pass of a branch-free max (optionally
 * `omp simd`). Row passes pay a fixed cost per tap, which dominates on
 * narrow outputs, so ALGO can instead compute each output with the plain
 * window loop (ALGO 2 picks by output width).
 */
#include <stdint.h>
#include <math.h>

#define PARALLEL 1   // @knob layer=parallel values=0,1 "distribute (plane, row band) items across OpenMP threads"
#define RB 4         // @knob layer=tiling values=1,4,16 "output rows per work item"
#define OWB 128      // @knob layer=tiling values=32,128,512 "output columns per block"
#define SIMD 1       // @knob layer=vectorize values=0,1 "omp simd on the column loop"
#define ALGO 2       // @knob layer=algorithm values=0,1,2 "0 window loop per output, 1 tap-outer row passes, 2 row passes only when ow >= 8"

#define MP_PRAGMA_(x) _Pragma(#x)
#define MP_PRAGMA(x) MP_PRAGMA_(x)
#if SIMD
#define MP_SIMD MP_PRAGMA(omp simd)
#else
#define MP_SIMD
#endif

static int64_t mp_min(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t mp_max(int64_t a, int64_t b) { return a > b ? a : b; }

typedef struct {
    int64_t ih, iw, kh, kw, stride, pad, oh, ow;
} mp_shape;

/* One output by the plain window loop (taps inside the input only). */
static float mp_direct(const mp_shape *sh, const float *restrict xp,
                       int64_t r, int64_t s)
{
    float m = -INFINITY;
    for (int64_t i = mp_max(0, sh->pad - r * sh->stride);
         i < mp_min(sh->kh, sh->ih + sh->pad - r * sh->stride); i++) {
        const float *xr = xp + (r * sh->stride - sh->pad + i) * sh->iw;
        for (int64_t j = mp_max(0, sh->pad - s * sh->stride);
             j < mp_min(sh->kw, sh->iw + sh->pad - s * sh->stride); j++) {
            const float v = xr[s * sh->stride - sh->pad + j];
            m = v > m ? v : m;
        }
    }
    return m;
}

/* Output row r, columns [s0, s1), of one plane. */
static void mp_block(const mp_shape *sh, const float *restrict xp,
                     float *restrict yp, int64_t r, int64_t s0, int64_t s1)
{
    float acc[OWB];
    for (int64_t t = 0; t < s1 - s0; t++)
        acc[t] = -INFINITY;
    float *a = acc - s0;
    for (int64_t i = 0; i < sh->kh; i++) {
        const int64_t row = r * sh->stride - sh->pad + i;
        if (row < 0 || row >= sh->ih)
            continue;
        const float *xr = xp + row * sh->iw - sh->pad;
        for (int64_t j = 0; j < sh->kw; j++) {
            const int64_t first = sh->pad - j <= 0 ? 0 : (sh->pad - j + sh->stride - 1) / sh->stride;
            const int64_t last = sh->iw - 1 + sh->pad - j;
            const int64_t lo = mp_max(s0, first);
            const int64_t hi = last < 0 ? s0 : mp_min(s1, last / sh->stride + 1);
            MP_SIMD
            for (int64_t s = lo; s < hi; s++) {
                const float v = xr[s * sh->stride + j];
                a[s] = v > a[s] ? v : a[s];
            }
        }
    }
    float *yr = yp + r * sh->ow;
    for (int64_t s = s0; s < s1; s++)
        yr[s] = a[s];
}

/* Work item it: (plane, band of RB output rows); rows selects row passes
 * over the per-output window loop. */
static void mp_item(const mp_shape *sh, const float *x, float *y, int64_t nb,
                   int rows, int64_t it)
{
    const int64_t plane = it / nb, r0 = (it % nb) * RB;
    const float *xp = x + plane * sh->ih * sh->iw;
    float *yp = y + plane * sh->oh * sh->ow;
    for (int64_t r = r0; r < mp_min(sh->oh, r0 + RB); r++) {
        if (!rows) {
            for (int64_t s = 0; s < sh->ow; s++)
                yp[r * sh->ow + s] = mp_direct(sh, xp, r, s);
            continue;
        }
        for (int64_t s0 = 0; s0 < sh->ow; s0 += OWB)
            mp_block(sh, xp, yp, r, s0, mp_min(sh->ow, s0 + OWB));
    }
}

void max_pool2d(const float *x, float *y, int64_t n, int64_t c, int64_t ih,
                int64_t iw, int64_t kh, int64_t kw, int64_t stride,
                int64_t pad)
{
    const mp_shape sh = {ih, iw, kh, kw, stride, pad,
                         (ih + 2 * pad - kh) / stride + 1,
                         (iw + 2 * pad - kw) / stride + 1};
    const int64_t nb = (sh.oh + RB - 1) / RB, items = n * c * nb;
    const int rows = ALGO == 1 || (ALGO == 2 && sh.ow >= 8);
    /* Small problems run serially without any OpenMP call (about 1 us). */
    if (!PARALLEL || items == 1 || n * c * sh.oh * sh.ow * kh * kw < 65536) {
        for (int64_t it = 0; it < items; it++)
            mp_item(&sh, x, y, nb, rows, it);
        return;
    }
#pragma omp parallel for schedule(static)
    for (int64_t it = 0; it < items; it++)
        mp_item(&sh, x, y, nb, rows, it);
}
