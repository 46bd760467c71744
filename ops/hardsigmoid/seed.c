/*
 * hardsigmoid — seed kernel: y[i] = f(x[i]) with f as in op.json, in fp32.
 *
 * With PARALLEL the array is cut into blocks of BLOCK elements, the unit of
 * OpenMP work; without it, or when n fits one block, one serial pass runs
 * with no OpenMP region (whose fork/join would dominate small n). Inside a
 * block the loop steps UNROLL elements at a time (the inner constant-trip
 * loop is fully unrolled by the compiler) and carries `omp simd` when SIMD
 * is 1, otherwise it is left to the auto-vectorizer; a scalar loop handles
 * the block's tail. Elements are independent, so
 * every combination of knob values computes the same result.
 */
#include <math.h>
#include <stdint.h>

#define PARALLEL 1    // @knob layer=parallel values=0,1 "split the blocks across OpenMP threads"
#define BLOCK 16384   // @knob layer=tiling values=4096,16384,65536 "elements per OpenMP work item"
#define SIMD 1        // @knob layer=vectorize values=0,1 "omp simd on the element loop"
#define UNROLL 1      // @knob layer=instruction values=1,2,4,8 "elements per loop iteration"

#define HARDSIGMOID_PRAGMA_(x) _Pragma(#x)
#define HARDSIGMOID_PRAGMA(x) HARDSIGMOID_PRAGMA_(x)
#if SIMD
#define HARDSIGMOID_SIMD HARDSIGMOID_PRAGMA(omp simd)
#else
#define HARDSIGMOID_SIMD
#endif

static inline float hardsigmoid_f(float v)
{
    return v <= -3.0f ? 0.0f : v >= 3.0f ? 1.0f : (v + 3.0f) / 6.0f;
}

/* One block of len elements. */
static void hardsigmoid_block(const float *restrict x, float *restrict y,
                              int64_t len)
{
    const int64_t body = len - len % UNROLL;
    HARDSIGMOID_SIMD
    for (int64_t i = 0; i < body; i += UNROLL)
        for (int u = 0; u < UNROLL; u++)
            y[i + u] = hardsigmoid_f(x[i + u]);
    for (int64_t i = body; i < len; i++)
        y[i] = hardsigmoid_f(x[i]);
}

void hardsigmoid(const float *x, float *y, int64_t n)
{
    const int64_t nblocks = (n + BLOCK - 1) / BLOCK;
    if (!PARALLEL || nblocks == 1) {
        /* no OpenMP region at all: its fork/join would dominate small n */
        hardsigmoid_block(x, y, n);
        return;
    }
#pragma omp parallel for schedule(static)
    for (int64_t b = 0; b < nblocks; b++) {
        const int64_t start = b * (int64_t)BLOCK;
        const int64_t len = n - start < BLOCK ? n - start : BLOCK;
        hardsigmoid_block(x + start, y + start, len);
    }
}
