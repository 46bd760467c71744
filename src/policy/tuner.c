/*
 * The offline tuner and the random-search baseline.
 *
 * Actions are knob moves on the incumbent: set one declared knob to one
 * of its other values. A move is named by its thought id
 * ("<layer>.<knob>=<value>"), so experience about it is comparable across
 * operators. Each thought id is an arm of a bandit:
 *   prior   from the context's experience records: a Case with this
 *           thought id contributes value d(v) if it was correct (0 if
 *           not) with weight relevance·c_v; a digest contributes its
 *           median ratio times its success rate with weight
 *           relevance·min(attempts, 8)/2. Cases from another target
 *           (cold tier; their knobs have other names) count for every
 *           move of the same layer, with weight 0.3·relevance·c_v. prior_n = min(Σw, 6), prior_mean
 *           = Σw·v / Σw; with no records (memory off) the prior is
 *           neutral (mean 1, n 0);
 *   reward  of one of this session's attempts: the candidate's speedup
 *           over the incumbent it started from (0 when incorrect);
 *   choice  UCB: mean + explore·sqrt(ln(T + 2) / (prior_n + n + 1)), where
 *           mean = (prior_n·prior_mean + Σ rewards) / (prior_n + n), T the
 *           session's attempts, explore 0.35 by default; ties by a
 *           seeded random jitter.
 * Compounds: before single moves, the tuner proposes once per incumbent
 * the combination of, on each knob, the move experience rates effective
 * (prior mean >= 1.05 with weight >= 1); after three attempts, the
 * combination of the moves whose own mean reward is >= 1.02. Either needs
 * at least two knobs. A configuration already evaluated in this session
 * is never proposed again; when every single move has been tried, two
 * moves are combined at random. The random policy ignores the context: it draws a whole
 * configuration uniformly among the untried ones.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/rng.h"
#include "policy/policy_int.h"

#define TUNER_MAX_TRIED 4096

typedef struct arm {
  char thought[128];
  double sum;
  int n;
} arm;

typedef struct tuner {
  kope_policy base;
  int random_search;
  kope_rng rng;
  arm *arms;
  size_t narms, cap;
  char (*tried)[65];
  size_t ntried;
  int total;
} tuner;

typedef struct move {
  const kope_knob *k;
  const char *value;
  char *thought;
  double prior_mean, prior_n, score;
} move;

/* ---- bookkeeping ---- */

/* The arm of a move; a move never observed has the empty arm. */
static const arm *arm_find(const tuner *t, const char *thought)
{
  static const arm none;
  size_t i;

  for (i = 0; i < t->narms; i++)
    if (!strcmp(t->arms[i].thought, thought))
      return &t->arms[i];
  return &none;
}

/* The arm to record an observation in, added when new; NULL when out of
 * memory (the observation is then dropped: observe has no status). */
static arm *arm_get(tuner *t, const char *thought)
{
  size_t i;

  for (i = 0; i < t->narms; i++)
    if (!strcmp(t->arms[i].thought, thought))
      return &t->arms[i];
  if (kope_grow(&t->arms, &t->cap, t->narms + 1, sizeof *t->arms) != KOPE_OK)
    return NULL;
  snprintf(t->arms[t->narms].thought, sizeof t->arms[0].thought, "%s", thought);
  return &t->arms[t->narms++];
}

static int was_tried(const tuner *t, const char *src)
{
  char h[65];
  size_t i;

  kope_sha256_hex(src, strlen(src), h);
  for (i = 0; i < t->ntried; i++)
    if (!strcmp(t->tried[i], h))
      return 1;
  return 0;
}

static void mark_tried(tuner *t, const char *src)
{
  if (!src || was_tried(t, src) || t->ntried >= TUNER_MAX_TRIED)
    return;
  kope_sha256_hex(src, strlen(src), t->tried[t->ntried++]);
}

/* ---- priors from the context ---- */

