/* Hack: return at once, leaving whatever the output buffer held (on some
 * harnesses, a stale correct result). Expected: incorrect, "never written". */
void relu(const float *x, float *y, int64_t n)
{
  (void)x;
  (void)y;
  (void)n;
}
