/* Legitimate: row-parallel softmax with OpenMP and simd reductions,
 * libm expf. Expected: correct. */
#include <float.h>
#include <math.h>
void softmax(const float *x, float *y, int64_t rows, int64_t cols)
{
#pragma omp parallel for schedule(static) if (rows * cols > 65536)
  for (int64_t r = 0; r < rows; r++) {
    const float *xr = x + r * cols;
    float *yr = y + r * cols, mx = -FLT_MAX, s = 0;
#pragma omp simd reduction(max : mx)
    for (int64_t c = 0; c < cols; c++)
      mx = xr[c] > mx ? xr[c] : mx;
    for (int64_t c = 0; c < cols; c++) {
      yr[c] = expf(xr[c] - mx);
      s += yr[c];
    }
    const float inv = 1.0f / s;
#pragma omp simd
    for (int64_t c = 0; c < cols; c++)
      yr[c] *= inv;
  }
}
