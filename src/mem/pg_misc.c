/*
 * PostgreSQL engine: sessions, Journals (each with its full-text document,
 * written in the same statement group), content-addressed kernel sources,
 * hardware profiles, digests (one row per (target, category, layer,
 * thought id), upserted, so two sessions refreshing one digest at once
 * both land and the later one wins with counts over every committed Case),
 * statistics, retention (gc), import bookkeeping and the integrity check.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "mem/pg.h"

int pg_get_by_id(pg *s, const char *sql, int64_t id, const char *what, pg_row_fn read,
                 void *out, kope_err *err)
{
  char reading[64];
  pg_par p = {0};
  PGresult *r = NULL;
  int rc;

  snprintf(reading, sizeof reading, "reading a %s", what);
  pg_par_i64(&p, id);
  rc = pg_run(s, sql, &p, &r, reading, err);
  if (rc == KOPE_OK && PQntuples(r) == 1)
    read(s, r, 0, out);
  else if (rc == KOPE_OK)
    rc = kope_err_set(err, KOPE_EINPUT, "no %s with id %lld in %s", what, (long long)id,
                      s->path);
  PQclear(r);
  return rc;
}

/* What digest text the full-text document holds (as the SQLite engine). */
#define PG_DIGEST_DOC                                                             \
  "to_tsvector('simple', coalesce(policy_text, auto_text) || ' ' || thought_id || ' ' || " \
  "layer || ' ' || category || ' ' || target || ' ' || coalesce(title, ''))"
#define PG_DIGEST_COLS                                                            \
  "id, target, category, layer, thought_id, title, attempts, n_correct, "         \
  "n_effective, n_partial, n_ineffective, n_negative, median_ratio, "             \
  "coalesce(policy_text, auto_text), auto_text, (policy_text IS NOT NULL)::int, updated"

/* ---- sessions ------------------------------------------------------------ */

int pg_session_put(void *impl, const kope_mem_session *ses, const mem_origin *o,
                   int64_t *id, kope_err *err)
{
  pg *s = impl;
  pg_par p = {0};
  int64_t v = 0;
  int rc;

  pg_par_text(&p, ses->op);
  pg_par_text(&p, ses->target);
  pg_par_text(&p, ses->hw);
  pg_par_text(&p, ses->policy);
  pg_par_text(&p, ses->budget);
  pg_par_real(&p, ses->started > 0 ? ses->started : mem_wall_now());
  pg_par_real(&p, ses->ended > 0 ? ses->ended : NAN);
  pg_par_text(&p, ses->status);
  pg_par_text(&p, o && o->db ? o->db : NULL);
  pg_par_id(&p, o && o->db ? o->id : 0);
  pg_par_id(&p, o && o->db ? o->import_id : 0);
  rc = pg_int(s, "INSERT INTO sessions(op, target, hw, policy, budget, started, ended, "
              "status, origin_db, origin_id, import_id) VALUES ($1, $2, $3, $4, $5, $6, $7, "
              "$8, $9, $10, $11) RETURNING id", &p, &v, err);
  if (rc == KOPE_OK && id)
    *id = v;
  if (rc == KOPE_OK)
    rc = pg_imp_made(s, MEM_U_SESSION, v, o, err);
  return rc;
}

int pg_session_end(void *impl, int64_t id, const char *status, kope_err *err)
{
  pg *s = impl;
  pg_par p = {0};
  int64_t n = 0;
  int rc;

  pg_par_i64(&p, id);
  pg_par_real(&p, mem_wall_now());
  pg_par_text(&p, status);
  rc = pg_int(s, "WITH u AS (UPDATE sessions SET ended = $2, status = coalesce($3, 'done') "
              "WHERE id = $1 RETURNING 1) SELECT count(*) FROM u", &p, &n, err);
  if (rc == KOPE_OK && n == 0)
    rc = kope_err_set(err, KOPE_EINPUT, "no session with id %lld in %s", (long long)id,
                      s->path);
  return rc;
}

static void session_row(pg *s, const PGresult *r, int row, void *o)
{
  kope_mem_session *out = o;

  out->id = pg_i64(r, row, 0);
  out->op = pg_txt(r, row, 1);
  out->target = pg_txt(r, row, 2);
  out->hw = pg_txt(r, row, 3);
  out->policy = pg_txt(r, row, 4);
  out->budget = pg_txt(r, row, 5);
  out->started = pg_dbl(r, row, 6, 0.0);
  out->ended = pg_dbl(r, row, 7, 0.0);
  out->status = pg_txt(r, row, 8);
  out->uid = PQgetisnull(r, row, 9) ? mem_uid(s->uuid, out->id)
                                    : mem_uid(PQgetvalue(r, row, 9), pg_i64(r, row, 10));
}

