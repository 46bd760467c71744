/*
 * mean — seed kernel, row-wise over the last dimension.
 *
 *   y[r] = (sum_j x[r][j]) / cols
 *
 * One pass per row into accumulators of type ACC (float or double), then
 * one division by cols. NACC independent partial sums (element j goes to
 * partial j % NACC, the tail to the total) break the serial add chain;
 * SIMD lets the compiler split the sums further across vector lanes (omp
 * simd reduction).
 * Without SIMD and with NACC 1 the fp32 sum is a strict left-to-right
 * chain. Rows are independent and are the OpenMP work items once the
 * matrix has at least PAR_MIN elements (a parallel region costs more than
 * a small reduction). Every combination of knob values is correct to the
 * spec's tolerance.
 */
#include <stdint.h>

#define PARALLEL 1   // @knob layer=parallel values=0,1 "distribute rows across OpenMP threads"
#define PAR_MIN 32768  // @knob layer=parallel values=0,32768,262144 "fewest elements for which the rows go parallel"
#define SIMD 1       // @knob layer=vectorize values=0,1 "omp simd reduction over each row"
#define ACC float    // @knob layer=algorithm values=float,double "accumulator type for the row sum"
#define NACC 1       // @knob layer=instruction values=1,2,4,8 "independent partial sums per row"

#define MEAN_PRAGMA_(x) _Pragma(#x)
#define MEAN_PRAGMA(x) MEAN_PRAGMA_(x)
#if SIMD
#define MEAN_SIMD(clauses) MEAN_PRAGMA(omp simd clauses)
#else
#define MEAN_SIMD(clauses)
#endif

static float mean_row(const float *restrict x, int64_t cols)
{
    ACC s = 0;
#if NACC == 1
    MEAN_SIMD(reduction(+ : s))
    for (int64_t j = 0; j < cols; j++)
        s += (ACC)x[j];
#else
    ACC p[NACC] = {0};
    const int64_t nb = cols / NACC;
    MEAN_SIMD(reduction(+ : p[:NACC]))
    for (int64_t b = 0; b < nb; b++)
        for (int u = 0; u < NACC; u++)
            p[u] += (ACC)x[b * NACC + u];
    for (int u = 0; u < NACC; u++)
        s += p[u];
    for (int64_t j = nb * NACC; j < cols; j++)
        s += (ACC)x[j];
#endif
    return (float)(s / (ACC)cols);
}

void mean(const float *x, float *y, int64_t rows, int64_t cols)
{
    /* An inactive OpenMP region still costs about a microsecond, so small
     * inputs run the plain loop without entering one. */
    if (PARALLEL && rows > 1 && rows * cols >= PAR_MIN) {
#pragma omp parallel for schedule(static)
        for (int64_t r = 0; r < rows; r++)
            y[r] = mean_row(x + r * cols, cols);
    } else {
        for (int64_t r = 0; r < rows; r++)
            y[r] = mean_row(x + r * cols, cols);
    }
}
