/*
 * Evaluation reports: verdict and reason, per-case statistics, geometric
 * means, kope's own overhead, a compact feedback text for policies, and
 * the full JSON document printed by `kope eval --json`.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/stats.h"
#include "eval/eval_int.h"
#include "eval/sandbox.h"

const char *kope_verdict_name(kope_verdict v)
{
  static const char *const n[] = {"correct", "compile_error", "incorrect", "crash", "timeout",
                                  "forbidden"};
  return (unsigned)v < 6 ? n[v] : "unknown";
}

/* Each case's name, shape and role, so a report describes its cases
 * without the operator. */
static void case_ids(kope_report *r, const kope_op *op)
{
  size_t c;

  for (c = 0; c < r->ncases && c < kope_op_ncases(op); c++) {
    char *l = kope_op_case_label(op, c);
    snprintf(r->cases[c].name, sizeof r->cases[c].name, "%s", kope_op_case_name(op, c));
    snprintf(r->cases[c].shape, sizeof r->cases[c].shape, "%s", l);
    r->cases[c].role = kope_op_case_role(op, c);
    free(l);
  }
}

kope_report *kope_report_new(const kope_evaluator *ev)
{
  kope_report *r = calloc(1, sizeof *r);

  if (!r)
    return NULL;
  r->verdict = KOPE_CORRECT;
  r->op_name = kope_strdup(kope_op_name(ev->op));
  r->ncases = ev->ncases;
  r->has_vendor = ev->has_vendor;
  r->has_base = ev->has_base && ev->o.timing;
  {
    /* the target's own baseline (cuda: vendor_cuda), else the C one */
    const kope_op_vendor *v = kope_target_vendor(ev->t, ev->op);
    r->vendor_name = kope_strdup(!ev->has_vendor ? "" : v ? v->name : kope_op_vendor_name(ev->op));
  }
  if (!r->op_name || !r->vendor_name) {
    kope_report_free(r);
    return NULL;
  }
  case_ids(r, ev->op);
  r->seeds = ev->o.seeds;
  r->eval_seed = ev->o.seed ? ev->o.seed : kope_rng_os_seed();
  return r;
}

void kope_report_fail(kope_report *r, kope_verdict v, const char *fmt, ...)
{
  va_list ap;

  if (r->verdict != KOPE_CORRECT)
    return;   /* the first failure is the one reported */
  r->verdict = v;
  va_start(ap, fmt);
  vsnprintf(r->reason, sizeof r->reason, fmt, ap);
  va_end(ap);
}

void kope_report_prefix(kope_report *r, const char *text)
{
  char tmp[sizeof r->reason];

  snprintf(tmp, sizeof tmp, "%s%s", text, r->reason);
  memcpy(r->reason, tmp, sizeof tmp);
}

void kope_report_flag(kope_report *r, const char *kind, int review, const char *fmt, ...)
{
  char detail[300];
  va_list ap;

  va_start(ap, fmt);
  vsnprintf(detail, sizeof detail, fmt, ap);
  va_end(ap);
  if (!r->flags)
    r->flags = json_array();
  json_array_append_new(r->flags, json_pack("{s:s, s:b, s:s}", "kind", kind, "review", review,
                                            "detail", detail));
  if (review && !r->review) {
    r->review = 1;
    snprintf(r->reason, sizeof r->reason, "flagged for review (%s): %s", kind, detail);
  }
}

static void base_stats(kope_report *r)
{
  double s[KOPE_EVAL_MAX_CASES], lo[KOPE_EVAL_MAX_CASES], hi[KOPE_EVAL_MAX_CASES];
  size_t c, n = 0;
  int k;

  memset(&r->base, 0, sizeof r->base);
  for (c = 0; c < r->ncases; c++) {
    const kope_case_res *cr = &r->cases[c];
    if (!cr->timed)
      continue;
    s[n] = cr->sp_base;
    lo[n] = cr->sp_base_lo;
    hi[n++] = cr->sp_base_hi;
    for (k = 0; k < cr->nrounds; k++) {
      r->base.rounds++;
      r->base.wins += cr->s_cand[k] < cr->s_base[k];
    }
  }
  r->base.speedup = kope_geomean(s, n);
  r->base.lo = kope_geomean(lo, n);
  r->base.hi = kope_geomean(hi, n);
  r->base.p_value = kope_sign_test_p(r->base.rounds, r->base.wins);
}

