/*
 * PostgreSQL engine: the store URL (and masking its password for every
 * message), connecting, validating a database as a kope store, parameter
 * lists and result helpers, error mapping, nestable transactions and the
 * engine table.
 *
 * A store is one PostgreSQL database (postgresql://user@host:port/dbname
 * or postgres://...; libpq reads the rest: PGPASSFILE, PGPASSWORD, PGHOST,
 * ... from the environment, ~/.pgpass). Credentials only ever come from
 * there: kope never writes the URL with its password into a Case, a log
 * or a message (db->path is the masked URL).
 *
 * Opening never writes to a database before it has been recognised: an
 * empty database becomes a store, one that holds kope_meta is migrated
 * forward when older, and one with other tables but no kope_meta is
 * refused (KOPE_EINPUT). Transactions: the outermost kope_db_begin is a
 * READ COMMITTED transaction, inner ones are savepoints (an inner failure
 * rolls back to its savepoint and makes the outer commit fail, as in the
 * SQLite engine). A retrieval reads in one REPEATABLE READ snapshot.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mem/pg.h"

/* ---- the URL -------------------------------------------------------------- */

/* Mask "user:PASS@" in the authority part. */
static void mask_userinfo(char *u)
{
  char *auth = strstr(u, "://"), *end, *at, *colon;

  if (!auth)
    return;
  auth += 3;
  end = auth + strcspn(auth, "/?");
  for (at = end; at > auth && at[-1] != '@'; at--)
    ;
  if (at == auth)
    return;
  colon = memchr(auth, ':', (size_t)(at - 1 - auth));
  if (colon && at - 1 - colon > 0) {
    memmove(colon + 4, at - 1, strlen(at - 1) + 1);
    memcpy(colon + 1, "***", 3);
  }
}

char *kope_pg_mask_url(const char *url)
{
  size_t len = strlen(url);
  char *u = malloc(len + 4 * 8 + 1), *p;

  if (!u)
    return NULL;
  memcpy(u, url, len + 1);
  mask_userinfo(u);
  for (p = strstr(u, "password="); p; p = strstr(p + 1, "password=")) {
    char *v = p + 9, *e = v + strcspn(v, "&");
    if (strlen(u) + 3 > len + 32)
      break;
    memmove(v + 3, e, strlen(e) + 1);
    memcpy(v, "***", 3);
  }
  return u;
}

/* ---- parameters and results ---------------------------------------------- */

static int par_push(pg_par *p, const char *v)
{
  if (p->n >= PG_MAX_PAR)
    return p->n;   /* a programming error; the statement then fails */
  p->v[p->n] = v;
  return ++p->n;
}

int pg_par_text(pg_par *p, const char *v)
{
  return par_push(p, v);
}

int pg_par_i64(pg_par *p, int64_t v)
{
  int i = p->n < PG_MAX_PAR ? p->n : PG_MAX_PAR - 1;

  snprintf(p->num[i], sizeof p->num[i], "%lld", (long long)v);
  return par_push(p, p->num[i]);
}

int pg_par_id(pg_par *p, int64_t v)
{
  return v ? pg_par_i64(p, v) : par_push(p, NULL);
}

int pg_par_real(pg_par *p, double v)
{
  int i = p->n < PG_MAX_PAR ? p->n : PG_MAX_PAR - 1;

  if (!(v == v && v - v == 0.0))   /* not finite */
    return par_push(p, NULL);
  snprintf(p->num[i], sizeof p->num[i], "%.17g", v);
  return par_push(p, p->num[i]);
}

static int status_of(const char *state)
{
  if (!state)
    return KOPE_EENV;   /* no SQLSTATE: the connection failed */
  if (!strncmp(state, "23", 2) || !strncmp(state, "22", 2))
    return KOPE_EINPUT;
  if (!strncmp(state, "08", 2) || !strncmp(state, "40", 2) || !strncmp(state, "53", 2) ||
      !strncmp(state, "57", 2) || !strncmp(state, "28", 2) || !strcmp(state, "25006") ||
      !strcmp(state, "42501"))
    return KOPE_EENV;
  return KOPE_EINTERNAL;
}

