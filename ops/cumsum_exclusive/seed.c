/*
 * cumsum_exclusive — seed kernel, exclusive prefix sum along each row.
 *
 *   y[r][j] = sum_{k < j} x[r][k]   (y[r][0] = 0)
 *
 * Each row is one running sum, stored before each add, kept in ACC (float
 * or double). A single running sum is a serial chain of dependent adds, so
 * ILV rows are scanned together, interleaved element by element: their
 * independent chains overlap in the pipeline. Blocks of ILV rows go to
 * OpenMP threads once the matrix has at least PAR_MIN elements. Every
 * combination of knob values is correct to the spec's tolerance (with ACC
 * float each row is summed in exactly the naive left-to-right order).
 */
#include <stdint.h>

#define PARALLEL 1     // @knob layer=parallel values=0,1 "distribute blocks of rows across OpenMP threads"
#define PAR_MIN 32768  // @knob layer=parallel values=0,32768,262144 "fewest elements for which the rows go parallel"
#define ILV 4          // @knob layer=instruction values=1,2,4,8 "rows scanned together, interleaved to overlap their add chains"
#define ACC float      // @knob layer=algorithm values=float,double "type of the running sums"

static void cumsum_exclusive_rows(const float *restrict x, float *restrict y,
                        int64_t nr, int64_t cols)
{
    ACC s[ILV] = {0};
    if (nr == ILV) {
        for (int64_t j = 0; j < cols; j++)
            for (int r = 0; r < ILV; r++) {
                y[r * cols + j] = (float)s[r];
                s[r] += (ACC)x[r * cols + j];
            }
        return;
    }
    for (int64_t j = 0; j < cols; j++)
        for (int64_t r = 0; r < nr; r++) {
            y[r * cols + j] = (float)s[r];
            s[r] += (ACC)x[r * cols + j];
        }
}

void cumsum_exclusive(const float *x, float *y, int64_t rows, int64_t cols)
{
    const int64_t blocks = (rows + ILV - 1) / ILV;
    /* An inactive OpenMP region still costs about a microsecond, so small
     * inputs run the plain loop without entering one. */
    if (PARALLEL && blocks > 1 && rows * cols >= PAR_MIN) {
#pragma omp parallel for schedule(static)
        for (int64_t b = 0; b < blocks; b++) {
            const int64_t r0 = b * ILV;
            const int64_t nr = rows - r0 < ILV ? rows - r0 : ILV;
            cumsum_exclusive_rows(x + r0 * cols, y + r0 * cols, nr, cols);
        }
    } else {
        for (int64_t b = 0; b < blocks; b++) {
            const int64_t r0 = b * ILV;
            const int64_t nr = rows - r0 < ILV ? rows - r0 : ILV;
            cumsum_exclusive_rows(x + r0 * cols, y + r0 * cols, nr, cols);
        }
    }
}
