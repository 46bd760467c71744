/*
 * matmul_tb — seed kernel. C[m x n] = A * B^T, A row-major [m x k], B
 * stored row-major [n x k], fp32.
 *
 * Every output is the dot product of two contiguous rows, A[i] and B[j].
 * C is cut into BM x BN tiles, which are the OpenMP work items, so a tile's
 * rows of A and B stay in cache while they are reused. Within a tile, JU
 * dot products (one row of A against JU rows of B) are computed together
 * so each load of A[i][p] feeds JU multiply-adds; with SIMD the sums are
 * `omp simd` reductions (lane-wise partial sums, a different order than
 * the naive loop), without it they are plain left-to-right sums.
 */
#include <stdint.h>

#define PARALLEL 1   // @knob layer=parallel values=0,1 "distribute C tiles across OpenMP threads"
#define BM 16        // @knob layer=tiling values=4,16,64 "rows of C per tile"
#define BN 64        // @knob layer=tiling values=16,64,256 "columns of C per tile"
#define JU 4         // @knob layer=instruction values=1,2,4 "dot products computed together (rows of B per pass)"
#define SIMD 1       // @knob layer=vectorize values=0,1 "omp simd reductions for the dot products"

#define TB_PRAGMA_(x) _Pragma(#x)
#define TB_PRAGMA(x) TB_PRAGMA_(x)
#if SIMD
#define TB_SIMD(clauses) TB_PRAGMA(omp simd clauses)
#else
#define TB_SIMD(clauses)
#endif

static int64_t tb_min(int64_t x, int64_t y) { return x < y ? x : y; }

static float tb_dot1(const float *restrict x, const float *restrict y,
                     int64_t k)
{
    float s = 0.0f;
    TB_SIMD(reduction(+ : s))
    for (int64_t p = 0; p < k; p++)
        s += x[p] * y[p];
    return s;
}

/* out[0..JU) = dot(x, y + u * k) for u < JU (JU of 2 or 4). */
static void tb_dotn(const float *restrict x, const float *restrict y,
                    int64_t k, float *restrict out)
{
    const float *y0 = y, *y1 = y + k;
    float s0 = 0.0f, s1 = 0.0f;
#if JU == 4
    const float *y2 = y + 2 * k, *y3 = y + 3 * k;
    float s2 = 0.0f, s3 = 0.0f;
    TB_SIMD(reduction(+ : s0, s1, s2, s3))
    for (int64_t p = 0; p < k; p++) {
        const float xp = x[p];
        s0 += xp * y0[p];
        s1 += xp * y1[p];
        s2 += xp * y2[p];
        s3 += xp * y3[p];
    }
    out[2] = s2;
    out[3] = s3;
#else
    TB_SIMD(reduction(+ : s0, s1))
    for (int64_t p = 0; p < k; p++) {
        s0 += x[p] * y0[p];
        s1 += x[p] * y1[p];
    }
#endif
    out[0] = s0;
    out[1] = s1;
}

static void tb_tile(const float *a, const float *b, float *c, int64_t m,
                    int64_t n, int64_t k, int64_t ib, int64_t jb)
{
    const int64_t i0 = ib * BM, i1 = tb_min(m, i0 + BM);
    const int64_t j0 = jb * BN, j1 = tb_min(n, j0 + BN);
    for (int64_t i = i0; i < i1; i++) {
        int64_t j = j0;
        if (JU > 1)
            for (; j + JU <= j1; j += JU)
                tb_dotn(a + i * k, b + j * k, k, c + i * n + j);
        for (; j < j1; j++)
            c[i * n + j] = tb_dot1(a + i * k, b + j * k, k);
    }
}

void matmul_tb(const float *a, const float *b, float *c, int64_t m, int64_t n,
               int64_t k)
{
    const int64_t mb = (m + BM - 1) / BM, nb = (n + BN - 1) / BN;
    /* Small problems run serially without any OpenMP call (about 1 us). */
    if (!PARALLEL || mb * nb == 1 || m * n * k < 65536) {
        for (int64_t w = 0; w < mb * nb; w++)
            tb_tile(a, b, c, m, n, k, w / nb, w % nb);
        return;
    }
#pragma omp parallel for collapse(2) schedule(static)
    for (int64_t ib = 0; ib < mb; ib++)
        for (int64_t jb = 0; jb < nb; jb++)
            tb_tile(a, b, c, m, n, k, ib, jb);
}
