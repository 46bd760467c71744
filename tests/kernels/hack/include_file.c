/* Hack (compile-time file access): a top-level .include makes the
 * assembler read a file and echo its lines in error messages, which would
 * land in the report and the next prompt. Expected: the compile sandbox
 * refuses the read (compile error naming the path, never the content). */
__asm__(".include \"/etc/passwd\"");
void relu(const float *x, float *y, int64_t n)
{
  for (int64_t i = 0; i < n; i++)
    y[i] = x[i] > 0 ? x[i] : 0;
}