int pg_session_get(void *impl, int64_t id, kope_mem_session *out, kope_err *err)
{
  memset(out, 0, sizeof *out);
  return pg_get_by_id(impl, "SELECT id, op, target, hw, policy, budget, started, ended, "
                      "status, origin_db, origin_id FROM sessions WHERE id = $1", id,
                      "session", session_row, out, err);
}

/* ---- Journals ------------------------------------------------------------- */

static int must_exist(pg *s, int kind, int64_t id, kope_err *err)
{
  int yes = 1, rc = id ? pg_exists(s, kind, id, &yes, err) : KOPE_OK;

  if (rc == KOPE_OK && !yes)
    rc = kope_err_set(err, KOPE_EINPUT, "no %s with id %lld in %s",
                      kind == MEM_U_CASE ? "Case" : "session", (long long)id, s->path);
  return rc;
}

int pg_journal_put(void *impl, const kope_mem_journal *j, const mem_origin *o,
                   int64_t *id, kope_err *err)
{
  pg *s = impl;
  pg_par p = {0};
  int64_t v = 0;
  int rc;

  if ((rc = must_exist(s, MEM_U_CASE, j->case_id, err)) != KOPE_OK ||
      (rc = must_exist(s, MEM_U_SESSION, j->session_id, err)) != KOPE_OK)
    return rc;
  pg_par_id(&p, j->case_id);
  pg_par_id(&p, j->session_id);
  pg_par_real(&p, j->created > 0 ? j->created : mem_wall_now());
  pg_par_text(&p, j->body);
  pg_par_text(&p, o && o->db ? o->db : NULL);
  pg_par_id(&p, o && o->db ? o->id : 0);
  pg_par_id(&p, o && o->db ? o->import_id : 0);
  rc = pg_int(s, "WITH j AS (INSERT INTO journals(case_id, session_id, created, body, "
              "origin_db, origin_id, import_id) VALUES ($1, $2, $3, $4, $5, $6, $7) "
              "RETURNING id, case_id, body), d AS (INSERT INTO mem_docs(rid, kind, id, "
              "case_id, tsv) SELECT id * 4 + 1, 1, id, case_id, to_tsvector('simple', body) "
              "FROM j) SELECT id FROM j", &p, &v, err);
  if (rc == KOPE_OK && id)
    *id = v;
  if (rc == KOPE_OK)
    rc = pg_imp_made(s, MEM_U_JOURNAL, v, o, err);
  return rc;
}

static void read_journal(pg *s, const PGresult *r, int row, void *out)
{
  kope_mem_journal *j = out;

  j->id = pg_i64(r, row, 0);
  j->case_id = pg_i64(r, row, 1);
  j->session_id = pg_i64(r, row, 2);
  j->created = pg_dbl(r, row, 3, 0.0);
  j->body = pg_txt0(r, row, 4);
  j->uid = PQgetisnull(r, row, 5) ? mem_uid(s->uuid, j->id)
                                  : mem_uid(PQgetvalue(r, row, 5), pg_i64(r, row, 6));
}

#define JOURNAL_COLS "id, case_id, session_id, created, body, origin_db, origin_id"

int pg_journal_get(void *impl, int64_t id, kope_mem_journal *out, kope_err *err)
{
  memset(out, 0, sizeof *out);
  return pg_get_by_id(impl, "SELECT " JOURNAL_COLS " FROM journals WHERE id = $1", id,
                      "Journal entry", read_journal, out, err);
}

int pg_journal_each(void *impl, int64_t case_id, mem_journal_fn fn, void *ctx,
                    kope_err *err)
{
  pg *s = impl;
  pg_par p = {0};
  PGresult *r = NULL;
  int rc, i, stop = 0;

  if (case_id)
    pg_par_i64(&p, case_id);
  rc = pg_run(s, case_id ? "SELECT " JOURNAL_COLS " FROM journals WHERE case_id = $1 "
                           "ORDER BY id"
                         : "SELECT " JOURNAL_COLS " FROM journals ORDER BY id",
              &p, &r, "reading Journals", err);
  for (i = 0; rc == KOPE_OK && !stop && i < PQntuples(r); i++) {
    kope_mem_journal j = {0};
    read_journal(s, r, i, &j);
    stop = fn(&j, ctx);
    free(j.body);
    free(j.uid);
  }
  PQclear(r);
  return rc;
}

