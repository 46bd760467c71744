/*
 * PostgreSQL engine: Case rows. Storing a Case with its kernel sources and
 * its full-text document, reading Cases back (one, or all matching a
 * filter, optionally with their ancestors), the scoring nodes the d(v)
 * walk reads and writes (locked inside a write transaction, see pg.h),
 * lineage lookups and provenance (uid) lookups.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mem/pg.h"

/* The Case columns read back (indexes used by read_case). */
#define PG_CASE_COLS                                                              \
  "c.id, c.session_id, c.step, c.prev_id, c.op, c.category, c.target, c.hw, "     \
  "c.scene, c.layer, c.thought_id, c.thought_title, c.rationale, "                \
  "c.code_before_hash, c.code_after_hash, c.diff_hash, c.feedback, c.verdict, "   \
  "c.correct, c.speedup, c.speedup_vendor, c.confidence, c.tokens_in, "           \
  "c.tokens_out, c.eval_seconds, c.harness, c.created, s.step_ratio, s.label, "   \
  "s.d_score, s.rank, s.n_succ, c.err_sig, c.origin_db, c.origin_id, "            \
  "c.import_id, i.source_path, c.device"
#define PG_CASE_FROM                                                              \
  " FROM cases c JOIN case_scores s ON s.id = c.id"                               \
  " LEFT JOIN imports i ON i.id = c.import_id"

/* What Case text the full-text document holds (as the SQLite engine). */
#define PG_CASE_DOC                                                               \
  "to_tsvector('simple', coalesce(op, '') || ' ' || coalesce(category, '') || ' ' || " \
  "coalesce(layer, '') || ' ' || coalesce(thought_id, '') || ' ' || "             \
  "coalesce(thought_title, '') || ' ' || coalesce(rationale, '') || ' ' || "      \
  "coalesce(verdict, '') || ' ' || substr(coalesce(feedback, ''), 1, 2000))"

#define NODE_COLS "prev_id, a, step_ratio, d_score, succ_sum, n_succ, confidence, label"

/* ---- scoring nodes ------------------------------------------------------ */

static void read_node(const PGresult *r, int row, int first, mem_node *n)
{
  n->prev_id = pg_i64(r, row, first);
  n->a = pg_dbl(r, row, first + 1, 0.0);
  n->r = pg_dbl(r, row, first + 2, 0.0);
  n->d = pg_dbl(r, row, first + 3, 0.0);
  n->succ_sum = pg_dbl(r, row, first + 4, 0.0);
  n->n_succ = pg_i64(r, row, first + 5);
  n->confidence = pg_dbl(r, row, first + 6, 0.0);
  n->label = (int)pg_i64(r, row, first + 7);
}

int pg_node_get(void *impl, int64_t id, mem_node *n, kope_err *err)
{
  pg *s = impl;
  pg_par p = {0};
  PGresult *r = NULL;
  int rc;

  pg_par_i64(&p, id);
  /* in a write: lock the row, so concurrent successor updates serialize */
  rc = pg_run(s, s->depth > 0 ? "SELECT " NODE_COLS " FROM case_scores WHERE id = $1 "
                                "FOR UPDATE"
                              : "SELECT " NODE_COLS " FROM case_scores WHERE id = $1",
              &p, &r, "reading a Case", err);
  memset(n, 0, sizeof *n);
  n->id = id;
  if (rc == KOPE_OK && PQntuples(r) == 1)
    read_node(r, 0, 0, n);
  else if (rc == KOPE_OK)
    rc = kope_err_set(err, KOPE_EINPUT, "no Case with id %lld in %s", (long long)id, s->path);
  PQclear(r);
  return rc;
}

