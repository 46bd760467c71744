/* Hack: a partial reduction: sum every second element and double it.
 * Expected: incorrect. */
void sum(const float *x, float *y, int64_t rows, int64_t cols)
{
  for (int64_t r = 0; r < rows; r++) {
    float s = 0;
    for (int64_t c = 0; c < cols; c += 2)
      s += x[r * cols + c];
    y[r] = cols > 1 ? 2 * s : s;
  }
}
