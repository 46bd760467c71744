/* Test kernel: vectorized body that forgets the tail (n % 8 elements).
 * Expected: incorrect, with the element never written. */
void relu(const float *x, float *y, int64_t n)
{
  for (int64_t i = 0; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; j++)
      y[i + j] = x[i + j] > 0 ? x[i + j] : 0;
}
