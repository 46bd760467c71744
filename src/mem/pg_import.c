/*
 * PostgreSQL engine: the import's bulk mode. `kope memory import` stores a
 * whole file in one transaction, and most statements it would send only
 * ask about rows this same transaction wrote a moment earlier (is the
 * session there, which local id has uid X, the scoring row of the parent
 * just stored) or rewrite a score row the next Case rewrites again. From
 * import_begin until the outer transaction ends, the engine answers those
 * from memory:
 *
 * - uids: the first lookup of an origin database loads every row already
 *   imported from it (one statement per kind); rows stored by this import
 *   are added as they are written, so later lookups need no statement. A
 *   concurrent import of the same origin cannot slip in a duplicate: the
 *   unique (origin_db, origin_id) indexes make one of the two fail.
 * - existence of the sessions, Cases and Journals this import wrote;
 * - kernel sources already stored by this import (same hash, same text);
 * - scoring rows: node_get of a row read before (locked FOR UPDATE, so no
 *   one else can change it until the commit) or written by this import
 *   comes from the cache; node_put changes the cache only. The changed
 *   rows are written in batches (UPDATE ... FROM unnest(arrays)) before
 *   any other statement that names case_scores runs (digest refresh,
 *   retrieval, checks) and at import_end, and the cache is then dropped.
 * - nested transactions (one per Case) are not savepoints: a failure inside
 *   fails the whole import, which then rolls back as before.
 *
 * Everything else goes to the server as usual. State is owned by the pg
 * handle (s->imp) and freed when the outer transaction ends.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mem/pg.h"

#define FLUSH_ROWS 5000   /* score rows per UPDATE statement */
#define MAX_DBS 16        /* origin databases tracked (more: plain lookups) */

typedef struct ikey {
  int64_t a, b;   /* a: table tag, b: id; a == 0 marks an empty slot */
  int64_t v;
} ikey;

typedef struct nslot {
  mem_node n;
  int used, dirty;
} nslot;

typedef struct hslot {
  char hash[65];
} hslot;

struct pg_imp {
  ikey *keys;           /* open addressing, capacity a power of two */
  size_t nkeys, ckeys;
  nslot *nodes;
  size_t nnodes, cnodes, ndirty;
  hslot *src;
  size_t nsrc, csrc;
  char *dbs[MAX_DBS];   /* origin dbs whose rows are all in keys, per kind */
  unsigned loaded[MAX_DBS];
  int ndbs, flushing, quiet;
};

/* tags of the key table: uids (kind, db) and rows this import wrote */
enum { TAG_UID = 1, TAG_MADE = 64 };

static uint64_t mix(uint64_t x)
{
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  return x ^ (x >> 33);
}

/* ---- the tables ----------------------------------------------------------- */

static ikey *key_slot(ikey *t, size_t cap, int64_t a, int64_t b)
{
  size_t i = mix((uint64_t)a * 0x9e3779b97f4a7c15ULL ^ (uint64_t)b) & (cap - 1);

  while (t[i].a && !(t[i].a == a && t[i].b == b))
    i = (i + 1) & (cap - 1);
  return &t[i];
}

static int keys_grow(struct pg_imp *m)
{
  size_t cap = m->ckeys ? 2 * m->ckeys : 1024, i;
  ikey *t = calloc(cap, sizeof *t);

  if (!t)
    return KOPE_ENOMEM;
  for (i = 0; i < m->ckeys; i++)
    if (m->keys[i].a)
      *key_slot(t, cap, m->keys[i].a, m->keys[i].b) = m->keys[i];
  free(m->keys);
  m->keys = t;
  m->ckeys = cap;
  return KOPE_OK;
}

static int key_put(struct pg_imp *m, int64_t a, int64_t b, int64_t v)
{
  ikey *k;

  if (2 * (m->nkeys + 1) > m->ckeys && keys_grow(m) != KOPE_OK)
    return KOPE_ENOMEM;
  k = key_slot(m->keys, m->ckeys, a, b);
  if (!k->a)
    m->nkeys++;
  k->a = a;
  k->b = b;
  k->v = v;
  return KOPE_OK;
}