int pg_fail(pg *s, PGresult *r, const char *what, kope_err *err)
{
  const char *state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
  const char *msg = r ? PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY) : NULL;
  const char *hint = "";

  if (!msg)
    msg = PQerrorMessage(s->c);
  if (state && !strncmp(state, "40", 2))
    hint = " (a concurrent writer conflicted; run it again)";
  if (s->depth > 0)
    s->failed = 1;
  return kope_err_set(err, status_of(state), "%s: %s: %.*s%s", s->path, what,
                      (int)strcspn(msg, "\n"), msg, hint);
}

int pg_run(pg *s, const char *sql, const pg_par *p, PGresult **res, const char *what,
           kope_err *err)
{
  PGresult *r;
  ExecStatusType st;
  int rc;

  if (res)
    *res = NULL;
  if ((rc = pg_imp_before(s, sql, err)) != KOPE_OK)
    return rc;
  r = p ? PQexecParams(s->c, sql, p->n, NULL, p->v, NULL, NULL, 0)
        : PQexec(s->c, sql);   /* may hold several statements */
  st = PQresultStatus(r);
  if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
    rc = pg_fail(s, r, what, err);
    PQclear(r);
    return rc;
  }
  if (res)
    *res = r;
  else
    PQclear(r);
  return KOPE_OK;
}

int pg_int(pg *s, const char *sql, const pg_par *p, int64_t *v, kope_err *err)
{
  PGresult *r = NULL;
  int rc = pg_run(s, sql, p, &r, "reading", err);

  *v = 0;
  if (rc == KOPE_OK && PQntuples(r) > 0)
    *v = pg_i64(r, 0, 0);
  PQclear(r);
  return rc;
}

char *pg_txt(const PGresult *r, int row, int col)
{
  return PQgetisnull(r, row, col) ? NULL : kope_strdup(PQgetvalue(r, row, col));
}

char *pg_txt0(const PGresult *r, int row, int col)
{
  char *t = pg_txt(r, row, col);

  return t ? t : kope_strdup("");
}

int64_t pg_i64(const PGresult *r, int row, int col)
{
  return PQgetisnull(r, row, col) ? 0 : strtoll(PQgetvalue(r, row, col), NULL, 10);
}

double pg_dbl(const PGresult *r, int row, int col, double if_null)
{
  return PQgetisnull(r, row, col) ? if_null : strtod(PQgetvalue(r, row, col), NULL);
}

/* ---- transactions ---------------------------------------------------------- */

static int txn_sql(pg *s, const char *sql, kope_err *err)
{
  return pg_run(s, sql, NULL, NULL, "a transaction", err);
}

static int txn_begin(pg *s, kope_err *err)
{
  char sql[48];
  int rc;

  if (s->reading)
    return kope_err_set(err, KOPE_EINTERNAL, "a write started inside a read snapshot");
  if (s->depth == 0) {
    s->failed = 0;
    if ((rc = txn_sql(s, "BEGIN", err)) != KOPE_OK)
      return rc;
    s->depth = 1;
    return KOPE_OK;
  }
  snprintf(sql, sizeof sql, "SAVEPOINT k%d", s->depth);
  if (!s->imp && (rc = txn_sql(s, sql, err)) != KOPE_OK)   /* import: see pg_import.c */
    return rc;
  s->depth++;
  return KOPE_OK;
}

static int txn_commit(pg *s, kope_err *err)
{
  char sql[48];
  int rc;

  if (s->depth == 0)
    return kope_err_set(err, KOPE_EINTERNAL, "commit without a transaction");
  if (--s->depth > 0) {
    snprintf(sql, sizeof sql, "RELEASE SAVEPOINT k%d", s->depth);
    return s->failed || s->imp ? KOPE_OK : txn_sql(s, sql, err);
  }
  if (!s->failed && pg_imp_flush(s, err) != KOPE_OK)   /* an import's last scores */
    s->failed = 1;
  pg_imp_stop(s);
  if (s->failed) {
    txn_sql(s, "ROLLBACK", NULL);
    return kope_err_set(err, KOPE_EINPUT, "%s: a write in this transaction failed; "
                        "nothing was stored", s->path);
  }
  if ((rc = txn_sql(s, "COMMIT", err)) != KOPE_OK)
    txn_sql(s, "ROLLBACK", NULL);
  return rc;
}

