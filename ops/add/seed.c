/*
 * add — seed kernel. y[r][c] = a[r][c] + b[c] (b broadcast over rows).
 *
 * Rows are grouped into OpenMP work items of at least BLOCK elements
 * (ceil(BLOCK / cols) rows each), so many short rows still make work items
 * big enough to amortize scheduling; without PARALLEL, or when everything
 * fits one work item, one serial pass runs with no OpenMP region. Inside a
 * row the column loop steps UNROLL elements at a time (the constant-trip
 * inner loop is fully unrolled) and carries `omp simd` when SIMD is 1. The
 * result is one fp32 add per element whatever the knobs, hence exact.
 */
#include <stdint.h>

#define PARALLEL 1    // @knob layer=parallel values=0,1 "split groups of rows across OpenMP threads"
#define BLOCK 16384   // @knob layer=tiling values=4096,16384,65536 "minimum elements per OpenMP work item (whole rows)"
#define SIMD 1        // @knob layer=vectorize values=0,1 "omp simd on the column loop"
#define UNROLL 1      // @knob layer=instruction values=1,2,4,8 "columns per loop iteration"

#define ADD_PRAGMA_(x) _Pragma(#x)
#define ADD_PRAGMA(x) ADD_PRAGMA_(x)
#if SIMD
#define ADD_SIMD ADD_PRAGMA(omp simd)
#else
#define ADD_SIMD
#endif

/* nrows consecutive rows of a and y. */
static void add_rows(const float *restrict a, const float *restrict b,
                     float *restrict y, int64_t nrows, int64_t cols)
{
    const int64_t body = cols - cols % UNROLL;
    for (int64_t r = 0; r < nrows; r++) {
        const float *restrict ar = a + r * cols;
        float *restrict yr = y + r * cols;
        ADD_SIMD
        for (int64_t c = 0; c < body; c += UNROLL)
            for (int u = 0; u < UNROLL; u++)
                yr[c + u] = ar[c + u] + b[c + u];
        for (int64_t c = body; c < cols; c++)
            yr[c] = ar[c] + b[c];
    }
}

void add(const float *a, const float *b, float *y, int64_t rows, int64_t cols)
{
    const int64_t per = (BLOCK + cols - 1) / cols; /* rows per work item */
    const int64_t ntasks = (rows + per - 1) / per;
    if (!PARALLEL || ntasks == 1) {
        add_rows(a, b, y, rows, cols);
        return;
    }
#pragma omp parallel for schedule(static)
    for (int64_t t = 0; t < ntasks; t++) {
        const int64_t r0 = t * per;
        const int64_t nr = rows - r0 < per ? rows - r0 : per;
        add_rows(a + r0 * cols, b, y + r0 * cols, nr, cols);
    }
}
