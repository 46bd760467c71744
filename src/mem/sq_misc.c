/*
 * SQLite engine: sessions, Journals (their full-text index is kept by
 * triggers), content-addressed kernel sources (the SHA-256 of the text is
 * the key, so identical kernels are stored once) and hardware profiles.
 */
#include <stdlib.h>
#include <string.h>
#include "mem/sq.h"

/* ---- sessions ------------------------------------------------------------ */

int sq_session_put(void *impl, const kope_mem_session *ses, const mem_origin *o,
                   int64_t *id, kope_err *err)
{
  sq *s = impl;
  sqlite3_stmt *st = NULL;
  int rc = sq_prep(s, "INSERT INTO sessions(op, target, hw, policy, budget, started, ended, "
                "status, origin_db, origin_id, import_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, "
                "?7, ?8, ?9, ?10, ?11)", &st, err);

  if (rc != KOPE_OK)
    return rc;
  sq_bind_text(st, 1, ses->op);
  sq_bind_text(st, 2, ses->target);
  sq_bind_text(st, 3, ses->hw);
  sq_bind_text(st, 4, ses->policy);
  sq_bind_text(st, 5, ses->budget);
  sqlite3_bind_double(st, 6, ses->started > 0 ? ses->started : mem_wall_now());
  if (ses->ended > 0)
    sqlite3_bind_double(st, 7, ses->ended);
  sq_bind_text(st, 8, ses->status);
  if (o && o->db) {
    sq_bind_text(st, 9, o->db);
    sqlite3_bind_int64(st, 10, o->id);
    sq_bind_id(st, 11, o->import_id);
  }
  rc = sq_run(s, st, "storing a session", err);
  if (rc == KOPE_OK && id)
    *id = sqlite3_last_insert_rowid(s->h);
  sqlite3_finalize(st);
  return rc;
}

int sq_session_end(void *impl, int64_t id, const char *status, kope_err *err)
{
  sq *s = impl;
  sqlite3_stmt *st = NULL;
  int rc = sq_prep(s, "UPDATE sessions SET ended = ?2, status = coalesce(?3, 'done') "
                "WHERE id = ?1", &st, err);

  if (rc != KOPE_OK)
    return rc;
  sqlite3_bind_int64(st, 1, id);
  sqlite3_bind_double(st, 2, mem_wall_now());
  sq_bind_text(st, 3, status);
  rc = sq_run(s, st, "ending a session", err);
  if (rc == KOPE_OK && sqlite3_changes(s->h) == 0)
    rc = kope_err_set(err, KOPE_EINPUT, "no session with id %lld in %s", (long long)id,
                      s->path);
  sqlite3_finalize(st);
  return rc;
}

static void session_row(sq *s, sqlite3_stmt *st, void *o)
{
  kope_mem_session *out = o;

  out->id = sqlite3_column_int64(st, 0);
  out->op = sq_col_text(st, 1);
  out->target = sq_col_text(st, 2);
  out->hw = sq_col_text(st, 3);
  out->policy = sq_col_text(st, 4);
  out->budget = sq_col_text(st, 5);
  out->started = sqlite3_column_double(st, 6);
  out->ended = sq_col_real(st, 7, 0.0);
  out->status = sq_col_text(st, 8);
  out->uid = sqlite3_column_type(st, 9) == SQLITE_NULL
                 ? mem_uid(s->uuid, out->id)
                 : mem_uid((const char *)sqlite3_column_text(st, 9),
                           sqlite3_column_int64(st, 10));
}

int sq_session_get(void *impl, int64_t id, kope_mem_session *out, kope_err *err)
{
  sq *s = impl;
  sqlite3_stmt *st = NULL;
  int rc = sq_prep(s, "SELECT id, op, target, hw, policy, budget, started, ended, status, "
                "origin_db, origin_id FROM sessions WHERE id = ?1", &st, err);

  memset(out, 0, sizeof *out);
  if (rc == KOPE_OK)
    rc = sq_get_by_id(s, st, id, "session", session_row, out, err);
  sqlite3_finalize(st);
  return rc;
}

/* ---- Journals ------------------------------------------------------------- */

static int must_exist(sq *s, int kind, int64_t id, kope_err *err)
{
  int yes = 1, rc = id ? sq_exists(s, kind, id, &yes, err) : KOPE_OK;

  if (rc == KOPE_OK && !yes)
    rc = kope_err_set(err, KOPE_EINPUT, "no %s with id %lld in %s",
                      kind == MEM_U_CASE ? "Case" : "session", (long long)id, s->path);
  return rc;
}

int sq_journal_put(void *impl, const kope_mem_journal *j, const mem_origin *o,
                   int64_t *id, kope_err *err)
{
  sq *s = impl;
  sqlite3_stmt *st;
  int rc;

  if ((rc = must_exist(s, MEM_U_CASE, j->case_id, err)) != KOPE_OK ||
      (rc = must_exist(s, MEM_U_SESSION, j->session_id, err)) != KOPE_OK)
    return rc;
  if (!(st = sq_stmt(s, SQ_JOURNAL_INS, err)))
    return SQ_ERRCODE(err);
  sq_bind_id(st, 1, j->case_id);
  sq_bind_id(st, 2, j->session_id);
  sqlite3_bind_double(st, 3, j->created > 0 ? j->created : mem_wall_now());
  sq_bind_text(st, 4, j->body);
  if (o && o->db) {
    sq_bind_text(st, 5, o->db);
    sqlite3_bind_int64(st, 6, o->id);
    sq_bind_id(st, 7, o->import_id);
  }
  if ((rc = sq_run(s, st, "storing a Journal entry", err)) != KOPE_OK)
    return rc;
  if (id)
    *id = sqlite3_last_insert_rowid(s->h);
  return sq_fts_queue(s, err);
}

