/*
 * Scoring of the experience graph (DESIGN.md §1): effective speedup a_v,
 * step ratio r_v, outcome labels and the discounted downstream score d(v),
 * plus the whole-forest recomputation used by migrations, imports and
 * checks. Pure functions; the store calls exactly these, so stored and
 * recomputed values agree bit for bit.
 *
 * Choice for failed Cases: a Case that did not produce a correct, timed
 * kernel has a_v = 0 and r_v = 0 (label negative), even as a root; its
 * successors then see a non-positive predecessor and get r = 1.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <stdio.h>
#include "mem/engine.h"

static const char *const label_names[KOPE_LABEL_COUNT] = {
  "effective", "partial", "ineffective", "negative"
};

static const char *const verdicts[] = {
  "correct", "compile_error", "incorrect", "crash", "timeout", "forbidden", "no_kernel", NULL
};

const char *kope_mem_label_name(int label)
{
  if (label < 0 || label >= KOPE_LABEL_COUNT)
    return "unknown";
  return label_names[label];
}

int kope_mem_label_parse(const char *name)
{
  int i;

  for (i = 0; name && i < KOPE_LABEL_COUNT; i++)
    if (!strcmp(name, label_names[i]))
      return i;
  return -1;
}

int kope_mem_label_of(double r)
{
  if (r >= KOPE_MEM_EFFECTIVE_MIN)
    return KOPE_LABEL_EFFECTIVE;
  if (r >= KOPE_MEM_PARTIAL_MIN)
    return KOPE_LABEL_PARTIAL;
  if (r >= KOPE_MEM_INEFFECTIVE_MIN)
    return KOPE_LABEL_INEFFECTIVE;
  return KOPE_LABEL_NEGATIVE;
}

int kope_mem_verdict_valid(const char *verdict)
{
  int i;

  for (i = 0; verdict && verdicts[i]; i++)
    if (!strcmp(verdict, verdicts[i]))
      return 1;
  return 0;
}

double kope_mem_effective_speedup(const char *verdict, int correct, double speedup)
{
  if (!verdict || strcmp(verdict, "correct") != 0 || !correct)
    return 0.0;
  if (!isfinite(speedup) || speedup <= 0.0)
    return 0.0;
  return speedup;
}

double kope_mem_step_ratio(double a_v, int has_prev, double a_prev)
{
  if (a_v <= 0.0)
    return 0.0;
  if (!has_prev || !(a_prev > 0.0))
    return 1.0;
  return a_v / a_prev;
}

double kope_mem_d_score(double r, int64_t n_succ, double succ_sum)
{
  if (n_succ <= 0)
    return r;
  return KOPE_MEM_D_SELF * r + (1.0 - KOPE_MEM_D_SELF) * KOPE_MEM_D_DISCOUNT * succ_sum;
}

size_t kope_mem_token_estimate(const char *text)
{
  size_t chars = 0;
  const unsigned char *p;

  for (p = (const unsigned char *)text; p && *p; p++)
    if ((*p & 0xC0) != 0x80)
      chars++;
  return (chars + 3) / 4;
}

double mem_wall_now(void)
{
  struct timespec ts;

  clock_gettime(CLOCK_REALTIME, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

char *mem_uid(const char *db, int64_t id)
{
  return kope_sprintf("%s:%lld", db ? db : "", (long long)id);
}

int mem_uid_parse(const char *uid, char *db, size_t dbsize, int64_t *id)
{
  const char *colon = uid ? strrchr(uid, ':') : NULL;
  char *end;
  long long v;

  if (!colon || colon == uid || (size_t)(colon - uid) >= dbsize)
    return -1;
  v = strtoll(colon + 1, &end, 10);
  if (end == colon + 1 || *end || v <= 0)
    return -1;
  memcpy(db, uid, (size_t)(colon - uid));
  db[colon - uid] = '\0';
  *id = v;
  return 0;
}

int mem_ids_push(mem_ids *ids, int64_t id)
{
  if (ids->n == ids->cap) {
    size_t cap = ids->cap ? ids->cap * 2 : 16;
    int64_t *v = realloc(ids->v, cap * sizeof *v);
    if (!v)
      return -1;
    ids->v = v;
    ids->cap = cap;
  }
  ids->v[ids->n++] = id;
  return 0;
}

void mem_ids_release(mem_ids *ids)
{
  free(ids->v);
  memset(ids, 0, sizeof *ids);
}

/* ---- whole-forest recomputation -------------------------------------- */