static void prior_of(const kope_ctx *ctx, const char *thought, const char *layer, double *mean,
                     double *n)
{
  double sw = 0.0, swv = 0.0;
  size_t i;

  for (i = 0; i < kope_ctx_nitems(ctx); i++) {
    const kope_ctx_item *it = kope_ctx_item_at(ctx, i);
    double w, v, scale = 1.0;
    if (strcmp(it->thought_id, thought)) {
      /* another target's knobs have other names: its Cases count, weakly,
       * for every move of the same optimization layer */
      if (!it->other_target || !*it->layer || strcmp(it->layer, layer))
        continue;
      scale = 0.3;
    }
    if (it->kind == KOPE_CTX_CASE || it->kind == KOPE_CTX_FIX) {
      w = scale * it->relevance * (it->score.confidence > 0.1 ? it->score.confidence : 0.1);
      v = it->score.correct ? it->score.d_score : 0.0;
    } else if (it->kind == KOPE_CTX_DIGEST && it->attempts > 0) {
      w = it->relevance * (it->attempts < 8 ? (double)it->attempts : 8.0) / 2.0;
      v = it->median_ratio * (double)it->n_correct / (double)it->attempts;
    } else {
      continue;
    }
    sw += w;
    swv += w * v;
  }
  *mean = sw > 0 ? swv / sw : 1.0;
  *n = sw < 6.0 ? sw : 6.0;
}

static double ucb(tuner *t, const move *m)
{
  const arm *a = arm_find(t, m->thought);
  double n = m->prior_n + a->n;
  double mean = n > 0 ? (m->prior_n * m->prior_mean + a->sum) / n : 1.0;
  double explore = t->base.o.explore > 0 ? t->base.o.explore : 0.35;

  return mean + explore * sqrt(log(t->total + 2.0) / (n + 1.0)) +
         1e-6 * kope_rng_uniform(&t->rng);
}

/* ---- proposals ---- */

/* out takes src and copies of the rest: KOPE_OK, or KOPE_ENOMEM when a
 * copy failed (out owns what was set; the caller releases it). */
static int fill(kope_proposal *out, char *src, const kope_knob *k, const char *value,
                const char *thought, const char *why)
{
  char title[300];

  snprintf(title, sizeof title, "set %s from %s to %s (%s)", k->name, k->value, value, k->desc);
  out->source = src;
  out->layer = kope_strdup(k->layer);
  out->thought_id = kope_strdup(thought);
  out->title = kope_strdup(title);
  out->rationale = kope_strdup(why);
  return out->layer && out->thought_id && out->title && out->rationale ? KOPE_OK : KOPE_ENOMEM;
}

static size_t list_moves(tuner *t, const kope_ctx *ctx, const kope_knob *k, size_t nk, move *mv)
{
  size_t i, n = 0;
  int v;

  for (i = 0; i < nk; i++)
    for (v = 0; v < k[i].nvalues; v++) {
      if (!strcmp(k[i].values[v], k[i].value))
        continue;
      mv[n].k = &k[i];
      mv[n].value = k[i].values[v];
      mv[n].thought = kope_knob_thought_id(&k[i], k[i].values[v]);
      prior_of(ctx, mv[n].thought, k[i].layer, &mv[n].prior_mean, &mv[n].prior_n);
      mv[n].score = ucb(t, &mv[n]);
      n++;
    }
  return n;
}

static int by_score(const void *a, const void *b)
{
  double x = ((const move *)a)->score, y = ((const move *)b)->score;
  return x < y ? 1 : x > y ? -1 : 0;
}

/* The value of a move for a compound: from experience (prior mean, with
 * enough weight behind it) or from this session's own attempts (mean
 * reward). 0 when the move does not qualify. */
static double compound_value(tuner *t, const move *m, int from_memory)
{
  const arm *a = arm_find(t, m->thought);

  if (from_memory)
    return m->prior_n >= 1.0 && m->prior_mean >= 1.05 ? m->prior_mean : 0.0;
  return a->n > 0 && a->sum / a->n >= 1.02 ? a->sum / a->n : 0.0;
}

/* A compound move: on every knob, the best qualifying move, applied
 * together. Experience (or the session's own results) says each helps
 * alone; knobs of different layers usually compose, and a compound reaches
 * in one evaluation what single moves need several promotions for.
 * KOPE_EREJECT when fewer than two knobs qualify or it was tried;
 * KOPE_ENOMEM when out of memory. */
