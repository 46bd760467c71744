/*
 * SQLite engine: the schema, versioned in PRAGMA user_version, and its
 * forward migrations. A new file is created by running every migration
 * from version 0, so the version-1 code below is exercised on every new
 * store, and tests can stop at version 1 to check the 1 -> 2 migration.
 *
 *   v1  the store: meta (store identity), sessions, content-addressed
 *       kernel_sources, cases (every recorded field), journals.
 *   v2  case_scores, the derived values of each Case (a_v, step_ratio,
 *       label, d_score, succ_sum, n_succ, rank = d * confidence) with the
 *       columns retrieval filters on, in a narrow table of their own:
 *       adding a Case rewrites the scores of all its ancestors, and
 *       narrow rows keep a lineage on few pages. Two rank indexes, on
 *       rank_ix, a copy of rank refreshed only when rank has moved by
 *       more than SQ_RANK_SLACK of it (see sq_query.c for why top-k stays
 *       exact): (op, label, rank_ix, target) for the agent's own operator
 *       and (label, rank_ix, thought_id, target, category, layer) for
 *       everything else, scanned best-first; the trailing filter columns
 *       let SQLite reject rows from the index alone. Every index holding a
 *       rank costs pages on each insert, so there are only these two. Also error signatures; provenance
 *       (origin_db, origin_id, import_id) on cases, sessions and journals;
 *       imports, digests, digest_cases, hw_profiles; one FTS5 index
 *       (mem_fts) over Case text, Journals and digests, fed in batches
 *       above two watermarks kept in meta.
 *   v3  a third rank index, (thought_id, label, rank_ix, target) for Cases
 *       with a thought: a thought-id filter read the (label, rank_ix, ...)
 *       index until enough of its rows matched, about 1 in 70 (3 ms per
 *       query at 100,000 Cases); now it seeks to the thought.
 *   v4  cases.device: the device a Case ran on as its target names it
 *       (CPU model, OpenCL "platform / device", GPU name), next to hw (the
 *       host CPU's fingerprint); NULL for Cases recorded before.
 *
 * All migrations of one open run in a single write transaction that
 * re-reads the version after taking the lock, so two processes opening
 * an old file at once migrate it exactly once.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/rng.h"
#include "mem/sq.h"

#define TOKENIZE "tokenize = \"unicode61 tokenchars '_'\""

/* What digest text the full-text index holds. */
#define DIGEST_FTS_BODY(p)                                                        \
  "(coalesce(" p "policy_text, " p "auto_text) || ' ' || " p "thought_id || ' ' || " \
  p "layer || ' ' || " p "category || ' ' || " p "target || ' ' || "              \
  "coalesce(" p "title, ''))"

static const char schema_v1[] =
  "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
  "CREATE TABLE sessions("
  " id INTEGER PRIMARY KEY, op TEXT NOT NULL, target TEXT, hw TEXT, policy TEXT,"
  " budget TEXT, started REAL NOT NULL, ended REAL, status TEXT);"
  "CREATE TABLE kernel_sources("
  " hash TEXT PRIMARY KEY, body TEXT NOT NULL, bytes INTEGER NOT NULL,"
  " created REAL NOT NULL) WITHOUT ROWID;"
  "CREATE TABLE cases("
  " id INTEGER PRIMARY KEY,"
  " session_id INTEGER REFERENCES sessions(id),"
  " step INTEGER NOT NULL DEFAULT 0,"
  " prev_id INTEGER REFERENCES cases(id),"
  " op TEXT NOT NULL, category TEXT, target TEXT, hw TEXT, scene TEXT,"
  " layer TEXT, thought_id TEXT, thought_title TEXT, rationale TEXT,"
  " code_before_hash TEXT, code_after_hash TEXT, diff_hash TEXT,"
  " feedback TEXT, verdict TEXT NOT NULL, correct INTEGER NOT NULL,"
  " speedup REAL, speedup_vendor REAL, confidence REAL NOT NULL,"
  " tokens_in INTEGER, tokens_out INTEGER, eval_seconds REAL, harness TEXT,"
  " created REAL NOT NULL);"
  "CREATE INDEX cases_prev ON cases(prev_id);"
  "CREATE INDEX cases_session ON cases(session_id, step);"
  "CREATE INDEX cases_op ON cases(op);"
  "CREATE TABLE journals("
  " id INTEGER PRIMARY KEY, case_id INTEGER REFERENCES cases(id),"
  " session_id INTEGER REFERENCES sessions(id), created REAL NOT NULL,"
  " body TEXT NOT NULL);"
  "CREATE INDEX journals_case ON journals(case_id);";

