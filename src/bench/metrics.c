/*
 * Metrics of a kope-bench document, computed from its "runs" (what each
 * session reported) and "final" (the side-by-side re-measurement of every
 * final kernel) members; see docs/bench.md for the definitions. A unit is
 * one (configuration, repeat, operator); a pair is one (unit, case).
 * Speedups, pass rates, fast_p, the roofline fraction and the score come
 * from the final re-measurement only; evaluations, tokens and curves from
 * the runs. Scores, speedups and fast_p are over timed cases only: a case
 * whose role is "check" counts for the pass rate, never for a score.
 * Out of memory (kope/core.h's policy): a vector that cannot grow or a
 * unit that cannot be filled sets the caller's nomem flag, the unit then
 * counts as not measured, and kope_bench_metrics returns KOPE_ENOMEM.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "bench/bench_int.h"

#define NBOOT 2000
#define BOOT_SEED 0x6b6f7065ull

static const double fast_ps[] = {1.0, 1.5, 2.0};

/* One unit's measured view. */
typedef struct unit {
  size_t ncases, passed;        /* cases passed (lower bound for incorrect) */
  int accepted;
  double *sp, *ven, *score, *base;   /* per case; 0 = not measured */
  int *timed;                   /* per case: scored (not a "check" case) */
  size_t ntimed;
  double sp_op, ven_op, roof;
} unit;

static void unit_release(unit *u)
{
  free(u->sp);
  free(u->ven);
  free(u->score);
  free(u->base);
  free(u->timed);
  memset(u, 0, sizeof *u);
}

json_t *kope_bench_final_kernel(const json_t *doc, const char *op, const char *cfg, int rep)
{
  json_t *f, *k;
  size_t i, j;

  json_array_foreach(json_object_get(doc, "final"), i, f) {
    if (strcmp(kope_bj_str(f, "op"), op))
      continue;
    json_array_foreach(json_object_get(f, "kernels"), j, k)
      if (!strcmp(kope_bj_str(k, "config"), cfg) && (int)kope_bj_num(k, "repeat", 0) == rep)
        return k;
  }
  return NULL;
}

static json_t *find_run(const json_t *doc, const char *op, const char *cfg, int rep)
{
  json_t *r;
  size_t i;

  json_array_foreach(json_object_get(doc, "runs"), i, r)
    if (!strcmp(kope_bj_str(r, "op"), op) && !strcmp(kope_bj_str(r, "config"), cfg) &&
        (int)kope_bj_num(r, "repeat", 0) == rep)
      return r;
  return NULL;
}

static size_t passed_cases(const json_t *rep, size_t ncases)
{
  json_t *mm = json_object_get(rep, "mismatch");

  if (kope_bj_bool(rep, "accepted"))
    return ncases;
  /* cases are checked in order: those before the first mismatch passed */
  if (!strcmp(kope_bj_str(rep, "verdict"), "incorrect") && json_is_object(mm)) {
    double c = kope_bj_num(mm, "case", 0);
    return c > 0 && c <= (double)ncases ? (size_t)c : 0;
  }
  return 0;
}

static void unit_case(unit *u, size_t c, const json_t *jc)
{
  double tc = kope_bj_num2(jc, "seconds", "candidate", 0);
  double tr = kope_bj_num2(jc, "seconds", "reference", 0);
  double roof = kope_bj_num(jc, "roofline_fraction", 0);

  u->sp[c] = kope_bj_num2(jc, "speedup_ref", "median", 0);
  u->ven[c] = kope_bj_num2(jc, "speedup_vendor", "median", 0);
  u->base[c] = kope_bj_num2(jc, "speedup_base", "median", 0);
  u->score[c] = kope_bench_case_score(tc, tr, roof > 0 ? roof * tc : 0);
}

