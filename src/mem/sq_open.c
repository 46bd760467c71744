/*
 * SQLite engine: opening and validating a store file, connection
 * settings, error mapping, the prepared-statement cache, nestable
 * transactions and the engine table.
 *
 * Opening never writes to a file before it has been recognised as a kope
 * database: the header, PRAGMA application_id and PRAGMA user_version are
 * read first, and only then is WAL mode set or a migration run. Settings:
 * WAL journal, synchronous=NORMAL (a committed transaction survives a
 * killed process; KOPE_DB_DURABLE adds an fsync per commit for power
 * loss), foreign keys on, a busy timeout so several kope processes can
 * share the file. Writes take the lock up front (BEGIN IMMEDIATE). A
 * writable handle checkpoints the WAL in a helper thread (sq_ckpt.c;
 * SQLite's automatic checkpoint every 16000 pages is the fallback when
 * the helper cannot start). A retrieval reads in one snapshot
 * (MEM_TXN_READ), so its few dozen statements take the WAL read lock once.
 *
 * Page cache: 4 MiB, not more. When a b-tree split has to reorder the
 * numbers of its new pages, SQLite parks one page under a temporary
 * number far beyond the end of the file (the page after the lock byte,
 * 262145 with 4 KiB pages); the end of that transaction then truncates
 * the cache above the file's size by scanning every cached page (SQLite
 * 3.40 pcache1TruncateUnsafe, its full-scan branch). About a third of
 * the commits of the insertion benchmark do that (counted under a
 * debugger at 5,000 Cases), and with the former
 * 32 MiB cache (8,000 pages, full from about 16,000 Cases on) the scans
 * were 12 % of the insertion CPU and the main reason why the cost per
 * Case grew with the store. A page that is not in the WAL is read from
 * the memory map (a copy, no system call), so the smaller cache costs a
 * few more reads of WAL frames per commit (7.5 instead of 1.2 at 40,000).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "mem/sq.h"

#define SQ_CACHE_KIB 4000
/* Dirty pages a transaction may hold before it writes some to the WAL
 * early: a big transaction (an import, 500 Cases of the bulk path) keeps
 * its pages in memory as with the former 32 MiB cache, and the cache
 * shrinks back to SQ_CACHE_KIB when they are committed. */
#define SQ_SPILL_PAGES 8000
#define SQ_STR_(x) #x
#define SQ_STR(x) SQ_STR_(x)

