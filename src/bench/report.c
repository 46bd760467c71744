/*
 * kope report: kope-bench documents as one self-contained HTML page
 * (inline CSS and SVG, no scripts, no network) or as Markdown. Tables are
 * written through one small table writer so both formats show the same
 * numbers: the summary per configuration (the paper's Table 1 shape), the
 * ablations (memory on/off, active/passive, tuner/random, cross-target),
 * the paired ratios with bootstrap intervals, a per-operator table and a
 * per-case table (name, shape, role; check cases are shown as not timed).
 */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "bench/bench_int.h"

typedef struct tw {
  kope_buf *b;
  int md;
  int nomem;     /* a table or figure could not be allocated: the render fails */
} tw;

void kope_bench_esc(kope_buf *b, const char *s)
{
  for (; s && *s; s++)
    switch (*s) {
    case '<': kope_buf_puts(b, "&lt;"); break;
    case '>': kope_buf_puts(b, "&gt;"); break;
    case '&': kope_buf_puts(b, "&amp;"); break;
    case '\'': kope_buf_puts(b, "&#39;"); break;
    case '"': kope_buf_puts(b, "&quot;"); break;
    default: kope_buf_append(b, s, 1);
    }
}

static void md_cell(kope_buf *b, const char *s)
{
  for (; s && *s; s++)
    if (*s == '|')
      kope_buf_puts(b, "\\|");
    else if (*s != '\n')
      kope_buf_append(b, s, 1);
}

static void tw_begin(tw *t, const char *cls, const char *const *head, size_t n)
{
  size_t i;

  if (t->md) {
    kope_buf_puts(t->b, "|");
    for (i = 0; i < n; i++) {
      kope_buf_puts(t->b, " ");
      md_cell(t->b, head[i]);
      kope_buf_puts(t->b, " |");
    }
    kope_buf_puts(t->b, "\n|");
    for (i = 0; i < n; i++)
      kope_buf_puts(t->b, i ? "---:|" : "---|");
    kope_buf_puts(t->b, "\n");
    return;
  }
  kope_buf_printf(t->b, "<table class='%s'><thead><tr>", cls);
  for (i = 0; i < n; i++) {
    kope_buf_puts(t->b, "<th>");
    kope_bench_esc(t->b, head[i]);
    kope_buf_puts(t->b, "</th>");
  }
  kope_buf_puts(t->b, "</tr></thead><tbody>\n");
}

/* A row of n cells given as printf formats and values, separated by NULs
 * would be fragile: cells are built one by one instead. */
static void tw_row_begin(tw *t)
{
  kope_buf_puts(t->b, t->md ? "|" : "<tr>");
}

