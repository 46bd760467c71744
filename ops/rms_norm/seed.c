/*
 * rms_norm — seed kernel, row-wise.
 *
 *   y[r][j] = x[r][j] / sqrt(mean_j(x[r][j]^2) + eps) * w[j]
 *
 * Two passes per row: the sum of squares (accumulated in ACC, float or
 * double), then one scale-and-weight pass. Without SIMD the fp32 sum is a
 * strict left-to-right chain the compiler may not reorder, so it stays
 * scalar; SIMD lets it split the sum across vector lanes (omp simd
 * reduction). Rows are independent and are the OpenMP work items. Every
 * combination of knob values is correct to the spec's tolerance.
 */
#include <math.h>
#include <stdint.h>

#define PARALLEL 1   // @knob layer=parallel values=0,1 "distribute rows across OpenMP threads"
#define SIMD 1       // @knob layer=vectorize values=0,1 "omp simd on the sum-of-squares and scale loops"
#define ACC float    // @knob layer=algorithm values=float,double "accumulator type for the sum of squares"

#define RMS_PRAGMA_(x) _Pragma(#x)
#define RMS_PRAGMA(x) RMS_PRAGMA_(x)
#if SIMD
#define RMS_SIMD(clauses) RMS_PRAGMA(omp simd clauses)
#else
#define RMS_SIMD(clauses)
#endif

static void rms_norm_row(const float *restrict x, const float *restrict w,
                         float *restrict y, int64_t cols, float eps)
{
    ACC ss = 0;
    RMS_SIMD(reduction(+ : ss))
    for (int64_t j = 0; j < cols; j++)
        ss += (ACC)x[j] * (ACC)x[j];
    const float inv = (float)(1 / sqrt((double)(ss / (ACC)cols) + (double)eps));
    RMS_SIMD()
    for (int64_t j = 0; j < cols; j++)
        y[j] = x[j] * inv * w[j];
}

void rms_norm(const float *x, const float *w, float *y, int64_t rows,
              int64_t cols, float eps)
{
#pragma omp parallel for schedule(static) if (PARALLEL && rows > 1)
    for (int64_t r = 0; r < rows; r++)
        rms_norm_row(x + r * cols, w, y + r * cols, cols, eps);
}