static void geomeans(kope_report *r)
{
  double sr[KOPE_EVAL_MAX_CASES] = {0}, sv[KOPE_EVAL_MAX_CASES] = {0},
         rall[KOPE_EVAL_MAX_CASES] = {0};
  size_t c, n = 0;

  for (c = 0; c < r->ncases; c++) {
    if (!r->cases[c].timed)
      continue;
    sr[n] = r->cases[c].sp_ref;
    sv[n] = r->cases[c].sp_ven;
    rall[n] = r->cases[c].roof;
    n++;
  }
  if (r->has_base && n)
    base_stats(r);
  else
    r->has_base = 0;
  r->sp_ref = kope_geomean(sr, n);
  r->sp_ven = r->has_vendor ? kope_geomean(sv, n) : 0.0;
  /* each case's bound uses the bandwidth of the memory level its working
   * set fits in (kope_hw_roofline_seconds), so every case counts */
  r->roof = kope_geomean(rall, n);
}

/* Every defense that was in force for this candidate, by name. */
static json_t *isolation(const kope_report *r, const kope_evaluator *ev)
{
  json_t *a = json_pack("[s,s,s,s,s,s,s,s,s]", "separate_process", "process_group", "rlimits",
                        "clean_env", "closed_fds", "readonly_inputs", "output_guard_pages",
                        "per_trial_poison", "parent_clock");
  size_t i;
  json_t *v;

  if (r->gated)
    json_array_append_new(a, json_string("static_gate"));
  if (ev->o.timing)
    json_array_append_new(a, json_string("rotating_timed_buffers"));
  json_array_append_new(a, json_string("fp_state_check"));
  json_array_append_new(a, json_string("repeat_call_check"));
  if (r->layers) {
    json_array_foreach(r->layers, i, v)
      json_array_append(a, v);
    if (json_array_size(r->layers))
      json_array_append_new(a, json_string("heap_perturb"));
  }
  return a;
}

static void environment(kope_report *r, const kope_evaluator *ev)
{
  r->env = json_pack("{s:s, s:s, s:s, s:s, s:i, s:s, s:s}", "harness", KOPE_HARNESS_VERSION,
                     "kope", KOPE_VERSION, "target", kope_target_name(ev->t), "compiler",
                     kope_target_compiler(ev->t), "threads", ev->o.threads, "cflags",
                     kope_target_default_flags(ev->t), "extra_cflags",
                     ev->o.cflags ? ev->o.cflags : "");
  if (ev->hw)
    json_object_set_new(r->env, "cpu", json_string(kope_hw_cpu_model(ev->hw)));
  json_object_set_new(r->env, "isolation", isolation(r, ev));
  json_object_set_new(r->env, "sandbox", kope_sandbox_caps_json(kope_sandbox_probe()));
}

static size_t timed_cases(const kope_report *r)
{
  size_t c, n = 0;

  for (c = 0; c < r->ncases; c++)
    n += r->cases[c].timed != 0;
  return n;
}

