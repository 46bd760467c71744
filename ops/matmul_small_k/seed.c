/*
 * matmul_small_k — seed kernel. C[m x n] = A[m x k] * B[k x n], row-major
 * fp32, for large m, n and k of 1..16 (a rank-k update).
 *
 * C is cut into BM x BN tiles, which are the OpenMP work items (collapsed
 * over both tile indices, so a single wide row still spreads across
 * threads). For each row of a tile, BN accumulators live in a local array:
 * they start at zero, receive the k products (KUNROLL steps of p fused per
 * pass, unit stride over j, optionally `omp simd`), and are stored to C
 * once, so C is written exactly once and never read. Every element adds
 * its products in increasing p, like the naive loop. Products below 64k
 * multiply-adds run on one thread.
 */
#include <stdint.h>

#define PARALLEL 1   // @knob layer=parallel values=0,1 "distribute C tiles across OpenMP threads"
#define BM 8         // @knob layer=tiling values=1,8,32 "rows of C per tile"
#define BN 256       // @knob layer=tiling values=64,256,1024 "columns of C per tile (local accumulators)"
#define KUNROLL 1    // @knob layer=instruction values=1,2,4 "k steps fused into one pass over the accumulators"
#define SIMD 1       // @knob layer=vectorize values=0,1 "omp simd on the column loops"

#define SK_PRAGMA_(x) _Pragma(#x)
#define SK_PRAGMA(x) SK_PRAGMA_(x)
#if SIMD
#define SK_SIMD SK_PRAGMA(omp simd)
#else
#define SK_SIMD
#endif

static int64_t sk_min(int64_t x, int64_t y) { return x < y ? x : y; }

/* ci[0..nb) = sum_p ai[p] * b[p * ldb + j] for j < nb <= BN. */
static void sk_row(const float *restrict ai, const float *restrict b,
                   int64_t ldb, float *restrict ci, int64_t nb, int64_t k)
{
    float acc[BN];
    SK_SIMD
    for (int64_t j = 0; j < nb; j++)
        acc[j] = 0.0f;
    int64_t p = 0;
    for (; p + KUNROLL <= k; p += KUNROLL) {
        SK_SIMD
        for (int64_t j = 0; j < nb; j++) {
            float s = acc[j];
            for (int u = 0; u < KUNROLL; u++)
                s += ai[p + u] * b[(p + u) * ldb + j];
            acc[j] = s;
        }
    }
    for (; p < k; p++) {
        const float aip = ai[p];
        SK_SIMD
        for (int64_t j = 0; j < nb; j++)
            acc[j] += aip * b[p * ldb + j];
    }
    SK_SIMD
    for (int64_t j = 0; j < nb; j++)
        ci[j] = acc[j];
}

/* Tile w of the mb x nb tiles of C (row-major tile order). */
static void sk_tile(const float *a, const float *b, float *c, int64_t m,
                    int64_t n, int64_t k, int64_t nb, int64_t w)
{
    const int64_t i0 = w / nb * BM, i1 = sk_min(m, i0 + BM);
    const int64_t j0 = w % nb * BN, j1 = sk_min(n, j0 + BN);
    for (int64_t i = i0; i < i1; i++)
        sk_row(a + i * k, b + j0, n, c + i * n + j0, j1 - j0, k);
}

void matmul_small_k(const float *a, const float *b, float *c, int64_t m,
                    int64_t n, int64_t k)
{
    const int64_t mb = (m + BM - 1) / BM, nb = (n + BN - 1) / BN;
    /* Below about 64k multiply-adds waking the threads costs more than it
     * saves; the serial path makes no OpenMP call at all (about 1 us). */
    if (!PARALLEL || mb * nb == 1 || m * n * k < 65536) {
        for (int64_t w = 0; w < mb * nb; w++)
            sk_tile(a, b, c, m, n, k, nb, w);
        return;
    }
#pragma omp parallel for schedule(static)
    for (int64_t w = 0; w < mb * nb; w++)
        sk_tile(a, b, c, m, n, k, nb, w);
}
