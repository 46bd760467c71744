/*
 * What each context tier holds. Hot: the operator specification, the
 * target description, the incumbent (measurements, knobs, source) and the
 * latest feedback. Warm: graph-ranked Cases of this category on this
 * target (retrieval buckets them by label and orders by d(v)·c_v), fixes
 * for the latest error, digests of this category. Cold: knowledge cards
 * (the .md files under targets/<target>), Cases and digests of other categories,
 * and this category's Cases from other targets (marked as such). Passive:
 * the session history (with full sources) and every record, in arrival
 * order.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ctx/ctx_int.h"

#define KOPE_CTX_FEEDBACK_MAX 4000   /* characters of feedback kept hot */
#define KOPE_CTX_WARM_CASES 24
#define KOPE_CTX_COLD_CASES 12
#define KOPE_CTX_PASSIVE_CASES 400

/* ---- hot ---- */

static void dist_text(const kope_arg *a, kope_buf *b)
{
  if (a->role != KOPE_ROLE_IN || a->dtype == KOPE_I32 || a->dtype == KOPE_I64) {
    if (a->role == KOPE_ROLE_IN)
      kope_buf_printf(b, ", integers in [%s, %s]", a->lo_expr ? a->lo_expr : "?",
                      a->hi_expr ? a->hi_expr : "?");
    return;
  }
  if (a->dist == KOPE_DIST_UNIFORM)
    kope_buf_printf(b, ", uniform in [%g, %g]", a->a, a->b);
  else if (a->dist == KOPE_DIST_INT)
    kope_buf_printf(b, ", integers in [%s, %s]", a->lo_expr ? a->lo_expr : "?",
                    a->hi_expr ? a->hi_expr : "?");
  else
    kope_buf_printf(b, ", normal(mean %g, std %g)", a->a, a->b);
  if (a->vary)
    kope_buf_puts(b, "; per seed also mixed-scale (x2^k, k in -6..6), x16 and x1/16 variants");
}

static void args_text(const kope_op *op, kope_buf *b)
{
  size_t i;
  int d;

  kope_buf_puts(b, "\n\nArguments:\n");
  for (i = 0; i < kope_op_nargs(op); i++) {
    const kope_arg *a = kope_op_arg(op, i);
    kope_buf_printf(b, "- %s: %s %s", a->name, kope_role_name(a->role), kope_dtype_name(a->dtype));
    for (d = 0; d < a->rank; d++)
      kope_buf_printf(b, "%s%s", d ? " x " : " [", a->shape[d]);
    kope_buf_puts(b, a->rank ? "]" : "");
    dist_text(a, b);
    if (a->role == KOPE_ROLE_OUT)
      kope_buf_printf(b, " (tolerance rtol %g, atol %g, nrtol %g)", a->rtol, a->atol, a->nrtol);
    kope_buf_puts(b, "\n");
  }
  kope_buf_puts(b, "An output element passes when |got - exp| <= atol + rtol*|exp| + "
                   "nrtol*rms(exp) (rms over the whole output of the case); NaN and Inf "
                   "positions must match the reference exactly; integer outputs must be equal.\n");
}

/* The bytes of one buffer set of case c (every input and output buffer),
 * 0 when the case does not bind. */
static double case_set_bytes(const kope_op *op, size_t c)
{
  kope_case_bind cb;
  kope_err err;
  double bytes = 0;
  size_t i;

  if (kope_op_bind(op, c, &cb, &err) != KOPE_OK)
    return 0;
  for (i = 0; i < kope_op_nargs(op); i++) {
    const kope_arg *a = kope_op_arg(op, i);
    if (a->role == KOPE_ROLE_IN || a->role == KOPE_ROLE_OUT)
      bytes += (double)cb.count[i] * (double)kope_dtype_size(a->dtype);
  }
  return bytes;
}

static void set_text(const kope_op *op, size_t c, kope_buf *b)
{
  double bytes = case_set_bytes(op, c);

  if (bytes >= 1 << 20)
    kope_buf_printf(b, "; one buffer set (inputs + outputs) %.1f MiB", bytes / (1 << 20));
  else if (bytes > 0)
    kope_buf_printf(b, "; one buffer set (inputs + outputs) %.1f KiB", bytes / 1024);
}