static const char schema_v2[] =
  "CREATE TABLE imports("
  " id INTEGER PRIMARY KEY, source_db TEXT, source_path TEXT, imported REAL NOT NULL,"
  " cases INTEGER NOT NULL DEFAULT 0, sessions INTEGER NOT NULL DEFAULT 0,"
  " journals INTEGER NOT NULL DEFAULT 0, sources INTEGER NOT NULL DEFAULT 0);"
  "CREATE TABLE case_scores("
  " id INTEGER PRIMARY KEY REFERENCES cases(id), prev_id INTEGER,"
  " op TEXT NOT NULL, target TEXT, category TEXT, layer TEXT, thought_id TEXT, hw TEXT,"
  " a REAL NOT NULL, step_ratio REAL NOT NULL, label INTEGER NOT NULL,"
  " d_score REAL NOT NULL, succ_sum REAL NOT NULL DEFAULT 0,"
  " n_succ INTEGER NOT NULL DEFAULT 0, confidence REAL NOT NULL, rank REAL NOT NULL,"
  " rank_ix REAL NOT NULL);"
  "INSERT INTO case_scores(id, prev_id, op, target, category, layer, thought_id, hw, a,"
  " step_ratio, label, d_score, confidence, rank, rank_ix)"
  " SELECT id, prev_id, op, target, category, layer, thought_id, hw,"
  " kope_speedup(verdict, correct, speedup), 1, 1, 1, confidence, confidence, confidence"
  " FROM cases;"
  "ALTER TABLE cases ADD COLUMN err_sig TEXT;"
  "ALTER TABLE cases ADD COLUMN origin_db TEXT;"
  "ALTER TABLE cases ADD COLUMN origin_id INTEGER;"
  "ALTER TABLE cases ADD COLUMN import_id INTEGER REFERENCES imports(id);"
  "ALTER TABLE sessions ADD COLUMN origin_db TEXT;"
  "ALTER TABLE sessions ADD COLUMN origin_id INTEGER;"
  "ALTER TABLE sessions ADD COLUMN import_id INTEGER REFERENCES imports(id);"
  "ALTER TABLE journals ADD COLUMN origin_db TEXT;"
  "ALTER TABLE journals ADD COLUMN origin_id INTEGER;"
  "ALTER TABLE journals ADD COLUMN import_id INTEGER REFERENCES imports(id);"
  "CREATE TABLE digests("
  " id INTEGER PRIMARY KEY, target TEXT NOT NULL, category TEXT NOT NULL,"
  " layer TEXT NOT NULL, thought_id TEXT NOT NULL, title TEXT,"
  " attempts INTEGER NOT NULL, n_correct INTEGER NOT NULL,"
  " n_effective INTEGER NOT NULL, n_partial INTEGER NOT NULL,"
  " n_ineffective INTEGER NOT NULL, n_negative INTEGER NOT NULL,"
  " median_ratio REAL NOT NULL, auto_text TEXT NOT NULL, policy_text TEXT,"
  " updated REAL NOT NULL, UNIQUE(target, category, layer, thought_id));"
  "CREATE TABLE digest_cases("
  " digest_id INTEGER NOT NULL REFERENCES digests(id) ON DELETE CASCADE,"
  " case_id INTEGER NOT NULL REFERENCES cases(id),"
  " PRIMARY KEY(digest_id, case_id)) WITHOUT ROWID;"
  "CREATE TABLE hw_profiles("
  " fingerprint TEXT PRIMARY KEY, profile TEXT, first_seen REAL NOT NULL,"
  " last_seen REAL NOT NULL) WITHOUT ROWID;"
  /* One full-text index over Cases, Journals and digests: rowid = id * 4
   * + kind (0 Case, 1 Journal, 2 digest). External content (the view)
   * so rows can be deleted. Cases and Journals with ids above the
   * watermarks in meta (fts_case_wm, fts_journal_wm) wait to be indexed
   * in batches (sq_fts.c); digests, few and rewritten in place, are
   * indexed by triggers. */
  "CREATE VIEW mem_docs(rid, body) AS"
  " SELECT id * 4, " CASE_FTS_BODY("") " FROM cases"
  " UNION ALL SELECT id * 4 + 1, body FROM journals"
  " UNION ALL SELECT id * 4 + 2, " DIGEST_FTS_BODY("") " FROM digests;"
  "CREATE VIRTUAL TABLE mem_fts USING fts5(body, content = 'mem_docs',"
  " content_rowid = 'rid', " TOKENIZE ");"
  "CREATE TRIGGER journals_fts_ad AFTER DELETE ON journals BEGIN"
  " INSERT INTO mem_fts(mem_fts, rowid, body) VALUES ('delete', old.id * 4 + 1, old.body);"
  " END;"
  "CREATE TRIGGER digests_fts_ai AFTER INSERT ON digests BEGIN"
  " INSERT INTO mem_fts(rowid, body) VALUES (new.id * 4 + 2, " DIGEST_FTS_BODY("new.") ");"
  " END;"
  "CREATE TRIGGER digests_fts_au AFTER UPDATE ON digests"
  " WHEN " DIGEST_FTS_BODY("old.") " IS NOT " DIGEST_FTS_BODY("new.") " BEGIN"
  " INSERT INTO mem_fts(mem_fts, rowid, body) VALUES ('delete', old.id * 4 + 2, "
  DIGEST_FTS_BODY("old.") ");"
  " INSERT INTO mem_fts(rowid, body) VALUES (new.id * 4 + 2, " DIGEST_FTS_BODY("new.") ");"
  " END;"
  "CREATE TRIGGER digests_fts_ad AFTER DELETE ON digests BEGIN"
  " INSERT INTO mem_fts(mem_fts, rowid, body) VALUES ('delete', old.id * 4 + 2, "
  DIGEST_FTS_BODY("old.") ");"
  " END;"
  "INSERT INTO mem_fts(mem_fts) VALUES ('rebuild');"
  "INSERT INTO meta(key, value) SELECT 'fts_case_wm', coalesce(max(id), 0) FROM cases;"
  "INSERT INTO meta(key, value) SELECT 'fts_journal_wm', coalesce(max(id), 0) FROM journals;"
  "UPDATE cases SET err_sig = kope_err_sig(verdict, correct, speedup, feedback);"
  "DROP INDEX cases_op;"
  "CREATE INDEX scores_op_rank ON case_scores(op, label, rank_ix, target);"
  "CREATE INDEX scores_label_rank ON case_scores(label, rank_ix, thought_id, target,"
  " category, layer);"
  "CREATE INDEX cases_digest_key ON cases(thought_id, coalesce(target, ''),"
  " coalesce(category, ''), coalesce(layer, ''));"
  "CREATE INDEX cases_err ON cases(err_sig) WHERE err_sig IS NOT NULL;"
  "CREATE UNIQUE INDEX cases_origin ON cases(origin_db, origin_id)"
  " WHERE origin_db IS NOT NULL;"
  "CREATE UNIQUE INDEX sessions_origin ON sessions(origin_db, origin_id)"
  " WHERE origin_db IS NOT NULL;"
  "CREATE UNIQUE INDEX journals_origin ON journals(origin_db, origin_id)"
  " WHERE origin_db IS NOT NULL;";

