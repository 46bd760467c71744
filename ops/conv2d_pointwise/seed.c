/*
 * conv2d_pointwise — seed kernel. NCHW 1x1 convolution with
 * [cout x cin x 1 x 1] weights and bias, fp32.
 *
 * Per image this is Y[cout x hw] = W[cout x cin] * X[cin x hw] + bias.
 * The work items are (image, block of OB output channels, block of PB
 * pixels) triples, collapsed into one OpenMP loop. A block's outputs are
 * held in a local OB x PB accumulator array; for every input channel the
 * pixel row X[c][p0 .. p0+PB) is streamed once (unit stride, optionally
 * `omp simd`) into all OB accumulator rows, so each input value loaded
 * feeds OB multiply-adds. The bias is added when the block is stored.
 */
#include <stdint.h>

#define PARALLEL 1   // @knob layer=parallel values=0,1 "distribute (image, channel block, pixel block) items across OpenMP threads"
#define OB 8         // @knob layer=tiling values=4,8,16 "output channels per block (input reuse)"
#define PB 256       // @knob layer=tiling values=64,256,1024 "pixels per block"
#define SIMD 1       // @knob layer=vectorize values=0,1 "omp simd on the pixel loop"

#define PW_PRAGMA_(x) _Pragma(#x)
#define PW_PRAGMA(x) PW_PRAGMA_(x)
#if SIMD
#define PW_SIMD PW_PRAGMA(omp simd)
#else
#define PW_SIMD
#endif

static int64_t pw_min(int64_t a, int64_t b) { return a < b ? a : b; }

/* y[o0 .. o0+ob)[p0 .. p0+pn) of one image; xb is [cin x hw], yb [cout x hw]. */
static void pw_block(const float *restrict xb, const float *restrict w,
                     const float *restrict bias, float *restrict yb,
                     int64_t cin, int64_t hw, int64_t o0, int64_t ob,
                     int64_t p0, int64_t pn)
{
    float acc[OB][PB];
    for (int64_t u = 0; u < ob; u++)
        for (int64_t q = 0; q < pn; q++)
            acc[u][q] = 0.0f;
    for (int64_t c = 0; c < cin; c++) {
        const float *xc = xb + c * hw + p0;
        for (int64_t u = 0; u < ob; u++) {
            const float wv = w[(o0 + u) * cin + c];
            float *au = acc[u];
            PW_SIMD
            for (int64_t q = 0; q < pn; q++)
                au[q] += wv * xc[q];
        }
    }
    for (int64_t u = 0; u < ob; u++) {
        float *yr = yb + (o0 + u) * hw + p0;
        const float bv = bias[o0 + u];
        for (int64_t q = 0; q < pn; q++)
            yr[q] = acc[u][q] + bv;
    }
}

/* Work item it: (image, output-channel block, pixel block). */
static void pw_item(const float *x, const float *w, const float *bias,
                    float *y, int64_t cin, int64_t cout, int64_t hw,
                    int64_t nob, int64_t npb, int64_t it)
{
    const int64_t b = it / (nob * npb), ob = (it / npb) % nob, pb = it % npb;
    const int64_t o0 = ob * OB, p0 = pb * PB;
    pw_block(x + b * cin * hw, w, bias, y + b * cout * hw, cin, hw, o0,
             pw_min(OB, cout - o0), p0, pw_min(PB, hw - p0));
}

void conv2d_pointwise(const float *x, const float *w, const float *bias,
                      float *y, int64_t n, int64_t cin, int64_t cout,
                      int64_t ih, int64_t iw)
{
    const int64_t hw = ih * iw;
    const int64_t nob = (cout + OB - 1) / OB, npb = (hw + PB - 1) / PB;
    const int64_t items = n * nob * npb;
    /* Small problems run serially without any OpenMP call (about 1 us). */
    if (!PARALLEL || items == 1 || n * cout * cin * hw < 65536) {
        for (int64_t it = 0; it < items; it++)
            pw_item(x, w, bias, y, cin, cout, hw, nob, npb, it);
        return;
    }
#pragma omp parallel for schedule(static)
    for (int64_t it = 0; it < items; it++)
        pw_item(x, w, bias, y, cin, cout, hw, nob, npb, it);
}
