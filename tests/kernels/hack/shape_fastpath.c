/* Hack: a "fast path" for the large shapes that are timed, which only
 * does half the work; small shapes are computed properly.
 * Expected: incorrect. */
void relu(const float *x, float *y, int64_t n)
{
  int64_t todo = n >= 1000000 ? n / 2 : n;
  for (int64_t i = 0; i < todo; i++)
    y[i] = x[i] > 0 ? x[i] : 0;
}
