/*
 * The LLM policy (`--policy llm`, `--policy llm+tuner`): a frozen model
 * writes each candidate from the rendered context (system prompt with the
 * role and reply format, user prompt with the hot/warm/cold tiers). The
 * reply is parsed into a proposal (llm_parse.c); anything unusable — no
 * code, a reply cut off by the length limit, a provider failure that
 * retries did not cure, a command that hung — becomes a no_kernel
 * proposal with the reason, so the agent records a Case and goes on. An
 * unreachable or refusing provider (KOPE_EENV) ends the session, and so
 * does a provider that failed on LLM_MAX_FAIL_STREAK steps in a row (so an
 * unlimited budget cannot spin on a broken server).
 * Tokens are the provider's usage, or estimates when it reports none.
 * Optional reflection: after each evaluation a short second call writes
 * the Journal's interpretation and a digest line; its tokens count against
 * --budget-tokens unless the user asked for reflection off-budget.
 * llm+tuner: after each LLM step, up to tuner_steps knob moves of the
 * offline tuner on the incumbent (knobs the LLM declared in a kernel that
 * became the incumbent), before the LLM is asked again.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kope/llm.h"
#include "policy/llm_int.h"
#include "policy/policy_int.h"

typedef struct llm_policy {
  kope_policy base;
  kope_llm *llm;
  kope_llm *reflector;     /* same provider, short replies; NULL when off */
  kope_policy *tuner;      /* llm+tuner */
  int tuner_left, last_from_tuner;
  int64_t extra_in, extra_out;   /* reflection tokens not yet handed over */
  int fail_streak;         /* consecutive steps without a reply */
  char last_fail[512];
} llm_policy;

#define LLM_MAX_FAIL_STREAK 3

/* Structured output for OpenAI-compatible servers (--llm-json). */
static const char reply_schema[] =
    "{\"type\": \"json_schema\", \"json_schema\": {\"name\": \"kope_candidate\", "
    "\"strict\": true, \"schema\": {\"type\": \"object\", \"properties\": {"
    "\"layer\": {\"type\": \"string\"}, \"thought_id\": {\"type\": \"string\"}, "
    "\"title\": {\"type\": \"string\"}, \"rationale\": {\"type\": \"string\"}, "
    "\"source\": {\"type\": \"string\"}}, \"required\": [\"layer\", \"thought_id\", "
    "\"title\", \"rationale\", \"source\"], \"additionalProperties\": false}}}";

static const char json_note[] =
    "\nReply with one JSON object instead: {\"layer\", \"thought_id\", \"title\", "
    "\"rationale\", \"source\"}, where source is the complete kernel file.\n";

/* ---- proposals ---- */

static void usage_or_estimate(const kope_ctx *ctx, const char *sys, const char *user,
                              const kope_llm_reply *r, kope_proposal *out)
{
  const kope_ctx_budget *b = kope_ctx_budget_of(ctx);

  out->tokens_in = r->tokens_in > 0 ? r->tokens_in
                                    : kope_ctx_estimate(b, sys) + kope_ctx_estimate(b, user);
  out->tokens_out = r->usage_reported ? r->tokens_out : kope_ctx_estimate(b, r->text);
}

static void from_reply(const kope_ctx *ctx, const kope_llm_reply *r, kope_proposal *out)
{
  const kope_ctx_state *s = kope_ctx_state_of(ctx);
  const char *op = kope_op_name(s->op);

  if (r->truncated) {
    kope_proposal hdr;
    char ex[200];
    /* keep the declared thought, never the (possibly partial) code */
    memset(&hdr, 0, sizeof hdr);
    kope_llm_parse_reply(r->text, op, s->incumbent, &hdr);
    if (!hdr.thought_inferred && hdr.thought_id) {
      out->thought_id = hdr.thought_id;
      out->layer = hdr.layer;
      out->title = hdr.title;
      hdr.thought_id = hdr.layer = hdr.title = NULL;
    } else {
      out->thought_id = kope_strdup("llm.truncated");
    }
    kope_proposal_release(&hdr);
    kope_llm_excerpt(r->text, ex, sizeof ex);
    out->truncated = 1;
    out->no_kernel = kope_sprintf("truncated: the reply was cut off by the length limit "
                                  "(finish reason '%s', %lld tokens out) and is not evaluated; "
                                  "write a shorter kernel; the reply began: \"%s\"",
                                  r->finish_reason, (long long)out->tokens_out, ex);
    return;
  }
  kope_llm_parse_reply(r->text, op, s->incumbent, out);
}