/* ---- sources and hardware -------------------------------------------------- */

int pg_source_put(void *impl, const char *body, char hash[65], int *added, kope_err *err)
{
  pg *s = impl;
  size_t len = strlen(body);
  pg_par p = {0};
  int64_t n = 0;
  int rc;

  kope_sha256_hex(body, len, hash);
  if (pg_imp_source_seen(s, hash)) {   /* this import stored it already */
    if (added)
      *added = 0;
    return KOPE_OK;
  }
  pg_par_text(&p, hash);
  pg_par_text(&p, body);
  pg_par_i64(&p, (int64_t)len);
  pg_par_real(&p, mem_wall_now());
  rc = pg_int(s, "WITH i AS (INSERT INTO kernel_sources(hash, body, bytes, created) VALUES "
              "($1, $2, $3, $4) ON CONFLICT (hash) DO NOTHING RETURNING 1) SELECT count(*) "
              "FROM i", &p, &n, err);
  if (added)
    *added = rc == KOPE_OK && n > 0;
  return rc;
}

int pg_source_get(void *impl, const char *hash, char **body, kope_err *err)
{
  pg *s = impl;
  pg_par p = {0};
  PGresult *r = NULL;
  int rc;

  *body = NULL;
  pg_par_text(&p, hash);
  rc = pg_run(s, "SELECT body FROM kernel_sources WHERE hash = $1", &p, &r,
              "reading a source", err);
  if (rc == KOPE_OK && PQntuples(r) == 1)
    *body = pg_txt(r, 0, 0);
  PQclear(r);
  return rc;
}

int pg_hw_put(void *impl, const char *fingerprint, const char *profile, int *added,
              kope_err *err)
{
  pg *s = impl;
  pg_par p = {0};
  int64_t fresh = 0;
  int rc;

  pg_par_text(&p, fingerprint);
  pg_par_text(&p, profile);
  pg_par_real(&p, mem_wall_now());
  rc = pg_int(s, "INSERT INTO hw_profiles(fingerprint, profile, first_seen, last_seen) "
              "VALUES ($1, $2, $3, $3) ON CONFLICT(fingerprint) DO UPDATE SET profile = "
              "coalesce(excluded.profile, hw_profiles.profile), last_seen = excluded.last_seen "
              "RETURNING (first_seen = last_seen)::int", &p, &fresh, err);
  if (added)
    *added = rc == KOPE_OK && fresh;
  return rc;
}

int pg_hw_each(void *impl, mem_kv_fn fn, void *ctx, kope_err *err)
{
  pg *s = impl;
  PGresult *r = NULL;
  int rc = pg_run(s, "SELECT fingerprint, coalesce(profile, '') FROM hw_profiles ORDER BY "
                  "fingerprint", NULL, &r, "reading hardware profiles", err), i;

  for (i = 0; rc == KOPE_OK && i < PQntuples(r); i++)
    if (fn(PQgetvalue(r, i, 0), PQgetvalue(r, i, 1), ctx))
      break;
  PQclear(r);
  return rc;
}

/* ---- digests ------------------------------------------------------------- */

#define DROW_KEY \
  "thought_id, coalesce(target, ''), coalesce(category, ''), coalesce(layer, '')"
#define DROW_KEY_C \
  "c.thought_id, coalesce(c.target, ''), coalesce(c.category, ''), coalesce(c.layer, '')"
#define DROW_COLS DROW_KEY_C ", c.thought_title, c.id, s.label, c.correct, s.step_ratio"
#define DROW_ORDER                                                                \
  " ORDER BY c.thought_id COLLATE \"C\", coalesce(c.target, '') COLLATE \"C\", "     \
  "coalesce(c.category, '') COLLATE \"C\", coalesce(c.layer, '') COLLATE \"C\", c.id"

static int drow_emit(const PGresult *r, mem_drow_fn fn, void *ctx)
{
  int i;

  for (i = 0; i < PQntuples(r); i++) {
    mem_drow d;
    d.thought_id = PQgetvalue(r, i, 0);
    d.target = PQgetvalue(r, i, 1);
    d.category = PQgetvalue(r, i, 2);
    d.layer = PQgetvalue(r, i, 3);
    d.title = PQgetisnull(r, i, 4) ? NULL : PQgetvalue(r, i, 4);
    d.case_id = pg_i64(r, i, 5);
    d.label = (int)pg_i64(r, i, 6);
    d.correct = (int)pg_i64(r, i, 7);
    d.r = pg_dbl(r, i, 8, 0.0);
    if (fn(&d, ctx))
      return 1;
  }
  return 0;
}

