/*
 * matmul — seed kernel. C[m x n] = A[m x k] * B[k x n], row-major fp32.
 *
 * Cache blocking: C is cut into BM x BN tiles, which are the OpenMP work
 * items (each tile is owned by one thread, so there are no races); for each
 * tile the k dimension is walked in panels of BK. With PACK the BK x BN
 * panel of B is first copied into a contiguous per-thread buffer so the
 * inner loop streams unit-stride memory with a short leading dimension.
 * The micro-kernel is the i-p-j loop order (unit stride over j, which the
 * compiler vectorizes), with KUNROLL steps of p fused into one pass over a
 * row of C so each C element is loaded and stored once per KUNROLL
 * multiply-adds. The products are added in increasing p for every element,
 * exactly like the naive loop, so every knob combination gives the same
 * result up to FMA contraction.
 */
#include <stdint.h>
#include <stdlib.h>

#define PARALLEL 1   // @knob layer=parallel values=0,1 "distribute C tiles across OpenMP threads"
#define BM 32        // @knob layer=tiling values=8,32,64,128 "rows of C per tile"
#define BN 256       // @knob layer=tiling values=64,128,256,512 "columns of C per tile"
#define BK 128       // @knob layer=tiling values=64,128,256 "depth of the k panel"
#define PACK 0       // @knob layer=memory values=0,1 "copy each B panel into a contiguous per-thread buffer"
#define KUNROLL 4    // @knob layer=instruction values=1,2,4,8 "k steps fused into one pass over a row of C"

static int64_t mm_min(int64_t x, int64_t y) { return x < y ? x : y; }

/* c[mi x nj] += a[mi x kp] * b[kp x nj], leading dimensions lda, ldb, ldc. */
static void mm_kernel(const float *restrict a, int64_t lda,
                      const float *restrict b, int64_t ldb,
                      float *restrict c, int64_t ldc,
                      int64_t mi, int64_t nj, int64_t kp)
{
    for (int64_t i = 0; i < mi; i++) {
        float *restrict ci = c + i * ldc;
        const float *ai = a + i * lda;
        int64_t p = 0;
        for (; p + KUNROLL <= kp; p += KUNROLL) {
            float av[KUNROLL];
            for (int u = 0; u < KUNROLL; u++)
                av[u] = ai[p + u];
            const float *bp = b + p * ldb;
            for (int64_t j = 0; j < nj; j++) {
                float acc = ci[j];
                for (int u = 0; u < KUNROLL; u++)
                    acc += av[u] * bp[u * ldb + j];
                ci[j] = acc;
            }
        }
        for (; p < kp; p++) {
            const float aip = ai[p];
            const float *bp = b + p * ldb;
            for (int64_t j = 0; j < nj; j++)
                ci[j] += aip * bp[j];
        }
    }
}

void matmul(const float *a, const float *b, float *c, int64_t m, int64_t n,
            int64_t k)
{
    const int64_t mb = (m + BM - 1) / BM, nb = (n + BN - 1) / BN;
#pragma omp parallel if (PARALLEL && mb * nb > 1)
    {
        /* NULL when PACK is off or malloc fails: then B is used in place. */
        float *pack = PACK ? malloc(sizeof(float) * BK * BN) : NULL;
#pragma omp for collapse(2) schedule(static)
        for (int64_t ib = 0; ib < mb; ib++)
            for (int64_t jb = 0; jb < nb; jb++) {
                const int64_t i0 = ib * BM, i1 = mm_min(m, i0 + BM);
                const int64_t j0 = jb * BN, j1 = mm_min(n, j0 + BN);
                for (int64_t i = i0; i < i1; i++)
                    for (int64_t j = j0; j < j1; j++)
                        c[i * n + j] = 0.0f;
                for (int64_t p0 = 0; p0 < k; p0 += BK) {
                    const int64_t p1 = mm_min(k, p0 + BK);
                    const float *bt = b + p0 * n + j0;
                    int64_t ldb = n;
                    if (pack) {
                        for (int64_t p = p0; p < p1; p++)
                            for (int64_t j = j0; j < j1; j++)
                                pack[(p - p0) * (j1 - j0) + (j - j0)] = b[p * n + j];
                        bt = pack;
                        ldb = j1 - j0;
                    }
                    mm_kernel(a + i0 * k + p0, k, bt, ldb, c + i0 * n + j0, n,
                              i1 - i0, j1 - j0, p1 - p0);
                }
            }
        free(pack);
    }
}
