/*
 * Child processes with limits: spawn a program with a clean environment, a
 * working directory, rlimits (CPU seconds, address space, file size, no
 * core files), its own process group, all other descriptors closed, and a
 * wall-clock timeout enforced by the parent, which kills the whole group.
 * Output (stdout and stderr together) is captured into a bounded buffer.
 * Safe to call from several threads at once (fork only runs
 * async-signal-safe calls before exec).
 */
#ifndef KOPE_CORE_PROC_H
#define KOPE_CORE_PROC_H

#include <sys/types.h>
#include "kope/core.h"

typedef struct kope_limits {
  double cpu_s;        /* RLIMIT_CPU, 0 = none */
  long mem_mb;         /* RLIMIT_AS in MiB, 0 = none */
  long fsize_bytes;    /* RLIMIT_FSIZE; -1 = none, 0 = no file writes */
  long nofile;         /* RLIMIT_NOFILE, 0 = leave */
} kope_limits;

typedef struct kope_proc_opts {
  const char *const *argv;   /* argv[0] is the program (looked up in PATH) */
  const char *const *envp;   /* full environment; NULL = kope_proc_clean_env */
  const char *cwd;           /* NULL = inherit */
  double timeout_s;          /* wall clock, 0 = none */
  kope_limits limits;
  size_t capture_limit;      /* bytes of output kept (0 = 1 MiB) */
  /* Run in the child just before exec (NULL: none); async-signal-safe
   * calls only (the candidate compile's sandbox, src/eval/sandbox.c). */
  void (*child_hook)(void *ctx);
  void *child_ctx;
} kope_proc_opts;

typedef struct kope_proc_result {
  int exited;        /* 1 if exited normally */
  int exit_code;     /* when exited */
  int signo;         /* terminating signal, 0 if none */
  int timed_out;     /* killed by the parent's timeout */
  double wall_s;
  double cpu_s;      /* user + system of the child (and its children) */
  kope_buf out;      /* captured output; caller releases */
} kope_proc_result;

/* Run to completion. Returns KOPE_OK when the process could be started
 * (whatever its outcome), KOPE_EENV otherwise. */
int kope_proc_run(const kope_proc_opts *opts, kope_proc_result *res, kope_err *err);

/* A child environment: a NULL-terminated array of "K=V" strings. */
typedef struct kope_env {
  char *vars[40];
  int n;
} kope_env;

/* The minimal environment kope gives children: PATH, LANG=C, and HOME and
 * TMPDIR set to dir (when dir is not NULL). Release with kope_env_free. */
void kope_env_init(kope_env *env, const char *dir);
/* Add "name=value" (formatted); ignored when full. */
void kope_env_add(kope_env *env, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Copy a variable from kope's own environment when it is set. */
void kope_env_pass(kope_env *env, const char *name);
void kope_env_free(kope_env *env);

/* In a forked child: apply limits, new process group, close fds >= first,
 * and drop a real-time scheduling policy inherited from kope (see
 * kope_realtime). Only async-signal-safe calls. */
void kope_proc_child_setup(const kope_limits *lim, int first_fd_to_keep_open_below);

/* The calling thread's real-time priority: p when it runs SCHED_FIFO or
 * SCHED_RR, else 0. Async-signal-safe. */
int kope_proc_rt_prio(void);
/* Run the calling thread SCHED_FIFO at prio (> 0) or SCHED_OTHER (0).
 * Returns 0 or -1 with errno (sched_setscheduler). Async-signal-safe. */
int kope_proc_rt_set(int prio);
/* The priority kope_realtime enabled (0: --realtime is off). The judge
 * runs SCHED_FIFO at it only while it holds a timing turn. */
int kope_proc_rt_level(void);
/* Set every thread of process pid SCHED_FIFO at prio (> 0) or back to
 * SCHED_OTHER (0). Returns how many threads were set, -1 when pid's
 * /proc/PID/task cannot be read (gone). */
int kope_proc_rt_set_threads(pid_t pid, int prio);

#endif