static const char schema_v3[] =
  "CREATE INDEX scores_thought_rank ON case_scores(thought_id, label, rank_ix, target)"
  " WHERE thought_id IS NOT NULL;";

static const char schema_v4[] =
  "ALTER TABLE cases ADD COLUMN device TEXT;";

/* kope_err_sig(verdict, correct, speedup, feedback): the error signature
 * of a failed Case, NULL for a successful one. */
static void fn_err_sig(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
  const char *verdict = (const char *)sqlite3_value_text(argv[0]);
  int correct = sqlite3_value_int(argv[1]);
  double speedup = sqlite3_value_type(argv[2]) == SQLITE_NULL ? 0.0
                                                              : sqlite3_value_double(argv[2]);
  char *sig = NULL;

  (void)argc;
  if (kope_mem_effective_speedup(verdict, correct, speedup) <= 0.0)
    sig = kope_mem_error_signature((const char *)sqlite3_value_text(argv[3]));
  if (sig)
    sqlite3_result_text(ctx, sig, -1, free);
  else
    sqlite3_result_null(ctx);
}

/* kope_speedup(verdict, correct, speedup): a_v, exactly as the library. */
static void fn_speedup(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
  double speedup = sqlite3_value_type(argv[2]) == SQLITE_NULL ? 0.0
                                                              : sqlite3_value_double(argv[2]);

  (void)argc;
  sqlite3_result_double(ctx, kope_mem_effective_speedup(
                                 (const char *)sqlite3_value_text(argv[0]),
                                 sqlite3_value_int(argv[1]), speedup));
}

