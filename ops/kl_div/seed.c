/*
 * kl_div — seed kernel ('batchmean'):
 *   y[0] = (1/rows) * sum_{r,j} t * (log t - log_pred),  terms with t == 0 are 0
 *
 * The flat rows*cols input is cut into blocks of BLOCK elements; each block
 * is summed in ACC (float or double), optionally across SIMD lanes (omp
 * simd reduction); block sums are added in double, on OpenMP threads when
 * PARALLEL. Every combination of knob values is correct to the spec's
 * tolerance.
 */
#include <math.h>
#include <stdint.h>

#define PARALLEL 1    // @knob layer=parallel values=0,1 "sum the blocks on OpenMP threads"
#define BLOCK 16384   // @knob layer=tiling values=4096,16384,65536 "elements per block (per work item)"
#define SIMD 1        // @knob layer=vectorize values=0,1 "omp simd reduction inside a block"
#define ACC float     // @knob layer=algorithm values=float,double "accumulator type inside a block"

#define KL_PRAGMA_(x) _Pragma(#x)
#define KL_PRAGMA(x) KL_PRAGMA_(x)
#if SIMD
#define KL_SIMD(clauses) KL_PRAGMA(omp simd clauses)
#else
#define KL_SIMD(clauses)
#endif

static double kl_block(const float *restrict lp, const float *restrict t,
                       int64_t len)
{
    ACC s = 0;
    KL_SIMD(reduction(+ : s))
    for (int64_t i = 0; i < len; i++) {
        float ti = t[i];
        ACC term = (ACC)ti * ((ACC)logf(ti) - (ACC)lp[i]);
        s += ti > 0.0f ? term : 0;
    }
    return (double)s;
}

void kl_div(const float *log_pred, const float *target, float *y, int64_t rows,
            int64_t cols)
{
    const int64_t n = rows * cols;
    const int64_t nb = (n + BLOCK - 1) / BLOCK;
    double total = 0.0;
    if (PARALLEL && nb > 1) {
#pragma omp parallel for schedule(static) reduction(+ : total)
        for (int64_t b = 0; b < nb; b++) {
            const int64_t lo = b * (int64_t)BLOCK;
            const int64_t len = n - lo < BLOCK ? n - lo : BLOCK;
            total += kl_block(log_pred + lo, target + lo, len);
        }
    } else { /* one block, or serial: no OpenMP region (its fixed cost) */
        for (int64_t b = 0; b < nb; b++) {
            const int64_t lo = b * (int64_t)BLOCK;
            const int64_t len = n - lo < BLOCK ? n - lo : BLOCK;
            total += kl_block(log_pred + lo, target + lo, len);
        }
    }
    y[0] = (float)(total / (double)rows);
}