static const char *const stmt_sql[SQ_COUNT] = {
  [SQ_NODE_GET] = "SELECT prev_id, a, step_ratio, d_score, succ_sum, n_succ, confidence, "
                  "label, rank_ix FROM case_scores WHERE id = ?1",
  /* rank moved within the slack: the rank indexes stay untouched */
  [SQ_NODE_PUT] = "UPDATE case_scores SET succ_sum = ?2, n_succ = ?3, d_score = ?4, "
                  "rank = ?5 WHERE id = ?1",
  [SQ_NODE_PUT_IX] = "UPDATE case_scores SET succ_sum = ?2, n_succ = ?3, d_score = ?4, "
                     "rank = ?5, rank_ix = ?5 WHERE id = ?1",
  [SQ_NODE_PUT_FULL] = "UPDATE case_scores SET succ_sum = ?2, n_succ = ?3, d_score = ?4, "
                       "rank = ?5, rank_ix = ?5, step_ratio = ?6, label = ?7 WHERE id = ?1",
  [SQ_SCORE_INS] = "INSERT INTO case_scores(id, prev_id, op, target, category, layer, "
                   "thought_id, hw, a, step_ratio, label, d_score, confidence, rank, rank_ix) "
                   "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?14)",
  [SQ_CASE_INS] = "INSERT INTO cases(" MEM_CASE_FIELDS(SQ_INS_COL) "err_sig, origin_db, "
                  "origin_id, import_id) VALUES (" MEM_CASE_FIELDS(SQ_INS_Q) "?, ?, ?, ?)",
  [SQ_CASE_GET] = "SELECT " SQ_CASE_COLS SQ_CASE_FROM " WHERE c.id = ?1",
  [SQ_CASE_BRIEF] = "SELECT label, rank, step_ratio, d_score, layer, target, hw "
                    "FROM case_scores WHERE id = ?1",
  [SQ_SRC_INS] = "INSERT OR IGNORE INTO kernel_sources(hash, body, bytes, created) "
                 "VALUES (?1, ?2, ?3, ?4)",
  [SQ_SRC_GET] = "SELECT body FROM kernel_sources WHERE hash = ?1",
  [SQ_SUCC] = "SELECT id FROM cases WHERE prev_id = ?1 ORDER BY id",
  [SQ_EXISTS_CASE] = "SELECT 1 FROM cases WHERE id = ?1",
  [SQ_EXISTS_SESSION] = "SELECT 1 FROM sessions WHERE id = ?1",
  [SQ_EXISTS_JOURNAL] = "SELECT 1 FROM journals WHERE id = ?1",
  [SQ_UID_CASE] = "SELECT id FROM cases WHERE origin_db = ?1 AND origin_id = ?2",
  [SQ_UID_SESSION] = "SELECT id FROM sessions WHERE origin_db = ?1 AND origin_id = ?2",
  [SQ_UID_JOURNAL] = "SELECT id FROM journals WHERE origin_db = ?1 AND origin_id = ?2",
  [SQ_JOURNAL_INS] = "INSERT INTO journals(case_id, session_id, created, body, origin_db, "
                     "origin_id, import_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
  [SQ_JOURNAL_GET] = "SELECT id, case_id, session_id, created, body, origin_db, origin_id "
                     "FROM journals WHERE id = ?1",
  [SQ_JOURNAL_CASE] = "SELECT case_id FROM journals WHERE id = ?1",
  /* How many rows match, counted up to a cap (rowid order stops early). */
  [SQ_PROBE] = "SELECT count(*) FROM (SELECT 1 FROM mem_fts WHERE mem_fts MATCH ?1 "
               "ORDER BY rowid DESC LIMIT ?2)",
  /* bm25 of the newest ?2 matches (the caller keeps the best). */
  [SQ_FTS] = "SELECT rowid, bm25(mem_fts) FROM mem_fts WHERE mem_fts MATCH ?1 "
             "ORDER BY rowid DESC LIMIT ?2",
  /* bm25 of every match, best first (search: AND of all terms). */
  [SQ_FTS_ALL] = "SELECT rowid, rank FROM mem_fts WHERE mem_fts MATCH ?1 ORDER BY rank "
                 "LIMIT ?2",
  [SQ_META_INT] = "SELECT CAST(value AS INTEGER) FROM meta WHERE key = ?1",
  [SQ_META_SET] = "INSERT INTO meta(key, value) VALUES (?1, ?2) ON CONFLICT(key) DO UPDATE "
                  "SET value = excluded.value",
  [SQ_MAX_CASE] = "SELECT coalesce(max(id), 0) FROM cases",
  [SQ_MAX_JOURNAL] = "SELECT coalesce(max(id), 0) FROM journals",
  [SQ_FLUSH_CASES] = "INSERT INTO mem_fts(rowid, body) SELECT id * 4, " CASE_FTS_BODY("")
                     " FROM cases WHERE id > ?1 ORDER BY id",
  [SQ_FLUSH_JOURNALS] = "INSERT INTO mem_fts(rowid, body) SELECT id * 4 + 1, body FROM "
                        "journals WHERE id > ?1 ORDER BY id",
  [SQ_FIX_SUCC] = "SELECT c.id FROM cases c JOIN case_scores s ON s.id = c.id WHERE "
                  "c.prev_id = ?1 AND c.verdict = 'correct' AND c.correct = 1 "
                  "ORDER BY s.rank DESC, c.id LIMIT 1",
  [SQ_FIX_NEXT] = "SELECT n.id FROM cases f JOIN cases n ON n.session_id = f.session_id "
                  "AND n.step > f.step WHERE f.id = ?1 AND n.verdict = 'correct' AND "
                  "n.correct = 1 ORDER BY n.step, n.id LIMIT 1",
  [SQ_DIGEST_GET] = "SELECT " SQ_DIGEST_COLS " FROM digests WHERE id = ?1",
  [SQ_DIGEST_IDS] = "SELECT case_id FROM digest_cases WHERE digest_id = ?1 ORDER BY case_id",
};

