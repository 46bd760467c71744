/*
 * matmul_tall_skinny — seed kernel. C[m x n] = A[m x k] * B[k x n],
 * row-major fp32, for large m and small n.
 *
 * Rows of C are the parallel dimension: blocks of BM rows are the OpenMP
 * work items. Two formulations (ALGO):
 *   0  per row, the n outputs (in column blocks of at most 64) accumulate
 *      in a local array while p walks the row of A: unit stride over j,
 *      KUNROLL steps of p fused per pass;
 *   1  B is first transposed into a [n x k] buffer, then every output is a
 *      dot product of two contiguous rows, summed with an `omp simd`
 *      reduction (a different summation order). If the buffer cannot be
 *      allocated, ALGO 0 runs instead.
 */
#include <stdint.h>
#include <stdlib.h>

#define PARALLEL 1   // @knob layer=parallel values=0,1 "distribute row blocks across OpenMP threads"
#define BM 64        // @knob layer=tiling values=16,64,256 "rows of C per work item"
#define ALGO 0       // @knob layer=algorithm values=0,1 "0 local-accumulator rows, 1 transpose B and take dot products"
#define KUNROLL 4    // @knob layer=instruction values=1,2,4 "k steps fused per pass (ALGO 0)"

#define TS_NB 64

static int64_t ts_min(int64_t x, int64_t y) { return x < y ? x : y; }

/* ci[0..nb) = sum_p ai[p] * b[p * ldb + j] for j < nb <= TS_NB. */
static void ts_row(const float *restrict ai, const float *restrict b,
                   int64_t ldb, float *restrict ci, int64_t nb, int64_t k)
{
    float acc[TS_NB];
    for (int64_t j = 0; j < nb; j++)
        acc[j] = 0.0f;
    int64_t p = 0;
    for (; p + KUNROLL <= k; p += KUNROLL) {
        for (int64_t j = 0; j < nb; j++) {
            float s = acc[j];
            for (int u = 0; u < KUNROLL; u++)
                s += ai[p + u] * b[(p + u) * ldb + j];
            acc[j] = s;
        }
    }
    for (; p < k; p++)
        for (int64_t j = 0; j < nb; j++)
            acc[j] += ai[p] * b[p * ldb + j];
    for (int64_t j = 0; j < nb; j++)
        ci[j] = acc[j];
}

/* ci[j] = dot(ai, bt[j]) for j < n; bt is B transposed, [n x k]. */
static void ts_dots(const float *restrict ai, const float *restrict bt,
                    float *restrict ci, int64_t n, int64_t k)
{
    for (int64_t j = 0; j < n; j++) {
        const float *bj = bt + j * k;
        float s = 0.0f;
#pragma omp simd reduction(+ : s)
        for (int64_t p = 0; p < k; p++)
            s += ai[p] * bj[p];
        ci[j] = s;
    }
}

static void ts_block(const float *a, const float *b, const float *bt,
                     float *c, int64_t i0, int64_t i1, int64_t n, int64_t k)
{
    for (int64_t i = i0; i < i1; i++) {
        if (bt) {
            ts_dots(a + i * k, bt, c + i * n, n, k);
            continue;
        }
        for (int64_t j0 = 0; j0 < n; j0 += TS_NB)
            ts_row(a + i * k, b + j0, n, c + i * n + j0,
                   ts_min(n - j0, TS_NB), k);
    }
}

void matmul_tall_skinny(const float *a, const float *b, float *c, int64_t m,
                        int64_t n, int64_t k)
{
    float *bt = ALGO == 1 ? malloc(sizeof(float) * (size_t)(n * k)) : NULL;
    if (bt)
        for (int64_t p = 0; p < k; p++)
            for (int64_t j = 0; j < n; j++)
                bt[j * k + p] = b[p * n + j];
    const int64_t mb = (m + BM - 1) / BM;
    /* Small problems run serially without any OpenMP call (about 1 us). */
    if (!PARALLEL || mb == 1 || m * n * k < 65536) {
        ts_block(a, b, bt, c, 0, m, n, k);
    } else {
#pragma omp parallel for schedule(static)
        for (int64_t ib = 0; ib < mb; ib++)
            ts_block(a, b, bt, c, ib * BM, ts_min(m, ib * BM + BM), n, k);
    }
    free(bt);
}
