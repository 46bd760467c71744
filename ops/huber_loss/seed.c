/*
 * huber_loss — seed kernel (torch.nn.HuberLoss, mean):
 *   l_i = 0.5*d^2 if |d| < delta else delta*(|d| - 0.5*delta), d = pred - target
 *   y[0] = mean_i l_i
 *
 * The input is cut into blocks of BLOCK elements; each block is summed in
 * ACC (float or double), optionally across SIMD lanes (omp simd
 * reduction); block sums are added in double, on OpenMP threads when
 * PARALLEL. BRANCHLESS computes the loss as 0.5*c*(2|d| - c) with
 * c = min(|d|, delta), which equals both branches without a select.
 * Every combination of knob values is correct to the spec's tolerance.
 */
#include <math.h>
#include <stdint.h>

#define PARALLEL 1    // @knob layer=parallel values=0,1 "sum the blocks on OpenMP threads"
#define BLOCK 16384   // @knob layer=tiling values=4096,16384,65536 "elements per block (per work item)"
#define SIMD 1        // @knob layer=vectorize values=0,1 "omp simd reduction inside a block"
#define ACC float     // @knob layer=algorithm values=float,double "accumulator type inside a block"
#define BRANCHLESS 0  // @knob layer=instruction values=0,1 "0 select between the two branches, 1 the min-based closed form"

#define HUBER_PRAGMA_(x) _Pragma(#x)
#define HUBER_PRAGMA(x) HUBER_PRAGMA_(x)
#if SIMD
#define HUBER_SIMD(clauses) HUBER_PRAGMA(omp simd clauses)
#else
#define HUBER_SIMD(clauses)
#endif

static double huber_block(const float *restrict p, const float *restrict t,
                          int64_t len, float delta)
{
    ACC s = 0;
    const ACC dl = (ACC)delta;
    HUBER_SIMD(reduction(+ : s))
    for (int64_t i = 0; i < len; i++) {
        ACC d = (ACC)p[i] - (ACC)t[i];
        ACC a = d < 0 ? -d : d;
#if BRANCHLESS
        ACC c = a < dl ? a : dl;
        s += (ACC)0.5 * c * (2 * a - c);
#else
        s += a < dl ? (ACC)0.5 * a * a : dl * (a - (ACC)0.5 * dl);
#endif
    }
    return (double)s;
}

void huber_loss(const float *pred, const float *target, float *y, int64_t n,
                float delta)
{
    const int64_t nb = (n + BLOCK - 1) / BLOCK;
    double total = 0.0;
    if (PARALLEL && nb > 1) {
#pragma omp parallel for schedule(static) reduction(+ : total)
        for (int64_t b = 0; b < nb; b++) {
            const int64_t lo = b * (int64_t)BLOCK;
            const int64_t len = n - lo < BLOCK ? n - lo : BLOCK;
            total += huber_block(pred + lo, target + lo, len, delta);
        }
    } else { /* one block, or serial: no OpenMP region (its fixed cost) */
        for (int64_t b = 0; b < nb; b++) {
            const int64_t lo = b * (int64_t)BLOCK;
            const int64_t len = n - lo < BLOCK ? n - lo : BLOCK;
            total += huber_block(pred + lo, target + lo, len, delta);
        }
    }
    y[0] = (float)(total / (double)n);
}
