/*
 * The optimization loop (include/kope/agent.h): start from the seed (or
 * --from), then per iteration build the context, ask the policy for up to
 * `batch` candidates (compiled in parallel by the evaluator, judged and
 * timed one at a time against the incumbent), apply the incumbent rule
 * with a confirming re-measurement, record every attempt, and stop at the
 * first budget reached, when the policy has nothing left, or on request.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "agent/agent_int.h"

void kope_opt_opts_init(kope_opt_opts *o)
{
  memset(o, 0, sizeof *o);
  o->target = "cpu";
  o->policy = "tuner";
  kope_policy_opts_init(&o->pol);
  kope_ctx_budget_init(&o->budget);
  o->memory = KOPE_MEMORY_ON;
  o->context = KOPE_CTX_ACTIVE;
  o->batch = 1;
  o->min_gain = 0.05;
  o->alpha = 0.05;
}

static double elapsed(const agent *a)
{
  return a->seconds_before + kope_now() - a->t0;
}

static void progress(agent *a, const char *phase, const attempt *last)
{
  kope_opt_progress p;

  if (!a->o->progress)
    return;
  memset(&p, 0, sizeof p);
  p.step = a->step;
  p.evals = a->res->evals;
  p.budget_evals = a->o->budget_evals;
  p.best_ref = a->inc_correct ? a->inc_ref : 0.0;
  p.best_vendor = a->inc_correct ? a->inc_ven : 0.0;
  p.last_verdict = last ? kope_agent_verdict(last) : NULL;
  p.last_vs_incumbent = last && last->has_cmp ? last->cmp.speedup : 0.0;
  p.last_promoted = last ? last->promoted : 0;
  p.tokens = a->res->tokens_in + a->res->tokens_out;
  p.seconds = elapsed(a);
  p.phase = phase;
  a->o->progress(a->o->progress_ctx, &p);
}

/* Name of the budget that is used up, or NULL. */
static const char *budget_reached(const agent *a)
{
  const kope_opt_opts *o = a->o;

  if (o->stop && *o->stop)
    return "interrupted";
  if (o->budget_evals > 0 && a->res->evals - a->evals0 >= o->budget_evals)
    return "budget-evals";
  if (o->budget_tokens > 0 &&
      a->res->tokens_in + a->res->tokens_out - a->tokens0 >= o->budget_tokens)
    return "budget-tokens";
  if (o->budget_seconds > 0 && kope_now() - a->t0 >= o->budget_seconds)
    return "budget-seconds";
  return NULL;
}

/* ---- session ---- */

static int begin_session(agent *a, kope_err *err)
{
  char budget[200], *home;
  kope_mem_session s;
  int rc = KOPE_OK;

  snprintf(budget, sizeof budget, "evals=%lld tokens=%lld seconds=%g memory=%s context=%s",
           (long long)a->o->budget_evals, (long long)a->o->budget_tokens, a->o->budget_seconds,
           a->o->memory == KOPE_MEMORY_ON ? "on" : a->o->memory == KOPE_MEMORY_OFF ? "off" : "readonly",
           a->o->context == KOPE_CTX_PASSIVE ? "passive" : "active");
  memset(&s, 0, sizeof s);
  s.op = kope_op_name(a->op);
  s.target = kope_target_name(a->t);
  s.hw = a->hw ? kope_hw_fingerprint(a->hw) : NULL;
  s.policy = kope_policy_name(a->pol);
  s.budget = budget;
  if (a->o->resume)
    a->session = a->o->resume;
  else if (a->o->memory != KOPE_MEMORY_READONLY)
    rc = kope_mem_session_begin(a->db, &s, &a->session, err);
  if (rc != KOPE_OK)
    return rc;
  home = kope_home_dir();
  a->run_dir = a->session ? kope_sprintf("%s/runs/%s/%lld", home, kope_op_name(a->op),
                                         (long long)a->session)
                          : kope_sprintf("%s/runs/%s/readonly-%lld", home, kope_op_name(a->op),
                                         (long long)time(NULL));
  free(home);
  if (!a->run_dir)
    return kope_err_nomem(err, "run directory");
  return kope_mkdirs(a->run_dir, err);
}

/* ---- the starting kernel ---- */