static void cases_text(const kope_op *op, kope_buf *b)
{
  size_t i, nperf = 0, ncheck = 0;

  for (i = 0; i < kope_op_ncases(op); i++)
    nperf += kope_op_case_timed(op, i) != 0;
  ncheck = kope_op_ncases(op) - nperf;
  kope_buf_printf(b, "\nCases: every case is checked on fresh random inputs; %zu timed and "
                     "scored (perf)%s:\n", nperf, ncheck ? ", the others correctness only (check)" : "");
  for (i = 0; i < kope_op_ncases(op); i++) {
    char *label = kope_op_case_label(op, i);
    const char *src = kope_op_case_source(op, i);
    kope_buf_printf(b, "- case %zu %s %s: %s%s%s", i, kope_op_case_name(op, i), label,
                    kope_op_case_timed(op, i) ? "perf" : "check (correctness only, never timed)",
                    *src ? "; shape from " : "", src);
    if (kope_op_case_timed(op, i))
      set_text(op, i, b);
    kope_buf_puts(b, "\n");
    free(label);
  }
}

static void spec_text(const kope_op *op, kope_buf *b)
{
  char *proto = kope_op_prototype(op);

  kope_buf_printf(b, "Operator %s (category %s, level %d).\n%s\n\nC signature:\n%s",
                  kope_op_name(op), kope_op_category(op), kope_op_level(op),
                  kope_op_description(op), proto);
  args_text(op, b);
  cases_text(op, b);
  kope_buf_puts(b, "\nTiming (perf cases, after every case passed): warmed-up calls in "
                   "batches that rotate over up to 4 buffer sets with different contents (fewer "
                   "when 4 sets of the largest case exceed 512 MiB), so a working set of 4 "
                   "sets must fit a cache level to stay in it between calls; "
                   "the timed sets hold inputs of the distribution stated per argument "
                   "(never its mixed-scale, x16 or x1/16 variants, which only the "
                   "correctness checks use); "
                   "outputs are poisoned (NaN, written by kope's process) once before every "
                   "round, not before every call: within a batch, later calls find the "
                   "outputs an earlier call of the batch wrote, in cache when the sets fit; "
                   "outputs are checked in sampled rounds; s/call is the batch's time over "
                   "its calls less the round trip of an empty command (no checking, no "
                   "poisoning inside it); "
                   "OpenMP threads = all cores, one pinned per CPU (OMP_PROC_BIND=false, "
                   "GOMP_SPINCOUNT=10000: idle threads sleep soon after a region, so "
                   "waking them costs microseconds); candidate, reference and "
                   "incumbent interleaved in rounds; a case's speedup is the median of the "
                   "per-round time ratios with a ~95% confidence interval, the operator's "
                   "the geometric mean over perf cases.\n");
  kope_buf_puts(b, "\nRules: write every output element (outputs start as garbage); never "
                   "write inputs; no I/O, threads other than OpenMP, or system calls; "
                   "no writable static or global variables (no state kept between calls: "
                   "use locals, or malloc'd scratch freed before returning, and const "
                   "tables); every case must pass before timing.\n");
  free(proto);
}

static void knobs_text(const char *src, kope_buf *b)
{
  kope_knob *k = NULL;
  size_t n = 0, i;
  kope_err err;
  int v;

  kope_err_clear(&err);
  if (kope_knobs_parse(src, "incumbent", &k, &n, &err) != KOPE_OK || !n) {
    free(k);
    return;
  }
  kope_buf_puts(b, "Knobs (#define NAME VALUE // @knob ...; kope measures the values as "
                   "written and tries other listed values only in the offline tuner's steps, "
                   "which run between yours in the llm+tuner configuration):\n");
  for (i = 0; i < n; i++) {
    kope_buf_printf(b, "- %s = %s (layer %s; values", k[i].name, k[i].value, k[i].layer);
    for (v = 0; v < k[i].nvalues; v++)
      kope_buf_printf(b, "%s%s", v ? "," : " ", k[i].values[v]);
    kope_buf_printf(b, "): %s\n", k[i].desc);
  }
  free(k);
}

/* The incumbent's own step in this session (promoted, same source). */
static const kope_ctx_step *incumbent_step(const kope_ctx_state *s)
{
  size_t i;

  for (i = s->nhistory; i-- > 0;)
    if (s->history[i].promoted && s->history[i].source && s->incumbent &&
        !strcmp(s->history[i].source, s->incumbent))
      return &s->history[i];
  return NULL;
}

/* A feedback line of a timed case ends with its time per call. */
static int ends_with_per_call(const char *line, size_t len)
{
  static const char tail[] = " s/call";

  return len >= sizeof tail - 1 && !memcmp(line + len - (sizeof tail - 1), tail, sizeof tail - 1);
}

