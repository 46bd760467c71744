/*
 * SQLite engine: digests (one row per (target, category, layer, thought
 * id) with counts and the supporting Case ids in digest_cases; triggers keep
 * their full-text rows), statistics, retention (gc), import bookkeeping and
 * the integrity check.
 */
#include <stdlib.h>
#include <string.h>
#include "mem/sq.h"

/* ---- digests ------------------------------------------------------------- */

/* The digest key, in the order of the cases_digest_key index. */
#define DROW_KEY \
  "thought_id, coalesce(target, ''), coalesce(category, ''), coalesce(layer, '')"
#define DROW_COLS DROW_KEY ", thought_title, cases.id, (SELECT label FROM case_scores s "  \
  "WHERE s.id = cases.id), correct, (SELECT step_ratio FROM case_scores s WHERE "           \
  "s.id = cases.id)"

/* Feed the rows of st to fn; *stop set when fn asked to stop. */
static int drow_emit(sq *s, sqlite3_stmt *st, mem_drow_fn fn, void *ctx, int *stop,
                     kope_err *err)
{
  int rc;

  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    mem_drow r;
    r.thought_id = (const char *)sqlite3_column_text(st, 0);
    r.target = (const char *)sqlite3_column_text(st, 1);
    r.category = (const char *)sqlite3_column_text(st, 2);
    r.layer = (const char *)sqlite3_column_text(st, 3);
    r.title = (const char *)sqlite3_column_text(st, 4);
    r.case_id = sqlite3_column_int64(st, 5);
    r.label = sqlite3_column_int(st, 6);
    r.correct = sqlite3_column_int(st, 7);
    r.r = sqlite3_column_double(st, 8);
    if ((*stop = fn(&r, ctx)) != 0)
      return KOPE_OK;
  }
  return rc == SQLITE_DONE ? KOPE_OK : sq_fail(s, rc, "aggregating digests", err);
}

/* The Cases of every key the session touched, key by key (served by the
 * cases_digest_key index, so the cost follows the keys, not the store). */
static int drows_session(sq *s, int64_t session_id, mem_drow_fn fn, void *ctx, kope_err *err)
{
  sqlite3_stmt *keys = NULL, *rows = NULL;
  int stop = 0, step = SQLITE_DONE, i;
  int rc = sq_prep(s, "SELECT DISTINCT " DROW_KEY " FROM cases WHERE session_id = ?1 AND "
                   "coalesce(thought_id, '') <> '' ORDER BY 1, 2, 3, 4", &keys, err);

  if (rc == KOPE_OK)
    rc = sq_prep(s, "SELECT " DROW_COLS " FROM cases WHERE thought_id = ?1 AND "
                 "coalesce(target, '') = ?2 AND coalesce(category, '') = ?3 AND "
                 "coalesce(layer, '') = ?4 ORDER BY id", &rows, err);
  if (rc == KOPE_OK)
    sqlite3_bind_int64(keys, 1, session_id);
  while (rc == KOPE_OK && !stop && (step = sqlite3_step(keys)) == SQLITE_ROW) {
    for (i = 0; i < 4; i++)
      sqlite3_bind_text(rows, i + 1, (const char *)sqlite3_column_text(keys, i), -1,
                        SQLITE_TRANSIENT);
    rc = drow_emit(s, rows, fn, ctx, &stop, err);
    sqlite3_reset(rows);
  }
  if (rc == KOPE_OK && !stop && step != SQLITE_DONE)
    rc = sq_fail(s, step, "aggregating digests", err);
  sqlite3_finalize(keys);
  sqlite3_finalize(rows);
  return rc;
}

int sq_digest_rows(void *impl, int64_t session_id, mem_drow_fn fn, void *ctx, kope_err *err)
{
  sq *s = impl;
  sqlite3_stmt *st = NULL;
  int rc, stop = 0;

  if (session_id)
    return drows_session(s, session_id, fn, ctx, err);
  rc = sq_prep(s, "SELECT " DROW_COLS " FROM cases WHERE coalesce(thought_id, '') <> '' "
               "ORDER BY " DROW_KEY ", id", &st, err);
  if (rc == KOPE_OK)
    rc = drow_emit(s, st, fn, ctx, &stop, err);
  sqlite3_finalize(st);
  return rc;
}

