/*
 * kope_db: opening a store (picking the engine from the path: a
 * postgresql:// or postgres:// URL is the PostgreSQL engine, anything else
 * an SQLite file; no path means $KOPE_DB, else the default file), the
 * transaction calls and the thin public wrappers that forward to the
 * engine. Everything engine-neutral that is more than a forward lives in
 * case.c, digest.c, retrieve.c, export.c and import.c.
 */
#include <stdlib.h>
#include <string.h>
#include "mem/engine.h"

static int is_server_url(const char *path)
{
  return !strncmp(path, "postgres://", 11) || !strncmp(path, "postgresql://", 13);
}

kope_db *kope_db_open(const char *path, int flags, kope_err *err)
{
  kope_db *db = calloc(1, sizeof *db);
  char *home = NULL;

  if (!db) {
    kope_err_set(err, KOPE_EINTERNAL, "out of memory");
    goto fail;
  }
  if ((!path || !*path) && getenv("KOPE_DB") && *getenv("KOPE_DB"))
    path = getenv("KOPE_DB");
  if (!path || !*path) {
    home = kope_home_dir();
    db->path = kope_path_join(home, "kope.db");
  } else if (is_server_url(path)) {
    db->path = kope_pg_mask_url(path);   /* never show a password */
  } else {
    db->path = kope_strdup(path);
  }
  db->eng = is_server_url(db->path) ? &kope_mem_pg_engine : &kope_mem_sqlite_engine;
  if (db->eng->open(db->eng == &kope_mem_pg_engine ? path : db->path, flags, &db->impl,
                    err) != KOPE_OK)
    goto fail;
  free(home);
  return db;
fail:
  free(home);
  if (db)
    free(db->path);
  free(db);
  return NULL;
}

void kope_db_close(kope_db *db)
{
  if (!db)
    return;
  db->eng->close(db->impl);
  free(db->path);
  free(db);
}

const char *kope_db_path(const kope_db *db)
{
  return db->path;
}

const char *kope_db_uuid(const kope_db *db)
{
  return db->eng->uuid(db->impl);
}

int kope_db_schema_version(const kope_db *db)
{
  return db->eng->schema_version(db->impl);
}

const char *kope_db_engine(const kope_db *db)
{
  return db->eng->name;
}

int kope_db_copy(kope_db *db, const char *dst, kope_err *err)
{
  if (!dst || !*dst)
    return kope_err_set(err, KOPE_EINPUT, "kope_db_copy: no destination path");
  if (!db->eng->copy)
    return kope_err_set(err, KOPE_EINPUT, "a %s store cannot be copied to a file",
                        db->eng->name);
  return db->eng->copy(db->impl, dst, err);
}

int kope_db_begin(kope_db *db, kope_err *err)
{
  return db->eng->txn(db->impl, MEM_TXN_BEGIN, err);
}

int kope_db_commit(kope_db *db, kope_err *err)
{
  return db->eng->txn(db->impl, MEM_TXN_COMMIT, err);
}

void kope_db_rollback(kope_db *db)
{
  db->eng->txn(db->impl, MEM_TXN_ROLLBACK, NULL);
}

/* ---- sessions --------------------------------------------------------- */

int kope_mem_session_begin(kope_db *db, const kope_mem_session *s, int64_t *id,
                           kope_err *err)
{
  if (!s || !s->op || !*s->op)
    return kope_err_set(err, KOPE_EINPUT, "a session needs an operator name");
  return db->eng->session_put(db->impl, s, NULL, id, err);
}

int kope_mem_session_end(kope_db *db, int64_t id, const char *status, kope_err *err)
{
  int rc;

  if ((rc = kope_db_begin(db, err)) != KOPE_OK)
    return rc;
  rc = db->eng->session_end(db->impl, id, status, err);
  if (rc == KOPE_OK)
    rc = kope_mem_digest_refresh(db, id, NULL, err);
  if (rc != KOPE_OK) {
    kope_db_rollback(db);
    return rc;
  }
  return kope_db_commit(db, err);
}

int kope_mem_session_get(kope_db *db, int64_t id, kope_mem_session *out, kope_err *err)
{
  return db->eng->session_get(db->impl, id, out, err);
}

void mem_session_release_strings(kope_mem_session *s)
{
  free((char *)s->op);
  free((char *)s->target);
  free((char *)s->hw);
  free((char *)s->policy);
  free((char *)s->budget);
  free((char *)s->status);
  free((char *)s->uid);
}

void kope_mem_session_release(kope_mem_session *s)
{
  if (!s)
    return;
  mem_session_release_strings(s);
  memset(s, 0, sizeof *s);
}

/* ---- Journals, hardware, stats, gc, check ----------------------------- */

int kope_mem_journal_append(kope_db *db, int64_t case_id, int64_t session_id,
                            const char *markdown, int64_t *id, kope_err *err)
{
  kope_mem_journal j = {0};

  if (!markdown || !*markdown)
    return kope_err_set(err, KOPE_EINPUT, "a Journal entry needs text");
  j.case_id = case_id;
  j.session_id = session_id;
  j.body = (char *)markdown;
  return db->eng->journal_put(db->impl, &j, NULL, id, err);
}

typedef struct jlist {
  kope_mem_journal *v;
  size_t n, cap;
} jlist;

static int jlist_add(const kope_mem_journal *j, void *ctx)
{
  jlist *l = ctx;

  if (l->n == l->cap) {
    size_t cap = l->cap ? 2 * l->cap : 8;
    kope_mem_journal *v = realloc(l->v, cap * sizeof *v);
    if (!v)
      return 1;
    l->v = v;
    l->cap = cap;
  }
  l->v[l->n] = *j;
  l->v[l->n].body = kope_strdup(j->body);
  l->v[l->n].uid = kope_strdup(j->uid);
  l->n++;
  return 0;
}