/* The incumbent's per-case times of its timed cases, from its own step's
 * feedback (lines "  case N ...: R x [lo, hi] T s/call"), so a candidate's
 * per-case lines can be read against them. */
static void incumbent_cases_text(const kope_ctx_state *s, kope_buf *b)
{
  const kope_ctx_step *h = incumbent_step(s);
  const char *p, *e;
  int n = 0;

  if (!h || !h->feedback)
    return;
  for (p = h->feedback; *p; p = *e ? e + 1 : e) {
    e = strchr(p, '\n');
    if (!e)
      e = p + strlen(p);
    if (!strncmp(p, "  case ", 7) && ends_with_per_call(p, (size_t)(e - p))) {
      if (!n++)
        kope_buf_printf(b, "Its timed cases at its own step %lld (first measurement, vs the "
                           "reference and, where given, vs the kernel it replaced):\n",
                        (long long)h->step);
      kope_buf_printf(b, "%.*s\n", (int)(e - p), p);
    }
  }
}

static void incumbent_text(const kope_ctx_state *s, kope_buf *b)
{
  if (!s->incumbent_correct)
    kope_buf_puts(b, "No correct kernel yet: this is the starting kernel.\n");
  else {
    kope_buf_printf(b, "Speedup vs reference %.3fx", s->inc_speedup_ref);
    if (s->inc_speedup_vendor > 0)
      kope_buf_printf(b, ", vs vendor library %.3fx", s->inc_speedup_vendor);
    if (s->inc_roofline > 0)
      kope_buf_printf(b, ", roofline fraction %.3f", s->inc_roofline);
    kope_buf_printf(b, " (%s).\n", s->inc_remeasured
                                       ? "from its confirming re-measurement; the feedback of "
                                         "its own step gave the first measurement"
                                       : "first measurement");
    incumbent_cases_text(s, b);
  }
  knobs_text(s->incumbent, b);
  kope_buf_printf(b, "\n```c\n%s%s```\n", s->incumbent,
                  *s->incumbent && s->incumbent[strlen(s->incumbent) - 1] == '\n' ? "" : "\n");
}

#define KOPE_CTX_RECENT 6             /* recent steps listed with their reasons */
/* characters of unpromoted source shown whole: real models' AVX-512
 * kernels with several paths are 12,000-20,000 characters (answerers of
 * 2026-12-04 lost 12,042- and 12,247-character candidates at 12,000) */
#define KOPE_CTX_UNPROMOTED_MAX 20000

static double rule_gain(const kope_ctx_state *s) { return s->min_gain > 0 ? s->min_gain : 0.05; }
static double rule_alpha(const kope_ctx_state *s) { return s->alpha > 0 ? s->alpha : 0.05; }

/* Why a step was or was not promoted, by the rule the agent applies. */
static void reason_text(const kope_ctx_state *s, const kope_ctx_step *h, kope_buf *b)
{
  double g = 1.0 + rule_gain(s);

  if (!h->correct)
    kope_buf_printf(b, "not promoted: verdict %s", h->verdict ? h->verdict : "?");
  else if (h->promoted && h->remeasured == 1)
    kope_buf_printf(b, "PROMOTED: re-measurement confirmed %.3fx [%.3f, %.3f], p %.3g",
                    h->re_speedup, h->re_lo, h->re_hi, h->re_p);
  else if (h->promoted)
    kope_buf_puts(b, "PROMOTED: first correct kernel");
  else if (h->vs_incumbent <= 0)
    kope_buf_puts(b, "not promoted: not timed against the incumbent");
  else if (h->vs_incumbent < g)
    kope_buf_printf(b, "not promoted: gain %.3fx below the required %.2fx", h->vs_incumbent, g);
  else if (h->vs_hi <= 0)
    kope_buf_puts(b, "not promoted (its CI and p were not kept across a resume)");
  else if (h->vs_lo <= 1.0)
    kope_buf_printf(b, "not promoted: CI lower bound %.3f not above 1", h->vs_lo);
  else if (h->p_value >= rule_alpha(s))
    kope_buf_printf(b, "not promoted: sign-test p %.3g not below %.3g", h->p_value, rule_alpha(s));
  else if (h->remeasured == -1)
    kope_buf_printf(b, "not promoted: the re-measurement gave %.3fx [%.3f, %.3f], p %.3g, "
                       "which does not pass the rule",
                    h->re_speedup, h->re_lo, h->re_hi, h->re_p);
  else
    kope_buf_puts(b, "not promoted: a faster candidate of the same batch was chosen");
}

