/*
 * SQLite engine: retrieval queries. The best Cases of one label under
 * exact filters (served by the rank indexes of case_scores, one cached
 * statement per combination of filters), bm25 full-text search with FTS5,
 * failures sharing an error signature, and the Case that fixed a failure.
 *
 * Free text is turned into an FTS5 query of quoted terms, so no text can
 * inject query syntax. There is one index (mem_fts) over Cases, Journals
 * and digests. bm25 costs 1.5-3 microseconds for every row it scores, so
 * a relevance query (OR of terms) is kept within a row budget: stopwords
 * are dropped, each term's matching rows are counted (up to a cap; FTS5
 * walks rowids and stops; counts are cached per handle), and the rarest
 * terms are OR-ed while their rows fit; common words carry little bm25
 * weight anyway. When even the rarest term matches more rows than the
 * budget, bm25 ranks its newest budget-many matches (recent experience
 * first): one pass over the index in rowid order computes bm25 for the
 * rows it reads, and the best are kept here. Search for the CLI (AND of
 * all terms) is not limited.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mem/sq.h"

#define MAX_TERMS 10     /* distinct non-stopword terms considered */
#define OR_TERMS 6       /* terms OR-ed into one relevance query */
#define ROW_BUDGET 120   /* rows bm25 may score per query */
#define PROBE_CAP 5000   /* matching rows counted per term (to find the rarest) */

/* ---- exact filters ---------------------------------------------------- */

/* The rank indexes hold rank_ix, which may lag the exact rank by up to
 * SQ_RANK_SLACK of itself (so adding a Case does not rewrite index entries
 * all the way up its lineage). Top-k stays exact: rows are read in
 * (rank_ix, id) descending order and kept by exact (rank, id); reading
 * stops once k are kept and the next row's rank cannot exceed
 * rank_ix * (1 + slack), which is below the k-th kept rank (a rank_ix of 0
 * is exact, and ties then fall in id order). */

static unsigned top_slot(unsigned mask)
{
  return (mask & 63u) | ((mask >> 7) << 6);   /* label (bit 6) is bound apart */
}

static sqlite3_stmt *top_stmt(sq *s, const kope_mem_filter *f, unsigned *mask, kope_err *err)
{
  kope_buf sql;
  sqlite3_stmt *st;
  unsigned slot;
  int rc;

  kope_buf_init(&sql, 0);
  kope_buf_puts(&sql, "SELECT s.id, s.rank, s.rank_ix FROM case_scores s");
  if (f->verdict || f->session_id)
    kope_buf_puts(&sql, " JOIN cases c ON c.id = s.id");
  kope_buf_puts(&sql, " WHERE s.label = ?10");
  *mask = sq_filter_sql(f, &sql);
  kope_buf_puts(&sql, " ORDER BY s.rank_ix DESC, s.id DESC");
  slot = top_slot(*mask);
  if ((st = s->top[slot]) != NULL) {
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
  } else if ((rc = sqlite3_prepare_v3(s->h, sql.data, -1, SQLITE_PREPARE_PERSISTENT, &st,
                                      NULL)) != SQLITE_OK) {
    sq_fail(s, rc, "preparing retrieval", err);
    st = NULL;
  } else {
    s->top[slot] = st;
  }
  kope_buf_release(&sql);
  return st;
}

typedef struct ranked {
  int64_t id;
  double rank;
} ranked;

/* The retrieval order: d * c descending, then newer first. */
static int better(ranked a, ranked b)
{
  return a.rank > b.rank || (a.rank == b.rank && a.id > b.id);
}

/* Insert r into best[0..*n), kept in order, at most k long. */
static void keep_best(ranked *best, size_t *n, size_t k, ranked r)
{
  size_t i;

  if (*n == k && !better(r, best[k - 1]))
    return;
  i = *n < k ? (*n)++ : k - 1;
  while (i > 0 && better(r, best[i - 1])) {
    best[i] = best[i - 1];
    i--;
  }
  best[i] = r;
}

static int cannot_enter(const ranked *best, size_t n, size_t k, double rank_ix)
{
  double bound = rank_ix + 1.001 * SQ_RANK_SLACK * rank_ix;

  return n == k && (rank_ix == 0.0 || bound < best[k - 1].rank);
}

int sq_top(void *impl, const kope_mem_filter *f, int label, size_t k, mem_ids *out,
           kope_err *err)
{
  sq *s = impl;
  kope_mem_filter g = *f;
  sqlite3_stmt *st;
  ranked *best;
  size_t n = 0, i;
  unsigned mask;
  int rc;

  g.label = NULL;
  if (k == 0)
    return KOPE_OK;
  if (!(best = calloc(k, sizeof *best)))
    return kope_err_set(err, KOPE_EINTERNAL, "out of memory");
  if (!(st = top_stmt(s, &g, &mask, err))) {
    free(best);
    return SQ_ERRCODE(err);
  }
  sq_filter_bind(st, &g, mask);
  sqlite3_bind_int(st, 10, label);
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    ranked r = {sqlite3_column_int64(st, 0), sqlite3_column_double(st, 1)};
    if (cannot_enter(best, n, k, sqlite3_column_double(st, 2))) {
      rc = SQLITE_DONE;
      break;
    }
    keep_best(best, &n, k, r);
  }
  sqlite3_reset(st);
  for (i = 0; i < n; i++)
    mem_ids_push(out, best[i].id);
  free(best);
  return rc == SQLITE_DONE ? KOPE_OK : sq_fail(s, rc, "retrieving Cases", err);
}

