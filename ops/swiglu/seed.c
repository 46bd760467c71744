/*
 * swiglu — seed kernel. y[r][c] = silu(x[r][c]) * x[r][cols + c], fp32.
 *
 * Rows are grouped into OpenMP work items of at least BLOCK output
 * elements (ceil(BLOCK / cols) rows each); without PARALLEL, or when all
 * rows fit one work item, one serial pass runs with no OpenMP region.
 * Inside a row the column loop steps UNROLL elements at a time and carries
 * `omp simd` when SIMD is 1. Elements are independent, so every
 * combination of knob values computes the same result.
 */
#include <math.h>
#include <stdint.h>

#define PARALLEL 1    // @knob layer=parallel values=0,1 "split groups of rows across OpenMP threads"
#define BLOCK 16384   // @knob layer=tiling values=4096,16384,65536 "minimum output elements per OpenMP work item (whole rows)"
#define SIMD 1        // @knob layer=vectorize values=0,1 "omp simd on the column loop"
#define UNROLL 1      // @knob layer=instruction values=1,2,4,8 "columns per loop iteration"

#define SWIGLU_PRAGMA_(x) _Pragma(#x)
#define SWIGLU_PRAGMA(x) SWIGLU_PRAGMA_(x)
#if SIMD
#define SWIGLU_SIMD SWIGLU_PRAGMA(omp simd)
#else
#define SWIGLU_SIMD
#endif

static inline float swiglu_f(float g, float u)
{
    return g / (1.0f + expf(-g)) * u;
}

/* nrows consecutive rows: x rows of 2*cols, y rows of cols. */
static void swiglu_rows(const float *restrict x, float *restrict y,
                        int64_t nrows, int64_t cols)
{
    const int64_t body = cols - cols % UNROLL;
    for (int64_t r = 0; r < nrows; r++) {
        const float *restrict gate = x + r * 2 * cols;
        const float *restrict up = gate + cols;
        float *restrict yr = y + r * cols;
        SWIGLU_SIMD
        for (int64_t c = 0; c < body; c += UNROLL)
            for (int u = 0; u < UNROLL; u++)
                yr[c + u] = swiglu_f(gate[c + u], up[c + u]);
        for (int64_t c = body; c < cols; c++)
            yr[c] = swiglu_f(gate[c], up[c]);
    }
}

void swiglu(const float *x, float *y, int64_t rows, int64_t cols)
{
    const int64_t per = (BLOCK + cols - 1) / cols; /* rows per work item */
    const int64_t ntasks = (rows + per - 1) / per;
    if (!PARALLEL || ntasks == 1) {
        swiglu_rows(x, y, rows, cols);
        return;
    }
#pragma omp parallel for schedule(static)
    for (int64_t t = 0; t < ntasks; t++) {
        const int64_t r0 = t * per;
        const int64_t nr = rows - r0 < per ? rows - r0 : per;
        swiglu_rows(x + r0 * 2 * cols, y + r0 * cols, nr, cols);
    }
}