static int digest_upsert(sq *s, const kope_mem_digest *d, int64_t *id, kope_err *err)
{
  sqlite3_stmt *st = NULL;
  int rc = sq_prep(s, "INSERT INTO digests(target, category, layer, thought_id, title, "
                   "attempts, n_correct, n_effective, n_partial, n_ineffective, n_negative, "
                   "median_ratio, auto_text, updated) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, "
                   "?9, ?10, ?11, ?12, ?13, ?14) ON CONFLICT(target, category, layer, "
                   "thought_id) DO UPDATE SET title = excluded.title, attempts = "
                   "excluded.attempts, n_correct = excluded.n_correct, n_effective = "
                   "excluded.n_effective, n_partial = excluded.n_partial, n_ineffective = "
                   "excluded.n_ineffective, n_negative = excluded.n_negative, median_ratio = "
                   "excluded.median_ratio, auto_text = excluded.auto_text, updated = "
                   "excluded.updated RETURNING id", &st, err);
  int i;

  if (rc != KOPE_OK)
    return rc;
  sq_bind_text(st, 1, d->target);
  sq_bind_text(st, 2, d->category);
  sq_bind_text(st, 3, d->layer);
  sq_bind_text(st, 4, d->thought_id);
  sq_bind_text(st, 5, d->title);
  sqlite3_bind_int64(st, 6, d->attempts);
  sqlite3_bind_int64(st, 7, d->n_correct);
  for (i = 0; i < KOPE_LABEL_COUNT; i++)
    sqlite3_bind_int64(st, 8 + i, d->n_label[i]);
  sqlite3_bind_double(st, 12, d->median_ratio);
  sq_bind_text(st, 13, d->auto_text);
  sqlite3_bind_double(st, 14, mem_wall_now());
  if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    *id = sqlite3_column_int64(st, 0);
    rc = sqlite3_step(st);
  }
  sqlite3_finalize(st);
  return rc == SQLITE_DONE ? KOPE_OK : sq_fail(s, rc, "storing a digest", err);
}

/* Supporting Cases only ever join a key (a Case never changes key), so
 * adding the missing links is enough. */
static int digest_link(sq *s, int64_t id, const kope_mem_digest *d, kope_err *err)
{
  sqlite3_stmt *st = NULL;
  size_t i;
  int rc = sq_prep(s, "INSERT OR IGNORE INTO digest_cases(digest_id, case_id) VALUES (?1, ?2)",
                   &st, err);

  for (i = 0; rc == KOPE_OK && i < d->n_case_ids; i++) {
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_int64(st, 2, d->case_ids[i]);
    rc = sq_run(s, st, "linking a digest", err);
  }
  sqlite3_finalize(st);
  return rc;
}

int sq_digest_put(void *impl, const kope_mem_digest *d, kope_err *err)
{
  sq *s = impl;
  int64_t id = 0;
  int rc = digest_upsert(s, d, &id, err);

  if (rc == KOPE_OK)
    rc = digest_link(s, id, d, err);
  return rc;
}

void sq_read_digest(sqlite3_stmt *st, kope_mem_digest *d)
{
  int i;

  memset(d, 0, sizeof *d);
  d->id = sqlite3_column_int64(st, 0);
  d->target = sq_col_text0(st, 1);
  d->category = sq_col_text0(st, 2);
  d->layer = sq_col_text0(st, 3);
  d->thought_id = sq_col_text0(st, 4);
  d->title = sq_col_text(st, 5);
  d->attempts = sqlite3_column_int64(st, 6);
  d->n_correct = sqlite3_column_int64(st, 7);
  for (i = 0; i < KOPE_LABEL_COUNT; i++)
    d->n_label[i] = sqlite3_column_int64(st, 8 + i);
  d->median_ratio = sqlite3_column_double(st, 12);
  d->text = sq_col_text0(st, 13);
  d->auto_text = sq_col_text0(st, 14);
  d->has_policy_text = sqlite3_column_int(st, 15);
  d->updated = sqlite3_column_double(st, 16);
}

