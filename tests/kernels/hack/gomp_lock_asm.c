/* Hack (writable state under a whitelisted name): the real lock word of
 * '#pragma omp critical (memo)' used as storage from inline asm. Expected:
 * forbidden (asm names the lock symbol). */
void relu(const float *x, float *y, int64_t n)
{
  long seen;
#pragma omp critical (memo)
  { seen = 0; }
  __asm__ volatile("movq .gomp_critical_user_memo(%%rip), %0" : "=r"(seen));
  for (int64_t i = 0; i < n; i++)
    y[i] = seen ? y[i] : (x[i] > 0 ? x[i] : 0);
}