static void feedback_case(kope_buf *b, const kope_report *r, size_t c)
{
  const kope_case_res *cr = &r->cases[c];

  kope_buf_printf(b, "  case %zu%s%s%s (%s): ", c, *cr->name ? " \"" : "", cr->name,
                  *cr->name ? "\"" : "", cr->shape);
  if (cr->timed && cr->sp_base > 0)   /* timed against the incumbent (--base) too */
    kope_buf_printf(b, "%.3fx [%.3f, %.3f] vs reference, %.3fx [%.3f, %.3f] vs incumbent, "
                    "%.3g s/call\n", cr->sp_ref, cr->sp_ref_lo, cr->sp_ref_hi, cr->sp_base,
                    cr->sp_base_lo, cr->sp_base_hi, cr->t_cand);
  else if (cr->timed)
    kope_buf_printf(b, "%.3fx [%.3f, %.3f] %.3g s/call\n", cr->sp_ref, cr->sp_ref_lo,
                    cr->sp_ref_hi, cr->t_cand);
  else
    kope_buf_puts(b, "correct (check case, not timed)\n");
}

static void make_feedback(kope_report *r)
{
  kope_buf b;
  size_t c;

  kope_buf_init(&b, 16384);
  kope_buf_printf(&b, "verdict: %s\n", kope_verdict_name(r->verdict));
  if (r->verdict != KOPE_CORRECT)
    kope_buf_printf(&b, "reason: %s\n", r->reason);
  else if (r->review)
    kope_buf_printf(&b, "not accepted: %s\n", r->reason);
  if (r->verdict == KOPE_COMPILE_ERROR && r->diagnostics)
    kope_buf_printf(&b, "compiler:\n%s", r->diagnostics);
  if (r->verdict == KOPE_CORRECT && r->sp_ref > 0) {
    kope_buf_printf(&b, "speedup vs reference (geomean): %.3fx", r->sp_ref);
    if (r->has_vendor)
      kope_buf_printf(&b, ", vs %s: %.3fx", r->vendor_name, r->sp_ven);
    if (r->roof > 0)
      kope_buf_printf(&b, ", roofline fraction %.3f", r->roof);
    kope_buf_printf(&b, " (over the %zu timed cases)\n", timed_cases(r));
    for (c = 0; c < r->ncases; c++)
      feedback_case(&b, r, c);
  }
  if (r->log && *r->log && r->verdict != KOPE_CORRECT)
    kope_buf_printf(&b, "kernel output:\n%.2000s\n", r->log);
  r->feedback = kope_buf_steal(&b);
}

/* Cases checked on fewer seeds than the report's (kope_eval_case_seeds). */
static size_t fewer_seeds(const kope_report *r)
{
  size_t c, n = 0;

  for (c = 0; c < r->ncases; c++)
    n += r->cases[c].seeds > 0 && r->cases[c].seeds < r->seeds;
  return n;
}

void kope_report_finish(kope_report *r, const kope_evaluator *ev)
{
  if (r->verdict == KOPE_CORRECT && !r->review)
    snprintf(r->reason, sizeof r->reason, "all %zu cases correct on %d seeds (%zu timed)%s",
             r->ncases, r->seeds, timed_cases(r),
             fewer_seeds(r) ? "; the largest on fewer" : "");
  geomeans(r);
  environment(r, ev);
  r->overhead_s = r->total_s - r->compile_s - r->wait_s;
  if (r->overhead_s < 0)
    r->overhead_s = 0;
  make_feedback(r);
}

void kope_report_free(kope_report *r)
{
  if (!r)
    return;
  json_decref(r->mismatch);
  json_decref(r->env);
  json_decref(r->layers);
  json_decref(r->flags);
  free(r->diagnostics);
  free(r->log);
  free(r->feedback);
  free(r->op_name);
  free(r->vendor_name);
  free(r);
}

int kope_report_vs_base(const kope_report *r, kope_base_cmp *out)
{
  if (!r->has_base)
    return 0;
  *out = r->base;
  return 1;
}

kope_verdict kope_report_verdict(const kope_report *r) { return r->verdict; }
int kope_report_accepted(const kope_report *r)
{
  return r->verdict == KOPE_CORRECT && !r->review;
}
const char *kope_report_reason(const kope_report *r) { return r->reason; }
const char *kope_report_feedback(const kope_report *r) { return r->feedback; }
double kope_report_speedup_ref(const kope_report *r) { return r->sp_ref; }
double kope_report_speedup_vendor(const kope_report *r) { return r->sp_ven; }
double kope_report_roofline(const kope_report *r) { return r->roof; }
size_t kope_report_ncases(const kope_report *r) { return r->ncases; }
double kope_report_compile_seconds(const kope_report *r) { return r->compile_s; }
double kope_report_total_seconds(const kope_report *r) { return r->total_s; }
double kope_report_overhead_seconds(const kope_report *r) { return r->overhead_s; }

