/*
 * Cases: validation, insertion with the O(depth) scoring walk, reading
 * back, lineage, and the compact records built from them.
 *
 * Inserting v under u runs in one transaction: v is stored as a leaf
 * (d = r_v), then u gains a successor, so u's successor sum and d change;
 * the change in d(u) is added to u's parent's successor sum, and so on up
 * to the root or until a score stops changing. Each ancestor on the way is
 * read and written once, so the cost is at most proportional to the depth
 * of v, and in practice to the few levels a change survives rounding.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "mem/engine.h"

void kope_mem_score_init(kope_mem_score *s)
{
  memset(s, 0, sizeof *s);
  s->speedup = NAN;
  s->speedup_vendor = NAN;
  s->confidence = 1.0;
  s->step_ratio = 1.0;
  s->label = KOPE_LABEL_PARTIAL;
  s->d_score = 1.0;
}

void kope_mem_case_in_init(kope_mem_case_in *in)
{
  memset(in, 0, sizeof *in);
  kope_mem_score_init(&in->score);
}

void kope_mem_case_init(kope_mem_case *c)
{
  memset(c, 0, sizeof *c);
  kope_mem_case_in_init(&c->in);
}

void kope_mem_case_release(kope_mem_case *c)
{
  if (!c)
    return;
  mem_case_release_strings(c);
  kope_mem_case_init(c);
}

static int case_validate(const kope_mem_case_in *c, kope_err *err)
{
  if (!c->op || !*c->op)
    return kope_err_set(err, KOPE_EINPUT, "a Case needs an operator name (op)");
  if (!kope_mem_verdict_valid(c->verdict))
    return kope_err_set(err, KOPE_EINPUT, "Case verdict '%s' is not one of correct, "
                        "compile_error, incorrect, crash, timeout, forbidden",
                        c->verdict ? c->verdict : "(none)");
  if (!(c->score.confidence >= 0.0 && c->score.confidence <= 1.0))
    return kope_err_set(err, KOPE_EINPUT, "Case confidence %g is outside [0, 1]",
                        c->score.confidence);
  if (c->prev_case_id < 0 || c->session_id < 0)
    return kope_err_set(err, KOPE_EINPUT, "Case ids must not be negative");
  if (isfinite(c->score.speedup) && c->score.speedup < 0.0)
    return kope_err_set(err, KOPE_EINPUT, "Case speedup %g is negative", c->score.speedup);
  if (c->tokens_in < 0 || c->tokens_out < 0)
    return kope_err_set(err, KOPE_EINPUT, "Case token counts must not be negative");
  return KOPE_OK;
}

/* A new successor with score child_d joined u (read by the caller): update
 * u's successor sum and d, then carry each change in d up the lineage.
 * The lineage is read one ancestor at a time, only as far as the change
 * goes: a change that rounds to exactly 0 stops the walk (the ancestors
 * above keep their exact values), which at 100,000 Cases is after about 6
 * of a mean 20 levels. Predecessors are always older (smaller id); a
 * lineage that is not is a damaged file, refused rather than walked. */
static int propagate(kope_db *db, const mem_node *u, double child_d, kope_err *err)
{
  mem_node n = *u;
  int rc, new_child = 1;

  for (;;) {
    double old = n.d;
    n.succ_sum += child_d;
    n.n_succ += new_child;
    n.d = kope_mem_d_score(n.r, n.n_succ, n.succ_sum);
    if ((rc = db->eng->node_put(db->impl, &n, err)) != KOPE_OK)
      return rc;
    child_d = n.d - old;
    new_child = 0;
    if (child_d == 0.0 || n.prev_id == 0)
      return KOPE_OK;
    if (n.prev_id >= n.id)
      return kope_err_set(err, KOPE_EINPUT, "Case %lld has a predecessor %lld that is not "
                          "older: the store is damaged", (long long)n.id,
                          (long long)n.prev_id);
    if ((rc = db->eng->node_get(db->impl, n.prev_id, &n, err)) != KOPE_OK)
      return rc;
  }
}

static int case_store(kope_db *db, const kope_mem_case_in *c, const mem_origin *o,
                      int64_t *id, kope_err *err)
{
  mem_node v = {0}, p = {0};
  char *sig = NULL;
  int rc = KOPE_OK, yes = 1;

  if (c->prev_case_id && (rc = db->eng->node_get(db->impl, c->prev_case_id, &p, err)))
    goto out;
  if (c->session_id && (rc = db->eng->exists(db->impl, MEM_U_SESSION, c->session_id, &yes,
                                               err)) != KOPE_OK)
    goto out;
  if (!yes) {
    rc = kope_err_set(err, KOPE_EINPUT, "session %lld does not exist",
                      (long long)c->session_id);
    goto out;
  }
  v.prev_id = c->prev_case_id;
  v.a = kope_mem_effective_speedup(c->verdict, c->score.correct, c->score.speedup);
  v.r = kope_mem_step_ratio(v.a, c->prev_case_id != 0, p.a);
  v.label = kope_mem_label_of(v.r);
  v.d = v.r;
  v.confidence = c->score.confidence;
  if (v.a <= 0.0)
    sig = kope_mem_error_signature(c->feedback);
  if ((rc = db->eng->case_put(db->impl, c, &v, sig, o, id, err)) != KOPE_OK)
    goto out;
  if (c->prev_case_id)
    rc = propagate(db, &p, v.d, err);
  if (rc == KOPE_OK && c->journal && *c->journal) {
    kope_mem_journal j = {0};
    j.case_id = *id;
    j.session_id = c->session_id;
    j.body = (char *)c->journal;
    j.created = c->created;
    rc = db->eng->journal_put(db->impl, &j, NULL, NULL, err);
  }
out:
  free(sig);
  return rc;
}