static int ask_llm(llm_policy *lp, const kope_ctx *ctx, kope_proposal *out, kope_err *err)
{
  char *sys = NULL, *user = NULL;
  kope_llm_reply r;
  kope_err e;
  int rc;

  if ((rc = kope_ctx_render(ctx, &sys, &user, err)) != KOPE_OK)
    return rc;
  if (lp->base.o.json_reply) {
    char *s2 = kope_sprintf("%s%s", sys, json_note);
    free(sys);
    if (!(sys = s2)) {
      free(user);
      return kope_err_nomem(err, "LLM prompt");
    }
  }
  kope_err_clear(&e);
  rc = kope_llm_chat(lp->llm, sys, user, &r, &e);
  usage_or_estimate(ctx, sys, user, &r, out);
  out->seconds = r.seconds;
  lp->fail_streak = rc == KOPE_EREJECT ? lp->fail_streak + 1 : 0;
  if (rc == KOPE_OK) {
    from_reply(ctx, &r, out);
  } else if (rc == KOPE_EREJECT) {
    snprintf(lp->last_fail, sizeof lp->last_fail, "%.500s", e.msg);
    out->thought_id = kope_strdup("llm.no_reply");
    char ex[200];
    kope_llm_excerpt(r.text, ex, sizeof ex);
    out->no_kernel = kope_sprintf("no usable reply: %s%s%s%s", e.msg, *ex ? "; received: \"" : "",
                                  ex, *ex ? "\"" : "");
    rc = KOPE_OK;
  } else {
    kope_err_set(err, rc, "%s", e.msg);
  }
  if (rc == KOPE_OK && !out->thought_id)
    out->thought_id = kope_strdup("llm.no_kernel");
  if (rc == KOPE_OK && !out->layer)
    out->layer = kope_strdup("");
  if (rc == KOPE_OK && !out->title)
    out->title = kope_strdup(out->no_kernel ? "no usable kernel in the reply" : "");
  if (rc == KOPE_OK && !out->rationale)
    out->rationale = kope_strdup("");
  if (rc == KOPE_OK && (!out->thought_id || !out->layer || !out->title || !out->rationale))
    rc = kope_err_nomem(err, "LLM proposal");
  kope_llm_reply_release(&r);
  free(sys);
  free(user);
  return rc;
}

static int llm_propose(kope_policy *p, const kope_ctx *ctx, kope_proposal *out, kope_err *err)
{
  llm_policy *lp = (llm_policy *)p;

  lp->last_from_tuner = 0;
  if (lp->tuner && lp->tuner_left > 0) {
    kope_err te;
    kope_err_clear(&te);
    lp->tuner_left--;
    if (kope_policy_tuner_propose(lp->tuner, ctx, out, &te) == KOPE_OK) {
      lp->last_from_tuner = 1;
      return KOPE_OK;
    }
    kope_proposal_release(out);
    lp->tuner_left = 0;   /* nothing to tune on the incumbent: back to the LLM */
  }
  if (lp->fail_streak >= LLM_MAX_FAIL_STREAK)
    return kope_err_set(err, KOPE_EENV, "the provider failed on %d steps in a row; last: %s",
                        lp->fail_streak, lp->last_fail);
  return ask_llm(lp, ctx, out, err);
}

static void llm_observe(kope_policy *p, const kope_ctx *ctx, const kope_proposal *prop,
                        const kope_outcome *o)
{
  llm_policy *lp = (llm_policy *)p;

  if (!lp->tuner)
    return;
  kope_policy_observe(lp->tuner, ctx, prop, o);
  if (ctx && !lp->last_from_tuner && !(o->verdict && !strcmp(o->verdict, "pending")))
    lp->tuner_left = p->o.tuner_steps > 0 ? p->o.tuner_steps : 0;
}

/* ---- reflection ---- */

static const char reflect_system[] =
    "You review one step of a kernel optimization session. In at most three sentences,\n"
    "interpret the outcome: why the change helped, did nothing or failed, and what the\n"
    "next step should try. Then give one line starting with 'DIGEST:' stating a general,\n"
    "reusable lesson for this kind of operator on this target. No code.\n";

static char *reflect_user(const kope_ctx *ctx, const kope_proposal *prop, const kope_outcome *o)
{
  const kope_ctx_state *s = kope_ctx_state_of(ctx);
  char fb[1500];

  snprintf(fb, sizeof fb, "%s", o->feedback ? o->feedback : "");
  return kope_sprintf("Operator: %s (%s) on target %s.\nThought: %s — %s\nRationale: %s\n"
                      "Verdict: %s; correct: %s; speedup vs reference %.3fx; vs the "
                      "incumbent %.3fx; became the incumbent: %s.\nFeedback:\n%s\n",
                      kope_op_name(s->op), kope_op_category(s->op), s->target,
                      prop->thought_id ? prop->thought_id : "?", prop->title ? prop->title : "",
                      prop->rationale ? prop->rationale : "", o->verdict,
                      o->correct ? "yes" : "no", o->speedup_ref, o->vs_incumbent,
                      o->promoted ? "yes" : "no", fb);
}