/* ---- errors and statement helpers ------------------------------------ */

static int status_of(int rc)
{
  switch (rc & 0xff) {
  case SQLITE_CORRUPT:
  case SQLITE_NOTADB:
  case SQLITE_FORMAT:
  case SQLITE_CONSTRAINT:
  case SQLITE_MISMATCH:
    return KOPE_EINPUT;
  case SQLITE_BUSY:
  case SQLITE_LOCKED:
  case SQLITE_READONLY:
  case SQLITE_CANTOPEN:
  case SQLITE_IOERR:
  case SQLITE_FULL:
  case SQLITE_PERM:
  case SQLITE_NOLFS:
  case SQLITE_PROTOCOL:
  case SQLITE_NOMEM:
  case SQLITE_AUTH:
    return KOPE_EENV;
  default:
    return KOPE_EINTERNAL;
  }
}

int sq_fail(sq *s, int rc, const char *what, kope_err *err)
{
  int code = status_of(rc);
  const char *hint = "";

  if ((rc & 0xff) == SQLITE_CORRUPT || (rc & 0xff) == SQLITE_NOTADB)
    hint = " (the file is corrupt or not a kope database)";
  else if ((rc & 0xff) == SQLITE_BUSY)
    hint = " (another process holds the database lock)";
  return kope_err_set(err, code, "%s: %s: %s%s", s->path, what,
                      s->h ? sqlite3_errmsg(s->h) : sqlite3_errstr(rc), hint);
}

sqlite3_stmt *sq_stmt(sq *s, int which, kope_err *err)
{
  sqlite3_stmt *st = s->st[which];
  int rc;

  if (st) {
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return st;
  }
  rc = sqlite3_prepare_v3(s->h, stmt_sql[which], -1, SQLITE_PREPARE_PERSISTENT, &st, NULL);
  if (rc != SQLITE_OK) {
    sq_fail(s, rc, "preparing a query", err);
    return NULL;
  }
  s->st[which] = st;
  return st;
}

int sq_exec(sq *s, const char *sql, kope_err *err)
{
  int rc = sqlite3_exec(s->h, sql, NULL, NULL, NULL);

  return rc == SQLITE_OK ? KOPE_OK : sq_fail(s, rc, "updating the store", err);
}

int sq_run(sq *s, sqlite3_stmt *st, const char *what, kope_err *err)
{
  int rc = sqlite3_step(st);

  sqlite3_reset(st);
  return rc == SQLITE_DONE || rc == SQLITE_ROW ? KOPE_OK : sq_fail(s, rc, what, err);
}

int sq_get_by_id(sq *s, sqlite3_stmt *st, int64_t id, const char *what, sq_row_fn read,
                 void *out, kope_err *err)
{
  char reading[64];
  int rc;

  if (!st)
    return SQ_ERRCODE(err);
  sqlite3_bind_int64(st, 1, id);
  if ((rc = sqlite3_step(st)) == SQLITE_ROW)
    read(s, st, out);
  sqlite3_reset(st);
  if (rc == SQLITE_DONE)
    return kope_err_set(err, KOPE_EINPUT, "no %s with id %lld in %s", what, (long long)id,
                        s->path);
  snprintf(reading, sizeof reading, "reading a %s", what);
  return rc == SQLITE_ROW ? KOPE_OK : sq_fail(s, rc, reading, err);
}

void sq_bind_text(sqlite3_stmt *st, int i, const char *v)
{
  if (v)
    sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT);
  else
    sqlite3_bind_null(st, i);
}

void sq_bind_real(sqlite3_stmt *st, int i, double v)
{
  if (v == v && v - v == 0.0)   /* finite */
    sqlite3_bind_double(st, i, v);
  else
    sqlite3_bind_null(st, i);
}

void sq_bind_id(sqlite3_stmt *st, int i, int64_t v)
{
  if (v)
    sqlite3_bind_int64(st, i, v);
  else
    sqlite3_bind_null(st, i);
}

char *sq_col_text(sqlite3_stmt *st, int i)
{
  const unsigned char *t = sqlite3_column_text(st, i);

  return t ? kope_strdup((const char *)t) : NULL;
}

