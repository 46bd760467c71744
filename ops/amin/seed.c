/*
 * amin — seed kernel, row-wise over the last dimension.
 *
 *   y[r] = min_j x[r][j]
 *
 * One pass per row. NACC independent running minima (element j goes to
 * minimum j % NACC, the tail to the result) break the serial compare
 * chain; SIMD lets the compiler split the scan across vector lanes (omp
 * simd reduction). The minimum is exact in any order, so every
 * combination of knob values gives the reference's bits. Rows are
 * independent and are the OpenMP work items once the matrix has at least
 * PAR_MIN elements (a parallel region costs more than a small reduction).
 */
#include <stdint.h>

#define PARALLEL 1     // @knob layer=parallel values=0,1 "distribute rows across OpenMP threads"
#define PAR_MIN 32768  // @knob layer=parallel values=0,32768,262144 "fewest elements for which the rows go parallel"
#define SIMD 1         // @knob layer=vectorize values=0,1 "omp simd reduction over each row"
#define NACC 1         // @knob layer=instruction values=1,2,4,8 "independent running minima per row"

#define AMIN_PRAGMA_(x) _Pragma(#x)
#define AMIN_PRAGMA(x) AMIN_PRAGMA_(x)
#if SIMD
#define AMIN_SIMD(clauses) AMIN_PRAGMA(omp simd clauses)
#else
#define AMIN_SIMD(clauses)
#endif

static float amin_row(const float *restrict x, int64_t cols)
{
    float m = x[0];
#if NACC == 1
    AMIN_SIMD(reduction(min : m))
    for (int64_t j = 1; j < cols; j++)
        m = x[j] < m ? x[j] : m;
#else
    float p[NACC];
    for (int u = 0; u < NACC; u++)
        p[u] = x[0];
    const int64_t nb = cols / NACC;
    AMIN_SIMD(reduction(min : p[:NACC]))
    for (int64_t b = 0; b < nb; b++)
        for (int u = 0; u < NACC; u++)
            p[u] = x[b * NACC + u] < p[u] ? x[b * NACC + u] : p[u];
    for (int u = 0; u < NACC; u++)
        m = p[u] < m ? p[u] : m;
    for (int64_t j = nb * NACC; j < cols; j++)
        m = x[j] < m ? x[j] : m;
#endif
    return m;
}

void amin(const float *x, float *y, int64_t rows, int64_t cols)
{
    /* An inactive OpenMP region still costs about a microsecond, so small
     * inputs run the plain loop without entering one. */
    if (PARALLEL && rows > 1 && rows * cols >= PAR_MIN) {
#pragma omp parallel for schedule(static)
        for (int64_t r = 0; r < rows; r++)
            y[r] = amin_row(x + r * cols, cols);
    } else {
        for (int64_t r = 0; r < rows; r++)
            y[r] = amin_row(x + r * cols, cols);
    }
}
