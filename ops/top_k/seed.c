/*
 * top_k — seed kernel, per row: the k largest values in descending order
 * and their indices, equal values by smaller index first.
 *
 * Each row is scanned left to right keeping a sorted list of at most k
 * (value, index) pairs in the outputs; an element enters only if the list
 * is not full or it is strictly larger than the k-th value (a later equal
 * element never wins a tie). SKIP > 0 scans the row in blocks of SKIP
 * elements once the list is full: the block maximum (an omp simd max
 * reduction when SIMD) is compared with the k-th value and the whole
 * block is skipped when nothing in it can enter, which is most blocks
 * for k << cols. Rows are the OpenMP work items when PARALLEL and the
 * matrix has at least PAR_MIN elements. Every combination is exact.
 */
#include <stdint.h>

#define PARALLEL 1     // @knob layer=parallel values=0,1 "distribute rows across OpenMP threads"
#define PAR_MIN 32768  // @knob layer=parallel values=4096,32768,262144 "fewest input elements worth an OpenMP region"
#define SKIP 64        // @knob layer=tiling values=0,16,64,256 "block length for the skip-by-block-max filter (0 off)"
#define SIMD 1         // @knob layer=vectorize values=0,1 "omp simd max reduction for the block maximum"

#define TOPK_PRAGMA_(x) _Pragma(#x)
#define TOPK_PRAGMA(x) TOPK_PRAGMA_(x)
#if SIMD
#define TOPK_SIMD(clauses) TOPK_PRAGMA(omp simd clauses)
#else
#define TOPK_SIMD(clauses)
#endif

/* Insert x[j] into the sorted list v/ix of length *len (capacity k). */
static void topk_insert(float *restrict v, int64_t *restrict ix, int64_t *len,
                        int64_t k, float xv, int64_t j)
{
    if (*len == k && !(xv > v[k - 1]))
        return;
    int64_t pos = *len < k ? *len : k - 1;
    while (pos > 0 && v[pos - 1] < xv) {
        v[pos] = v[pos - 1];
        ix[pos] = ix[pos - 1];
        pos--;
    }
    v[pos] = xv;
    ix[pos] = j;
    if (*len < k)
        (*len)++;
}

static void topk_row(const float *restrict xr, float *restrict v,
                     int64_t *restrict ix, int64_t cols, int64_t k)
{
    int64_t len = 0, j = 0;
    for (; j < cols && len < k; j++)
        topk_insert(v, ix, &len, k, xr[j], j);
#if SKIP > 0
    for (; j + SKIP <= cols; j += SKIP) {
        float bm = xr[j];
        TOPK_SIMD(reduction(max : bm))
        for (int64_t t = 1; t < SKIP; t++)
            bm = xr[j + t] > bm ? xr[j + t] : bm;
        if (!(bm > v[k - 1]))
            continue;
        for (int64_t t = 0; t < SKIP; t++)
            topk_insert(v, ix, &len, k, xr[j + t], j + t);
    }
#endif
    for (; j < cols; j++)
        topk_insert(v, ix, &len, k, xr[j], j);
}

void top_k(const float *x, float *values, int64_t *indices, int64_t rows,
           int64_t cols, int64_t k)
{
    if (PARALLEL && rows > 1 && rows * cols >= PAR_MIN) {
#pragma omp parallel for schedule(dynamic, 4)
        for (int64_t r = 0; r < rows; r++)
            topk_row(x + r * cols, values + r * k, indices + r * k, cols, k);
    } else {
        for (int64_t r = 0; r < rows; r++)
            topk_row(x + r * cols, values + r * k, indices + r * k, cols, k);
    }
}