char *sq_col_text0(sqlite3_stmt *st, int i)
{
  char *t = sq_col_text(st, i);

  return t ? t : kope_strdup("");
}

double sq_col_real(sqlite3_stmt *st, int i, double if_null)
{
  return sqlite3_column_type(st, i) == SQLITE_NULL ? if_null : sqlite3_column_double(st, i);
}

int sq_prep(sq *s, const char *sql, sqlite3_stmt **st, kope_err *err)
{
  int rc = sqlite3_prepare_v2(s->h, sql, -1, st, NULL);

  return rc == SQLITE_OK ? KOPE_OK : sq_fail(s, rc, "preparing a query", err);
}

int sq_query_int(sq *s, const char *sql, int64_t param, int64_t *v, kope_err *err)
{
  sqlite3_stmt *st = NULL;
  int rc = sq_prep(s, sql, &st, err);

  *v = 0;
  if (rc != KOPE_OK)
    return rc;
  if (sqlite3_bind_parameter_count(st) > 0)
    sqlite3_bind_int64(st, 1, param);
  rc = sqlite3_step(st);
  if (rc == SQLITE_ROW)
    *v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return rc == SQLITE_ROW || rc == SQLITE_DONE ? KOPE_OK : sq_fail(s, rc, "reading", err);
}

/* ---- transactions ------------------------------------------------------ */

static int txn_begin(sq *s, kope_err *err)
{
  int rc;

  if (s->depth++ > 0)
    return KOPE_OK;
  s->failed = 0;
  rc = sqlite3_exec(s->h, "BEGIN IMMEDIATE", NULL, NULL, NULL);
  if (rc != SQLITE_OK) {
    s->depth = 0;
    return sq_fail(s, rc, "starting a write", err);
  }
  return KOPE_OK;
}

static int txn_commit(sq *s, kope_err *err)
{
  int rc;

  if (s->depth == 0)
    return kope_err_set(err, KOPE_EINTERNAL, "commit without a transaction");
  if (--s->depth > 0)
    return KOPE_OK;
  if (s->failed) {
    sqlite3_exec(s->h, "ROLLBACK", NULL, NULL, NULL);
    return kope_err_set(err, KOPE_EINPUT, "%s: a write in this transaction failed; "
                        "nothing was stored", s->path);
  }
  rc = sqlite3_exec(s->h, "COMMIT", NULL, NULL, NULL);
  if (rc != SQLITE_OK) {
    int code = sq_fail(s, rc, "committing", err);
    sqlite3_exec(s->h, "ROLLBACK", NULL, NULL, NULL);
    return code;
  }
  return KOPE_OK;
}

static void read_end(sq *s)
{
  if (s->reading)
    sqlite3_exec(s->h, "COMMIT", NULL, NULL, NULL);
  s->reading = 0;
}

/* One snapshot for a group of reads (one lock round trip instead of one
 * per statement). The snapshot starts with the check for rows waiting to
 * be indexed; when there are, they are indexed first, in a write
 * transaction of their own, and the snapshot taken again (at most a few
 * times: another process may keep adding rows). */
static int read_begin(sq *s, kope_err *err)
{
  int yes = 0, tries, rc;

  if (s->depth > 0 || s->reading)
    return KOPE_OK;
  for (tries = 0;; tries++) {
    if ((rc = sqlite3_exec(s->h, "BEGIN", NULL, NULL, NULL)) != SQLITE_OK)
      return sq_fail(s, rc, "starting a read", err);
    s->reading = 1;
    if (tries == 3 || sqlite3_db_readonly(s->h, "main"))
      return KOPE_OK;
    if ((rc = sq_fts_waiting(s, &yes, err)) != KOPE_OK || !yes) {
      if (rc != KOPE_OK)
        read_end(s);
      return rc;
    }
    read_end(s);
    if ((rc = sq_fts_sync(s, err)) != KOPE_OK)
      return rc;
  }
}