int kope_mem_journal_list(kope_db *db, int64_t case_id, kope_mem_journal **out,
                          size_t *n, kope_err *err)
{
  jlist l = {0};
  int rc = db->eng->journal_each(db->impl, case_id, jlist_add, &l, err);

  if (rc != KOPE_OK) {
    kope_mem_journals_free(l.v, l.n);
    l.v = NULL;
    l.n = 0;
  }
  *out = l.v;
  *n = l.n;
  return rc;
}

void kope_mem_journals_free(kope_mem_journal *j, size_t n)
{
  size_t i;

  for (i = 0; j && i < n; i++) {
    free(j[i].body);
    free(j[i].uid);
  }
  free(j);
}

int kope_mem_hw_put(kope_db *db, const char *fingerprint, const char *profile_json,
                    kope_err *err)
{
  if (!fingerprint || !*fingerprint)
    return kope_err_set(err, KOPE_EINPUT, "a hardware profile needs a fingerprint");
  return db->eng->hw_put(db->impl, fingerprint, profile_json, NULL, err);
}

int kope_mem_stats_get(kope_db *db, kope_mem_stats *st, kope_err *err)
{
  memset(st, 0, sizeof *st);
  return db->eng->stats(db->impl, st, err);
}

static void counts_free(kope_mem_count *c, size_t n)
{
  size_t i;

  for (i = 0; c && i < n; i++)
    free(c[i].key);
  free(c);
}

void kope_mem_stats_release(kope_mem_stats *st)
{
  counts_free(st->by_op, st->n_op);
  counts_free(st->by_target, st->n_target);
  counts_free(st->by_label, st->n_label);
  counts_free(st->by_verdict, st->n_verdict);
  memset(st, 0, sizeof *st);
}

int kope_mem_gc(kope_db *db, const kope_mem_gc_opts *o, kope_mem_gc_stats *st,
                kope_err *err)
{
  kope_mem_gc_opts opts = {-1, -1, 0, 0};
  kope_mem_gc_stats dummy;

  if (o)
    opts = *o;
  if (opts.keep_journals < 0)
    opts.keep_journals = 10000;
  if (opts.keep_sources < 0)
    opts.keep_sources = 10000;
  memset(st ? st : &dummy, 0, sizeof dummy);
  return db->eng->gc(db->impl, &opts, st ? st : &dummy, err);
}

int kope_mem_rescore(kope_db *db, double *max_change, kope_err *err)
{
  mem_node *nodes = NULL;
  size_t n = 0, i;
  double worst = 0.0;
  int rc;

  if ((rc = kope_db_begin(db, err)) != KOPE_OK)
    return rc;
  if ((rc = db->eng->nodes_all(db->impl, &nodes, &n, err)) != KOPE_OK)
    goto out;
  if (mem_rescore_nodes(nodes, n, &worst) != 0) {
    rc = kope_err_set(err, KOPE_EINTERNAL, "out of memory while rescoring");
    goto out;
  }
  for (i = 0; i < n && rc == KOPE_OK; i++)
    rc = db->eng->node_put_full(db->impl, &nodes[i], err);
out:
  free(nodes);
  if (rc != KOPE_OK) {
    kope_db_rollback(db);
    return rc;
  }
  if (max_change)
    *max_change = worst;
  return kope_db_commit(db, err);
}

/* Compare stored scores with a recomputation; tolerance covers the
 * rounding of incremental updates. */
static int check_scores(kope_db *db, kope_buf *report, kope_err *err)
{
  mem_node *nodes = NULL, *fresh = NULL;
  size_t n = 0, i, bad = 0;
  double worst = 0.0;
  int rc = db->eng->nodes_all(db->impl, &nodes, &n, err);

  if (rc != KOPE_OK)
    goto out;
  fresh = malloc((n + 1) * sizeof *fresh);
  if (!fresh) {
    rc = kope_err_set(err, KOPE_EINTERNAL, "out of memory");
    goto out;
  }
  if (n > 0)
    memcpy(fresh, nodes, n * sizeof *fresh);
  mem_rescore_nodes(fresh, n, &worst);   /* sorts by id, as nodes_all */
  for (i = 0; i < n; i++) {
    mem_node *a = &nodes[i], *b = &fresh[i];
    double tol = 1e-9 * (1.0 + b->d);
    if (a->label != b->label || a->n_succ != b->n_succ || a->r != b->r ||
        a->d - b->d > tol || b->d - a->d > tol) {
      if (report && bad < 10)
        kope_buf_printf(report, "case %lld: stored r=%.17g d=%.17g n_succ=%lld, "
                        "recomputed r=%.17g d=%.17g n_succ=%lld\n", (long long)a->id, a->r,
                        a->d, (long long)a->n_succ, b->r, b->d, (long long)b->n_succ);
      bad++;
    }
  }
  if (bad)
    rc = kope_err_set(err, KOPE_EINTERNAL, "%zu Cases have stale scores", bad);
  else if (report)
    kope_buf_printf(report, "scores: %zu Cases consistent\n", n);
out:
  free(nodes);
  free(fresh);
  return rc;
}

int kope_mem_check(kope_db *db, kope_buf *report, kope_err *err)
{
  int rc = db->eng->integrity(db->impl, report, err);

  if (rc != KOPE_OK)
    return rc;
  return check_scores(db, report, err);
}
