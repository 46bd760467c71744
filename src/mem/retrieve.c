/*
 * Graph-aware retrieval (DESIGN.md §1). The engine supplies candidates:
 * the best Cases per label matching exact filters, and bm25 hits of free
 * text in Cases, Journals and digests. Here the pool is merged, text hits
 * are held to the hard filters, Cases are bucketed by outcome label and
 * ordered inside a bucket by d(v) * c_v, and k slots are shared
 * round-robin between the buckets. Also error-driven retrieval (past
 * failures with the same normalized error and what fixed them) and plain
 * full-text search.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "mem/engine.h"

typedef struct pool_item {
  int64_t id;
  unsigned match;
  double text_score;
  kope_mem_case c;
} pool_item;

typedef struct pool {
  pool_item *v;
  size_t n, cap;
} pool;

static pool_item *pool_find_or_add(pool *p, int64_t id)
{
  size_t i;

  for (i = 0; i < p->n; i++)
    if (p->v[i].id == id)
      return &p->v[i];
  if (kope_grow(&p->v, &p->cap, p->n + 1, sizeof *p->v) != KOPE_OK)
    return NULL;
  memset(&p->v[p->n], 0, sizeof p->v[p->n]);
  p->v[p->n].id = id;
  return &p->v[p->n++];
}

static void pool_release(pool *p)
{
  size_t i;

  for (i = 0; i < p->n; i++)
    kope_mem_case_release(&p->v[i].c);
  free(p->v);
}

static int any_exact(const kope_mem_filter *f)
{
  return f->op || f->category || f->layer || f->thought_id || f->target || f->hw ||
         f->label || f->verdict || f->session_id;
}

static int pool_add_filtered(kope_db *db, pool *p, const kope_mem_filter *f, size_t k,
                             kope_err *err)
{
  int l, want = f->label ? kope_mem_label_parse(f->label) : -1, rc = KOPE_OK;

  for (l = 0; l < KOPE_LABEL_COUNT && rc == KOPE_OK; l++) {
    mem_ids ids = {0};
    size_t i;
    if (want >= 0 && l != want)
      continue;
    rc = db->eng->top(db->impl, f, l, k, &ids, err);
    for (i = 0; rc == KOPE_OK && i < ids.n; i++) {
      pool_item *it = pool_find_or_add(p, ids.v[i]);
      if (!it)
        rc = kope_err_set(err, KOPE_EINTERNAL, "out of memory");
      else
        it->match |= KOPE_MEM_BY_FILTER;
    }
    mem_ids_release(&ids);
  }
  return rc;
}

/* Case and Journal hits join the pool as their Case. */
static int pool_add_hits(pool *p, const mem_hit *hits, size_t n, kope_err *err)
{
  size_t i;

  for (i = 0; i < n; i++) {
    pool_item *it;
    if (hits[i].kind == MEM_T_DIGEST || !hits[i].case_id)
      continue;
    if (!(it = pool_find_or_add(p, hits[i].case_id)))
      return kope_err_set(err, KOPE_EINTERNAL, "out of memory");
    if (!(it->match & KOPE_MEM_BY_TEXT) || hits[i].score < it->text_score)
      it->text_score = hits[i].score;
    it->match |= KOPE_MEM_BY_TEXT;
  }
  return KOPE_OK;
}

static int str_differs(const char *want, const char *have)
{
  return want && (!have || strcmp(want, have) != 0);
}

/* Text hits come from any operator, but must honour the hard filters. */
static int passes_hard(const kope_mem_filter *f, const kope_mem_case *c)
{
  if (f->label && kope_mem_label_parse(f->label) != c->in.score.label)
    return 0;
  return !str_differs(f->layer, c->in.layer) && !str_differs(f->target, c->in.target) &&
         !str_differs(f->hw, c->in.hw);
}

static int cmp_rank(const void *a, const void *b)
{
  const pool_item *x = *(pool_item *const *)a, *y = *(pool_item *const *)b;

  if (x->c.in.score.rank != y->c.in.score.rank)
    return x->c.in.score.rank < y->c.in.score.rank ? 1 : -1;
  return (x->id < y->id) - (x->id > y->id);   /* newer first */
}

/* Cases ids[0..n) in full (without code) into c (n entries, released by
 * the caller), in one batch where the engine can. */
