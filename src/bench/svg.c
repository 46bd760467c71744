/*
 * The SVG figures of the HTML report, drawn from a kope-bench document's
 * metrics and runs: per-operator speedup bars on a log axis with the
 * parity line (the reference) and a vendor mark per operator, the
 * incumbent speedup against evaluations per configuration, token use per
 * configuration, and one operator's experience forest as a tree.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "bench/bench_int.h"

#define BAR_LEFT 150.0
#define BAR_W 640.0

static json_t *configs(const json_t *doc)
{
  return json_object_get(json_object_get(doc, "settings"), "configs");
}

static json_t *cfg_metrics(const json_t *doc, const char *cfg)
{
  return json_object_get(json_object_get(json_object_get(doc, "metrics"), "configs"), cfg);
}

/* Geomean over repeats of a configuration's final speedup for op (0: failed). */
static double op_speedup(const json_t *doc, const char *cfg, const char *op)
{
  json_t *l = json_object_get(json_object_get(cfg_metrics(doc, cfg), "operators"), op), *e;
  double s = 0;
  size_t i, n = 0;

  json_array_foreach(l, i, e)
    if (kope_bj_num(e, "speedup_ref", 0) > 0) {
      s += log(kope_bj_num(e, "speedup_ref", 0));
      n++;
    }
  return n ? exp(s / (double)n) : 0.0;
}

static double vendor_of(const json_t *doc, const char *op)
{
  return kope_bj_num(json_object_get(json_object_get(json_object_get(doc, "metrics"),
                                                     "operators"), op), "vendor_speedup_ref", 0);
}

typedef struct logaxis {
  double lmin, lmax;
} logaxis;

static void axis_range(const json_t *doc, logaxis *ax)
{
  json_t *ops = json_object_get(doc, "operators"), *op, *c;
  double lo = 1, hi = 1, v;
  size_t i, k;

  json_array_foreach(ops, i, op) {
    const char *name = kope_bj_str(op, "name");
    if ((v = vendor_of(doc, name)) > 0) {
      lo = fmin(lo, v);
      hi = fmax(hi, v);
    }
    json_array_foreach(configs(doc), k, c)
      if ((v = op_speedup(doc, kope_bj_str(c, "name"), name)) > 0) {
        lo = fmin(lo, v);
        hi = fmax(hi, v);
      }
  }
  ax->lmin = floor(log10(lo) * 2 - 0.3) / 2;
  ax->lmax = ceil(log10(hi) * 2 + 0.3) / 2;
}

static double ax_x(const logaxis *ax, double v)
{
  return BAR_LEFT + (log10(v) - ax->lmin) / (ax->lmax - ax->lmin) * BAR_W;
}

static void bar_ticks(kope_buf *b, const logaxis *ax, double h)
{
  static const double m[] = {1, 2, 5};
  int e, k;

  for (e = (int)floor(ax->lmin) - 1; e <= (int)ceil(ax->lmax); e++)
    for (k = 0; k < 3; k++) {
      double v = m[k] * pow(10, e), x;
      if (log10(v) < ax->lmin - 1e-9 || log10(v) > ax->lmax + 1e-9)
        continue;
      x = ax_x(ax, v);
      kope_buf_printf(b, "<line x1='%.1f' y1='20' x2='%.1f' y2='%.1f' class='grid'/>"
                      "<text x='%.1f' y='14' class='tick'>%gx</text>\n", x, x, h, x, v);
    }
}

static void bar_legend(kope_buf *b, const json_t *doc, double y)
{
  json_t *c;
  size_t k;
  double x = BAR_LEFT;

  json_array_foreach(configs(doc), k, c) {
    kope_buf_printf(b, "<rect x='%.1f' y='%.1f' width='12' height='10' fill='%s'/>"
                    "<text x='%.1f' y='%.1f' class='lbl'>", x, y, kope_bench_colour(k),
                    x + 16, y + 9);
    kope_bench_esc(b, kope_bj_str(c, "name"));
    kope_buf_puts(b, "</text>");
    x += 30 + 7.0 * (double)strlen(kope_bj_str(c, "name"));
  }
  kope_buf_printf(b, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' class='vendor'/>"
                  "<text x='%.1f' y='%.1f' class='lbl'>vendor library</text>\n", x, y - 2, x,
                  y + 12, x + 6, y + 9);
}

