/*
 * kope policies: what proposes the next candidate kernel from a context.
 *
 * A policy sees only the assembled context (kope_ctx) — never the raw
 * database — so ablations compare like with like. Policies:
 *   tuner      the offline tuner: knob moves on the incumbent chosen by a
 *              bandit rule whose priors come from the experience records
 *              in the context (see docs/optimize.md);
 *   random     blind random knob search, the autotuner baseline;
 *   llm        a frozen LLM writing the kernel (issue 7, src/policy/llm.c);
 *   llm+tuner  the LLM, with the tuner tuning the knobs it declares
 *              between LLM steps.
 * After each evaluation the agent calls kope_policy_observe with the
 * outcome, so a policy can learn within the session (and is replayed the
 * session's earlier steps on --resume).
 */
#ifndef KOPE_POLICY_H
#define KOPE_POLICY_H

#include <stdint.h>
#include "kope/core.h"
#include "kope/ctx.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kope_policy kope_policy;

typedef struct kope_policy_opts {
  uint64_t seed;               /* 0: from the OS */
  double explore;              /* tuner: UCB exploration weight (0: default 0.35) */
  /* LLM (llm, llm+tuner); NULL fields take defaults / environment */
  const char *llm_provider;    /* openai | anthropic | command | replay */
  const char *llm_url;
  const char *llm_model;
  const char *llm_cmd;
  const char *llm_replay;      /* replay provider: the recorded session */
  double temperature;          /* < 0: provider default */
  long max_tokens;             /* generation allowance G; 0: from the budget */
  const char *max_tokens_field;  /* openai: max_tokens | max_completion_tokens */
  int stream;                  /* 1 stream (SSE), 0 not */
  double connect_timeout_s, stall_timeout_s;
  double cmd_timeout_s;        /* command provider wall clock (0: 600 s) */
  double backoff_s;            /* first retry wait (0: 1 s), doubled and jittered */
  int retries;
  int reflect;                 /* 1: LLM reflection writes Journal interpretation */
  int reflect_off_budget;      /* 1: reflection tokens do not count against budgets */
  int json_reply;              /* openai: ask for a JSON object via response_format */
  long max_reply_bytes;        /* response size cap (0: 4 MiB) */
  int tuner_steps;             /* llm+tuner: tuner steps between LLM steps */
} kope_policy_opts;

void kope_policy_opts_init(kope_policy_opts *o);

/* What a policy proposes. All strings owned by the proposal. */
typedef struct kope_proposal {
  char *source;            /* complete kernel source; NULL with no_kernel set */
  char *layer;             /* optimization layer (parallel, tiling, ...) */
  char *thought_id;        /* e.g. "parallel.parallel=1" */
  char *title;             /* one line */
  char *rationale;
  int thought_inferred;    /* the thought was inferred, not declared */
  char *no_kernel;         /* reason when there is no usable kernel */
  int64_t tokens_in, tokens_out;   /* provider usage (estimates if none) */
  int truncated;           /* the reply hit the length limit */
  double seconds;          /* time the policy took */
} kope_proposal;

void kope_proposal_release(kope_proposal *p);

/* The evaluator's outcome for a proposal. */
typedef struct kope_outcome {
  const char *thought_id;
  const char *verdict;      /* kope_verdict_name(), or "no_kernel" */
  int correct;
  double speedup_ref;       /* absolute, 0 when not timed */
  double vs_incumbent;      /* t_incumbent / t_candidate, 0 when unknown */
  int promoted;             /* became the incumbent */
  const char *feedback;
} kope_outcome;

/* name: tuner | random | llm | llm+tuner. KOPE_EINPUT for an unknown name
 * or a bad LLM configuration. Caller frees. */
kope_policy *kope_policy_new(const char *name, const kope_policy_opts *o, kope_err *err);
void kope_policy_free(kope_policy *p);
/* "tuner", "random", "llm:<model>" — recorded with the session. */
const char *kope_policy_name(const kope_policy *p);
/* 1 when the policy writes code from prompts (it needs the rendered
 * context and spends tokens). */
int kope_policy_uses_llm(const kope_policy *p);

/* Propose the next candidate for the context. Returns KOPE_OK with *out
 * filled (out->source or out->no_kernel set), KOPE_EREJECT when the policy
 * has nothing left to try, or an error (KOPE_EENV: provider unreachable
 * after retries). */
int kope_policy_propose(kope_policy *p, const kope_ctx *ctx, kope_proposal *out,
                        kope_err *err);
/* Tell the policy how its proposal fared. A verdict of "pending" means
 * proposed but not evaluated yet (several proposals from one context). On
 * --resume the session's earlier steps are replayed with ctx NULL. */
void kope_policy_observe(kope_policy *p, const kope_ctx *ctx, const kope_proposal *prop,
                         const kope_outcome *o);
/* Optional reflection: a Markdown interpretation for the Journal, or NULL
 * (the agent's template stands alone). ctx is the context the proposal
 * was made from. Caller frees. */
char *kope_policy_reflect(kope_policy *p, const kope_ctx *ctx, const kope_proposal *prop,
                          const kope_outcome *o);
/* Tokens the policy spent outside proposals (reflection) since the last
 * call, added to *in and *out (the counters are then reset). */
void kope_policy_take_tokens(kope_policy *p, int64_t *in, int64_t *out);

#ifdef __cplusplus
}
#endif

#endif