static int get_cases(kope_db *db, const int64_t *ids, size_t n, kope_mem_case *c,
                     kope_err *err)
{
  size_t i;
  int rc = KOPE_OK;

  for (i = 0; i < n; i++)
    kope_mem_case_init(&c[i]);
  if (db->eng->case_gets && n > 0)
    return db->eng->case_gets(db->impl, ids, n, c, err);
  for (i = 0; rc == KOPE_OK && i < n; i++)
    rc = kope_mem_case_get(db, ids[i], 0, &c[i], err);
  return rc;
}

/* Emit the chosen Cases, in order: read them in full (the pool holds
 * brief rows). */
static int emit_chosen(kope_db *db, pool_item **sel, size_t n, kope_mem_recs *out,
                       kope_err *err)
{
  kope_mem_case *c = calloc(n + 1, sizeof *c);
  int64_t *ids = calloc(n + 1, sizeof *ids);
  size_t i;
  int rc = c && ids ? KOPE_OK : kope_err_set(err, KOPE_EINTERNAL, "out of memory");

  for (i = 0; rc == KOPE_OK && i < n; i++)
    ids[i] = sel[i]->id;
  if (rc == KOPE_OK)
    rc = get_cases(db, ids, n, c, err);
  for (i = 0; rc == KOPE_OK && i < n; i++) {
    kope_mem_rec *r = mem_recs_push(out);
    if (!r) {
      rc = kope_err_set(err, KOPE_EINTERNAL, "out of memory");
      break;
    }
    mem_rec_from_case(r, &c[i]);
    r->match = sel[i]->match;
    r->text_score = sel[i]->text_score;
  }
  for (i = 0; c && i < n; i++)
    kope_mem_case_release(&c[i]);
  free(c);
  free(ids);
  return rc;
}

static int emit_cases(kope_db *db, pool *p, const kope_mem_filter *f, size_t k,
                      kope_mem_recs *out, kope_err *err)
{
  pool_item **b[KOPE_LABEL_COUNT] = {0};
  size_t nb[KOPE_LABEL_COUNT] = {0}, take[KOPE_LABEL_COUNT] = {0}, i, taken = 0, ntake = 0;
  int l, rc = KOPE_OK, more = 1;

  for (l = 0; l < KOPE_LABEL_COUNT; l++)
    if (!(b[l] = malloc((p->n + 1) * sizeof *b[l])))
      rc = kope_err_set(err, KOPE_EINTERNAL, "out of memory");
  for (i = 0; rc == KOPE_OK && i < p->n; i++) {
    pool_item *it = &p->v[i];
    if (it->c.id && (it->match & KOPE_MEM_BY_FILTER || passes_hard(f, &it->c)))
      b[it->c.in.score.label][nb[it->c.in.score.label]++] = it;
  }
  for (l = 0; rc == KOPE_OK && l < KOPE_LABEL_COUNT; l++)
    qsort(b[l], nb[l], sizeof *b[l], cmp_rank);
  while (rc == KOPE_OK && more && taken < k)   /* round-robin over the buckets */
    for (more = 0, l = 0; l < KOPE_LABEL_COUNT && taken < k; l++)
      if (take[l] < nb[l]) {
        take[l]++;
        taken++;
        more = 1;
      }
  for (l = 0; rc == KOPE_OK && l < KOPE_LABEL_COUNT; l++) {
    memmove(b[0] + ntake, b[l], take[l] * sizeof *b[l]);   /* bucket order */
    ntake += take[l];
  }
  if (rc == KOPE_OK)
    rc = emit_chosen(db, b[0], ntake, out, err);
  for (l = 0; l < KOPE_LABEL_COUNT; l++)
    free(b[l]);
  return rc;
}

static int push_digest(kope_mem_recs *out, const kope_mem_digest *d, unsigned match,
                       double score)
{
  kope_mem_rec *r;
  size_t i;

  for (i = 0; i < out->n; i++)
    if (out->v[i].kind == KOPE_MEM_REC_DIGEST && out->v[i].id == d->id) {
      out->v[i].match |= match;
      return 0;
    }
  if (!(r = mem_recs_push(out)))
    return -1;
  r->kind = KOPE_MEM_REC_DIGEST;
  r->id = d->id;
  r->target = kope_strdup(d->target);
  r->layer = kope_strdup(d->layer);
  r->thought_id = kope_strdup(d->thought_id);
  r->thought_title = kope_strdup(d->title);
  r->score.step_ratio = d->median_ratio;
  r->match = match;
  r->text_score = score;
  r->summary = mem_digest_summary(d);
  r->tokens = kope_mem_token_estimate(r->summary);
  return 0;
}