static int digest_ids(sq *s, kope_mem_digest *d, kope_err *err)
{
  sqlite3_stmt *st = sq_stmt(s, SQ_DIGEST_IDS, err);
  mem_ids ids = {0};
  int rc;

  if (!st)
    return SQ_ERRCODE(err);
  sqlite3_bind_int64(st, 1, d->id);
  while ((rc = sqlite3_step(st)) == SQLITE_ROW)
    mem_ids_push(&ids, sqlite3_column_int64(st, 0));
  sqlite3_reset(st);
  d->case_ids = ids.v;
  d->n_case_ids = ids.n;
  return rc == SQLITE_DONE ? KOPE_OK : sq_fail(s, rc, "reading a digest", err);
}

static void digest_row(sq *s, sqlite3_stmt *st, void *out)
{
  (void)s;
  sq_read_digest(st, out);
}

int sq_digest_get(void *impl, int64_t id, kope_mem_digest *out, kope_err *err)
{
  sq *s = impl;
  int rc;

  memset(out, 0, sizeof *out);
  rc = sq_get_by_id(s, sq_stmt(s, SQ_DIGEST_GET, err), id, "digest", digest_row, out, err);
  return rc == KOPE_OK ? digest_ids(s, out, err) : rc;
}

static int digests_push(kope_mem_digest **v, size_t *n, size_t *cap)
{
  if (*n == *cap) {
    size_t c = *cap ? 2 * *cap : 16;
    kope_mem_digest *nv = realloc(*v, c * sizeof *nv);
    if (!nv)
      return -1;
    *v = nv;
    *cap = c;
  }
  return 0;
}

int sq_digest_list(void *impl, const kope_mem_filter *f, size_t limit, int with_ids,
                   kope_mem_digest **out, size_t *n, kope_err *err)
{
  sq *s = impl;
  sqlite3_stmt *st = NULL;
  kope_buf sql;
  size_t cap = 0;
  int rc;

  *out = NULL;
  *n = 0;
  kope_buf_init(&sql, 0);
  kope_buf_puts(&sql, "SELECT " SQ_DIGEST_COLS " FROM digests WHERE 1");
  kope_buf_puts(&sql, f->target ? " AND target = ?1" : "");
  kope_buf_puts(&sql, f->category ? " AND category = ?2" : "");
  kope_buf_puts(&sql, f->layer ? " AND layer = ?3" : "");
  kope_buf_puts(&sql, f->thought_id ? " AND thought_id = ?4" : "");
  kope_buf_puts(&sql, " ORDER BY attempts DESC, id LIMIT ?5");
  rc = sq_prep(s, sql.data, &st, err);
  kope_buf_release(&sql);
  if (rc != KOPE_OK)
    return rc;
  if (f->target) sq_bind_text(st, 1, f->target);
  if (f->category) sq_bind_text(st, 2, f->category);
  if (f->layer) sq_bind_text(st, 3, f->layer);
  if (f->thought_id) sq_bind_text(st, 4, f->thought_id);
  sqlite3_bind_int64(st, 5, limit ? (sqlite3_int64)limit : -1);
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    if (digests_push(out, n, &cap) != 0) {
      rc = SQLITE_NOMEM;
      break;
    }
    sq_read_digest(st, &(*out)[(*n)++]);
  }
  sqlite3_finalize(st);
  rc = rc == SQLITE_DONE ? KOPE_OK : sq_fail(s, rc, "listing digests", err);
  for (size_t i = 0; rc == KOPE_OK && with_ids && i < *n; i++)
    rc = digest_ids(s, &(*out)[i], err);
  return rc;
}

