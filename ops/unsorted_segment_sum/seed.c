/*
 * unsorted_segment_sum — seed kernel:
 *   y[s][j] = sum_{i : seg[i] == s} data[i][j],  0 for empty segments
 *
 * A scatter-add, parallelized without atomics by giving every thread a
 * disjoint part of y: ALGO 0 splits the segment ids into one contiguous
 * range per thread (each thread reads all of seg and adds only the rows
 * it owns), ALGO 1 splits the columns into blocks of CBLOCK (each work
 * item scans every row over its columns; no parallelism when d is
 * small). Each part is zeroed first, then rows are added in order, with
 * an omp simd row add when SIMD. Inputs smaller than PAR_MIN elements
 * run serially. Every combination of knob values is correct to the
 * spec's tolerance.
 */
#include <omp.h>
#include <stdint.h>
#include <string.h>

#define PARALLEL 1     // @knob layer=parallel values=0,1 "split y across OpenMP threads"
#define PAR_MIN 32768  // @knob layer=parallel values=4096,32768,262144 "fewest input elements worth an OpenMP region"
#define ALGO 0         // @knob layer=algorithm values=0,1 "0 each thread owns a range of segments, 1 column blocks"
#define CBLOCK 64      // @knob layer=tiling values=16,64,256 "columns per work item (ALGO 1)"
#define SIMD 1         // @knob layer=vectorize values=0,1 "omp simd on the row add"

#define USS_PRAGMA_(x) _Pragma(#x)
#define USS_PRAGMA(x) USS_PRAGMA_(x)
#if SIMD
#define USS_SIMD(clauses) USS_PRAGMA(omp simd clauses)
#else
#define USS_SIMD(clauses)
#endif

/* The part of y with segment ids in [s0, s1) and columns in [j0, j1). */
static void uss_part(const float *restrict data, const int64_t *restrict seg,
                     float *restrict y, int64_t n, int64_t d, int64_t s0,
                     int64_t s1, int64_t j0, int64_t j1)
{
    const int64_t w = j1 - j0;
    for (int64_t s = s0; s < s1; s++)
        memset(y + s * d + j0, 0, (size_t)w * sizeof(float));
    for (int64_t i = 0; i < n; i++) {
        const int64_t s = seg[i];
        if (s < s0 || s >= s1)
            continue;
        float *restrict dst = y + s * d + j0;
        const float *restrict src = data + i * d + j0;
        USS_SIMD()
        for (int64_t j = 0; j < w; j++)
            dst[j] += src[j];
    }
}

void unsorted_segment_sum(const float *data, const int64_t *seg, float *y,
                          int64_t n, int64_t d, int64_t nseg)
{
    if (!PARALLEL || n * d < PAR_MIN) {
        uss_part(data, seg, y, n, d, 0, nseg, 0, d);
        return;
    }
#if ALGO == 0
#pragma omp parallel
    {
        const int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
        uss_part(data, seg, y, n, d, nseg * t / nt, nseg * (t + 1) / nt, 0, d);
    }
#else
    const int64_t nb = (d + CBLOCK - 1) / CBLOCK;
#pragma omp parallel for schedule(static)
    for (int64_t b = 0; b < nb; b++) {
        const int64_t j0 = b * CBLOCK, j1 = j0 + CBLOCK < d ? j0 + CBLOCK : d;
        uss_part(data, seg, y, n, d, 0, nseg, j0, j1);
    }
#endif
}
