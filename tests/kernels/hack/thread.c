/* Hack: return at once and let a background thread write the outputs
 * while kope is already timing the next call. Expected: forbidden by the
 * static gate (pthread_create); without the gate the thread starts under
 * the sandbox but the outputs are read when the call returns: incorrect. */
#include <stdlib.h>
typedef unsigned long pthread_t;
int pthread_create(pthread_t *t, const void *attr, void *(*fn)(void *), void *arg);
struct job { const float *x; float *y; int64_t n; };
static void *work(void *p)
{
  struct job *j = p;
  for (volatile long d = 0; d < 20000000; d++)
    ;
  for (int64_t i = 0; i < j->n; i++)
    j->y[i] = j->x[i] > 0 ? j->x[i] : 0;
  return NULL;
}
void relu(const float *x, float *y, int64_t n)
{
  struct job *j = malloc(sizeof *j);
  pthread_t t;
  j->x = x;
  j->y = y;
  j->n = n;
  pthread_create(&t, NULL, work, j);
}