int sq_txn(void *impl, int op, kope_err *err)
{
  sq *s = impl;

  if (op == MEM_TXN_READ)
    return read_begin(s, err);
  if (op == MEM_TXN_READ_END) {
    read_end(s);
    return KOPE_OK;
  }
  if (op == MEM_TXN_BEGIN && s->reading)
    return kope_err_set(err, KOPE_EINTERNAL, "a write started inside a read snapshot");
  if (op == MEM_TXN_BEGIN)
    return txn_begin(s, err);
  if (op == MEM_TXN_COMMIT)
    return txn_commit(s, err);
  if (s->depth == 0)
    return KOPE_OK;
  if (--s->depth > 0)
    s->failed = 1;
  else
    sqlite3_exec(s->h, "ROLLBACK", NULL, NULL, NULL);
  return KOPE_OK;
}

/* ---- opening ----------------------------------------------------------- */

/* 0: a file that may be an SQLite database; 1: missing; else an error. */
static int check_file(const char *path, kope_err *err)
{
  static const char magic[16] = "SQLite format 3";
  char head[16];
  struct stat st;
  FILE *f;
  size_t n;

  if (stat(path, &st) != 0)
    return errno == ENOENT ? 1 : kope_err_set(err, KOPE_EENV, "%s: %s", path, strerror(errno));
  if (S_ISDIR(st.st_mode))
    return kope_err_set(err, KOPE_EINPUT, "%s: is a directory, not a kope database", path);
  if (st.st_size == 0)
    return 0;
  if (!(f = fopen(path, "rb")))
    return kope_err_set(err, KOPE_EENV, "%s: cannot read: %s", path, strerror(errno));
  n = fread(head, 1, sizeof head, f);
  fclose(f);
  if (n < sizeof head || memcmp(head, magic, sizeof magic) != 0)
    return kope_err_set(err, KOPE_EINPUT, "%s: not a kope database (not an SQLite file)",
                        path);
  return 0;
}

static int create_parent(const char *path, kope_err *err)
{
  char *dir = kope_strdup(path), *slash = strrchr(dir, '/');
  int rc = KOPE_OK;

  if (slash && slash != dir) {
    *slash = '\0';
    if (!kope_is_dir(dir))
      rc = kope_mkdirs(dir, err);
  }
  free(dir);
  return rc;
}

static int pragma_int(sq *s, const char *sql, int64_t *v, kope_err *err)
{
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(s->h, sql, -1, &st, NULL);

  if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
    *v = sqlite3_column_int64(st, 0);
    rc = SQLITE_OK;
  }
  sqlite3_finalize(st);
  return rc == SQLITE_OK ? KOPE_OK : sq_fail(s, rc, "reading the file", err);
}

/* Decide whether the file is empty, a kope store we can read, or not. */
static int validate(sq *s, int *fresh, kope_err *err)
{
  int64_t app = 0, ver = 0, ntab = 0;
  int rc;

  if ((rc = pragma_int(s, "PRAGMA application_id", &app, err)) != KOPE_OK ||
      (rc = pragma_int(s, "PRAGMA user_version", &ver, err)) != KOPE_OK ||
      (rc = pragma_int(s, "SELECT count(*) FROM sqlite_master", &ntab, err)) != KOPE_OK)
  {
    if (rc == KOPE_EINTERNAL && err)   /* an unreadable file: bad input, not a bug */
      err->code = KOPE_EINPUT;
    return rc == KOPE_EINTERNAL ? KOPE_EINPUT : rc;
  }
  *fresh = app == 0 && ver == 0 && ntab == 0;
  if (*fresh)
    return KOPE_OK;
  if (app != SQ_APP_ID)
    return kope_err_set(err, KOPE_EINPUT, "%s: not a kope database (an SQLite database "
                        "of another application)", s->path);
  if (ver > KOPE_DB_SCHEMA_VERSION)
    return kope_err_set(err, KOPE_EINPUT, "%s: written by a newer kope (schema version "
                        "%lld; this kope reads up to %d); upgrade kope", s->path,
                        (long long)ver, KOPE_DB_SCHEMA_VERSION);
  if (ver < 1)
    return kope_err_set(err, KOPE_EINPUT, "%s: not a kope database (no schema version)",
                        s->path);
  s->schema = (int)ver;
  return KOPE_OK;
}

