/*
 * mul — seed kernel. y[i] = a[i] * b[i].
 *
 * With PARALLEL the arrays are cut into blocks of BLOCK elements, the unit
 * of OpenMP work; without it, or when n fits one block, one serial pass
 * runs with no OpenMP region (whose fork/join would dominate small n).
 * Inside a block the loop steps UNROLL elements at a time (the inner
 * constant-trip loop is fully unrolled) and carries `omp simd` when SIMD
 * is 1. Every combination computes one fp32 multiply per element: exact.
 */
#include <stdint.h>

#define PARALLEL 1    // @knob layer=parallel values=0,1 "split the blocks across OpenMP threads"
#define BLOCK 16384   // @knob layer=tiling values=4096,16384,65536 "elements per OpenMP work item"
#define SIMD 1        // @knob layer=vectorize values=0,1 "omp simd on the element loop"
#define UNROLL 1      // @knob layer=instruction values=1,2,4,8 "elements per loop iteration"

#define MUL_PRAGMA_(x) _Pragma(#x)
#define MUL_PRAGMA(x) MUL_PRAGMA_(x)
#if SIMD
#define MUL_SIMD MUL_PRAGMA(omp simd)
#else
#define MUL_SIMD
#endif

/* One block of len elements. */
static void mul_block(const float *restrict a, const float *restrict b,
                      float *restrict y, int64_t len)
{
    const int64_t body = len - len % UNROLL;
    MUL_SIMD
    for (int64_t i = 0; i < body; i += UNROLL)
        for (int u = 0; u < UNROLL; u++)
            y[i + u] = a[i + u] * b[i + u];
    for (int64_t i = body; i < len; i++)
        y[i] = a[i] * b[i];
}

void mul(const float *a, const float *b, float *y, int64_t n)
{
    const int64_t nblocks = (n + BLOCK - 1) / BLOCK;
    if (!PARALLEL || nblocks == 1) {
        mul_block(a, b, y, n);
        return;
    }
#pragma omp parallel for schedule(static)
    for (int64_t blk = 0; blk < nblocks; blk++) {
        const int64_t start = blk * (int64_t)BLOCK;
        const int64_t len = n - start < BLOCK ? n - start : BLOCK;
        mul_block(a + start, b + start, y + start, len);
    }
}
