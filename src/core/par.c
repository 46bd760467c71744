/*
 * Fork-join loops on pthreads (see par.h).
 */
#include <pthread.h>
#include <unistd.h>
#include "core/par.h"

typedef struct par_job {
  void (*fn)(void *, int64_t, int64_t, int);
  void *ctx;
  int64_t lo, hi;
  int part;
} par_job;

static void *par_run(void *arg)
{
  par_job *j = arg;

  j->fn(j->ctx, j->lo, j->hi, j->part);
  return NULL;
}

static int par_threads(void)
{
  long n = sysconf(_SC_NPROCESSORS_ONLN);

  return n < 1 ? 1 : n > KOPE_PAR_MAX ? KOPE_PAR_MAX : (int)n;
}

int kope_par_for(int64_t n, int64_t min_parallel,
                 void (*fn)(void *ctx, int64_t lo, int64_t hi, int part), void *ctx)
{
  par_job jobs[KOPE_PAR_MAX];
  pthread_t th[KOPE_PAR_MAX];
  int started[KOPE_PAR_MAX] = {0};
  int parts = n >= min_parallel ? par_threads() : 1, p;

  for (p = 0; p < parts; p++) {
    jobs[p].fn = fn;
    jobs[p].ctx = ctx;
    jobs[p].lo = n * p / parts;
    jobs[p].hi = n * (p + 1) / parts;
    jobs[p].part = p;
  }
  for (p = 1; p < parts; p++)
    started[p] = pthread_create(&th[p], NULL, par_run, &jobs[p]) == 0;
  par_run(&jobs[0]);
  for (p = 1; p < parts; p++) {
    if (started[p])
      pthread_join(th[p], NULL);
    else
      par_run(&jobs[p]);   /* could not start a thread: do it here */
  }
  return parts;
}
