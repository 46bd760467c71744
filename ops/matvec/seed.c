/*
 * matvec — seed kernel. y[m] = A[m x k] * x[k], A row-major fp32.
 *
 * Rows are the parallel dimension (blocks of BLOCK rows per OpenMP work
 * item). RU rows are reduced together so each load of x[p] feeds RU
 * multiply-adds; with SIMD the dot products are `omp simd` reductions
 * (lane-wise partial sums), without it plain left-to-right sums. Small
 * problems (under 64k elements of A) run on one thread.
 */
#include <stdint.h>

#define PARALLEL 1   // @knob layer=parallel values=0,1 "distribute row blocks across OpenMP threads"
#define BLOCK 64     // @knob layer=tiling values=16,64,256 "rows per OpenMP work item"
#define RU 4         // @knob layer=instruction values=1,2,4 "rows reduced together per pass over x"
#define SIMD 1       // @knob layer=vectorize values=0,1 "omp simd reductions for the dot products"

#define MV_PRAGMA_(x) _Pragma(#x)
#define MV_PRAGMA(x) MV_PRAGMA_(x)
#if SIMD
#define MV_SIMD(clauses) MV_PRAGMA(omp simd clauses)
#else
#define MV_SIMD(clauses)
#endif

static float mv_dot1(const float *restrict r, const float *restrict x,
                     int64_t k)
{
    float s = 0.0f;
    MV_SIMD(reduction(+ : s))
    for (int64_t p = 0; p < k; p++)
        s += r[p] * x[p];
    return s;
}

/* y[0..RU) = rows r .. r + RU - 1 of A dotted with x (RU of 2 or 4). */
static void mv_dotn(const float *restrict r, const float *restrict x,
                    int64_t k, float *restrict y)
{
    const float *r0 = r, *r1 = r + k;
    float s0 = 0.0f, s1 = 0.0f;
#if RU == 4
    const float *r2 = r + 2 * k, *r3 = r + 3 * k;
    float s2 = 0.0f, s3 = 0.0f;
    MV_SIMD(reduction(+ : s0, s1, s2, s3))
    for (int64_t p = 0; p < k; p++) {
        const float xp = x[p];
        s0 += r0[p] * xp;
        s1 += r1[p] * xp;
        s2 += r2[p] * xp;
        s3 += r3[p] * xp;
    }
    y[2] = s2;
    y[3] = s3;
#else
    MV_SIMD(reduction(+ : s0, s1))
    for (int64_t p = 0; p < k; p++) {
        s0 += r0[p] * x[p];
        s1 += r1[p] * x[p];
    }
#endif
    y[0] = s0;
    y[1] = s1;
}

/* Rows [i0, i1) of y. */
static void mv_rows(const float *a, const float *x, float *y, int64_t k,
                    int64_t i0, int64_t i1)
{
    int64_t i = i0;
    if (RU > 1)
        for (; i + RU <= i1; i += RU)
            mv_dotn(a + i * k, x, k, y + i);
    for (; i < i1; i++)
        y[i] = mv_dot1(a + i * k, x, k);
}

void matvec(const float *a, const float *x, float *y, int64_t m, int64_t k)
{
    const int64_t nb = (m + BLOCK - 1) / BLOCK;
    /* Small problems run serially without any OpenMP call (about 1 us). */
    if (!PARALLEL || nb == 1 || m * k < 65536) {
        mv_rows(a, x, y, k, 0, m);
        return;
    }
#pragma omp parallel for schedule(static)
    for (int64_t b = 0; b < nb; b++)
        mv_rows(a, x, y, k, b * BLOCK, b * BLOCK + BLOCK < m ? b * BLOCK + BLOCK : m);
}