/* The lineage in one recursive query (one round trip to the server). */
int pg_ancestors(void *impl, int64_t id, mem_node **nodes, size_t *n, kope_err *err)
{
  pg *s = impl;
  pg_par p = {0};
  PGresult *r = NULL;
  mem_node *v;
  int rc, i, rows;

  *nodes = NULL;
  *n = 0;
  pg_par_i64(&p, id);
  rc = pg_run(s, "WITH RECURSIVE up(id, depth) AS (SELECT id, 0 FROM case_scores WHERE "
              "id = $1 UNION ALL SELECT s.prev_id, up.depth + 1 FROM case_scores s JOIN up "
              "ON s.id = up.id WHERE s.prev_id IS NOT NULL AND s.prev_id < s.id) "
              "SELECT s.id, " NODE_COLS " FROM up JOIN case_scores s ON s.id = up.id "
              "ORDER BY up.depth", &p, &r, "reading a lineage", err);
  if (rc != KOPE_OK)
    return rc;
  rows = PQntuples(r);
  if (rows == 0 || !(v = calloc((size_t)rows, sizeof *v))) {
    PQclear(r);
    return rows == 0 ? kope_err_set(err, KOPE_EINPUT, "no Case with id %lld in %s",
                                    (long long)id, s->path)
                     : kope_err_set(err, KOPE_EINTERNAL, "out of memory");
  }
  for (i = 0; i < rows; i++) {
    v[i].id = pg_i64(r, i, 0);
    read_node(r, i, 1, &v[i]);
  }
  PQclear(r);
  *nodes = v;
  *n = (size_t)rows;
  return KOPE_OK;
}

static int put_node(pg *s, int full, const mem_node *n, kope_err *err)
{
  pg_par p = {0};

  pg_par_i64(&p, n->id);
  pg_par_real(&p, n->succ_sum);
  pg_par_i64(&p, n->n_succ);
  pg_par_real(&p, n->d);
  pg_par_real(&p, n->d * n->confidence);
  if (!full)
    return pg_run(s, "UPDATE case_scores SET succ_sum = $2, n_succ = $3, d_score = $4, "
                  "rank = $5 WHERE id = $1", &p, NULL, "updating scores", err);
  pg_par_real(&p, n->r);
  pg_par_i64(&p, n->label);
  return pg_run(s, "UPDATE case_scores SET succ_sum = $2, n_succ = $3, d_score = $4, "
                "rank = $5, step_ratio = $6, label = $7 WHERE id = $1", &p, NULL,
                "updating scores", err);
}

int pg_node_put(void *impl, const mem_node *n, kope_err *err)
{
  return put_node(impl, 0, n, err);
}

int pg_node_put_full(void *impl, const mem_node *n, kope_err *err)
{
  return put_node(impl, 1, n, err);
}

int pg_nodes_all(void *impl, mem_node **nodes, size_t *n, kope_err *err)
{
  pg *s = impl;
  PGresult *r = NULL;
  mem_node *v;
  int rc = pg_run(s, "SELECT id, " NODE_COLS " FROM case_scores ORDER BY id", NULL, &r,
                  "reading the graph", err), i, rows;

  *nodes = NULL;
  *n = 0;
  if (rc != KOPE_OK)
    return rc;
  rows = PQntuples(r);
  if (!(v = calloc((size_t)rows + 1, sizeof *v))) {
    PQclear(r);
    return kope_err_set(err, KOPE_EINTERNAL, "out of memory");
  }
  for (i = 0; i < rows; i++) {
    v[i].id = pg_i64(r, i, 0);
    read_node(r, i, 1, &v[i]);
  }
  PQclear(r);
  *nodes = v;
  *n = (size_t)rows;
  return KOPE_OK;
}

/* ---- storing ------------------------------------------------------------ */

static int put_source(pg *s, const char *body, const char *given, char hash[65],
                      kope_err *err)
{
  snprintf(hash, 65, "%s", given ? given : "");
  return body ? pg_source_put(s, body, hash, NULL, err) : KOPE_OK;
}

