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
#include "mem/case_fields.h"
#include "mem/pg.h"

/* The Case columns read back, generated from the field table
 * (case_fields.h): CASE and DERIVED columns from cases (c), SCORE columns
 * from case_scores (s), in table order, then the provenance columns
 * read_case reads from PG_N_SEL on. */
#define PG_SEL_IF_CASE(col) "c." col ", "
#define PG_SEL_IF_DERIVED(col) "c." col ", "
#define PG_SEL_IF_SCORE(col) "s." col ", "
#define PG_SEL_IF_ENGINE(col)
#define PG_SEL(name, kind, place, col, ...) PG_SEL_IF_##place(col)
#define PG_CASE_COLS                                                              \
  MEM_CASE_FIELDS(PG_SEL) "c.origin_db, c.origin_id, c.import_id, i.source_path"
#define PG_NSEL_IF_CASE 1
#define PG_NSEL_IF_DERIVED 1
#define PG_NSEL_IF_SCORE 1
#define PG_NSEL_IF_ENGINE 0
#define PG_NSEL(name, kind, place, ...) + PG_NSEL_IF_##place
enum { PG_N_SEL = 0 MEM_CASE_FIELDS(PG_NSEL) };
/* The CASE columns an insert writes, in table order ($1..PG_N_INS). */
#define PG_INS_IF_CASE(col) col ", "
#define PG_INS_IF_DERIVED(col)
#define PG_INS_IF_SCORE(col)
#define PG_INS_IF_ENGINE(col)
#define PG_INS_COL(name, kind, place, col, ...) PG_INS_IF_##place(col)
enum { PG_N_INS = 0 MEM_CASE_FIELDS(MF_COUNT_CASE) };
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

  if (pg_imp_node_get(s, id, n))
    return KOPE_OK;   /* an import's row, locked or written by it */
  pg_par_i64(&p, id);
  /* in a write: lock the row, so concurrent successor updates serialize */
  pg_imp_quiet(s, 1);
  rc = pg_run(s, s->depth > 0 ? "SELECT " NODE_COLS " FROM case_scores WHERE id = $1 "
                                "FOR UPDATE"
                              : "SELECT " NODE_COLS " FROM case_scores WHERE id = $1",
              &p, &r, "reading a Case", err);
  pg_imp_quiet(s, 0);
  memset(n, 0, sizeof *n);
  n->id = id;
  if (rc == KOPE_OK && PQntuples(r) == 1)
    read_node(r, 0, 0, n);
  else if (rc == KOPE_OK)
    rc = kope_err_set(err, KOPE_EINPUT, "no Case with id %lld in %s", (long long)id, s->path);
  PQclear(r);
  if (rc == KOPE_OK)
    rc = pg_imp_node_keep(s, n, 0, err);
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
  pg *s = impl;

  if (s->imp)   /* written in a batch later (pg_import.c) */
    return pg_imp_node_keep(s, n, 1, err);
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

