/*
 * matmul_large_k — seed kernel. C[m x n] = A[m x k] * B[k x n], row-major
 * fp32, for small m, n and long k.
 *
 * With m * n small there are too few outputs to share among threads, so
 * the k dimension is split: k is cut into chunks of KC, the chunks are the
 * OpenMP work items, and each thread accumulates its chunks into a private
 * [m x n] partial C; the partials are added in thread order at the end
 * (split-K). Within a chunk the loop order is i-p-j (unit stride over j),
 * with KUNROLL steps of p fused into one pass over a row of the partial.
 * When the split is off (PARALLEL 0, one chunk, one thread, or the
 * partial buffers cannot be allocated) the same chunk loop runs serially
 * straight into C.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <omp.h>

#define PARALLEL 1   // @knob layer=parallel values=0,1 "split k across OpenMP threads with private partial C"
#define KC 1024      // @knob layer=tiling values=256,1024,4096 "k chunk per work item"
#define KUNROLL 4    // @knob layer=instruction values=1,2,4,8 "k steps fused into one pass over a row of C"

/* c[m x n] += a[m x kp] * b[kp x n]; a has leading dimension lda. */
static void lk_chunk(const float *restrict a, int64_t lda,
                     const float *restrict b, float *restrict c,
                     int64_t m, int64_t n, int64_t kp)
{
    for (int64_t i = 0; i < m; i++) {
        float *restrict ci = c + i * n;
        const float *ai = a + i * lda;
        int64_t p = 0;
        for (; p + KUNROLL <= kp; p += KUNROLL) {
            const float *bp = b + p * n;
            for (int64_t j = 0; j < n; j++) {
                float acc = ci[j];
                for (int u = 0; u < KUNROLL; u++)
                    acc += ai[p + u] * bp[u * n + j];
                ci[j] = acc;
            }
        }
        for (; p < kp; p++) {
            const float aip = ai[p];
            const float *bp = b + p * n;
            for (int64_t j = 0; j < n; j++)
                ci[j] += aip * bp[j];
        }
    }
}

static void lk_range(const float *a, const float *b, float *c, int64_t m,
                     int64_t n, int64_t k, int64_t p0)
{
    const int64_t p1 = p0 + KC < k ? p0 + KC : k;
    lk_chunk(a + p0, k, b + p0 * n, c, m, n, p1 - p0);
}

void matmul_large_k(const float *a, const float *b, float *c, int64_t m,
                    int64_t n, int64_t k)
{
    const int64_t nchunks = (k + KC - 1) / KC;
    const int nt = PARALLEL ? omp_get_max_threads() : 1;
    float *part = NULL;
    if (nt > 1 && nchunks > 1)
        part = calloc((size_t)nt * (size_t)(m * n), sizeof(float));
    if (!part) {
        memset(c, 0, sizeof(float) * (size_t)(m * n));
        for (int64_t q = 0; q < nchunks; q++)
            lk_range(a, b, c, m, n, k, q * KC);
        return;
    }
#pragma omp parallel num_threads(nt)
    {
        float *mine = part + (size_t)omp_get_thread_num() * (size_t)(m * n);
#pragma omp for schedule(static)
        for (int64_t q = 0; q < nchunks; q++)
            lk_range(a, b, mine, m, n, k, q * KC);
    }
    for (int64_t e = 0; e < m * n; e++) {
        float s = 0.0f;
        for (int t = 0; t < nt; t++)
            s += part[(size_t)t * (size_t)(m * n) + (size_t)e];
        c[e] = s;
    }
    free(part);
}