static void txn_rollback(pg *s)
{
  char sql[48];

  if (s->depth == 0)
    return;
  if (--s->depth > 0) {
    snprintf(sql, sizeof sql, "ROLLBACK TO SAVEPOINT k%d", s->depth);
    if (!s->imp)
      txn_sql(s, sql, NULL);
    s->failed = 1;
    return;
  }
  pg_imp_stop(s);
  txn_sql(s, "ROLLBACK", NULL);
  s->failed = 0;
}

int pg_txn(void *impl, int op, kope_err *err)
{
  pg *s = impl;
  int rc;

  switch (op) {
  case MEM_TXN_READ:
    if (s->depth > 0 || s->reading)
      return KOPE_OK;
    rc = txn_sql(s, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", err);
    s->reading = rc == KOPE_OK;
    return rc;
  case MEM_TXN_READ_END:
    if (s->reading)
      txn_sql(s, "COMMIT", NULL);
    s->reading = 0;
    return KOPE_OK;
  case MEM_TXN_BEGIN:
    return txn_begin(s, err);
  case MEM_TXN_COMMIT:
    return txn_commit(s, err);
  default:
    txn_rollback(s);
    return KOPE_OK;
  }
}

/* ---- opening ------------------------------------------------------------ */

static void quiet(void *arg, const char *message)
{
  (void)arg;
  (void)message;
}

static int connect_store(pg *s, const char *url, int flags, kope_err *err)
{
  const char *msg;

  s->c = PQconnectdb(url);
  if (!s->c)
    return kope_err_set(err, KOPE_EINTERNAL, "out of memory");
  if (PQstatus(s->c) != CONNECTION_OK) {
    msg = PQerrorMessage(s->c);
    return kope_err_set(err, KOPE_EENV, "%s: cannot connect to PostgreSQL: %.*s", s->path,
                        (int)strcspn(msg, "\n"), msg);
  }
  PQsetNoticeProcessor(s->c, quiet, NULL);
  s->readonly = (flags & KOPE_DB_READONLY) != 0;
  return txn_sql(s, s->readonly ? "SET default_transaction_read_only = on; "
                                  "SET client_min_messages = warning"
                                : "SET client_min_messages = warning", err);
}

/* fresh: an empty database; else read the schema version. */
static int validate(pg *s, int *fresh, kope_err *err)
{
  int64_t has_meta = 0, ntab = 0, ver = 0;
  int rc = pg_int(s, "SELECT (to_regclass('kope_meta') IS NOT NULL)::int", NULL, &has_meta, err);

  if (rc == KOPE_OK)
    rc = pg_int(s, "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()",
                NULL, &ntab, err);
  if (rc != KOPE_OK)
    return rc;
  *fresh = !has_meta && ntab == 0;
  if (*fresh)
    return KOPE_OK;
  if (!has_meta)
    return kope_err_set(err, KOPE_EINPUT, "%s: not a kope database (it holds other "
                        "tables and no kope_meta)", s->path);
  if ((rc = pg_int(s, "SELECT value::bigint FROM kope_meta WHERE key = 'schema_version'",
                   NULL, &ver, err)) != KOPE_OK)
    return rc;
  if (ver > PG_SCHEMA_VERSION)
    return kope_err_set(err, KOPE_EINPUT, "%s: written by a newer kope (schema version "
                        "%lld; this kope reads up to %d); upgrade kope", s->path,
                        (long long)ver, PG_SCHEMA_VERSION);
  s->schema = (int)ver;
  return KOPE_OK;
}

static int load_uuid(pg *s, kope_err *err)
{
  PGresult *r = NULL;
  int rc = pg_run(s, "SELECT value FROM kope_meta WHERE key = 'db_uuid'", NULL, &r,
                  "reading the store identity", err);

  if (rc == KOPE_OK && PQntuples(r) == 1)
    snprintf(s->uuid, sizeof s->uuid, "%s", PQgetvalue(r, 0, 0));
  else if (rc == KOPE_OK)
    rc = kope_err_set(err, KOPE_EINPUT, "%s: damaged store (no identity)", s->path);
  PQclear(r);
  return rc;
}

static void pg_close(void *impl)
{
  pg *s = impl;

  if (!s)
    return;
  if (s->c)
    PQfinish(s->c);
  pg_imp_stop(s);
  free(s->df);
  free(s->common);
  free(s->path);
  free(s);
}

static int pg_open(const char *url, int flags, void **impl, kope_err *err)
{
  pg *s = calloc(1, sizeof *s);
  int rc, fresh = 0;

  *impl = NULL;
  if (!s || !(s->path = kope_pg_mask_url(url))) {
    free(s);
    return kope_err_set(err, KOPE_EINTERNAL, "out of memory");
  }
  if ((rc = connect_store(s, url, flags, err)) != KOPE_OK ||
      (rc = validate(s, &fresh, err)) != KOPE_OK)
    goto fail;
  if (fresh && (flags & (KOPE_DB_READONLY | KOPE_DB_NOCREATE))) {
    rc = kope_err_set(err, KOPE_EINPUT, "%s: no kope store in this database", s->path);
    goto fail;
  }
  if (s->schema < PG_SCHEMA_VERSION && (flags & KOPE_DB_READONLY)) {
    rc = kope_err_set(err, KOPE_EINPUT, "%s: schema version %d needs a migration; open it "
                      "once without read-only", s->path, s->schema);
    goto fail;
  }
  if (s->schema < PG_SCHEMA_VERSION && (rc = pg_migrate(s, err)) != KOPE_OK)
    goto fail;
  if ((rc = load_uuid(s, err)) != KOPE_OK)
    goto fail;
  *impl = s;
  return KOPE_OK;
fail:
  pg_close(s);
  return rc;
}

static const char *pg_uuid(void *impl)
{
  return ((pg *)impl)->uuid;
}

static int pg_schema_version(void *impl)
{
  return ((pg *)impl)->schema;
}

const mem_engine kope_mem_pg_engine = {
  .name = "postgresql",
  .open = pg_open,
  .close = pg_close,
  .uuid = pg_uuid,
  .schema_version = pg_schema_version,
  .txn = pg_txn,
  .node_get = pg_node_get,
  .node_put = pg_node_put,
  .ancestors = pg_ancestors,
  .case_put = pg_case_put,
  .case_get = pg_case_get,
  .case_brief = pg_case_brief,
  .case_each = pg_case_each,
  .successors = pg_successors,
  .find_uid = pg_find_uid,
  .exists = pg_exists,
  .nodes_all = pg_nodes_all,
  .node_put_full = pg_node_put_full,
  .top = pg_top,
  .text = pg_text,
  .err_cases = pg_err_cases,
  .fix_of = pg_fix_of,
  .session_put = pg_session_put,
  .session_end = pg_session_end,
  .session_get = pg_session_get,
  .journal_put = pg_journal_put,
  .journal_get = pg_journal_get,
  .journal_each = pg_journal_each,
  .source_put = pg_source_put,
  .source_get = pg_source_get,
  .hw_put = pg_hw_put,
  .hw_each = pg_hw_each,
  .digest_rows = pg_digest_rows,
  .digest_put = pg_digest_put,
  .digest_list = pg_digest_list,
  .digest_get = pg_digest_get,
  .digest_set_text = pg_digest_set_text,
  .stats = pg_stats,
  .gc = pg_gc,
  .import_begin = pg_import_begin,
  .import_end = pg_import_end,
  .integrity = pg_integrity,
  .case_briefs = pg_case_briefs,
  .case_gets = pg_case_gets,
  .fixes_of = pg_fixes_of,
};
