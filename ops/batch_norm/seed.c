/*
 * batch_norm — seed kernel, inference mode, NCHW flattened as
 * [n x c x hw].
 *
 *   y[i][ch][p] = (x[i][ch][p] - mean[ch]) / sqrt(var[ch] + eps) * gamma[ch] + beta[ch]
 *
 * The work items are the n * c planes of hw elements, each with one
 * channel's parameters. FOLD 1 folds the channel's parameters into one
 * scale and shift (y = x * s + t, one multiply-add per element); FOLD 0
 * evaluates the formula as written with a precomputed 1/sqrt. SIMD asks
 * the compiler to vectorize the plane loop with omp simd. Planes go to
 * OpenMP threads once the tensor has at least PAR_MIN elements. Every
 * combination of knob values is correct to the spec's tolerance.
 */
#include <math.h>
#include <stdint.h>

#define PARALLEL 1     // @knob layer=parallel values=0,1 "distribute the n*c planes across OpenMP threads"
#define PAR_MIN 32768  // @knob layer=parallel values=0,32768,262144 "fewest elements for which the planes go parallel"
#define SIMD 1         // @knob layer=vectorize values=0,1 "omp simd on the plane loop"
#define FOLD 1         // @knob layer=algorithm values=0,1 "fold mean, var, gamma, beta into one scale and shift per channel"

#define BN_PRAGMA_(x) _Pragma(#x)
#define BN_PRAGMA(x) BN_PRAGMA_(x)
#if SIMD
#define BN_SIMD(clauses) BN_PRAGMA(omp simd clauses)
#else
#define BN_SIMD(clauses)
#endif

static void batch_norm_plane(const float *restrict x, float *restrict y,
                             int64_t hw, float m, float v, float g, float b,
                             float eps)
{
    const float inv = 1.0f / sqrtf(v + eps);
#if FOLD
    const float s = g * inv;
    const float t = b - m * s;
    BN_SIMD()
    for (int64_t p = 0; p < hw; p++)
        y[p] = x[p] * s + t;
#else
    BN_SIMD()
    for (int64_t p = 0; p < hw; p++)
        y[p] = (x[p] - m) * inv * g + b;
#endif
}

void batch_norm(const float *x, const float *mean, const float *var,
                const float *gamma, const float *beta, float *y, int64_t n,
                int64_t c, int64_t hw, float eps)
{
    const int64_t planes = n * c;
    /* An inactive OpenMP region still costs about a microsecond, so small
     * inputs run the plain loop without entering one. */
    if (PARALLEL && planes > 1 && planes * hw >= PAR_MIN) {
#pragma omp parallel for schedule(static)
        for (int64_t q = 0; q < planes; q++) {
            const int64_t ch = q % c;
            batch_norm_plane(x + q * hw, y + q * hw, hw, mean[ch], var[ch],
                             gamma[ch], beta[ch], eps);
        }
    } else {
        for (int64_t q = 0; q < planes; q++) {
            const int64_t ch = q % c;
            batch_norm_plane(x + q * hw, y + q * hw, hw, mean[ch], var[ch],
                             gamma[ch], beta[ch], eps);
        }
    }
}
