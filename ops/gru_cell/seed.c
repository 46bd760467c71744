/*
 * gru_cell — seed kernel (torch.nn.GRUCell, gate order r, z, n):
 *   r = sigmoid(x.w_ih[r] + b_ih[r] + h.w_hh[r] + b_hh[r]), z likewise,
 *   n = tanh(x.w_ih[n] + b_ih[n] + r * (h.w_hh[n] + b_hh[n])),
 *   h_new = (1 - z) * n + z * h
 *
 * For hidden unit j the six weight rows (r, z, n of w_ih and w_hh) are
 * dotted with the input and hidden rows of a block of BB batch rows, so
 * each weight row is read from memory once per block rather than once
 * per batch row; the gates are applied as soon as the six dots of a
 * (row, unit) pair are known. Dots accumulate in ACC, split across SIMD
 * lanes when SIMD. Work items are (batch block, hidden unit) pairs, on
 * OpenMP threads when PARALLEL and b*hid*(in+hid) is at least PAR_MIN.
 * Every combination of knob values is correct to the spec's tolerance.
 */
#include <math.h>
#include <stdint.h>

#define PARALLEL 1      // @knob layer=parallel values=0,1 "distribute (batch block, hidden unit) pairs across OpenMP threads"
#define PAR_MIN 65536   // @knob layer=parallel values=8192,65536,524288 "fewest multiply-adds (b*hid*(in+hid)) worth an OpenMP region"
#define BB 8            // @knob layer=tiling values=1,8,32 "batch rows per block sharing one read of the weight rows"
#define SIMD 1          // @knob layer=vectorize values=0,1 "omp simd reduction on the dot products"
#define ACC float       // @knob layer=algorithm values=float,double "accumulator type of the dot products"

#define GRU_PRAGMA_(x) _Pragma(#x)
#define GRU_PRAGMA(x) GRU_PRAGMA_(x)
#if SIMD
#define GRU_SIMD(clauses) GRU_PRAGMA(omp simd clauses)
#else
#define GRU_SIMD(clauses)
#endif

static float gru_dot(const float *restrict a, const float *restrict w,
                     int64_t n)
{
    ACC s = 0;
    GRU_SIMD(reduction(+ : s))
    for (int64_t c = 0; c < n; c++)
        s += (ACC)a[c] * (ACC)w[c];
    return (float)s;
}

static float gru_sigmoid(float v)
{
    return 1.0f / (1.0f + expf(-v));
}

/* Hidden unit j for batch rows [i0, i1). */
static void gru_unit(const float *x, const float *h, const float *w_ih,
                     const float *w_hh, const float *b_ih, const float *b_hh,
                     float *h_new, int64_t in, int64_t hid, int64_t i0,
                     int64_t i1, int64_t j)
{
    const float *wir = w_ih + j * in, *wiz = w_ih + (hid + j) * in,
                *win = w_ih + (2 * hid + j) * in;
    const float *whr = w_hh + j * hid, *whz = w_hh + (hid + j) * hid,
                *whn = w_hh + (2 * hid + j) * hid;
    for (int64_t i = i0; i < i1; i++) {
        const float *xi = x + i * in, *hi = h + i * hid;
        const float r = gru_sigmoid(gru_dot(xi, wir, in) + b_ih[j] +
                                    gru_dot(hi, whr, hid) + b_hh[j]);
        const float z = gru_sigmoid(gru_dot(xi, wiz, in) + b_ih[hid + j] +
                                    gru_dot(hi, whz, hid) + b_hh[hid + j]);
        const float n = tanhf(gru_dot(xi, win, in) + b_ih[2 * hid + j] +
                              r * (gru_dot(hi, whn, hid) + b_hh[2 * hid + j]));
        h_new[i * hid + j] = (1.0f - z) * n + z * hi[j];
    }
}

void gru_cell(const float *x, const float *h, const float *w_ih,
              const float *w_hh, const float *b_ih, const float *b_hh,
              float *h_new, int64_t b, int64_t in, int64_t hid)
{
    const int64_t nbb = (b + BB - 1) / BB, items = nbb * hid;
#pragma omp parallel for schedule(static) if (PARALLEL && items > 1 && b * hid * (in + hid) >= PAR_MIN)
    for (int64_t it = 0; it < items; it++) {
        const int64_t bb = it / hid, j = it % hid;
        const int64_t i0 = bb * BB, i1 = i0 + BB < b ? i0 + BB : b;
        gru_unit(x, h, w_ih, w_hh, b_ih, b_hh, h_new, in, hid, i0, i1, j);
    }
}