int sq_register_functions(sq *s, kope_err *err)
{
  int rc = sqlite3_create_function(s->h, "kope_err_sig", 4,
                                   SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL, fn_err_sig,
                                   NULL, NULL);

  if (rc == SQLITE_OK)
    rc = sqlite3_create_function(s->h, "kope_speedup", 3, SQLITE_UTF8 | SQLITE_DETERMINISTIC,
                                 NULL, fn_speedup, NULL, NULL);
  return rc == SQLITE_OK ? KOPE_OK : sq_fail(s, rc, "registering functions", err);
}

static void new_uuid(char out[40])
{
  uint64_t a = kope_rng_os_seed(), b = kope_rng_mix(kope_rng_os_seed(), (uint64_t)(size_t)out);

  snprintf(out, 40, "%08x-%04x-%04x-%04x-%012llx", (unsigned)(a >> 32),
           (unsigned)(a >> 16) & 0xffff, (unsigned)a & 0xffff, (unsigned)(b >> 48),
           (unsigned long long)(b & 0xffffffffffffULL));
}

static int step_v1(sq *s, kope_err *err)
{
  char uuid[40], created[64];
  sqlite3_stmt *st = NULL;
  int rc = sq_exec(s, schema_v1, err);

  if (rc == KOPE_OK)
    rc = sq_exec(s, "PRAGMA application_id = 1802465381", err);   /* SQ_APP_ID */
  if (rc != KOPE_OK)
    return rc;
  new_uuid(uuid);
  snprintf(created, sizeof created, "%.3f", mem_wall_now());
  if (sqlite3_prepare_v2(s->h, "INSERT INTO meta(key, value) VALUES ('db_uuid', ?1), "
                         "('created', ?2)", -1, &st, NULL) != SQLITE_OK)
    return sq_fail(s, sqlite3_errcode(s->h), "creating the schema", err);
  sq_bind_text(st, 1, uuid);
  sq_bind_text(st, 2, created);
  rc = sq_run(s, st, "creating the schema", err);
  sqlite3_finalize(st);
  return rc;
}

static int step_v2(sq *s, kope_err *err)
{
  int rc = sq_exec(s, schema_v2, err);

  if (rc == KOPE_OK)
    rc = sq_rescore_all(s, err);
  return rc;
}

static int read_version(sq *s, int *v, kope_err *err)
{
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(s->h, "PRAGMA user_version", -1, &st, NULL);

  if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
    *v = sqlite3_column_int(st, 0);
    rc = SQLITE_OK;
  }
  sqlite3_finalize(st);
  return rc == SQLITE_OK ? KOPE_OK : sq_fail(s, rc, "reading the schema version", err);
}

int sq_migrate_to(sq *s, int target, kope_err *err)
{
  char sql[64];
  int v = 0, rc = sq_txn(s, MEM_TXN_BEGIN, err);

  if (rc != KOPE_OK)
    return rc;
  if ((rc = read_version(s, &v, err)) != KOPE_OK)
    goto out;
  while (rc == KOPE_OK && v < target) {
    rc = v == 0   ? step_v1(s, err)
         : v == 1 ? step_v2(s, err)
         : v == 2 ? sq_exec(s, schema_v3, err)
                  : sq_exec(s, schema_v4, err);
    v++;
  }
  snprintf(sql, sizeof sql, "PRAGMA user_version = %d", v);
  if (rc == KOPE_OK)
    rc = sq_exec(s, sql, err);
out:
  if (rc != KOPE_OK) {
    sq_txn(s, MEM_TXN_ROLLBACK, NULL);
    return rc;
  }
  if ((rc = sq_txn(s, MEM_TXN_COMMIT, err)) == KOPE_OK)
    s->schema = v;
  return rc;
}

int sq_migrate(sq *s, kope_err *err)
{
  return sq_migrate_to(s, KOPE_DB_SCHEMA_VERSION, err);
}

int kope_sq_create_v1(const char *path, kope_err *err)
{
  return kope_sq_create_at(path, 1, err);
}

int kope_sq_create_at(const char *path, int version, kope_err *err)
{
  sq s;
  int rc, i;

  memset(&s, 0, sizeof s);
  s.path = (char *)path;
  rc = sqlite3_open_v2(path, &s.h, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
  if (rc != SQLITE_OK) {
    rc = kope_err_set(err, KOPE_EENV, "%s: cannot create", path);
    goto out;
  }
  rc = sq_exec(&s, "PRAGMA journal_mode=WAL", err);
  if (rc == KOPE_OK)
    rc = sq_register_functions(&s, err);
  if (rc == KOPE_OK)
    rc = sq_migrate_to(&s, version, err);
out:
  for (i = 0; i < SQ_COUNT; i++)
    sqlite3_finalize(s.st[i]);
  sqlite3_close(s.h);
  return rc;
}
