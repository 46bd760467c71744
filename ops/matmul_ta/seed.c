/*
 * matmul_ta — seed kernel. C[m x n] = A^T * B, A stored row-major [k x m],
 * B row-major [k x n], fp32.
 *
 * C is cut into BM x BN tiles, which are the OpenMP work items; for each
 * tile the k dimension is walked in panels of BK. Within a panel the loop
 * order is i-p-j: A[p][i] is a scalar (a strided read down a column of the
 * stored A) and the row B[p][j0..j1) is streamed with unit stride, with
 * KUNROLL steps of p fused into one pass over a row of C. With PACK the
 * BM x BK block of A is first transposed into a per-thread buffer, so the
 * scalars come from contiguous memory. Every element adds its products in
 * increasing p, like the naive loop.
 */
#include <stdint.h>
#include <stdlib.h>

#define PARALLEL 1   // @knob layer=parallel values=0,1 "distribute C tiles across OpenMP threads"
#define BM 32        // @knob layer=tiling values=8,32,128 "rows of C per tile"
#define BN 256       // @knob layer=tiling values=64,256,512 "columns of C per tile"
#define BK 128       // @knob layer=tiling values=64,128,256 "depth of the k panel"
#define PACK 1       // @knob layer=memory values=0,1 "transpose each A block into a contiguous per-thread buffer"
#define KUNROLL 4    // @knob layer=instruction values=1,2,4 "k steps fused into one pass over a row of C"

static int64_t ta_min(int64_t x, int64_t y) { return x < y ? x : y; }

/* c[mi x nj] += A^T b where A(i, p) = a[p * sap + i * sai]. */
static void ta_kernel(const float *restrict a, int64_t sap, int64_t sai,
                      const float *restrict b, int64_t ldb,
                      float *restrict c, int64_t ldc,
                      int64_t mi, int64_t nj, int64_t kp)
{
    for (int64_t i = 0; i < mi; i++) {
        float *restrict ci = c + i * ldc;
        const float *ai = a + i * sai;
        int64_t p = 0;
        for (; p + KUNROLL <= kp; p += KUNROLL) {
            float av[KUNROLL];
            for (int u = 0; u < KUNROLL; u++)
                av[u] = ai[(p + u) * sap];
            const float *bp = b + p * ldb;
            for (int64_t j = 0; j < nj; j++) {
                float acc = ci[j];
                for (int u = 0; u < KUNROLL; u++)
                    acc += av[u] * bp[u * ldb + j];
                ci[j] = acc;
            }
        }
        for (; p < kp; p++) {
            const float aip = ai[p * sap];
            for (int64_t j = 0; j < nj; j++)
                ci[j] += aip * b[p * ldb + j];
        }
    }
}

static void ta_tile(const float *a, const float *b, float *c, float *pack,
                    int64_t m, int64_t n, int64_t k, int64_t ib, int64_t jb)
{
    const int64_t i0 = ib * BM, i1 = ta_min(m, i0 + BM);
    const int64_t j0 = jb * BN, j1 = ta_min(n, j0 + BN);
    for (int64_t i = i0; i < i1; i++)
        for (int64_t j = j0; j < j1; j++)
            c[i * n + j] = 0.0f;
    for (int64_t p0 = 0; p0 < k; p0 += BK) {
        const int64_t kp = ta_min(k, p0 + BK) - p0;
        const float *ab = a + p0 * m + i0;
        int64_t sap = m, sai = 1;
        if (pack) {
            for (int64_t i = 0; i < i1 - i0; i++)
                for (int64_t p = 0; p < kp; p++)
                    pack[i * kp + p] = ab[p * m + i];
            ab = pack;
            sap = 1;
            sai = kp;
        }
        ta_kernel(ab, sap, sai, b + p0 * n + j0, n, c + i0 * n + j0, n,
                  i1 - i0, j1 - j0, kp);
    }
}

void matmul_ta(const float *a, const float *b, float *c, int64_t m, int64_t n,
               int64_t k)
{
    const int64_t mb = (m + BM - 1) / BM, nb = (n + BN - 1) / BN;
    /* Small problems run serially without any OpenMP call (about 1 us). */
    if (!PARALLEL || mb * nb == 1 || m * n * k < 65536) {
        float *pack = PACK ? malloc(sizeof(float) * BM * BK) : NULL;
        for (int64_t w = 0; w < mb * nb; w++)
            ta_tile(a, b, c, pack, m, n, k, w / nb, w % nb);
        free(pack);
        return;
    }
#pragma omp parallel
    {
        /* NULL when PACK is off or malloc fails: then A is read in place. */
        float *pack = PACK ? malloc(sizeof(float) * BM * BK) : NULL;
#pragma omp for collapse(2) schedule(static)
        for (int64_t ib = 0; ib < mb; ib++)
            for (int64_t jb = 0; jb < nb; jb++)
                ta_tile(a, b, c, pack, m, n, k, ib, jb);
        free(pack);
    }
}
