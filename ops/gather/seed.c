/*
 * gather — seed kernel: y[i][:] = src[idx[i]][:] for i in [0, nidx).
 *
 * Output rows are independent and are the OpenMP work items (PARALLEL),
 * handed out in chunks of CHUNK rows; outputs smaller than PAR_MIN
 * elements are copied without opening a parallel region (its fixed cost
 * dominates a small gather). MEMCPY 1 copies each row with
 * memcpy, 0 with an omp simd loop. PREFETCH > 0 prefetches the source
 * row PREFETCH rows ahead (the indices are known in advance, the rows
 * are scattered). Every combination is exact.
 */
#include <stdint.h>
#include <string.h>

#define PARALLEL 1   // @knob layer=parallel values=0,1 "distribute output rows across OpenMP threads"
#define PAR_MIN 32768 // @knob layer=parallel values=4096,32768,262144 "fewest output elements worth an OpenMP region"
#define CHUNK 16     // @knob layer=tiling values=1,16,128 "output rows per OpenMP work item"
#define MEMCPY 1     // @knob layer=memory values=0,1 "1 memcpy per row, 0 an omp simd copy loop"
#define PREFETCH 0   // @knob layer=memory values=0,4,16 "prefetch the source row this many rows ahead (0 off)"

static void gather_row(const float *restrict s, float *restrict d, int64_t cols)
{
#if MEMCPY
    memcpy(d, s, (size_t)cols * sizeof(float));
#else
#pragma omp simd
    for (int64_t j = 0; j < cols; j++)
        d[j] = s[j];
#endif
}

static void gather_one(const float *restrict src, const int64_t *restrict idx,
                       float *restrict y, int64_t cols, int64_t nidx,
                       int64_t i)
{
#if PREFETCH
    if (i + PREFETCH < nidx)
        __builtin_prefetch(src + idx[i + PREFETCH] * cols, 0, 0);
#else
    (void)nidx;
#endif
    gather_row(src + idx[i] * cols, y + i * cols, cols);
}

void gather(const float *src, const int64_t *idx, float *y, int64_t rows,
            int64_t cols, int64_t nidx)
{
    (void)rows;
    if (PARALLEL && nidx > 1 && nidx * cols >= PAR_MIN) {
#pragma omp parallel for schedule(static, CHUNK)
        for (int64_t i = 0; i < nidx; i++)
            gather_one(src, idx, y, cols, nidx, i);
    } else {
        for (int64_t i = 0; i < nidx; i++)
            gather_one(src, idx, y, cols, nidx, i);
    }
}
