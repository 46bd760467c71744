/*
 * frobenius_norm — seed kernel over the whole [rows x cols] matrix.
 *
 *   y[0] = sqrt(sum_r sum_j x[r][j]^2)
 *
 * The matrix is one flat array of rows * cols elements, cut into blocks of
 * BLOCK elements. Each block's sum of squares is accumulated in ACC (float
 * or double; SIMD lets the compiler split it across vector lanes with omp
 * simd), and the block sums are added in ACC, across OpenMP threads when
 * PARALLEL is on and there are at least PAR_MIN elements (an OpenMP
 * reduction). Blocking also bounds the fp32 rounding error of each partial
 * sum. Every combination of knob values is correct to the spec's
 * tolerance.
 */
#include <math.h>
#include <stdint.h>

#define PARALLEL 1     // @knob layer=parallel values=0,1 "sum the blocks on OpenMP threads (reduction)"
#define PAR_MIN 32768  // @knob layer=parallel values=0,32768,262144 "fewest elements for which the blocks go parallel"
#define BLOCK 16384    // @knob layer=tiling values=1024,4096,16384,65536 "elements per block (one partial sum each)"
#define SIMD 1         // @knob layer=vectorize values=0,1 "omp simd reduction inside each block"
#define ACC float      // @knob layer=algorithm values=float,double "accumulator type for the sums of squares"

#define FRO_PRAGMA_(x) _Pragma(#x)
#define FRO_PRAGMA(x) FRO_PRAGMA_(x)
#if SIMD
#define FRO_SIMD(clauses) FRO_PRAGMA(omp simd clauses)
#else
#define FRO_SIMD(clauses)
#endif

static ACC frobenius_block(const float *restrict x, int64_t len)
{
    ACC ss = 0;
    FRO_SIMD(reduction(+ : ss))
    for (int64_t i = 0; i < len; i++)
        ss += (ACC)x[i] * (ACC)x[i];
    return ss;
}

void frobenius_norm(const float *x, float *y, int64_t rows, int64_t cols)
{
    const int64_t n = rows * cols;
    const int64_t nblocks = (n + BLOCK - 1) / BLOCK;
    ACC ss = 0;
    /* An inactive OpenMP region still costs about a microsecond, so small
     * inputs run the plain loop without entering one. */
    if (PARALLEL && nblocks > 1 && n >= PAR_MIN) {
#pragma omp parallel for schedule(static) reduction(+ : ss)
        for (int64_t b = 0; b < nblocks; b++) {
            const int64_t lo = b * (int64_t)BLOCK;
            const int64_t len = n - lo < BLOCK ? n - lo : BLOCK;
            ss += frobenius_block(x + lo, len);
        }
    } else {
        for (int64_t b = 0; b < nblocks; b++) {
            const int64_t lo = b * (int64_t)BLOCK;
            const int64_t len = n - lo < BLOCK ? n - lo : BLOCK;
            ss += frobenius_block(x + lo, len);
        }
    }
    y[0] = (float)sqrt((double)ss);
}
