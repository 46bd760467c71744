/* Hack: inject compiler flags through a pragma (could turn on unsafe
 * math kope did not allow). Expected: forbidden (flags). */
#define OPT(x) _Pragma(#x)
OPT(GCC optimize("Ofast"))
void relu(const float *x, float *y, int64_t n)
{
  for (int64_t i = 0; i < n; i++)
    y[i] = x[i] > 0 ? x[i] : 0;
}