/* src (copied) becomes the incumbent; KOPE_ENOMEM leaves the old one. */
static int adopt(agent *a, const char *src, const kope_report *r)
{
  if (src != a->inc_src) {
    char *copy = kope_strdup(src);
    if (!copy)
      return KOPE_ENOMEM;
    free(a->inc_src);
    a->inc_src = copy;
  }
  a->inc_correct = r && kope_report_accepted(r);
  a->inc_ref = a->inc_correct ? kope_report_speedup_ref(r) : 0.0;
  a->inc_ven = a->inc_correct ? kope_report_speedup_vendor(r) : 0.0;
  a->inc_roof = a->inc_correct ? kope_report_roofline(r) : 0.0;
  return KOPE_OK;
}

/* KOPE_OK, or KOPE_ENOMEM (the feedback then none). */
static int set_feedback(agent *a, const char *fb)
{
  free(a->feedback);
  a->feedback = fb ? kope_strdup(fb) : NULL;
  return fb && !a->feedback ? KOPE_ENOMEM : KOPE_OK;
}

/* The starting kernel: --from, else the target's seed (seed.c, seed.cl).
 * Caller frees. */
static char *start_path(const agent *a)
{
  return a->o->from ? kope_strdup(a->o->from)
                    : kope_op_seed_path_for(a->op, kope_target_source_ext(a->t));
}

static int start(agent *a, kope_err *err)
{
  char *path = start_path(a), *plain;
  kope_report *r;
  int rc;

  if (!path)
    return kope_err_nomem(err, "starting kernel path");
  a->inc_src = kope_file_read(path, NULL, err);
  if (a->inc_src && a->o->start_plain) {
    plain = kope_knobs_plain(a->inc_src, path, err);
    free(a->inc_src);
    a->inc_src = plain;
  }
  free(path);
  if (!a->inc_src)
    return err->code;
  progress(a, "evaluating the starting kernel", NULL);
  if (!(r = kope_evaluate(a->ev, a->inc_src, err)))
    return err->code;
  adopt(a, a->inc_src, r);
  a->res->seed_ref = a->inc_ref;
  a->res->seed_vendor = a->inc_ven;
  if (set_feedback(a, kope_report_feedback(r)) != KOPE_OK)
    rc = kope_err_nomem(err, "feedback");
  else
    rc = kope_agent_record_start(a, r, err);
  kope_report_free(r);
  return rc;
}

/* ---- one iteration ---- */

static void fill_state(const agent *a, kope_ctx_state *s)
{
  memset(s, 0, sizeof *s);
  s->op = a->op;
  s->target = kope_target_name(a->t);
  s->target_text = a->target_text;
  s->hw = a->hw ? kope_hw_fingerprint(a->hw) : NULL;
  s->incumbent = a->inc_src;
  s->incumbent_correct = a->inc_correct;
  s->inc_speedup_ref = a->inc_ref;
  s->inc_speedup_vendor = a->inc_ven;
  s->inc_roofline = a->inc_roof;
  s->inc_case_id = a->inc_case;
  s->inc_remeasured = a->inc_remeasured;
  s->min_gain = a->o->min_gain;
  s->alpha = a->o->alpha;
  s->feedback = a->feedback;
  s->step = a->step + 1;
  s->session_id = a->session;
  s->history = a->hist;
  s->nhistory = a->nhist;
}

static int significant(const agent *a, const kope_report *r, kope_base_cmp *cmp)
{
  if (!r || !kope_report_accepted(r) || !kope_report_vs_base(r, cmp))
    return 0;
  return cmp->speedup >= 1.0 + a->o->min_gain && cmp->lo > 1.0 && cmp->p_value < a->o->alpha;
}

/* Judge the batch: the best significant candidate is re-measured and
 * promoted when the re-measurement agrees. */
static int judge_batch(agent *a, attempt *at, size_t n, kope_err *err)
{
  size_t i, best = n;
  kope_base_cmp c2;

  for (i = 0; i < n; i++) {
    at[i].has_cmp = at[i].r && kope_report_vs_base(at[i].r, &at[i].cmp);
    if (!a->inc_correct && at[i].r && kope_report_accepted(at[i].r)) {
      /* no correct incumbent yet: the first correct kernel takes its place */
      if (best == n || kope_report_speedup_ref(at[i].r) > kope_report_speedup_ref(at[best].r))
        best = i;
      continue;
    }
    if (significant(a, at[i].r, &at[i].cmp) &&
        (best == n || at[i].cmp.speedup > at[best].cmp.speedup))
      best = i;
  }
  if (best == n)
    return KOPE_OK;
  if (!a->inc_correct) {
    at[best].promoted = 1;
    return KOPE_OK;
  }
  progress(a, "re-measuring a faster candidate", &at[best]);
  if (!(at[best].r2 = kope_evaluate(a->ev, at[best].p.source, err)))
    return err->code;
  a->res->remeasures++;
  at[best].promoted = significant(a, at[best].r2, &c2);
  return KOPE_OK;
}

