/*
 * instance_norm — seed kernel, NCHW flattened as [n x c x hw].
 *
 *   y[i][ch][p] = (x[i][ch][p] - mu) / sqrt(var + eps) * gamma[ch] + beta[ch]
 *
 * The work items are the n * c planes of hw elements. Per plane: the mean
 * and the centred sum of squares (accumulated in ACC, float or double;
 * SIMD lets the compiler split them across vector lanes with omp simd),
 * then one output pass. FOLD 1 folds 1/sd and gamma into one scale
 * (y = (x - mu) * s + beta); FOLD 0 evaluates the formula as written.
 * (Folding mu into a shift, y = x * s + t, is unsound: in a plane of
 * nearly equal values x * s and t cancel catastrophically.) Planes go to
 * OpenMP threads once the tensor has at least PAR_MIN elements. Every
 * combination of knob values is correct to the spec's tolerance.
 */
#include <math.h>
#include <stdint.h>

#define PARALLEL 1     // @knob layer=parallel values=0,1 "distribute the n*c planes across OpenMP threads"
#define PAR_MIN 32768  // @knob layer=parallel values=0,32768,262144 "fewest elements for which the planes go parallel"
#define SIMD 1         // @knob layer=vectorize values=0,1 "omp simd on the two reductions and the output loop"
#define ACC float      // @knob layer=algorithm values=float,double "accumulator type for the mean and variance sums"
#define FOLD 1         // @knob layer=instruction values=0,1 "fold 1/sd and gamma into one scale per plane"

#define IN_PRAGMA_(x) _Pragma(#x)
#define IN_PRAGMA(x) IN_PRAGMA_(x)
#if SIMD
#define IN_SIMD(clauses) IN_PRAGMA(omp simd clauses)
#else
#define IN_SIMD(clauses)
#endif

static void instance_norm_plane(const float *restrict x, float *restrict y,
                                int64_t hw, float g, float b, float eps)
{
    ACC s = 0;
    IN_SIMD(reduction(+ : s))
    for (int64_t p = 0; p < hw; p++)
        s += (ACC)x[p];
    const ACC mu = s / (ACC)hw;
    ACC ss = 0;
    IN_SIMD(reduction(+ : ss))
    for (int64_t p = 0; p < hw; p++)
        ss += ((ACC)x[p] - mu) * ((ACC)x[p] - mu);
    const float inv = (float)(1 / sqrt((double)(ss / (ACC)hw) + (double)eps));
    const float muf = (float)mu;
#if FOLD
    const float sc = inv * g;
    IN_SIMD()
    for (int64_t p = 0; p < hw; p++)
        y[p] = (x[p] - muf) * sc + b;
#else
    IN_SIMD()
    for (int64_t p = 0; p < hw; p++)
        y[p] = (x[p] - muf) * inv * g + b;
#endif
}

void instance_norm(const float *x, const float *gamma, const float *beta,
                   float *y, int64_t n, int64_t c, int64_t hw, float eps)
{
    const int64_t planes = n * c;
    /* An inactive OpenMP region still costs about a microsecond, so small
     * inputs run the plain loop without entering one. */
    if (PARALLEL && planes > 1 && planes * hw >= PAR_MIN) {
#pragma omp parallel for schedule(static)
        for (int64_t q = 0; q < planes; q++) {
            const int64_t ch = q % c;
            instance_norm_plane(x + q * hw, y + q * hw, hw, gamma[ch], beta[ch], eps);
        }
    } else {
        for (int64_t q = 0; q < planes; q++) {
            const int64_t ch = q % c;
            instance_norm_plane(x + q * hw, y + q * hw, hw, gamma[ch], beta[ch], eps);
        }
    }
}
