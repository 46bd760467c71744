/*
 * softmax_cross_entropy — seed kernel, one loss per row:
 *   loss[r] = sum_j labels[r][j] * (lse_r - l[r][j]),  lse_r = logsumexp(l[r])
 *
 * Per row: the maximum m, s = sum_j exp(l - m) (ONLINE 1 fuses both into
 * one pass that rescales the running sum when the maximum grows), then
 * one pass over logits and labels. FACTOR 1 uses the identity
 * sum_j p_j (lse - l_j) = lse * sum_j p_j - sum_j p_j l_j, two
 * independent sums in one pass, computed relative to m for accuracy:
 * (lse - m) * P - sum_j p_j (l_j - m). Sums are fp32, split across SIMD
 * lanes when SIMD; rows are the OpenMP work items when PARALLEL and there
 * are at least PAR_MIN logits. Every combination of knob values is
 * correct to the spec's tolerance.
 */
#include <math.h>
#include <stdint.h>

#define PARALLEL 1   // @knob layer=parallel values=0,1 "distribute rows across OpenMP threads"
#define PAR_MIN 32768 // @knob layer=parallel values=4096,32768,262144 "fewest logits worth an OpenMP region"
#define SIMD 1       // @knob layer=vectorize values=0,1 "omp simd on the max, exp-sum and label loops"
#define ONLINE 0     // @knob layer=algorithm values=0,1 "0 max pass then exp-sum pass, 1 one online max+sum pass"
#define FACTOR 0     // @knob layer=algorithm values=0,1 "1 factor the label sum as (lse-m)*sum(p) - sum(p*(l-m))"

#define SCE_PRAGMA_(x) _Pragma(#x)
#define SCE_PRAGMA(x) SCE_PRAGMA_(x)
#if SIMD
#define SCE_SIMD(clauses) SCE_PRAGMA(omp simd clauses)
#else
#define SCE_SIMD(clauses)
#endif

static float sce_row(const float *restrict l, const float *restrict p,
                     int64_t classes)
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
    SCE_SIMD(reduction(max : m))
    for (int64_t j = 1; j < classes; j++)
        m = l[j] > m ? l[j] : m;
    float s = 0.0f;
    SCE_SIMD(reduction(+ : s))
    for (int64_t j = 0; j < classes; j++)
        s += expf(l[j] - m);
#endif
    const float lsm = logf(s); /* lse - m */
#if FACTOR
    float ps = 0.0f, pl = 0.0f;
    SCE_SIMD(reduction(+ : ps, pl))
    for (int64_t j = 0; j < classes; j++) {
        ps += p[j];
        pl += p[j] * (l[j] - m);
    }
    return lsm * ps - pl;
#else
    float acc = 0.0f;
    SCE_SIMD(reduction(+ : acc))
    for (int64_t j = 0; j < classes; j++)
        acc += p[j] * (lsm - (l[j] - m));
    return acc;
#endif
}

void softmax_cross_entropy(const float *logits, const float *labels,
                           float *loss, int64_t rows, int64_t classes)
{
    if (PARALLEL && rows > 1 && rows * classes >= PAR_MIN) {
#pragma omp parallel for schedule(static)
        for (int64_t r = 0; r < rows; r++)
            loss[r] = sce_row(logits + r * classes, labels + r * classes, classes);
    } else {
        for (int64_t r = 0; r < rows; r++)
            loss[r] = sce_row(logits + r * classes, labels + r * classes, classes);
    }
}