/* ---- full text ---------------------------------------------------------- */

typedef struct term {
  const char *w;
  int64_t df;   /* matching rows, counted up to PROBE_CAP */
} term;

static int cmp_df(const void *a, const void *b)
{
  const term *x = a, *y = b;
  return (x->df > y->df) - (x->df < y->df);
}

static sq_df *df_slot(sq *s, const char *w)
{
  if (!s->df && !(s->df = calloc(SQ_DF_SLOTS, sizeof *s->df)))
    return NULL;
  return &s->df[mem_word_hash(w) % SQ_DF_SLOTS];
}

/* Run a one-integer statement over a MATCH expression and a limit. */
static int match_int(sq *s, int which, const char *q, int64_t lim, int64_t *v, kope_err *err)
{
  sqlite3_stmt *st = sq_stmt(s, which, err);
  int rc;

  *v = 0;
  if (!st)
    return SQ_ERRCODE(err);
  sq_bind_text(st, 1, q);
  sqlite3_bind_int64(st, 2, lim);
  rc = sqlite3_step(st);
  if (rc == SQLITE_ROW)
    *v = sqlite3_column_int64(st, 0);
  sqlite3_reset(st);
  return rc == SQLITE_ROW || rc == SQLITE_DONE ? KOPE_OK : sq_fail(s, rc, "searching", err);
}

/* Matching rows of one term, capped; cached while positive (a term not
 * seen yet may appear with the next insert). */
static int doc_freq(sq *s, const char *w, int64_t *df, kope_err *err)
{
  sq_df *slot = df_slot(s, w);
  double now = kope_now();
  char q[64];
  int rc;

  if (slot && !strcmp(slot->term, w) && now - slot->at < SQ_DF_TTL) {
    *df = slot->df;
    return KOPE_OK;
  }
  snprintf(q, sizeof q, "\"%s\"", w);
  if ((rc = match_int(s, SQ_PROBE, q, PROBE_CAP, df, err)) != KOPE_OK)
    return rc;
  if (slot && *df > 0) {
    snprintf(slot->term, sizeof slot->term, "%s", w);
    slot->df = *df;
    slot->at = now;
  }
  return KOPE_OK;
}

/* The rarest terms that occur at all, as many as fit the row budget (at
 * least one). */
static int pick_terms(sq *s, term *t, size_t *n, int64_t *rows, kope_err *err)
{
  size_t i, kept = 0;
  int64_t total = 0;
  int rc = KOPE_OK;

  for (i = 0; i < *n && rc == KOPE_OK; i++)
    rc = doc_freq(s, t[i].w, &t[i].df, err);
  if (rc != KOPE_OK)
    return rc;
  qsort(t, *n, sizeof *t, cmp_df);
  for (i = 0; i < *n && kept < OR_TERMS; i++) {
    if (t[i].df == 0)
      continue;
    if (kept > 0 && total + t[i].df > ROW_BUDGET)
      break;
    total += t[i].df;
    t[kept++] = t[i];
  }
  *n = kept;
  *rows = total;
  return KOPE_OK;
}

/* The MATCH expression, NULL when no term is left. */
static char *build_query(sq *s, const char *text, int all_terms, int *rc, kope_err *err)
{
  char words[MAX_TERMS * 2][48];
  term t[MAX_TERMS];
  size_t nw = mem_terms(text, words, MAX_TERMS * 2), n = 0, i;
  int64_t rows = 0;
  kope_buf q;

  *rc = KOPE_OK;
  for (i = 0; i < nw && n < MAX_TERMS; i++)
    if (!mem_is_stopword(words[i]) || all_terms)
      t[n++].w = words[i];
  if (!all_terms && (*rc = pick_terms(s, t, &n, &rows, err)) != KOPE_OK)
    return NULL;
  if (n == 0)
    return NULL;
  kope_buf_init(&q, 0);
  for (i = 0; i < n; i++)   /* terms hold only word characters: quoting is safe */
    kope_buf_printf(&q, "%s\"%s\"", i ? (all_terms ? " AND " : " OR ") : "", t[i].w);
  return kope_buf_steal(&q);
}

/* A Journal hit's Case. */
static int journal_case(sq *s, mem_hit *h, kope_err *err)
{
  sqlite3_stmt *st = sq_stmt(s, SQ_JOURNAL_CASE, err);
  int rc;

  if (!st)
    return SQ_ERRCODE(err);
  sqlite3_bind_int64(st, 1, h->id);
  if ((rc = sqlite3_step(st)) == SQLITE_ROW)
    h->case_id = sqlite3_column_int64(st, 0);
  sqlite3_reset(st);
  return rc == SQLITE_ROW || rc == SQLITE_DONE ? KOPE_OK : sq_fail(s, rc, "searching", err);
}

