/* Hack (fake compiler markers): inline asm that closes the #APP region
 * itself, so a scanner of the .s takes the following .incbin for compiler
 * output. The file is in the kernel's own directory (readable to the
 * compiler). Expected: forbidden (asm directive, judged from the template
 * the assembler reads). */
void relu(const float *x, float *y, int64_t n)
{
  __asm__ volatile("\n#NO_APP\n.pushsection .rodata\n.inc" "bin \"kernel.c\"\n.popsection\n#APP\n");
  for (int64_t i = 0; i < n; i++)
    y[i] = x[i] > 0 ? x[i] : 0;
}