static void tw_cell(tw *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void tw_cell(tw *t, const char *fmt, ...)
{
  kope_buf c;
  va_list ap;

  kope_buf_init(&c, 4096);
  va_start(ap, fmt);
  kope_buf_vprintf(&c, fmt, ap);
  va_end(ap);
  if (t->md) {
    kope_buf_puts(t->b, " ");
    md_cell(t->b, c.data);
    kope_buf_puts(t->b, " |");
  } else {
    kope_buf_puts(t->b, "<td>");
    kope_bench_esc(t->b, c.data);
    kope_buf_puts(t->b, "</td>");
  }
  kope_buf_release(&c);
}

static void tw_row_end(tw *t)
{
  kope_buf_puts(t->b, t->md ? "\n" : "</tr>\n");
}

static void tw_end(tw *t)
{
  kope_buf_puts(t->b, t->md ? "\n" : "</tbody></table>\n");
}

static void heading(tw *t, int level, const char *id, const char *text)
{
  if (t->md) {
    kope_buf_printf(t->b, "%.*s %s\n\n", level, "####", text);
    return;
  }
  kope_buf_printf(t->b, "<h%d id='%s'>", level, id);
  kope_bench_esc(t->b, text);
  kope_buf_printf(t->b, "</h%d>\n", level);
}

static void para(tw *t, const char *text)
{
  if (t->md) {
    kope_buf_printf(t->b, "%s\n\n", text);
    return;
  }
  kope_buf_puts(t->b, "<p>");
  kope_bench_esc(t->b, text);
  kope_buf_puts(t->b, "</p>\n");
}

/* ---- lookups ---- */

static json_t *cfg_list(const json_t *doc)
{
  return json_object_get(json_object_get(doc, "settings"), "configs");
}

static json_t *cfg_m(const json_t *doc, const char *cfg)
{
  return json_object_get(json_object_get(json_object_get(doc, "metrics"), "configs"), cfg);
}

static int has_cfg(const json_t *doc, const char *cfg)
{
  return cfg_m(doc, cfg) != NULL;
}

/* The paired entry for (a, b), inverted when stored as (b, a). */
static int pair_of(const json_t *doc, const char *a, const char *b, double *r, double *lo,
                   double *hi, long *n)
{
  json_t *p;
  size_t i;

  json_array_foreach(json_object_get(doc, "paired"), i, p) {
    int fwd = !strcmp(kope_bj_str(p, "a"), a) && !strcmp(kope_bj_str(p, "b"), b);
    int rev = !strcmp(kope_bj_str(p, "a"), b) && !strcmp(kope_bj_str(p, "b"), a);
    if (!fwd && !rev)
      continue;
    *n = (long)kope_bj_num(p, "cases", 0);
    *r = kope_bj_num(p, "ratio", 0);
    *lo = kope_bj_num(p, "ci_lo", 0);
    *hi = kope_bj_num(p, "ci_hi", 0);
    if (rev && *r > 0) {
      double l = *lo;
      *r = 1 / *r;
      *lo = *hi > 0 ? 1 / *hi : 0;
      *hi = l > 0 ? 1 / l : 0;
    }
    return 1;
  }
  return 0;
}

static void cell_x(tw *t, double v)
{
  if (v > 0)
    tw_cell(t, "%.3fx", v);
  else
    tw_cell(t, "–");
}

/* ---- summary ---- */

static const char *const sum_head[] = {
  "configuration", "pass rate", "ops ≥1 case", "ops solved", "speedup vs ref (geomean)",
  "vs vendor", "fast_1.0", "fast_1.5", "fast_2.0", "roofline", "score", "evals",
  "evals to 90%", "LLM tokens", "context tokens"};

static void summary_row(tw *t, const json_t *doc, const char *cfg, const char *docname)
{
  json_t *m = cfg_m(doc, cfg), *f = json_object_get(m, "fast_p");

  tw_row_begin(t);
  tw_cell(t, "%s%s%s%s", cfg, docname ? " (" : "", docname ? docname : "", docname ? ")" : "");
  tw_cell(t, "%.1f%% (%lld/%lld)", 100 * kope_bj_num(m, "pass_rate", 0),
          (long long)kope_bj_num(m, "cases_passed", 0), (long long)kope_bj_num(m, "cases_total", 0));
  tw_cell(t, "%g/%g", kope_bj_num(m, "ops_any_pass", 0), kope_bj_num(m, "ops_total", 0));
  tw_cell(t, "%g/%g", kope_bj_num(m, "ops_solved", 0), kope_bj_num(m, "ops_total", 0));
  cell_x(t, kope_bj_num(m, "geomean_speedup_ref", 0));
  cell_x(t, kope_bj_num(m, "geomean_speedup_vendor", 0));
  tw_cell(t, "%.2f", kope_bj_num(f, "1.0", 0));
  tw_cell(t, "%.2f", kope_bj_num(f, "1.5", 0));
  tw_cell(t, "%.2f", kope_bj_num(f, "2.0", 0));
  tw_cell(t, "%.3f", kope_bj_num(m, "geomean_roofline", 0));
  tw_cell(t, "%.1f", kope_bj_num(m, "score", 0));
  tw_cell(t, "%lld", (long long)kope_bj_num(m, "evaluations", 0));
  if (kope_bj_num(m, "evals_to_90_median", -1) >= 0)
    tw_cell(t, "%g", kope_bj_num(m, "evals_to_90_median", 0));
  else
    tw_cell(t, "–");
  tw_cell(t, "%lld", (long long)kope_bj_num(m, "tokens", 0));
  tw_cell(t, "%lld", (long long)kope_bj_num(m, "context_tokens", 0));
  tw_row_end(t);
}

static void summary(tw *t, json_t *const *docs, size_t n, const kope_bench_report_opts *o)
{
  json_t *c;
  size_t d, k;

  heading(t, 2, "summary", "Summary per configuration");
  tw_begin(t, "summary", sum_head, sizeof sum_head / sizeof sum_head[0]);
  for (d = 0; d < n; d++)
    json_array_foreach(cfg_list(docs[d]), k, c)
      summary_row(t, docs[d], kope_bj_str(c, "name"), n > 1 && o->names ? o->names[d] : NULL);
  tw_end(t);
  para(t, "Pass rate over all (operator × case) pairs of the final re-measurement (a missing or "
          "failed operator counts all its cases as failed); speedups are geometric means over "
          "operators of each operator's geometric mean over its timed cases; fast_p is the fraction of "
          "operators with a correct kernel faster than p times the reference; roofline is the "
          "geometric-mean fraction of the roofline bound; score is the CANN-Bench-style score "
          "(docs/bench.md); evals to 90% is the median number of evaluations a session needed to "
          "reach 90% of its final speedup.");
}

/* ---- ablations ---- */

static const char *const abl_head[] = {"A", "B", "pass A", "pass B", "speedup A", "speedup B",
                                       "A / B paired [95% CI]", "paired cases", "tokens A",
                                       "tokens B"};

static void ablation_row(tw *t, const json_t *doc, const char *a, const char *b)
{
  json_t *ma = cfg_m(doc, a), *mb = cfg_m(doc, b);
  double r = 0, lo = 0, hi = 0;
  long n = 0;

  pair_of(doc, a, b, &r, &lo, &hi, &n);
  tw_row_begin(t);
  tw_cell(t, "%s", a);
  tw_cell(t, "%s", b);
  tw_cell(t, "%.1f%%", 100 * kope_bj_num(ma, "pass_rate", 0));
  tw_cell(t, "%.1f%%", 100 * kope_bj_num(mb, "pass_rate", 0));
  cell_x(t, kope_bj_num(ma, "geomean_speedup_ref", 0));
  cell_x(t, kope_bj_num(mb, "geomean_speedup_ref", 0));
  if (n > 0)
    tw_cell(t, "%.3fx [%.3f, %.3f]", r, lo, hi);
  else
    tw_cell(t, "–");
  tw_cell(t, "%ld", n);
  tw_cell(t, "%lld", (long long)(kope_bj_num(ma, "tokens", 0) + kope_bj_num(ma, "context_tokens", 0)));
  tw_cell(t, "%lld", (long long)(kope_bj_num(mb, "tokens", 0) + kope_bj_num(mb, "context_tokens", 0)));
  tw_row_end(t);
}

static void ablation(tw *t, const json_t *doc, const char *id, const char *title,
                     const char *const *pairs, size_t npairs)
{
  size_t i, shown = 0;

  for (i = 0; i < npairs; i++)
    if (has_cfg(doc, pairs[2 * i]) && has_cfg(doc, pairs[2 * i + 1]))
      shown++;
  if (!shown)
    return;
  heading(t, 3, id, title);
  tw_begin(t, "ablation", abl_head, sizeof abl_head / sizeof abl_head[0]);
  for (i = 0; i < npairs; i++)
    if (has_cfg(doc, pairs[2 * i]) && has_cfg(doc, pairs[2 * i + 1]))
      ablation_row(t, doc, pairs[2 * i], pairs[2 * i + 1]);
  tw_end(t);
}

static void ablations(tw *t, const json_t *doc)
{
  static const char *const mem[] = {"tuner+memory", "tuner-nomemory", "llm+memory", "llm-nomemory"};
  static const char *const ctx[] = {"tuner+memory", "passive"};
  static const char *const rnd[] = {"tuner+memory", "random", "tuner-nomemory", "random"};
  static const char *const xt[] = {"source", "cold", "target", "cold", "both", "cold",
                                   "both", "target"};

  heading(t, 2, "ablations", "Ablations");
  para(t, "Paired ratios compare the two configurations' final kernels on the cases both passed, "
          "each timed against the same reference in the same re-measurement batch; the interval "
          "is a percentile bootstrap over cases. Tokens: LLM tokens plus context tokens.");
  ablation(t, doc, "ablation-memory", "Memory on vs off", mem, 2);
  ablation(t, doc, "ablation-context", "Active vs passive context", ctx, 1);
  ablation(t, doc, "ablation-random", "Tuner vs blind random search", rnd, 2);
  ablation(t, doc, "ablation-cross-target", "Cross-target memory (cold / source / target / both)",
           xt, 4);
}

/* ---- paired ---- */

static void paired(tw *t, const json_t *doc)
{
  static const char *const head[] = {"A", "B", "paired cases", "A faster", "A / B [95% CI]",
                                     "direct A / B (timed in the same rounds)"};
  json_t *p, *d;
  size_t i;

  heading(t, 2, "paired", "Paired ratios between configurations");
  tw_begin(t, "paired", head, 6);
  json_array_foreach(json_object_get(doc, "paired"), i, p) {
    tw_row_begin(t);
    tw_cell(t, "%s", kope_bj_str(p, "a"));
    tw_cell(t, "%s", kope_bj_str(p, "b"));
    tw_cell(t, "%lld", (long long)kope_bj_num(p, "cases", 0));
    tw_cell(t, "%lld", (long long)kope_bj_num(p, "a_faster", 0));
    if (kope_bj_num(p, "cases", 0) > 0)
      tw_cell(t, "%.3fx [%.3f, %.3f]", kope_bj_num(p, "ratio", 0), kope_bj_num(p, "ci_lo", 0),
              kope_bj_num(p, "ci_hi", 0));
    else
      tw_cell(t, "–");
    if ((d = json_object_get(p, "direct")))
      tw_cell(t, "%.3fx [%.3f, %.3f] (%lld cases)", kope_bj_num(d, "ratio", 0),
              kope_bj_num(d, "ci_lo", 0), kope_bj_num(d, "ci_hi", 0),
              (long long)kope_bj_num(d, "cases", 0));
    else
      tw_cell(t, "–");
    tw_row_end(t);
  }
  tw_end(t);
}

/* ---- per operator ---- */

static double op_sp(const json_t *doc, const char *cfg, const char *op, const char *key)
{
  json_t *l = json_object_get(json_object_get(cfg_m(doc, cfg), "operators"), op), *e;
  double s = 0;
  size_t i, n = 0;

  json_array_foreach(l, i, e)
    if (kope_bj_num(e, key, 0) > 0) {
      s += log(kope_bj_num(e, key, 0));
      n++;
    }
  return n ? exp(s / (double)n) : 0.0;
}

/* A table's column heads: lead (NULL-terminated), one per configuration
 * of cfgs, then tail (NULL: none); *n of them. Caller frees; NULL with
 * t->nomem set when out of memory. */
static const char **table_head(tw *t, const json_t *cfgs, const char *const *lead,
                               const char *tail, size_t *n)
{
  size_t nl = 0, k;
  const char **head;
  json_t *c;

  while (lead[nl])
    nl++;
  *n = nl + json_array_size(cfgs) + (tail != NULL);
  if (!(head = calloc(*n, sizeof *head))) {
    t->nomem = 1;
    return NULL;
  }
  memcpy(head, lead, nl * sizeof *head);
  json_array_foreach(cfgs, k, c)
    head[nl + k] = kope_bj_str(c, "name");
  if (tail)
    head[*n - 1] = tail;
  return head;
}

static void per_operator(tw *t, const json_t *doc)
{
  static const char *const lead[] = {"operator", "seed", NULL};
  json_t *cfgs = cfg_list(doc), *c, *op, *om = json_object_get(json_object_get(doc, "metrics"), "operators");
  size_t n, k, i;
  const char **head = table_head(t, cfgs, lead, "vendor", &n);

  if (!head)
    return;
  heading(t, 3, "per-operator-table", "Speedup vs reference per operator (final re-measurement)");
  tw_begin(t, "per-op", head, n);
  json_array_foreach(json_object_get(doc, "operators"), i, op) {
    const char *name = kope_bj_str(op, "name");
    tw_row_begin(t);
    tw_cell(t, "%s", name);
    cell_x(t, kope_bj_num2(om, name, "seed_speedup_ref", 0));
    json_array_foreach(cfgs, k, c) {
      double v = op_sp(doc, kope_bj_str(c, "name"), name, "speedup_ref");
      if (v > 0)
        tw_cell(t, "%.3fx", v);
      else
        tw_cell(t, "fail");
    }
    cell_x(t, kope_bj_num2(om, name, "vendor_speedup_ref", 0));
    tw_row_end(t);
  }
  tw_end(t);
  free(head);
}

/* ---- per case ---- */

/* One case's speedup vs the reference in a configuration's repeat-0 final
 * kernel: "not timed" for a check case, "fail" when not accepted. */
static void case_cell(tw *t, const json_t *doc, const char *cfg, const char *op, size_t c)
{
  json_t *rep = json_object_get(kope_bench_final_kernel(doc, op, cfg, 0), "report");
  json_t *jc = json_array_get(json_object_get(rep, "cases"), c);
  double v = kope_bj_num2(jc, "speedup_ref", "median", 0);

  if (!strcmp(kope_bj_str(jc, "role"), "check"))
    tw_cell(t, "not timed");
  else if (!kope_bj_bool(rep, "accepted") || v <= 0)
    tw_cell(t, "fail");
  else
    tw_cell(t, "%.3fx", v);
}

/* The cases of op as its reports name them (the first configuration
 * with a final kernel), NULL when none has. */
static json_t *op_cases(const json_t *doc, const char *op)
{
  json_t *c, *cs;
  size_t k;

  if ((cs = json_object_get(json_object_get(kope_bench_final_kernel(doc, op, "seed", 0),
                                            "report"), "cases")) && json_array_size(cs))
    return cs;
  json_array_foreach(cfg_list(doc), k, c) {
    cs = json_object_get(json_object_get(kope_bench_final_kernel(doc, op, kope_bj_str(c, "name"),
                                                                 0), "report"), "cases");
    if (json_array_size(cs))
      return cs;
  }
  return NULL;
}

static void per_case(tw *t, const json_t *doc)
{
  static const char *const lead[] = {"operator", "case", "name", "shape", "role", NULL};
  json_t *cfgs = cfg_list(doc), *c, *op, *jc;
  size_t n, k, i, j;
  const char **head = table_head(t, cfgs, lead, NULL, &n);

  if (!head)
    return;
  heading(t, 3, "per-case-table", "Speedup vs reference per case (final re-measurement, repeat 0)");
  tw_begin(t, "per-case", head, n);
  json_array_foreach(json_object_get(doc, "operators"), i, op) {
    const char *name = kope_bj_str(op, "name");
    json_array_foreach(op_cases(doc, name), j, jc) {
      tw_row_begin(t);
      tw_cell(t, "%s", name);
      tw_cell(t, "%zu", j);
      tw_cell(t, "%s", kope_bj_str(jc, "name"));
      tw_cell(t, "%s", kope_bj_str(jc, "shape"));
      tw_cell(t, "%s", *kope_bj_str(jc, "role") ? kope_bj_str(jc, "role") : "both");
      json_array_foreach(cfgs, k, c)
        case_cell(t, doc, kope_bj_str(c, "name"), name, j);
      tw_row_end(t);
    }
  }
  tw_end(t);
  para(t, "Check cases are judged on every seed but never timed or scored; every speedup, "
          "fast_p, roofline fraction and score above is over the timed (perf) cases only.");
  free(head);
}

/* ---- settings ---- */

static void settings(tw *t, const json_t *doc)
{
  static const char *const head[] = {"field", "value"};
  json_t *s = json_object_get(doc, "settings"), *e = json_object_get(doc, "environment"), *v;
  size_t i;
  kope_buf ops;

  kope_buf_init(&ops, 1 << 20);
  json_array_foreach(json_object_get(s, "order"), i, v)
    kope_buf_printf(&ops, "%s%s", i ? ", " : "", json_string_value(v));
  heading(t, 2, "environment", "Environment and settings");
  tw_begin(t, "env", head, 2);
#define ROW(name, ...) do { tw_row_begin(t); tw_cell(t, "%s", name); tw_cell(t, __VA_ARGS__); tw_row_end(t); } while (0)
  ROW("CPU", "%s (%d cores, %d logical)", kope_bj_str(e, "cpu"), (int)kope_bj_num(e, "cores", 0),
      (int)kope_bj_num(e, "logical_cpus", 0));
  ROW("roofline peaks", "%.1f GFLOP/s, %.1f GB/s", kope_bj_num(e, "peak_gflops", 0),
      kope_bj_num(e, "bandwidth_gbs", 0));
  ROW("compiler", "%s", kope_bj_str(e, "compiler"));
  ROW("flags", "%s", kope_bj_str(e, "cflags"));
  ROW("kope / harness", "%s / %s", kope_bj_str(e, "kope_version"), kope_bj_str(e, "harness_version"));
  ROW("date, host", "%s, %s", kope_bj_str(e, "date"), kope_bj_str(e, "host"));
  ROW("operators (in order)", "%s", ops.data);
  ROW("budget", "%lld evaluations per session, %lld repeat(s), seed %lld",
      (long long)kope_bj_num(s, "budget_evals", 0), (long long)kope_bj_num(s, "repeats", 1),
      (long long)kope_bj_num(s, "seed", 0));
  ROW("start", "%s", !strcmp(kope_bj_str(s, "start"), "plain")
                         ? "plain: every knob at its first value (the seed row is that kernel)"
                         : "the operator's seed kernel");
  ROW("wall time", "%.0f s", kope_bj_num(doc, "seconds", 0));
#undef ROW
  tw_end(t);
  json_array_foreach(json_object_get(doc, "skipped"), i, v) {
    kope_buf m;
    kope_buf_init(&m, 4096);
    kope_buf_printf(&m, "Skipped %s: %s", kope_bj_str(v, "config"), kope_bj_str(v, "reason"));
    para(t, m.data);
    kope_buf_release(&m);
  }
  kope_buf_release(&ops);
}

/* ---- the documents ---- */

static int check_docs(json_t *const *docs, size_t n, kope_err *err)
{
  size_t i;

  if (!n)
    return kope_err_set(err, KOPE_EINPUT, "no results to report");
  for (i = 0; i < n; i++)
    if (strcmp(kope_bj_str(docs[i], "format"), KOPE_BENCH_FORMAT) ||
        !json_object_get(docs[i], "metrics"))
      return kope_err_set(err, KOPE_EINPUT, "results %zu is not a kope-bench document with "
                          "metrics", i + 1);
  return KOPE_OK;
}

static const char css[] =
  "body{font-family:'DejaVu Sans',Helvetica,Arial,sans-serif;margin:24px auto;max-width:1100px;"
  "color:#222;background:#fff;line-height:1.4}"
  "h1{font-size:26px;border-bottom:3px solid #1b6ec2;padding-bottom:6px}"
  "h2{font-size:20px;margin-top:32px;color:#1b4f8a}h3{font-size:16px}"
  "table{border-collapse:collapse;margin:8px 0 16px;font-size:13px}"
  "th,td{border:1px solid #ccd;padding:4px 8px;text-align:right}"
  "th{background:#e8eef7}td:first-child,th:first-child{text-align:left}"
  "tbody tr:nth-child(even){background:#f6f8fb}"
  ".chart{display:block;margin:8px 0 20px;background:#fcfcfd;border:1px solid #e3e6ea}"
  ".figure{overflow-x:auto}"
  ".grid{stroke:#e1e4e8;stroke-width:1}.parity{stroke:#222;stroke-width:1.5;stroke-dasharray:5 3}"
  ".vendor{stroke:#000;stroke-width:2.5}.edge{stroke:#888;stroke-width:1.5}"
  ".tick{font-size:10px;fill:#555}.lbl{font-size:12px;fill:#222}"
  ".op{font-size:11px;fill:#222;text-anchor:end}.fail{font-size:10px;fill:#c0392b}"
  ".nl{font-size:10px;fill:#fff;text-anchor:middle}.caption{font-size:13px;color:#444}"
  "table.env td{text-align:left}p{font-size:13px}";

/* A figure section: its heading, a caption (HTML, may be empty) and the
 * SVG that draw writes. */
static void figure(tw *t, const char *id, const char *title, const char *caption,
                   void (*draw)(kope_buf *b, const json_t *doc), const json_t *doc)
{
  heading(t, 2, id, title);
  kope_buf_puts(t->b, caption);
  kope_buf_puts(t->b, "<div class='figure'>");
  draw(t->b, doc);
  kope_buf_puts(t->b, "</div>\n");
}

static void doc_sections(tw *t, const json_t *doc, const char *name, const kope_bench_report_opts *o)
{
  int drawn;

  if (name)
    heading(t, 2, "results", name);
  settings(t, doc);
  ablations(t, doc);
  paired(t, doc);
  figure(t, "per-operator", "Per-operator speedup",
         "<p>Final kernels re-measured side by side, speedup vs the reference on a log axis; "
         "the dashed line is parity with the reference, the black mark the vendor "
         "library.</p>\n", kope_bench_svg_bars, doc);
  per_operator(t, doc);
  per_case(t, doc);
  figure(t, "curves", "Speedup vs evaluations",
         "<p>The incumbent's speedup vs the reference after each evaluation during the search "
         "(geometric mean over operators and repeats; measured during the search, not "
         "re-measured).</p>\n", kope_bench_svg_curves, doc);
  figure(t, "tokens", "Token use per configuration", "", kope_bench_svg_tokens, doc);
  heading(t, 2, "forest", "Experience forest");
  kope_buf_puts(t->b, "<div class='figure'>");
  if (!(drawn = kope_bench_svg_forest(t->b, doc, o->forest_op)))
    drawn = kope_bench_svg_forest(t->b, doc, NULL);
  if (drawn == KOPE_ENOMEM)
    t->nomem = 1;
  else if (!drawn)
    kope_buf_puts(t->b, "<p>No forest recorded.</p>");
  kope_buf_puts(t->b, "</div>\n");
}

static void html_body(tw *t, json_t *const *docs, size_t n, const kope_bench_report_opts *o)
{
  size_t i;

  kope_buf_puts(t->b, "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'><title>");
  kope_bench_esc(t->b, o->title ? o->title : "kope bench report");
  kope_buf_printf(t->b, "</title><style>%s</style></head><body>\n<h1 id='title'>", css);
  kope_bench_esc(t->b, o->title ? o->title : "kope bench report");
  kope_buf_puts(t->b, "</h1>\n");
  summary(t, docs, n, o);
  for (i = 0; i < n; i++)
    doc_sections(t, docs[i], n > 1 && o->names ? o->names[i] : NULL, o);
  kope_buf_puts(t->b, "<p class='caption'>Generated by kope report; every figure is inline SVG.</p>\n"
                      "</body></html>\n");
}

static void md_body(tw *t, json_t *const *docs, size_t n, const kope_bench_report_opts *o)
{
  size_t i;

  summary(t, docs, n, o);
  for (i = 0; i < n; i++) {
    if (n > 1 && o->names)
      heading(t, 2, "results", o->names[i]);
    settings(t, docs[i]);
    ablations(t, docs[i]);
    paired(t, docs[i]);
    per_operator(t, docs[i]);
  }
}

/* What both renderers share: the documents checked, a writer (HTML or
 * Markdown) over a fresh buffer, body written into it, the text returned
 * (the caller frees it). */
static char *render(json_t *const *docs, size_t n, const kope_bench_report_opts *o, int md,
                    void (*body)(tw *, json_t *const *, size_t, const kope_bench_report_opts *),
                    kope_err *err)
{
  kope_bench_report_opts def = {0};
  kope_buf b;
  tw t;
  char *s;

  if (check_docs(docs, n, err) != KOPE_OK)
    return NULL;
  kope_buf_init(&b, 0);
  t.b = &b;
  t.md = md;
  t.nomem = 0;
  body(&t, docs, n, o ? o : &def);
  if (t.nomem) {
    kope_buf_release(&b);
    kope_err_nomem(err, "bench report");
    return NULL;
  }
  if (!(s = kope_buf_steal(&b)))
    kope_err_nomem(err, "bench report");
  return s;
}

char *kope_bench_html(json_t *const *docs, size_t n, const kope_bench_report_opts *o,
                      kope_err *err)
{
  return render(docs, n, o, 0, html_body, err);
}

char *kope_bench_markdown(json_t *const *docs, size_t n, const kope_bench_report_opts *o,
                          kope_err *err)
{
  return render(docs, n, o, 1, md_body, err);
}
