/*
 * kope evaluator: the trusted judge. It compiles a candidate kernel with
 * the target's toolchain, runs it in a separate, limited child process on
 * fresh inputs for every case of the operator, checks the outputs against
 * the reference (which runs in a process of its own), and times candidate
 * and baselines in interleaved rounds with the parent's clock. The verdict
 * and the measurements come back as a kope_report.
 *
 * Memory verdicts depend on this module being right, so it never trusts
 * the candidate: a static gate inspects the compiled object before it
 * runs; inputs are mapped read-only in the child, outputs are poisoned
 * before each call and checked for writes past their end, the child gets
 * rlimits, a clean environment, its own directory and process group,
 * the sandbox layers the machine allows (no_new_privs, seccomp, user and
 * network namespaces, Landlock) and a wall-clock timeout enforced by the
 * parent. See docs/security.md for threats and defenses.
 */
#ifndef KOPE_EVAL_H
#define KOPE_EVAL_H

#include <stdint.h>
#include <jansson.h>
#include "kope/core.h"
#include "kope/op.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Version of the judging rules; recorded with every result so results of
 * an older harness can be found and re-evaluated. kope-eval-2: static
 * gate, sandbox layers, rotating timed buffers, FP-state and repeat-call
 * checks, review flags (docs/security.md). kope-eval-3: on the cpu target
 * each worker's OpenMP threads are pinned one per CPU before timing
 * (docs/evaluator.md, "Thread placement"). kope-eval-4: checked timing
 * rounds in both round orders, every worker's outputs written before them
 * (docs/evaluator.md, "Same-round bias"). kope-eval-5: candidates compile
 * in a sandbox, the gate reads inline asm as the assembler does, refuses
 * asm labels and the old libgomp ABI, and the runtime clears the stack
 * between calls (docs/security.md, "Hardening round two"). kope-eval-6:
 * every timed case is judged against the roofline of the memory level it
 * fits in, and a thread of the candidate still running after its calls
 * returned is forbidden (docs/security.md, "Hardening round two"). */
#define KOPE_HARNESS_VERSION "kope-eval-6"

typedef enum kope_verdict {
  KOPE_CORRECT = 0,
  KOPE_COMPILE_ERROR,
  KOPE_INCORRECT,
  KOPE_CRASH,
  KOPE_TIMEOUT,
  KOPE_FORBIDDEN
} kope_verdict;

const char *kope_verdict_name(kope_verdict v);

typedef struct kope_eval_opts {
  const char *target;      /* "cpu" */
  const char *device;      /* the target's device (kope_target_opts.device); NULL default */
  const char *cuda_arch;   /* cuda architectures (kope_target_opts.cuda_arch); NULL default */
  int seeds;               /* fresh input seeds per case (>= 5 by default) */
  uint64_t seed;           /* 0: fresh from the OS every evaluation */
  int threads;             /* OMP threads for candidate/vendor; 0 = all */
  double timeout_s;        /* wall-clock limit per command to a worker */
  double compile_timeout_s;
  int timing;              /* 0: correctness only */
  int min_rounds, max_rounds;
  double sample_s;         /* target duration of one timing sample */
  double case_budget_s;    /* timing time per case (soft) */
  const char *cflags;      /* extra candidate flags (allow-listed) */
  const char *hw_cache;    /* NULL: <kope_home>/hw.json */
  int keep_workdir;        /* keep candidate work directories */
  int parallel_builds;     /* compile jobs at once; 0 = online CPUs */
  int no_gate;             /* skip the static gate (only to test the sandbox) */
  int no_vendor;           /* neither build nor time the vendor baseline (kope bench's
                            * search: its final re-measurement times the vendor) */
  int build_only;          /* gate and compile only: no reference, no device, nothing
                            * runs; an admitted kernel keeps the verdict correct with
                            * the reason "built" (see kope_report_reason) */
  void (*progress)(void *ctx, const char *line);  /* optional */
  void *progress_ctx;
} kope_eval_opts;

void kope_eval_opts_init(kope_eval_opts *o);

typedef struct kope_evaluator kope_evaluator;
typedef struct kope_report kope_report;

/* Prepare to judge candidates for op: opens the target, builds (or reuses)
 * the reference and vendor workers, loads the hardware profile when timing.
 * op must outlive the evaluator. Caller frees with kope_evaluator_free. */
kope_evaluator *kope_evaluator_new(const kope_op *op, const kope_eval_opts *opts,
                                   kope_err *err);
void kope_evaluator_free(kope_evaluator *ev);

/* Evaluate one candidate source text. Returns a report (caller frees with
 * kope_report_free) or NULL with err set for an environment problem. A
 * rejected kernel is a report, not an error. */