/* Rows sorted by key (C collation, as SQLite's memcmp order), then id. A
 * session's refresh reads every Case of each key it touched. */
int pg_digest_rows(void *impl, int64_t session_id, mem_drow_fn fn, void *ctx, kope_err *err)
{
  pg *s = impl;
  pg_par p = {0};
  PGresult *r = NULL;
  int rc;

  if (session_id) {
    pg_par_i64(&p, session_id);
    rc = pg_run(s, "SELECT " DROW_COLS " FROM cases c JOIN case_scores s ON s.id = c.id "
                "WHERE (" DROW_KEY_C ") IN (SELECT DISTINCT " DROW_KEY " FROM cases WHERE "
                "session_id = $1 AND coalesce(thought_id, '') <> '')" DROW_ORDER, &p, &r,
                "aggregating digests", err);
  } else {
    rc = pg_run(s, "SELECT " DROW_COLS " FROM cases c JOIN case_scores s ON s.id = c.id "
                "WHERE coalesce(c.thought_id, '') <> ''" DROW_ORDER, NULL, &r,
                "aggregating digests", err);
  }
  if (rc == KOPE_OK)
    drow_emit(r, fn, ctx);
  PQclear(r);
  return rc;
}

static int digest_upsert(pg *s, const kope_mem_digest *d, int64_t *id, kope_err *err)
{
  pg_par p = {0};
  int i;

  pg_par_text(&p, d->target);
  pg_par_text(&p, d->category);
  pg_par_text(&p, d->layer);
  pg_par_text(&p, d->thought_id);
  pg_par_text(&p, d->title);
  pg_par_i64(&p, d->attempts);
  pg_par_i64(&p, d->n_correct);
  for (i = 0; i < KOPE_LABEL_COUNT; i++)
    pg_par_i64(&p, d->n_label[i]);
  pg_par_real(&p, d->median_ratio);
  pg_par_text(&p, d->auto_text);
  pg_par_real(&p, mem_wall_now());
  return pg_int(s, "INSERT INTO digests(target, category, layer, thought_id, title, attempts, "
                "n_correct, n_effective, n_partial, n_ineffective, n_negative, median_ratio, "
                "auto_text, updated) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, "
                "$13, $14) ON CONFLICT(target, category, layer, thought_id) DO UPDATE SET "
                "title = excluded.title, attempts = excluded.attempts, n_correct = "
                "excluded.n_correct, n_effective = excluded.n_effective, n_partial = "
                "excluded.n_partial, n_ineffective = excluded.n_ineffective, n_negative = "
                "excluded.n_negative, median_ratio = excluded.median_ratio, auto_text = "
                "excluded.auto_text, updated = excluded.updated RETURNING id", &p, id, err);
}

static int digest_doc(pg *s, int64_t id, kope_err *err)
{
  pg_par p = {0};

  pg_par_i64(&p, id);
  return pg_run(s, "INSERT INTO mem_docs(rid, kind, id, case_id, tsv) SELECT id * 4 + 2, 2, "
                "id, NULL, " PG_DIGEST_DOC " FROM digests WHERE id = $1 ON CONFLICT (rid) DO "
                "UPDATE SET tsv = excluded.tsv", &p, NULL, "indexing a digest", err);
}

/* Supporting Cases only ever join a key, so adding the missing links is
 * enough; one statement with the ids as an array. */
static int digest_link(pg *s, int64_t id, const kope_mem_digest *d, kope_err *err)
{
  kope_buf arr;
  pg_par p = {0};
  size_t i;
  int rc;

  if (d->n_case_ids == 0)
    return KOPE_OK;
  kope_buf_init(&arr, 0);
  kope_buf_puts(&arr, "{");
  for (i = 0; i < d->n_case_ids; i++)
    kope_buf_printf(&arr, "%s%lld", i ? "," : "", (long long)d->case_ids[i]);
  kope_buf_puts(&arr, "}");
  pg_par_i64(&p, id);
  pg_par_text(&p, arr.data);
  rc = pg_run(s, "INSERT INTO digest_cases(digest_id, case_id) SELECT $1, unnest($2::bigint[]) "
              "ON CONFLICT DO NOTHING", &p, NULL, "linking a digest", err);
  kope_buf_release(&arr);
  return rc;
}

