/*
 * l2_norm — seed kernel, row-wise over the last dimension.
 *
 *   y[r][j] = x[r][j] / max(sqrt(sum_k x[r][k]^2), eps)
 *
 * Two passes per row: the sum of squares (accumulated in ACC, float or
 * double), then one scaling pass that either multiplies by the reciprocal
 * of the clamped norm (RECIP 1) or divides by it. Without SIMD the fp32
 * sum is a strict left-to-right chain; SIMD lets the compiler split it
 * across vector lanes (omp simd reduction) and vectorize the scaling.
 * Rows are independent and are the OpenMP work items once the matrix has
 * at least PAR_MIN elements. Every combination of knob values is correct
 * to the spec's tolerance.
 */
#include <math.h>
#include <stdint.h>

#define PARALLEL 1     // @knob layer=parallel values=0,1 "distribute rows across OpenMP threads"
#define PAR_MIN 32768  // @knob layer=parallel values=0,32768,262144 "fewest elements for which the rows go parallel"
#define SIMD 1         // @knob layer=vectorize values=0,1 "omp simd on the sum-of-squares and scaling loops"
#define ACC float      // @knob layer=algorithm values=float,double "accumulator type for the sum of squares"
#define RECIP 1        // @knob layer=instruction values=0,1 "multiply by 1/norm instead of dividing each element"

#define L2N_PRAGMA_(x) _Pragma(#x)
#define L2N_PRAGMA(x) L2N_PRAGMA_(x)
#if SIMD
#define L2N_SIMD(clauses) L2N_PRAGMA(omp simd clauses)
#else
#define L2N_SIMD(clauses)
#endif

static void l2_norm_row(const float *restrict x, float *restrict y,
                        int64_t cols, float eps)
{
    ACC ss = 0;
    L2N_SIMD(reduction(+ : ss))
    for (int64_t j = 0; j < cols; j++)
        ss += (ACC)x[j] * (ACC)x[j];
    float d = (float)sqrt((double)ss);
    if (d < eps)
        d = eps;
#if RECIP
    const float inv = 1.0f / d;
    L2N_SIMD()
    for (int64_t j = 0; j < cols; j++)
        y[j] = x[j] * inv;
#else
    L2N_SIMD()
    for (int64_t j = 0; j < cols; j++)
        y[j] = x[j] / d;
#endif
}

void l2_norm(const float *x, float *y, int64_t rows, int64_t cols, float eps)
{
    /* An inactive OpenMP region still costs about a microsecond, so small
     * inputs run the plain loop without entering one. */
    if (PARALLEL && rows > 1 && rows * cols >= PAR_MIN) {
#pragma omp parallel for schedule(static)
        for (int64_t r = 0; r < rows; r++)
            l2_norm_row(x + r * cols, y + r * cols, cols, eps);
    } else {
        for (int64_t r = 0; r < rows; r++)
            l2_norm_row(x + r * cols, y + r * cols, cols, eps);
    }
}
