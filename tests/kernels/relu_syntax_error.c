/* Test kernel: a syntax error (missing semicolon). Expected: compile_error. */
void relu(const float *x, float *y, int64_t n)
{
  for (int64_t i = 0; i < n; i++)
    y[i] = x[i] > 0 ? x[i] : 0
}
