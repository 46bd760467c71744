/*
 * SQLite engine: Case rows. Storing a Case with its kernel sources,
 * reading Cases back (one, or all matching a filter, optionally with their
 * ancestors), the scoring nodes the d(v) walk reads and writes, lineage
 * lookups and provenance (uid) lookups.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mem/sq.h"

/* ---- scoring nodes ------------------------------------------------------ */

/* Columns prev_id, a, step_ratio, d_score, succ_sum, n_succ, confidence,
 * label from first on. */
static void read_node(sqlite3_stmt *st, int first, mem_node *n)
{
  n->prev_id = sqlite3_column_int64(st, first);
  n->a = sqlite3_column_double(st, first + 1);
  n->r = sqlite3_column_double(st, first + 2);
  n->d = sqlite3_column_double(st, first + 3);
  n->succ_sum = sqlite3_column_double(st, first + 4);
  n->n_succ = sqlite3_column_int64(st, first + 5);
  n->confidence = sqlite3_column_double(st, first + 6);
  n->label = sqlite3_column_int(st, first + 7);
}

/* Does rank still lie within the slack of the indexed rank_ix? */
static int within_slack(double rank, double rank_ix)
{
  return fabs(rank - rank_ix) <= SQ_RANK_SLACK * rank_ix;
}

int sq_node_get(void *impl, int64_t id, mem_node *n, kope_err *err)
{
  sq *s = impl;
  sqlite3_stmt *st = sq_stmt(s, SQ_NODE_GET, err);
  int rc;

  if (!st)
    return SQ_ERRCODE(err);
  sqlite3_bind_int64(st, 1, id);
  rc = sqlite3_step(st);
  memset(n, 0, sizeof *n);
  n->id = id;
  if (rc == SQLITE_ROW) {
    read_node(st, 0, n);
    n->aux = sqlite3_column_double(st, 8);
  }
  sqlite3_reset(st);
  if (rc == SQLITE_DONE)
    return kope_err_set(err, KOPE_EINPUT, "no Case with id %lld in %s", (long long)id,
                        s->path);
  return rc == SQLITE_ROW ? KOPE_OK : sq_fail(s, rc, "reading a Case", err);
}

/* The walk up is one cached point lookup per level (about 3 us each here;
 * a recursive CTE cost ten times that per level). Ids of predecessors are
 * always older than the Case, so there are no cycles; the level cap only
 * guards against a damaged file. */
int sq_ancestors(void *impl, int64_t id, mem_node **nodes, size_t *n, kope_err *err)
{
  mem_node *v = NULL;
  size_t cnt = 0, cap = 0;
  int rc = KOPE_OK;

  *nodes = NULL;
  *n = 0;
  if (id == 0)
    return kope_err_set(err, KOPE_EINPUT, "no Case with id 0 in %s", ((sq *)impl)->path);
  while (id != 0 && rc == KOPE_OK) {
    if (cnt == cap) {
      mem_node *nv = cnt < 100000000 ? realloc(v, (cap = cap ? 2 * cap : 32) * sizeof *v)
                                      : NULL;
      if (!nv) {
        rc = kope_err_set(err, KOPE_EINTERNAL, "%s: reading a lineage: out of memory or a "
                          "cycle", ((sq *)impl)->path);
        break;
      }
      v = nv;
    }
    if ((rc = sq_node_get(impl, id, &v[cnt], err)) == KOPE_OK)
      id = v[cnt++].prev_id;
  }
  if (rc != KOPE_OK) {
    free(v);
    return rc;
  }
  *nodes = v;
  *n = cnt;
  return KOPE_OK;
}

static int put_node(sq *s, int which, const mem_node *n, kope_err *err)
{
  sqlite3_stmt *st = sq_stmt(s, which, err);

  if (!st)
    return SQ_ERRCODE(err);
  sqlite3_bind_int64(st, 1, n->id);
  sqlite3_bind_double(st, 2, n->succ_sum);
  sqlite3_bind_int64(st, 3, n->n_succ);
  sqlite3_bind_double(st, 4, n->d);
  sqlite3_bind_double(st, 5, n->d * n->confidence);
  if (which == SQ_NODE_PUT_FULL) {
    sqlite3_bind_double(st, 6, n->r);
    sqlite3_bind_int(st, 7, n->label);
  }
  return sq_run(s, st, "updating scores", err);
}

int sq_node_put(void *impl, const mem_node *n, kope_err *err)
{
  int ix = !within_slack(n->d * n->confidence, n->aux);

  return put_node(impl, ix ? SQ_NODE_PUT_IX : SQ_NODE_PUT, n, err);
}

