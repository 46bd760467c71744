/*
 * Spawning limited child processes (see proc.h). The parent polls the
 * child's output pipe until EOF and the child's exit, killing the whole
 * process group at the deadline. The captured output is bounded.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "core/proc.h"

void kope_env_init(kope_env *env, const char *dir)
{
  memset(env, 0, sizeof *env);
  kope_env_add(env, "PATH=/usr/local/bin:/usr/bin:/bin");
  kope_env_add(env, "LANG=C");
  kope_env_add(env, "LC_ALL=C");
  if (dir) {
    kope_env_add(env, "HOME=%s", dir);
    kope_env_add(env, "TMPDIR=%s", dir);
  }
}

void kope_env_add(kope_env *env, const char *fmt, ...)
{
  kope_buf b;
  va_list ap;

  if (env->n >= (int)(sizeof env->vars / sizeof env->vars[0]) - 1)
    return;
  kope_buf_init(&b, 0);
  va_start(ap, fmt);
  kope_buf_vprintf(&b, fmt, ap);
  va_end(ap);
  env->vars[env->n++] = kope_buf_steal(&b);
  env->vars[env->n] = NULL;
}

void kope_env_pass(kope_env *env, const char *name)
{
  const char *v = getenv(name);

  if (v)
    kope_env_add(env, "%s=%s", name, v);
}

void kope_env_free(kope_env *env)
{
  int i;

  for (i = 0; i < env->n; i++)
    free(env->vars[i]);
  env->n = 0;
  env->vars[0] = NULL;
}

static void set_limit(int res, rlim_t v)
{
  struct rlimit rl;

  rl.rlim_cur = rl.rlim_max = v;
  setrlimit(res, &rl);
}

int kope_proc_rt_prio(void)
{
  struct sched_param sp;
  int pol = sched_getscheduler(0);

  if ((pol != SCHED_FIFO && pol != SCHED_RR) || sched_getparam(0, &sp) != 0)
    return 0;
  return sp.sched_priority;
}

int kope_proc_rt_set(int prio)
{
  struct sched_param sp;

  memset(&sp, 0, sizeof sp);
  sp.sched_priority = prio > 0 ? prio : 0;
  return sched_setscheduler(0, prio > 0 ? SCHED_FIFO : SCHED_OTHER, &sp);
}

/* The level --realtime asked for (kope_realtime); 0: off. Set once,
 * before any evaluation starts; read by the judge at its timing turns. */
static int rt_level;

int kope_proc_rt_level(void)
{
  return rt_level;
}

int kope_proc_rt_set_threads(pid_t pid, int prio)
{
  char path[64];
  struct dirent *de;
  struct sched_param sp;
  DIR *d;
  int n = 0;

  snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
  if (!(d = opendir(path)))
    return -1;
  memset(&sp, 0, sizeof sp);
  sp.sched_priority = prio > 0 ? prio : 0;
  while ((de = readdir(d)) != NULL) {
    pid_t tid = (pid_t)atoi(de->d_name);

    if (tid > 0 && sched_setscheduler(tid, prio > 0 ? SCHED_FIFO : SCHED_OTHER, &sp) == 0)
      n++;
  }
  closedir(d);
  return n;
}

int kope_realtime(int prio, kope_err *err)
{
  int was = kope_proc_rt_prio();

  if (prio < 2 || prio > sched_get_priority_max(SCHED_FIFO))
    return kope_err_set(err, KOPE_EINPUT, "real-time priority %d: expected 2 to %d", prio,
                        sched_get_priority_max(SCHED_FIFO));
  /* try it now, so a missing privilege is an error here, not a silent
   * no-op at the first timing turn; then back to where the thread was */
  if (kope_proc_rt_set(prio) != 0)
    return kope_err_set(err, KOPE_EENV,
                        "cannot run SCHED_FIFO at priority %d: %s (needs root, "
                        "CAP_SYS_NICE or an RLIMIT_RTPRIO of at least %d)",
                        prio, strerror(errno), prio);
  kope_proc_rt_set(was);
  rt_level = prio;
  return KOPE_OK;
}