/* ---- token estimator calibration (per policy/model, kept in
 * <home>/token-calibration.json) ---- */

static char *calibration_path(void)
{
  char *home = kope_home_dir(), *p = kope_path_join(home, "token-calibration.json");

  free(home);
  return p;
}

static void load_calibration(agent *a)
{
  char *path = calibration_path();
  json_t *j = json_load_file(path, 0, NULL);
  double v = json_real_value(json_object_get(j, kope_policy_name(a->pol)));

  if (v > 0)
    a->budget.chars_per_token = v;
  json_decref(j);
  free(path);
}

static void calibrate(agent *a, const kope_ctx *ctx, const kope_proposal *p)
{
  char *sys = NULL, *user = NULL, *path;
  json_t *j;

  if (!kope_policy_uses_llm(a->pol) || p->tokens_in <= 0 ||
      kope_ctx_render(ctx, &sys, &user, NULL) != KOPE_OK)
    return;
  kope_ctx_calibrate(&a->budget, strlen(sys) + strlen(user), (long)p->tokens_in);
  path = calibration_path();
  if (!(j = json_load_file(path, 0, NULL)))
    j = json_object();
  json_object_set_new(j, kope_policy_name(a->pol), json_real(a->budget.chars_per_token));
  json_dump_file(j, path, JSON_INDENT(2));
  json_decref(j);
  free(path);
  free(sys);
  free(user);
}

static int propose_batch(agent *a, const kope_ctx *ctx, attempt *at, size_t *n,
                         const char **stop, kope_err *err)
{
  size_t want = a->o->batch > 0 ? (size_t)a->o->batch : 1, i;
  int rc = KOPE_OK;

  if (want > KOPE_AGENT_MAX_BATCH)
    want = KOPE_AGENT_MAX_BATCH;
  if (a->o->budget_evals > 0 && (int64_t)want > a->o->budget_evals - (a->res->evals - a->evals0))
    want = (size_t)(a->o->budget_evals - (a->res->evals - a->evals0));
  *n = 0;
  for (i = 0; i < want; i++) {
    progress(a, "proposing", NULL);
    rc = kope_policy_propose(a->pol, ctx, &at[*n].p, err);
    if (rc == KOPE_EREJECT) {
      *stop = "exhausted";
      kope_proposal_release(&at[*n].p);
      kope_err_clear(err);
      return KOPE_OK;
    }
    if (rc != KOPE_OK)
      return rc;
    a->res->tokens_in += at[*n].p.tokens_in;
    a->res->tokens_out += at[*n].p.tokens_out;
    calibrate(a, ctx, &at[*n].p);
    /* a tuner proposing twice from one context must not repeat itself */
    {
      kope_outcome pending = {at[*n].p.thought_id, "pending", 0, 0, 0, 0, NULL};
      if (i + 1 < want && !kope_policy_uses_llm(a->pol))
        kope_policy_observe(a->pol, ctx, &at[*n].p, &pending);
    }
    (*n)++;
  }
  return KOPE_OK;
}

static int evaluate_batch(agent *a, attempt *at, size_t n, kope_err *err)
{
  const char *src[KOPE_AGENT_MAX_BATCH];
  kope_report *rep[KOPE_AGENT_MAX_BATCH];
  size_t i, m = 0, idx[KOPE_AGENT_MAX_BATCH];
  int rc;

  for (i = 0; i < n; i++)
    if (at[i].p.source) {
      idx[m] = i;
      src[m++] = at[i].p.source;
    }
  progress(a, "evaluating", NULL);
  if (m && (rc = kope_evaluate_batch(a->ev, src, m, rep, err)) != KOPE_OK)
    return rc;
  for (i = 0; i < m; i++)
    at[idx[i]].r = rep[i];
  a->res->evals += (int64_t)n;
  return KOPE_OK;
}

static void observe_all(agent *a, const kope_ctx *ctx, attempt *at, size_t n)
{
  size_t i;

  for (i = 0; i < n; i++) {
    kope_outcome o = {at[i].p.thought_id, kope_agent_verdict(&at[i]),
                      at[i].r && kope_report_accepted(at[i].r),
                      at[i].r && kope_report_accepted(at[i].r) ? kope_report_speedup_ref(at[i].r) : 0,
                      at[i].has_cmp ? at[i].cmp.speedup : 0.0, at[i].promoted,
                      at[i].r ? kope_report_feedback(at[i].r) : at[i].p.no_kernel};
    kope_policy_observe(a->pol, ctx, &at[i].p, &o);
  }
}

