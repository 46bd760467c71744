/* Test kernel: correct values but one element written past the end of y.
 * Expected: incorrect ("wrote past the end"). */
void relu(const float *x, float *y, int64_t n)
{
  for (int64_t i = 0; i < n; i++)
    y[i] = x[i] > 0 ? x[i] : 0;
  y[n] = 0.0f;
}
