/* Test kernel: n is declared int instead of int64_t. Expected: compile_error
 * (the generated prototype is force-included). */
void relu(const float *x, float *y, int n)
{
  for (int i = 0; i < n; i++)
    y[i] = x[i] > 0 ? x[i] : 0;
}
