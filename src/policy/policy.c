/*
 * The policy registry: options, construction by name, dispatch through
 * the vtable, and proposal cleanup.
 */
#include <stdlib.h>
#include <string.h>
#include "policy/policy_int.h"

void kope_policy_opts_init(kope_policy_opts *o)
{
  memset(o, 0, sizeof *o);
  o->temperature = -1.0;
  o->stream = 1;
  o->connect_timeout_s = 10.0;
  o->stall_timeout_s = 120.0;
  o->retries = 4;
  o->tuner_steps = 2;
}

void kope_proposal_release(kope_proposal *p)
{
  if (!p)
    return;
  free(p->source);
  free(p->layer);
  free(p->thought_id);
  free(p->title);
  free(p->rationale);
  free(p->no_kernel);
  memset(p, 0, sizeof *p);
}

kope_policy *kope_policy_new(const char *name, const kope_policy_opts *o, kope_err *err)
{
  kope_policy_opts def;

  if (!o) {
    kope_policy_opts_init(&def);
    o = &def;
  }
  if (!name || !strcmp(name, "tuner"))
    return kope_policy_tuner_new(o, 0, err);
  if (!strcmp(name, "random"))
    return kope_policy_tuner_new(o, 1, err);
  if (!strcmp(name, "llm"))
    return kope_policy_llm_new(o, 0, err);
  if (!strcmp(name, "llm+tuner"))
    return kope_policy_llm_new(o, 1, err);
  kope_err_set(err, KOPE_EINPUT, "unknown policy '%s' (expected tuner, random, llm or llm+tuner)",
               name);
  return NULL;
}

void kope_policy_free(kope_policy *p)
{
  if (p)
    p->vt->destroy(p);
}

const char *kope_policy_name(const kope_policy *p) { return p->name; }
int kope_policy_uses_llm(const kope_policy *p) { return p->vt->uses_llm; }

int kope_policy_propose(kope_policy *p, const kope_ctx *ctx, kope_proposal *out, kope_err *err)
{
  memset(out, 0, sizeof *out);
  return p->vt->propose(p, ctx, out, err);
}

void kope_policy_observe(kope_policy *p, const kope_ctx *ctx, const kope_proposal *prop,
                         const kope_outcome *o)
{
  if (p->vt->observe)
    p->vt->observe(p, ctx, prop, o);
}

char *kope_policy_reflect(kope_policy *p, const kope_ctx *ctx, const kope_proposal *prop,
                          const kope_outcome *o)
{
  return p->vt->reflect ? p->vt->reflect(p, ctx, prop, o) : NULL;
}

void kope_policy_take_tokens(kope_policy *p, int64_t *in, int64_t *out)
{
  if (p->take_tokens)
    p->take_tokens(p, in, out);
}
