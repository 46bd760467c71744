/*
 * cross_entropy — seed kernel (torch CrossEntropyLoss, mean):
 *   y[0] = (1/rows) * sum_r (logsumexp(l[r]) - l[r][target[r]])
 *
 * Per row: the maximum m (omp simd max reduction when SIMD), then
 * s = sum_j exp(l - m) in fp32 (split across SIMD lanes when SIMD), the
 * row loss m + log(s) - l[t]. ONLINE 1 fuses the max and the sum into one
 * pass that rescales the running sum whenever the maximum grows. Row
 * losses are added in double, rows spread over OpenMP threads when
 * PARALLEL and there are at least PAR_MIN logits. Every combination of
 * knob values is correct to the spec's tolerance.
 */
#include <math.h>
#include <stdint.h>

#define PARALLEL 1   // @knob layer=parallel values=0,1 "distribute rows across OpenMP threads"
#define PAR_MIN 32768 // @knob layer=parallel values=4096,32768,262144 "fewest logits worth an OpenMP region"
#define SIMD 1       // @knob layer=vectorize values=0,1 "omp simd on the max and exp-sum loops"
#define ONLINE 0     // @knob layer=algorithm values=0,1 "0 max pass then exp-sum pass, 1 one online max+sum pass"

#define CE_PRAGMA_(x) _Pragma(#x)
#define CE_PRAGMA(x) CE_PRAGMA_(x)
#if SIMD
#define CE_SIMD(clauses) CE_PRAGMA(omp simd clauses)
#else
#define CE_SIMD(clauses)
#endif

static double ce_row(const float *restrict l, int64_t classes, int64_t t)
{
#if ONLINE
    float m = -INFINITY, s = 0.0f;
    for (int64_t j = 0; j < classes; j++) {
        if (l[j] > m) {
            s = s * expf(m - l[j]) + 1.0f;
            m = l[j];
        } else {
            s += expf(l[j] - m);
        }
    }
#else
    float m = l[0];
    CE_SIMD(reduction(max : m))
    for (int64_t j = 1; j < classes; j++)
        m = l[j] > m ? l[j] : m;
    float s = 0.0f;
    CE_SIMD(reduction(+ : s))
    for (int64_t j = 0; j < classes; j++)
        s += expf(l[j] - m);
#endif
    return (double)m + log((double)s) - (double)l[t];
}

void cross_entropy(const float *logits, const int64_t *target, float *y,
                   int64_t rows, int64_t classes)
{
    double total = 0.0;
    if (PARALLEL && rows > 1 && rows * classes >= PAR_MIN) {
#pragma omp parallel for schedule(static) reduction(+ : total)
        for (int64_t r = 0; r < rows; r++)
            total += ce_row(logits + r * classes, classes, target[r]);
    } else {
        for (int64_t r = 0; r < rows; r++)
            total += ce_row(logits + r * classes, classes, target[r]);
    }
    y[0] = (float)(total / (double)rows);
}