int sq_digest_set_text(void *impl, int64_t id, const char *text, kope_err *err)
{
  sq *s = impl;
  sqlite3_stmt *st = NULL;
  int rc = sq_txn(s, MEM_TXN_BEGIN, err);

  if (rc != KOPE_OK)
    return rc;
  rc = sq_prep(s, "UPDATE digests SET policy_text = ?2 WHERE id = ?1", &st, err);
  if (rc == KOPE_OK) {
    sqlite3_bind_int64(st, 1, id);
    sq_bind_text(st, 2, text);
    rc = sq_run(s, st, "updating a digest", err);
  }
  if (rc == KOPE_OK && sqlite3_changes(s->h) == 0)
    rc = kope_err_set(err, KOPE_EINPUT, "no digest with id %lld in %s", (long long)id,
                      s->path);
  sqlite3_finalize(st);
  if (rc != KOPE_OK) {
    sq_txn(s, MEM_TXN_ROLLBACK, NULL);
    return rc;
  }
  return sq_txn(s, MEM_TXN_COMMIT, err);
}

/* ---- statistics ---------------------------------------------------------- */

static int group_counts(sq *s, const char *sql, int labels, kope_mem_count **out, size_t *n,
                        kope_err *err)
{
  sqlite3_stmt *st = NULL;
  size_t cap = 0;
  int rc = sq_prep(s, sql, &st, err);

  if (rc != KOPE_OK)
    return rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    if (*n == cap) {
      kope_mem_count *v = realloc(*out, (cap = cap ? 2 * cap : 16) * sizeof *v);
      if (!v) {
        rc = SQLITE_NOMEM;
        break;
      }
      *out = v;
    }
    (*out)[*n].key = labels ? kope_strdup(kope_mem_label_name(sqlite3_column_int(st, 0)))
                            : sq_col_text0(st, 0);
    (*out)[*n].n = sqlite3_column_int64(st, 1);
    (*n)++;
  }
  sqlite3_finalize(st);
  return rc == SQLITE_DONE ? KOPE_OK : sq_fail(s, rc, "counting", err);
}

int sq_stats(void *impl, kope_mem_stats *st, kope_err *err)
{
  sq *s = impl;
  int rc = KOPE_OK;

  st->schema = s->schema;
  if (rc == KOPE_OK) rc = sq_query_int(s, "SELECT count(*) FROM cases", 0, &st->cases, err);
  if (rc == KOPE_OK) rc = sq_query_int(s, "SELECT count(*) FROM sessions", 0, &st->sessions, err);
  if (rc == KOPE_OK) rc = sq_query_int(s, "SELECT count(*) FROM journals", 0, &st->journals, err);
  if (rc == KOPE_OK) rc = sq_query_int(s, "SELECT count(*) FROM digests", 0, &st->digests, err);
  if (rc == KOPE_OK) rc = sq_query_int(s, "SELECT count(*) FROM kernel_sources", 0, &st->sources, err);
  if (rc == KOPE_OK)
    rc = sq_query_int(s, "SELECT coalesce(sum(bytes), 0) FROM kernel_sources", 0,
                      &st->source_bytes, err);
  if (rc == KOPE_OK) rc = sq_query_int(s, "SELECT count(*) FROM imports", 0, &st->imports, err);
  if (rc == KOPE_OK)
    rc = sq_query_int(s, "SELECT count(*) FROM hw_profiles", 0, &st->hw_profiles, err);
  if (rc == KOPE_OK)
    rc = group_counts(s, "SELECT op, count(*) FROM cases GROUP BY 1 ORDER BY 2 DESC, 1", 0,
                      &st->by_op, &st->n_op, err);
  if (rc == KOPE_OK)
    rc = group_counts(s, "SELECT coalesce(target, '(none)'), count(*) FROM cases GROUP BY 1 "
                      "ORDER BY 2 DESC, 1", 0, &st->by_target, &st->n_target, err);
  if (rc == KOPE_OK)
    rc = group_counts(s, "SELECT label, count(*) FROM case_scores GROUP BY 1 ORDER BY 1", 1,
                      &st->by_label, &st->n_label, err);
  if (rc == KOPE_OK)
    rc = group_counts(s, "SELECT verdict, count(*) FROM cases GROUP BY 1 ORDER BY 2 DESC, 1",
                      0, &st->by_verdict, &st->n_verdict, err);
  return rc;
}

/* ---- retention ---------------------------------------------------------- */

#define OLD_JOURNALS \
  " FROM journals WHERE id NOT IN (SELECT id FROM journals ORDER BY id DESC LIMIT ?1)"

