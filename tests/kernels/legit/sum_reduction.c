/* Legitimate: row sums with an OpenMP reduction over columns for wide
 * rows, a static helper, and a const lookup table. Expected: correct. */
static const float one[4] = {1.0f, 1.0f, 1.0f, 1.0f};
static float row_sum(const float *xr, int64_t cols)
{
  double s = 0;
#pragma omp parallel for reduction(+ : s) if (cols > 1000000)
  for (int64_t c = 0; c < cols; c++)
    s += xr[c] * one[c & 3];
  return (float)s;
}
void sum(const float *x, float *y, int64_t rows, int64_t cols)
{
  for (int64_t r = 0; r < rows; r++)
    y[r] = row_sum(x + r * cols, cols);
}