int pg_digest_put(void *impl, const kope_mem_digest *d, kope_err *err)
{
  pg *s = impl;
  int64_t id = 0;
  int rc = digest_upsert(s, d, &id, err);

  if (rc == KOPE_OK)
    rc = digest_doc(s, id, err);
  if (rc == KOPE_OK)
    rc = digest_link(s, id, d, err);
  return rc;
}

static void read_digest(const PGresult *r, int row, kope_mem_digest *d)
{
  int i;

  memset(d, 0, sizeof *d);
  d->id = pg_i64(r, row, 0);
  d->target = pg_txt0(r, row, 1);
  d->category = pg_txt0(r, row, 2);
  d->layer = pg_txt0(r, row, 3);
  d->thought_id = pg_txt0(r, row, 4);
  d->title = pg_txt(r, row, 5);
  d->attempts = pg_i64(r, row, 6);
  d->n_correct = pg_i64(r, row, 7);
  for (i = 0; i < KOPE_LABEL_COUNT; i++)
    d->n_label[i] = pg_i64(r, row, 8 + i);
  d->median_ratio = pg_dbl(r, row, 12, 0.0);
  d->text = pg_txt0(r, row, 13);
  d->auto_text = pg_txt0(r, row, 14);
  d->has_policy_text = (int)pg_i64(r, row, 15);
  d->updated = pg_dbl(r, row, 16, 0.0);
}

static int digest_ids(pg *s, kope_mem_digest *d, kope_err *err)
{
  pg_par p = {0};
  PGresult *r = NULL;
  mem_ids ids = {0};
  int rc, i;

  pg_par_i64(&p, d->id);
  rc = pg_run(s, "SELECT case_id FROM digest_cases WHERE digest_id = $1 ORDER BY case_id", &p,
              &r, "reading a digest", err);
  for (i = 0; rc == KOPE_OK && i < PQntuples(r); i++)
    mem_ids_push(&ids, pg_i64(r, i, 0));
  PQclear(r);
  d->case_ids = ids.v;
  d->n_case_ids = ids.n;
  return rc;
}

typedef struct digest_at {
  int64_t id;
  size_t at;
} digest_at;

static int cmp_digest_at(const void *a, const void *b)
{
  const digest_at *x = a, *y = b;
  return (x->id > y->id) - (x->id < y->id);
}

/* The case_ids of n digests in one statement (rows come by digest, then
 * Case, as digest_ids reads them for one). */
static int digests_ids(pg *s, kope_mem_digest *d, size_t n, kope_err *err)
{
  digest_at *ix = calloc(n, sizeof *ix), key, *hit;
  mem_ids *ids = calloc(n, sizeof *ids);
  kope_buf arr;
  pg_par p = {0};
  PGresult *r = NULL;
  size_t i;
  int rc = ix && ids ? KOPE_OK : kope_err_nomem(err, "digest ids"), row;

  kope_buf_init(&arr, 0);
  kope_buf_puts(&arr, "{");
  for (i = 0; rc == KOPE_OK && i < n; i++) {
    ix[i].id = d[i].id;
    ix[i].at = i;
    kope_buf_printf(&arr, "%s%lld", i ? "," : "", (long long)d[i].id);
  }
  kope_buf_puts(&arr, "}");
  if (rc == KOPE_OK) {
    qsort(ix, n, sizeof *ix, cmp_digest_at);
    pg_par_text(&p, arr.data);
    rc = pg_run(s, "SELECT digest_id, case_id FROM digest_cases WHERE digest_id = "
                "ANY($1::bigint[]) ORDER BY digest_id, case_id", &p, &r, "reading digests", err);
  }
  for (row = 0; rc == KOPE_OK && row < PQntuples(r); row++) {
    key.id = pg_i64(r, row, 0);
    hit = bsearch(&key, ix, n, sizeof *ix, cmp_digest_at);
    if (hit && mem_ids_push(&ids[hit->at], pg_i64(r, row, 1)) != 0)
      rc = kope_err_nomem(err, "digest ids");
  }
  for (i = 0; i < n && ids; i++) {
    if (rc == KOPE_OK) {
      d[i].case_ids = ids[i].v;
      d[i].n_case_ids = ids[i].n;
    } else {
      mem_ids_release(&ids[i]);
    }
  }
  PQclear(r);
  kope_buf_release(&arr);
  free(ix);
  free(ids);
  return rc;
}