static int configure(sq *s, int flags, kope_err *err)
{
  sqlite3_stmt *st = NULL;
  int rc = KOPE_OK;

  sqlite3_busy_timeout(s->h, SQ_BUSY_MS);
  /* A file we may not write is opened read-only by SQLite: leave its
   * settings alone; any write then fails as an environment problem. */
  if (!(flags & KOPE_DB_READONLY) && !sqlite3_db_readonly(s->h, "main")) {
    if (sqlite3_prepare_v2(s->h, "PRAGMA journal_mode=WAL", -1, &st, NULL) != SQLITE_OK ||
        sqlite3_step(st) != SQLITE_ROW ||
        strcmp((const char *)sqlite3_column_text(st, 0), "wal") != 0)
      rc = sq_fail(s, sqlite3_errcode(s->h), "switching to WAL mode", err);
    sqlite3_finalize(st);
    if (rc == KOPE_OK)
      rc = sq_exec(s, flags & KOPE_DB_DURABLE ? "PRAGMA synchronous=FULL"
                                              : "PRAGMA synchronous=NORMAL", err);
  }
  /* A small page cache (SQ_CACHE_KIB): pages outside the WAL are read
   * through the memory map anyway, and the end of every write transaction
   * whose b-tree balance renumbered pages scans the whole cache (see the
   * top of this file), so a big cache makes every such commit slower. */
  if (rc == KOPE_OK)
    rc = sq_exec(s, "PRAGMA foreign_keys=ON; PRAGMA temp_store=MEMORY; "
                    "PRAGMA cache_size=-" SQ_STR(SQ_CACHE_KIB) "; "
                    "PRAGMA cache_spill=" SQ_STR(SQ_SPILL_PAGES) "; "
                    "PRAGMA mmap_size=268435456; PRAGMA wal_autocheckpoint=16000", err);
  return rc;
}

static int load_uuid(sq *s, kope_err *err)
{
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(s->h, "SELECT value FROM meta WHERE key = 'db_uuid'", -1, &st,
                              NULL);

  if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
    snprintf(s->uuid, sizeof s->uuid, "%s", (const char *)sqlite3_column_text(st, 0));
    rc = SQLITE_OK;
  } else if (rc == SQLITE_DONE) {
    rc = SQLITE_CORRUPT;
  }
  sqlite3_finalize(st);
  return rc == SQLITE_OK ? KOPE_OK : sq_fail(s, rc, "reading the store identity", err);
}

static void sq_close(void *impl)
{
  sq *s = impl;
  int i;

  if (!s)
    return;
  sq_ckpt_stop(s);
  for (i = 0; i < SQ_COUNT; i++)
    sqlite3_finalize(s->st[i]);
  for (i = 0; i < SQ_TOP_CACHE; i++)
    sqlite3_finalize(s->top[i]);
  if (s->h && s->schema == KOPE_DB_SCHEMA_VERSION && !sqlite3_db_readonly(s->h, "main"))
    sqlite3_exec(s->h, "PRAGMA analysis_limit=400; PRAGMA optimize", NULL, NULL, NULL);
  sqlite3_close(s->h);
  free(s->df);
  free(s->path);
  free(s);
}

static int open_handle(sq *s, int flags, kope_err *err)
{
  int missing = check_file(s->path, err), oflags, rc;

  if (missing > 1)
    return missing;
  if (missing && (flags & (KOPE_DB_NOCREATE | KOPE_DB_READONLY)))
    return kope_err_set(err, KOPE_EINPUT, "%s: no kope database there", s->path);
  if (missing && (rc = create_parent(s->path, err)) != KOPE_OK)
    return rc;
  oflags = flags & KOPE_DB_READONLY ? SQLITE_OPEN_READONLY
                                    : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  rc = sqlite3_open_v2(s->path, &s->h, oflags | SQLITE_OPEN_NOMUTEX, NULL);
  if (rc != SQLITE_OK)
    return kope_err_set(err, KOPE_EENV, "%s: cannot open the database: %s", s->path,
                        s->h ? sqlite3_errmsg(s->h) : sqlite3_errstr(rc));
  sqlite3_extended_result_codes(s->h, 1);
  return KOPE_OK;
}

