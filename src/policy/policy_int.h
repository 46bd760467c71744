/*
 * Internals shared by the policies: the vtable every policy implements
 * and the constructors the registry in policy.c dispatches to.
 */
#ifndef KOPE_POLICY_INT_H
#define KOPE_POLICY_INT_H

#include "kope/policy.h"

typedef struct kope_policy_vt {
  const char *kind;   /* "tuner", "random", "llm", "llm+tuner" */
  int (*propose)(kope_policy *p, const kope_ctx *ctx, kope_proposal *out, kope_err *err);
  void (*observe)(kope_policy *p, const kope_ctx *ctx, const kope_proposal *prop,
                  const kope_outcome *o);
  char *(*reflect)(kope_policy *p, const kope_ctx *ctx, const kope_proposal *prop,
                   const kope_outcome *o);   /* may be NULL */
  void (*destroy)(kope_policy *p);
  int uses_llm;
} kope_policy_vt;

/* Every policy struct starts with this header. */
struct kope_policy {
  const kope_policy_vt *vt;
  char name[128];
  kope_policy_opts o;
  /* tokens spent outside proposals (reflection); NULL for most policies */
  void (*take_tokens)(kope_policy *p, int64_t *in, int64_t *out);
};

/* Constructors (each returns NULL with err set on failure). */
kope_policy *kope_policy_tuner_new(const kope_policy_opts *o, int random_search, kope_err *err);
/* llm.c (issue 7): with_tuner 1 for "llm+tuner". */
kope_policy *kope_policy_llm_new(const kope_policy_opts *o, int with_tuner, kope_err *err);

/* Helpers for policies: a knob-move proposal of the tuner, usable by the
 * llm+tuner policy; returns KOPE_EREJECT when no move is left. */
int kope_policy_tuner_propose(kope_policy *tuner, const kope_ctx *ctx, kope_proposal *out,
                              kope_err *err);

#endif