/* A confidence interval wider than this ratio (hi/lo) is flagged noisy. */
#define KOPE_CTX_NOISY 1.5

static int noisy(const kope_ctx_step *h)
{
  return h->correct && h->vs_lo > 0 && h->vs_hi / h->vs_lo > KOPE_CTX_NOISY;
}

static void recent_text(const kope_ctx_state *s, kope_buf *b)
{
  size_t i = s->nhistory > KOPE_CTX_RECENT ? s->nhistory - KOPE_CTX_RECENT : 0;

  kope_buf_printf(b, "Rule: promoted only when correct, speedup over the incumbent >= %.2fx, "
                     "CI lower bound > 1, sign-test p < %.3g, and a re-measurement agrees.\n",
                  1.0 + rule_gain(s), rule_alpha(s));
  for (; i < s->nhistory; i++) {
    const kope_ctx_step *h = &s->history[i];
    kope_buf_printf(b, "- step %lld %s (%s): ", (long long)h->step,
                    h->thought_id && *h->thought_id ? h->thought_id : "-",
                    h->title && *h->title ? h->title : "untitled");
    if (h->correct && h->vs_incumbent > 0 && h->vs_hi > 0)
      kope_buf_printf(b, "%.3fx vs its incumbent [%.3f, %.3f], p %.3g, %.3fx vs reference; ",
                      h->vs_incumbent, h->vs_lo, h->vs_hi, h->p_value, h->speedup_ref);
    else if (h->correct && h->vs_incumbent > 0)
      kope_buf_printf(b, "%.3fx vs its incumbent, %.3fx vs reference; ", h->vs_incumbent,
                      h->speedup_ref);
    reason_text(s, h, b);
    if (noisy(h))
      kope_buf_printf(b, "; WARNING: very noisy measurement (CI spans %.2fx, over %.1fx): "
                         "the figure is unreliable, not a property of the code",
                      h->vs_hi / h->vs_lo, KOPE_CTX_NOISY);
    kope_buf_puts(b, "\n");
  }
}

/* The fastest correct, unpromoted candidate timed against the current
 * incumbent (steps after the last promotion), when faster than it. */
static const kope_ctx_step *best_unpromoted(const kope_ctx_state *s)
{
  const kope_ctx_step *best = NULL;
  size_t i;

  for (i = s->nhistory; i-- > 0;) {
    const kope_ctx_step *h = &s->history[i];
    if (h->promoted)
      break;
    if (h->correct && h->source && h->vs_incumbent > 1.0 &&
        (!best || h->vs_incumbent > best->vs_incumbent))
      best = h;
  }
  return best;
}

/* A source too long to show whole is shown as its changes against the
 * incumbent, when those fit. */
static void unpromoted_diff(const kope_ctx_state *s, const kope_ctx_step *h, size_t len,
                            kope_buf *b)
{
  kope_buf d;

  kope_buf_init(&d, 0);
  if (s->incumbent && !kope_ctx_line_diff(s->incumbent, h->source, &d) && d.len &&
      d.len <= KOPE_CTX_UNPROMOTED_MAX)
    kope_buf_printf(b, "Its source (%zu characters) as a line diff against the incumbent's "
                       "code above ('-' incumbent only, '+' this candidate only, two lines of "
                       "context):\n\n```diff\n%s```\n", len, d.data);
  else
    kope_buf_printf(b, "(source of %zu characters, over the %d shown here, and its diff "
                       "against the incumbent too long; left out)\n", len,
                    KOPE_CTX_UNPROMOTED_MAX);
  kope_buf_release(&d);
}

static int best_unpromoted_text(const kope_ctx_state *s, kope_buf *b)
{
  const kope_ctx_step *h = best_unpromoted(s);
  size_t len;

  if (!h)
    return 0;
  len = strlen(h->source);
  kope_buf_printf(b, "Step %lld (%s): correct, %.3fx vs the current incumbent [%.3f, %.3f], "
                     "p %.3g; ",
                  (long long)h->step, h->title ? h->title : "", h->vs_incumbent, h->vs_lo,
                  h->vs_hi, h->p_value);
  reason_text(s, h, b);
  kope_buf_puts(b, ".\n");
  if (len > KOPE_CTX_UNPROMOTED_MAX) {
    unpromoted_diff(s, h, len, b);
    return 1;
  }
  kope_buf_printf(b, "\n```c\n%s%s```\n", h->source,
                  len && h->source[len - 1] == '\n' ? "" : "\n");
  return 1;
}