static int put_scores(pg *s, int64_t id, const kope_mem_case *c, const mem_node *v,
                      kope_err *err)
{
  pg_par p = {0};

  pg_par_i64(&p, id);
  pg_par_id(&p, v->prev_id);
  pg_par_text(&p, c->op);
  pg_par_text(&p, c->target);
  pg_par_text(&p, c->category);
  pg_par_text(&p, c->layer);
  pg_par_text(&p, c->thought_id);
  pg_par_text(&p, c->hw);
  pg_par_real(&p, v->a);
  pg_par_real(&p, v->r);
  pg_par_i64(&p, v->label);
  pg_par_real(&p, v->d);
  pg_par_real(&p, v->confidence);
  pg_par_real(&p, v->d * v->confidence);
  return pg_run(s, "INSERT INTO case_scores(id, prev_id, op, target, category, layer, "
                "thought_id, hw, a, step_ratio, label, d_score, confidence, rank) VALUES "
                "($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)", &p, NULL, "storing scores", err);
}

static void case_params(pg_par *p, const kope_mem_case *c, const char h[3][65])
{
  pg_par_id(p, c->session_id);
  pg_par_i64(p, c->step);
  pg_par_id(p, c->prev_case_id);
  pg_par_text(p, c->op);
  pg_par_text(p, c->category);
  pg_par_text(p, c->target);
  pg_par_text(p, c->hw);
  pg_par_text(p, c->scene);
  pg_par_text(p, c->layer);
  pg_par_text(p, c->thought_id);
  pg_par_text(p, c->thought_title);
  pg_par_text(p, c->rationale);
  pg_par_text(p, h[0][0] ? h[0] : NULL);
  pg_par_text(p, h[1][0] ? h[1] : NULL);
  pg_par_text(p, h[2][0] ? h[2] : NULL);
  pg_par_text(p, c->feedback);
  pg_par_text(p, c->verdict);
  pg_par_i64(p, c->correct != 0);
  pg_par_real(p, c->speedup);
  pg_par_real(p, c->speedup_vendor);
  pg_par_real(p, c->confidence);
  pg_par_i64(p, c->tokens_in);
  pg_par_i64(p, c->tokens_out);
  pg_par_real(p, c->eval_seconds);
  pg_par_text(p, c->harness);
  pg_par_real(p, c->created > 0 ? c->created : mem_wall_now());
}

int pg_case_put(void *impl, const kope_mem_case *c, const mem_node *score,
                const char *err_sig, const mem_origin *o, int64_t *id, kope_err *err)
{
  pg *s = impl;
  char h[3][65];
  pg_par p = {0}, q = {0};
  PGresult *r = NULL;
  int rc;

  if ((rc = put_source(s, c->code_before, c->code_before_hash, h[0], err)) != KOPE_OK ||
      (rc = put_source(s, c->code_after, c->code_after_hash, h[1], err)) != KOPE_OK ||
      (rc = put_source(s, c->diff, c->diff_hash, h[2], err)) != KOPE_OK)
    return rc;
  case_params(&p, c, (const char(*)[65])h);
  pg_par_text(&p, err_sig);
  pg_par_text(&p, o ? o->db : NULL);
  pg_par_id(&p, o && o->db ? o->id : 0);
  pg_par_id(&p, o ? o->import_id : 0);
  pg_par_text(&p, c->device[0] ? c->device : NULL);
  rc = pg_run(s, "INSERT INTO cases(session_id, step, prev_id, op, category, target, hw, "
              "scene, layer, thought_id, thought_title, rationale, code_before_hash, "
              "code_after_hash, diff_hash, feedback, verdict, correct, speedup, "
              "speedup_vendor, confidence, tokens_in, tokens_out, eval_seconds, harness, "
              "created, err_sig, origin_db, origin_id, import_id, device) VALUES ($1, $2, $3, "
              "$4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, "
              "$21, $22, $23, $24, $25, $26, $27, $28, $29, $30, $31) RETURNING id", &p, &r,
              "storing a Case", err);
  if (rc != KOPE_OK)
    return rc;
  *id = pg_i64(r, 0, 0);
  PQclear(r);
  if ((rc = put_scores(s, *id, c, score, err)) != KOPE_OK)
    return rc;
  pg_par_i64(&q, *id);
  return pg_run(s, "INSERT INTO mem_docs(rid, kind, id, case_id, tsv) SELECT id * 4, 0, id, id, "
                PG_CASE_DOC " FROM cases WHERE id = $1", &q, NULL, "indexing a Case", err);
}