static void bar_group(kope_buf *b, const json_t *doc, const logaxis *ax, const char *op,
                      double y, double bh)
{
  json_t *c;
  size_t k, n = json_array_size(configs(doc));
  double v, x1 = ax_x(ax, 1.0);

  kope_buf_printf(b, "<text x='%.1f' y='%.1f' class='op'>", BAR_LEFT - 6, y + bh * (double)n / 2 + 4);
  kope_bench_esc(b, op);
  kope_buf_puts(b, "</text>\n");
  json_array_foreach(configs(doc), k, c) {
    double yy = y + bh * (double)k;
    if ((v = op_speedup(doc, kope_bj_str(c, "name"), op)) > 0) {
      double x = ax_x(ax, v);
      kope_buf_printf(b, "<rect x='%.1f' y='%.1f' width='%.1f' height='%.1f' fill='%s'>"
                      "<title>", fmin(x, x1), yy, fabs(x - x1) + 0.5, bh - 1,
                      kope_bench_colour(k));
      kope_bench_esc(b, kope_bj_str(c, "name"));
      kope_buf_printf(b, " %s: %.3fx vs reference</title></rect>\n", op, v);
    } else {
      kope_buf_printf(b, "<text x='%.1f' y='%.1f' class='fail'>no correct kernel</text>\n",
                      x1 + 3, yy + bh - 2);
    }
  }
  if ((v = vendor_of(doc, op)) > 0)
    kope_buf_printf(b, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' class='vendor'>"
                    "<title>vendor %.3fx vs reference</title></line>\n", ax_x(ax, v), y - 2,
                    ax_x(ax, v), y + bh * (double)n + 1, v);
}

void kope_bench_svg_bars(kope_buf *b, const json_t *doc)
{
  json_t *ops = json_object_get(doc, "operators"), *op;
  size_t i, n = json_array_size(configs(doc));
  double bh = 9, gh = bh * (double)(n ? n : 1) + 8, h = 30 + gh * (double)json_array_size(ops);
  logaxis ax;

  axis_range(doc, &ax);
  kope_buf_printf(b, "<svg class='chart bars' xmlns='http://www.w3.org/2000/svg' width='820' "
                  "height='%.0f' viewBox='0 0 820 %.0f' role='img' aria-label='per-operator "
                  "speedup vs reference, log axis'>\n", h + 30, h + 30);
  bar_ticks(b, &ax, h);
  json_array_foreach(ops, i, op)
    bar_group(b, doc, &ax, kope_bj_str(op, "name"), 26 + gh * (double)i, bh);
  kope_buf_printf(b, "<line x1='%.1f' y1='20' x2='%.1f' y2='%.1f' class='parity'/>\n",
                  ax_x(&ax, 1), ax_x(&ax, 1), h);
  bar_legend(b, doc, h + 10);
  kope_buf_puts(b, "</svg>\n");
}

/* ---- curves ---- */

static void curve_range(const json_t *doc, size_t *len, double *ymax)
{
  json_t *c, *v;
  size_t k, i;

  *len = 1;
  *ymax = 1;
  json_array_foreach(configs(doc), k, c) {
    json_t *cv = json_object_get(cfg_metrics(doc, kope_bj_str(c, "name")), "curve");
    if (json_array_size(cv) > *len)
      *len = json_array_size(cv);
    json_array_foreach(cv, i, v)
      *ymax = fmax(*ymax, json_number_value(v));
  }
}

/* 1, 2 or 5 times a power of ten, at least x. */
static double nice_step(double x)
{
  double p = pow(10, floor(log10(x > 0 ? x : 1)));

  return x <= p ? p : x <= 2 * p ? 2 * p : x <= 5 * p ? 5 * p : 10 * p;
}

void kope_bench_svg_curves(kope_buf *b, const json_t *doc)
{
  const double L = 60, W = 600, T = 20, H = 260;
  json_t *c, *v;
  size_t k, i, len;
  double ymax, t, step;

  curve_range(doc, &len, &ymax);
  ymax *= 1.1;
  kope_buf_printf(b, "<svg class='chart curves' xmlns='http://www.w3.org/2000/svg' width='820' "
                  "height='%.0f' viewBox='0 0 820 %.0f' role='img' aria-label='incumbent speedup "
                  "vs evaluations'>\n", T + H + 40, T + H + 40);
  step = nice_step(ymax / 6);
  for (t = 0; t <= ymax; t += step)
    kope_buf_printf(b, "<line x1='%.0f' y1='%.1f' x2='%.0f' y2='%.1f' class='grid'/><text "
                    "x='%.0f' y='%.1f' class='tick' text-anchor='end'>%gx</text>\n", L,
                    T + H - t / ymax * H, L + W, T + H - t / ymax * H, L - 4,
                    T + H - t / ymax * H + 4, t);
  for (i = 0; i < len; i++)
    kope_buf_printf(b, "<text x='%.1f' y='%.0f' class='tick'>%zu</text>\n",
                    L + (len > 1 ? (double)i / (double)(len - 1) * W : 0), T + H + 14, i);
  kope_buf_printf(b, "<text x='%.0f' y='%.0f' class='lbl'>evaluations</text>\n", L + W / 2,
                  T + H + 30);
  kope_buf_printf(b, "<line x1='%.0f' y1='%.1f' x2='%.0f' y2='%.1f' class='parity'/>\n", L,
                  T + H - H / ymax, L + W, T + H - H / ymax);
  json_array_foreach(configs(doc), k, c) {
    json_t *cv = json_object_get(cfg_metrics(doc, kope_bj_str(c, "name")), "curve");
    kope_buf_printf(b, "<polyline class='curve' fill='none' stroke='%s' stroke-width='2' points='",
                    kope_bench_colour(k));
    json_array_foreach(cv, i, v)
      kope_buf_printf(b, "%.1f,%.1f ", L + (len > 1 ? (double)i / (double)(len - 1) * W : 0),
                      T + H - json_number_value(v) / ymax * H);
    kope_buf_printf(b, "'/>\n<text x='%.0f' y='%.0f' class='lbl' style='fill:%s'>", L + W + 10,
                    T + 14 + 16 * (double)k, kope_bench_colour(k));
    kope_bench_esc(b, kope_bj_str(c, "name"));
    kope_buf_puts(b, "</text>\n");
  }
  kope_buf_puts(b, "</svg>\n");
}