static void read_journal(sq *s, sqlite3_stmt *st, void *out)
{
  kope_mem_journal *j = out;

  j->id = sqlite3_column_int64(st, 0);
  j->case_id = sqlite3_column_int64(st, 1);
  j->session_id = sqlite3_column_int64(st, 2);
  j->created = sqlite3_column_double(st, 3);
  j->body = sq_col_text0(st, 4);
  j->uid = sqlite3_column_type(st, 5) == SQLITE_NULL
               ? mem_uid(s->uuid, j->id)
               : mem_uid((const char *)sqlite3_column_text(st, 5),
                         sqlite3_column_int64(st, 6));
}

int sq_journal_get(void *impl, int64_t id, kope_mem_journal *out, kope_err *err)
{
  sq *s = impl;

  memset(out, 0, sizeof *out);
  return sq_get_by_id(s, sq_stmt(s, SQ_JOURNAL_GET, err), id, "Journal entry", read_journal,
                      out, err);
}

int sq_journal_each(void *impl, int64_t case_id, mem_journal_fn fn, void *ctx,
                    kope_err *err)
{
  sq *s = impl;
  sqlite3_stmt *st = NULL;
  int rc = sq_prep(s, case_id ? "SELECT id, case_id, session_id, created, body, origin_db, "
                             "origin_id FROM journals WHERE case_id = ?1 ORDER BY id"
                           : "SELECT id, case_id, session_id, created, body, origin_db, "
                             "origin_id FROM journals ORDER BY id", &st, err);

  if (rc != KOPE_OK)
    return rc;
  if (case_id)
    sqlite3_bind_int64(st, 1, case_id);
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    kope_mem_journal j = {0};
    int stop;
    read_journal(s, st, &j);
    stop = fn(&j, ctx);
    free(j.body);
    free(j.uid);
    if (stop) {
      rc = SQLITE_DONE;
      break;
    }
  }
  sqlite3_finalize(st);
  return rc == SQLITE_DONE ? KOPE_OK : sq_fail(s, rc, "reading Journals", err);
}

/* ---- sources and hardware -------------------------------------------------- */

int sq_source_put(void *impl, const char *body, char hash[65], int *added, kope_err *err)
{
  sq *s = impl;
  size_t len = strlen(body);
  sqlite3_stmt *st = sq_stmt(s, SQ_SRC_INS, err);
  int rc;

  kope_sha256_hex(body, len, hash);
  if (!st)
    return SQ_ERRCODE(err);
  sq_bind_text(st, 1, hash);
  sqlite3_bind_text(st, 2, body, (int)len, SQLITE_STATIC);
  sqlite3_bind_int64(st, 3, (sqlite3_int64)len);
  sqlite3_bind_double(st, 4, mem_wall_now());
  rc = sq_run(s, st, "storing a kernel source", err);
  if (added)
    *added = rc == KOPE_OK && sqlite3_changes(s->h) > 0;
  sqlite3_clear_bindings(st);   /* body was bound without a copy */
  return rc;
}

int sq_source_get(void *impl, const char *hash, char **body, kope_err *err)
{
  sq *s = impl;
  sqlite3_stmt *st = sq_stmt(s, SQ_SRC_GET, err);
  int rc;

  *body = NULL;
  if (!st)
    return SQ_ERRCODE(err);
  sq_bind_text(st, 1, hash);
  if ((rc = sqlite3_step(st)) == SQLITE_ROW)
    *body = sq_col_text(st, 0);
  sqlite3_reset(st);
  return rc == SQLITE_ROW || rc == SQLITE_DONE ? KOPE_OK
                                                : sq_fail(s, rc, "reading a source", err);
}

int sq_hw_put(void *impl, const char *fingerprint, const char *profile, int *added,
              kope_err *err)
{
  sq *s = impl;
  sqlite3_stmt *st = NULL;
  int rc = sq_prep(s, "INSERT INTO hw_profiles(fingerprint, profile, first_seen, last_seen) "
                "VALUES (?1, ?2, ?3, ?3) ON CONFLICT(fingerprint) DO UPDATE SET "
                "profile = coalesce(excluded.profile, profile), last_seen = excluded.last_seen "
                "RETURNING first_seen = last_seen", &st, err);

  if (rc != KOPE_OK)
    return rc;
  sq_bind_text(st, 1, fingerprint);
  sq_bind_text(st, 2, profile);
  sqlite3_bind_double(st, 3, mem_wall_now());
  rc = sqlite3_step(st);
  if (added)
    *added = rc == SQLITE_ROW && sqlite3_column_int(st, 0);
  while (rc == SQLITE_ROW)
    rc = sqlite3_step(st);
  sqlite3_finalize(st);
  return rc == SQLITE_DONE ? KOPE_OK : sq_fail(s, rc, "storing a hardware profile", err);
}

int sq_hw_each(void *impl, mem_kv_fn fn, void *ctx, kope_err *err)
{
  sq *s = impl;
  sqlite3_stmt *st = NULL;
  int rc = sq_prep(s, "SELECT fingerprint, coalesce(profile, '') FROM hw_profiles "
                "ORDER BY fingerprint", &st, err);

  if (rc != KOPE_OK)
    return rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW)
    if (fn((const char *)sqlite3_column_text(st, 0), (const char *)sqlite3_column_text(st, 1),
           ctx)) {
      rc = SQLITE_DONE;
      break;
    }
  sqlite3_finalize(st);
  return rc == SQLITE_DONE ? KOPE_OK : sq_fail(s, rc, "reading hardware profiles", err);
}