static void add_hot_text(kope_ctx *c, int kind, const char *title, kope_buf *b)
{
  if (kope_ctx_push(c, KOPE_TIER_HOT, kind, title, b->data ? b->data : ""))
    kope_ctx_admit(c);
  kope_buf_reset(b);
}

void kope_ctx_add_hot(kope_ctx *c)
{
  const kope_ctx_state *s = c->s;
  kope_buf b;
  char title[96];

  kope_buf_init(&b, 0);
  spec_text(s->op, &b);
  add_hot_text(c, KOPE_CTX_SPEC, "Operator specification", &b);
  kope_buf_puts(&b, s->target_text ? s->target_text : s->target);
  add_hot_text(c, KOPE_CTX_TARGET, "Target", &b);
  incumbent_text(s, &b);
  snprintf(title, sizeof title, "Incumbent kernel%s", s->inc_case_id ? "" : " (seed)");
  add_hot_text(c, KOPE_CTX_INCUMBENT, title, &b);
  if (s->feedback && *s->feedback) {
    size_t len = strlen(s->feedback);
    if (len > KOPE_CTX_FEEDBACK_MAX)
      kope_buf_printf(&b, "%.*s\n[... %zu more characters of feedback cut]\n",
                      KOPE_CTX_FEEDBACK_MAX, s->feedback, len - KOPE_CTX_FEEDBACK_MAX);
    else
      kope_buf_puts(&b, s->feedback);
    add_hot_text(c, KOPE_CTX_FEEDBACK, "Latest feedback (first measurement of the last candidate)",
                 &b);
  }
  if (c->mode == KOPE_CTX_ACTIVE && s->nhistory) {
    recent_text(s, &b);
    add_hot_text(c, KOPE_CTX_FEEDBACK, "Recent candidates and why each was or was not promoted",
                 &b);
    if (best_unpromoted_text(s, &b))
      add_hot_text(c, KOPE_CTX_FEEDBACK, "Best recent candidate that was not promoted", &b);
  }
  kope_buf_release(&b);
}

/* ---- experience ---- */

static int have_case(const kope_ctx *c, int64_t id)
{
  size_t i;

  for (i = 0; i < c->n; i++)
    if ((c->v[i].kind == KOPE_CTX_CASE || c->v[i].kind == KOPE_CTX_FIX) && c->v[i].case_id == id)
      return 1;
  return 0;
}

static void push_case(kope_ctx *c, int tier, int kind, const kope_mem_rec *r, double rel,
                      const char *category)
{
  char title[160];
  kope_ctx_item *it;

  int other = r->target && c->s->target && strcmp(r->target, c->s->target) != 0;

  snprintf(title, sizeof title, "%s #%lld (%s, %s%s%s)", kind == KOPE_CTX_FIX ? "Fix" : "Case",
           (long long)r->case_id, r->op ? r->op : "?",
           r->score.label >= 0 ? kope_mem_label_name(r->score.label) : r->verdict ? r->verdict : "",
           other ? ", on target " : "", other ? r->target : "");
  if (!(it = kope_ctx_push(c, tier, kind, title, r->summary)))
    return;   /* out of memory: c->nomem fails the build */
  kope_ctx_set(c, &it->target, r->target);
  it->other_target = other;
  it->case_id = r->case_id ? r->case_id : r->id;
  kope_ctx_set(c, &it->op, r->op);
  kope_ctx_set(c, &it->category, category);
  kope_ctx_set(c, &it->layer, r->layer);
  kope_ctx_set(c, &it->thought_id, r->thought_id);
  kope_ctx_set(c, &it->verdict, r->verdict);
  it->score = r->score;
  it->relevance = rel;
  kope_ctx_admit(c);
}

static void push_digest(kope_ctx *c, int tier, const kope_mem_digest *d, double rel)
{
  char title[200];
  kope_ctx_item *it;

  snprintf(title, sizeof title, "Digest: %s on %s/%s", *d->thought_id ? d->thought_id : d->layer,
           d->target, d->category);
  if (!(it = kope_ctx_push(c, tier, KOPE_CTX_DIGEST, title, d->text)))
    return;   /* out of memory: c->nomem fails the build */
  kope_ctx_set(c, &it->category, d->category);
  kope_ctx_set(c, &it->layer, d->layer);
  kope_ctx_set(c, &it->thought_id, d->thought_id);
  it->attempts = d->attempts;
  it->n_correct = d->n_correct;
  it->n_effective = d->n_label[KOPE_LABEL_EFFECTIVE];
  it->median_ratio = d->median_ratio;
  it->relevance = rel;
  kope_ctx_admit(c);
}