/* ---- tokens ---- */

static void token_chart(kope_buf *b, const json_t *doc, const char *key, const char *title)
{
  json_t *c;
  size_t k, n = json_array_size(configs(doc));
  double max = 1, v;

  json_array_foreach(configs(doc), k, c)
    max = fmax(max, kope_bj_num(cfg_metrics(doc, kope_bj_str(c, "name")), key, 0));
  kope_buf_printf(b, "<svg class='chart tokens' xmlns='http://www.w3.org/2000/svg' width='820' "
                  "height='%.0f' viewBox='0 0 820 %.0f' role='img' aria-label='%s'>\n"
                  "<text x='0' y='14' class='lbl'>%s</text>\n", 30 + 18.0 * (double)n,
                  30 + 18.0 * (double)n, title, title);
  json_array_foreach(configs(doc), k, c) {
    v = kope_bj_num(cfg_metrics(doc, kope_bj_str(c, "name")), key, 0);
    kope_buf_printf(b, "<text x='%.0f' y='%.0f' class='op'>", BAR_LEFT - 6, 34 + 18.0 * (double)k);
    kope_bench_esc(b, kope_bj_str(c, "name"));
    kope_buf_printf(b, "</text><rect x='%.0f' y='%.0f' width='%.1f' height='14' fill='%s'/>"
                    "<text x='%.1f' y='%.0f' class='tick'>%.0f</text>\n", BAR_LEFT,
                    22 + 18.0 * (double)k, v / max * 560 + 0.5, kope_bench_colour(k),
                    BAR_LEFT + v / max * 560 + 6, 34 + 18.0 * (double)k, v);
  }
  kope_buf_puts(b, "</svg>\n");
}

void kope_bench_svg_tokens(kope_buf *b, const json_t *doc)
{
  token_chart(b, doc, "context_tokens", "context tokens shown to the policy (sum over steps)");
  json_t *c;
  size_t k;
  double sum = 0;

  json_array_foreach(configs(doc), k, c)
    sum += kope_bj_num(cfg_metrics(doc, kope_bj_str(c, "name")), "tokens", 0);
  if (sum > 0)
    token_chart(b, doc, "tokens", "LLM tokens (prompt + reply, as the provider reported)");
  else
    kope_buf_puts(b, "<p>No LLM tokens: no configuration here used an LLM.</p>\n");
}

/* ---- the experience forest ---- */

typedef struct fnode {
  json_t *j;
  int parent, depth;
  double x;
} fnode;

static double layout(fnode *f, size_t n, int i, int depth, double *next)
{
  double sum = 0;
  size_t k;
  int nk = 0;

  f[i].depth = depth;
  for (k = 0; k < n; k++)
    if (f[k].parent == i) {
      sum += layout(f, n, (int)k, depth + 1, next);
      nk++;
    }
  f[i].x = nk ? sum / nk : (*next)++;
  return f[i].x;
}

static const char *label_colour(const json_t *n)
{
  const char *l = kope_bj_str(n, "label");

  if (!kope_bj_bool(n, "correct"))
    return "#9a9a9a";
  return !strcmp(l, "effective") ? "#2e9e5b" : !strcmp(l, "partial") ? "#1b6ec2"
       : !strcmp(l, "ineffective") ? "#d9822b" : "#c0392b";
}

static json_t *forest_of(const json_t *doc, const char *op)
{
  json_t *run;
  size_t i;

  json_array_foreach(json_object_get(doc, "runs"), i, run)
    if ((!op || !strcmp(kope_bj_str(run, "op"), op)) && json_array_size(json_object_get(run, "forest")))
      return run;
  return NULL;
}