static int put_scores(pg *s, int64_t id, const kope_mem_case_in *c, const mem_node *v,
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

/* Parameter from field f of c (a CASE column); hash: a SRC field's stored
 * hash (borrowed until the statement ran). */
static void field_param(pg_par *p, const kope_mem_case_in *c, const mem_field *f,
                        const char *hash)
{
  switch (f->kind) {
  case MF_LINK: pg_par_id(p, *MF_CAT(c, f, int64_t)); break;
  case MF_INT: pg_par_i64(p, *MF_CAT(c, f, int64_t)); break;
  case MF_BOOL: pg_par_i64(p, *MF_CAT(c, f, int) != 0); break;
  case MF_LABEL: pg_par_i64(p, *MF_CAT(c, f, int)); break;
  case MF_TEXT: pg_par_text(p, *MF_CAT(c, f, mf_str)); break;
  case MF_BUF: pg_par_text(p, MF_CAT(c, f, char)[0] ? MF_CAT(c, f, char) : NULL); break;
  case MF_REAL: pg_par_real(p, *MF_CAT(c, f, double)); break;
  case MF_NUM: pg_par_real(p, *MF_CAT(c, f, double)); break;
  case MF_TIME:
    pg_par_real(p, *MF_CAT(c, f, double) > 0 ? *MF_CAT(c, f, double) : mem_wall_now());
    break;
  case MF_SRC: pg_par_text(p, hash[0] ? hash : NULL); break;
  }
}

#define PG_MAX_SRC 8

/* Store the sources and add every CASE column as a parameter. */
static int case_params(pg *s, pg_par *p, const kope_mem_case_in *c, char h[PG_MAX_SRC][65],
                       kope_err *err)
{
  size_t k;
  int nsrc = 0, rc = KOPE_OK;

  for (k = 0; rc == KOPE_OK && k < mem_n_case_fields; k++) {
    const mem_field *f = &mem_case_fields[k];
    char *hash = h[nsrc < PG_MAX_SRC ? nsrc : PG_MAX_SRC - 1];
    if (f->place != MF_P_CASE)
      continue;
    hash[0] = '\0';
    if (f->kind == MF_SRC) {
      rc = put_source(s, *MF_CAT(c, f, mf_str), MF_CHASH(c, f), hash, err);
      nsrc++;
    }
    field_param(p, c, f, hash);
  }
  return rc;
}

/* INSERT INTO cases(<CASE columns>, err_sig, origin_db, origin_id,
 * import_id) VALUES ($1, ...) RETURNING id. */
static char *insert_sql(void)
{
  kope_buf b;
  int i;

  kope_buf_init(&b, 0);
  kope_buf_puts(&b, "INSERT INTO cases(" MEM_CASE_FIELDS(PG_INS_COL)
                    "err_sig, origin_db, origin_id, import_id) VALUES (");
  for (i = 1; i <= PG_N_INS + 4; i++)
    kope_buf_printf(&b, "%s$%d", i > 1 ? ", " : "", i);
  kope_buf_puts(&b, ") RETURNING id");
  return kope_buf_steal(&b);
}

int pg_case_put(void *impl, const kope_mem_case_in *c, const mem_node *score,
                const char *err_sig, const mem_origin *o, int64_t *id, kope_err *err)
{
  pg *s = impl;
  char h[PG_MAX_SRC][65], *sql = NULL;
  pg_par p = {0}, q = {0};
  PGresult *r = NULL;
  int rc;

  if ((rc = case_params(s, &p, c, h, err)) != KOPE_OK)
    return rc;
  pg_par_text(&p, err_sig);
  pg_par_text(&p, o ? o->db : NULL);
  pg_par_id(&p, o && o->db ? o->id : 0);
  pg_par_id(&p, o ? o->import_id : 0);
  if (!(sql = insert_sql()))
    return kope_err_set(err, KOPE_EINTERNAL, "out of memory");
  rc = pg_run(s, sql, &p, &r, "storing a Case", err);
  free(sql);
  if (rc != KOPE_OK)
    return rc;
  *id = pg_i64(r, 0, 0);
  PQclear(r);
  if ((rc = put_scores(s, *id, c, score, err)) != KOPE_OK)
    return rc;
  if (s->imp) {
    mem_node kept = *score;
    kept.id = *id;
    if ((rc = pg_imp_node_keep(s, &kept, 0, err)) != KOPE_OK ||
        (rc = pg_imp_made(s, MEM_U_CASE, *id, o, err)) != KOPE_OK)
      return rc;
  }
  pg_par_i64(&q, *id);
  return pg_run(s, "INSERT INTO mem_docs(rid, kind, id, case_id, tsv) SELECT id * 4, 0, id, id, "
                PG_CASE_DOC " FROM cases WHERE id = $1", &q, NULL, "indexing a Case", err);
}

/* ---- reading -------------------------------------------------------------- */

static void col_fixed(const PGresult *r, int row, int col, char *out, size_t size)
{
  snprintf(out, size, "%s", PQgetisnull(r, row, col) ? "" : PQgetvalue(r, row, col));
}

/* Field f of c from column i. */
static void read_field(const PGresult *r, int row, int i, kope_mem_case *c, const mem_field *f)
{
  switch (f->kind) {
  case MF_LINK:
  case MF_INT: *MF_AT(c, f, int64_t) = pg_i64(r, row, i); break;
  case MF_BOOL:
  case MF_LABEL: *MF_AT(c, f, int) = (int)pg_i64(r, row, i); break;
  case MF_TEXT: *MF_AT(c, f, mf_str) = pg_txt(r, row, i); break;
  case MF_BUF: col_fixed(r, row, i, MF_AT(c, f, char), f->size); break;
  case MF_REAL: *MF_AT(c, f, double) = pg_dbl(r, row, i, NAN); break;
  case MF_NUM:
  case MF_TIME: *MF_AT(c, f, double) = pg_dbl(r, row, i, 0.0); break;
  case MF_SRC: col_fixed(r, row, i, MF_HASH(c, f), 65); break;
  }
}

static char *origin_text(const PGresult *r, int row)
{
  const char *path = PQgetisnull(r, row, PG_N_SEL + 3) ? NULL : PQgetvalue(r, row, PG_N_SEL + 3);

  if (PQgetisnull(r, row, PG_N_SEL))
    return NULL;
  return kope_sprintf("imported from %s as %lld (import #%lld%s%s)",
                      PQgetvalue(r, row, PG_N_SEL), (long long)pg_i64(r, row, PG_N_SEL + 1),
                      (long long)pg_i64(r, row, PG_N_SEL + 2), path ? ", " : "",
                      path ? path : "");
}

static void read_case(pg *s, const PGresult *r, int row, kope_mem_case *c)
{
  size_t k;
  int i = 0;

  kope_mem_case_init(c);
  for (k = 0; k < mem_n_case_fields; k++)
    if (mem_case_fields[k].place != MF_P_ENGINE)
      read_field(r, row, i++, c, &mem_case_fields[k]);
  c->uid = PQgetisnull(r, row, PG_N_SEL)
               ? mem_uid(s->uuid, c->id)
               : mem_uid(PQgetvalue(r, row, PG_N_SEL), pg_i64(r, row, PG_N_SEL + 1));
  c->origin = origin_text(r, row);
}

/* The texts of the SRC fields, from their hashes. */
static int load_code(pg *s, kope_mem_case *c, kope_err *err)
{
  return mem_case_load_code(c, pg_source_get, s, err);
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

#define PG_BRIEF_COLS "id, label, rank, step_ratio, d_score, layer, target, hw"

static void read_brief(const PGresult *r, int row, kope_mem_case *out)
{
  kope_mem_case_init(out);
  out->id = pg_i64(r, row, 0);
  out->in.score.label = (int)pg_i64(r, row, 1);
  out->in.score.rank = pg_dbl(r, row, 2, 0.0);
  out->in.score.step_ratio = pg_dbl(r, row, 3, 0.0);
  out->in.score.d_score = pg_dbl(r, row, 4, 0.0);
  out->in.layer = pg_txt(r, row, 5);
  out->in.target = pg_txt(r, row, 6);
  out->in.hw = pg_txt(r, row, 7);
}

int pg_case_brief(void *impl, int64_t id, kope_mem_case *out, kope_err *err)
{
  pg *s = impl;
  pg_par p = {0};
  PGresult *r = NULL;
  int rc;

  kope_mem_case_init(out);
  pg_par_i64(&p, id);
  rc = pg_run(s, "SELECT " PG_BRIEF_COLS " FROM case_scores WHERE id = $1", &p, &r,
              "reading a Case", err);
  if (rc == KOPE_OK && PQntuples(r) == 1)
    read_brief(r, 0, out);
  else if (rc == KOPE_OK)
    rc = kope_err_set(err, KOPE_EINPUT, "no Case with id %lld in %s", (long long)id, s->path);
  PQclear(r);
  return rc;
}

/* ---- batched reads (one round trip for many ids) ---------------------------- */

char *pg_id_array(const int64_t *ids, size_t n)
{
  kope_buf b;
  size_t i;

  kope_buf_init(&b, 0);
  kope_buf_puts(&b, "{");
  for (i = 0; i < n; i++)
    kope_buf_printf(&b, "%s%lld", i ? "," : "", (long long)ids[i]);
  kope_buf_puts(&b, "}");
  return kope_buf_steal(&b);
}

typedef void (*row_reader)(pg *s, const PGresult *r, int row, kope_mem_case *out);

static void brief_reader(pg *s, const PGresult *r, int row, kope_mem_case *out)
{
  (void)s;
  read_brief(r, row, out);
}

static void case_reader(pg *s, const PGresult *r, int row, kope_mem_case *out)
{
  read_case(s, r, row, out);
}

/* Run sql (its id column first, $1 = the id array) and hand each row to
 * every out[i] whose ids[i] it answers; an id without a row is an error. */
static int read_many(pg *s, const char *sql, const int64_t *ids, size_t n, kope_mem_case *out,
                     row_reader rd, kope_err *err)
{
  char *arr = pg_id_array(ids, n);
  pg_par p = {0};
  PGresult *r = NULL;
  size_t i;
  int rc, row;

  for (i = 0; i < n; i++)
    kope_mem_case_init(&out[i]);
  if (!arr)
    return kope_err_nomem(err, "a list of Case ids");
  pg_par_text(&p, arr);
  rc = pg_run(s, sql, &p, &r, "reading Cases", err);
  for (row = 0; rc == KOPE_OK && row < PQntuples(r); row++)
    for (i = 0; i < n; i++)
      if (ids[i] == pg_i64(r, row, 0) && !out[i].id)
        rd(s, r, row, &out[i]);
  for (i = 0; rc == KOPE_OK && i < n; i++)
    if (!out[i].id)
      rc = kope_err_set(err, KOPE_EINPUT, "no Case with id %lld in %s", (long long)ids[i],
                        s->path);
  for (i = 0; rc != KOPE_OK && i < n; i++)
    kope_mem_case_release(&out[i]);
  PQclear(r);
  free(arr);
  return rc;
}

int pg_case_briefs(void *impl, const int64_t *ids, size_t n, kope_mem_case *out,
                   kope_err *err)
{
  return n == 0 ? KOPE_OK
                : read_many(impl, "SELECT " PG_BRIEF_COLS " FROM case_scores WHERE id = "
                            "ANY($1::bigint[])", ids, n, out, brief_reader, err);
}

int pg_case_gets(void *impl, const int64_t *ids, size_t n, kope_mem_case *out,
                 kope_err *err)
{
  return n == 0 ? KOPE_OK
                : read_many(impl, "SELECT " PG_CASE_COLS PG_CASE_FROM " WHERE c.id = "
                            "ANY($1::bigint[])", ids, n, out, case_reader, err);
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

  int rc;

  if (pg_imp_find_uid(impl, kind, db, id, local, &rc, err))
    return rc;
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

  if (pg_imp_exists(impl, kind, id, yes))
    return KOPE_OK;
  pg_par_i64(&p, id);
  rc = pg_int(impl, sql[kind < 0 || kind > 2 ? 0 : kind], &p, &n, err);
  *yes = n > 0;
  return rc;
}