/* Out of memory: an empty, not accepted unit and *nomem set. */
static void unit_fill(unit *u, const json_t *k, size_t ncases, int *nomem)
{
  json_t *rep = json_object_get(k, "report"), *cases = json_object_get(rep, "cases");
  size_t c;

  memset(u, 0, sizeof *u);
  u->sp = calloc(ncases + 1, sizeof *u->sp);
  u->ven = calloc(ncases + 1, sizeof *u->ven);
  u->score = calloc(ncases + 1, sizeof *u->score);
  u->base = calloc(ncases + 1, sizeof *u->base);
  u->timed = calloc(ncases + 1, sizeof *u->timed);
  if (!u->sp || !u->ven || !u->score || !u->base || !u->timed) {
    unit_release(u);
    *nomem = 1;
    return;
  }
  u->ncases = ncases;
  /* check cases (role "check" in the report) are judged, never scored */
  for (c = 0; c < ncases; c++) {
    json_t *jc = json_array_get(cases, c);
    u->timed[c] = !jc || strcmp(kope_bj_str(jc, "role"), "check") != 0;
    u->ntimed += (size_t)u->timed[c];
  }
  if (!rep)
    return;
  u->passed = passed_cases(rep, ncases);
  u->accepted = kope_bj_bool(rep, "accepted");
  if (!u->accepted)
    return;
  for (c = 0; c < ncases && c < json_array_size(cases); c++)
    if (u->timed[c])
      unit_case(u, c, json_array_get(cases, c));
  u->sp_op = kope_bj_num(rep, "speedup_ref", 0);
  u->ven_op = kope_bj_num(rep, "speedup_vendor", 0);
  u->roof = kope_bj_num(rep, "roofline_fraction", 0);
}

/* ---- a growable double vector ---- */

typedef struct dvec {
  double *v;
  size_t n, cap;
} dvec;

/* Append x; out of memory: x is left out and *nomem set. */
static void dv_push(dvec *d, double x, int *nomem)
{
  if (kope_grow(&d->v, &d->cap, d->n + 1, sizeof *d->v) != KOPE_OK) {
    *nomem = 1;
    return;
  }
  d->v[d->n++] = x;
}

static double dv_geomean(const dvec *d)
{
  double lo, hi;

  return kope_bench_geomean_ci(d->v, d->n, 0, 0, &lo, &hi);
}

static int cmp_dbl(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;

  return x < y ? -1 : x > y;
}

static double dv_median(dvec *d)
{
  if (!d->n)
    return -1;
  qsort(d->v, d->n, sizeof *d->v, cmp_dbl);
  return d->n % 2 ? d->v[d->n / 2] : 0.5 * (d->v[d->n / 2 - 1] + d->v[d->n / 2]);
}

/* ---- per configuration ---- */

typedef struct cfg_acc {
  double cases_total, cases_passed, any, solved, units, score_sum, score_cases;
  double fast[3], fast_ven[3];
  dvec sp, ven, roof, e90;
  double evals, remeasures, tokens, ctx_tokens, seconds;
  dvec curve_log[64];          /* per evaluation count: logs of curve values */
  size_t curve_len;
  int *nomem;                  /* the caller's out-of-memory flag */
} cfg_acc;

static void acc_unit(cfg_acc *a, const unit *u)
{
  size_t c, p;

  a->units += 1;
  a->cases_total += (double)u->ncases;
  a->cases_passed += (double)u->passed;
  a->any += u->passed > 0;
  a->solved += u->ncases && u->passed == u->ncases;
  a->score_cases += (double)u->ntimed;
  for (c = 0; c < u->ncases; c++)
    a->score_sum += u->timed[c] ? u->score[c] : 0.0;
  if (!u->accepted)
    return;
  for (p = 0; p < 3; p++) {
    a->fast[p] += u->sp_op > fast_ps[p];
    a->fast_ven[p] += u->ven_op > fast_ps[p];
  }
  dv_push(&a->sp, u->sp_op, a->nomem);
  if (u->ven_op > 0)
    dv_push(&a->ven, u->ven_op, a->nomem);
  if (u->roof > 0)
    dv_push(&a->roof, u->roof, a->nomem);
}

