/* Test kernel: returns all zeros. Expected: incorrect. */
void relu(const float *x, float *y, int64_t n)
{
  (void)x;
  for (int64_t i = 0; i < n; i++)
    y[i] = 0.0f;
}
