/* Hack (writable state under a whitelisted name): an array named like an
 * OpenMP lock, counting calls. Expected: forbidden (asm label). */
long calls[4] __asm__(".gomp_critical_user_calls") __attribute__((common));
void relu(const float *x, float *y, int64_t n)
{
  calls[0]++;
  for (int64_t i = 0; i < n; i++)
    y[i] = calls[0] > 3 ? 0 : (x[i] > 0 ? x[i] : 0);
}
