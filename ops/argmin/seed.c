/*
 * argmin — seed kernel, row-wise over the last dimension.
 *
 *   y[r] = the smallest j with x[r][j] == min_k x[r][k]
 *
 * TWOPASS 0 is one scan tracking the smallest value and its index with a
 * strict comparison (the first index wins ties). TWOPASS 1 first finds
 * the row minimum with a plain min reduction, which SIMD lets the
 * compiler vectorize (omp simd; the minimum is exact in any order), then
 * returns the first index holding that value. Both give the reference's
 * answer for every input without NaN. Rows are independent and are the
 * OpenMP work items once the matrix has at least PAR_MIN elements.
 */
#include <stdint.h>

#define PARALLEL 1     // @knob layer=parallel values=0,1 "distribute rows across OpenMP threads"
#define PAR_MIN 32768  // @knob layer=parallel values=0,32768,262144 "fewest elements for which the rows go parallel"
#define TWOPASS 1      // @knob layer=algorithm values=0,1 "0 one scan tracking value and index, 1 min reduction then find the first match"
#define SIMD 1         // @knob layer=vectorize values=0,1 "omp simd on the min reduction (TWOPASS 1)"

#define ARGMIN_PRAGMA_(x) _Pragma(#x)
#define ARGMIN_PRAGMA(x) ARGMIN_PRAGMA_(x)
#if SIMD
#define ARGMIN_SIMD(clauses) ARGMIN_PRAGMA(omp simd clauses)
#else
#define ARGMIN_SIMD(clauses)
#endif

static int64_t argmin_row(const float *restrict x, int64_t cols)
{
#if TWOPASS
    float m = x[0];
    ARGMIN_SIMD(reduction(min : m))
    for (int64_t j = 1; j < cols; j++)
        m = x[j] < m ? x[j] : m;
    int64_t j = 0;
    while (j < cols - 1 && x[j] != m)
        j++;
    return j;
#else
    float m = x[0];
    int64_t best = 0;
    for (int64_t j = 1; j < cols; j++)
        if (x[j] < m) {
            m = x[j];
            best = j;
        }
    return best;
#endif
}

void argmin(const float *x, int64_t *y, int64_t rows, int64_t cols)
{
    /* An inactive OpenMP region still costs about a microsecond, so small
     * inputs run the plain loop without entering one. */
    if (PARALLEL && rows > 1 && rows * cols >= PAR_MIN) {
#pragma omp parallel for schedule(static)
        for (int64_t r = 0; r < rows; r++)
            y[r] = argmin_row(x + r * cols, cols);
    } else {
        for (int64_t r = 0; r < rows; r++)
            y[r] = argmin_row(x + r * cols, cols);
    }
}