/* Read (rowid, score) rows; a mem_fts rowid is id * 4 + kind. The Cases
 * of Journal hits are looked up later, for the hits that are kept. */
static int collect_hits(sq *s, sqlite3_stmt *st, mem_hit **hits, size_t *n, kope_err *err)
{
  size_t cap = 0;
  int rc;

  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    int64_t rowid = sqlite3_column_int64(st, 0);
    mem_hit h;
    h.kind = (int)(rowid & 3);
    h.id = rowid >> 2;
    h.case_id = h.kind == MEM_T_CASE ? h.id : 0;
    h.score = sqlite3_column_double(st, 1);
    if (mem_hits_push(hits, n, &cap, h) != 0) {
      rc = SQLITE_NOMEM;
      break;
    }
  }
  sqlite3_reset(st);
  return rc == SQLITE_DONE ? KOPE_OK : sq_fail(s, rc, "searching", err);
}

/* A relevance query scores the newest ROW_BUDGET matches in one pass of
 * the index (bm25 is computed for the rows read, the LIMIT stops the
 * scan) and keeps the best; when the chosen terms match fewer rows than
 * that, which pick_terms arranges whenever it can, every match is scored.
 * A search (all_terms) lets FTS5 rank every match. */
int sq_text(void *impl, const char *text, int all_terms, size_t limit, mem_hit **hits,
            size_t *n, kope_err *err)
{
  sq *s = impl;
  sqlite3_stmt *st;
  size_t i;
  int rc = sq_fts_sync(s, err);
  char *q = rc == KOPE_OK ? build_query(s, text, all_terms, &rc, err) : NULL;

  *hits = NULL;
  *n = 0;
  if (q && rc == KOPE_OK && !(st = sq_stmt(s, all_terms ? SQ_FTS_ALL : SQ_FTS, err)))
    rc = SQ_ERRCODE(err);
  else if (q && rc == KOPE_OK) {
    sq_bind_text(st, 1, q);
    sqlite3_bind_int64(st, 2, all_terms ? (sqlite3_int64)limit : ROW_BUDGET);
    rc = collect_hits(s, st, hits, n, err);
  }
  if (rc == KOPE_OK && !all_terms && *n > 0) {
    qsort(*hits, *n, sizeof **hits, mem_hit_cmp);
    if (*n > limit)
      *n = limit;
  }
  for (i = 0; rc == KOPE_OK && i < *n; i++)
    if ((*hits)[i].kind == MEM_T_JOURNAL)
      rc = journal_case(s, &(*hits)[i], err);
  free(q);
  return rc;
}

/* ---- error-driven ------------------------------------------------------- */

int sq_err_cases(void *impl, const char *sig, const kope_mem_filter *f, size_t limit,
                 mem_ids *out, kope_err *err)
{
  sq *s = impl;
  kope_mem_filter g = *f;
  sqlite3_stmt *st = NULL;
  kope_buf sql;
  unsigned mask;
  int rc;

  g.label = NULL;
  kope_buf_init(&sql, 0);
  kope_buf_puts(&sql, "SELECT c.id FROM cases c JOIN case_scores s ON s.id = c.id "
                      "WHERE c.err_sig = ?10");
  mask = sq_filter_sql(&g, &sql);
  kope_buf_puts(&sql, " ORDER BY c.id DESC LIMIT ?11");
  rc = sqlite3_prepare_v2(s->h, sql.data, -1, &st, NULL);
  if (rc == SQLITE_OK) {
    sq_filter_bind(st, &g, mask);
    sq_bind_text(st, 10, sig);
    sqlite3_bind_int64(st, 11, (sqlite3_int64)limit);
  }
  while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
    mem_ids_push(out, sqlite3_column_int64(st, 0));
    rc = SQLITE_OK;
  }
  sqlite3_finalize(st);
  kope_buf_release(&sql);
  return rc == SQLITE_DONE ? KOPE_OK : sq_fail(s, rc, "matching errors", err);
}

static int first_id(sq *s, int which, int64_t id, int64_t *out, kope_err *err)
{
  sqlite3_stmt *st = sq_stmt(s, which, err);
  int rc;

  *out = 0;
  if (!st)
    return SQ_ERRCODE(err);
  sqlite3_bind_int64(st, 1, id);
  rc = sqlite3_step(st);
  if (rc == SQLITE_ROW)
    *out = sqlite3_column_int64(st, 0);
  sqlite3_reset(st);
  return rc == SQLITE_ROW || rc == SQLITE_DONE ? KOPE_OK
                                                : sq_fail(s, rc, "finding a fix", err);
}

int sq_fix_of(void *impl, int64_t failed_id, int64_t *fix_id, kope_err *err)
{
  int rc = first_id(impl, SQ_FIX_SUCC, failed_id, fix_id, err);

  if (rc == KOPE_OK && *fix_id == 0)
    rc = first_id(impl, SQ_FIX_NEXT, failed_id, fix_id, err);
  return rc;
}