typedef struct forest {
  size_t n;
  size_t *first, *next;   /* child lists by position */
  size_t *order;          /* parents before children */
} forest;

static int cmp_node_id(const void *a, const void *b)
{
  const mem_node *x = a, *y = b;
  return (x->id > y->id) - (x->id < y->id);
}

static size_t find_pos(const mem_node *nodes, size_t n, int64_t id)
{
  size_t lo = 0, hi = n;

  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (nodes[mid].id < id)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < n && nodes[lo].id == id ? lo : (size_t)-1;
}

/* Child lists plus a breadth-first order from the roots. Nodes whose prev
 * is missing count as roots. */
static int forest_build(forest *f, const mem_node *nodes, size_t n, size_t *parent)
{
  size_t i, head = 0, tail = 0;
  const size_t none = (size_t)-1;

  f->n = n;
  f->first = malloc((n + 1) * sizeof *f->first);
  f->next = malloc((n + 1) * sizeof *f->next);
  f->order = malloc((n + 1) * sizeof *f->order);
  if (!f->first || !f->next || !f->order)
    return -1;
  for (i = 0; i < n; i++)
    f->first[i] = none;
  for (i = n; i-- > 0;) {
    parent[i] = nodes[i].prev_id ? find_pos(nodes, n, nodes[i].prev_id) : none;
    if (parent[i] == i)
      parent[i] = none;
    if (parent[i] != none) {
      f->next[i] = f->first[parent[i]];
      f->first[parent[i]] = i;
    } else {
      f->order[tail++] = i;
    }
  }
  while (head < tail) {
    size_t c;
    for (c = f->first[f->order[head++]]; c != none; c = f->next[c])
      f->order[tail++] = c;
  }
  f->n = tail;   /* nodes on a cycle (corrupt input) are left out */
  return 0;
}

static void forest_release(forest *f)
{
  free(f->first);
  free(f->next);
  free(f->order);
}

static double absdiff(double a, double b)
{
  return fabs(a - b);
}

int mem_rescore_nodes(mem_node *nodes, size_t n, double *max_change)
{
  forest f = {0};
  size_t *parent = malloc((n + 1) * sizeof *parent), i;
  double worst = 0.0;
  int rc = -1;

  if (n > 0)
    qsort(nodes, n, sizeof *nodes, cmp_node_id);
  if (!parent || forest_build(&f, nodes, n, parent) != 0)
    goto out;
  for (i = 0; i < f.n; i++) {   /* r: parents first */
    mem_node *v = &nodes[f.order[i]];
    size_t p = parent[f.order[i]];
    double r = kope_mem_step_ratio(v->a, p != (size_t)-1, p != (size_t)-1 ? nodes[p].a : 0.0);
    worst = fmax(worst, absdiff(r, v->r));
    v->r = r;
    v->label = kope_mem_label_of(r);
    v->succ_sum = 0.0;
    v->n_succ = 0;
  }
  for (i = f.n; i-- > 0;) {     /* d: children first */
    mem_node *v = &nodes[f.order[i]];
    size_t p = parent[f.order[i]];
    double d = kope_mem_d_score(v->r, v->n_succ, v->succ_sum);
    worst = fmax(worst, absdiff(d, v->d));
    v->d = d;
    if (p != (size_t)-1) {
      nodes[p].succ_sum += d;
      nodes[p].n_succ++;
    }
  }
  if (max_change)
    *max_change = worst;
  rc = 0;
out:
  forest_release(&f);
  free(parent);
  return rc;
}