static int add_cases(kope_ctx *c, kope_db *db, int tier, const char *category, size_t k,
                     kope_err *err)
{
  const kope_ctx_state *s = c->s;
  kope_mem_state ms = {kope_op_name(s->op), kope_op_category(s->op), s->target, s->hw,
                       kope_op_description(s->op), s->feedback};
  kope_mem_filter f = {0};
  kope_mem_recs recs;
  size_t i;
  int rc;

  f.category = category;
  f.target = s->target;
  f.max_digests = -1;
  kope_mem_recs_init(&recs);
  rc = kope_mem_retrieve(db, &ms, &f, k, &recs, err);
  for (i = 0; rc == KOPE_OK && i < recs.n; i++) {
    const kope_mem_rec *r = &recs.v[i];
    int same_op = r->op && !strcmp(r->op, kope_op_name(s->op));
    if (r->kind != KOPE_MEM_REC_CASE || have_case(c, r->case_id ? r->case_id : r->id))
      continue;
    if (!category && same_op)
      continue;   /* cold: other operators' experience only */
    push_case(c, tier, KOPE_CTX_CASE, r,
              same_op ? 1.0 : (category && (r->match & KOPE_MEM_BY_FILTER)) ? 0.6 : 0.3,
              category && (r->match & KOPE_MEM_BY_FILTER) ? category : "");
  }
  kope_mem_recs_release(&recs);
  return rc;
}

static int add_fixes(kope_ctx *c, kope_db *db, kope_err *err)
{
  kope_mem_filter f = {0};
  kope_mem_recs recs;
  size_t i;
  int rc;

  if (!c->s->feedback || !strstr(c->s->feedback, "verdict:") ||
      strstr(c->s->feedback, "verdict: correct"))
    return KOPE_OK;
  f.target = c->s->target;
  kope_mem_recs_init(&recs);
  rc = kope_mem_fixes(db, c->s->feedback, &f, 3, &recs, err);
  for (i = 0; rc == KOPE_OK && i < recs.n; i++)
    if (!have_case(c, recs.v[i].case_id))
      push_case(c, KOPE_TIER_WARM, KOPE_CTX_FIX, &recs.v[i], 0.8, "");
  kope_mem_recs_release(&recs);
  return rc;
}

/* Digests of this category (warm) or of the others (cold). */
static int add_digests(kope_ctx *c, kope_db *db, int tier, size_t max, kope_err *err)
{
  const char *cat = kope_op_category(c->s->op);
  kope_mem_filter f = {0};
  kope_mem_digest *d = NULL;
  size_t n = 0, i, added = 0;
  int rc;

  f.target = c->s->target;
  f.category = tier == KOPE_TIER_WARM ? cat : NULL;
  if ((rc = kope_mem_digest_list(db, &f, &d, &n, err)) != KOPE_OK)
    return rc;
  for (i = 0; i < n && added < max; i++) {
    if ((tier == KOPE_TIER_COLD && !strcmp(d[i].category, cat)) ||
        !strncmp(d[i].thought_id, "start.", 6))
      continue;   /* start.* is the starting kernel, not a lesson */
    push_digest(c, tier, &d[i], tier == KOPE_TIER_WARM ? 0.6 : 0.3);
    added++;
  }
  kope_mem_digests_free(d, n);
  return KOPE_OK;
}

int kope_ctx_add_warm(kope_ctx *c, kope_db *db, kope_err *err)
{
  int rc;

  if ((rc = add_fixes(c, db, err)) ||
      (rc = add_cases(c, db, KOPE_TIER_WARM, kope_op_category(c->s->op), KOPE_CTX_WARM_CASES,
                      err)))
    return rc;
  return add_digests(c, db, KOPE_TIER_WARM, 12, err);
}

/* Cold: this category's experience on other targets (the warm tier and
 * the cold cases above hold this target's only). Another language and
 * machine: the record says which target it comes from, and counts less. */
