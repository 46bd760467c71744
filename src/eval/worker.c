/*
 * Worker processes and shared regions (see worker.h). Starting a worker
 * closes every descriptor it does not hand on, on every path (one cleanup
 * label). Commands go to a worker that may have died at any moment; the
 * write blocks SIGPIPE in the calling thread only, so the library never
 * changes the process's signal dispositions. A stopped worker is killed
 * and left to exit while kope goes on (its exit unmaps its regions: 100-
 * 240 ms for the large perf cases); kope_worker_reap_pending waits for
 * those exits, before a timing turn and when an evaluator is freed.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "eval/sandbox.h"
#include "eval/worker.h"

int kope_region_init(kope_region *r, const char *name, kope_err *err)
{
  char path[64];

  memset(r, 0, sizeof *r);
  r->ro_fd = -1;
  r->fd = memfd_create(name, MFD_CLOEXEC);
  if (r->fd < 0)
    return kope_err_set(err, KOPE_EENV, "memfd_create: %s", strerror(errno));
  snprintf(path, sizeof path, "/proc/self/fd/%d", r->fd);
  r->ro_fd = open(path, O_RDONLY | O_CLOEXEC);
  if (r->ro_fd < 0) {
    kope_err_set(err, KOPE_EENV, "reopen memfd read-only: %s", strerror(errno));
    kope_region_release(r);
    return KOPE_EENV;
  }
  return KOPE_OK;
}

int kope_region_resize(kope_region *r, size_t size, kope_err *err)
{
  if (r->base)
    munmap(r->base, r->size);
  r->base = NULL;
  r->size = size;
  if (ftruncate(r->fd, 0) != 0 || ftruncate(r->fd, (off_t)size) != 0)
    return kope_err_set(err, KOPE_EENV, "cannot size shared memory to %zu bytes: %s", size,
                        strerror(errno));
  if (!size)
    return KOPE_OK;
  r->base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
  if (r->base == MAP_FAILED) {
    r->base = NULL;
    return kope_err_set(err, KOPE_EENV, "cannot map %zu bytes: %s", size, strerror(errno));
  }
  return KOPE_OK;
}

void kope_region_release(kope_region *r)
{
  if (r->base)
    munmap(r->base, r->size);
  if (r->fd >= 0)
    close(r->fd);
  if (r->ro_fd >= 0)
    close(r->ro_fd);
  memset(r, 0, sizeof *r);
  r->fd = r->ro_fd = -1;
}

static void child_side(const char *exe, const char *dir, const kope_env *env, int fds[5],
                       int logfd, const kope_limits *lim, int strict)
{
  int devnull = open("/dev/null", O_RDONLY), i, n = fds[4] >= 0 ? 5 : 4;
  int tmp[5];
  char *argv[2] = {(char *)exe, NULL};

  /* Move the descriptors out of the way, then to 3..6 (7: the filter). */
  for (i = 0; i < n; i++)
    tmp[i] = fcntl(fds[i], F_DUPFD, 20);
  dup2(devnull, 0);
  dup2(logfd, 1);
  dup2(logfd, 2);
  for (i = 0; i < n; i++)
    dup2(tmp[i], KOPE_CHILD_FD_CMD + i);
  if (n == 4)
    close(KOPE_CHILD_FD_FILTER);
  if (chdir(dir) != 0)
    _exit(126);
  kope_proc_child_setup(lim, KOPE_CHILD_FD_FILTER + 1);
  kope_sandbox_enter(kope_sandbox_probe(), dir, strict);
  execve(exe, argv, (char *const *)env->vars);
  _exit(127);
}

/* Write the candidate filter for pid into the descriptor the child got. */
static int write_filter(int dst, pid_t pid, kope_err *err)
{
  int fd = kope_sandbox_filter_fd(pid, err), rc = KOPE_OK;
  char buf[65536];
  ssize_t n;

  if (fd < 0)
    return err->code ? err->code : KOPE_EENV;
  if ((n = pread(fd, buf, sizeof buf, 0)) <= 0 || pwrite(dst, buf, (size_t)n, 0) != n)
    rc = kope_err_set(err, KOPE_EENV, "cannot hand the seccomp filter to the worker");
  close(fd);
  return rc;
}

static void close_fd(int *fd)
{
  if (*fd >= 0)
    close(*fd);
  *fd = -1;
}

/* Fork the worker; the parent keeps its ends of the pipes in w. */
static int spawn(kope_worker *w, const char *exe, const char *dir, const kope_env *env,
                 int fds[5], int pipes[6], const kope_limits *lim, int strict, kope_err *err)
{
  w->pid = fork();
  if (w->pid < 0)
    return kope_err_set(err, KOPE_EENV, "fork: %s", strerror(errno));
  if (w->pid == 0)
    child_side(exe, dir, env, fds, pipes[5], lim, strict);
  setpgid(w->pid, w->pid);
  w->cmd_fd = pipes[1];
  w->rep_fd = pipes[2];
  w->log_fd = pipes[4];
  pipes[1] = pipes[2] = pipes[4] = -1;
  fcntl(w->log_fd, F_SETFL, O_NONBLOCK);
  w->up = 1;
  return KOPE_OK;
}