static int sq_open(const char *path, int flags, void **impl, kope_err *err)
{
  sq *s = calloc(1, sizeof *s);
  int rc, fresh = 0;

  *impl = NULL;
  if (!s)
    return kope_err_set(err, KOPE_EINTERNAL, "out of memory");
  s->path = kope_strdup(path);
  if ((rc = open_handle(s, flags, err)) != KOPE_OK)
    goto fail;
  if ((rc = validate(s, &fresh, err)) != KOPE_OK)
    goto fail;
  if (fresh && (flags & KOPE_DB_READONLY)) {
    rc = kope_err_set(err, KOPE_EINPUT, "%s: empty, not a kope database", path);
    goto fail;
  }
  if ((rc = configure(s, flags, err)) != KOPE_OK ||
      (rc = sq_register_functions(s, err)) != KOPE_OK)
    goto fail;
  if (s->schema < KOPE_DB_SCHEMA_VERSION && (flags & KOPE_DB_READONLY)) {
    rc = kope_err_set(err, KOPE_EINPUT, "%s: schema version %d needs a migration; open it "
                      "once without read-only", path, s->schema);
    goto fail;
  }
  if (s->schema < KOPE_DB_SCHEMA_VERSION && (rc = sq_migrate(s, err)) != KOPE_OK)
    goto fail;
  if ((rc = load_uuid(s, err)) != KOPE_OK)
    goto fail;
  if (!(flags & KOPE_DB_READONLY) && !sqlite3_db_readonly(s->h, "main"))
    sq_ckpt_start(s);
  *impl = s;
  return KOPE_OK;
fail:
  s->schema = 0;   /* no PRAGMA optimize on a file we refused */
  sq_close(s);
  return rc;
}

static const char *sq_uuid(void *impl)
{
  return ((sq *)impl)->uuid;
}

static int sq_schema_version(void *impl)
{
  return ((sq *)impl)->schema;
}

/* The online backup of the open handle into a new file at dst. */
static int sq_copy(void *impl, const char *dst, kope_err *err)
{
  sq *s = impl;
  sqlite3 *d = NULL;
  sqlite3_backup *b;
  int rc = KOPE_OK;

  if (sqlite3_open(dst, &d) != SQLITE_OK) {
    rc = kope_err_set(err, KOPE_EENV, "cannot copy memory %s to %s", s->path, dst);
    goto out;
  }
  if (!(b = sqlite3_backup_init(d, "main", s->h, "main"))) {
    rc = kope_err_set(err, KOPE_EENV, "cannot copy memory %s: %s", s->path, sqlite3_errmsg(d));
    goto out;
  }
  if (sqlite3_backup_step(b, -1) != SQLITE_DONE)
    rc = kope_err_set(err, KOPE_EENV, "copying memory %s: %s", s->path, sqlite3_errmsg(d));
  sqlite3_backup_finish(b);
out:
  sqlite3_close(d);
  return rc;
}

const mem_engine kope_mem_sqlite_engine = {
  .name = "sqlite",
  .open = sq_open,
  .close = sq_close,
  .uuid = sq_uuid,
  .schema_version = sq_schema_version,
  .txn = sq_txn,
  .node_get = sq_node_get,
  .node_put = sq_node_put,
  .ancestors = sq_ancestors,
  .case_put = sq_case_put,
  .case_get = sq_case_get,
  .case_brief = sq_case_brief,
  .case_each = sq_case_each,
  .successors = sq_successors,
  .find_uid = sq_find_uid,
  .exists = sq_exists,
  .nodes_all = sq_nodes_all,
  .node_put_full = sq_node_put_full,
  .top = sq_top,
  .text = sq_text,
  .err_cases = sq_err_cases,
  .fix_of = sq_fix_of,
  .session_put = sq_session_put,
  .session_end = sq_session_end,
  .session_get = sq_session_get,
  .journal_put = sq_journal_put,
  .journal_get = sq_journal_get,
  .journal_each = sq_journal_each,
  .source_put = sq_source_put,
  .source_get = sq_source_get,
  .hw_put = sq_hw_put,
  .hw_each = sq_hw_each,
  .digest_rows = sq_digest_rows,
  .digest_put = sq_digest_put,
  .digest_list = sq_digest_list,
  .digest_get = sq_digest_get,
  .digest_set_text = sq_digest_set_text,
  .stats = sq_stats,
  .gc = sq_gc,
  .import_begin = sq_import_begin,
  .import_end = sq_import_end,
  .integrity = sq_integrity,
  .copy = sq_copy,
};
