/* rowsum — seed: row sums of the first min(rows, 64) rows. */
#include <stdint.h>

#define ACC double   // @knob layer=algorithm values=double,float "accumulator type"
#define PARALLEL 0   // @knob layer=parallel values=0,1 "rows across OpenMP threads"

void rowsum(const float *x, float *y, int64_t rows, int64_t cols)
{
    int64_t r_end = rows < 64 ? rows : 64;
#pragma omp parallel for if (PARALLEL)
    for (int64_t r = 0; r < r_end; r++) {
        ACC s = 0;
        for (int64_t j = 0; j < cols; j++)
            s += x[r * cols + j];
        y[r] = (float)s;
    }
}