int sq_node_put_full(void *impl, const mem_node *n, kope_err *err)
{
  return put_node(impl, SQ_NODE_PUT_FULL, n, err);
}

int sq_nodes_all(void *impl, mem_node **nodes, size_t *n, kope_err *err)
{
  sq *s = impl;
  sqlite3_stmt *st = NULL;
  mem_node *v = NULL;
  size_t cnt = 0, cap = 0;
  int rc = sqlite3_prepare_v2(s->h, "SELECT id, prev_id, a, step_ratio, d_score, succ_sum, "
                              "n_succ, confidence, label FROM case_scores ORDER BY id", -1,
                              &st, NULL);

  while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
    if (cnt == cap) {
      mem_node *nv = realloc(v, (cap = cap ? 2 * cap : 1024) * sizeof *v);
      if (!nv) {
        rc = SQLITE_NOMEM;
        break;
      }
      v = nv;
    }
    v[cnt].id = sqlite3_column_int64(st, 0);
    read_node(st, 1, &v[cnt]);
    cnt++;
    rc = SQLITE_OK;
  }
  sqlite3_finalize(st);
  if (rc != SQLITE_DONE) {
    free(v);
    *nodes = NULL;
    *n = 0;
    return sq_fail(s, rc, "reading the graph", err);
  }
  *nodes = v;
  *n = cnt;
  return KOPE_OK;
}

int sq_rescore_all(sq *s, kope_err *err)
{
  mem_node *nodes = NULL;
  size_t n = 0, i;
  int rc = sq_nodes_all(s, &nodes, &n, err);

  if (rc == KOPE_OK && mem_rescore_nodes(nodes, n, NULL) != 0)
    rc = kope_err_set(err, KOPE_EINTERNAL, "out of memory while rescoring");
  for (i = 0; rc == KOPE_OK && i < n; i++)
    rc = sq_node_put_full(s, &nodes[i], err);
  free(nodes);
  return rc;
}

/* ---- storing ------------------------------------------------------------ */

/* Store body and return its hash; without a body keep the given hash (an
 * import whose source text was left out or collected). */
static int put_source(sq *s, const char *body, const char *given, char hash[65],
                      kope_err *err)
{
  snprintf(hash, 65, "%s", given ? given : "");
  return body ? sq_source_put(s, body, hash, NULL, err) : KOPE_OK;
}

static int put_scores(sq *s, int64_t id, const kope_mem_case_in *c, const mem_node *v,
                      kope_err *err)
{
  sqlite3_stmt *st = sq_stmt(s, SQ_SCORE_INS, err);

  if (!st)
    return SQ_ERRCODE(err);
  sqlite3_bind_int64(st, 1, id);
  sq_bind_id(st, 2, v->prev_id);
  sq_bind_text(st, 3, c->op);
  sq_bind_text(st, 4, c->target);
  sq_bind_text(st, 5, c->category);
  sq_bind_text(st, 6, c->layer);
  sq_bind_text(st, 7, c->thought_id);
  sq_bind_text(st, 8, c->hw);
  sqlite3_bind_double(st, 9, v->a);
  sqlite3_bind_double(st, 10, v->r);
  sqlite3_bind_int(st, 11, v->label);
  sqlite3_bind_double(st, 12, v->d);
  sqlite3_bind_double(st, 13, v->confidence);
  sqlite3_bind_double(st, 14, v->d * v->confidence);
  return sq_run(s, st, "storing scores", err);
}

/* Parameter i from field f of c (a CASE column); hash: a SRC field's
 * stored hash. */
static void bind_field(sqlite3_stmt *st, int i, const kope_mem_case_in *c, const mem_field *f,
                       const char *hash)
{
  switch (f->kind) {
  case MF_LINK:
    sq_bind_id(st, i, *MF_CAT(c, f, int64_t));
    break;
  case MF_INT:
    sqlite3_bind_int64(st, i, *MF_CAT(c, f, int64_t));
    break;
  case MF_BOOL:
    sqlite3_bind_int(st, i, *MF_CAT(c, f, int) != 0);
    break;
  case MF_LABEL:
    sqlite3_bind_int(st, i, *MF_CAT(c, f, int));
    break;
  case MF_TEXT:
    sq_bind_text(st, i, *MF_CAT(c, f, mf_str));
    break;
  case MF_BUF:
    sq_bind_text(st, i, MF_CAT(c, f, char)[0] ? MF_CAT(c, f, char) : NULL);
    break;
  case MF_REAL:
    sq_bind_real(st, i, *MF_CAT(c, f, double));
    break;
  case MF_NUM:
    sqlite3_bind_double(st, i, *MF_CAT(c, f, double));
    break;
  case MF_TIME:
    sqlite3_bind_double(st, i, *MF_CAT(c, f, double) > 0 ? *MF_CAT(c, f, double)
                                                          : mem_wall_now());
    break;
  case MF_SRC:
    sq_bind_text(st, i, hash[0] ? hash : NULL);
    break;
  }
}

