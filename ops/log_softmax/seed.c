/*
 * log_softmax — seed kernel, row-wise over the last dimension.
 *
 *   y[r][j] = (x[r][j] - m) - log(sum_k exp(x[r][k] - m)),  m = max_k x[r][k]
 *
 * ONLINE 0 is three passes per row (max; sum of exponentials; output).
 * ONLINE 1 fuses the max and the sum into one pass that rescales the
 * running sum whenever the maximum grows, then writes the output: one
 * read of x fewer, more exps. SIMD asks the compiler to vectorize the max,
 * sum and output loops with omp simd. Rows are independent and are the
 * OpenMP work items once the matrix has at least PAR_MIN elements. All
 * arithmetic is fp32; every combination of knob values is correct to the
 * spec's tolerance.
 */
#include <math.h>
#include <stdint.h>

#define PARALLEL 1     // @knob layer=parallel values=0,1 "distribute rows across OpenMP threads"
#define PAR_MIN 32768  // @knob layer=parallel values=0,32768,262144 "fewest elements for which the rows go parallel"
#define SIMD 1         // @knob layer=vectorize values=0,1 "omp simd on the max, sum and output loops"
#define ONLINE 0       // @knob layer=algorithm values=0,1 "0 three-pass, 1 online max+sum pass then one output pass"

#define LSM_PRAGMA_(x) _Pragma(#x)
#define LSM_PRAGMA(x) LSM_PRAGMA_(x)
#if SIMD
#define LSM_SIMD(clauses) LSM_PRAGMA(omp simd clauses)
#else
#define LSM_SIMD(clauses)
#endif

static void log_softmax_row(const float *restrict x, float *restrict y,
                            int64_t cols)
{
#if ONLINE
    float m = -INFINITY, s = 0.0f;
    for (int64_t j = 0; j < cols; j++) {
        if (x[j] > m) {
            s = s * expf(m - x[j]) + 1.0f;
            m = x[j];
        } else {
            s += expf(x[j] - m);
        }
    }
#else
    float m = x[0];
    LSM_SIMD(reduction(max : m))
    for (int64_t j = 1; j < cols; j++)
        m = x[j] > m ? x[j] : m;
    float s = 0.0f;
    LSM_SIMD(reduction(+ : s))
    for (int64_t j = 0; j < cols; j++)
        s += expf(x[j] - m);
#endif
    const float ls = logf(s);
    LSM_SIMD()
    for (int64_t j = 0; j < cols; j++)
        y[j] = (x[j] - m) - ls;
}

void log_softmax(const float *x, float *y, int64_t rows, int64_t cols)
{
    /* An inactive OpenMP region still costs about a microsecond, so small
     * inputs run the plain loop without entering one. */
    if (PARALLEL && rows > 1 && rows * cols >= PAR_MIN) {
#pragma omp parallel for schedule(static)
        for (int64_t r = 0; r < rows; r++)
            log_softmax_row(x + r * cols, y + r * cols, cols);
    } else {
        for (int64_t r = 0; r < rows; r++)
            log_softmax_row(x + r * cols, y + r * cols, cols);
    }
}