int mem_case_insert(kope_db *db, const kope_mem_case_in *c, const mem_origin *o,
                    int64_t *id, kope_err *err)
{
  int64_t newid = 0;
  int rc;

  if ((rc = case_validate(c, err)) != KOPE_OK)
    return rc;
  if ((rc = kope_db_begin(db, err)) != KOPE_OK)
    return rc;
  if ((rc = case_store(db, c, o, &newid, err)) != KOPE_OK) {
    kope_db_rollback(db);
    return rc;
  }
  if ((rc = kope_db_commit(db, err)) != KOPE_OK)
    return rc;
  if (id)
    *id = newid;
  return KOPE_OK;
}

int kope_mem_case_insert(kope_db *db, const kope_mem_case_in *c, int64_t *id,
                         kope_err *err)
{
  if (!c)
    return kope_err_set(err, KOPE_EINPUT, "no Case given");
  return mem_case_insert(db, c, NULL, id, err);
}

int kope_mem_case_get(kope_db *db, int64_t id, int flags, kope_mem_case *out,
                      kope_err *err)
{
  kope_mem_case_init(out);
  return db->eng->case_get(db->impl, id, flags, out, err);
}

int kope_mem_case_each(kope_db *db, const kope_mem_filter *f, int flags,
                       kope_mem_case_fn fn, void *ctx, kope_err *err)
{
  kope_mem_filter none = {0};

  if (f && f->label && kope_mem_label_parse(f->label) < 0)
    return kope_err_set(err, KOPE_EINPUT, "unknown label '%s' (effective, partial, "
                        "ineffective, negative)", f->label);
  return db->eng->case_each(db->impl, f ? f : &none, flags, fn, ctx, err);
}

int kope_mem_lineage(kope_db *db, int64_t id, int64_t **ids, size_t *n, kope_err *err)
{
  mem_node *up = NULL;
  size_t cnt = 0, i;
  int rc = db->eng->ancestors(db->impl, id, &up, &cnt, err);

  *ids = NULL;
  *n = 0;
  if (rc != KOPE_OK)
    return rc;
  if (!(*ids = malloc((cnt + 1) * sizeof **ids))) {
    free(up);
    return kope_err_set(err, KOPE_EINTERNAL, "out of memory");
  }
  for (i = 0; i < cnt; i++)   /* root first */
    (*ids)[i] = up[cnt - 1 - i].id;
  *n = cnt;
  free(up);
  return KOPE_OK;
}

int kope_mem_successors(kope_db *db, int64_t id, int64_t **ids, size_t *n, kope_err *err)
{
  mem_ids s = {0};
  mem_node node;
  int rc = db->eng->node_get(db->impl, id, &node, err);

  if (rc == KOPE_OK)
    rc = db->eng->successors(db->impl, id, &s, err);
  if (rc != KOPE_OK)
    mem_ids_release(&s);
  *ids = s.v;
  *n = s.n;
  return rc;
}

/* ---- compact records --------------------------------------------------- */

void kope_mem_recs_init(kope_mem_recs *r)
{
  memset(r, 0, sizeof *r);
}

void mem_rec_release(kope_mem_rec *x)
{
  free(x->op);
  free(x->target);
  free(x->layer);
  free(x->thought_id);
  free(x->thought_title);
  free(x->verdict);
  free(x->summary);
  memset(x, 0, sizeof *x);
}

void kope_mem_recs_release(kope_mem_recs *r)
{
  size_t i;

  for (i = 0; r && i < r->n; i++)
    mem_rec_release(&r->v[i]);
  if (r) {
    free(r->v);
    memset(r, 0, sizeof *r);
  }
}

kope_mem_rec *mem_recs_push(kope_mem_recs *r)
{
  kope_mem_rec *x;

  if (kope_grow(&r->v, &r->cap, r->n + 1, sizeof *r->v) != KOPE_OK)
    return NULL;
  x = &r->v[r->n++];
  memset(x, 0, sizeof *x);
  x->score.label = -1;
  x->score.speedup = NAN;
  x->score.speedup_vendor = NAN;
  return x;
}

void mem_rec_from_case(kope_mem_rec *rec, const kope_mem_case *c)
{
  rec->kind = KOPE_MEM_REC_CASE;
  rec->id = rec->case_id = c->id;
  rec->op = kope_strdup(c->in.op);
  rec->target = kope_strdup(c->in.target);
  rec->layer = kope_strdup(c->in.layer);
  rec->thought_id = kope_strdup(c->in.thought_id);
  rec->thought_title = kope_strdup(c->in.thought_title);
  rec->verdict = kope_strdup(c->in.verdict);
  rec->score = c->in.score;
  rec->summary = kope_mem_case_summary(c);
  rec->tokens = kope_mem_token_estimate(rec->summary);
}