/* Store the sources and bind every CASE column (parameters 1..SQ_N_INS). */
static int bind_case(sq *s, sqlite3_stmt *st, const kope_mem_case_in *c, kope_err *err)
{
  size_t k;
  int i = 0, rc = KOPE_OK;

  for (k = 0; rc == KOPE_OK && k < mem_n_case_fields; k++) {
    const mem_field *f = &mem_case_fields[k];
    char h[65] = "";
    if (f->place != MF_P_CASE)
      continue;
    if (f->kind == MF_SRC)
      rc = put_source(s, *MF_CAT(c, f, mf_str), MF_CHASH(c, f), h, err);
    bind_field(st, ++i, c, f, h);
  }
  return rc;
}

int sq_case_put(void *impl, const kope_mem_case_in *c, const mem_node *score,
                const char *err_sig, const mem_origin *o, int64_t *id, kope_err *err)
{
  sq *s = impl;
  sqlite3_stmt *st;
  int rc;

  if (!(st = sq_stmt(s, SQ_CASE_INS, err)))
    return SQ_ERRCODE(err);
  if ((rc = bind_case(s, st, c, err)) != KOPE_OK) {
    sqlite3_reset(st);
    return rc;
  }
  sq_bind_text(st, SQ_N_INS + 1, err_sig);
  sq_bind_text(st, SQ_N_INS + 2, o ? o->db : NULL);
  if (o && o->db)
    sqlite3_bind_int64(st, SQ_N_INS + 3, o->id);
  if (o)
    sq_bind_id(st, SQ_N_INS + 4, o->import_id);
  if ((rc = sq_run(s, st, "storing a Case", err)) != KOPE_OK)
    return rc;
  *id = sqlite3_last_insert_rowid(s->h);
  if ((rc = put_scores(s, *id, c, score, err)) != KOPE_OK)
    return rc;
  return sq_fts_queue(s, err);
}

/* ---- reading -------------------------------------------------------------- */

static void col_buf(sqlite3_stmt *st, int i, char *out, size_t size)
{
  const unsigned char *t = sqlite3_column_text(st, i);

  snprintf(out, size, "%s", t ? (const char *)t : "");
}

/* Field f of c from column i. */
static void read_field(sqlite3_stmt *st, int i, kope_mem_case *c, const mem_field *f)
{
  switch (f->kind) {
  case MF_LINK:
  case MF_INT:
    *MF_AT(c, f, int64_t) = sqlite3_column_int64(st, i);
    break;
  case MF_BOOL:
  case MF_LABEL:
    *MF_AT(c, f, int) = sqlite3_column_int(st, i);
    break;
  case MF_TEXT:
    *MF_AT(c, f, mf_str) = sq_col_text(st, i);
    break;
  case MF_BUF:
    col_buf(st, i, MF_AT(c, f, char), f->size);
    break;
  case MF_REAL:
    *MF_AT(c, f, double) = sq_col_real(st, i, NAN);
    break;
  case MF_NUM:
  case MF_TIME:
    *MF_AT(c, f, double) = sqlite3_column_double(st, i);
    break;
  case MF_SRC:
    col_buf(st, i, MF_HASH(c, f), 65);
    break;
  }
}

static char *origin_text(sqlite3_stmt *st)
{
  const char *db = (const char *)sqlite3_column_text(st, SQ_N_SEL);
  const char *path = (const char *)sqlite3_column_text(st, SQ_N_SEL + 3);

  if (!db)
    return NULL;
  return kope_sprintf("imported from %s as %lld (import #%lld%s%s)", db,
                      (long long)sqlite3_column_int64(st, SQ_N_SEL + 1),
                      (long long)sqlite3_column_int64(st, SQ_N_SEL + 2), path ? ", " : "",
                      path ? path : "");
}

