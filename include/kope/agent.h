/*
 * kope agent: the experience-driven optimization loop (DESIGN.md §1).
 *
 * kope_optimize runs one session for one operator on one target:
 *   evaluate the starting kernel (the seed, or --from), record it as the
 *   root Case; then per iteration retrieve → assemble the context (ACMI)
 *   → the policy proposes → evaluate (timed side by side against the
 *   incumbent) → record a Case (prev_case_id = the incumbent's Case) and
 *   a Journal entry → update the incumbent.
 * Incumbent rule: a candidate replaces the incumbent only if it is correct
 * and, over all interleaved timing rounds against the incumbent, its
 * geometric-mean speedup is at least 1 + min_gain, the lower confidence
 * bound is above 1 and a one-sided sign test gives p < alpha; it is then re-measured in a second, independent
 * evaluation, which must pass the same rule.
 * Budgets (evaluations, tokens, seconds) stop the loop at the first one
 * reached; a stop request (SIGINT) stops it after the current evaluation.
 * Every step is committed to the store before the next begins, and a
 * state file in the run directory makes --resume possible.
 */
#ifndef KOPE_AGENT_H
#define KOPE_AGENT_H

#include <signal.h>
#include <stdint.h>
#include <jansson.h>
#include "kope/core.h"
#include "kope/ctx.h"
#include "kope/policy.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum kope_memory_mode {
  KOPE_MEMORY_ON = 0,        /* retrieve and record */
  KOPE_MEMORY_OFF = 1,       /* the policy sees no experience; attempts are still recorded */
  KOPE_MEMORY_READONLY = 2   /* retrieve, record nothing (no resume) */
} kope_memory_mode;

/* Live progress after each step. */
typedef struct kope_opt_progress {
  int64_t step, evals, budget_evals;
  double best_ref, best_vendor;      /* incumbent speedups */
  const char *last_verdict;
  double last_vs_incumbent;
  int last_promoted;
  int64_t tokens;
  double seconds;
  const char *phase;                 /* "evaluating", "proposing", ... */
} kope_opt_progress;

typedef struct kope_opt_opts {
  const char *op;            /* operator name or folder (ignored on resume) */
  const char *ops_dir;
  const char *target;        /* "cpu" */
  const char *device;        /* the target's device (kope_target_opts.device); NULL default */
  const char *policy;        /* tuner | random | llm | llm+tuner */
  kope_policy_opts pol;
  const char *db_path;       /* NULL: default store */
  int memory;                /* kope_memory_mode */
  int context;               /* kope_ctx_mode */
  kope_ctx_budget budget;    /* context budget */
  int64_t budget_evals;      /* candidate evaluations; 0 = unlimited */
  int64_t budget_tokens;     /* 0 = unlimited */
  double budget_seconds;     /* 0 = unlimited */
  const char *out;           /* best kernel path; NULL: <run dir>/best.c */
  const char *from;          /* starting kernel file; NULL: the seed */
  int start_plain;           /* start with every knob of the starting kernel at
                                the first of its listed values (--start plain) */
  int64_t resume;            /* session id to continue; 0 = new */
  uint64_t seed;             /* policy seed */
  int batch;                 /* candidates per iteration (compiled in parallel) */
  double min_gain;           /* default 0.05 */
  double alpha;              /* default 0.05 */
  int eval_seeds;            /* input seeds per case; 0 = evaluator default */
  int threads;
  double case_budget_s;      /* timing time per case; 0 = default */
  int no_vendor;             /* do not time the vendor baseline (speedups vs vendor 0) */
  int min_rounds;            /* minimum timing rounds per case; 0 = evaluator default */
  volatile sig_atomic_t *stop;   /* nonzero: stop after the current step */
  void (*progress)(void *ctx, const kope_opt_progress *p);
  void *progress_ctx;
} kope_opt_opts;

void kope_opt_opts_init(kope_opt_opts *o);

typedef struct kope_opt_result {
  char op[64], target[32], policy[128];
  int64_t session_id;
  int passed;                /* a correct kernel exists */
  double seed_ref, seed_vendor;          /* starting kernel */
  double best_ref, best_vendor, best_roofline;
  int64_t best_case_id;
  int64_t evals, remeasures, promotions, steps;
  /* end-of-session re-measurement (outside the budgets): candidates
   * re-measured against the incumbent, and the Case that was the best
   * before it when one of them replaced it (0: the incumbent stayed) */
  int64_t final_evals, final_replaced_case;
  int64_t tokens_in, tokens_out;
  double seconds;
  char stop_reason[64];      /* budget-evals, budget-tokens, budget-seconds,
                                interrupted, exhausted */
  char best_path[4096];
  char run_dir[4096];
  long ctx_tokens_max, ctx_tokens_last;  /* context size seen by the policy */
#define KOPE_OPT_MAX_TRACE 512
  long ctx_tokens[KOPE_OPT_MAX_TRACE];   /* per iteration of this run */
  long ctx_hot[KOPE_OPT_MAX_TRACE];      /* its hot part */
  int nctx;
} kope_opt_result;

/* Run (or resume) a session. Returns KOPE_OK when the loop ran (check
 * res->passed), KOPE_EINPUT for bad options or operator, KOPE_EENV for an
 * environment problem (compiler, database). */
int kope_optimize(const kope_opt_opts *o, kope_opt_result *res, kope_err *err);

/* Print the context the first step would send, without evaluating
 * anything (--dry-run): *out is a JSON document {context, system, user}. */
int kope_optimize_dry_run(const kope_opt_opts *o, json_t **out, kope_err *err);

json_t *kope_opt_result_json(const kope_opt_result *r);

#ifdef __cplusplus
}
#endif

#endif
