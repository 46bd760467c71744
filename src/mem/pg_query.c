/*
 * PostgreSQL engine: retrieval queries. The best Cases of one label under
 * exact filters (the rank indexes of case_scores, scanned best-first),
 * full-text search with PostgreSQL's own tsvector/tsquery over mem_docs
 * (GIN index), failures sharing an error signature, and the Case that
 * fixed a failure.
 *
 * Ranking: the SQLite engine hands out bm25 scores (lower is better). This
 * engine ranks with ts_rank (higher is better) and hands out its negation,
 * -ts_rank, so "lower is better" holds for both engines and callers sort
 * the same way; the values themselves are not comparable across engines.
 *
 * Query terms are the words mem_terms finds; each becomes
 * phraseto_tsquery('simple', term) (a parameter, so no text can inject
 * query syntax; a term with '_' is parsed by the same parser as the
 * documents, into a phrase). A search (all terms) ANDs them and ranks every
 * match. A relevance query (the agent's retrieval) works like the SQLite
 * engine's: stopwords are dropped, each term's matches are counted up to a
 * cap (cached per handle), and the rarest terms are ORed while their
 * matches fit a row budget; when even the rarest matches more, its newest
 * budget-many matches are ranked (recent experience first).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mem/pg.h"

#define MAX_TERMS 10     /* distinct non-stopword terms considered */
#define OR_TERMS 6       /* terms ORed into one relevance query */
#define ROW_BUDGET 120   /* rows ranked per relevance query */
#define PROBE_CAP (ROW_BUDGET + 1)   /* matches counted per rarer term */

/* ---- exact filters ---------------------------------------------------- */

int pg_top(void *impl, const kope_mem_filter *f, int label, size_t k, mem_ids *out,
           kope_err *err)
{
  pg *s = impl;
  pg_par p = {0};
  PGresult *r = NULL;
  kope_buf sql;
  int rc, i;

  if (k == 0)
    return KOPE_OK;
  kope_buf_init(&sql, 0);
  kope_buf_puts(&sql, "SELECT s.id FROM case_scores s");
  if (f->verdict || f->session_id)
    kope_buf_puts(&sql, " JOIN cases c ON c.id = s.id");
  kope_buf_printf(&sql, " WHERE s.label = $%d", pg_par_i64(&p, label));
  pg_filter_sql(f, 1, &sql, &p);
  kope_buf_printf(&sql, " ORDER BY s.rank DESC, s.id DESC LIMIT $%d",
                  pg_par_i64(&p, (int64_t)k));
  rc = pg_run(s, sql.data, &p, &r, "retrieving Cases", err);
  kope_buf_release(&sql);
  for (i = 0; rc == KOPE_OK && i < PQntuples(r); i++)
    mem_ids_push(out, pg_i64(r, i, 0));
  PQclear(r);
  return rc;
}

/* ---- full text ---------------------------------------------------------- */

typedef struct term {
  const char *w;
  int64_t df;
} term;

static pg_df *df_slot(pg *s, const char *w)
{
  if (!s->df && !(s->df = calloc(PG_DF_SLOTS, sizeof *s->df)))
    return NULL;
  return &s->df[mem_word_hash(w) % PG_DF_SLOTS];
}

/* The column's most common elements with their estimated match counts
 * (frequency x rows, from pg_stats: kept by ANALYZE and autovacuum),
 * sorted by term, reloaded every PG_DF_TTL seconds. Counting a common
 * term's matches would read every one of them (a bitmap over its whole GIN
 * posting list: 10 ms for a word in 40,000 of 200,000 documents); any term
 * not listed is rarer than those, and only its matches are counted, up to
 * PROBE_CAP. The counts only decide which terms are rarest. */
