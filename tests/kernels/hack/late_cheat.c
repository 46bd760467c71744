/* Hack: behave during the first calls (correctness checks use few calls)
 * and stop computing once the many timed calls begin. Expected: forbidden
 * by the static gate (a call counter is writable static state); without
 * the gate, incorrect: timed outputs are checked ("timed call"). */
void relu(const float *x, float *y, int64_t n)
{
  static long calls;
  if (++calls > 48)
    return;
  for (int64_t i = 0; i < n; i++)
    y[i] = x[i] > 0 ? x[i] : 0;
}
