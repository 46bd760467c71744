/*
 * Internals of the agent shared by agent.c (the loop, incumbent rule,
 * budgets), record.c (Cases, Journals, the state file, resume) and
 * setup.c (operator, target, store, evaluator, policy).
 */
#ifndef KOPE_AGENT_INT_H
#define KOPE_AGENT_INT_H

#include "kope/agent.h"
#include "kope/eval.h"
#include "kope/hw.h"
#include "kope/mem.h"
#include "kope/op.h"
#include "kope/target.h"

#define KOPE_AGENT_MAX_BATCH 8

typedef struct agent {
  const kope_opt_opts *o;
  kope_opt_result *res;
  kope_op *op;
  kope_target *t;
  kope_hw *hw;
  char *target_text;
  kope_db *db;
  kope_evaluator *ev;
  kope_policy *pol;
  /* incumbent */
  char *inc_src;
  int64_t inc_case;
  int inc_correct;
  double inc_ref, inc_ven, inc_roof;
  int inc_remeasured;          /* inc_ref etc. come from a confirming re-measurement */
  char *feedback;              /* latest feedback */
  /* session */
  int64_t session;
  int64_t step;                /* last step recorded */
  kope_ctx_step *hist;         /* strings owned */
  size_t nhist, caphist;
  double t0, seconds_before;   /* seconds of earlier runs of a resumed session */
  int64_t evals0, tokens0;     /* counters at the start of this run (resume) */
  char *run_dir;
  char *scene;
  const kope_ctx *ctx;         /* the context of the current iteration */
  kope_ctx_budget budget;      /* o->budget with the estimator calibrated */
} agent;

/* One evaluated proposal. */
typedef struct attempt {
  kope_proposal p;
  kope_report *r;              /* NULL for no_kernel */
  kope_report *r2;             /* re-measurement, when it had one */
  kope_base_cmp cmp;
  int has_cmp, promoted;
  int64_t case_id;
} attempt;

/* setup.c */
/* with_eval 0: no evaluator (dry run). */
int kope_agent_open(agent *a, int with_eval, kope_err *err);
void kope_agent_close(agent *a);
kope_eval_opts kope_agent_eval_opts(const agent *a);

/* record.c */
int kope_agent_record(agent *a, attempt *at, kope_err *err);
int kope_agent_record_start(agent *a, kope_report *r, kope_err *err);
int kope_agent_save_state(agent *a, kope_err *err);
int kope_agent_resume(agent *a, kope_err *err);
/* Append at to the history; KOPE_OK or KOPE_ENOMEM (history unchanged). */
int kope_agent_history_add(agent *a, const attempt *at);
void kope_agent_history_free(agent *a);
int kope_agent_write_best(agent *a, kope_err *err);
const char *kope_agent_verdict(const attempt *at);
double kope_agent_confidence(const attempt *at);

#endif