double kope_report_case_speedup(const kope_report *r, size_t c, double *lo, double *hi)
{
  if (c >= r->ncases)
    return 0.0;
  if (lo)
    *lo = r->cases[c].sp_ref_lo;
  if (hi)
    *hi = r->cases[c].sp_ref_hi;
  return r->cases[c].sp_ref;
}

const char *kope_report_case_name(const kope_report *r, size_t c)
{
  return c < r->ncases ? r->cases[c].name : "";
}

const char *kope_report_case_label(const kope_report *r, size_t c)
{
  return c < r->ncases ? r->cases[c].shape : "";
}

kope_case_role kope_report_case_role(const kope_report *r, size_t c)
{
  return c < r->ncases ? r->cases[c].role : KOPE_CASE_BOTH;
}

int kope_report_case_timed(const kope_report *r, size_t c)
{
  return c < r->ncases && r->cases[c].timed;
}

double kope_report_case_vendor(const kope_report *r, size_t c)
{
  return c < r->ncases && r->has_vendor ? r->cases[c].sp_ven : 0.0;
}

const char *kope_case_role_name(kope_case_role role)
{
  return role == KOPE_CASE_CHECK ? "check" : role == KOPE_CASE_PERF ? "perf" : "both";
}

double kope_report_max_error_ratio(const kope_report *r)
{
  double m = 0.0;
  size_t c;

  for (c = 0; c < r->ncases; c++)
    if (r->cases[c].max_err[1] > m)
      m = r->cases[c].max_err[1];
  return m;
}

double kope_report_case_seconds(const kope_report *r, size_t c)
{
  return c < r->ncases ? r->cases[c].t_cand : 0.0;
}

/* A JSON string of arbitrary bytes: invalid UTF-8 becomes '?'. */
static json_t *safe_string(const char *s)
{
  json_t *j = json_string(s ? s : "");
  char *c;
  size_t i;

  if (j)
    return j;
  if (!(c = kope_strdup(s)))
    return NULL;   /* out of memory: the caller's json_pack/set fails in turn */
  for (i = 0; c[i]; i++)
    if ((unsigned char)c[i] >= 0x80 || ((unsigned char)c[i] < 0x20 && c[i] != '\n' && c[i] != '\t'))
      c[i] = '?';
  j = json_string(c);
  free(c);
  return j;
}

static json_t *samples(const double *v, int n)
{
  json_t *a = json_array();
  int i;

  for (i = 0; i < n; i++)
    json_array_append_new(a, json_real(v[i]));
  return a;
}

