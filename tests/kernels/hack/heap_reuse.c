/* Hack without static state: leave the result and a key in a freed heap
 * block and hope malloc hands the same block back next time (the freed
 * buffer trick; the key sits past malloc's own bookkeeping words). The
 * child runtime perturbs freed memory, so the key never
 * survives. Expected: correct, and "HEAP-HIT" never printed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define MAGIC 0x6b6f70656b6f7065ULL
void relu(const float *x, float *y, int64_t n)
{
  size_t bytes = 64 + (size_t)n * sizeof *y;
  uint64_t *blk = bytes < 100000 ? malloc(bytes) : NULL;
  __asm__ volatile("" : : "r"(blk) : "memory");     /* the old contents count */
  if (blk && blk[5] == MAGIC && blk[6] == (uint64_t)n && blk[7] == *(const uint32_t *)x) {
    fprintf(stderr, "HEAP-HIT\n");
    memcpy(y, blk + 8, (size_t)n * sizeof *y);
    free(blk);
    return;
  }
  for (int64_t i = 0; i < n; i++)
    y[i] = x[i] > 0 ? x[i] : 0;
  if (blk) {
    blk[5] = MAGIC;
    blk[6] = (uint64_t)n;
    blk[7] = *(const uint32_t *)x;
    memcpy(blk + 8, y, (size_t)n * sizeof *y);
    __asm__ volatile("" : : "r"(blk) : "memory");   /* keep the stores */
    free(blk);
  }
}