static void digest_row(pg *s, const PGresult *r, int row, void *out)
{
  (void)s;
  read_digest(r, row, out);
}

int pg_digest_get(void *impl, int64_t id, kope_mem_digest *out, kope_err *err)
{
  int rc;

  memset(out, 0, sizeof *out);
  rc = pg_get_by_id(impl, "SELECT " PG_DIGEST_COLS " FROM digests WHERE id = $1", id,
                    "digest", digest_row, out, err);
  return rc == KOPE_OK ? digest_ids(impl, out, err) : rc;
}

int pg_digest_list(void *impl, const kope_mem_filter *f, size_t limit, int with_ids,
                   kope_mem_digest **out, size_t *n, kope_err *err)
{
  pg *s = impl;
  pg_par p = {0};
  PGresult *r = NULL;
  kope_buf sql;
  int rc, i, rows;

  *out = NULL;
  *n = 0;
  kope_buf_init(&sql, 0);
  kope_buf_puts(&sql, "SELECT " PG_DIGEST_COLS " FROM digests WHERE true");
  if (f->target) kope_buf_printf(&sql, " AND target = $%d", pg_par_text(&p, f->target));
  if (f->category) kope_buf_printf(&sql, " AND category = $%d", pg_par_text(&p, f->category));
  if (f->layer) kope_buf_printf(&sql, " AND layer = $%d", pg_par_text(&p, f->layer));
  if (f->thought_id)
    kope_buf_printf(&sql, " AND thought_id = $%d", pg_par_text(&p, f->thought_id));
  kope_buf_puts(&sql, " ORDER BY attempts DESC, id");
  if (limit)
    kope_buf_printf(&sql, " LIMIT $%d", pg_par_i64(&p, (int64_t)limit));
  rc = pg_run(s, sql.data, &p, &r, "listing digests", err);
  kope_buf_release(&sql);
  rows = rc == KOPE_OK ? PQntuples(r) : 0;
  if (rows > 0 && !(*out = calloc((size_t)rows, sizeof **out)))
    rc = kope_err_set(err, KOPE_EINTERNAL, "out of memory");
  for (i = 0; rc == KOPE_OK && i < rows; i++)
    read_digest(r, i, &(*out)[(*n)++]);
  PQclear(r);
  if (rc == KOPE_OK && with_ids && *n > 0)
    rc = digests_ids(s, *out, *n, err);
  return rc;
}

int pg_digest_set_text(void *impl, int64_t id, const char *text, kope_err *err)
{
  pg *s = impl;
  pg_par p = {0};
  int64_t n = 0;
  int rc = pg_txn(s, MEM_TXN_BEGIN, err);

  if (rc != KOPE_OK)
    return rc;
  pg_par_i64(&p, id);
  pg_par_text(&p, text);
  rc = pg_int(s, "WITH u AS (UPDATE digests SET policy_text = $2 WHERE id = $1 RETURNING 1) "
              "SELECT count(*) FROM u", &p, &n, err);
  if (rc == KOPE_OK && n == 0)
    rc = kope_err_set(err, KOPE_EINPUT, "no digest with id %lld in %s", (long long)id,
                      s->path);
  if (rc == KOPE_OK)
    rc = digest_doc(s, id, err);
  if (rc != KOPE_OK) {
    pg_txn(s, MEM_TXN_ROLLBACK, NULL);
    return rc;
  }
  return pg_txn(s, MEM_TXN_COMMIT, err);
}

/* ---- statistics ---------------------------------------------------------- */

static int group_counts(pg *s, const char *sql, int labels, kope_mem_count **out, size_t *n,
                        kope_err *err)
{
  PGresult *r = NULL;
  int rc = pg_run(s, sql, NULL, &r, "counting", err), i, rows;

  rows = rc == KOPE_OK ? PQntuples(r) : 0;
  if (rows > 0 && !(*out = calloc((size_t)rows, sizeof **out)))
    rc = kope_err_set(err, KOPE_EINTERNAL, "out of memory");
  for (i = 0; rc == KOPE_OK && i < rows; i++) {
    (*out)[i].key = labels ? kope_strdup(kope_mem_label_name((int)pg_i64(r, i, 0)))
                           : pg_txt0(r, i, 0);
    (*out)[i].n = pg_i64(r, i, 1);
    (*n)++;
  }
  PQclear(r);
  return rc;
}

