/*
 * masked_scale — seed kernel. y[i] = x[i] * mask[i] * scale, mask in {0,1}.
 *
 * With PARALLEL the arrays are cut into blocks of BLOCK elements, the unit
 * of OpenMP work; without it, or when n fits one block, one serial pass
 * runs with no OpenMP region. Inside a block the loop steps UNROLL
 * elements at a time and carries `omp simd` when SIMD is 1. SELECT picks
 * the formulation: 0 multiplies by the mask converted to float, 1 selects
 * x * scale or 0 with a comparison (branch-free blend when vectorized).
 * Both round x * scale once, so every combination is exact.
 */
#include <stdint.h>

#define PARALLEL 1    // @knob layer=parallel values=0,1 "split the blocks across OpenMP threads"
#define BLOCK 16384   // @knob layer=tiling values=4096,16384,65536 "elements per OpenMP work item"
#define SIMD 1        // @knob layer=vectorize values=0,1 "omp simd on the element loop"
#define UNROLL 1      // @knob layer=instruction values=1,2,4,8 "elements per loop iteration"
#define SELECT 0      // @knob layer=algorithm values=0,1 "0 multiply by (float)mask, 1 select x*scale or 0"

#define MSCALE_PRAGMA_(x) _Pragma(#x)
#define MSCALE_PRAGMA(x) MSCALE_PRAGMA_(x)
#if SIMD
#define MSCALE_SIMD MSCALE_PRAGMA(omp simd)
#else
#define MSCALE_SIMD
#endif

static inline float masked_scale_f(float v, int32_t m, float scale)
{
#if SELECT
    return m != 0 ? v * scale : 0.0f;
#else
    return v * (float)m * scale;
#endif
}

/* One block of len elements. */
static void masked_scale_block(const float *restrict x,
                               const int32_t *restrict mask,
                               float *restrict y, int64_t len, float scale)
{
    const int64_t body = len - len % UNROLL;
    MSCALE_SIMD
    for (int64_t i = 0; i < body; i += UNROLL)
        for (int u = 0; u < UNROLL; u++)
            y[i + u] = masked_scale_f(x[i + u], mask[i + u], scale);
    for (int64_t i = body; i < len; i++)
        y[i] = masked_scale_f(x[i], mask[i], scale);
}

void masked_scale(const float *x, const int32_t *mask, float *y, int64_t n,
                  float scale)
{
    const int64_t nblocks = (n + BLOCK - 1) / BLOCK;
    if (!PARALLEL || nblocks == 1) {
        masked_scale_block(x, mask, y, n, scale);
        return;
    }
#pragma omp parallel for schedule(static)
    for (int64_t b = 0; b < nblocks; b++) {
        const int64_t start = b * (int64_t)BLOCK;
        const int64_t len = n - start < BLOCK ? n - start : BLOCK;
        masked_scale_block(x + start, mask + start, y + start, len, scale);
    }
}