/* Record every attempt (siblings from the same incumbent), then promote. */
static int record_batch(agent *a, attempt *at, size_t n, kope_err *err)
{
  size_t i, win = n;
  int rc;

  for (i = 0; i < n; i++) {
    a->step++;
    if ((rc = kope_agent_record(a, &at[i], err)) != KOPE_OK)
      return rc;
    if (kope_agent_history_add(a, &at[i]) != KOPE_OK)
      return kope_err_nomem(err, "session history");
    if (at[i].promoted)
      win = i;
  }
  if (win < n) {
    if (adopt(a, at[win].p.source, at[win].r2 ? at[win].r2 : at[win].r) != KOPE_OK)
      return kope_err_nomem(err, "incumbent");
    a->inc_remeasured = at[win].r2 != NULL;
    a->inc_case = at[win].case_id;
    a->res->promotions++;
    if ((rc = kope_evaluator_set_base(a->ev, a->inc_src, err)) != KOPE_OK)
      return rc;
  }
  if (set_feedback(a, n ? (at[n - 1].r ? kope_report_feedback(at[n - 1].r)
                                        : at[n - 1].p.no_kernel)
                        : NULL) != KOPE_OK)
    return kope_err_nomem(err, "feedback");
  return kope_agent_save_state(a, err);
}

static void attempts_free(attempt *at, size_t n)
{
  size_t i;

  for (i = 0; i < n; i++) {
    kope_proposal_release(&at[i].p);
    kope_report_free(at[i].r);
    kope_report_free(at[i].r2);
  }
}

static int iterate(agent *a, const char **stop, kope_err *err)
{
  attempt at[KOPE_AGENT_MAX_BATCH];
  kope_ctx_state s;
  kope_ctx *ctx;
  size_t n = 0;
  int rc;

  memset(at, 0, sizeof at);
  fill_state(a, &s);
  if (!(ctx = kope_ctx_build(&s, a->o->memory == KOPE_MEMORY_OFF ? NULL : a->db, a->o->context,
                             &a->budget, err)))
    return err->code;
  a->ctx = ctx;
  a->res->ctx_tokens_last = kope_ctx_total_tokens(ctx);
  if (a->res->ctx_tokens_last > a->res->ctx_tokens_max)
    a->res->ctx_tokens_max = a->res->ctx_tokens_last;
  if (a->res->nctx < KOPE_OPT_MAX_TRACE) {
    a->res->ctx_hot[a->res->nctx] = kope_ctx_tier_tokens(ctx, KOPE_TIER_HOT);
    a->res->ctx_tokens[a->res->nctx++] = a->res->ctx_tokens_last;
  }
  if ((rc = propose_batch(a, ctx, at, &n, stop, err)) == KOPE_OK && n &&
      (rc = evaluate_batch(a, at, n, err)) == KOPE_OK &&
      (rc = judge_batch(a, at, n, err)) == KOPE_OK) {
    observe_all(a, ctx, at, n);
    rc = record_batch(a, at, n, err);
    kope_policy_take_tokens(a->pol, &a->res->tokens_in, &a->res->tokens_out);
    progress(a, "done", &at[n - 1]);
  }
  attempts_free(at, n);
  a->ctx = NULL;
  kope_ctx_free(ctx);
  return rc;
}

/* ---- the end of the session ---- */

#define KOPE_AGENT_FINAL_MAX 3

/* Up to KOPE_AGENT_FINAL_MAX unpromoted correct candidates with the highest
 * first speedup vs the reference, at least 0.9x the incumbent's. */
static size_t final_candidates(const agent *a, const kope_ctx_step **pick)
{
  size_t n = 0, i, j;

  for (i = 0; i < a->nhist; i++) {
    const kope_ctx_step *h = &a->hist[i];
    if (!h->correct || h->promoted || !h->source || h->speedup_ref < 0.9 * a->inc_ref ||
        !strcmp(h->source, a->inc_src))
      continue;
    if (n < KOPE_AGENT_FINAL_MAX)
      n++;
    else if (pick[n - 1]->speedup_ref >= h->speedup_ref)
      continue;
    for (j = n - 1; j > 0 && pick[j - 1]->speedup_ref < h->speedup_ref; j--)
      pick[j] = pick[j - 1];
    pick[j] = h;
  }
  return n;
}

