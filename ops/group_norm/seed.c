/*
 * group_norm — seed kernel, NCHW flattened as [n x c x hw] with
 * c = groups * cpg; group g of sample i is the contiguous block of
 * cpg * hw elements at ((i * groups + g) * cpg) * hw.
 *
 *   y = (x - mu) / sqrt(var + eps) * gamma[ch] + beta[ch]
 *
 * The work items are the n * groups blocks. Per block: the mean and the
 * centred sum of squares (accumulated in ACC, float or double; SIMD lets
 * the compiler split them across vector lanes with omp simd), then one
 * output pass per channel of the group. FOLD 1 folds 1/sd and gamma into
 * one scale per channel (y = (x - mu) * s + beta); FOLD 0 evaluates the
 * formula as written. (Folding mu into a shift, y = x * s + t, is unsound:
 * in a block of nearly equal values x * s and t cancel catastrophically.) Blocks go to OpenMP threads once the
 * tensor has at least PAR_MIN elements. Every combination of knob values
 * is correct to the spec's tolerance.
 */
#include <math.h>
#include <stdint.h>

#define PARALLEL 1     // @knob layer=parallel values=0,1 "distribute the n*groups blocks across OpenMP threads"
#define PAR_MIN 32768  // @knob layer=parallel values=0,32768,262144 "fewest elements for which the blocks go parallel"
#define SIMD 1         // @knob layer=vectorize values=0,1 "omp simd on the two reductions and the output loops"
#define ACC float      // @knob layer=algorithm values=float,double "accumulator type for the mean and variance sums"
#define FOLD 1         // @knob layer=instruction values=0,1 "fold 1/sd and gamma into one scale per channel"

#define GN_PRAGMA_(x) _Pragma(#x)
#define GN_PRAGMA(x) GN_PRAGMA_(x)
#if SIMD
#define GN_SIMD(clauses) GN_PRAGMA(omp simd clauses)
#else
#define GN_SIMD(clauses)
#endif

static void group_norm_block(const float *restrict x, const float *restrict gamma,
                             const float *restrict beta, float *restrict y,
                             int64_t cpg, int64_t hw, float eps)
{
    const int64_t len = cpg * hw;
    ACC s = 0;
    GN_SIMD(reduction(+ : s))
    for (int64_t k = 0; k < len; k++)
        s += (ACC)x[k];
    const ACC mu = s / (ACC)len;
    ACC ss = 0;
    GN_SIMD(reduction(+ : ss))
    for (int64_t k = 0; k < len; k++)
        ss += ((ACC)x[k] - mu) * ((ACC)x[k] - mu);
    const float inv = (float)(1 / sqrt((double)(ss / (ACC)len) + (double)eps));
    const float muf = (float)mu;
    for (int64_t ch = 0; ch < cpg; ch++) {
        const float *xc = x + ch * hw;
        float *yc = y + ch * hw;
#if FOLD
        const float sc = inv * gamma[ch], b = beta[ch];
        GN_SIMD()
        for (int64_t p = 0; p < hw; p++)
            yc[p] = (xc[p] - muf) * sc + b;
#else
        const float g = gamma[ch], b = beta[ch];
        GN_SIMD()
        for (int64_t p = 0; p < hw; p++)
            yc[p] = (xc[p] - muf) * inv * g + b;
#endif
    }
}

void group_norm(const float *x, const float *gamma, const float *beta,
                float *y, int64_t n, int64_t groups, int64_t cpg, int64_t hw,
                float eps)
{
    const int64_t blocks = n * groups, len = cpg * hw;
    /* An inactive OpenMP region still costs about a microsecond, so small
     * inputs run the plain loop without entering one. */
    if (PARALLEL && blocks > 1 && blocks * len >= PAR_MIN) {
#pragma omp parallel for schedule(static)
        for (int64_t q = 0; q < blocks; q++) {
            const int64_t g = q % groups;
            group_norm_block(x + q * len, gamma + g * cpg, beta + g * cpg,
                             y + q * len, cpg, hw, eps);
        }
    } else {
        for (int64_t q = 0; q < blocks; q++) {
            const int64_t g = q % groups;
            group_norm_block(x + q * len, gamma + g * cpg, beta + g * cpg,
                             y + q * len, cpg, hw, eps);
        }
    }
}