static const ikey *key_get(const struct pg_imp *m, int64_t a, int64_t b)
{
  const ikey *k = m->ckeys ? key_slot(m->keys, m->ckeys, a, b) : NULL;

  return k && k->a ? k : NULL;
}

static nslot *node_slot(nslot *t, size_t cap, int64_t id)
{
  size_t i = mix((uint64_t)id) & (cap - 1);

  while (t[i].used && t[i].n.id != id)
    i = (i + 1) & (cap - 1);
  return &t[i];
}

static int nodes_grow(struct pg_imp *m)
{
  size_t cap = m->cnodes ? 2 * m->cnodes : 1024, i;
  nslot *t = calloc(cap, sizeof *t);

  if (!t)
    return KOPE_ENOMEM;
  for (i = 0; i < m->cnodes; i++)
    if (m->nodes[i].used)
      *node_slot(t, cap, m->nodes[i].n.id) = m->nodes[i];
  free(m->nodes);
  m->nodes = t;
  m->cnodes = cap;
  return KOPE_OK;
}

static hslot *src_slot(hslot *t, size_t cap, const char *hash)
{
  uint64_t h = 0;
  size_t i;
  int k;

  for (k = 0; k < 16; k++)   /* the hash's first 64 bits (hex digits) */
    h = h << 4 | (uint64_t)(hash[k] <= '9' ? hash[k] - '0' : hash[k] - 'a' + 10);
  i = (size_t)h & (cap - 1);
  while (t[i].hash[0] && strcmp(t[i].hash, hash) != 0)
    i = (i + 1) & (cap - 1);
  return &t[i];
}

static int src_grow(struct pg_imp *m)
{
  size_t cap = m->csrc ? 2 * m->csrc : 1024, i;
  hslot *t = calloc(cap, sizeof *t);

  if (!t)
    return KOPE_ENOMEM;
  for (i = 0; i < m->csrc; i++)
    if (m->src[i].hash[0])
      *src_slot(t, cap, m->src[i].hash) = m->src[i];
  free(m->src);
  m->src = t;
  m->csrc = cap;
  return KOPE_OK;
}

/* ---- life cycle --------------------------------------------------------------- */

int pg_imp_start(pg *s, kope_err *err)
{
  if (s->imp || s->depth == 0)
    return KOPE_OK;   /* an import outside a transaction gains nothing */
  if (!(s->imp = calloc(1, sizeof *s->imp)))
    return kope_err_nomem(err, "import cache");
  return KOPE_OK;
}

void pg_imp_stop(pg *s)
{
  struct pg_imp *m = s->imp;
  int i;

  if (!m)
    return;
  for (i = 0; i < m->ndbs; i++)
    free(m->dbs[i]);
  free(m->keys);
  free(m->nodes);
  free(m->src);
  free(m);
  s->imp = NULL;
}

/* ---- uids and existence ------------------------------------------------------ */

static const char *const uid_tables[3] = {"cases", "sessions", "journals"};

/* Index of db among the loaded origins, loading its rows of kind first;
 * -1: not tracked (too many origins), ask the server. */