static void acc_curve(cfg_acc *a, const json_t *curve, int64_t budget)
{
  size_t n = json_array_size(curve), k, len = (size_t)budget + 1;
  double last = 0, *v;

  if (!n)
    return;
  if (len > 64)
    len = 64;
  if (n > len)
    len = n < 64 ? n : 64;
  if (!(v = calloc(n, sizeof *v))) {
    *a->nomem = 1;
    return;
  }
  for (k = 0; k < n; k++)
    v[k] = json_number_value(json_array_get(curve, k));
  if (kope_bench_evals_to_reach(v, n, 0.9) >= 0)
    dv_push(&a->e90, kope_bench_evals_to_reach(v, n, 0.9), a->nomem);
  for (k = 0; k < len; k++) {
    if (k < n)
      last = v[k];
    if (last > 0)
      dv_push(&a->curve_log[k], log(last), a->nomem);
  }
  if (len > a->curve_len)
    a->curve_len = len;
  free(v);
}

static void acc_run(cfg_acc *a, const json_t *run, int64_t budget)
{
  if (!run)
    return;
  a->evals += kope_bj_num(run, "evaluations", 0);
  a->remeasures += kope_bj_num(run, "remeasurements", 0);
  a->tokens += kope_bj_num(run, "tokens", 0);
  a->ctx_tokens += kope_bj_num(run, "context_tokens_sum", 0);
  a->seconds += kope_bj_num(run, "seconds", 0);
  acc_curve(a, json_object_get(run, "curve"), budget);
}

static json_t *curve_json(cfg_acc *a)
{
  json_t *c = json_array();
  size_t k, i;

  for (k = 0; k < a->curve_len; k++) {
    double s = 0;
    for (i = 0; i < a->curve_log[k].n; i++)
      s += a->curve_log[k].v[i];
    json_array_append_new(c, json_real(a->curve_log[k].n ? exp(s / (double)a->curve_log[k].n) : 0));
  }
  return c;
}

static json_t *fast_json(const double *f, double units)
{
  return json_pack("{s:f, s:f, s:f}", "1.0", units ? f[0] / units : 0, "1.5",
                   units ? f[1] / units : 0, "2.0", units ? f[2] / units : 0);
}

static json_t *acc_json(cfg_acc *a, double repeats)
{
  json_t *j = json_object();

  json_object_set_new(j, "cases_total", json_integer((json_int_t)a->cases_total));
  json_object_set_new(j, "cases_passed", json_integer((json_int_t)a->cases_passed));
  json_object_set_new(j, "pass_rate", json_real(a->cases_total ? a->cases_passed / a->cases_total : 0));
  json_object_set_new(j, "ops_total", json_real(a->units / repeats));
  json_object_set_new(j, "ops_any_pass", json_real(a->any / repeats));
  json_object_set_new(j, "ops_solved", json_real(a->solved / repeats));
  json_object_set_new(j, "geomean_speedup_ref", json_real(dv_geomean(&a->sp)));
  json_object_set_new(j, "geomean_speedup_vendor", json_real(dv_geomean(&a->ven)));
  json_object_set_new(j, "geomean_roofline", json_real(dv_geomean(&a->roof)));
  json_object_set_new(j, "fast_p", fast_json(a->fast, a->units));
  json_object_set_new(j, "fast_p_vendor", fast_json(a->fast_ven, a->units));
  json_object_set_new(j, "score", json_real(a->score_cases ? 100.0 * a->score_sum / a->score_cases : 0));
  json_object_set_new(j, "evaluations", json_integer((json_int_t)a->evals));
  json_object_set_new(j, "remeasurements", json_integer((json_int_t)a->remeasures));
  json_object_set_new(j, "tokens", json_integer((json_int_t)a->tokens));
  json_object_set_new(j, "context_tokens", json_integer((json_int_t)a->ctx_tokens));
  json_object_set_new(j, "seconds", json_real(a->seconds));
  json_object_set_new(j, "evals_to_90_median", json_real(dv_median(&a->e90)));
  json_object_set_new(j, "curve", curve_json(a));
  return j;
}

static void acc_release(cfg_acc *a)
{
  size_t k;

  free(a->sp.v);
  free(a->ven.v);
  free(a->roof.v);
  free(a->e90.v);
  for (k = 0; k < 64; k++)
    free(a->curve_log[k].v);
}

/* ---- per operator (within a configuration) ---- */