void sq_read_case(sq *s, sqlite3_stmt *st, kope_mem_case *c)
{
  size_t k;
  int i = 0;

  kope_mem_case_init(c);
  for (k = 0; k < mem_n_case_fields; k++)
    if (mem_case_fields[k].place != MF_P_ENGINE)
      read_field(st, i++, c, &mem_case_fields[k]);
  if (sqlite3_column_type(st, SQ_N_SEL) != SQLITE_NULL)
    c->uid = mem_uid((const char *)sqlite3_column_text(st, SQ_N_SEL),
                     sqlite3_column_int64(st, SQ_N_SEL + 1));
  else
    c->uid = mem_uid(s->uuid, c->id);
  c->origin = origin_text(st);
}

/* The texts of the SRC fields, from their hashes. */
static int load_code(sq *s, kope_mem_case *c, kope_err *err)
{
  return mem_case_load_code(c, sq_source_get, s, err);
}

static void case_row(sq *s, sqlite3_stmt *st, void *out)
{
  sq_read_case(s, st, out);
}

int sq_case_get(void *impl, int64_t id, int flags, kope_mem_case *out, kope_err *err)
{
  sq *s = impl;
  int rc;

  kope_mem_case_init(out);
  rc = sq_get_by_id(s, sq_stmt(s, SQ_CASE_GET, err), id, "Case", case_row, out, err);
  if (rc == KOPE_OK && (flags & KOPE_MEM_WITH_CODE))
    rc = load_code(s, out, err);
  if (rc != KOPE_OK)
    kope_mem_case_release(out);
  return rc;
}

/* The columns of SQ_CASE_BRIEF (id given): what ranking needs. */
static void brief_row(sq *s, sqlite3_stmt *st, void *out)
{
  kope_mem_case *c = out;

  (void)s;
  c->in.score.label = sqlite3_column_int(st, 0);
  c->in.score.rank = sqlite3_column_double(st, 1);
  c->in.score.step_ratio = sqlite3_column_double(st, 2);
  c->in.score.d_score = sqlite3_column_double(st, 3);
  c->in.layer = sq_col_text(st, 4);
  c->in.target = sq_col_text(st, 5);
  c->in.hw = sq_col_text(st, 6);
}

int sq_case_brief(void *impl, int64_t id, kope_mem_case *out, kope_err *err)
{
  sq *s = impl;
  int rc;

  kope_mem_case_init(out);
  rc = sq_get_by_id(s, sq_stmt(s, SQ_CASE_BRIEF, err), id, "Case", brief_row, out, err);
  if (rc == KOPE_OK)
    out->id = id;
  return rc;
}

/* ---- filters ------------------------------------------------------------ */

enum { F_OP = 1, F_CAT = 2, F_LAYER = 4, F_THOUGHT = 8, F_TARGET = 16, F_HW = 32,
       F_LABEL = 64, F_VERDICT = 128, F_SESSION = 256 };

unsigned sq_filter_sql(const kope_mem_filter *f, kope_buf *sql)
{
  static const char *const frag[] = {
    " AND s.op = ?1", " AND s.category = ?2", " AND s.layer = ?3",
    " AND s.thought_id = ?4", " AND s.target = ?5", " AND s.hw = ?6",
    " AND s.label = ?7", " AND c.verdict = ?8", " AND c.session_id = ?9"};
  unsigned mask = (f->op ? F_OP : 0) | (f->category ? F_CAT : 0) |
                  (f->layer ? F_LAYER : 0) | (f->thought_id ? F_THOUGHT : 0) |
                  (f->target ? F_TARGET : 0) | (f->hw ? F_HW : 0) |
                  (f->label ? F_LABEL : 0) | (f->verdict ? F_VERDICT : 0) |
                  (f->session_id ? F_SESSION : 0);
  unsigned i;

  for (i = 0; i < 9; i++)
    if (mask & (1u << i))
      kope_buf_puts(sql, frag[i]);
  return mask;
}

void sq_filter_bind(sqlite3_stmt *st, const kope_mem_filter *f, unsigned mask)
{
  if (mask & F_OP)
    sq_bind_text(st, 1, f->op);
  if (mask & F_CAT)
    sq_bind_text(st, 2, f->category);
  if (mask & F_LAYER)
    sq_bind_text(st, 3, f->layer);
  if (mask & F_THOUGHT)
    sq_bind_text(st, 4, f->thought_id);
  if (mask & F_TARGET)
    sq_bind_text(st, 5, f->target);
  if (mask & F_HW)
    sq_bind_text(st, 6, f->hw);
  if (mask & F_LABEL)
    sqlite3_bind_int(st, 7, kope_mem_label_parse(f->label));
  if (mask & F_VERDICT)
    sq_bind_text(st, 8, f->verdict);
  if (mask & F_SESSION)
    sqlite3_bind_int64(st, 9, f->session_id);
}