/* Sources kept: those of the newest ?1 Cases and each op/target's best. */
#define KEEP_SOURCES                                                               \
  "WITH recent AS (SELECT code_before_hash b, code_after_hash a, diff_hash d "      \
  "FROM cases ORDER BY id DESC LIMIT ?1), "                                         \
  "best AS (SELECT a FROM (SELECT code_after_hash a, row_number() OVER "            \
  "(PARTITION BY op, target ORDER BY speedup DESC, id DESC) rn FROM cases "         \
  "WHERE verdict = 'correct' AND correct = 1 AND speedup > 0) WHERE rn = 1), "      \
  "keep(h) AS (SELECT b FROM recent UNION SELECT a FROM recent UNION "              \
  "SELECT d FROM recent UNION SELECT a FROM best) "
#define OLD_SOURCES \
  " FROM kernel_sources WHERE hash NOT IN (SELECT h FROM keep WHERE h IS NOT NULL)"

static int gc_run(sq *s, const kope_mem_gc_opts *o, kope_mem_gc_stats *st, kope_err *err)
{
  int rc = sq_query_int(s, "SELECT count(*)" OLD_JOURNALS, o->keep_journals,
                        &st->journals_dropped, err);

  if (rc == KOPE_OK)
    rc = sq_query_int(s, KEEP_SOURCES "SELECT count(*)" OLD_SOURCES, o->keep_sources,
                      &st->sources_dropped, err);
  if (rc == KOPE_OK)
    rc = sq_query_int(s, KEEP_SOURCES "SELECT coalesce(sum(bytes), 0)" OLD_SOURCES,
                      o->keep_sources, &st->source_bytes_dropped, err);
  if (rc != KOPE_OK || o->dry_run)
    return rc;
  if (st->journals_dropped)
    rc = sq_query_int(s, "DELETE" OLD_JOURNALS, o->keep_journals, &(int64_t){0}, err);
  if (rc == KOPE_OK && st->journals_dropped)
    rc = sq_fts_journals_deleted(s, err);
  if (rc == KOPE_OK && st->sources_dropped)
    rc = sq_query_int(s, KEEP_SOURCES "DELETE" OLD_SOURCES, o->keep_sources, &(int64_t){0},
                      err);
  return rc;
}

int sq_gc(void *impl, const kope_mem_gc_opts *o, kope_mem_gc_stats *st, kope_err *err)
{
  sq *s = impl;
  int rc = sq_txn(s, MEM_TXN_BEGIN, err);

  if (rc == KOPE_OK && (rc = sq_fts_sync(s, err)) != KOPE_OK)   /* deletes need them indexed */
    sq_txn(s, MEM_TXN_ROLLBACK, NULL);
  if (rc != KOPE_OK)
    return rc;
  if ((rc = gc_run(s, o, st, err)) != KOPE_OK) {
    sq_txn(s, MEM_TXN_ROLLBACK, NULL);
    return rc;
  }
  if ((rc = sq_txn(s, MEM_TXN_COMMIT, err)) != KOPE_OK)
    return rc;
  if (o->vacuum && !o->dry_run && s->depth == 0)
    rc = sq_exec(s, "VACUUM", err);
  return rc;
}

/* ---- imports -------------------------------------------------------------- */

int sq_import_begin(void *impl, const char *src_db, const char *src_path,
                    int64_t *import_id, kope_err *err)
{
  sq *s = impl;
  sqlite3_stmt *st = NULL;
  int rc = sq_prep(s, "INSERT INTO imports(source_db, source_path, imported) "
                   "VALUES (?1, ?2, ?3)", &st, err);

  if (rc != KOPE_OK)
    return rc;
  sq_bind_text(st, 1, src_db);
  sq_bind_text(st, 2, src_path);
  sqlite3_bind_double(st, 3, mem_wall_now());
  if ((rc = sq_run(s, st, "recording an import", err)) == KOPE_OK)
    *import_id = sqlite3_last_insert_rowid(s->h);
  sqlite3_finalize(st);
  return rc;
}