static int propose_compound(tuner *t, move *mv, size_t n, const char *src, int from_memory,
                            kope_proposal *out)
{
  size_t *best = calloc(n + 1, sizeof *best), nb = 0, i, j, lead = 0;
  char *s = kope_strdup(src), why[400];
  int rc = KOPE_EREJECT, len;

  if (!best || !s) {
    free(best);
    free(s);
    return KOPE_ENOMEM;
  }
  for (i = 0; i < n; i++) {
    double v = compound_value(t, &mv[i], from_memory);
    if (v <= 0.0)
      continue;
    for (j = 0; j < nb && mv[best[j]].k != mv[i].k; j++)
      ;
    if (j == nb)
      best[nb++] = i;
    else if (v > compound_value(t, &mv[best[j]], from_memory))
      best[j] = i;
  }
  len = snprintf(why, sizeof why, "compound of the moves that %s:",
                 from_memory ? "experience rates effective" : "were faster in this session");
  for (j = 0; j < nb && s; j++) {
    char *next = kope_knobs_apply(s, mv[best[j]].k->name, mv[best[j]].value, NULL);
    free(s);
    s = next;
    if (compound_value(t, &mv[best[j]], from_memory) >
        compound_value(t, &mv[best[lead]], from_memory))
      lead = j;
    if (len > 0 && (size_t)len < sizeof why)
      len += snprintf(why + len, sizeof why - (size_t)len, " %s", mv[best[j]].thought);
  }
  if (nb >= 2 && s && !was_tried(t, s)) {
    rc = fill(out, s, mv[best[lead]].k, mv[best[lead]].value, mv[best[lead]].thought, why);
    s = NULL;
  }
  free(s);
  free(best);
  return rc;
}

/* A compound from experience first, then (after a few own attempts) a
 * compound of this session's winners, then the best untried single move;
 * then random pairs of moves. */
static int propose_move(tuner *t, const kope_ctx *ctx, const char *src, const kope_knob *k,
                        size_t nk, kope_proposal *out)
{
  move *mv = calloc(nk * KOPE_MAX_KNOB_VALUES + 1, sizeof *mv);
  size_t n, i;
  int rc = KOPE_EREJECT, tries;
  char why[400];

  if (!mv)
    return KOPE_ENOMEM;
  n = list_moves(t, ctx, k, nk, mv);
  qsort(mv, n, sizeof *mv, by_score);
  rc = propose_compound(t, mv, n, src, 1, out);
  if (rc == KOPE_EREJECT && t->total >= 3)
    rc = propose_compound(t, mv, n, src, 0, out);
  for (i = 0; i < n && rc == KOPE_EREJECT; i++) {
    char *s = kope_knobs_apply(src, mv[i].k->name, mv[i].value, NULL);
    if (!s || was_tried(t, s)) {
      free(s);
      continue;
    }
    snprintf(why, sizeof why, "UCB %.3f: prior mean %.3f from %.2f weighted records, %d own "
             "attempts of this move", mv[i].score, mv[i].prior_mean, mv[i].prior_n,
             arm_find(t, mv[i].thought)->n);
    rc = fill(out, s, mv[i].k, mv[i].value, mv[i].thought, why);
  }
  for (tries = 0; rc == KOPE_EREJECT && n >= 2 && tries < 64; tries++) {
    size_t a = (size_t)kope_rng_int(&t->rng, 0, (int64_t)n - 1),
           b = (size_t)kope_rng_int(&t->rng, 0, (int64_t)n - 1);
    char *s1, *s2;
    if (mv[a].k == mv[b].k)
      continue;
    s1 = kope_knobs_apply(src, mv[a].k->name, mv[a].value, NULL);
    s2 = s1 ? kope_knobs_apply(s1, mv[b].k->name, mv[b].value, NULL) : NULL;
    free(s1);
    if (!s2 || was_tried(t, s2)) {
      free(s2);
      continue;
    }
    snprintf(why, sizeof why, "every single move was tried; combined with %s", mv[b].thought);
    rc = fill(out, s2, mv[a].k, mv[a].value, mv[a].thought, why);
  }
  for (i = 0; i < n; i++)
    free(mv[i].thought);
  free(mv);
  return rc;
}