/* The incumbent and the best unpromoted candidates re-measured side by
 * side (each timed against the incumbent as the base); the fastest that
 * passes the incumbent rule becomes the session's best kernel. Costs up
 * to KOPE_AGENT_FINAL_MAX evaluations outside the budgets; nothing runs
 * when there is no such candidate. */
static int final_remeasure(agent *a, kope_err *err)
{
  const kope_ctx_step *pick[KOPE_AGENT_FINAL_MAX];
  const char *src[KOPE_AGENT_FINAL_MAX];
  kope_report *r[KOPE_AGENT_FINAL_MAX] = {0};
  kope_base_cmp cmp;
  double best_gain = 0;
  size_t n, i, best = KOPE_AGENT_FINAL_MAX;
  int rc = KOPE_OK;

  if (!a->inc_correct || !(n = final_candidates(a, pick)))
    return KOPE_OK;
  for (i = 0; i < n; i++)
    src[i] = pick[i]->source;
  progress(a, "re-measuring the best candidates side by side", NULL);
  if ((rc = kope_evaluate_batch(a->ev, src, n, r, err)) != KOPE_OK)
    goto out;
  a->res->final_evals = (int64_t)n;
  for (i = 0; i < n; i++)
    if (significant(a, r[i], &cmp) && cmp.speedup > best_gain) {
      best_gain = cmp.speedup;
      best = i;
    }
  if (best < n) {
    a->res->final_replaced_case = a->inc_case ? a->inc_case : -1;
    if (adopt(a, pick[best]->source, r[best]) != KOPE_OK) {
      rc = kope_err_nomem(err, "incumbent");
      goto out;
    }
    a->inc_case = pick[best]->case_id;
    a->inc_remeasured = 1;
    rc = kope_agent_save_state(a, err);
  }
out:
  for (i = 0; i < n; i++)
    kope_report_free(r[i]);
  return rc;
}

/* ---- the session ---- */

static void finish(agent *a, const char *stop)
{
  kope_opt_result *r = a->res;

  snprintf(r->op, sizeof r->op, "%s", kope_op_name(a->op));
  snprintf(r->target, sizeof r->target, "%s", kope_target_name(a->t));
  snprintf(r->policy, sizeof r->policy, "%s", kope_policy_name(a->pol));
  snprintf(r->stop_reason, sizeof r->stop_reason, "%s", stop ? stop : "");
  snprintf(r->run_dir, sizeof r->run_dir, "%s", a->run_dir ? a->run_dir : "");
  r->session_id = a->session;
  r->passed = a->inc_correct;
  r->best_ref = a->inc_ref;
  r->best_vendor = a->inc_ven;
  r->best_roofline = a->inc_roof;
  r->best_case_id = a->inc_case;
  r->steps = a->step;
  r->seconds = elapsed(a);
}

static int run(agent *a, kope_err *err)
{
  const char *stop = NULL;
  int rc;

  if ((rc = kope_agent_open(a, 1, err)) || (rc = begin_session(a, err)))
    return rc;
  a->budget = a->o->budget;
  load_calibration(a);
  if (a->o->out)
    snprintf(a->res->best_path, sizeof a->res->best_path, "%s", a->o->out);
  else
    snprintf(a->res->best_path, sizeof a->res->best_path, "%s/best.c", a->run_dir);
  rc = a->o->resume ? kope_agent_resume(a, err) : start(a, err);
  a->evals0 = a->res->evals;
  a->tokens0 = a->res->tokens_in + a->res->tokens_out;
  if (rc == KOPE_OK && a->inc_correct)
    rc = kope_evaluator_set_base(a->ev, a->inc_src, err);
  if (rc == KOPE_OK)
    rc = kope_agent_save_state(a, err);
  while (rc == KOPE_OK && !stop && !(stop = budget_reached(a)))
    rc = iterate(a, &stop, err);
  if (rc == KOPE_OK)
    rc = final_remeasure(a, err);
  finish(a, rc == KOPE_OK ? stop : "error");
  if (rc == KOPE_OK) {
    rc = kope_agent_write_best(a, err);
  } else {
    /* a session that fails (a provider that stopped answering) keeps the
     * best kernel found so far: written like a finished session's, and
     * the result says passed, so the caller can use it */
    kope_err e3;
    kope_err_clear(&e3);
    if (kope_agent_write_best(a, &e3) != KOPE_OK)
      a->res->passed = 0;
  }
  if (a->session && a->o->memory != KOPE_MEMORY_READONLY) {
    kope_err e2;
    kope_err_clear(&e2);
    kope_mem_session_end(a->db, a->session, rc == KOPE_OK ? a->res->stop_reason : "error", &e2);
  }
  return rc;
}

