/*
 * Threads left running (issue 16, class 4): once a candidate's call has
 * returned, no thread of its worker may still run. A kernel that leaves
 * an OpenMP thread spinning (e.g. by jumping out of its parallel region)
 * keeps a core busy while the baselines are timed next. The judge is kope
 * itself, outside the candidate: it reads the worker's process CPU clock
 * and the state of each thread in /proc/<pid>/task/<tid>/stat.
 *
 * Two checks. Between the timed batches (while the other workers run
 * theirs) the candidate's threads must be idle: a gap whose end finds a
 * thread in state R ("running" or runnable) and whose CPU time exceeds
 * the allowance counts; at least 3/4 of the gaps of an evaluation (and at
 * least IDLE_MIN_GAPS) so found rejects it (on a loaded machine an honest
 * worker's thread is sometimes still runnable at one gap's end). After the last call of an evaluation the worker gets a
 * quiet window: after IDLE_GRACE_S every thread must be asleep; a thread
 * seen running in most of IDLE_SAMPLES state samples while the worker
 * used CPU rejects it. libgomp's idle threads spin at most GOMP_SPINCOUNT
 * (10000, set by the cpu target) pauses after a region, well under a
 * millisecond, then sleep on a futex; the main thread sleeps in read().
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "eval/eval_int.h"

#define IDLE_GRACE_S 0.02
#define IDLE_SAMPLES 6
#define IDLE_SAMPLE_GAP_S 0.005
/* CPU a worker may spend per gap after an answer (stack clearing, the
 * pool's bounded spin), per thread. */
#define IDLE_ALLOW_PER_THREAD_S 0.5e-3
#define IDLE_MIN_GAP_S 2e-3
#define IDLE_MIN_GAPS 4

double kope_eval_worker_cpu(pid_t pid)
{
  clockid_t id;
  struct timespec ts;

  if (pid <= 0 || clock_getcpuclockid(pid, &id) != 0 || clock_gettime(id, &ts) != 0)
    return -1.0;
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* State letter of thread tid of pid ('?' when unreadable). */
static char task_state(pid_t pid, const char *tid)
{
  char path[320], buf[512], *p;
  FILE *f;
  size_t n;

  snprintf(path, sizeof path, "/proc/%d/task/%s/stat", (int)pid, tid);
  if (!(f = fopen(path, "r")))
    return '?';
  n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = 0;
  p = strrchr(buf, ')');
  return p && p[1] == ' ' && p[2] ? p[2] : '?';
}

int kope_eval_running_threads(pid_t pid)
{
  char path[64];
  DIR *d;
  struct dirent *e;
  int n = 0;

  snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
  if (!(d = opendir(path)))
    return 0;
  while ((e = readdir(d)) != NULL)
    if (e->d_name[0] != '.' && task_state(pid, e->d_name) == 'R')
      n++;
  closedir(d);
  return n;
}

static void pause_s(double s)
{
  struct timespec ts = {0, (long)(s * 1e9)};

  nanosleep(&ts, NULL);
}

void kope_eval_gap_begin(kope_idle_gap *g, const kope_worker *w)
{
  g->cpu0 = kope_eval_worker_cpu(w->pid);
  g->t0 = kope_now();
  g->open = 1;
}

void kope_eval_gap_end(kope_idle_gap *g, const kope_worker *w, int threads)
{
  double cpu = kope_eval_worker_cpu(w->pid), t = kope_now(), used;
  int open = g->open;

  g->open = 0;

  /* a gap with no other batch in it (the round order turned) is too
   * short for the pool to have gone to sleep */
  if (!open || g->cpu0 < 0 || cpu < 0 || t - g->t0 < IDLE_MIN_GAP_S)
    return;
  used = cpu - g->cpu0;
  g->gaps++;
  g->cpu_s += used;
  g->wall_s += t - g->t0;
  if (used > IDLE_ALLOW_PER_THREAD_S * (threads > 0 ? threads : 1) &&
      kope_eval_running_threads(w->pid) > 0)
    g->running++;
}

int kope_eval_gap_judge(const kope_idle_gap *g, kope_report *r)
{
  if (g->gaps < IDLE_MIN_GAPS || 4 * g->running < 3 * g->gaps)
    return 0;
  kope_report_fail(r, KOPE_FORBIDDEN, "runtime: a thread of the worker kept running after its "
                   "calls returned (found running at the end of %d of %d gaps between timed "
                   "batches; %.1f ms of CPU in "
                   "%.1f ms)", g->running, g->gaps, g->cpu_s * 1e3, g->wall_s * 1e3);
  return -1;
}

int kope_eval_check_idle(const kope_worker *w, kope_report *r)
{
  double cpu0, cpu1;
  int k, seen = 0;

  if (!w->up || w->pid <= 0)
    return 0;
  pause_s(IDLE_GRACE_S);
  cpu0 = kope_eval_worker_cpu(w->pid);
  for (k = 0; k < IDLE_SAMPLES; k++) {
    if (k)
      pause_s(IDLE_SAMPLE_GAP_S);
    seen += kope_eval_running_threads(w->pid) > 0;
  }
  cpu1 = kope_eval_worker_cpu(w->pid);
  if (cpu0 < 0 || cpu1 < 0 || 2 * seen <= IDLE_SAMPLES || cpu1 - cpu0 < 1e-3)
    return 0;
  kope_report_fail(r, KOPE_FORBIDDEN, "runtime: a thread of the worker kept running after its "
                   "calls returned (running in %d of %d samples %.0f ms after the last call; "
                   "%.1f ms of CPU in %.0f ms)", seen, IDLE_SAMPLES, IDLE_GRACE_S * 1e3,
                   (cpu1 - cpu0) * 1e3, (IDLE_SAMPLES - 1) * IDLE_SAMPLE_GAP_S * 1e3);
  return -1;
}