static unsigned each_sql(const kope_mem_filter *f, int flags, kope_buf *sql)
{
  unsigned mask;

  if (!(flags & KOPE_MEM_EACH_ANCESTORS)) {
    kope_buf_puts(sql, "SELECT " SQ_CASE_COLS SQ_CASE_FROM " WHERE 1");
    mask = sq_filter_sql(f, sql);
  } else {
    kope_buf_puts(sql, "WITH RECURSIVE sel(id) AS (SELECT c.id FROM cases c JOIN case_scores s "
                       "ON s.id = c.id WHERE 1");
    mask = sq_filter_sql(f, sql);
    kope_buf_puts(sql, " UNION SELECT c.prev_id FROM cases c JOIN sel ON c.id = sel.id "
                       "WHERE c.prev_id IS NOT NULL) SELECT " SQ_CASE_COLS SQ_CASE_FROM
                       " WHERE c.id IN (SELECT id FROM sel)");
  }
  kope_buf_puts(sql, " ORDER BY c.id");
  return mask;
}

int sq_case_each(void *impl, const kope_mem_filter *f, int flags, kope_mem_case_fn fn,
                 void *ctx, kope_err *err)
{
  sq *s = impl;
  sqlite3_stmt *st = NULL;
  kope_buf sql;
  unsigned mask;
  int rc, krc = KOPE_OK;

  kope_buf_init(&sql, 0);
  mask = each_sql(f, flags, &sql);
  rc = sqlite3_prepare_v2(s->h, sql.data, -1, &st, NULL);
  if (rc == SQLITE_OK)
    sq_filter_bind(st, f, mask);
  while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
    kope_mem_case c;
    int stop;
    sq_read_case(s, st, &c);
    if ((flags & KOPE_MEM_WITH_CODE) && (krc = load_code(s, &c, err)) != KOPE_OK) {
      kope_mem_case_release(&c);
      break;
    }
    stop = fn(&c, ctx);
    kope_mem_case_release(&c);
    rc = stop ? SQLITE_DONE : SQLITE_OK;
    if (stop)
      break;
  }
  sqlite3_finalize(st);
  kope_buf_release(&sql);
  if (krc != KOPE_OK)
    return krc;
  return rc == SQLITE_DONE ? KOPE_OK : sq_fail(s, rc, "listing Cases", err);
}

/* ---- lookups -------------------------------------------------------------- */

int sq_successors(void *impl, int64_t id, mem_ids *out, kope_err *err)
{
  sq *s = impl;
  sqlite3_stmt *st = sq_stmt(s, SQ_SUCC, err);
  int rc;

  if (!st)
    return SQ_ERRCODE(err);
  sqlite3_bind_int64(st, 1, id);
  while ((rc = sqlite3_step(st)) == SQLITE_ROW)
    mem_ids_push(out, sqlite3_column_int64(st, 0));
  sqlite3_reset(st);
  return rc == SQLITE_DONE ? KOPE_OK : sq_fail(s, rc, "reading successors", err);
}

int sq_find_uid(void *impl, int kind, const char *db, int64_t id, int64_t *local,
                kope_err *err)
{
  sq *s = impl;
  sqlite3_stmt *st = sq_stmt(s, SQ_UID_CASE + kind, err);
  int rc;

  *local = 0;
  if (!st)
    return SQ_ERRCODE(err);
  sq_bind_text(st, 1, db);
  sqlite3_bind_int64(st, 2, id);
  rc = sqlite3_step(st);
  if (rc == SQLITE_ROW)
    *local = sqlite3_column_int64(st, 0);
  sqlite3_reset(st);
  return rc == SQLITE_ROW || rc == SQLITE_DONE ? KOPE_OK
                                                : sq_fail(s, rc, "looking up a uid", err);
}

int sq_exists(void *impl, int kind, int64_t id, int *yes, kope_err *err)
{
  sq *s = impl;
  sqlite3_stmt *st = sq_stmt(s, SQ_EXISTS_CASE + kind, err);
  int rc;

  *yes = 0;
  if (!st)
    return SQ_ERRCODE(err);
  sqlite3_bind_int64(st, 1, id);
  rc = sqlite3_step(st);
  *yes = rc == SQLITE_ROW;
  sqlite3_reset(st);
  return rc == SQLITE_ROW || rc == SQLITE_DONE ? KOPE_OK
                                                : sq_fail(s, rc, "looking up an id", err);
}
