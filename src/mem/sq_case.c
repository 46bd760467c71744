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

static int put_scores(sq *s, int64_t id, const kope_mem_case *c, const mem_node *v,
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

static void bind_case(sqlite3_stmt *st, const kope_mem_case *c, const char h[3][65])
{
  sq_bind_id(st, 1, c->session_id);
  sqlite3_bind_int64(st, 2, c->step);
  sq_bind_id(st, 3, c->prev_case_id);
  sq_bind_text(st, 4, c->op);
  sq_bind_text(st, 5, c->category);
  sq_bind_text(st, 6, c->target);
  sq_bind_text(st, 7, c->hw);
  sq_bind_text(st, 8, c->scene);
  sq_bind_text(st, 9, c->layer);
  sq_bind_text(st, 10, c->thought_id);
  sq_bind_text(st, 11, c->thought_title);
  sq_bind_text(st, 12, c->rationale);
  sq_bind_text(st, 13, h[0][0] ? h[0] : NULL);
  sq_bind_text(st, 14, h[1][0] ? h[1] : NULL);
  sq_bind_text(st, 15, h[2][0] ? h[2] : NULL);
  sq_bind_text(st, 16, c->feedback);
  sq_bind_text(st, 17, c->verdict);
  sqlite3_bind_int(st, 18, c->correct != 0);
  sq_bind_real(st, 19, c->speedup);
  sq_bind_real(st, 20, c->speedup_vendor);
  sqlite3_bind_double(st, 21, c->confidence);
  sqlite3_bind_int64(st, 22, c->tokens_in);
  sqlite3_bind_int64(st, 23, c->tokens_out);
  sq_bind_real(st, 24, c->eval_seconds);
  sq_bind_text(st, 25, c->harness);
  sqlite3_bind_double(st, 26, c->created > 0 ? c->created : mem_wall_now());
  sq_bind_text(st, 31, c->device[0] ? c->device : NULL);
}

int sq_case_put(void *impl, const kope_mem_case *c, const mem_node *score,
                const char *err_sig, const mem_origin *o, int64_t *id, kope_err *err)
{
  sq *s = impl;
  char h[3][65];
  sqlite3_stmt *st;
  int rc;

  if ((rc = put_source(s, c->code_before, c->code_before_hash, h[0], err)) != KOPE_OK ||
      (rc = put_source(s, c->code_after, c->code_after_hash, h[1], err)) != KOPE_OK ||
      (rc = put_source(s, c->diff, c->diff_hash, h[2], err)) != KOPE_OK)
    return rc;
  if (!(st = sq_stmt(s, SQ_CASE_INS, err)))
    return SQ_ERRCODE(err);
  bind_case(st, c, (const char(*)[65])h);
  sq_bind_text(st, 27, err_sig);
  sq_bind_text(st, 28, o ? o->db : NULL);
  if (o && o->db)
    sqlite3_bind_int64(st, 29, o->id);
  if (o)
    sq_bind_id(st, 30, o->import_id);
  if ((rc = sq_run(s, st, "storing a Case", err)) != KOPE_OK)
    return rc;
  *id = sqlite3_last_insert_rowid(s->h);
  if ((rc = put_scores(s, *id, c, score, err)) != KOPE_OK)
    return rc;
  return sq_fts_queue(s, err);
}

/* ---- reading -------------------------------------------------------------- */

static void col_hash(sqlite3_stmt *st, int i, char out[65])
{
  const unsigned char *t = sqlite3_column_text(st, i);

  snprintf(out, 65, "%s", t ? (const char *)t : "");
}

static void col_device(sqlite3_stmt *st, int i, char out[256])
{
  const unsigned char *t = sqlite3_column_text(st, i);

  snprintf(out, 256, "%s", t ? (const char *)t : "");
}

static char *origin_text(sqlite3_stmt *st)
{
  const char *db = (const char *)sqlite3_column_text(st, 33);
  const char *path = (const char *)sqlite3_column_text(st, 36);

  if (!db)
    return NULL;
  return kope_sprintf("imported from %s as %lld (import #%lld%s%s)", db,
                      (long long)sqlite3_column_int64(st, 34),
                      (long long)sqlite3_column_int64(st, 35), path ? ", " : "",
                      path ? path : "");
}

void sq_read_case(sq *s, sqlite3_stmt *st, kope_mem_case *c)
{
  kope_mem_case_init(c);
  c->owned = 1;
  c->id = sqlite3_column_int64(st, 0);
  c->session_id = sqlite3_column_int64(st, 1);
  c->step = sqlite3_column_int64(st, 2);
  c->prev_case_id = sqlite3_column_int64(st, 3);
  c->op = sq_col_text(st, 4);
  c->category = sq_col_text(st, 5);
  c->target = sq_col_text(st, 6);
  c->hw = sq_col_text(st, 7);
  c->scene = sq_col_text(st, 8);
  c->layer = sq_col_text(st, 9);
  c->thought_id = sq_col_text(st, 10);
  c->thought_title = sq_col_text(st, 11);
  c->rationale = sq_col_text(st, 12);
  col_hash(st, 13, c->code_before_hash);
  col_hash(st, 14, c->code_after_hash);
  col_hash(st, 15, c->diff_hash);
  c->feedback = sq_col_text(st, 16);
  c->verdict = sq_col_text(st, 17);
  c->correct = sqlite3_column_int(st, 18);
  c->speedup = sq_col_real(st, 19, NAN);
  c->speedup_vendor = sq_col_real(st, 20, NAN);
  c->confidence = sqlite3_column_double(st, 21);
  c->tokens_in = sqlite3_column_int64(st, 22);
  c->tokens_out = sqlite3_column_int64(st, 23);
  c->eval_seconds = sq_col_real(st, 24, NAN);
  c->harness = sq_col_text(st, 25);
  c->created = sqlite3_column_double(st, 26);
  c->step_ratio = sqlite3_column_double(st, 27);
  c->label = sqlite3_column_int(st, 28);
  c->d_score = sqlite3_column_double(st, 29);
  c->rank = sqlite3_column_double(st, 30);
  c->n_succ = sqlite3_column_int64(st, 31);
  c->err_sig = sq_col_text(st, 32);
  if (sqlite3_column_type(st, 33) != SQLITE_NULL)
    c->uid = mem_uid((const char *)sqlite3_column_text(st, 33), sqlite3_column_int64(st, 34));
  else
    c->uid = mem_uid(s->uuid, c->id);
  c->origin = origin_text(st);
  col_device(st, 37, c->device);
}

static int load_code(sq *s, kope_mem_case *c, kope_err *err)
{
  char *b = NULL, *a = NULL, *d = NULL;
  int rc = KOPE_OK;

  if (c->code_before_hash[0])
    rc = sq_source_get(s, c->code_before_hash, &b, err);
  if (rc == KOPE_OK && c->code_after_hash[0])
    rc = sq_source_get(s, c->code_after_hash, &a, err);
  if (rc == KOPE_OK && c->diff_hash[0])
    rc = sq_source_get(s, c->diff_hash, &d, err);
  c->code_before = b;
  c->code_after = a;
  c->diff = d;
  return rc;
}

int sq_case_get(void *impl, int64_t id, int flags, kope_mem_case *out, kope_err *err)
{
  sq *s = impl;
  sqlite3_stmt *st = sq_stmt(s, SQ_CASE_GET, err);
  int rc;

  if (!st)
    return SQ_ERRCODE(err);
  sqlite3_bind_int64(st, 1, id);
  rc = sqlite3_step(st);
  if (rc == SQLITE_ROW)
    sq_read_case(s, st, out);
  sqlite3_reset(st);
  if (rc == SQLITE_DONE)
    return kope_err_set(err, KOPE_EINPUT, "no Case with id %lld in %s", (long long)id,
                        s->path);
  if (rc != SQLITE_ROW)
    return sq_fail(s, rc, "reading a Case", err);
  rc = flags & KOPE_MEM_WITH_CODE ? load_code(s, out, err) : KOPE_OK;
  if (rc != KOPE_OK)
    kope_mem_case_release(out);
  return rc;
}

int sq_case_brief(void *impl, int64_t id, kope_mem_case *out, kope_err *err)
{
  sq *s = impl;
  sqlite3_stmt *st = sq_stmt(s, SQ_CASE_BRIEF, err);
  int rc;

  kope_mem_case_init(out);
  if (!st)
    return SQ_ERRCODE(err);
  sqlite3_bind_int64(st, 1, id);
  if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    out->owned = 1;
    out->id = id;
    out->label = sqlite3_column_int(st, 0);
    out->rank = sqlite3_column_double(st, 1);
    out->step_ratio = sqlite3_column_double(st, 2);
    out->d_score = sqlite3_column_double(st, 3);
    out->layer = sq_col_text(st, 4);
    out->target = sq_col_text(st, 5);
    out->hw = sq_col_text(st, 6);
  }
  sqlite3_reset(st);
  if (rc == SQLITE_DONE)
    return kope_err_set(err, KOPE_EINPUT, "no Case with id %lld in %s", (long long)id,
                        s->path);
  return rc == SQLITE_ROW ? KOPE_OK : sq_fail(s, rc, "reading a Case", err);
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
