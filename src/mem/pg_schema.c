/*
 * PostgreSQL engine: the schema, versioned in kope_meta('schema_version'),
 * and its forward migrations. A new store is created by running every
 * migration from version 0, like the SQLite engine (sq_schema.c).
 *
 *   v1  the store with the semantics of SQLite schema 4: kope_meta (store
 *       identity, version), imports, sessions, content-addressed
 *       kernel_sources, cases (every recorded field, provenance, error
 *       signature, device), case_scores (the derived a_v, r_v, label, d,
 *       successor sum and count, rank = d * confidence, with the retrieval
 *       filter columns) with three rank indexes, journals, digests with
 *       digest_cases, hw_profiles, and mem_docs: one tsvector per Case,
 *       Journal and digest ('simple' configuration: no stemming, like
 *       FTS5's unicode61) under a GIN index, written in the same
 *       transaction as the row it indexes; rid = id * 4 + kind (0 Case,
 *       1 Journal, 2 digest) orders documents newest first.
 *   v2  kope_jobs, the work queue (src/queue): one row per optimization
 *       job with its state, lease and result.
 *
 * All migrations of one open run in a single transaction under an
 * advisory lock that re-reads the version, so two processes opening a new
 * or old database at once migrate it exactly once.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mem/pg.h"

static const char schema_v1[] =
  "CREATE TABLE kope_meta(key text PRIMARY KEY, value text NOT NULL);"
  "CREATE TABLE imports("
  " id bigserial PRIMARY KEY, source_db text, source_path text,"
  " imported double precision NOT NULL, cases bigint NOT NULL DEFAULT 0,"
  " sessions bigint NOT NULL DEFAULT 0, journals bigint NOT NULL DEFAULT 0,"
  " sources bigint NOT NULL DEFAULT 0);"
  "CREATE TABLE sessions("
  " id bigserial PRIMARY KEY, op text NOT NULL, target text, hw text, policy text,"
  " budget text, started double precision NOT NULL, ended double precision, status text,"
  " origin_db text, origin_id bigint, import_id bigint REFERENCES imports(id));"
  "CREATE UNIQUE INDEX sessions_origin ON sessions(origin_db, origin_id)"
  " WHERE origin_db IS NOT NULL;"
  "CREATE TABLE kernel_sources("
  " hash text PRIMARY KEY, body text NOT NULL, bytes bigint NOT NULL,"
  " created double precision NOT NULL);"
  "CREATE TABLE cases("
  " id bigserial PRIMARY KEY, session_id bigint REFERENCES sessions(id),"
  " step bigint NOT NULL DEFAULT 0, prev_id bigint REFERENCES cases(id),"
  " op text NOT NULL, category text, target text, hw text, scene text,"
  " layer text, thought_id text, thought_title text, rationale text,"
  " code_before_hash text, code_after_hash text, diff_hash text,"
  " feedback text, verdict text NOT NULL, correct int NOT NULL,"
  " speedup double precision, speedup_vendor double precision,"
  " confidence double precision NOT NULL, tokens_in bigint, tokens_out bigint,"
  " eval_seconds double precision, harness text, created double precision NOT NULL,"
  " err_sig text, origin_db text, origin_id bigint, import_id bigint REFERENCES imports(id),"
  " device text);"
  "CREATE INDEX cases_prev ON cases(prev_id);"
  "CREATE INDEX cases_session ON cases(session_id, step);"
  "CREATE INDEX cases_digest_key ON cases(thought_id, coalesce(target, ''),"
  " coalesce(category, ''), coalesce(layer, ''));"
  "CREATE INDEX cases_err ON cases(err_sig) WHERE err_sig IS NOT NULL;"
  "CREATE UNIQUE INDEX cases_origin ON cases(origin_db, origin_id)"
  " WHERE origin_db IS NOT NULL;"
  "CREATE TABLE case_scores("
  " id bigint PRIMARY KEY REFERENCES cases(id), prev_id bigint,"
  " op text NOT NULL, target text, category text, layer text, thought_id text, hw text,"
  " a double precision NOT NULL, step_ratio double precision NOT NULL, label int NOT NULL,"
  " d_score double precision NOT NULL, succ_sum double precision NOT NULL DEFAULT 0,"
  " n_succ bigint NOT NULL DEFAULT 0, confidence double precision NOT NULL,"
  " rank double precision NOT NULL);"
  "CREATE INDEX scores_op_rank ON case_scores(op, label, rank DESC, id DESC);"
  "CREATE INDEX scores_label_rank ON case_scores(label, rank DESC, id DESC);"
  "CREATE INDEX scores_thought_rank ON case_scores(thought_id, label, rank DESC, id DESC)"
  " WHERE thought_id IS NOT NULL;"
  "CREATE TABLE journals("
  " id bigserial PRIMARY KEY, case_id bigint REFERENCES cases(id),"
  " session_id bigint REFERENCES sessions(id), created double precision NOT NULL,"
  " body text NOT NULL, origin_db text, origin_id bigint,"
  " import_id bigint REFERENCES imports(id));"
  "CREATE INDEX journals_case ON journals(case_id);"
  "CREATE UNIQUE INDEX journals_origin ON journals(origin_db, origin_id)"
  " WHERE origin_db IS NOT NULL;"
  "CREATE TABLE digests("
  " id bigserial PRIMARY KEY, target text NOT NULL, category text NOT NULL,"
  " layer text NOT NULL, thought_id text NOT NULL, title text,"
  " attempts bigint NOT NULL, n_correct bigint NOT NULL,"
  " n_effective bigint NOT NULL, n_partial bigint NOT NULL,"
  " n_ineffective bigint NOT NULL, n_negative bigint NOT NULL,"
  " median_ratio double precision NOT NULL, auto_text text NOT NULL, policy_text text,"
  " updated double precision NOT NULL, UNIQUE(target, category, layer, thought_id));"
  "CREATE TABLE digest_cases("
  " digest_id bigint NOT NULL REFERENCES digests(id) ON DELETE CASCADE,"
  " case_id bigint NOT NULL REFERENCES cases(id),"
  " PRIMARY KEY(digest_id, case_id));"
  "CREATE TABLE hw_profiles("
  " fingerprint text PRIMARY KEY, profile text, first_seen double precision NOT NULL,"
  " last_seen double precision NOT NULL);"
  "CREATE TABLE mem_docs("
  " rid bigint PRIMARY KEY, kind smallint NOT NULL, id bigint NOT NULL, case_id bigint,"
  " tsv tsvector NOT NULL);"
  "CREATE INDEX mem_docs_tsv ON mem_docs USING gin(tsv);"
  "INSERT INTO kope_meta(key, value) VALUES ('db_uuid', gen_random_uuid()::text),"
  " ('created', extract(epoch FROM now())::text), ('application', 'kope');";

static const char schema_v2[] =
  "CREATE TABLE kope_jobs("
  " id bigserial PRIMARY KEY, op text NOT NULL, target text NOT NULL, policy text NOT NULL,"
  " budget_evals bigint NOT NULL, options text NOT NULL DEFAULT '[]', harness text NOT NULL,"
  " state text NOT NULL DEFAULT 'pending'"
  "  CHECK (state IN ('pending', 'running', 'done', 'failed')),"
  " worker text, device text, claims int NOT NULL DEFAULT 0, lease_until timestamptz,"
  " created timestamptz NOT NULL DEFAULT now(), started timestamptz, finished timestamptz,"
  " session_id bigint, exit_code int, passed int, best_speedup double precision,"
  " stop_reason text, note text);"
  "CREATE INDEX kope_jobs_state ON kope_jobs(state, id);";

static int read_version(pg *s, int *v, kope_err *err)
{
  int64_t has = 0, ver = 0;
  int rc = pg_int(s, "SELECT (to_regclass('kope_meta') IS NOT NULL)::int", NULL, &has, err);

  if (rc == KOPE_OK && has)
    rc = pg_int(s, "SELECT value::bigint FROM kope_meta WHERE key = 'schema_version'", NULL,
                &ver, err);
  *v = (int)ver;
  return rc;
}

static int set_version(pg *s, int v, kope_err *err)
{
  pg_par p = {0};

  pg_par_i64(&p, v);
  return pg_run(s, "INSERT INTO kope_meta(key, value) VALUES ('schema_version', $1) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value", &p, NULL,
                "migrating", err);
}

int pg_migrate(pg *s, kope_err *err)
{
  int v = 0, rc = pg_txn(s, MEM_TXN_BEGIN, err);

  if (rc != KOPE_OK)
    return rc;
  rc = pg_run(s, "SELECT pg_advisory_xact_lock(1802465381)", NULL, NULL, "migrating", err);
  if (rc == KOPE_OK)
    rc = read_version(s, &v, err);
  while (rc == KOPE_OK && v < PG_SCHEMA_VERSION) {
    rc = pg_run(s, v == 0 ? schema_v1 : schema_v2, NULL, NULL, "migrating the schema", err);
    v++;
  }
  if (rc == KOPE_OK)
    rc = set_version(s, v, err);
  if (rc != KOPE_OK) {
    pg_txn(s, MEM_TXN_ROLLBACK, NULL);
    return rc;
  }
  if ((rc = pg_txn(s, MEM_TXN_COMMIT, err)) == KOPE_OK)
    s->schema = v;
  return rc;
}