/* Digests for the state: exact target/category (and layer/thought)
 * matches first, then the digests among the text hits. */
static int add_digests(kope_db *db, const kope_mem_state *s, const kope_mem_filter *f,
                       const mem_hit *hits, size_t nh, size_t max, kope_mem_recs *out,
                       kope_err *err)
{
  kope_mem_filter df = {0};
  kope_mem_digest *d = NULL;
  size_t n = 0, i, start = out->n;
  int rc;

  df.target = f->target;
  df.category = s->category ? s->category : f->category;
  df.layer = f->layer;
  df.thought_id = f->thought_id;
  rc = db->eng->digest_list(db->impl, &df, max, 0, &d, &n, err);
  for (i = 0; rc == KOPE_OK && i < n && out->n - start < max; i++)
    if (push_digest(out, &d[i], KOPE_MEM_BY_FILTER, 0.0) != 0)
      rc = kope_err_set(err, KOPE_EINTERNAL, "out of memory");
  kope_mem_digests_free(d, n);
  for (i = 0; rc == KOPE_OK && i < nh && out->n - start < max; i++) {
    kope_mem_digest one = {0};
    if (hits[i].kind != MEM_T_DIGEST)
      continue;
    if ((rc = db->eng->digest_get(db->impl, hits[i].id, &one, err)) != KOPE_OK)
      break;
    if (!str_differs(f->target, one.target) && push_digest(out, &one, KOPE_MEM_BY_TEXT,
                                                             hits[i].score) != 0)
      rc = kope_err_set(err, KOPE_EINTERNAL, "out of memory");
    mem_digest_release(&one);
  }
  return rc;
}

static char *state_text(const kope_mem_state *s)
{
  return kope_sprintf("%s %s", s->text ? s->text : "", s->feedback ? s->feedback : "");
}

/* What ranking needs of every pool member (in one batch where the engine
 * can); only the Cases that are emitted are read in full. */
static int load_pool(kope_db *db, pool *p, kope_err *err)
{
  kope_mem_case *c;
  int64_t *ids;
  size_t i;
  int rc = KOPE_OK;

  if (!db->eng->case_briefs || p->n == 0) {
    for (i = 0; i < p->n && rc == KOPE_OK; i++)
      rc = db->eng->case_brief(db->impl, p->v[i].id, &p->v[i].c, err);
    return rc;
  }
  c = calloc(p->n, sizeof *c);
  ids = calloc(p->n, sizeof *ids);
  if (!c || !ids)
    rc = kope_err_set(err, KOPE_EINTERNAL, "out of memory");
  for (i = 0; rc == KOPE_OK && i < p->n; i++)
    ids[i] = p->v[i].id;
  if (rc == KOPE_OK && (rc = db->eng->case_briefs(db->impl, ids, p->n, c, err)) == KOPE_OK)
    for (i = 0; i < p->n; i++)
      p->v[i].c = c[i];   /* the pool owns the strings now */
  free(c);
  free(ids);
  return rc;
}

int kope_mem_retrieve(kope_db *db, const kope_mem_state *state, const kope_mem_filter *f,
                      size_t k, kope_mem_recs *out, kope_err *err)
{
  kope_mem_state none = {0};
  kope_mem_filter def = {0};
  pool p = {0};
  mem_hit *hits = NULL;
  size_t nh = 0;
  char *text;
  int rc = KOPE_OK, maxd, has_text;

  if (!state)
    state = &none;
  def.op = state->op;
  def.target = state->target;
  if (!f)
    f = &def;
  if (f->label && kope_mem_label_parse(f->label) < 0)
    return kope_err_set(err, KOPE_EINPUT, "unknown label '%s'", f->label);
  if ((rc = db->eng->txn(db->impl, MEM_TXN_READ, err)) != KOPE_OK)
    return rc;
  text = state_text(state);
  has_text = text[strspn(text, " ")] != '\0';
  if (any_exact(f) || !has_text)
    rc = pool_add_filtered(db, &p, f, k, err);
  if (rc == KOPE_OK && has_text)
    rc = db->eng->text(db->impl, text, 0, 2 * k < 16 ? 16 : 2 * k, &hits, &nh, err);
  if (rc == KOPE_OK)
    rc = pool_add_hits(&p, hits, nh, err);
  if (rc == KOPE_OK)
    rc = load_pool(db, &p, err);
  if (rc == KOPE_OK)
    rc = emit_cases(db, &p, f, k, out, err);
  maxd = f->max_digests == 0 ? (int)((k + 1) / 2) : f->max_digests;
  if (rc == KOPE_OK && maxd > 0)
    rc = add_digests(db, state, f, hits, nh, (size_t)maxd, out, err);
  db->eng->txn(db->impl, MEM_TXN_READ_END, NULL);
  pool_release(&p);
  free(hits);
  free(text);
  return rc;
}