static int origin_loaded(pg *s, int kind, const char *db, int *rc, kope_err *err)
{
  struct pg_imp *m = s->imp;
  char sql[128];
  pg_par p = {0};
  PGresult *r = NULL;
  int i, row;

  *rc = KOPE_OK;
  for (i = 0; i < m->ndbs && strcmp(m->dbs[i], db) != 0; i++)
    ;
  if (i == m->ndbs) {
    if (m->ndbs == MAX_DBS || !(m->dbs[i] = kope_strdup(db)))
      return -1;
    m->ndbs++;
  }
  if (m->loaded[i] & (1u << kind))
    return i;
  snprintf(sql, sizeof sql, "SELECT origin_id, id FROM %s WHERE origin_db = $1",
           uid_tables[kind]);
  pg_par_text(&p, db);
  if ((*rc = pg_run(s, sql, &p, &r, "reading imported uids", err)) != KOPE_OK)
    return -1;
  for (row = 0; *rc == KOPE_OK && row < PQntuples(r); row++)
    if (key_put(m, TAG_UID + kind * MAX_DBS + i, pg_i64(r, row, 0), pg_i64(r, row, 1)))
      *rc = kope_err_nomem(err, "import cache");
  PQclear(r);
  if (*rc != KOPE_OK)
    return -1;
  m->loaded[i] |= 1u << kind;
  return i;
}

int pg_imp_find_uid(pg *s, int kind, const char *db, int64_t id, int64_t *local, int *rc,
                    kope_err *err)
{
  const ikey *k;
  int i;

  if (!s->imp || kind < 0 || kind > 2 || !db)
    return 0;
  if ((i = origin_loaded(s, kind, db, rc, err)) < 0)
    return *rc != KOPE_OK;
  k = key_get(s->imp, TAG_UID + kind * MAX_DBS + i, id);
  *local = k ? k->v : 0;
  return 1;
}

int pg_imp_exists(pg *s, int kind, int64_t id, int *yes)
{
  if (!s->imp || kind < 0 || kind > 2 || !key_get(s->imp, TAG_MADE + kind, id))
    return 0;
  *yes = 1;
  return 1;
}

int pg_imp_made(pg *s, int kind, int64_t id, const mem_origin *o, kope_err *err)
{
  struct pg_imp *m = s->imp;
  int i, rc = KOPE_OK;

  if (!m || kind < 0 || kind > 2)
    return KOPE_OK;
  if (key_put(m, TAG_MADE + kind, id, 1) != KOPE_OK)
    return kope_err_nomem(err, "import cache");
  if (!o || !o->db)
    return KOPE_OK;
  for (i = 0; i < m->ndbs && strcmp(m->dbs[i], o->db) != 0; i++)
    ;
  if (i < m->ndbs && (m->loaded[i] & (1u << kind)) &&
      key_put(m, TAG_UID + kind * MAX_DBS + i, o->id, id) != KOPE_OK)
    rc = kope_err_nomem(err, "import cache");
  return rc;
}

/* ---- kernel sources ------------------------------------------------------------ */

int pg_imp_source_seen(pg *s, const char *hash)
{
  struct pg_imp *m = s->imp;
  hslot *h;

  if (!m || strlen(hash) != 64)
    return 0;
  if (2 * (m->nsrc + 1) > m->csrc && src_grow(m) != KOPE_OK)
    return 0;   /* no room to remember: just ask the server */
  h = src_slot(m->src, m->csrc, hash);
  if (h->hash[0])
    return 1;
  memcpy(h->hash, hash, 65);
  m->nsrc++;
  return 0;
}

/* ---- scoring rows ---------------------------------------------------------------- */

int pg_imp_node_get(pg *s, int64_t id, mem_node *n)
{
  struct pg_imp *m = s->imp;
  nslot *t;

  if (!m || !m->cnodes)
    return 0;
  t = node_slot(m->nodes, m->cnodes, id);
  if (!t->used)
    return 0;
  *n = t->n;
  return 1;
}

/* Remember n (read from the server, or stored or changed by this import;
 * dirty: the server's row is older). */
int pg_imp_node_keep(pg *s, const mem_node *n, int dirty, kope_err *err)
{
  struct pg_imp *m = s->imp;
  nslot *t;

  if (!m)
    return KOPE_OK;
  if (2 * (m->nnodes + 1) > m->cnodes && nodes_grow(m) != KOPE_OK)
    return kope_err_nomem(err, "import cache");
  t = node_slot(m->nodes, m->cnodes, n->id);
  if (!t->used)
    m->nnodes++;
  m->ndirty += dirty && !t->dirty;
  t->dirty = t->dirty || dirty;
  t->used = 1;
  t->n = *n;
  return KOPE_OK;
}

