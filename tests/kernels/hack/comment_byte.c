/* Hack (comment hides a statement): a statement that starts with a C
 * comment is neither a directive nor a mnemonic to a text pattern, but
 * gas assembles '.byte 0x0f,0x05' (syscall 110, getppid). Expected:
 * forbidden (asm directive). */
void relu(const float *x, float *y, int64_t n)
{
  long r;
  __asm__ volatile("/**/.byte 0x0f,0x05" : "=a"(r) : "a"(110L) : "rcx", "r11", "memory");
  for (int64_t i = 0; i < n; i++)
    y[i] = x[i] > 0 ? x[i] : 0;
}