kope_report *kope_evaluate(kope_evaluator *ev, const char *source, kope_err *err);
/* Evaluate n candidates: they compile in parallel, then run one at a time
 * (two kernels are never timed at once). reports[i] receives each report.
 * Returns KOPE_OK or the first environment error. */
int kope_evaluate_batch(kope_evaluator *ev, const char *const *sources, size_t n,
                        kope_report **reports, kope_err *err);

/* Check the operator's vendor baseline against the reference on every
 * case and seed (no timing): a baseline must be correct to be a bar. */
kope_report *kope_evaluate_vendor(kope_evaluator *ev, kope_err *err);

/* Time every later candidate also against a base kernel (normally the
 * incumbent) in the same interleaved rounds, so "faster than the
 * incumbent" is a side-by-side ratio, not two numbers taken at different
 * times. The base is built as a candidate (untrusted) and only timed, not
 * checked. source NULL removes the base. A base that does not compile is
 * KOPE_EINPUT. */
int kope_evaluator_set_base(kope_evaluator *ev, const char *source, kope_err *err);

/* Candidate vs base over all timed cases (perf cases and cases without a
 * role; never check cases). speedup is the geometric mean of
 * the per-case median ratios t_base / t_cand; lo/hi the geometric means of
 * the per-case confidence bounds; wins counts the interleaved rounds
 * (over all cases) in which the candidate was faster, p_value the
 * one-sided sign-test probability of at least that many wins by chance. */
typedef struct kope_base_cmp {
  double speedup, lo, hi;
  int rounds, wins;
  double p_value;
} kope_base_cmp;
/* 1 and *out filled when the report was timed against a base, else 0. */
int kope_report_vs_base(const kope_report *r, kope_base_cmp *out);

void kope_report_free(kope_report *r);
kope_verdict kope_report_verdict(const kope_report *r);
/* Verdict correct and nothing flagged for review (a result beyond the
 * roofline, a suspected cache, CPU time beyond the calls). */
int kope_report_accepted(const kope_report *r);
const char *kope_report_reason(const kope_report *r);     /* one line */
/* Compact feedback for a policy: diagnostics or the first mismatch, and the
 * measured speedups. Owned by the report. */
const char *kope_report_feedback(const kope_report *r);
/* Geomeans over the timed cases only (check cases are never scored). */
double kope_report_speedup_ref(const kope_report *r);     /* geomean over timed cases; 0 if none */
double kope_report_speedup_vendor(const kope_report *r);  /* 0 when no vendor */
double kope_report_roofline(const kope_report *r);        /* geomean fraction; 0 if unknown */
size_t kope_report_ncases(const kope_report *r);
/* Per case: median speedup vs reference and its ~95% CI. */
double kope_report_case_speedup(const kope_report *r, size_t c, double *lo, double *hi);
/* Per case: its op.json name ("" when none), shape label (as
 * kope_op_case_label) and role; owned by the report. Check cases are
 * judged for correctness only: never timed, never in a geomean, a score
 * or the comparison with the base. */
const char *kope_report_case_name(const kope_report *r, size_t c);
const char *kope_report_case_label(const kope_report *r, size_t c);
kope_case_role kope_report_case_role(const kope_report *r, size_t c);
/* Nonzero when case c was timed (its speedups and seconds are measured). */
int kope_report_case_timed(const kope_report *r, size_t c);
/* Per case: median speedup vs the vendor baseline; 0 when none or untimed. */
double kope_report_case_vendor(const kope_report *r, size_t c);
/* "check", "perf" or "both" (a case without a role). */
const char *kope_case_role_name(kope_case_role role);
/* Median candidate time per call, seconds. */
double kope_report_case_seconds(const kope_report *r, size_t c);
/* The worst element error over every judged case and seed, as a fraction
 * of its tolerance bound (1 = at the bound); how much of the operator's
 * tolerance this kernel used. 0 when nothing was compared. */
double kope_report_max_error_ratio(const kope_report *r);
double kope_report_compile_seconds(const kope_report *r);
double kope_report_total_seconds(const kope_report *r);
/* kope's own time: everything but compiling and waiting on workers. */
double kope_report_overhead_seconds(const kope_report *r);
/* The full report (new reference): verdict, reason, mismatch, per-case
 * statistics with raw samples, environment and harness version. */
json_t *kope_report_to_json(const kope_report *r);

/* The sandbox layers this machine allows for candidate workers (probed
 * once per process): {"available": [...], "unavailable": {layer: why}}.
 * New reference. */
json_t *kope_eval_sandbox_json(void);

#ifdef __cplusplus
}
#endif
#endif
