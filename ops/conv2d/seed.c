/*
 * conv2d — seed kernel. NCHW 2-D convolution with OIHW weights, bias, one
 * stride and one zero padding for both spatial dimensions, fp32.
 *
 * Direct convolution. The work items are (image, group of OU output
 * channels, output row) triples, collapsed into one OpenMP loop. For one
 * item, the outputs of a row are produced in blocks of OWB columns held
 * in a local OU x OWB accumulator array; for every input channel and
 * kernel tap the valid output columns (those whose input column is inside
 * the image, so the padding costs nothing) receive weight * input in one
 * unit-stride pass over the accumulators (optionally `omp simd`), and each
 * input value loaded feeds OU output channels. The bias is added when the
 * block is stored.
 */
#include <stdint.h>

#define PARALLEL 1   // @knob layer=parallel values=0,1 "distribute (image, channel group, row) items across OpenMP threads"
#define OWB 64       // @knob layer=tiling values=16,64,256 "output columns per accumulator block"
#define OU 2         // @knob layer=instruction values=1,2,4 "output channels computed together (input reuse)"
#define SIMD 1       // @knob layer=vectorize values=0,1 "omp simd on the column loop"

#define CV_PRAGMA_(x) _Pragma(#x)
#define CV_PRAGMA(x) CV_PRAGMA_(x)
#if SIMD
#define CV_SIMD CV_PRAGMA(omp simd)
#else
#define CV_SIMD
#endif

static int64_t cv_min(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t cv_max(int64_t a, int64_t b) { return a > b ? a : b; }

typedef struct {
    int64_t cin, cout, ih, iw, kh, kw, stride, pad, oh, ow;
} cv_shape;

/* Output columns s in [lo, hi) whose input column s*stride - pad + j is
 * inside [0, iw), clipped to [s0, s1). */
static void cv_cols(const cv_shape *sh, int64_t j, int64_t s0, int64_t s1,
                    int64_t *lo, int64_t *hi)
{
    const int64_t first = sh->pad - j <= 0 ? 0 : (sh->pad - j + sh->stride - 1) / sh->stride;
    const int64_t last = sh->iw - 1 + sh->pad - j;
    *lo = cv_max(s0, first);
    *hi = last < 0 ? s0 : cv_min(s1, last / sh->stride + 1);
}

/* Outputs y[o0 .. o0+ou)[r][s0 .. s1) of one image. */
static void cv_block(const cv_shape *sh, const float *restrict xb,
                     const float *restrict w, const float *restrict bias,
                     float *restrict yb, int64_t o0, int64_t ou, int64_t r,
                     int64_t s0, int64_t s1)
{
    float acc[OU][OWB];
    for (int64_t u = 0; u < ou; u++)
        for (int64_t t = 0; t < s1 - s0; t++)
            acc[u][t] = 0.0f;
    for (int64_t c = 0; c < sh->cin; c++)
        for (int64_t i = 0; i < sh->kh; i++) {
            const int64_t row = r * sh->stride - sh->pad + i;
            if (row < 0 || row >= sh->ih)
                continue;
            const float *xr = xb + (c * sh->ih + row) * sh->iw - sh->pad;
            for (int64_t j = 0; j < sh->kw; j++) {
                int64_t lo, hi;
                cv_cols(sh, j, s0, s1, &lo, &hi);
                for (int64_t u = 0; u < ou; u++) {
                    const float wv = w[(((o0 + u) * sh->cin + c) * sh->kh + i) * sh->kw + j];
                    float *au = acc[u] - s0;
                    CV_SIMD
                    for (int64_t s = lo; s < hi; s++)
                        au[s] += wv * xr[s * sh->stride + j];
                }
            }
        }
    for (int64_t u = 0; u < ou; u++) {
        float *yr = yb + ((o0 + u) * sh->oh + r) * sh->ow;
        for (int64_t s = s0; s < s1; s++)
            yr[s] = acc[u][s - s0] + bias[o0 + u];
    }
}

/* Work item it: (image, output-channel group, output row). */
static void cv_item(const cv_shape *sh, const float *x, const float *w,
                    const float *bias, float *y, int64_t ng, int64_t it)
{
    const int64_t b = it / (ng * sh->oh), g = (it / sh->oh) % ng, r = it % sh->oh;
    const int64_t o0 = g * OU, ou = cv_min(OU, sh->cout - o0);
    for (int64_t s0 = 0; s0 < sh->ow; s0 += OWB)
        cv_block(sh, x + b * sh->cin * sh->ih * sh->iw, w, bias,
                 y + b * sh->cout * sh->oh * sh->ow, o0, ou, r, s0,
                 cv_min(sh->ow, s0 + OWB));
}

void conv2d(const float *x, const float *w, const float *bias, float *y,
            int64_t n, int64_t cin, int64_t cout, int64_t ih, int64_t iw,
            int64_t kh, int64_t kw, int64_t stride, int64_t pad)
{
    const cv_shape sh = {cin, cout, ih, iw, kh, kw, stride, pad,
                         (ih + 2 * pad - kh) / stride + 1,
                         (iw + 2 * pad - kw) / stride + 1};
    const int64_t ng = (cout + OU - 1) / OU, items = n * ng * sh.oh;
    /* Small problems run serially without any OpenMP call (about 1 us). */
    if (!PARALLEL || items == 1 || n * cout * sh.oh * sh.ow * cin * kh * kw < 65536) {
        for (int64_t it = 0; it < items; it++)
            cv_item(&sh, x, w, bias, y, ng, it);
        return;
    }
#pragma omp parallel for schedule(static)
    for (int64_t it = 0; it < items; it++)
        cv_item(&sh, x, w, bias, y, ng, it);
}
