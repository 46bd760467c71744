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

static void spec_text(const kope_op *op, kope_buf *b)
{
  char *proto = kope_op_prototype(op);
  size_t i;

  kope_buf_printf(b, "Operator %s (category %s, level %d).\n%s\n\nC signature:\n%s\n\nArguments:\n",
                  kope_op_name(op), kope_op_category(op), kope_op_level(op),
                  kope_op_description(op), proto);
  for (i = 0; i < kope_op_nargs(op); i++) {
    const kope_arg *a = kope_op_arg(op, i);
    size_t d;
    kope_buf_printf(b, "- %s: %s %s", a->name, kope_role_name(a->role), kope_dtype_name(a->dtype));
    for (d = 0; d < (size_t)a->rank; d++)
      kope_buf_printf(b, "%s%s", d ? " x " : " [", a->shape[d]);
    kope_buf_puts(b, a->rank ? "]" : "");
    if (a->role == KOPE_ROLE_OUT)
      kope_buf_printf(b, " (tolerance rtol %g, atol %g, nrtol %g)", a->rtol, a->atol, a->nrtol);
    kope_buf_puts(b, "\n");
  }
  kope_buf_puts(b, "\nCases (each checked on fresh random inputs, then timed):\n");
  for (i = 0; i < kope_op_ncases(op); i++) {
    char *label = kope_op_case_label(op, i);
    kope_buf_printf(b, "- %s\n", label);
    free(label);
  }
  kope_buf_puts(b, "\nRules: write every output element (outputs start as garbage); never "
                   "write inputs; no I/O, threads other than OpenMP, or system calls; "
                   "every case must pass before timing.\n");
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
  kope_buf_puts(b, "Knobs (#define NAME VALUE // @knob ...):\n");
  for (i = 0; i < n; i++) {
    kope_buf_printf(b, "- %s = %s (layer %s; values", k[i].name, k[i].value, k[i].layer);
    for (v = 0; v < k[i].nvalues; v++)
      kope_buf_printf(b, "%s%s", v ? "," : " ", k[i].values[v]);
    kope_buf_printf(b, "): %s\n", k[i].desc);
  }
  free(k);
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
    kope_buf_puts(b, ".\n");
  }
  knobs_text(s->incumbent, b);
  kope_buf_printf(b, "\n```c\n%s%s```\n", s->incumbent,
                  *s->incumbent && s->incumbent[strlen(s->incumbent) - 1] == '\n' ? "" : "\n");
}

static void add_hot_text(kope_ctx *c, int kind, const char *title, kope_buf *b)
{
  kope_ctx_push(c, KOPE_TIER_HOT, kind, title, b->data ? b->data : "");
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
    add_hot_text(c, KOPE_CTX_FEEDBACK, "Latest feedback", &b);
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
           r->label >= 0 ? kope_mem_label_name(r->label) : r->verdict ? r->verdict : "",
           other ? ", on target " : "", other ? r->target : "");
  it = kope_ctx_push(c, tier, kind, title, r->summary);
  kope_ctx_set(&it->target, r->target);
  it->other_target = other;
  it->case_id = r->case_id ? r->case_id : r->id;
  kope_ctx_set(&it->op, r->op);
  kope_ctx_set(&it->category, category);
  kope_ctx_set(&it->layer, r->layer);
  kope_ctx_set(&it->thought_id, r->thought_id);
  kope_ctx_set(&it->verdict, r->verdict);
  it->label = r->label;
  it->correct = r->correct;
  it->speedup = r->speedup;
  it->step_ratio = r->step_ratio;
  it->d_score = r->d_score;
  it->confidence = r->confidence;
  it->rank = r->rank;
  it->relevance = rel;
  kope_ctx_admit(c);
}

static void push_digest(kope_ctx *c, int tier, const kope_mem_digest *d, double rel)
{
  char title[200];
  kope_ctx_item *it;

  snprintf(title, sizeof title, "Digest: %s on %s/%s", *d->thought_id ? d->thought_id : d->layer,
           d->target, d->category);
  it = kope_ctx_push(c, tier, KOPE_CTX_DIGEST, title, d->text);
  kope_ctx_set(&it->category, d->category);
  kope_ctx_set(&it->layer, d->layer);
  kope_ctx_set(&it->thought_id, d->thought_id);
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

static char **list_cards(const char *dir, size_t *n)
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
    if (*n == cap)
      v = realloc(v, (cap = cap ? 2 * cap : 8) * sizeof *v);
    v[(*n)++] = kope_path_join(dir, e->d_name);
  }
  if (d)
    closedir(d);
  if (*n)
    qsort(v, *n, sizeof *v, name_cmp);
  return v;
}

static void push_card(kope_ctx *c, const char *path, const char *text)
{
  const char *nl = strchr(text, '\n');
  char title[160];

  snprintf(title, sizeof title, "%.*s", (int)(nl ? nl - text : (long)strlen(text)),
           text[0] == '#' ? text + 2 : text);
  (void)path;
  kope_ctx_push(c, KOPE_TIER_COLD, KOPE_CTX_CARD, title, text);
  kope_ctx_admit(c);
}

/* Cards that mention the operator's category or name come first. */
int kope_ctx_add_cards(kope_ctx *c, kope_err *err)
{
  char *dir = cards_dir(c->s), **paths;
  size_t n, i;
  int pass;

  (void)err;
  paths = list_cards(dir, &n);
  for (pass = 0; pass < 2; pass++)
    for (i = 0; i < n; i++) {
      char *text = kope_file_read(paths[i], NULL, NULL);
      int hit = text && (strstr(text, kope_op_category(c->s->op)) ||
                         strstr(text, kope_op_name(c->s->op)));
      if (text && hit == !pass)
        push_card(c, paths[i], text);
      free(text);
    }
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
  kope_ctx_push(c, KOPE_TIER_WARM, KOPE_CTX_HISTORY, title, b.data ? b.data : "");
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