/* ---- error-driven retrieval ------------------------------------------- */

static char *fix_summary(const kope_mem_case *failed, const kope_mem_case *fix)
{
  char *a = kope_mem_case_summary(failed), *b = fix ? kope_mem_case_summary(fix) : NULL;
  char *s = b ? kope_sprintf("seen before: %s; fixed by %s", a, b)
              : kope_sprintf("seen before: %s; no fix recorded", a);

  free(a);
  free(b);
  return s;
}

static int push_fix(const kope_mem_case *c, const kope_mem_case *fix, kope_mem_recs *out,
                    kope_err *err)
{
  kope_mem_rec *r = mem_recs_push(out);

  if (!r)
    return kope_err_set(err, KOPE_EINTERNAL, "out of memory");
  mem_rec_from_case(r, c);
  free(r->summary);
  r->summary = fix_summary(c, fix);
  r->tokens = kope_mem_token_estimate(r->summary);
  r->match = KOPE_MEM_BY_ERROR;
  r->fix_case_id = fix ? fix->id : 0;
  return KOPE_OK;
}

/* The chosen failures (sel[0..n)) and their fixes (fix[0..n), 0 = none),
 * read in one batch and pushed in order. */
static int push_chosen(kope_db *db, const int64_t *sel, const int64_t *fix, size_t n,
                       kope_mem_recs *out, kope_err *err)
{
  kope_mem_case *c = calloc(2 * n + 1, sizeof *c);
  int64_t *ids = calloc(2 * n + 1, sizeof *ids);
  size_t i, m = n, *at = calloc(n + 1, sizeof *at);
  int rc = c && ids && at ? KOPE_OK : kope_err_set(err, KOPE_EINTERNAL, "out of memory");

  for (i = 0; rc == KOPE_OK && i < n; i++) {
    ids[i] = sel[i];
    at[i] = fix[i] ? m : 0;
    if (fix[i])
      ids[m++] = fix[i];
  }
  if (rc == KOPE_OK)
    rc = get_cases(db, ids, m, c, err);
  for (i = 0; rc == KOPE_OK && i < n; i++)
    rc = push_fix(&c[i], fix[i] ? &c[at[i]] : NULL, out, err);
  for (i = 0; c && i < m; i++)
    kope_mem_case_release(&c[i]);
  free(c);
  free(ids);
  free(at);
  return rc;
}

/* The candidates (newest first) with a fix come first, then the others;
 * only the k that are returned are read in full. */
static int push_fixes(kope_db *db, const mem_ids *ids, size_t k, kope_mem_recs *out,
                      kope_err *err)
{
  int64_t *fix = calloc(3 * ids->n + 1, sizeof *fix), *sel = fix + ids->n,
          *sfix = sel + ids->n;
  size_t i, taken = 0;
  int pass, rc = fix ? KOPE_OK : kope_err_set(err, KOPE_EINTERNAL, "out of memory");

  if (rc == KOPE_OK && db->eng->fixes_of)
    rc = db->eng->fixes_of(db->impl, ids->v, ids->n, fix, err);
  for (i = 0; rc == KOPE_OK && !db->eng->fixes_of && i < ids->n; i++)
    rc = db->eng->fix_of(db->impl, ids->v[i], &fix[i], err);
  for (pass = 0; pass < 2; pass++)
    for (i = 0; rc == KOPE_OK && i < ids->n && taken < k; i++)
      if ((fix[i] != 0) == (pass == 0)) {
        sel[taken] = ids->v[i];
        sfix[taken++] = fix[i];
      }
  if (rc == KOPE_OK)
    rc = push_chosen(db, sel, sfix, taken, out, err);
  free(fix);
  return rc;
}

