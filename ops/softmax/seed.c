/*
 * softmax — seed kernel, row-wise over the last dimension.
 *
 * Per row: find the maximum m, sum s = sum exp(x - m), write
 * exp(x - m) / s. ONLINE 0 is the classic three passes (max; exp stored in
 * y while summing; scale y). ONLINE 1 fuses max and sum into one pass that
 * rescales the running sum whenever the maximum grows, then writes
 * exp(x - m) / s in a second pass: one read of x fewer, more exps. SIMD
 * asks the compiler to vectorize the max and scale loops with omp simd;
 * RECIP multiplies by 1/s instead of dividing. Rows are independent and
 * are the OpenMP work items. All arithmetic is fp32; every combination
 * of knob values is correct to the spec's tolerance.
 */
#include <math.h>
#include <stdint.h>

#define PARALLEL 1   // @knob layer=parallel values=0,1 "distribute rows across OpenMP threads"
#define SIMD 1       // @knob layer=vectorize values=0,1 "omp simd on the max and scale loops"
#define ONLINE 0     // @knob layer=algorithm values=0,1 "0 three-pass softmax, 1 online max+sum pass then one output pass"
#define RECIP 1      // @knob layer=instruction values=0,1 "multiply by 1/sum instead of dividing each element"

#define SOFTMAX_PRAGMA_(x) _Pragma(#x)
#define SOFTMAX_PRAGMA(x) SOFTMAX_PRAGMA_(x)
#if SIMD
#define SOFTMAX_SIMD(clauses) SOFTMAX_PRAGMA(omp simd clauses)
#else
#define SOFTMAX_SIMD(clauses)
#endif

static void softmax_row(const float *restrict x, float *restrict y,
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
#if RECIP
    const float inv = 1.0f / s;
    SOFTMAX_SIMD()
    for (int64_t j = 0; j < cols; j++)
        y[j] = expf(x[j] - m) * inv;
#else
    SOFTMAX_SIMD()
    for (int64_t j = 0; j < cols; j++)
        y[j] = expf(x[j] - m) / s;
#endif
#else
    float m = x[0];
    SOFTMAX_SIMD(reduction(max : m))
    for (int64_t j = 1; j < cols; j++)
        m = x[j] > m ? x[j] : m;
    float s = 0.0f;
    for (int64_t j = 0; j < cols; j++) {
        y[j] = expf(x[j] - m);
        s += y[j];
    }
#if RECIP
    const float inv = 1.0f / s;
    SOFTMAX_SIMD()
    for (int64_t j = 0; j < cols; j++)
        y[j] *= inv;
#else
    SOFTMAX_SIMD()
    for (int64_t j = 0; j < cols; j++)
        y[j] /= s;
#endif
#endif
}

void softmax(const float *x, float *y, int64_t rows, int64_t cols)
{
#pragma omp parallel for schedule(static) if (PARALLEL && rows > 1)
    for (int64_t r = 0; r < rows; r++)
        softmax_row(x + r * cols, y + r * cols, cols);
}