static void short_text(kope_buf *b, const char *s, size_t max)
{
  char *t;

  if (strlen(s) <= max) {
    kope_bench_esc(b, s);
    return;
  }
  t = kope_strndup(s, max - 1);
  kope_bench_esc(b, t);
  kope_buf_puts(b, "…");
  free(t);
}

static void draw_forest(kope_buf *b, fnode *f, size_t n, double width, int maxd)
{
  const double SX = 130, SY = 90;
  size_t i;

  kope_buf_printf(b, "<svg class='chart forest' xmlns='http://www.w3.org/2000/svg' width='%.0f' "
                  "height='%.0f' viewBox='0 0 %.0f %.0f' role='img' aria-label='experience "
                  "forest'>\n", width * SX + 20, (maxd + 1) * SY + 20, width * SX + 20,
                  (maxd + 1) * SY + 20);
  for (i = 0; i < n; i++)
    if (f[i].parent >= 0)
      kope_buf_printf(b, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' class='edge'/>"
                      "<text x='%.1f' y='%.1f' class='tick'>r=%.2f</text>\n",
                      f[f[i].parent].x * SX + 75, f[f[i].parent].depth * SY + 52,
                      f[i].x * SX + 75, f[i].depth * SY + 20, f[i].x * SX + 78,
                      f[i].depth * SY + 14, kope_bj_num(f[i].j, "r", 0));
  for (i = 0; i < n; i++) {
    json_t *j = f[i].j;
    kope_buf_printf(b, "<g class='node'><rect x='%.1f' y='%.1f' width='120' height='32' rx='5' "
                    "fill='%s'/><text x='%.1f' y='%.1f' class='nl'>", f[i].x * SX + 15,
                    f[i].depth * SY + 20, label_colour(j), f[i].x * SX + 75, f[i].depth * SY + 33);
    short_text(b, kope_bj_str(j, "thought"), 22);
    kope_buf_printf(b, "</text><text x='%.1f' y='%.1f' class='nl'>", f[i].x * SX + 75,
                    f[i].depth * SY + 47);
    if (kope_bj_bool(j, "correct"))
      kope_buf_printf(b, "%.2fx · %s", kope_bj_num(j, "speedup", 0), kope_bj_str(j, "label"));
    else if (strcmp(kope_bj_str(j, "verdict"), "correct"))
      kope_bench_esc(b, kope_bj_str(j, "verdict"));
    else
      kope_buf_puts(b, "not counted correct");
    kope_buf_puts(b, "</text><title>");
    kope_bench_esc(b, kope_bj_str(j, "thought"));
    kope_buf_printf(b, ", step %d, case %d: d=%.2f</title></g>\n",
                    (int)kope_bj_num(j, "step", 0), (int)kope_bj_num(j, "id", 0),
                    kope_bj_num(j, "d", 0));
  }
  kope_buf_puts(b, "</svg>\n");
}

int kope_bench_svg_forest(kope_buf *b, const json_t *doc, const char *op)
{
  json_t *run = forest_of(doc, op), *nodes = json_object_get(run, "forest");
  size_t n = json_array_size(nodes), i, k;
  fnode *f;
  double next = 0;
  int maxd = 0;

  if (!n)
    return 0;
  if (!(f = calloc(n, sizeof *f)))
    return KOPE_ENOMEM;
  for (i = 0; i < n; i++) {
    f[i].j = json_array_get(nodes, i);
    f[i].parent = -1;
    for (k = 0; k < n; k++)
      if (k != i && kope_bj_num(json_array_get(nodes, k), "id", 0) == kope_bj_num(f[i].j, "prev", -1))
        f[i].parent = (int)k;
  }
  for (i = 0; i < n; i++)
    if (f[i].parent < 0)
      layout(f, n, (int)i, 0, &next);
  for (i = 0; i < n; i++)
    maxd = f[i].depth > maxd ? f[i].depth : maxd;
  kope_buf_printf(b, "<p class='caption'>Operator <b>");
  kope_bench_esc(b, kope_bj_str(run, "op"));
  kope_buf_puts(b, "</b>, configuration <b>");
  kope_bench_esc(b, kope_bj_str(run, "config"));
  kope_buf_printf(b, "</b>, repeat %d, session %d: each box is one attempt (thought id; speedup "
                  "vs reference and outcome label, or the verdict); an edge goes from the state an "
                  "attempt started from, labelled with the step ratio r.</p>\n",
                  (int)kope_bj_num(run, "repeat", 0), (int)kope_bj_num(run, "session", 0));
  draw_forest(b, f, n, next, maxd);
  free(f);
  return 1;
}