/* pipes: command (0 child reads, 1 kope writes), reply (2 kope reads,
 * 3 child writes), log (4 kope reads, 5 child writes). Whatever happens,
 * every descriptor that is not the worker's is closed once, at the end. */
int kope_worker_start(kope_worker *w, const char *exe, const char *dir, const kope_env *env,
                      const kope_region *in, const kope_region *out, const kope_limits *lim,
                      int strict, kope_err *err)
{
  int pipes[6] = {-1, -1, -1, -1, -1, -1}, fds[5], filter = -1, rc = KOPE_OK, i;
  const kope_sandbox_caps *sb = kope_sandbox_probe();

  memset(w, 0, sizeof *w);
  w->strict = strict;
  w->cmd_fd = w->rep_fd = w->log_fd = -1;
  kope_buf_init(&w->log, 64 * 1024);
  if (pipe2(pipes, O_CLOEXEC) || pipe2(pipes + 2, O_CLOEXEC) || pipe2(pipes + 4, O_CLOEXEC)) {
    rc = kope_err_set(err, KOPE_EENV, "pipe: %s", strerror(errno));
    goto out;
  }
  /* a strict worker without its filter would run unconfined: refuse */
  if (strict && sb->seccomp && (filter = memfd_create("kope-filter", MFD_CLOEXEC)) < 0) {
    rc = kope_err_set(err, KOPE_EENV, "memfd_create (seccomp filter): %s", strerror(errno));
    goto out;
  }
  fds[0] = pipes[0];
  fds[1] = pipes[3];
  fds[2] = in->ro_fd;
  fds[3] = out->fd;
  fds[4] = filter;
  if ((rc = spawn(w, exe, dir, env, fds, pipes, lim, strict, err)) == KOPE_OK && filter >= 0)
    rc = write_filter(filter, w->pid, err);
out:
  for (i = 0; i < 6; i++)
    close_fd(&pipes[i]);
  close_fd(&filter);
  if (rc != KOPE_OK)
    kope_worker_stop(w);
  return rc;
}

static void drain_log(kope_worker *w)
{
  char chunk[4096];
  ssize_t n;

  while (w->log_fd >= 0 && (n = read(w->log_fd, chunk, sizeof chunk)) > 0)
    kope_buf_append(&w->log, chunk, (size_t)n);
}

static void reap(kope_worker *w, int kill_it)
{
  int status = 0, rt;
  pid_t got;
  struct rusage ru;

  if (!w->up)
    return;
  if (kope_proc_rt_level() > 0)   /* killed in a timing turn: it dies at SCHED_OTHER */
    kope_proc_rt_set_threads(w->pid, 0);
  if (kill_it) {
    kill(-w->pid, SIGKILL);
    kill(w->pid, SIGKILL);
  }
  /* Reaping a sandboxed worker tears its namespaces down (dcache
   * shrinking in the kernel): at a real-time priority that livelocked
   * against the kernel work it waits for when several kope processes ran
   * at once, so the judge always reaps at SCHED_OTHER. */
  if ((rt = kope_proc_rt_prio()) > 0)
    kope_proc_rt_set(0);
  got = wait4(w->pid, &status, 0, &ru);
  if (rt > 0)
    kope_proc_rt_set(rt);
  if (got == w->pid) {
    w->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    w->signo = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    w->cpu_s = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 +
               (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
  }
  kill(-w->pid, SIGKILL);
  drain_log(w);
  close(w->cmd_fd);
  close(w->rep_fd);
  close(w->log_fd);
  w->log_fd = -1;
  w->up = 0;
}

static int write_all(int fd, const unsigned char *p, size_t n)
{
  while (n > 0) {
    ssize_t k = write(fd, p, n);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0)
      return -1;
    p += k;
    n -= (size_t)k;
  }
  return 0;
}

/* Writing to a worker that may have died must neither raise SIGPIPE nor
 * touch the process's signal dispositions (library code must not): while
 * a guard is on, SIGPIPE is blocked in this thread only; turning it off
 * consumes a SIGPIPE a failed write raised (it is directed at this
 * thread) unless one was already pending, and restores the mask. */
typedef struct pipe_guard {
  sigset_t set, old;
  int was_pending;
} pipe_guard;

static void guard_on(pipe_guard *g)
{
  sigset_t pending;

  sigemptyset(&g->set);
  sigaddset(&g->set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &g->set, &g->old);
  sigpending(&pending);
  g->was_pending = sigismember(&pending, SIGPIPE);
}

static void guard_off(pipe_guard *g, int broke)
{
  struct timespec zero = {0, 0};

  if (broke && !g->was_pending)
    while (sigtimedwait(&g->set, NULL, &zero) < 0 && errno == EINTR)
      ;
  pthread_sigmask(SIG_SETMASK, &g->old, NULL);
}

static int send_all(int fd, const void *buf, size_t n)
{
  pipe_guard g;
  int rc;

  guard_on(&g);
  rc = write_all(fd, buf, n);
  guard_off(&g, rc != 0 && errno == EPIPE);
  return rc;
}