static json_t *op_entry(const unit *u, const json_t *run, int rep_count, int *nomem)
{
  json_t *curve = json_object_get(run, "curve");
  size_t n = json_array_size(curve), k;
  double *v = calloc(n + 1, sizeof *v);
  int e90 = -1;

  if (!v)
    *nomem = 1;
  for (k = 0; v && k < n; k++)
    v[k] = json_number_value(json_array_get(curve, k));
  if (v)
    e90 = kope_bench_evals_to_reach(v, n, 0.9);
  free(v);
  (void)rep_count;
  return json_pack("{s:f, s:f, s:f, s:I, s:I, s:b, s:I, s:I, s:i}", "speedup_ref", u->sp_op,
                   "speedup_vendor", u->ven_op, "roofline", u->roof, "passed_cases",
                   (json_int_t)u->passed, "ncases", (json_int_t)u->ncases, "accepted", u->accepted,
                   "evaluations", (json_int_t)kope_bj_num(run, "evaluations", 0), "tokens",
                   (json_int_t)kope_bj_num(run, "tokens", 0), "evals_to_90", e90);
}

static json_t *config_metrics(const json_t *doc, const char *cfg, int repeats, int64_t budget,
                              int *nomem)
{
  json_t *ops = json_object_get(doc, "operators"), *op, *per_op = json_object(), *m;
  cfg_acc a;
  size_t i;
  int rep;

  memset(&a, 0, sizeof a);
  a.nomem = nomem;
  json_array_foreach(ops, i, op) {
    const char *name = kope_bj_str(op, "name");
    json_t *list = json_array();
    for (rep = 0; rep < repeats; rep++) {
      json_t *k = kope_bench_final_kernel(doc, name, cfg, rep), *run = find_run(doc, name, cfg, rep);
      unit u;
      unit_fill(&u, k, (size_t)kope_bj_num(op, "ncases", 0), nomem);
      acc_unit(&a, &u);
      acc_run(&a, run, budget);
      json_array_append_new(list, op_entry(&u, run, repeats, nomem));
      unit_release(&u);
    }
    json_object_set_new(per_op, name, list);
  }
  m = acc_json(&a, repeats);
  json_object_set_new(m, "operators", per_op);
  acc_release(&a);
  return m;
}

/* ---- operators: seed and vendor, from the final seed kernel ---- */

static json_t *operator_metrics(const json_t *doc, int *nomem)
{
  json_t *out = json_object(), *op;
  size_t i, c;

  json_array_foreach(json_object_get(doc, "operators"), i, op) {
    const char *name = kope_bj_str(op, "name");
    size_t nc = (size_t)kope_bj_num(op, "ncases", 0);
    dvec vend = {0};
    unit u;
    unit_fill(&u, kope_bench_final_kernel(doc, name, "seed", 0), nc, nomem);
    for (c = 0; c < u.ncases; c++)
      if (u.sp[c] > 0 && u.ven[c] > 0)
        dv_push(&vend, u.sp[c] / u.ven[c], nomem);   /* t_ref / t_vendor */
    json_object_set_new(out, name, json_pack("{s:f, s:f, s:b}", "seed_speedup_ref", u.sp_op,
                                             "vendor_speedup_ref", dv_geomean(&vend),
                                             "seed_accepted", u.accepted));
    free(vend.v);
    unit_release(&u);
  }
  return out;
}

/* ---- paired ratios ---- */

static void pair_unit(const unit *a, const unit *b, int a_is_base, int b_is_base, dvec *r,
                      dvec *direct, size_t *wins, int *nomem)
{
  size_t c;

  if (!a->accepted || !b->accepted)
    return;
  for (c = 0; c < a->ncases && c < b->ncases; c++) {
    if (!(a->sp[c] > 0 && b->sp[c] > 0))
      continue;
    dv_push(r, a->sp[c] / b->sp[c], nomem);
    *wins += a->sp[c] > b->sp[c];
    if (a_is_base && b->base[c] > 0)
      dv_push(direct, 1.0 / b->base[c], nomem);
    else if (b_is_base && a->base[c] > 0)
      dv_push(direct, a->base[c], nomem);
  }
}