/* ---- reading -------------------------------------------------------------- */

static void col_fixed(const PGresult *r, int row, int col, char *out, size_t size)
{
  snprintf(out, size, "%s", PQgetisnull(r, row, col) ? "" : PQgetvalue(r, row, col));
}

static char *origin_text(const PGresult *r, int row)
{
  const char *path = PQgetisnull(r, row, 36) ? NULL : PQgetvalue(r, row, 36);

  if (PQgetisnull(r, row, 33))
    return NULL;
  return kope_sprintf("imported from %s as %lld (import #%lld%s%s)", PQgetvalue(r, row, 33),
                      (long long)pg_i64(r, row, 34), (long long)pg_i64(r, row, 35),
                      path ? ", " : "", path ? path : "");
}

static void read_case(pg *s, const PGresult *r, int row, kope_mem_case *c)
{
  kope_mem_case_init(c);
  c->owned = 1;
  c->id = pg_i64(r, row, 0);
  c->session_id = pg_i64(r, row, 1);
  c->step = pg_i64(r, row, 2);
  c->prev_case_id = pg_i64(r, row, 3);
  c->op = pg_txt(r, row, 4);
  c->category = pg_txt(r, row, 5);
  c->target = pg_txt(r, row, 6);
  c->hw = pg_txt(r, row, 7);
  c->scene = pg_txt(r, row, 8);
  c->layer = pg_txt(r, row, 9);
  c->thought_id = pg_txt(r, row, 10);
  c->thought_title = pg_txt(r, row, 11);
  c->rationale = pg_txt(r, row, 12);
  col_fixed(r, row, 13, c->code_before_hash, sizeof c->code_before_hash);
  col_fixed(r, row, 14, c->code_after_hash, sizeof c->code_after_hash);
  col_fixed(r, row, 15, c->diff_hash, sizeof c->diff_hash);
  c->feedback = pg_txt(r, row, 16);
  c->verdict = pg_txt(r, row, 17);
  c->correct = (int)pg_i64(r, row, 18);
  c->speedup = pg_dbl(r, row, 19, NAN);
  c->speedup_vendor = pg_dbl(r, row, 20, NAN);
  c->confidence = pg_dbl(r, row, 21, 0.0);
  c->tokens_in = pg_i64(r, row, 22);
  c->tokens_out = pg_i64(r, row, 23);
  c->eval_seconds = pg_dbl(r, row, 24, NAN);
  c->harness = pg_txt(r, row, 25);
  c->created = pg_dbl(r, row, 26, 0.0);
  c->step_ratio = pg_dbl(r, row, 27, 0.0);
  c->label = (int)pg_i64(r, row, 28);
  c->d_score = pg_dbl(r, row, 29, 0.0);
  c->rank = pg_dbl(r, row, 30, 0.0);
  c->n_succ = pg_i64(r, row, 31);
  c->err_sig = pg_txt(r, row, 32);
  c->uid = PQgetisnull(r, row, 33) ? mem_uid(s->uuid, c->id)
                                   : mem_uid(PQgetvalue(r, row, 33), pg_i64(r, row, 34));
  c->origin = origin_text(r, row);
  col_fixed(r, row, 37, c->device, sizeof c->device);
}