int pg_stats(void *impl, kope_mem_stats *st, kope_err *err)
{
  pg *s = impl;
  PGresult *r = NULL;
  int rc;

  st->schema = s->schema;
  rc = pg_run(s, "SELECT (SELECT count(*) FROM cases), (SELECT count(*) FROM sessions), "
              "(SELECT count(*) FROM journals), (SELECT count(*) FROM digests), (SELECT "
              "count(*) FROM kernel_sources), (SELECT coalesce(sum(bytes), 0) FROM "
              "kernel_sources), (SELECT count(*) FROM imports), (SELECT count(*) FROM "
              "hw_profiles)", NULL, &r, "counting", err);
  if (rc == KOPE_OK) {
    st->cases = pg_i64(r, 0, 0);
    st->sessions = pg_i64(r, 0, 1);
    st->journals = pg_i64(r, 0, 2);
    st->digests = pg_i64(r, 0, 3);
    st->sources = pg_i64(r, 0, 4);
    st->source_bytes = pg_i64(r, 0, 5);
    st->imports = pg_i64(r, 0, 6);
    st->hw_profiles = pg_i64(r, 0, 7);
  }
  PQclear(r);
  if (rc == KOPE_OK)
    rc = group_counts(s, "SELECT op, count(*) FROM cases GROUP BY 1 ORDER BY 2 DESC, "
                      "op COLLATE \"C\"", 0, &st->by_op, &st->n_op, err);
  if (rc == KOPE_OK)
    rc = group_counts(s, "SELECT coalesce(target, '(none)'), count(*) FROM cases GROUP BY 1 "
                      "ORDER BY 2 DESC, coalesce(target, '(none)') COLLATE \"C\"", 0, &st->by_target, &st->n_target,
                      err);
  if (rc == KOPE_OK)
    rc = group_counts(s, "SELECT label, count(*) FROM case_scores GROUP BY 1 ORDER BY 1", 1,
                      &st->by_label, &st->n_label, err);
  if (rc == KOPE_OK)
    rc = group_counts(s, "SELECT verdict, count(*) FROM cases GROUP BY 1 ORDER BY 2 DESC, "
                      "verdict COLLATE \"C\"", 0, &st->by_verdict, &st->n_verdict, err);
  return rc;
}

/* ---- retention ---------------------------------------------------------- */

#define OLD_JOURNALS \
  " FROM journals WHERE id NOT IN (SELECT id FROM journals ORDER BY id DESC LIMIT $1)"
#define KEEP_SOURCES                                                               \
  "WITH recent AS (SELECT code_before_hash b, code_after_hash a, diff_hash d "      \
  "FROM cases ORDER BY id DESC LIMIT $1), "                                         \
  "best AS (SELECT a FROM (SELECT code_after_hash a, row_number() OVER "            \
  "(PARTITION BY op, target ORDER BY speedup DESC NULLS LAST, id DESC) rn FROM cases " \
  "WHERE verdict = 'correct' AND correct = 1 AND speedup > 0) x WHERE rn = 1), "    \
  "keep(h) AS (SELECT b FROM recent UNION SELECT a FROM recent UNION "              \
  "SELECT d FROM recent UNION SELECT a FROM best) "
#define OLD_SOURCES \
  " FROM kernel_sources WHERE hash NOT IN (SELECT h FROM keep WHERE h IS NOT NULL)"

static int gc_int(pg *s, const char *sql, int64_t keep, int64_t *v, kope_err *err)
{
  pg_par p = {0};

  pg_par_i64(&p, keep);
  return pg_int(s, sql, &p, v, err);
}

static int gc_run(pg *s, const kope_mem_gc_opts *o, kope_mem_gc_stats *st, kope_err *err)
{
  int64_t dummy = 0;
  int rc = gc_int(s, "SELECT count(*)" OLD_JOURNALS, o->keep_journals, &st->journals_dropped,
                  err);

  if (rc == KOPE_OK)
    rc = gc_int(s, KEEP_SOURCES "SELECT count(*)" OLD_SOURCES, o->keep_sources,
                &st->sources_dropped, err);
  if (rc == KOPE_OK)
    rc = gc_int(s, KEEP_SOURCES "SELECT coalesce(sum(bytes), 0)" OLD_SOURCES, o->keep_sources,
                &st->source_bytes_dropped, err);
  if (rc != KOPE_OK || o->dry_run)
    return rc;
  if (st->journals_dropped) {
    rc = gc_int(s, "WITH x AS (DELETE" OLD_JOURNALS " RETURNING id), y AS (DELETE FROM "
                "mem_docs WHERE rid IN (SELECT id * 4 + 1 FROM x)) SELECT count(*) FROM x",
                o->keep_journals, &dummy, err);
  }
  if (rc == KOPE_OK && st->sources_dropped)
    rc = gc_int(s, KEEP_SOURCES ", x AS (DELETE" OLD_SOURCES " RETURNING 1) SELECT count(*) "
                "FROM x", o->keep_sources, &dummy, err);
  return rc;
}

