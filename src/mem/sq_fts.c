/*
 * SQLite engine: feeding the full-text index (mem_fts).
 *
 * FTS5 pays about 0.1 ms for every transaction that writes it (a new
 * segment and its bookkeeping) but only microseconds per row inside one.
 * So a new Case or Journal is not indexed in its own transaction: rows
 * whose id is above the watermark kept in meta (fts_case_wm,
 * fts_journal_wm) are waiting, and they are indexed together, inside the
 * writing transaction once SQ_FTS_BATCH of them have been added through
 * this handle, and before any search, so a search sees every committed
 * row. Ids only grow (Cases are never deleted; gc lowers the Journal
 * watermark after deleting, when everything was indexed), so "above the
 * watermark" is exactly "not yet indexed", whichever process wrote it.
 */
#include "mem/sq.h"

#define SQ_FTS_BATCH 64

static const char *const wm_key[2] = {"fts_case_wm", "fts_journal_wm"};

/* One integer from a cached statement, with an optional key for ?1. */
static int one_int(sq *s, int which, const char *key, int64_t *v, kope_err *err)
{
  sqlite3_stmt *st = sq_stmt(s, which, err);
  int rc;

  *v = 0;
  if (!st)
    return SQ_ERRCODE(err);
  if (key)
    sq_bind_text(st, 1, key);
  if ((rc = sqlite3_step(st)) == SQLITE_ROW)
    *v = sqlite3_column_int64(st, 0);
  sqlite3_reset(st);
  return rc == SQLITE_ROW || rc == SQLITE_DONE ? KOPE_OK : sq_fail(s, rc, "indexing text", err);
}

static int set_wm(sq *s, int kind, int64_t v, kope_err *err)
{
  sqlite3_stmt *st = sq_stmt(s, SQ_META_SET, err);

  if (!st)
    return SQ_ERRCODE(err);
  sq_bind_text(st, 1, wm_key[kind]);
  sqlite3_bind_int64(st, 2, v);
  return sq_run(s, st, "indexing text", err);
}

/* Index the rows of one kind above its watermark; advance it. */
static int flush_kind(sq *s, int kind, kope_err *err)
{
  int64_t wm = 0, top = 0;
  sqlite3_stmt *st;
  int rc = one_int(s, SQ_META_INT, wm_key[kind], &wm, err);

  if (rc == KOPE_OK)
    rc = one_int(s, kind ? SQ_MAX_JOURNAL : SQ_MAX_CASE, NULL, &top, err);
  if (rc != KOPE_OK || top <= wm)
    return rc;
  if (!(st = sq_stmt(s, kind ? SQ_FLUSH_JOURNALS : SQ_FLUSH_CASES, err)))
    return SQ_ERRCODE(err);
  sqlite3_bind_int64(st, 1, wm);
  if ((rc = sq_run(s, st, "indexing text", err)) != KOPE_OK)
    return rc;
  return set_wm(s, kind, top, err);
}

static int flush(sq *s, kope_err *err)
{
  int rc = flush_kind(s, MEM_T_CASE, err);

  if (rc == KOPE_OK)
    rc = flush_kind(s, MEM_T_JOURNAL, err);
  if (rc == KOPE_OK)
    s->queued = 0;
  return rc;
}

int sq_fts_queue(sq *s, kope_err *err)
{
  return ++s->queued >= SQ_FTS_BATCH ? flush(s, err) : KOPE_OK;
}

/* Is any row of either kind above its watermark? */
int sq_fts_waiting(sq *s, int *yes, kope_err *err)
{
  int64_t wm, top;
  int kind, rc = KOPE_OK;

  *yes = 0;
  for (kind = 0; kind < 2 && rc == KOPE_OK && !*yes; kind++) {
    rc = one_int(s, SQ_META_INT, wm_key[kind], &wm, err);
    if (rc == KOPE_OK)
      rc = one_int(s, kind ? SQ_MAX_JOURNAL : SQ_MAX_CASE, NULL, &top, err);
    *yes = rc == KOPE_OK && top > wm;
  }
  return rc;
}

int sq_fts_sync(sq *s, kope_err *err)
{
  int yes = 0, rc;

  if (s->reading)
    return KOPE_OK;
  rc = sq_fts_waiting(s, &yes, err);
  if (rc != KOPE_OK || !yes || sqlite3_db_readonly(s->h, "main"))
    return rc;
  if ((rc = sq_txn(s, MEM_TXN_BEGIN, err)) != KOPE_OK)
    return rc;
  if ((rc = flush(s, err)) != KOPE_OK) {
    sq_txn(s, MEM_TXN_ROLLBACK, NULL);
    return rc;
  }
  return sq_txn(s, MEM_TXN_COMMIT, err);
}

int sq_fts_journals_deleted(sq *s, kope_err *err)
{
  int64_t top = 0;
  int rc = one_int(s, SQ_MAX_JOURNAL, NULL, &top, err);

  return rc == KOPE_OK ? set_wm(s, MEM_T_JOURNAL, top, err) : rc;
}