static char *llm_reflect(kope_policy *p, const kope_ctx *ctx, const kope_proposal *prop,
                         const kope_outcome *o)
{
  llm_policy *lp = (llm_policy *)p;
  char *user, *res = NULL;
  kope_llm_reply r;
  kope_err e;

  if (!lp->reflector || !ctx || !prop || (!prop->source && !prop->no_kernel))
    return NULL;
  if (!(user = reflect_user(ctx, prop, o)))
    return NULL;   /* out of memory: no reflection, as documented */
  kope_err_clear(&e);
  if (kope_llm_chat(lp->reflector, reflect_system, user, &r, &e) == KOPE_OK && *r.text)
    res = kope_sprintf("- **Interpretation (%s):** %s", kope_llm_name(lp->reflector), r.text);
  if (!p->o.reflect_off_budget) {
    lp->extra_in += r.tokens_in > 0 ? r.tokens_in
                                    : kope_ctx_estimate(NULL, reflect_system) +
                                          kope_ctx_estimate(NULL, user);
    lp->extra_out += r.usage_reported ? r.tokens_out : kope_ctx_estimate(NULL, r.text);
  }
  kope_llm_reply_release(&r);
  free(user);
  return res;
}

static void llm_take_tokens(kope_policy *p, int64_t *in, int64_t *out)
{
  llm_policy *lp = (llm_policy *)p;

  *in += lp->extra_in;
  *out += lp->extra_out;
  lp->extra_in = lp->extra_out = 0;
}

/* ---- construction ---- */

static void llm_destroy(kope_policy *p)
{
  llm_policy *lp = (llm_policy *)p;

  kope_llm_free(lp->llm);
  kope_llm_free(lp->reflector);
  kope_policy_free(lp->tuner);
  free(lp);
}

static const kope_policy_vt llm_vt = {"llm", llm_propose, llm_observe, llm_reflect,
                                      llm_destroy, 1};
static const kope_policy_vt llm_tuner_vt = {"llm+tuner", llm_propose, llm_observe, llm_reflect,
                                            llm_destroy, 1};

static void llm_opts(const kope_policy_opts *o, kope_llm_opts *lo)
{
  kope_llm_opts_init(lo);
  if (o->llm_provider)
    lo->provider = o->llm_provider;
  lo->url = o->llm_url;
  lo->model = o->llm_model;
  lo->cmd = o->llm_cmd;
  lo->replay = o->llm_replay;
  lo->temperature = o->temperature;
  if (o->max_tokens > 0)
    lo->max_tokens = o->max_tokens;
  lo->max_tokens_field = o->max_tokens_field;
  lo->stream = o->stream;
  if (o->connect_timeout_s > 0)
    lo->connect_timeout_s = o->connect_timeout_s;
  if (o->stall_timeout_s > 0)
    lo->stall_timeout_s = o->stall_timeout_s;
  if (o->cmd_timeout_s > 0)
    lo->cmd_timeout_s = o->cmd_timeout_s;
  if (o->backoff_s > 0)
    lo->backoff_s = o->backoff_s;
  lo->retries = o->retries;
  lo->seed = o->seed;
  if (o->max_reply_bytes > 0)
    lo->max_reply_bytes = (size_t)o->max_reply_bytes;
  lo->response_format = o->json_reply ? reply_schema : NULL;
}

kope_policy *kope_policy_llm_new(const kope_policy_opts *o, int with_tuner, kope_err *err)
{
  llm_policy *lp = calloc(1, sizeof *lp);
  kope_llm_opts lo;

  if (!lp) {
    kope_err_nomem(err, "LLM policy");
    return NULL;
  }
  lp->base.vt = with_tuner ? &llm_tuner_vt : &llm_vt;
  lp->base.o = *o;
  lp->base.take_tokens = llm_take_tokens;
  llm_opts(o, &lo);
  if (!(lp->llm = kope_llm_new(&lo, err)))
    goto fail;
  if (o->reflect) {
    lo.max_tokens = 400;
    lo.response_format = NULL;
    if (!(lp->reflector = kope_llm_new(&lo, err)))
      goto fail;
  }
  if (with_tuner && !(lp->tuner = kope_policy_tuner_new(o, 0, err)))
    goto fail;
  snprintf(lp->base.name, sizeof lp->base.name, "%s:%s", lp->base.vt->kind,
           strchr(kope_llm_name(lp->llm), ':') + 1);
  return &lp->base;
fail:
  llm_destroy(&lp->base);
  return NULL;
}
