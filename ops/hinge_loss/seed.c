/*
 * hinge_loss — seed kernel: y[0] = mean_i max(0, 1 - pred[i]*target[i]).
 *
 * The input is cut into blocks of BLOCK elements; each block is summed in
 * ACC (float or double), optionally across SIMD lanes (omp simd
 * reduction) or as a scalar loop unrolled by UNROLL; block sums are added in double, on
 * OpenMP threads when PARALLEL. Every combination of knob values is
 * correct to the spec's tolerance.
 */
#include <stdint.h>

#define PARALLEL 1    // @knob layer=parallel values=0,1 "sum the blocks on OpenMP threads"
#define BLOCK 16384   // @knob layer=tiling values=4096,16384,65536 "elements per block (per work item)"
#define SIMD 1        // @knob layer=vectorize values=0,1 "omp simd reduction inside a block"
#define ACC float     // @knob layer=algorithm values=float,double "accumulator type inside a block"
#define UNROLL 1      // @knob layer=instruction values=1,2,4 "unroll factor of the scalar loop (SIMD 0)"

#define HINGE_PRAGMA_(x) _Pragma(#x)
#define HINGE_PRAGMA(x) HINGE_PRAGMA_(x)
/* omp simd and GCC unroll cannot both precede one loop: the SIMD path
 * lets the vectorizer pick its own unrolling, the scalar path unrolls. */
#if SIMD
#define HINGE_LOOP HINGE_PRAGMA(omp simd reduction(+ : s))
#else
#define HINGE_LOOP HINGE_PRAGMA(GCC unroll UNROLL)
#endif

static double hinge_block(const float *restrict p, const float *restrict t,
                          int64_t len)
{
    ACC s = 0;
    HINGE_LOOP
    for (int64_t i = 0; i < len; i++) {
        ACC m = (ACC)1 - (ACC)p[i] * (ACC)t[i];
        s += m > 0 ? m : 0;
    }
    return (double)s;
}

void hinge_loss(const float *pred, const float *target, float *y, int64_t n)
{
    const int64_t nb = (n + BLOCK - 1) / BLOCK;
    double total = 0.0;
    if (PARALLEL && nb > 1) {
#pragma omp parallel for schedule(static) reduction(+ : total)
        for (int64_t b = 0; b < nb; b++) {
            const int64_t lo = b * (int64_t)BLOCK;
            const int64_t len = n - lo < BLOCK ? n - lo : BLOCK;
            total += hinge_block(pred + lo, target + lo, len);
        }
    } else { /* one block, or serial: no OpenMP region (its fixed cost) */
        for (int64_t b = 0; b < nb; b++) {
            const int64_t lo = b * (int64_t)BLOCK;
            const int64_t len = n - lo < BLOCK ? n - lo : BLOCK;
            total += hinge_block(pred + lo, target + lo, len);
        }
    }
    y[0] = (float)(total / (double)n);
}
