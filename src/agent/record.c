/*
 * What the agent writes down: one Case per attempt (failures included,
 * prev_case_id = the incumbent's Case it started from) with a Journal
 * entry from a template (or the policy's reflection), the session's
 * history for passive context, the state file that --resume reads, and
 * the best kernel with a header comment.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "agent/agent_int.h"
#include "core/stats.h"

const char *kope_agent_verdict(const attempt *at)
{
  return at->r ? kope_verdict_name(kope_report_verdict(at->r)) : "no_kernel";
}

/* c_v: 1 for a failure or an untimed result; for a result timed against
 * the incumbent, 1 − the two-sided sign-test p-value of its rounds. */
double kope_agent_confidence(const attempt *at)
{
  double p;

  if (!at->r || !kope_report_accepted(at->r) || !at->has_cmp || at->cmp.rounds == 0)
    return 1.0;
  p = kope_sign_test_p(at->cmp.rounds, at->cmp.wins);
  if (at->cmp.rounds - at->cmp.wins > at->cmp.wins)
    p = kope_sign_test_p(at->cmp.rounds, at->cmp.rounds - at->cmp.wins);
  p = 2.0 * p > 1.0 ? 1.0 : 2.0 * p;
  return 1.0 - p < 0.05 ? 0.05 : 1.0 - p;
}

static void journal_text(const agent *a, const attempt *at, kope_buf *b)
{
  const kope_report *r = at->r;

  kope_buf_printf(b, "### Step %lld — %s (%s)\n\n", (long long)a->step,
                  at->p.thought_id ? at->p.thought_id : "?", kope_op_name(a->op));
  kope_buf_printf(b, "- **Strategy:** %s\n", at->p.rationale ? at->p.rationale : "—");
  kope_buf_printf(b, "- **Change:** %s\n", at->p.title ? at->p.title : "—");
  if (!r)
    kope_buf_printf(b, "- **Validation:** no kernel: %s\n", at->p.no_kernel ? at->p.no_kernel : "");
  else
    kope_buf_printf(b, "- **Validation:** %s — %s\n", kope_agent_verdict(at), kope_report_reason(r));
  if (r && kope_report_accepted(r)) {
    kope_buf_printf(b, "- **Measurements:** %.3fx vs reference", kope_report_speedup_ref(r));
    if (kope_report_speedup_vendor(r) > 0)
      kope_buf_printf(b, ", %.3fx vs vendor", kope_report_speedup_vendor(r));
    if (at->has_cmp)
      kope_buf_printf(b, "; %.3fx vs incumbent [%.3f, %.3f], faster in %d of %d rounds "
                      "(p = %.2g)", at->cmp.speedup, at->cmp.lo, at->cmp.hi, at->cmp.wins,
                      at->cmp.rounds, at->cmp.p_value);
    kope_buf_puts(b, "\n");
  }
  if (!r || !kope_report_accepted(r))
    kope_buf_puts(b, "- **Interpretation:** the change broke the kernel; the incumbent stays.\n");
  else if (at->promoted)
    kope_buf_puts(b, "- **Interpretation:** significantly faster and confirmed by a second "
                     "measurement: the new incumbent.\n");
  else if (at->r2)
    kope_buf_puts(b, "- **Interpretation:** looked faster but the re-measurement did not "
                     "confirm it: the incumbent stays.\n");
  else
    kope_buf_puts(b, "- **Interpretation:** correct but not significantly faster than the "
                     "incumbent: the incumbent stays.\n");
}

static void case_fields(const agent *a, const attempt *at, kope_mem_case_in *c)
{
  kope_mem_case_in_init(c);
  c->session_id = a->session;
  c->step = a->step;
  c->prev_case_id = a->inc_case;
  c->op = kope_op_name(a->op);
  c->category = kope_op_category(a->op);
  c->target = kope_target_name(a->t);
  c->hw = a->hw ? kope_hw_fingerprint(a->hw) : NULL;
  /* the device the kernel ran on (asked of the target once) */
  snprintf(c->device, sizeof c->device, "%s",
           kope_target_device(a->t) ? kope_target_device(a->t) : "");
  c->scene = a->scene;
  c->layer = at->p.layer;
  c->thought_id = at->p.thought_id;
  c->thought_title = at->p.title;
  c->rationale = at->p.rationale;
  c->code_before = a->inc_src;
  c->code_after = at->p.source;
  c->feedback = at->r ? kope_report_feedback(at->r) : at->p.no_kernel;
  c->verdict = kope_agent_verdict(at);
  c->score.correct = at->r && kope_report_accepted(at->r);
  c->score.speedup = c->score.correct ? kope_report_speedup_ref(at->r) : NAN;
  c->score.speedup_vendor = c->score.correct && kope_report_speedup_vendor(at->r) > 0
                          ? kope_report_speedup_vendor(at->r) : NAN;
  c->score.confidence = kope_agent_confidence(at);
  c->tokens_in = at->p.tokens_in;
  c->tokens_out = at->p.tokens_out;
  c->eval_seconds = at->r ? kope_report_total_seconds(at->r) : 0.0;
  c->harness = KOPE_HARNESS_VERSION;
}

int kope_agent_record(agent *a, attempt *at, kope_err *err)
{
  kope_mem_case_in c;
  kope_buf j;
  char *reflection = NULL;
  int rc;

  if (a->o->memory == KOPE_MEMORY_READONLY)
    return KOPE_OK;
  case_fields(a, at, &c);
  kope_buf_init(&j, 65536);
  journal_text(a, at, &j);
  if (a->pol) {
    kope_outcome o = {at->p.thought_id, c.verdict, c.score.correct,
                      c.score.correct ? c.score.speedup : 0.0,
                      at->has_cmp ? at->cmp.speedup : 0.0, at->promoted, c.feedback};
    reflection = a->ctx ? kope_policy_reflect(a->pol, a->ctx, &at->p, &o) : NULL;
    if (reflection)
      kope_buf_printf(&j, "\n%s\n", reflection);
  }
  c.journal = j.data;
  rc = kope_mem_case_insert(a->db, &c, &at->case_id, err);
  free(reflection);
  kope_buf_release(&j);
  return rc;
}

