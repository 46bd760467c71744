/*
 * bmm — seed kernel. C[b] = A[b] * B[b] for every batch index b, row-major
 * fp32.
 *
 * The work items are (batch entry, BM x BN tile of C) pairs, collapsed
 * into one OpenMP loop, so both many small matrices and a few large ones
 * spread across threads. For each tile the k dimension is walked in panels
 * of BK; the micro-kernel is the i-p-j loop order (unit stride over j)
 * with KUNROLL steps of p fused into one pass over a row of C. Every
 * element adds its products in increasing p, like the naive loop. Small
 * problems (under 64k multiply-adds) run on one thread.
 */
#include <stdint.h>

#define PARALLEL 1   // @knob layer=parallel values=0,1 "distribute (batch, tile) work items across OpenMP threads"
#define BM 32        // @knob layer=tiling values=8,32,128 "rows of C per tile"
#define BN 128       // @knob layer=tiling values=32,128,512 "columns of C per tile"
#define BK 128       // @knob layer=tiling values=64,128,512 "depth of the k panel"
#define KUNROLL 4    // @knob layer=instruction values=1,2,4,8 "k steps fused into one pass over a row of C"

static int64_t bmm_min(int64_t x, int64_t y) { return x < y ? x : y; }

/* c[mi x nj] += a[mi x kp] * b[kp x nj], leading dimensions lda, ldb, ldc. */
static void bmm_kernel(const float *restrict a, int64_t lda,
                       const float *restrict b, int64_t ldb,
                       float *restrict c, int64_t ldc,
                       int64_t mi, int64_t nj, int64_t kp)
{
    for (int64_t i = 0; i < mi; i++) {
        float *restrict ci = c + i * ldc;
        const float *ai = a + i * lda;
        int64_t p = 0;
        for (; p + KUNROLL <= kp; p += KUNROLL) {
            const float *bp = b + p * ldb;
            for (int64_t j = 0; j < nj; j++) {
                float acc = ci[j];
                for (int u = 0; u < KUNROLL; u++)
                    acc += ai[p + u] * bp[u * ldb + j];
                ci[j] = acc;
            }
        }
        for (; p < kp; p++)
            for (int64_t j = 0; j < nj; j++)
                ci[j] += ai[p] * b[p * ldb + j];
    }
}

/* One BM x BN tile (ib, jb) of one m x n product. */
static void bmm_tile(const float *a, const float *b, float *c, int64_t m,
                     int64_t n, int64_t k, int64_t ib, int64_t jb)
{
    const int64_t i0 = ib * BM, i1 = bmm_min(m, i0 + BM);
    const int64_t j0 = jb * BN, j1 = bmm_min(n, j0 + BN);
    for (int64_t i = i0; i < i1; i++)
        for (int64_t j = j0; j < j1; j++)
            c[i * n + j] = 0.0f;
    for (int64_t p0 = 0; p0 < k; p0 += BK)
        bmm_kernel(a + i0 * k + p0, k, b + p0 * n + j0, n, c + i0 * n + j0,
                   n, i1 - i0, j1 - j0, bmm_min(k, p0 + BK) - p0);
}

/* Work item w: tile (w / nb) % mb, w % nb of batch entry w / (mb * nb). */
static void bmm_item(const float *a, const float *b, float *c, int64_t m,
                     int64_t n, int64_t k, int64_t mb, int64_t nb, int64_t w)
{
    const int64_t t = w / (mb * nb), ib = (w / nb) % mb, jb = w % nb;
    bmm_tile(a + t * m * k, b + t * k * n, c + t * m * n, m, n, k, ib, jb);
}

void bmm(const float *a, const float *b, float *c, int64_t batch, int64_t m,
         int64_t n, int64_t k)
{
    const int64_t mb = (m + BM - 1) / BM, nb = (n + BN - 1) / BN;
    const int64_t items = batch * mb * nb;
    /* Small problems run serially without any OpenMP call (about 1 us). */
    if (!PARALLEL || items == 1 || batch * m * n * k < 65536) {
        for (int64_t w = 0; w < items; w++)
            bmm_item(a, b, c, m, n, k, mb, nb, w);
        return;
    }
#pragma omp parallel for schedule(static)
    for (int64_t w = 0; w < items; w++)
        bmm_item(a, b, c, m, n, k, mb, nb, w);
}