static json_t *pair_json(const json_t *doc, const char *ca, const char *cb, const char *base,
                         int repeats, int *nomem)
{
  json_t *op, *j;
  dvec r = {0}, direct = {0};
  size_t i, wins = 0;
  double g, lo, hi, dg, dlo, dhi;
  int rep;

  json_array_foreach(json_object_get(doc, "operators"), i, op) {
    const char *name = kope_bj_str(op, "name");
    size_t nc = (size_t)kope_bj_num(op, "ncases", 0);
    for (rep = 0; rep < repeats; rep++) {
      unit ua, ub;
      unit_fill(&ua, kope_bench_final_kernel(doc, name, ca, rep), nc, nomem);
      unit_fill(&ub, kope_bench_final_kernel(doc, name, cb, rep), nc, nomem);
      pair_unit(&ua, &ub, rep == 0 && !strcmp(ca, base), rep == 0 && !strcmp(cb, base), &r,
                &direct, &wins, nomem);
      unit_release(&ua);
      unit_release(&ub);
    }
  }
  g = kope_bench_geomean_ci(r.v, r.n, NBOOT, BOOT_SEED, &lo, &hi);
  dg = kope_bench_geomean_ci(direct.v, direct.n, NBOOT, BOOT_SEED, &dlo, &dhi);
  j = json_pack("{s:s, s:s, s:I, s:I, s:f, s:f, s:f}", "a", ca, "b", cb, "cases",
                (json_int_t)r.n, "a_faster", (json_int_t)wins, "ratio", g, "ci_lo", lo, "ci_hi", hi);
  if (direct.n)
    json_object_set_new(j, "direct", json_pack("{s:I, s:f, s:f, s:f}", "cases",
                                               (json_int_t)direct.n, "ratio", dg, "ci_lo", dlo,
                                               "ci_hi", dhi));
  free(r.v);
  free(direct.v);
  return j;
}

static json_t *paired_all(const json_t *doc, json_t *cfgs, int repeats, int *nomem)
{
  json_t *out = json_array();
  size_t i, k, n = json_array_size(cfgs);
  const char *base = n ? kope_bj_str(json_array_get(cfgs, 0), "name") : "";

  for (i = 0; i < n; i++)
    for (k = i + 1; k < n; k++)
      json_array_append_new(out, pair_json(doc, kope_bj_str(json_array_get(cfgs, i), "name"),
                                           kope_bj_str(json_array_get(cfgs, k), "name"), base,
                                           repeats, nomem));
  return out;
}

int kope_bench_metrics(json_t *doc, kope_err *err)
{
  json_t *set = json_object_get(doc, "settings"), *cfgs = json_object_get(set, "configs");
  json_t *m, *c;
  int repeats = (int)kope_bj_num(set, "repeats", 1);
  int64_t budget = (int64_t)kope_bj_num(set, "budget_evals", 12);
  size_t i;
  int nomem = 0;

  if (strcmp(kope_bj_str(doc, "format"), KOPE_BENCH_FORMAT) || !json_is_array(cfgs) ||
      !json_is_array(json_object_get(doc, "operators")))
    return kope_err_set(err, KOPE_EINPUT, "not a kope-bench results document");
  if (repeats < 1)
    repeats = 1;
  m = json_object();
  json_array_foreach(cfgs, i, c)
    json_object_set_new(m, kope_bj_str(c, "name"),
                        config_metrics(doc, kope_bj_str(c, "name"), repeats, budget, &nomem));
  json_object_set_new(doc, "metrics", json_pack("{s:o, s:o, s:s}", "configs", m, "operators",
      operator_metrics(doc, &nomem), "score_formula",
      "per case s = (T_ref - T_HW) / ((T_cand - T_HW) + (T_ref - T_HW)), T_HW the roofline "
      "time, times clamped to >= T_HW; failed cases 0; score = 100 * mean over all "
      "(operator x timed case x repeat) pairs (check cases are never scored)"));
  json_object_set_new(doc, "paired", paired_all(doc, cfgs, repeats, &nomem));
  return nomem ? kope_err_nomem(err, "bench metrics") : KOPE_OK;
}