void kope_proc_child_setup(const kope_limits *lim, int keep_below)
{
  /* nothing kope starts inherits a real-time priority (kope_realtime:
   * the judge raises a worker's threads only for its timing turns) */
  if (kope_proc_rt_prio() > 0)
    kope_proc_rt_set(0);
  setpgid(0, 0);
  set_limit(RLIMIT_CORE, 0);
  if (lim->cpu_s > 0)
    set_limit(RLIMIT_CPU, (rlim_t)(lim->cpu_s + 0.999));
  if (lim->mem_mb > 0)
    set_limit(RLIMIT_AS, (rlim_t)lim->mem_mb << 20);
  if (lim->fsize_bytes >= 0)
    set_limit(RLIMIT_FSIZE, (rlim_t)lim->fsize_bytes);
  if (lim->nofile > 0)
    set_limit(RLIMIT_NOFILE, (rlim_t)lim->nofile);
  signal(SIGPIPE, SIG_DFL);
#ifdef SYS_close_range
  syscall(SYS_close_range, keep_below, ~0U, 0);
#else
  for (int fd = keep_below; fd < 4096; fd++)
    close(fd);
#endif
}

static void child_exec(const kope_proc_opts *o, int outfd, char *const *envp)
{
  int devnull = open("/dev/null", O_RDONLY);

  dup2(devnull, 0);
  dup2(outfd, 1);
  dup2(outfd, 2);
  if (o->cwd && chdir(o->cwd) != 0)
    _exit(126);
  kope_proc_child_setup(&o->limits, 3);
  if (o->child_hook)
    o->child_hook(o->child_ctx);
  execvpe(o->argv[0], (char *const *)o->argv, envp);
  _exit(127);
}

static void drain(int fd, kope_buf *out, int *open_)
{
  char chunk[8192];
  ssize_t n = read(fd, chunk, sizeof chunk);

  if (n > 0)
    kope_buf_append(out, chunk, (size_t)n);
  else if (n == 0 || (errno != EINTR && errno != EAGAIN))
    *open_ = 0;
}

static void wait_child(pid_t pid, int fd, double deadline, kope_proc_result *r)
{
  int open_ = 1, status = 0, done = 0;
  struct rusage ru;

  while (!done) {
    struct pollfd p = {fd, POLLIN, 0};
    int ms = 100;
    if (deadline > 0) {
      double left = deadline - kope_now();
      if (left <= 0 && !r->timed_out) {
        kill(-pid, SIGKILL);
        kill(pid, SIGKILL);
        r->timed_out = 1;
      }
      ms = left > 0 && left < 0.1 ? (int)(left * 1000) + 1 : 100;
    }
    if (open_ && poll(&p, 1, ms) > 0)
      drain(fd, &r->out, &open_);
    else if (!open_)
      usleep(1000);
    if (wait4(pid, &status, WNOHANG, &ru) == pid)
      done = 1;
  }
  while (open_ && !r->timed_out) {
    struct pollfd p = {fd, POLLIN, 0};
    if (poll(&p, 1, 50) <= 0)
      break;
    drain(fd, &r->out, &open_);
  }
  kill(-pid, SIGKILL);   /* stragglers left in the group */
  r->exited = WIFEXITED(status);
  r->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r->signo = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  r->cpu_s = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 +
             (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
}

int kope_proc_run(const kope_proc_opts *o, kope_proc_result *r, kope_err *err)
{
  int pfd[2];
  pid_t pid;
  kope_env env;
  double t0;
  char *const *envp;

  memset(r, 0, sizeof *r);
  kope_buf_init(&r->out, o->capture_limit ? o->capture_limit : (1u << 20));
  if (pipe2(pfd, O_CLOEXEC) != 0)
    return kope_err_set(err, KOPE_EENV, "pipe: %s", strerror(errno));
  kope_env_init(&env, o->cwd);
  envp = o->envp ? (char *const *)o->envp : env.vars;
  t0 = kope_now();
  pid = fork();
  if (pid < 0) {
    close(pfd[0]);
    close(pfd[1]);
    kope_env_free(&env);
    return kope_err_set(err, KOPE_EENV, "fork: %s", strerror(errno));
  }
  if (pid == 0)
    child_exec(o, pfd[1], envp);
  close(pfd[1]);
  setpgid(pid, pid);
  fcntl(pfd[0], F_SETFL, O_NONBLOCK);
  wait_child(pid, pfd[0], o->timeout_s > 0 ? t0 + o->timeout_s : 0, r);
  r->wall_s = kope_now() - t0;
  close(pfd[0]);
  kope_env_free(&env);
  if (r->exited && r->exit_code == 127 && r->out.len == 0)
    return kope_err_set(err, KOPE_EENV, "cannot run '%s': not found", o->argv[0]);
  return KOPE_OK;
}