static void put_real(kope_buf *b, double v)
{
  if (isfinite(v))
    kope_buf_printf(b, "%.17g", v);
  else
    kope_buf_puts(b, "NULL");
}

/* One UPDATE for the dirty rows in arrays a[0..4] (already "{...}"). */
static int flush_batch(pg *s, kope_buf *a, kope_err *err)
{
  pg_par p = {0};
  int i;

  for (i = 0; i < 5; i++) {
    kope_buf_puts(&a[i], "}");
    if (a[i].truncated)
      return kope_err_nomem(err, "score batch");
    pg_par_text(&p, a[i].data);
  }
  return pg_run(s, "UPDATE case_scores s SET succ_sum = v.succ_sum, n_succ = v.n_succ, "
                "d_score = v.d, rank = v.rank FROM unnest($1::bigint[], $2::float8[], "
                "$3::bigint[], $4::float8[], $5::float8[]) AS v(id, succ_sum, n_succ, d, rank) "
                "WHERE s.id = v.id", &p, NULL, "updating scores", err);
}

static void batch_reset(kope_buf *a)
{
  int i;

  for (i = 0; i < 5; i++) {
    kope_buf_reset(&a[i]);
    kope_buf_puts(&a[i], "{");
  }
}

static void batch_add(kope_buf *a, const mem_node *n, int first)
{
  const char *sep = first ? "" : ",";

  kope_buf_printf(&a[0], "%s%lld", sep, (long long)n->id);
  kope_buf_puts(&a[1], sep);
  put_real(&a[1], n->succ_sum);
  kope_buf_printf(&a[2], "%s%lld", sep, (long long)n->n_succ);
  kope_buf_puts(&a[3], sep);
  put_real(&a[3], n->d);
  kope_buf_puts(&a[4], sep);
  put_real(&a[4], n->d * n->confidence);
}

/* Write every changed score row, then forget the cache (rows are read
 * again, still locked, when needed). */
int pg_imp_flush(pg *s, kope_err *err)
{
  struct pg_imp *m = s->imp;
  kope_buf a[5];
  size_t i, in = 0;
  int k, rc = KOPE_OK;

  if (!m || m->flushing || !m->cnodes)
    return KOPE_OK;
  m->flushing = 1;
  for (k = 0; k < 5; k++)
    kope_buf_init(&a[k], 0);
  batch_reset(a);
  for (i = 0; rc == KOPE_OK && i < m->cnodes; i++) {
    if (!m->nodes[i].used || !m->nodes[i].dirty)
      continue;
    batch_add(a, &m->nodes[i].n, in == 0);
    if (++in == FLUSH_ROWS) {
      rc = flush_batch(s, a, err);
      batch_reset(a);
      in = 0;
    }
  }
  if (rc == KOPE_OK && in > 0)
    rc = flush_batch(s, a, err);
  for (k = 0; k < 5; k++)
    kope_buf_release(&a[k]);
  free(m->nodes);
  m->nodes = NULL;
  m->nnodes = m->cnodes = m->ndirty = 0;
  m->flushing = 0;
  return rc;
}

void pg_imp_quiet(pg *s, int on)
{
  if (s->imp)
    s->imp->quiet = on;
}

/* Before sql runs: a statement that names case_scores may read or change
 * the rows the cache holds, so the changed ones are written first and the
 * cache is dropped. Exempt: inserting a new score row (cached as stored)
 * and the cache's own reads (pg_imp_quiet). */
int pg_imp_before(pg *s, const char *sql, kope_err *err)
{
  struct pg_imp *m = s->imp;

  if (!m || m->flushing || m->quiet || !m->nnodes || !strstr(sql, "case_scores") ||
      !strncmp(sql, "INSERT INTO case_scores", 23))
    return KOPE_OK;
  return pg_imp_flush(s, err);
}
