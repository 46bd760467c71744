/*
 * Digests (procedural memory): Cases aggregated into one lesson per
 * (target, category, layer, thought id) with the number of attempts, the
 * count per outcome label, the number of correct ones, the median step
 * ratio and the supporting Case ids. The engine streams the Cases sorted
 * by key; a group is closed and stored when the key changes.
 */
#include <stdlib.h>
#include <string.h>
#include "core/stats.h"
#include "mem/engine.h"

typedef struct agg {
  kope_db *db;
  kope_mem_digest cur;
  double *ratios;
  size_t cap, ids_cap;
  size_t n_written;
  int open;
  int rc;
  kope_err *err;
} agg;

void mem_digest_release(kope_mem_digest *d)
{
  free(d->target);
  free(d->category);
  free(d->layer);
  free(d->thought_id);
  free(d->title);
  free(d->text);
  free(d->auto_text);
  free(d->case_ids);
  memset(d, 0, sizeof *d);
}

void kope_mem_digests_free(kope_mem_digest *d, size_t n)
{
  size_t i;

  for (i = 0; d && i < n; i++)
    mem_digest_release(&d[i]);
  free(d);
}

static int same_key(const kope_mem_digest *d, const mem_drow *r)
{
  return !strcmp(d->target, r->target) && !strcmp(d->category, r->category) &&
         !strcmp(d->layer, r->layer) && !strcmp(d->thought_id, r->thought_id);
}

static int agg_flush(agg *a)
{
  kope_mem_digest *d = &a->cur;
  int rc;

  if (!a->open)
    return KOPE_OK;
  d->median_ratio = kope_median(a->ratios, (size_t)d->attempts);
  d->auto_text = mem_digest_auto_text(d);
  rc = a->db->eng->digest_put(a->db->impl, d, a->err);
  mem_digest_release(d);
  a->open = 0;
  a->n_written++;
  return rc;
}

static int agg_start(agg *a, const mem_drow *r)
{
  kope_mem_digest *d = &a->cur;

  memset(d, 0, sizeof *d);
  d->target = kope_strdup(r->target);
  d->category = kope_strdup(r->category);
  d->layer = kope_strdup(r->layer);
  d->thought_id = kope_strdup(r->thought_id);
  a->ids_cap = 0;
  a->open = 1;
  return d->target && d->category && d->layer && d->thought_id ? 0 : -1;
}

/* One more Case in the open digest (its ratio and id; -1 when out of
 * memory). */
static int agg_add(agg *a, const mem_drow *r)
{
  kope_mem_digest *d = &a->cur;
  size_t n = (size_t)d->attempts;

  if (kope_grow(&a->ratios, &a->cap, n + 1, sizeof *a->ratios) != KOPE_OK ||
      kope_grow(&d->case_ids, &a->ids_cap, n + 1, sizeof *d->case_ids) != KOPE_OK)
    return -1;
  a->ratios[n] = r->r;
  d->case_ids[n] = r->case_id;
  d->n_case_ids = n + 1;
  d->attempts++;
  d->n_correct += r->correct != 0;
  if (r->label >= 0 && r->label < KOPE_LABEL_COUNT)
    d->n_label[r->label]++;
  if (r->title && *r->title) {   /* rows come in id order: keep the latest */
    free(d->title);
    d->title = kope_strdup(r->title);
  }
  return 0;
}

static int agg_row(const mem_drow *r, void *ctx)
{
  agg *a = ctx;

  if (a->open && !same_key(&a->cur, r) && (a->rc = agg_flush(a)) != KOPE_OK)
    return 1;
  if (!a->open && agg_start(a, r) != 0)
    goto oom;
  if (agg_add(a, r) != 0)
    goto oom;
  return 0;
oom:
  a->rc = kope_err_set(a->err, KOPE_EINTERNAL, "out of memory aggregating digests");
  return 1;
}

int kope_mem_digest_refresh(kope_db *db, int64_t session_id, size_t *n_digests,
                            kope_err *err)
{
  agg a = {0};
  int rc;

  a.db = db;
  a.err = err;
  if ((rc = kope_db_begin(db, err)) != KOPE_OK)
    return rc;
  rc = db->eng->digest_rows(db->impl, session_id, agg_row, &a, err);
  if (rc == KOPE_OK)
    rc = a.rc;
  if (rc == KOPE_OK)
    rc = agg_flush(&a);
  mem_digest_release(&a.cur);
  free(a.ratios);
  if (rc != KOPE_OK) {
    kope_db_rollback(db);
    return rc;
  }
  if ((rc = kope_db_commit(db, err)) == KOPE_OK && n_digests)
    *n_digests = a.n_written;
  return rc;
}

int kope_mem_digest_list(kope_db *db, const kope_mem_filter *f, kope_mem_digest **out,
                         size_t *n, kope_err *err)
{
  kope_mem_filter none = {0};

  *out = NULL;
  *n = 0;
  return db->eng->digest_list(db->impl, f ? f : &none, 0, 1, out, n, err);
}

int kope_mem_digest_set_text(kope_db *db, int64_t digest_id, const char *text,
                             kope_err *err)
{
  return db->eng->digest_set_text(db->impl, digest_id, text, err);
}
