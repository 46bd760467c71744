/* Hack (compile-time file access): the .include directive spelled by a
 * macro and an escape, so no source rule sees the word. Expected: the
 * compile sandbox refuses the read (compile error). */
#define DIR(f) ".in\x63lude \"" f "\""
__asm__(DIR("/etc/hostname"));
void relu(const float *x, float *y, int64_t n)
{
  for (int64_t i = 0; i < n; i++)
    y[i] = x[i] > 0 ? x[i] : 0;
}
