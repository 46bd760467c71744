/*
 * mse_loss — seed kernel: y[0] = (1/n) * sum_i (pred[i] - target[i])^2.
 *
 * The input is cut into blocks of BLOCK elements; each block is summed in
 * ACC (float or double), optionally split across SIMD lanes (omp simd
 * reduction), and the block sums are added in double, across OpenMP
 * threads when PARALLEL. Blocked summation keeps the fp32 error bounded
 * by the block length instead of n. Every combination of knob values is
 * correct to the spec's tolerance.
 */
#include <stdint.h>

#define PARALLEL 1    // @knob layer=parallel values=0,1 "sum the blocks on OpenMP threads"
#define BLOCK 16384   // @knob layer=tiling values=4096,16384,65536 "elements per block (per work item)"
#define SIMD 1        // @knob layer=vectorize values=0,1 "omp simd reduction inside a block"
#define ACC float     // @knob layer=algorithm values=float,double "accumulator type inside a block"

#define MSE_PRAGMA_(x) _Pragma(#x)
#define MSE_PRAGMA(x) MSE_PRAGMA_(x)
#if SIMD
#define MSE_SIMD(clauses) MSE_PRAGMA(omp simd clauses)
#else
#define MSE_SIMD(clauses)
#endif

static double mse_block(const float *restrict p, const float *restrict t,
                        int64_t len)
{
    ACC s = 0;
    MSE_SIMD(reduction(+ : s))
    for (int64_t i = 0; i < len; i++) {
        ACC d = (ACC)p[i] - (ACC)t[i];
        s += d * d;
    }
    return (double)s;
}

void mse_loss(const float *pred, const float *target, float *y, int64_t n)
{
    const int64_t nb = (n + BLOCK - 1) / BLOCK;
    double total = 0.0;
    if (PARALLEL && nb > 1) {
#pragma omp parallel for schedule(static) reduction(+ : total)
        for (int64_t b = 0; b < nb; b++) {
            const int64_t lo = b * (int64_t)BLOCK;
            const int64_t len = n - lo < BLOCK ? n - lo : BLOCK;
            total += mse_block(pred + lo, target + lo, len);
        }
    } else { /* one block, or serial: no OpenMP region (its fixed cost) */
        for (int64_t b = 0; b < nb; b++) {
            const int64_t lo = b * (int64_t)BLOCK;
            const int64_t len = n - lo < BLOCK ? n - lo : BLOCK;
            total += mse_block(pred + lo, target + lo, len);
        }
    }
    y[0] = (float)(total / (double)n);
}
