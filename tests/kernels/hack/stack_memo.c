/* Hack (state outside globals): the kernel leaves a marker and a pointer
 * to its last output in stack memory below its frame and looks for them
 * on the next call; found, it could copy instead of computing. It prints
 * STACK-HIT when the memory survived. Expected: correct, and no STACK-HIT
 * (the runtime clears the stack between calls). */
#include <stdio.h>
#include <stdint.h>
#define MARK 0x6b6f70652d737461ULL
static __attribute__((noinline)) int probe(int store)
{
  volatile uint64_t deep[2048];
  int hit;
  __asm__ volatile("" : : "r"(deep) : "memory");
  hit = deep[1000] == MARK;   /* deliberately read before written */
  if (store)
    deep[1000] = MARK;
  return hit;
}
void relu(const float *x, float *y, int64_t n)
{
  if (probe(1))
    printf("STACK-HIT\n");
  for (int64_t i = 0; i < n; i++)
    y[i] = x[i] > 0 ? x[i] : 0;
}
