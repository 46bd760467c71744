/*
 * The target interface as the evaluator uses it (not a public header):
 * building a worker program for a role, a worker's environment, and every
 * target-specific decision the evaluator makes (which source gate, which
 * vendor baseline, the worker limits, whether the host's hardware profile
 * applies). The evaluator asks these functions and never compares a
 * target's name; a new target fills in its table (target_int.h) and
 * needs no change outside src/target/.
 */
#ifndef KOPE_TARGET_TARGET_H
#define KOPE_TARGET_TARGET_H

#include "kope/target.h"
#include "core/proc.h"

typedef struct kope_build_req {
  const kope_op *op;
  kope_build_role role;
  const char *source;      /* source text */
  const char *workdir;     /* where candidate artifacts go */
  const char *extra_flags; /* candidates only; already allow-listed */
  double timeout_s;        /* compiler wall-clock limit */
} kope_build_req;

typedef struct kope_build_out {
  int ok;                  /* 1: exe is ready */
  char *exe;               /* worker program (owned) */
  char *obj;               /* the kernel's object file (owned; candidates) */
  char *diagnostics;       /* trimmed compiler output (owned, may be "") */
  double seconds;          /* compile + link wall time */
  int cached;              /* trusted build reused from the cache */
} kope_build_out;

void kope_build_out_release(kope_build_out *o);

/* Build a worker program: KOPE_OK with out->ok 0 for a compile error;
 * KOPE_EENV when the toolchain itself failed to run. out is the caller's
 * (release with kope_build_out_release). */
int kope_target_build(kope_target *t, const kope_build_req *req, kope_build_out *out,
                      kope_err *err);
/* Add what a worker of this role needs to env (threads: OpenMP threads). */
void kope_target_worker_env(kope_target *t, kope_build_role role, int threads,
                            kope_env *env);

/* The static source gate of the target's language. */
typedef enum kope_target_gate {
  KOPE_TARGET_GATE_C = 0,     /* C (eval/gate.c) */
  KOPE_TARGET_GATE_OPENCL,    /* OpenCL C (eval/gate_cl.c) */
  KOPE_TARGET_GATE_CUDA       /* CUDA C++ (eval/gate_cu.c) */
} kope_target_gate;

kope_target_gate kope_target_gate_kind(const kope_target *t);
/* Whether the gate also reads the build's artifacts (.i, .s, .o of a C
 * build; kope_gate_files). */
int kope_target_gate_artifacts(const kope_target *t);
/* Whether a worker may get an address-space limit (0 for cuda: the driver
 * reserves virtual address space for all of the GPU's memory and more). */
int kope_target_worker_mem_limited(const kope_target *t);
/* RLIMIT_FSIZE of a worker (proc.h: 0 no file writes; an OpenCL runtime
 * writes its compiled kernel into the run directory). */
long kope_target_worker_fsize(const kope_target *t);
/* Whether the host's hardware profile (kope_hw: peaks, bandwidths) is the
 * one the kernels run against, so a roofline applies (0 for cuda). */
int kope_target_host_roofline(const kope_target *t);

#endif
