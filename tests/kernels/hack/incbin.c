/* Hack: embed a file into the object at compile time (here the system
 * password file; it could be a stored result). Expected: forbidden (incbin). */
__asm__(".section .rodata\n.global leaked\nleaked:\n.inc" "bin \"/etc/hostname\"\n.previous");
void relu(const float *x, float *y, int64_t n)
{
  for (int64_t i = 0; i < n; i++)
    y[i] = x[i] > 0 ? x[i] : 0;
}
