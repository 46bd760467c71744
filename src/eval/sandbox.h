/*
 * Sandbox layers for candidate workers, on top of what every worker gets
 * (own process, process group, rlimits, clean environment, closed
 * descriptors). kope probes once per process which layers this kernel
 * allows and then applies them to every candidate worker:
 *
 *  - no_new_privs and a parent-death signal (always);
 *  - a user namespace (the worker's root is mapped to an unprivileged id)
 *    and a network namespace with no interfaces, where unprivileged
 *    namespaces (or root) allow them;
 *  - Landlock: system paths read/execute only, the worker's run
 *    directory read-write; no TCP; no signals to processes outside;
 *  - seccomp-bpf: an allow-list built with libseccomp by kope, handed to
 *    the worker as a BPF program in a memfd and installed by the trusted
 *    child runtime with thread sync after the buffers are mapped and the
 *    OpenMP pool is started. A refused system call traps: the runtime
 *    logs its number and exits with KOPE_SANDBOX_TRAP_EXIT.
 *
 * Trusted workers (reference, vendor baselines: oneDNN JIT-compiles and
 * OpenBLAS starts its own threads) get no_new_privs and the parent-death
 * signal only. What each worker really got is verified from /proc.
 */
#ifndef KOPE_EVAL_SANDBOX_H
#define KOPE_EVAL_SANDBOX_H

#include <stddef.h>
#include <sys/types.h>
#include <jansson.h>
#include "kope/core.h"

/* Exit statuses of a candidate worker that the sandbox ended. */
#define KOPE_SANDBOX_SETUP_EXIT 125   /* a layer could not be applied */
#define KOPE_SANDBOX_TRAP_EXIT 159    /* a system call outside the allow-list */
#define KOPE_SANDBOX_FILTER_FD 7      /* where the worker finds the BPF program */

typedef struct kope_sandbox_caps {
  int seccomp;          /* seccomp filters with TSYNC can be installed */
  int userns;           /* user namespace with an id map */
  int netns;            /* network namespace */
  int landlock_abi;     /* 0: Landlock unavailable */
  char why_seccomp[96], why_userns[96], why_netns[96], why_landlock[96];
} kope_sandbox_caps;

/* The layers this machine allows (probed once, then cached). Forks small
 * test children; call it before starting threads. */
const kope_sandbox_caps *kope_sandbox_probe(void);
/* {"available": [...], "unavailable": {"layer": "why"}} (new reference). */
json_t *kope_sandbox_caps_json(const kope_sandbox_caps *c);

/* In the forked child, before execve. strict: a candidate (namespaces and
 * Landlock too); otherwise no_new_privs and the death signal only. Only
 * async-signal-safe calls; on failure writes a line to fd 2 and exits
 * with KOPE_SANDBOX_SETUP_EXIT. */
void kope_sandbox_enter(const kope_sandbox_caps *c, const char *rundir, int strict);

/* In the forked child of a candidate's compiler (gcc, the assembler):
 * no_new_privs, the death signal, the user and network namespaces and
 * Landlock with /usr, /lib, /lib64, /bin read/execute, /etc/ld.so.cache
 * and /dev/null, and rundir (the kernel's own directory) read-write:
 * `.include`/`.incbin` of any other file fails. Layers this machine lacks
 * are skipped, as for workers. Async-signal-safe; exits with
 * KOPE_SANDBOX_SETUP_EXIT when a layer fails. */
void kope_sandbox_enter_compile(const kope_sandbox_caps *c, const char *rundir);

/* A memfd holding the candidate filter (BPF) for the worker with this pid
 * (it may signal only itself). Returns the descriptor or -1 with err. */
int kope_sandbox_filter_fd(pid_t pid, kope_err *err);

/* The layers active in process pid as /proc shows them, plus landlock
 * when it was applied: a JSON array of names (new reference). */
json_t *kope_sandbox_verify(pid_t pid, int landlock_abi);

/* 1 when a worker that ended with exit_code and log was stopped by the
 * sandbox; fills why with the refused system call or the failed layer. */
int kope_sandbox_death(const char *log, int exit_code, char *why, size_t size);

#endif