static int add_other_targets(kope_ctx *c, kope_db *db, size_t k, kope_err *err)
{
  const kope_ctx_state *s = c->s;
  kope_mem_state ms = {kope_op_name(s->op), kope_op_category(s->op), NULL, NULL,
                       kope_op_description(s->op), NULL};
  kope_mem_filter f = {0};
  kope_mem_recs recs;
  size_t i, added = 0;
  int rc;

  if (!s->target)
    return KOPE_OK;
  f.category = kope_op_category(s->op);
  f.max_digests = -1;
  kope_mem_recs_init(&recs);
  rc = kope_mem_retrieve(db, &ms, &f, 4 * k, &recs, err);
  for (i = 0; rc == KOPE_OK && i < recs.n && added < k; i++) {
    const kope_mem_rec *r = &recs.v[i];
    int same_op = r->op && !strcmp(r->op, kope_op_name(s->op));
    if (r->kind != KOPE_MEM_REC_CASE || !r->target || !strcmp(r->target, s->target) ||
        have_case(c, r->case_id ? r->case_id : r->id))
      continue;
    push_case(c, KOPE_TIER_COLD, KOPE_CTX_CASE, r, same_op ? 0.5 : 0.25, f.category);
    added++;
  }
  kope_mem_recs_release(&recs);
  return rc;
}

int kope_ctx_add_cold(kope_ctx *c, kope_db *db, kope_err *err)
{
  int rc;

  if ((rc = kope_ctx_add_cards(c, err)) ||
      (rc = add_cases(c, db, KOPE_TIER_COLD, NULL, KOPE_CTX_COLD_CASES, err)) ||
      (rc = add_other_targets(c, db, KOPE_CTX_COLD_CASES, err)))
    return rc;
  return add_digests(c, db, KOPE_TIER_COLD, 8, err);
}

/* ---- knowledge cards ---- */