static int load_common(pg *s, kope_err *err)
{
  PGresult *r = NULL;
  double now = kope_now();
  int rc, i, rows;

  if (s->common_at > 0 && now - s->common_at < PG_DF_TTL)
    return KOPE_OK;
  rc = pg_run(s, "SELECT m.e, round(m.f * greatest(c.reltuples, 0))::bigint FROM pg_stats t "
              "CROSS JOIN LATERAL unnest(t.most_common_elems::text::text[], "
              "t.most_common_elem_freqs) AS m(e, f), pg_class c WHERE t.schemaname = "
              "current_schema() AND t.tablename = 'mem_docs' AND t.attname = 'tsv' AND "
              "c.oid = 'mem_docs'::regclass AND m.e IS NOT NULL AND length(m.e) < 48 "
              "ORDER BY m.e COLLATE \"C\"", NULL, &r, "searching", err);
  if (rc != KOPE_OK)
    return rc;
  rows = PQntuples(r);
  free(s->common);
  s->ncommon = 0;
  if (rows > 0 && !(s->common = calloc((size_t)rows, sizeof *s->common))) {
    PQclear(r);
    return kope_err_nomem(err, "search terms");
  }
  for (i = 0; i < rows; i++) {
    snprintf(s->common[i].term, sizeof s->common[i].term, "%s", PQgetvalue(r, i, 0));
    s->common[i].df = pg_i64(r, i, 1);
  }
  s->ncommon = (size_t)rows;
  s->common_at = rows > 0 ? now : now - PG_DF_TTL + 10.0;   /* none yet: ask again soon */
  PQclear(r);
  return KOPE_OK;
}

static int cmp_common(const void *key, const void *elem)
{
  return strcmp(key, ((const pg_df *)elem)->term);
}

/* Estimated matches of a common term, or -1. */
static int64_t common_df(const pg *s, const char *w)
{
  const pg_df *c = s->ncommon ? bsearch(w, s->common, s->ncommon, sizeof *s->common,
                                        cmp_common) : NULL;
  return c && c->df > 0 ? c->df : -1;
}

/* A phrase term (words joined by '_', an operator name such as
 * layer_norm_1) whose every word is common: at most as many matches as its
 * rarest word (an estimate; such a phrase's own count would intersect the
 * long posting lists of all its words). -1 when it is not one. */
static int64_t phrase_df(const pg *s, const char *w)
{
  char part[48];
  int64_t best = -1, df;
  size_t len;

  if (!strchr(w, '_'))
    return -1;
  while (*w) {
    len = strcspn(w, "_");
    if (len > 0) {
      snprintf(part, sizeof part, "%.*s", (int)len, w);
      if ((df = common_df(s, part)) < 0)
        return -1;
      best = best < 0 || df < best ? df : best;
    }
    w += len + (w[len] == '_');
  }
  return best;
}

#define PROBE_SQL                                                                     \
  "SELECT w, (SELECT count(*) FROM (SELECT 1 FROM mem_docs WHERE tsv @@ "               \
  "phraseto_tsquery('simple', w) LIMIT $2) x) FROM unnest($1::text[]) w"

/* The match counts of the terms not in the cache, in one statement. */
static int probe_terms(pg *s, term *t, size_t n, kope_err *err)
{
  kope_buf arr;
  pg_par p = {0};
  PGresult *r = NULL;
  size_t i, missing = 0;
  double now = kope_now();
  int rc = KOPE_OK, row;

  if ((rc = load_common(s, err)) != KOPE_OK)
    return rc;
  kope_buf_init(&arr, 0);
  kope_buf_puts(&arr, "{");
  for (i = 0; i < n; i++) {
    pg_df *slot = df_slot(s, t[i].w);
    if (slot && !strcmp(slot->term, t[i].w) && now - slot->at < PG_DF_TTL) {
      t[i].df = slot->df;
      continue;
    }
    if ((t[i].df = common_df(s, t[i].w)) >= 0 || (t[i].df = phrase_df(s, t[i].w)) >= 0)
      continue;
    t[i].df = -1;   /* terms hold only word characters: safe in an array literal */
    kope_buf_printf(&arr, "%s%s", missing++ ? "," : "", t[i].w);
  }
  kope_buf_puts(&arr, "}");
  if (missing) {
    pg_par_text(&p, arr.data);
    pg_par_i64(&p, PROBE_CAP);
    rc = pg_run(s, PROBE_SQL, &p, &r, "searching", err);
  }
  for (row = 0; rc == KOPE_OK && missing && row < PQntuples(r); row++) {
    const char *w = PQgetvalue(r, row, 0);
    int64_t df = pg_i64(r, row, 1);
    pg_df *slot = df_slot(s, w);
    for (i = 0; i < n; i++)
      if (t[i].df < 0 && !strcmp(t[i].w, w))
        t[i].df = df;
    if (slot && df > 0) {
      snprintf(slot->term, sizeof slot->term, "%s", w);
      slot->df = df;
      slot->at = now;
    }
  }
  PQclear(r);
  kope_buf_release(&arr);
  return rc;
}

