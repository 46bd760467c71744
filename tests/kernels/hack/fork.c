/* Hack: fork a helper process that outlives the call. Expected: forbidden
 * (fork); without the gate, seccomp traps the clone: forbidden. */
int fork(void);
void relu(const float *x, float *y, int64_t n)
{
  if (fork() == 0)
    for (;;)
      ;
  for (int64_t i = 0; i < n; i++)
    y[i] = x[i] > 0 ? x[i] : 0;
}