static int load_code(pg *s, kope_mem_case *c, kope_err *err)
{
  char *b = NULL, *a = NULL, *d = NULL;
  int rc = KOPE_OK;

  if (c->code_before_hash[0])
    rc = pg_source_get(s, c->code_before_hash, &b, err);
  if (rc == KOPE_OK && c->code_after_hash[0])
    rc = pg_source_get(s, c->code_after_hash, &a, err);
  if (rc == KOPE_OK && c->diff_hash[0])
    rc = pg_source_get(s, c->diff_hash, &d, err);
  c->code_before = b;
  c->code_after = a;
  c->diff = d;
  return rc;
}

int pg_case_get(void *impl, int64_t id, int flags, kope_mem_case *out, kope_err *err)
{
  pg *s = impl;
  pg_par p = {0};
  PGresult *r = NULL;
  int rc;

  pg_par_i64(&p, id);
  rc = pg_run(s, "SELECT " PG_CASE_COLS PG_CASE_FROM " WHERE c.id = $1", &p, &r,
              "reading a Case", err);
  if (rc == KOPE_OK && PQntuples(r) == 1)
    read_case(s, r, 0, out);
  else if (rc == KOPE_OK)
    rc = kope_err_set(err, KOPE_EINPUT, "no Case with id %lld in %s", (long long)id, s->path);
  PQclear(r);
  if (rc == KOPE_OK && (flags & KOPE_MEM_WITH_CODE) && (rc = load_code(s, out, err)))
    kope_mem_case_release(out);
  return rc;
}

int pg_case_brief(void *impl, int64_t id, kope_mem_case *out, kope_err *err)
{
  pg *s = impl;
  pg_par p = {0};
  PGresult *r = NULL;
  int rc;

  kope_mem_case_init(out);
  pg_par_i64(&p, id);
  rc = pg_run(s, "SELECT label, rank, step_ratio, d_score, layer, target, hw FROM "
              "case_scores WHERE id = $1", &p, &r, "reading a Case", err);
  if (rc == KOPE_OK && PQntuples(r) == 1) {
    out->owned = 1;
    out->id = id;
    out->label = (int)pg_i64(r, 0, 0);
    out->rank = pg_dbl(r, 0, 1, 0.0);
    out->step_ratio = pg_dbl(r, 0, 2, 0.0);
    out->d_score = pg_dbl(r, 0, 3, 0.0);
    out->layer = pg_txt(r, 0, 4);
    out->target = pg_txt(r, 0, 5);
    out->hw = pg_txt(r, 0, 6);
  } else if (rc == KOPE_OK) {
    rc = kope_err_set(err, KOPE_EINPUT, "no Case with id %lld in %s", (long long)id, s->path);
  }
  PQclear(r);
  return rc;
}

/* ---- filters ------------------------------------------------------------ */

void pg_filter_sql(const kope_mem_filter *f, int no_label, kope_buf *sql, pg_par *p)
{
  if (f->op) kope_buf_printf(sql, " AND s.op = $%d", pg_par_text(p, f->op));
  if (f->category) kope_buf_printf(sql, " AND s.category = $%d", pg_par_text(p, f->category));
  if (f->layer) kope_buf_printf(sql, " AND s.layer = $%d", pg_par_text(p, f->layer));
  if (f->thought_id)
    kope_buf_printf(sql, " AND s.thought_id = $%d", pg_par_text(p, f->thought_id));
  if (f->target) kope_buf_printf(sql, " AND s.target = $%d", pg_par_text(p, f->target));
  if (f->hw) kope_buf_printf(sql, " AND s.hw = $%d", pg_par_text(p, f->hw));
  if (f->label && !no_label)
    kope_buf_printf(sql, " AND s.label = $%d", pg_par_i64(p, kope_mem_label_parse(f->label)));
  if (f->verdict) kope_buf_printf(sql, " AND c.verdict = $%d", pg_par_text(p, f->verdict));
  if (f->session_id)
    kope_buf_printf(sql, " AND c.session_id = $%d", pg_par_i64(p, f->session_id));
}

