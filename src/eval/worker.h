/*
 * The parent side of the worker protocol (src/target/child/kope_child.h):
 * shared-memory regions and worker processes. A region is a memfd mapped
 * read-write by kope; workers get the input region through a read-only
 * descriptor, so they cannot map it writable. A worker is a child process
 * in its own process group with rlimits and a clean environment; every
 * command is answered or the worker is declared dead (signal) or hung
 * (timeout, whole group killed). A strict (candidate) worker also enters
 * the sandbox layers of sandbox.h and gets its seccomp filter.
 */
#ifndef KOPE_EVAL_WORKER_H
#define KOPE_EVAL_WORKER_H

#include <stddef.h>
#include <sys/types.h>
#include "core/proc.h"
#include "target/child/kope_child.h"

typedef struct kope_region {
  int fd;              /* read-write memfd */
  int ro_fd;           /* read-only descriptor of the same file */
  unsigned char *base; /* kope's mapping */
  size_t size;
} kope_region;

int kope_region_init(kope_region *r, const char *name, kope_err *err);
/* Resize (contents are not kept) and remap. */
int kope_region_resize(kope_region *r, size_t size, kope_err *err);
void kope_region_release(kope_region *r);

typedef enum kope_worker_state {
  KOPE_WORKER_OK = 0,
  KOPE_WORKER_DIED = -1,     /* exited or killed by a signal */
  KOPE_WORKER_TIMEOUT = -2,  /* no answer in time: killed */
  KOPE_WORKER_PROTO = -3     /* answered with an error status */
} kope_worker_state;

typedef struct kope_worker {
  pid_t pid;
  int cmd_fd, rep_fd, log_fd;
  kope_buf log;            /* the child's stdout+stderr (bounded) */
  int up;
  int exit_code, signo;    /* once dead */
  double cpu_s;            /* once stopped */
  double wait_s;           /* total time spent waiting for answers */
  uint32_t proto_status;   /* KOPE_CHILD_ST_* of the last error answer */
  char proto_msg[112];
  int strict;              /* candidate: sandboxed, sealed at its first MAP */
  int sealed;              /* the filter is installed (answered a sealing MAP) */
} kope_worker;

/* Start exe in dir with env; in/out are the regions it will map. strict:
 * an untrusted candidate (all available sandbox layers). On failure no
 * descriptor is left open and no process is left running; w->log is
 * initialised either way and released by the caller. Neither this nor
 * kope_worker_command changes signal dispositions: a write to a dead
 * worker reports KOPE_WORKER_DIED instead of raising SIGPIPE. */
int kope_worker_start(kope_worker *w, const char *exe, const char *dir, const kope_env *env,
                      const kope_region *in, const kope_region *out, const kope_limits *lim,
                      int strict, kope_err *err);
/* Send c and wait for the answer; *elapsed is the round trip in seconds
 * measured with kope's clock. Returns a kope_worker_state. */
int kope_worker_command(kope_worker *w, const kope_child_cmd *c, double timeout_s,
                        double *elapsed);
/* Ask the worker to exit, record its CPU time (w->cpu_s), kill its group
 * and close its descriptors; its exit is waited for later
 * (kope_worker_reap_pending), or here when its CPU clock cannot be read.
 * w->log keeps what it wrote. */
void kope_worker_stop(kope_worker *w);
/* Wait for every stopped worker's exit (the kernel unmapping its regions):
 * before timing, so no exit runs beside a timed kernel, and before an
 * evaluator is gone, so the library leaves no zombie. Thread-safe. */
void kope_worker_reap_pending(void);

#endif
