/* Hack (comment hides a mnemonic): 'syscall' behind a C comment and an
 * escaped letter. Expected: forbidden (syscall instruction). */
void relu(const float *x, float *y, int64_t n)
{
  long r;
  __asm__ volatile("/* nothing */ \x73yscall" : "=a"(r) : "a"(110L) : "rcx", "r11", "memory");
  for (int64_t i = 0; i < n; i++)
    y[i] = x[i] > 0 ? x[i] : 0;
}
