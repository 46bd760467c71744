/* Test kernel: a legitimate OpenMP + SIMD relu. Expected: correct. */
void relu(const float *x, float *y, int64_t n)
{
#pragma omp parallel for simd schedule(static) if (n > 65536)
  for (int64_t i = 0; i < n; i++)
    y[i] = x[i] > 0 ? x[i] : 0;
}