int sq_import_end(void *impl, const kope_mem_import_stats *is, kope_err *err)
{
  sq *s = impl;
  sqlite3_stmt *st = NULL;
  int rc = sq_prep(s, "UPDATE imports SET cases = ?2, sessions = ?3, journals = ?4, "
                   "sources = ?5 WHERE id = ?1", &st, err);

  if (rc != KOPE_OK)
    return rc;
  sqlite3_bind_int64(st, 1, is->import_id);
  sqlite3_bind_int64(st, 2, is->cases_new);
  sqlite3_bind_int64(st, 3, is->sessions_new);
  sqlite3_bind_int64(st, 4, is->journals_new);
  sqlite3_bind_int64(st, 5, is->sources_new);
  rc = sq_run(s, st, "recording an import", err);
  sqlite3_finalize(st);
  return rc;
}

/* ---- integrity --------------------------------------------------------------- */

static int rows_report(sq *s, const char *sql, const char *ok_row, kope_buf *report,
                       int *bad, kope_err *err)
{
  sqlite3_stmt *st = NULL;
  int rc = sq_prep(s, sql, &st, err), n = 0;

  if (rc != KOPE_OK)
    return rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    const char *t = (const char *)sqlite3_column_text(st, 0);
    if (ok_row && t && !strcmp(t, ok_row))
      continue;
    if (report && n++ < 10)
      kope_buf_printf(report, "%s: %s\n", sql, t ? t : "(row)");
    *bad = 1;
  }
  sqlite3_finalize(st);
  return rc == SQLITE_DONE ? KOPE_OK : sq_fail(s, rc, "checking integrity", err);
}

int sq_integrity(void *impl, kope_buf *report, kope_err *err)
{
  sq *s = impl;
  int64_t ncases = 0, nfts = 0, nscores = 0, ndocs = 0, nlag = 0;
  int bad = 0;
  int rc = rows_report(s, "PRAGMA integrity_check", "ok", report, &bad, err);

  if (rc == KOPE_OK)
    rc = rows_report(s, "PRAGMA foreign_key_check", NULL, report, &bad, err);
  if (rc == KOPE_OK)
    rc = sq_query_int(s, "SELECT count(*) FROM cases", 0, &ncases, err);
  if (rc == KOPE_OK)
    rc = sq_query_int(s, "SELECT (SELECT count(*) FROM journals WHERE id <= (SELECT "
                      "CAST(value AS INTEGER) FROM meta WHERE key = 'fts_journal_wm')) + "
                      "(SELECT count(*) FROM digests) + (SELECT count(*) FROM cases WHERE "
                      "id <= (SELECT CAST(value AS INTEGER) FROM meta WHERE key = "
                      "'fts_case_wm'))", 0, &ndocs, err);
  if (rc == KOPE_OK)
    rc = sq_query_int(s, "SELECT count(*) FROM mem_fts_docsize", 0, &nfts, err);
  if (rc == KOPE_OK)
    rc = sq_query_int(s, "SELECT count(*) FROM case_scores", 0, &nscores, err);
  if (rc == KOPE_OK)   /* the rank indexes' copy must stay within its slack */
    rc = sq_query_int(s, "SELECT count(*) FROM case_scores WHERE abs(rank - rank_ix) > "
                      "?1 * 1e-6 * rank_ix + 1e-12 OR abs(rank - d_score * confidence) > "
                      "1e-9 * (1 + rank)", (int64_t)(SQ_RANK_SLACK * 1e6), &nlag, err);
  if (rc == KOPE_OK && nlag) {
    if (report)
      kope_buf_printf(report, "%lld Cases have a stale rank index entry\n", (long long)nlag);
    bad = 1;
  }
  if (rc == KOPE_OK && (ndocs != nfts || ncases != nscores)) {
    if (report)
      kope_buf_printf(report, "%lld Cases with %lld score rows; %lld documents with %lld "
                      "full-text rows\n", (long long)ncases, (long long)nscores,
                      (long long)ndocs, (long long)nfts);
    bad = 1;
  }
  if (rc != KOPE_OK)
    return rc;
  if (bad)
    return kope_err_set(err, KOPE_EINPUT, "%s: integrity check failed", s->path);
  if (report)
    kope_buf_puts(report, "integrity: ok\n");
  return KOPE_OK;
}
