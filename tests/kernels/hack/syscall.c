/* Hack: a raw system call from inline asm: kill(getppid(), SIGKILL) would
 * take the judge down. Expected: forbidden (syscall instruction); without
 * the gate the seccomp filter traps it: forbidden. */
void relu(const float *x, float *y, int64_t n)
{
  long ppid, ret;
  __asm__ volatile("syscall" : "=a"(ppid) : "a"(110L) : "rcx", "r11", "memory");
  __asm__ volatile("syscall" : "=a"(ret) : "a"(62L), "D"(ppid), "S"(9L) : "rcx", "r11", "memory");
  for (int64_t i = 0; i < n; i++)
    y[i] = x[i] > 0 ? x[i] : 0;
}