int kope_optimize(const kope_opt_opts *o, kope_opt_result *res, kope_err *err)
{
  agent a;
  int rc;

  memset(&a, 0, sizeof a);
  memset(res, 0, sizeof *res);
  a.o = o;
  a.res = res;
  a.t0 = kope_now();
  if (o->resume && o->memory == KOPE_MEMORY_READONLY)
    return kope_err_set(err, KOPE_EINPUT, "optimize: --resume needs a writable memory");
  rc = run(&a, err);
  kope_agent_close(&a);
  return rc;
}

json_t *kope_opt_result_json(const kope_opt_result *r)
{
  json_t *j, *tr = json_array();
  int i;

  for (i = 0; i < r->nctx; i++)
    json_array_append_new(tr, json_pack("{s:I, s:I}", "total", (json_int_t)r->ctx_tokens[i],
                                        "hot", (json_int_t)r->ctx_hot[i]));
  j = json_pack("{s:s, s:s, s:s, s:b, s:f, s:f, s:f, s:f, s:f, s:I, s:I, s:I, s:I, s:I,"
                   " s:I, s:I, s:f, s:I, s:s, s:s, s:I, s:I}",
                   "op", r->op, "target", r->target, "policy", r->policy, "passed", r->passed,
                   "seed_speedup_ref", r->seed_ref, "seed_speedup_vendor", r->seed_vendor,
                   "best_speedup_ref", r->best_ref, "best_speedup_vendor", r->best_vendor,
                   "roofline_fraction", r->best_roofline, "evaluations", (json_int_t)r->evals,
                   "remeasurements", (json_int_t)r->remeasures, "promotions",
                   (json_int_t)r->promotions, "steps", (json_int_t)r->steps, "tokens",
                   (json_int_t)(r->tokens_in + r->tokens_out), "tokens_in",
                   (json_int_t)r->tokens_in, "tokens_out", (json_int_t)r->tokens_out,
                   "seconds", r->seconds, "session", (json_int_t)r->session_id, "stop_reason",
                   r->stop_reason, "best_path", r->passed ? r->best_path : "", "best_case",
                   (json_int_t)r->best_case_id, "context_tokens_max",
                   (json_int_t)r->ctx_tokens_max);
  json_object_set_new(j, "context_tokens", tr);
  json_object_set_new(j, "final_remeasure",
                      json_pack("{s:I, s:I, s:b}", "evaluations", (json_int_t)r->final_evals,
                                "replaced_case", (json_int_t)r->final_replaced_case, "replaced",
                                r->final_replaced_case != 0));
  return j;
}

int kope_optimize_dry_run(const kope_opt_opts *o, json_t **out, kope_err *err)
{
  agent a;
  kope_ctx_state s;
  kope_ctx *ctx = NULL;
  kope_opt_result res;
  char *sys = NULL, *user = NULL;
  int rc;

  memset(&a, 0, sizeof a);
  memset(&res, 0, sizeof res);
  a.o = o;
  a.res = &res;
  a.t0 = kope_now();
  if ((rc = kope_agent_open(&a, 0, err)) != KOPE_OK)
    goto out;
  {
    char *path = start_path(&a);
    a.inc_src = kope_file_read(path, NULL, err);
    free(path);
  }
  if (!a.inc_src) {
    rc = err->code;
    goto out;
  }
  fill_state(&a, &s);
  if (!(ctx = kope_ctx_build(&s, o->memory == KOPE_MEMORY_OFF ? NULL : a.db, o->context,
                             &o->budget, err))) {
    rc = err->code;
    goto out;
  }
  kope_ctx_render(ctx, &sys, &user, err);
  *out = json_pack("{s:o, s:s, s:s, s:I, s:I}", "context", kope_ctx_to_json(ctx, 0), "system",
                   sys, "user", user, "system_tokens", (json_int_t)kope_ctx_estimate(&o->budget, sys),
                   "user_tokens", (json_int_t)kope_ctx_estimate(&o->budget, user));
out:
  free(sys);
  free(user);
  kope_ctx_free(ctx);
  kope_agent_close(&a);
  return rc;
}
