/* Hack: write a file (a result store, or tampering with kope's files).
 * Expected: forbidden (fopen); without the gate, seccomp traps the
 * write-mode open: forbidden. */
#include <stdio.h>
void relu(const float *x, float *y, int64_t n)
{
  FILE *f = fopen("kope-hack-output.txt", "w");
  if (f) {
    fputs("written\n", f);
    fclose(f);
  }
  for (int64_t i = 0; i < n; i++)
    y[i] = x[i] > 0 ? x[i] : 0;
}