static json_t *case_json(const kope_report *r, size_t c)
{
  const kope_case_res *cr = &r->cases[c];
  json_t *j = json_pack("{s:i, s:s, s:s, s:s, s:b, s:f, s:f, s:f, s:f}", "index", (int)c,
                        "name", cr->name, "shape", cr->shape, "role",
                        kope_case_role_name(cr->role), "timed", cr->timed, "max_abs_error",
                        cr->max_err[0], "max_error_ratio", cr->max_err[1], "flops", cr->flops,
                        "bytes", cr->bytes);

  json_object_set_new(j, "seeds", json_integer(cr->seeds));
  if (!cr->timed)
    return j;
  json_object_set_new(j, "rounds", json_integer(cr->nrounds));
  json_object_set_new(j, "seconds", json_pack("{s:f, s:f}", "candidate", cr->t_cand,
                                              "reference", cr->t_ref));
  json_object_set_new(j, "speedup_ref", json_pack("{s:f, s:f, s:f}", "median", cr->sp_ref,
                                                  "ci_lo", cr->sp_ref_lo, "ci_hi", cr->sp_ref_hi));
  json_object_set_new(j, "iters", json_pack("{s:i, s:i}", "candidate", (int)cr->iters_cand,
                                            "reference", (int)cr->iters_ref));
  json_object_set_new(j, "samples", json_pack("{s:o, s:o}", "candidate",
                                               samples(cr->s_cand, cr->nrounds), "reference",
                                               samples(cr->s_ref, cr->nrounds)));
  if (r->has_vendor) {
    json_object_set_new(json_object_get(j, "seconds"), "vendor", json_real(cr->t_ven));
    json_object_set_new(j, "speedup_vendor", json_pack("{s:f, s:f, s:f}", "median", cr->sp_ven,
                                                       "ci_lo", cr->sp_ven_lo, "ci_hi",
                                                       cr->sp_ven_hi));
    json_object_set_new(json_object_get(j, "samples"), "vendor",
                        samples(cr->s_ven, cr->nrounds));
  }
  if (r->has_base) {
    json_object_set_new(json_object_get(j, "seconds"), "base", json_real(cr->t_base));
    json_object_set_new(j, "speedup_base", json_pack("{s:f, s:f, s:f}", "median", cr->sp_base,
                                                     "ci_lo", cr->sp_base_lo, "ci_hi",
                                                     cr->sp_base_hi));
    json_object_set_new(json_object_get(j, "samples"), "base", samples(cr->s_base, cr->nrounds));
  }
  json_object_set_new(j, "roofline_fraction", json_real(cr->roof));
  json_object_set_new(j, "in_cache", json_boolean(cr->in_cache));
  return j;
}

json_t *kope_report_to_json(const kope_report *r)
{
  json_t *cases = json_array(), *j;
  size_t c;

  for (c = 0; c < r->ncases; c++)
    json_array_append_new(cases, case_json(r, c));
  j = json_pack("{s:s, s:s, s:b, s:o, s:s, s:i, s:s}", "op", r->op_name, "verdict",
                kope_verdict_name(r->verdict), "accepted", kope_report_accepted(r),
                "reason", safe_string(r->reason), "source_sha256", r->source_hash, "seeds", r->seeds,
                "harness_version", KOPE_HARNESS_VERSION);
  json_object_set_new(j, "mismatch", r->mismatch ? json_incref(r->mismatch) : json_null());
  json_object_set_new(j, "flags", r->flags ? json_incref(r->flags) : json_array());
  json_object_set_new(j, "sandbox_layers", r->layers ? json_incref(r->layers) : json_array());
  json_object_set_new(j, "diagnostics", safe_string(r->diagnostics));
  json_object_set_new(j, "kernel_output", safe_string(r->log));
  json_object_set_new(j, "speedup_ref", json_real(r->sp_ref));
  json_object_set_new(j, "speedup_vendor", r->has_vendor ? json_real(r->sp_ven) : json_null());
  json_object_set_new(j, "vendor", r->has_vendor ? json_string(r->vendor_name) : json_null());
  json_object_set_new(j, "roofline_fraction", json_real(r->roof));
  json_object_set_new(j, "vs_base", !r->has_base ? json_null() :
                      json_pack("{s:f, s:f, s:f, s:i, s:i, s:f}", "speedup", r->base.speedup,
                                "ci_lo", r->base.lo, "ci_hi", r->base.hi, "rounds",
                                r->base.rounds, "wins", r->base.wins, "p_value",
                                r->base.p_value));
  json_object_set_new(j, "cases", cases);
  json_object_set_new(j, "timing", json_pack("{s:f, s:f, s:f, s:f}", "compile_s", r->compile_s,
                                             "total_s", r->total_s, "worker_s", r->wait_s,
                                             "overhead_s", r->overhead_s));
  json_object_set_new(j, "environment", json_incref(r->env));
  json_object_set_new(j, "feedback", safe_string(r->feedback));
  return j;
}