static int cmp_df(const void *a, const void *b)
{
  const term *x = a, *y = b;
  return (x->df > y->df) - (x->df < y->df);
}

/* The rarest terms that occur at all, as many as fit the budget. */
static int pick_terms(pg *s, term *t, size_t *n, kope_err *err)
{
  size_t i, kept = 0;
  int64_t total = 0;
  int rc = probe_terms(s, t, *n, err);

  if (rc != KOPE_OK)
    return rc;
  qsort(t, *n, sizeof *t, cmp_df);
  for (i = 0; i < *n && kept < OR_TERMS; i++) {
    if (t[i].df <= 0)
      continue;
    if (kept > 0 && total + t[i].df > ROW_BUDGET)
      break;
    total += t[i].df;
    t[kept++] = t[i];
  }
  *n = kept;
  return KOPE_OK;
}

/* The tsquery expression over parameters; 0 terms: nothing to search. */
static size_t build_query(pg *s, const char *text, int all_terms, char words[][48],
                          kope_buf *q, pg_par *p, int *rc, kope_err *err)
{
  term t[MAX_TERMS];
  size_t nw = mem_terms(text, words, MAX_TERMS * 2), n = 0, i;

  *rc = KOPE_OK;
  for (i = 0; i < nw && n < MAX_TERMS; i++)
    if (all_terms || !mem_is_stopword(words[i]))
      t[n++].w = words[i];
  if (!all_terms && n > 0 && (*rc = pick_terms(s, t, &n, err)) != KOPE_OK)
    return 0;
  for (i = 0; i < n; i++)
    kope_buf_printf(q, "%sphraseto_tsquery('simple', $%d)", i ? (all_terms ? " && " : " || ")
                                                            : "", pg_par_text(p, t[i].w));
  return n;
}

int pg_text(void *impl, const char *text, int all_terms, size_t limit, mem_hit **hits,
            size_t *n, kope_err *err)
{
  pg *s = impl;
  char words[MAX_TERMS * 2][48];
  pg_par p = {0};
  PGresult *r = NULL;
  kope_buf q, sql;
  size_t cap = 0, nt;
  int rc, i;

  *hits = NULL;
  *n = 0;
  kope_buf_init(&q, 0);
  kope_buf_init(&sql, 0);
  nt = build_query(s, text, all_terms, words, &q, &p, &rc, err);
  if (rc != KOPE_OK || nt == 0)
    goto out;
  /* documents come newest first; a journal's Case rides along */
  kope_buf_printf(&sql, "SELECT d.kind, d.id, d.case_id, -ts_rank(d.tsv, x.q) FROM "
                  "(SELECT %s AS q) x, LATERAL (SELECT * FROM mem_docs WHERE tsv @@ x.q "
                  "ORDER BY rid DESC LIMIT $%d) d", q.data,
                  pg_par_i64(&p, all_terms ? (int64_t)1000000000 : ROW_BUDGET));
  if ((rc = pg_run(s, sql.data, &p, &r, "searching", err)) != KOPE_OK)
    goto out;
  for (i = 0; i < PQntuples(r); i++) {
    mem_hit h;
    h.kind = (int)pg_i64(r, i, 0);
    h.id = pg_i64(r, i, 1);
    h.case_id = pg_i64(r, i, 2);
    h.score = pg_dbl(r, i, 3, 0.0);
    if (mem_hits_push(hits, n, &cap, h) != 0) {
      rc = kope_err_set(err, KOPE_EINTERNAL, "out of memory");
      goto out;
    }
  }
  if (*n > 0)
    qsort(*hits, *n, sizeof **hits, mem_hit_cmp);
  if (*n > limit)
    *n = limit;
out:
  PQclear(r);
  kope_buf_release(&q);
  kope_buf_release(&sql);
  if (rc != KOPE_OK) {
    free(*hits);
    *hits = NULL;
    *n = 0;
  }
  return rc;
}