static int name_cmp(const void *a, const void *b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *cards_dir(const kope_ctx_state *s)
{
  const char *env = getenv("KOPE_TARGETS");

  if (s->cards_dir)
    return kope_strdup(s->cards_dir);
  if (env && *env)
    return kope_sprintf("%s/%s", env, s->target);
  return kope_sprintf("%s/targets/%s", KOPE_SOURCE_DIR, s->target);
}

/* The card files in dir, sorted (*n of them; caller frees). Out of memory:
 * the cards listed so far, and *nomem set. */
static char **list_cards(const char *dir, size_t *n, int *nomem)
{
  DIR *d = opendir(dir);
  struct dirent *e;
  char **v = NULL;
  size_t cap = 0;

  *n = 0;
  while (d && (e = readdir(d))) {
    size_t len = strlen(e->d_name);
    if (len < 4 || strcmp(e->d_name + len - 3, ".md"))
      continue;
    if (kope_grow(&v, &cap, *n + 1, sizeof *v) != KOPE_OK ||
        !(v[*n] = kope_path_join(dir, e->d_name))) {
      *nomem = 1;
      break;
    }
    (*n)++;
  }
  if (d)
    closedir(d);
  if (*n)
    qsort(v, *n, sizeof *v, name_cmp);
  return v;
}

/* A card: "# Title", an optional "Applies to: cat1 cat2 | all" line (no
 * such line: all categories), then the body. */
typedef struct card {
  char title[160];
  const char *body;
  int applies;   /* relevant to the operator's category */
} card;

static int has_word(const char *list, const char *word)
{
  size_t n = strlen(word);
  const char *p = list;

  while ((p = strstr(p, word))) {
    int start = p == list || p[-1] == ' ' || p[-1] == ',';
    int stop = !p[n] || p[n] == ' ' || p[n] == ',' || p[n] == '\n';
    if (start && stop)
      return 1;
    p += n;
  }
  return 0;
}

static void parse_card(const char *text, const char *category, card *k)
{
  const char *nl = strchr(text, '\n'), *head = text;
  const char *line2 = nl ? nl + 1 : text + strlen(text);
  size_t len;

  while (*head == '#' || *head == ' ')
    head++;
  len = (size_t)((nl ? nl : text + strlen(text)) - head);
  snprintf(k->title, sizeof k->title, "%.*s", (int)(len < sizeof k->title ? len : sizeof k->title - 1),
           head);
  k->body = line2;
  k->applies = 1;
  if (!strncmp(line2, "Applies to:", 11)) {
    const char *eol = strchr(line2, '\n');
    char *list = kope_sprintf("%.*s", (int)((eol ? eol : line2 + strlen(line2)) - line2 - 11),
                              line2 + 11);
    k->applies = has_word(list, "all") || has_word(list, category);
    free(list);
    k->body = eol ? eol + 1 : line2 + strlen(line2);
  }
}

/* Every prompt is self-contained (no conversation is kept), so the cards
 * come in full at step 1, every KOPE_CTX_CARD_EVERY steps after and after
 * a step the model did not answer; in between one short reminder names
 * them. */
#define KOPE_CTX_CARD_EVERY 4

/* The last step got no kernel from the model (no reply, truncated, no code
 * block): the prompt that carried the cards in full may never have been
 * read, so they come in full again. */
static int last_step_unanswered(const kope_ctx_state *s)
{
  const kope_ctx_step *h = s->nhistory ? &s->history[s->nhistory - 1] : NULL;

  return h && h->verdict && !strcmp(h->verdict, "no_kernel");
}

static int cards_in_full(const kope_ctx *c)
{
  return c->mode == KOPE_CTX_PASSIVE || c->s->step <= 1 ||
         (c->s->step - 1) % KOPE_CTX_CARD_EVERY == 0 || last_step_unanswered(c->s);
}

/* Cards for the operator's category and the general ones; the others are
 * left out. */
int kope_ctx_add_cards(kope_ctx *c, kope_err *err)
{
  char *dir = cards_dir(c->s), **paths;
  const char *cat = kope_op_category(c->s->op);
  int full = cards_in_full(c);
  kope_buf titles;
  size_t n, i, shown = 0;

  (void)err;
  kope_buf_init(&titles, 0);
  if (dir)
    paths = list_cards(dir, &n, &c->nomem);
  else
    paths = NULL, n = 0, c->nomem = 1;
  for (i = 0; i < n; i++) {
    kope_err re = {0, ""};
    char *text = kope_file_read(paths[i], NULL, &re);
    card k;
    if (re.code == KOPE_ENOMEM)
      c->nomem = 1;   /* an unreadable card is left out; a card out of memory fails */
    if (text) {
      parse_card(text, cat, &k);
      if (k.applies && full) {
        if (kope_ctx_push(c, KOPE_TIER_COLD, KOPE_CTX_CARD, k.title, k.body))
          kope_ctx_admit(c);
      } else if (k.applies)
        kope_buf_printf(&titles, "%s%s", shown++ ? "; " : "", k.title);
    }
    free(text);
  }
  if (shown) {
    long last = c->s->step - 1 - (c->s->step - 1) % KOPE_CTX_CARD_EVERY + 1;
    char *t = kope_sprintf("Shown in full at step %ld and again every %d steps: %s.", last,
                           KOPE_CTX_CARD_EVERY, titles.data);
    if (!t)
      c->nomem = 1;
    else if (kope_ctx_push(c, KOPE_TIER_COLD, KOPE_CTX_CARD, "Knowledge cards (reminder)", t))
      kope_ctx_admit(c);
    free(t);
  }
  kope_buf_release(&titles);
  kope_strv_free(paths, n);
  free(dir);
  return KOPE_OK;
}

/* ---- passive ---- */

static void push_history(kope_ctx *c, const kope_ctx_step *h)
{
  kope_buf b;
  char title[160];

  kope_buf_init(&b, 0);
  snprintf(title, sizeof title, "Step %lld: %s", (long long)h->step,
           h->thought_id ? h->thought_id : "");
  kope_buf_printf(&b, "%s — verdict %s", h->title ? h->title : "", h->verdict ? h->verdict : "");
  if (h->correct && h->speedup_ref > 0)
    kope_buf_printf(&b, ", %.3fx vs reference, %.3fx vs incumbent%s", h->speedup_ref,
                    h->vs_incumbent, h->promoted ? " (promoted)" : "");
  kope_buf_printf(&b, "\n%s\n", h->feedback ? h->feedback : "");
  if (h->source)
    kope_buf_printf(&b, "```c\n%s\n```\n", h->source);
  if (kope_ctx_push(c, KOPE_TIER_WARM, KOPE_CTX_HISTORY, title, b.data ? b.data : ""))
    kope_ctx_admit(c);
  kope_buf_release(&b);
}

int kope_ctx_add_passive(kope_ctx *c, kope_db *db, kope_err *err)
{
  size_t i;
  int rc = KOPE_OK;

  for (i = 0; i < c->s->nhistory; i++)
    push_history(c, &c->s->history[i]);
  if (db && (rc = add_cases(c, db, KOPE_TIER_WARM, kope_op_category(c->s->op),
                            KOPE_CTX_PASSIVE_CASES, err)) == KOPE_OK &&
      (rc = add_cases(c, db, KOPE_TIER_COLD, NULL, KOPE_CTX_PASSIVE_CASES, err)) == KOPE_OK &&
      (rc = add_digests(c, db, KOPE_TIER_WARM, 1000, err)) == KOPE_OK)
    rc = add_digests(c, db, KOPE_TIER_COLD, 1000, err);
  if (rc == KOPE_OK)
    rc = kope_ctx_add_cards(c, err);
  return rc;
}