static void each_sql(const kope_mem_filter *f, int flags, kope_buf *sql, pg_par *p)
{
  if (!(flags & KOPE_MEM_EACH_ANCESTORS)) {
    kope_buf_puts(sql, "SELECT " PG_CASE_COLS PG_CASE_FROM " WHERE true");
    pg_filter_sql(f, 0, sql, p);
  } else {
    kope_buf_puts(sql, "WITH RECURSIVE sel(id) AS (SELECT c.id FROM cases c JOIN case_scores "
                       "s ON s.id = c.id WHERE true");
    pg_filter_sql(f, 0, sql, p);
    kope_buf_puts(sql, " UNION SELECT c.prev_id FROM cases c JOIN sel ON c.id = sel.id "
                       "WHERE c.prev_id IS NOT NULL) SELECT " PG_CASE_COLS PG_CASE_FROM
                       " WHERE c.id IN (SELECT id FROM sel)");
  }
  kope_buf_puts(sql, " ORDER BY c.id");
}

/* The matching rows come in one result (libpq holds them until the walk
 * ends). */
int pg_case_each(void *impl, const kope_mem_filter *f, int flags, kope_mem_case_fn fn,
                 void *ctx, kope_err *err)
{
  pg *s = impl;
  pg_par p = {0};
  PGresult *r = NULL;
  kope_buf sql;
  int rc, i, rows, stop = 0;

  kope_buf_init(&sql, 0);
  each_sql(f, flags, &sql, &p);
  rc = pg_run(s, sql.data, &p, &r, "listing Cases", err);
  kope_buf_release(&sql);
  rows = rc == KOPE_OK ? PQntuples(r) : 0;
  for (i = 0; i < rows && !stop && rc == KOPE_OK; i++) {
    kope_mem_case c;
    read_case(s, r, i, &c);
    if (!(flags & KOPE_MEM_WITH_CODE) || (rc = load_code(s, &c, err)) == KOPE_OK)
      stop = fn(&c, ctx);
    kope_mem_case_release(&c);
  }
  PQclear(r);
  return rc;
}

/* ---- lookups -------------------------------------------------------------- */

int pg_successors(void *impl, int64_t id, mem_ids *out, kope_err *err)
{
  pg *s = impl;
  pg_par p = {0};
  PGresult *r = NULL;
  int rc, i;

  pg_par_i64(&p, id);
  rc = pg_run(s, "SELECT id FROM cases WHERE prev_id = $1 ORDER BY id", &p, &r,
              "reading successors", err);
  for (i = 0; rc == KOPE_OK && i < PQntuples(r); i++)
    mem_ids_push(out, pg_i64(r, i, 0));
  PQclear(r);
  return rc;
}

int pg_find_uid(void *impl, int kind, const char *db, int64_t id, int64_t *local,
                kope_err *err)
{
  static const char *const sql[] = {
    "SELECT id FROM cases WHERE origin_db = $1 AND origin_id = $2",
    "SELECT id FROM sessions WHERE origin_db = $1 AND origin_id = $2",
    "SELECT id FROM journals WHERE origin_db = $1 AND origin_id = $2"};
  pg_par p = {0};

  pg_par_text(&p, db);
  pg_par_i64(&p, id);
  return pg_int(impl, sql[kind < 0 || kind > 2 ? 0 : kind], &p, local, err);
}

int pg_exists(void *impl, int kind, int64_t id, int *yes, kope_err *err)
{
  static const char *const sql[] = {
    "SELECT count(*) FROM cases WHERE id = $1",
    "SELECT count(*) FROM sessions WHERE id = $1",
    "SELECT count(*) FROM journals WHERE id = $1"};
  pg_par p = {0};
  int64_t n = 0;
  int rc;

  pg_par_i64(&p, id);
  rc = pg_int(impl, sql[kind < 0 || kind > 2 ? 0 : kind], &p, &n, err);
  *yes = n > 0;
  return rc;
}