/* ---- error-driven ------------------------------------------------------- */

int pg_err_cases(void *impl, const char *sig, const kope_mem_filter *f, size_t limit,
                 mem_ids *out, kope_err *err)
{
  pg *s = impl;
  pg_par p = {0};
  PGresult *r = NULL;
  kope_buf sql;
  int rc, i;

  kope_buf_init(&sql, 0);
  kope_buf_printf(&sql, "SELECT c.id FROM cases c JOIN case_scores s ON s.id = c.id WHERE "
                  "c.err_sig = $%d", pg_par_text(&p, sig));
  pg_filter_sql(f, 1, &sql, &p);
  kope_buf_printf(&sql, " ORDER BY c.id DESC LIMIT $%d", pg_par_i64(&p, (int64_t)limit));
  rc = pg_run(s, sql.data, &p, &r, "matching errors", err);
  kope_buf_release(&sql);
  for (i = 0; rc == KOPE_OK && i < PQntuples(r); i++)
    mem_ids_push(out, pg_i64(r, i, 0));
  PQclear(r);
  return rc;
}

int pg_fix_of(void *impl, int64_t failed_id, int64_t *fix_id, kope_err *err)
{
  pg_par p = {0};
  int rc;

  pg_par_i64(&p, failed_id);
  rc = pg_int(impl, "SELECT c.id FROM cases c JOIN case_scores s ON s.id = c.id WHERE "
              "c.prev_id = $1 AND c.verdict = 'correct' AND c.correct = 1 "
              "ORDER BY s.rank DESC, c.id LIMIT 1", &p, fix_id, err);
  if (rc == KOPE_OK && *fix_id == 0)
    rc = pg_int(impl, "SELECT n.id FROM cases f JOIN cases n ON n.session_id = f.session_id "
                "AND n.step > f.step WHERE f.id = $1 AND n.verdict = 'correct' AND "
                "n.correct = 1 ORDER BY n.step, n.id LIMIT 1", &p, fix_id, err);
  return rc;
}

/* fix_of for many failures in one statement: the same two rules (a
 * correct successor, best rank first; else the next correct step of the
 * same session). */
int pg_fixes_of(void *impl, const int64_t *ids, size_t n, int64_t *fix, kope_err *err)
{
  pg *s = impl;
  char *arr;
  pg_par p = {0};
  PGresult *r = NULL;
  size_t i;
  int rc, row;

  for (i = 0; i < n; i++)
    fix[i] = 0;
  if (n == 0)
    return KOPE_OK;
  if (!(arr = pg_id_array(ids, n)))
    return kope_err_nomem(err, "a list of Case ids");
  pg_par_text(&p, arr);
  rc = pg_run(s, "SELECT f.id, coalesce((SELECT c.id FROM cases c JOIN case_scores s ON "
              "s.id = c.id WHERE c.prev_id = f.id AND c.verdict = 'correct' AND c.correct = 1 "
              "ORDER BY s.rank DESC, c.id LIMIT 1), (SELECT x.id FROM cases x WHERE "
              "x.session_id = f.session_id AND x.step > f.step AND x.verdict = 'correct' AND "
              "x.correct = 1 ORDER BY x.step, x.id LIMIT 1)) FROM cases f WHERE f.id = "
              "ANY($1::bigint[])", &p, &r, "finding fixes", err);
  for (row = 0; rc == KOPE_OK && row < PQntuples(r); row++)
    for (i = 0; i < n; i++)
      if (ids[i] == pg_i64(r, row, 0))
        fix[i] = pg_i64(r, row, 1);
  PQclear(r);
  free(arr);
  return rc;
}
