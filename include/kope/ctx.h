/*
 * kope context assembly: Active Context Management and Injection (ACMI,
 * DESIGN.md §1).
 *
 * Before every step the agent rebuilds the context from scratch out of
 * three tiers:
 *   hot   always admitted: the operator specification, the incumbent
 *         kernel with its knobs and measurements, the latest feedback, the
 *         target description;
 *   warm  graph-ranked experience for this state: Cases of this operator
 *         and its category on this target (bucketed by outcome label,
 *         ordered by d(v)·c_v), fixes for the latest error, digests;
 *   cold  knowledge cards under targets/<target>/, experience from other
 *         categories, digests of other categories.
 * The knowledge budget is B_k = max(0, W − S − G − R). The hot payload H
 * must fit (H ≤ B_k) or the step is refused with KOPE_EINPUT; then at most
 * Q_w tokens of warm and Q_c of cold material are admitted, best first,
 * never more than B_k in all.
 *
 * The passive mode is the paper's baseline: the whole session history and
 * every memory record retrieved are appended in arrival order, bounded
 * only by the window (W − S − G).
 *
 * The same context feeds every policy: it renders to a system and a user
 * prompt for an LLM, and its items carry structured fields (thought id,
 * layer, label, ratios, confidence, relevance) for the offline tuner.
 *
 * Token counts use an estimator: ceil(characters / chars_per_token), with
 * chars_per_token 4.0 by default and recalibrated from the usage a provider
 * reports (kope_ctx_calibrate).
 */
#ifndef KOPE_CTX_H
#define KOPE_CTX_H

#include <stdint.h>
#include <jansson.h>
#include "kope/core.h"
#include "kope/mem.h"
#include "kope/op.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum kope_tier {
  KOPE_TIER_HOT = 0,
  KOPE_TIER_WARM = 1,
  KOPE_TIER_COLD = 2,
  KOPE_TIER_COUNT = 3
} kope_tier;

typedef enum kope_ctx_kind {
  KOPE_CTX_SPEC = 0,     /* operator specification and prototype */
  KOPE_CTX_TARGET,       /* target, hardware, allowed headers and flags */
  KOPE_CTX_INCUMBENT,    /* incumbent source, knobs, measurements */
  KOPE_CTX_FEEDBACK,     /* the latest evaluation feedback */
  KOPE_CTX_CASE,         /* a Case from memory */
  KOPE_CTX_FIX,          /* a past failure with the same error and its fix */
  KOPE_CTX_DIGEST,       /* a distilled lesson */
  KOPE_CTX_JOURNAL,      /* a Journal excerpt found by text search */
  KOPE_CTX_CARD,         /* a knowledge card (target documentation) */
  KOPE_CTX_HISTORY,      /* passive mode: one earlier step of this session */
  KOPE_CTX_KIND_COUNT
} kope_ctx_kind;

const char *kope_tier_name(int tier);       /* "hot", "warm", "cold" */
const char *kope_ctx_kind_name(int kind);   /* "spec", "case", ... */

typedef enum kope_ctx_mode {
  KOPE_CTX_ACTIVE = 0,
  KOPE_CTX_PASSIVE = 1
} kope_ctx_mode;

/* Budget parameters (tokens). Defaults (kope_ctx_budget_init) suit a
 * 32k-token model: W 32768, S 800, G 4096, R 1024, Q_w 6000, Q_c 3000. */
typedef struct kope_ctx_budget {
  long window;              /* W */
  long system;              /* S: reserved for the system prompt */
  long generation;          /* G: reserved for the reply */
  long recency;             /* R: reserve for the latest turn */
  long warm_quota;          /* Q_w */
  long cold_quota;          /* Q_c */
  double chars_per_token;   /* estimator; <= 0 means 4.0 */
} kope_ctx_budget;

void kope_ctx_budget_init(kope_ctx_budget *b);
/* B_k = max(0, W − S − G − R). */
long kope_ctx_knowledge_budget(const kope_ctx_budget *b);
/* Estimated tokens of text under b's estimator (NULL b: 4 chars/token). */
long kope_ctx_estimate(const kope_ctx_budget *b, const char *text);
/* Fold one observation (prompt characters, tokens the provider counted)
 * into b->chars_per_token (running mean weighted towards recent calls). */
void kope_ctx_calibrate(kope_ctx_budget *b, size_t chars, long tokens);