int kope_mem_fixes(kope_db *db, const char *feedback, const kope_mem_filter *f, size_t k,
                   kope_mem_recs *out, kope_err *err)
{
  kope_mem_filter none = {0};
  char *sig = kope_mem_error_signature(feedback);
  mem_ids ids = {0};
  int rc = KOPE_OK;

  if (!sig || k == 0)
    goto out;
  if ((rc = db->eng->txn(db->impl, MEM_TXN_READ, err)) != KOPE_OK)
    goto out;
  rc = db->eng->err_cases(db->impl, sig, f ? f : &none, 4 * k, &ids, err);
  if (rc == KOPE_OK)
    rc = push_fixes(db, &ids, k, out, err);
  db->eng->txn(db->impl, MEM_TXN_READ_END, NULL);
out:
  mem_ids_release(&ids);
  free(sig);
  return rc;
}

/* ---- full-text search --------------------------------------------------- */

static int search_case(kope_db *db, const mem_hit *h, kope_mem_recs *out, kope_err *err)
{
  kope_mem_case c;
  kope_mem_rec *r;
  int rc = kope_mem_case_get(db, h->id, 0, &c, err);

  if (rc != KOPE_OK)
    return rc;
  if ((r = mem_recs_push(out)) != NULL) {
    mem_rec_from_case(r, &c);
    r->match = KOPE_MEM_BY_TEXT;
    r->text_score = h->score;
  }
  kope_mem_case_release(&c);
  return r ? KOPE_OK : kope_err_set(err, KOPE_EINTERNAL, "out of memory");
}

static char *journal_summary(const kope_mem_journal *j)
{
  const char *b = j->body + strspn(j->body, "# \n");
  int len = (int)strcspn(b, "\n");

  return kope_sprintf("journal #%lld (case #%lld): %.*s%s", (long long)j->id,
                      (long long)j->case_id, len > 160 ? 160 : len, b,
                      len > 160 ? "..." : "");
}

static int search_journal(kope_db *db, const mem_hit *h, kope_mem_recs *out, kope_err *err)
{
  kope_mem_journal j = {0};
  kope_mem_rec *r;
  int rc = db->eng->journal_get(db->impl, h->id, &j, err);

  if (rc != KOPE_OK)
    return rc;
  if ((r = mem_recs_push(out)) != NULL) {
    r->kind = KOPE_MEM_REC_JOURNAL;
    r->id = j.id;
    r->case_id = j.case_id;
    r->match = KOPE_MEM_BY_TEXT;
    r->text_score = h->score;
    r->summary = journal_summary(&j);
    r->tokens = kope_mem_token_estimate(r->summary);
  }
  free(j.body);
  free(j.uid);
  return r ? KOPE_OK : kope_err_set(err, KOPE_EINTERNAL, "out of memory");
}

static int search_digest(kope_db *db, const mem_hit *h, kope_mem_recs *out, kope_err *err)
{
  kope_mem_digest d = {0};
  int rc = db->eng->digest_get(db->impl, h->id, &d, err);

  if (rc == KOPE_OK && push_digest(out, &d, KOPE_MEM_BY_TEXT, h->score) != 0)
    rc = kope_err_set(err, KOPE_EINTERNAL, "out of memory");
  mem_digest_release(&d);
  return rc;
}

int kope_mem_search(kope_db *db, const char *text, size_t limit, kope_mem_recs *out,
                    kope_err *err)
{
  mem_hit *hits = NULL;
  size_t n = 0, i;
  int rc;

  if (!text || !*text)
    return kope_err_set(err, KOPE_EINPUT, "search needs some text");
  rc = db->eng->text(db->impl, text, 1, limit, &hits, &n, err);
  for (i = 0; rc == KOPE_OK && i < n; i++)   /* best bm25 first */
    rc = hits[i].kind == MEM_T_CASE      ? search_case(db, &hits[i], out, err)
         : hits[i].kind == MEM_T_JOURNAL ? search_journal(db, &hits[i], out, err)
                                         : search_digest(db, &hits[i], out, err);
  free(hits);
  return rc;
}