int pg_gc(void *impl, const kope_mem_gc_opts *o, kope_mem_gc_stats *st, kope_err *err)
{
  pg *s = impl;
  int rc = pg_txn(s, MEM_TXN_BEGIN, err);

  if (rc != KOPE_OK)
    return rc;
  if ((rc = gc_run(s, o, st, err)) != KOPE_OK) {
    pg_txn(s, MEM_TXN_ROLLBACK, NULL);
    return rc;
  }
  if ((rc = pg_txn(s, MEM_TXN_COMMIT, err)) != KOPE_OK)
    return rc;
  if (o->vacuum && !o->dry_run && s->depth == 0)
    rc = pg_run(s, "VACUUM", NULL, NULL, "compacting", err);
  return rc;
}

/* ---- imports -------------------------------------------------------------- */

int pg_import_begin(void *impl, const char *src_db, const char *src_path,
                    int64_t *import_id, kope_err *err)
{
  pg_par p = {0};
  int rc;

  pg_par_text(&p, src_db);
  pg_par_text(&p, src_path);
  pg_par_real(&p, mem_wall_now());
  rc = pg_int(impl, "INSERT INTO imports(source_db, source_path, imported) VALUES ($1, $2, "
              "$3) RETURNING id", &p, import_id, err);
  return rc == KOPE_OK ? pg_imp_start(impl, err) : rc;
}

int pg_import_end(void *impl, const kope_mem_import_stats *is, kope_err *err)
{
  pg_par p = {0};
  int rc = pg_imp_flush(impl, err);   /* the import's last score rows */

  /* a large import: fresh statistics for the planner and for the search
   * terms' counts (pg_query.c), visible at commit, instead of waiting for
   * autovacuum */
  if (rc == KOPE_OK && is->cases_new + is->journals_new >= PG_ANALYZE_ROWS)
    rc = pg_run(impl, "ANALYZE cases, case_scores, mem_docs", NULL, NULL,
                "analyzing the imported rows", err);
  if (rc != KOPE_OK)
    return rc;
  pg_par_i64(&p, is->import_id);
  pg_par_i64(&p, is->cases_new);
  pg_par_i64(&p, is->sessions_new);
  pg_par_i64(&p, is->journals_new);
  pg_par_i64(&p, is->sources_new);
  return pg_run(impl, "UPDATE imports SET cases = $2, sessions = $3, journals = $4, "
                "sources = $5 WHERE id = $1", &p, NULL, "recording an import", err);
}

/* ---- integrity --------------------------------------------------------------- */

/* Foreign keys and constraints are enforced by the server; what can drift
 * is derived data: score rows, full-text documents and rank. */
int pg_integrity(void *impl, kope_buf *report, kope_err *err)
{
  pg *s = impl;
  PGresult *r = NULL;
  int64_t v[5];
  int rc, i;

  rc = pg_run(s, "SELECT (SELECT count(*) FROM cases), (SELECT count(*) FROM case_scores), "
              "(SELECT count(*) FROM cases) + (SELECT count(*) FROM journals) + (SELECT "
              "count(*) FROM digests), (SELECT count(*) FROM mem_docs), (SELECT count(*) FROM "
              "case_scores WHERE abs(rank - d_score * confidence) > 1e-9 * (1 + rank))", NULL,
              &r, "checking integrity", err);
  if (rc != KOPE_OK)
    return rc;
  for (i = 0; i < 5; i++)
    v[i] = pg_i64(r, 0, i);
  PQclear(r);
  if (v[0] == v[1] && v[2] == v[3] && v[4] == 0) {
    if (report)
      kope_buf_puts(report, "integrity: ok\n");
    return KOPE_OK;
  }
  if (report)
    kope_buf_printf(report, "%lld Cases with %lld score rows; %lld documents with %lld "
                    "full-text rows; %lld stale ranks\n", (long long)v[0], (long long)v[1],
                    (long long)v[2], (long long)v[3], (long long)v[4]);
  return kope_err_set(err, KOPE_EINPUT, "%s: integrity check failed", s->path);
}