/* One step of this session, for passive history and for the policies. */
typedef struct kope_ctx_step {
  int64_t step;
  const char *thought_id, *title, *verdict;
  int correct, promoted;
  double speedup_ref;       /* absolute, 0 when not timed */
  double vs_incumbent;      /* ratio vs the incumbent it started from */
  double vs_lo, vs_hi;      /* its ~95% CI (0 when not timed against one) */
  double p_value;           /* one-sided sign test, 1 when not timed */
  int remeasured;           /* 0 not re-measured, 1 confirmed, -1 not confirmed */
  double re_speedup, re_lo, re_hi, re_p;   /* the re-measurement, when any */
  const char *feedback;     /* may be NULL */
  const char *source;       /* the candidate (passive history includes it) */
  int64_t case_id;          /* its Case in the store (0 when not recorded) */
} kope_ctx_step;

/* The state the context is built for. Strings borrowed for the call. */
typedef struct kope_ctx_state {
  const kope_op *op;
  const char *target;            /* "cpu" */
  const char *target_text;       /* kope_target_describe() */
  const char *hw;                /* hardware fingerprint (informational) */
  const char *incumbent;         /* incumbent kernel source */
  int incumbent_correct;
  double inc_speedup_ref, inc_speedup_vendor, inc_roofline;
  int64_t inc_case_id;           /* 0 when not recorded */
  int inc_remeasured;            /* 1: the figures above are the confirming
                                    re-measurement, not the first measurement */
  double min_gain, alpha;        /* the incumbent rule (0: 0.05 and 0.05) */
  const char *feedback;          /* latest evaluation feedback, or NULL */
  const char *cards_dir;         /* NULL: <source>/targets/<target> */
  int64_t step;                  /* iteration about to run */
  int64_t session_id;            /* this session (its own Cases are history) */
  const kope_ctx_step *history;  /* this session's steps, oldest first */
  size_t nhistory;
} kope_ctx_state;

/* An admitted item. All strings owned by the context. */
typedef struct kope_ctx_item {
  int tier;                 /* kope_tier */
  int kind;                 /* kope_ctx_kind */
  char *title;              /* short heading */
  char *text;               /* rendered text */
  long tokens;              /* estimate of title + text */
  /* experience (CASE, FIX, DIGEST, JOURNAL); strings "" when absent */
  int64_t case_id;
  char *op, *category, *layer, *thought_id, *verdict;
  char *target;             /* the record's target ("" when unknown) */
  int other_target;         /* 1: experience from another target (cold) */
  kope_mem_score score;     /* the record's (kope_mem_rec.score); label
                               -1 when none */
  double relevance;         /* 1 same operator, 0.6 same category, 0.3 other */
  int64_t attempts, n_correct, n_effective;   /* digests */
  double median_ratio;                          /* digests */
} kope_ctx_item;

typedef struct kope_ctx kope_ctx;

/* Build the context. db NULL means no memory (warm and cold experience
 * empty; knowledge cards are still cold material). Returns NULL with err
 * set: KOPE_EINPUT when the hot payload does not fit B_k (the message gives
 * H and B_k), KOPE_EENV for a database failure. Caller frees. */
kope_ctx *kope_ctx_build(const kope_ctx_state *s, kope_db *db, int mode,
                         const kope_ctx_budget *b, kope_err *err);
void kope_ctx_free(kope_ctx *c);

int kope_ctx_mode_of(const kope_ctx *c);
size_t kope_ctx_nitems(const kope_ctx *c);
const kope_ctx_item *kope_ctx_item_at(const kope_ctx *c, size_t i);
long kope_ctx_tier_tokens(const kope_ctx *c, int tier);
long kope_ctx_total_tokens(const kope_ctx *c);
/* Items left out by the budget (counted, not kept). */
size_t kope_ctx_dropped(const kope_ctx *c, int tier);
const kope_ctx_budget *kope_ctx_budget_of(const kope_ctx *c);
const kope_ctx_state *kope_ctx_state_of(const kope_ctx *c);   /* borrowed state */

/* Render for an LLM: *system and *user are owned by the caller. */
int kope_ctx_render(const kope_ctx *c, char **system, char **user, kope_err *err);
/* {"mode", "budget": {...}, "tokens": {"hot","warm","cold","total"},
 *  "items": [{"tier","kind","title","tokens",...}]} (new reference). */
json_t *kope_ctx_to_json(const kope_ctx *c, int with_text);

#ifdef __cplusplus
}
#endif

#endif