/* Wait for a full reply until deadline; 0 ok, -1 EOF, -2 timeout. */
static int recv_reply(kope_worker *w, kope_child_reply *rep, double deadline)
{
  unsigned char *p = (unsigned char *)rep;
  size_t got = 0;

  while (got < sizeof *rep) {
    struct pollfd pf[2] = {{w->rep_fd, POLLIN, 0}, {w->log_fd, POLLIN, 0}};
    double left = deadline - kope_now();
    int ms = left <= 0 ? 0 : left > 1.0 ? 1000 : (int)(left * 1000) + 1;
    if (left <= 0)
      return -2;
    if (poll(pf, 2, ms) <= 0)
      continue;
    if (pf[1].revents)
      drain_log(w);
    if (pf[0].revents) {
      ssize_t n = read(w->rep_fd, p + got, sizeof *rep - got);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return -1;
      got += (size_t)n;
    }
  }
  return 0;
}

int kope_worker_command(kope_worker *w, const kope_child_cmd *c, double timeout_s,
                        double *elapsed)
{
  kope_child_reply rep;
  pipe_guard g;
  double t0, t1;
  int rc;

  if (!w->up)
    return KOPE_WORKER_DIED;
  guard_on(&g);   /* outside the measured round trip */
  t0 = kope_now();
  if (write_all(w->cmd_fd, (const unsigned char *)c, sizeof *c) != 0) {
    guard_off(&g, errno == EPIPE);
    reap(w, 1);
    return KOPE_WORKER_DIED;
  }
  rc = recv_reply(w, &rep, t0 + timeout_s);
  t1 = kope_now();
  guard_off(&g, 0);
  w->wait_s += t1 - t0;
  if (elapsed)
    *elapsed = t1 - t0;
  if (rc == -2) {
    reap(w, 1);
    return KOPE_WORKER_TIMEOUT;
  }
  if (rc == -1) {
    reap(w, 0);
    return KOPE_WORKER_DIED;
  }
  if (rep.magic != KOPE_CHILD_MAGIC || rep.status != 0) {
    w->proto_status = rep.magic == KOPE_CHILD_MAGIC ? rep.status : KOPE_CHILD_ST_BAD;
    snprintf(w->proto_msg, sizeof w->proto_msg, "%s",
             rep.magic == KOPE_CHILD_MAGIC ? rep.msg : "garbled reply");
    return KOPE_WORKER_PROTO;
  }
  return KOPE_WORKER_OK;
}

/* Killed workers whose exit nobody has waited for yet. */
#define PENDING_MAX 64
static pthread_mutex_t pending_mu = PTHREAD_MUTEX_INITIALIZER;
static pid_t pending[PENDING_MAX];
static int npending;

/* Wait for (block) or collect (WNOHANG) the pending exits. */
static void reap_pending(int block)
{
  int i = 0;

  pthread_mutex_lock(&pending_mu);
  while (i < npending) {
    pid_t got = waitpid(pending[i], NULL, block ? 0 : WNOHANG);

    if (got == 0 || (got < 0 && errno == EINTR)) {
      i++;
      continue;
    }
    pending[i] = pending[--npending];   /* reaped, or not ours any more */
  }
  pthread_mutex_unlock(&pending_mu);
}

void kope_worker_reap_pending(void)
{
  reap_pending(1);
}

static int add_pending(pid_t pid)
{
  int ok;

  reap_pending(0);
  pthread_mutex_lock(&pending_mu);
  if ((ok = npending < PENDING_MAX))
    pending[npending++] = pid;
  pthread_mutex_unlock(&pending_mu);
  return ok;
}

/* The worker's CPU time so far (all its threads), or -1. */
static double process_cpu_s(pid_t pid)
{
  clockid_t id;
  struct timespec ts;

  if (clock_getcpuclockid(pid, &id) != 0 || clock_gettime(id, &ts) != 0)
    return -1;
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

void kope_worker_stop(kope_worker *w)
{
  kope_child_cmd c;
  double cpu;

  if (!w->up)
    return;
  memset(&c, 0, sizeof c);
  c.magic = KOPE_CHILD_MAGIC;
  c.kind = KOPE_CMD_EXIT;
  send_all(w->cmd_fd, &c, sizeof c);
  /* its CPU time is read before the kill: the exit's unmapping is the
   * kernel's work, not the kernel's under test */
  if ((cpu = process_cpu_s(w->pid)) < 0 || !add_pending(w->pid)) {
    reap(w, 1);   /* no clock or no room: wait for it here */
    return;
  }
  if (kope_proc_rt_level() > 0)
    kope_proc_rt_set_threads(w->pid, 0);
  kill(-w->pid, SIGKILL);
  kill(w->pid, SIGKILL);
  w->cpu_s = cpu;
  w->exit_code = -1;
  w->signo = SIGKILL;
  drain_log(w);   /* what it wrote before the kill is in the pipe */
  close(w->cmd_fd);
  close(w->rep_fd);
  close(w->log_fd);
  w->log_fd = -1;
  w->up = 0;
}