int kope_agent_record_start(agent *a, kope_report *r, kope_err *err)
{
  attempt at;
  int rc;

  memset(&at, 0, sizeof at);
  at.r = r;
  at.p.source = a->inc_src;
  at.p.layer = (char *)"";
  if (a->o->start_plain) {
    at.p.thought_id = (char *)"start.plain";
    at.p.title = (char *)"the starting kernel with every knob at its first value (--start plain)";
  } else if (a->o->from) {
    at.p.thought_id = (char *)"start.from_file";
    at.p.title = (char *)"starting kernel (--from)";
  } else {
    at.p.thought_id = (char *)"start.seed";
    at.p.title = (char *)"the operator's seed kernel";
  }
  at.p.rationale = (char *)"the first incumbent";
  rc = kope_agent_record(a, &at, err);
  a->inc_case = at.case_id;
  return rc;
}

/* ---- history (passive context, resume) ---- */

int kope_agent_history_add(agent *a, const attempt *at)
{
  kope_ctx_step *h;
  kope_base_cmp c2;

  if (kope_grow(&a->hist, &a->caphist, a->nhist + 1, sizeof *a->hist) != KOPE_OK)
    return KOPE_ENOMEM;
  h = &a->hist[a->nhist++];
  h->step = a->step;
  h->thought_id = kope_strdup(at->p.thought_id ? at->p.thought_id : "");
  h->title = kope_strdup(at->p.title ? at->p.title : "");
  h->verdict = kope_strdup(kope_agent_verdict(at));
  h->correct = at->r && kope_report_accepted(at->r);
  h->promoted = at->promoted;
  h->speedup_ref = h->correct ? kope_report_speedup_ref(at->r) : 0.0;
  h->vs_incumbent = at->has_cmp ? at->cmp.speedup : 0.0;
  h->vs_lo = at->has_cmp ? at->cmp.lo : 0.0;
  h->vs_hi = at->has_cmp ? at->cmp.hi : 0.0;
  h->p_value = at->has_cmp ? at->cmp.p_value : 1.0;
  if (at->r2 && kope_report_vs_base(at->r2, &c2)) {
    h->remeasured = at->promoted ? 1 : -1;
    h->re_speedup = c2.speedup;
    h->re_lo = c2.lo;
    h->re_hi = c2.hi;
    h->re_p = c2.p_value;
  } else if (at->r2)
    h->remeasured = at->promoted ? 1 : -1;
  h->feedback = kope_strdup(at->r ? kope_report_feedback(at->r) : at->p.no_kernel);
  h->source = kope_strdup(at->p.source);
  h->case_id = at->case_id;
  return KOPE_OK;
}

void kope_agent_history_free(agent *a)
{
  size_t i;

  for (i = 0; i < a->nhist; i++) {
    free((char *)a->hist[i].thought_id);
    free((char *)a->hist[i].title);
    free((char *)a->hist[i].verdict);
    free((char *)a->hist[i].feedback);
    free((char *)a->hist[i].source);
  }
  free(a->hist);
  a->hist = NULL;
  a->nhist = a->caphist = 0;
}

/* ---- state file ---- */

int kope_agent_save_state(agent *a, kope_err *err)
{
  kope_opt_result *res = a->res;
  json_t *j;
  char *text, *path;
  int rc;

  if (!a->run_dir)
    return KOPE_OK;
  j = json_pack("{s:I, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:f, s:b}", "session",
                (json_int_t)a->session, "op", kope_op_name(a->op), "incumbent_case",
                (json_int_t)a->inc_case, "step", (json_int_t)a->step, "evals",
                (json_int_t)res->evals, "remeasures", (json_int_t)res->remeasures,
                "tokens_in", (json_int_t)res->tokens_in, "tokens_out",
                (json_int_t)res->tokens_out, "seconds",
                a->seconds_before + kope_now() - a->t0, "incumbent_correct", a->inc_correct);
  text = json_dumps(j, JSON_INDENT(2));
  path = kope_path_join(a->run_dir, "state.json");
  rc = kope_file_write_atomic(path, text, strlen(text), err);
  free(path);
  free(text);
  json_decref(j);
  return rc;
}

/* ---- best kernel ---- */

int kope_agent_write_best(agent *a, kope_err *err)
{
  kope_opt_result *res = a->res;
  kope_buf b;
  int rc;

  if (!a->inc_correct)
    return KOPE_OK;
  kope_buf_init(&b, 0);
  kope_buf_printf(&b, "/*\n * kope optimize: best kernel for operator %s on target %s.\n"
                  " * verdict: correct (all %zu cases, fresh inputs)\n"
                  " * speedup vs reference %.3fx", kope_op_name(a->op), kope_target_name(a->t),
                  kope_op_ncases(a->op), a->inc_ref);
  if (a->inc_ven > 0)
    kope_buf_printf(&b, ", vs vendor %.3fx", a->inc_ven);
  kope_buf_printf(&b, ", roofline fraction %.3f\n * session %lld, case %lld, policy %s, "
                  "harness %s\n */\n", a->inc_roof, (long long)a->session,
                  (long long)a->inc_case, kope_policy_name(a->pol), KOPE_HARNESS_VERSION);
  kope_buf_puts(&b, a->inc_src);
  rc = kope_file_write_atomic(res->best_path, b.data, b.len, err);
  kope_buf_release(&b);
  return rc;
}
