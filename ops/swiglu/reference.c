/*
 * swiglu — trusted reference (plain C, double precision).
 *
 * x is [rows x 2*cols] (gate half, then up half, per row); y is
 * [rows x cols] with y[r][c] = g / (1 + exp(-g)) * u, g = x[r][c],
 * u = x[r][cols + c]. Each element is computed in double and rounded once
 * to fp32, so the reference's own error is far below any fp32 kernel's.
 */
#include <math.h>
#include <stdint.h>

void swiglu(const float *x, float *y, int64_t rows, int64_t cols)
{
    for (int64_t r = 0; r < rows; r++) {
        const float *gate = x + r * 2 * cols;
        const float *up = gate + cols;
        for (int64_t c = 0; c < cols; c++) {
            double g = gate[c];
            y[r * cols + c] = (float)(g / (1.0 + exp(-g)) * (double)up[c]);
        }
    }
}
