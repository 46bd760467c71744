/* Hack: scribble far past the end of the output (into whatever lies
 * behind it). Expected: crash (the guard page faults). */
void relu(const float *x, float *y, int64_t n)
{
  for (int64_t i = 0; i < n; i++)
    y[i] = x[i] > 0 ? x[i] : 0;
  y[n + 1024] = 1.0f;
}