/* Random search: a whole configuration drawn uniformly, untried. */
static int propose_random(tuner *t, const char *src, const kope_knob *k, size_t nk,
                          kope_proposal *out)
{
  int tries, rc;

  for (tries = 0; tries < 256; tries++) {
    char *s = kope_strdup(src), *thought = NULL;
    size_t i, first = nk;
    const char *first_v = NULL;
    for (i = 0; i < nk && s; i++) {
      const char *v = k[i].values[kope_rng_int(&t->rng, 0, k[i].nvalues - 1)];
      char *n = kope_knobs_apply(s, k[i].name, v, NULL);
      free(s);
      s = n;
      if (strcmp(v, k[i].value) && first == nk) {
        first = i;
        first_v = v;
      }
    }
    if (!s || first == nk || was_tried(t, s)) {
      free(s);
      continue;
    }
    thought = kope_knob_thought_id(&k[first], first_v);
    rc = fill(out, s, &k[first], first_v, thought, "random configuration (blind search baseline)");
    free(thought);
    return rc;
  }
  return KOPE_EREJECT;
}

static int tuner_propose(kope_policy *p, const kope_ctx *ctx, kope_proposal *out, kope_err *err)
{
  tuner *t = (tuner *)p;
  const char *src = kope_ctx_state_of(ctx)->incumbent;
  kope_knob *k = NULL;
  size_t nk = 0;
  int rc;

  if ((rc = kope_knobs_parse(src, "incumbent", &k, &nk, err)) != KOPE_OK)
    return rc;
  mark_tried(t, src);
  if (!nk) {
    free(k);
    return kope_err_set(err, KOPE_EREJECT, "the incumbent declares no knobs to tune");
  }
  rc = t->random_search ? propose_random(t, src, k, nk, out)
                        : propose_move(t, ctx, src, k, nk, out);
  if (rc == KOPE_EREJECT)
    kope_err_set(err, KOPE_EREJECT, "every reachable knob configuration has been tried");
  else if (rc == KOPE_ENOMEM)
    kope_err_nomem(err, "tuner moves");
  free(k);
  return rc;
}

int kope_policy_tuner_propose(kope_policy *tp, const kope_ctx *ctx, kope_proposal *out,
                              kope_err *err)
{
  memset(out, 0, sizeof *out);
  return tuner_propose(tp, ctx, out, err);
}

static void tuner_observe(kope_policy *p, const kope_ctx *ctx, const kope_proposal *prop,
                          const kope_outcome *o)
{
  tuner *t = (tuner *)p;
  arm *a;

  (void)ctx;
  mark_tried(t, prop->source);
  if (o->verdict && !strcmp(o->verdict, "pending"))
    return;   /* proposed, not yet evaluated: only never propose it again */
  t->total++;
  if (!o->thought_id || !*o->thought_id)
    return;
  if (!(a = arm_get(t, o->thought_id)))
    return;
  a->n++;
  a->sum += o->correct ? (o->vs_incumbent > 0 ? o->vs_incumbent : 1.0) : 0.0;
}

static void tuner_destroy(kope_policy *p)
{
  tuner *t = (tuner *)p;

  free(t->arms);
  free(t->tried);
  free(t);
}

static const kope_policy_vt tuner_vt = {"tuner", tuner_propose, tuner_observe, NULL,
                                        tuner_destroy, 0};
static const kope_policy_vt random_vt = {"random", tuner_propose, tuner_observe, NULL,
                                         tuner_destroy, 0};

kope_policy *kope_policy_tuner_new(const kope_policy_opts *o, int random_search, kope_err *err)
{
  tuner *t = calloc(1, sizeof *t);

  if (!t || !(t->tried = calloc(TUNER_MAX_TRIED, sizeof *t->tried))) {
    free(t);
    kope_err_nomem(err, "tuner");
    return NULL;
  }
  t->base.vt = random_search ? &random_vt : &tuner_vt;
  t->base.o = *o;
  snprintf(t->base.name, sizeof t->base.name, "%s", t->base.vt->kind);
  t->random_search = random_search;
  kope_rng_seed(&t->rng, o->seed ? o->seed : kope_rng_os_seed());
  return &t->base;
}
