/*
 * layer_norm — seed kernel, row-wise over the last dimension.
 *
 *   y[r][j] = (x[r][j] - mu_r) / sqrt(var_r + eps) * gamma[j] + beta[j]
 *
 * Three passes per row: the mean, the centred sum of squares (both
 * accumulated in ACC, float or double), then one normalize-scale-shift
 * pass. Without SIMD the fp32 sums are strict left-to-right chains; SIMD
 * lets the compiler split them across vector lanes (omp simd reduction)
 * and vectorize the output pass. Rows are independent and are the OpenMP
 * work items once the matrix has at least PAR_MIN elements. Every
 * combination of knob values is correct to the spec's tolerance.
 */
#include <math.h>
#include <stdint.h>

#define PARALLEL 1     // @knob layer=parallel values=0,1 "distribute rows across OpenMP threads"
#define PAR_MIN 32768  // @knob layer=parallel values=0,32768,262144 "fewest elements for which the rows go parallel"
#define SIMD 1         // @knob layer=vectorize values=0,1 "omp simd on the two reductions and the output loop"
#define ACC float      // @knob layer=algorithm values=float,double "accumulator type for the mean and variance sums"

#define LN_PRAGMA_(x) _Pragma(#x)
#define LN_PRAGMA(x) LN_PRAGMA_(x)
#if SIMD
#define LN_SIMD(clauses) LN_PRAGMA(omp simd clauses)
#else
#define LN_SIMD(clauses)
#endif

static void layer_norm_row(const float *restrict x, const float *restrict gamma,
                           const float *restrict beta, float *restrict y,
                           int64_t cols, float eps)
{
    ACC s = 0;
    LN_SIMD(reduction(+ : s))
    for (int64_t j = 0; j < cols; j++)
        s += (ACC)x[j];
    const ACC mu = s / (ACC)cols;
    ACC ss = 0;
    LN_SIMD(reduction(+ : ss))
    for (int64_t j = 0; j < cols; j++)
        ss += ((ACC)x[j] - mu) * ((ACC)x[j] - mu);
    const float inv = (float)(1 / sqrt((double)(ss / (ACC)cols) + (double)eps));
    const float muf = (float)mu;
    LN_SIMD()
    for (int64_t j = 0; j < cols; j++)
        y[j] = (x[j] - muf) * inv * gamma[j] + beta[j];
}

void layer_norm(const float *x, const float *gamma, const float *beta,
                float *y, int64_t rows, int64_t cols, float eps)
{
    /* An inactive OpenMP region still costs about a microsecond, so small
     * inputs run the plain loop without entering one. */
    if (PARALLEL && rows > 1 && rows * cols >= PAR_MIN) {
#pragma omp parallel for schedule(static)
        for (int64_t r = 0; r < rows; r++)
            layer_norm_row(x + r * cols, gamma, beta, y + r * cols, cols, eps);
    } else {
        for (int64_t r = 0; r < rows; r++)
            layer_norm_row(x + r * cols, gamma, beta, y + r * cols, cols, eps);
    }
}
