/*
 * Resuming a stopped session: the state file in the run directory names
 * the incumbent's Case and the counters; the session's Cases in the store
 * rebuild the history and are replayed to the policy so it does not
 * repeat itself. Without a state file (a crash before the first step was
 * saved) the best correct Case of the session becomes the incumbent.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "agent/agent_int.h"

typedef struct replay {
  agent *a;
  int64_t best_id;
  double best;
  int nomem;      /* the history could not grow: stop and report */
} replay;

static int replay_case(const kope_mem_case *c, void *vctx)
{
  replay *rp = vctx;
  agent *a = rp->a;
  attempt at;
  kope_outcome o;

  if (c->in.score.correct && isfinite(c->in.score.speedup) && c->in.score.speedup > rp->best) {
    rp->best = c->in.score.speedup;
    rp->best_id = c->id;
  }
  memset(&at, 0, sizeof at);
  if (c->in.step == 0) {
    /* the seed: never propose it again, but it is not an attempt */
    memset(&o, 0, sizeof o);
    o.verdict = "pending";
    at.p.source = (char *)c->in.code_after;
    kope_policy_observe(a->pol, NULL, &at.p, &o);
    return 0;
  }
  at.p.source = (char *)c->in.code_after;
  at.p.thought_id = (char *)c->in.thought_id;
  at.p.title = (char *)c->in.thought_title;
  at.p.no_kernel = (char *)(c->in.score.correct ? NULL : c->in.feedback);
  memset(&o, 0, sizeof o);
  o.thought_id = c->in.thought_id;
  o.verdict = c->in.verdict;
  o.correct = c->in.score.correct;
  o.speedup_ref = c->in.score.correct ? c->in.score.speedup : 0.0;
  o.vs_incumbent = c->in.score.correct ? c->in.score.step_ratio : 0.0;
  o.feedback = c->in.feedback;
  kope_policy_observe(a->pol, NULL, &at.p, &o);
  a->step = c->in.step > a->step ? c->in.step : a->step;
  {
    kope_ctx_step *h;
    if (kope_agent_history_add(a, &at) != KOPE_OK)
      return rp->nomem = 1;
    h = &a->hist[a->nhist - 1];
    free((char *)h->verdict);
    h->verdict = kope_strdup(c->in.verdict);
    h->correct = c->in.score.correct;
    h->speedup_ref = o.speedup_ref;
    h->vs_incumbent = o.vs_incumbent;
    h->step = c->in.step;
  }
  return 0;
}

static void read_state(agent *a, int64_t *inc_case)
{
  char *path = kope_path_join(a->run_dir, "state.json");
  json_t *j = json_load_file(path, 0, NULL);

  free(path);
  if (!j)
    return;
  *inc_case = json_integer_value(json_object_get(j, "incumbent_case"));
  a->res->evals = json_integer_value(json_object_get(j, "evals"));
  a->res->remeasures = json_integer_value(json_object_get(j, "remeasures"));
  a->res->tokens_in = json_integer_value(json_object_get(j, "tokens_in"));
  a->res->tokens_out = json_integer_value(json_object_get(j, "tokens_out"));
  a->seconds_before = json_real_value(json_object_get(j, "seconds"));
  json_decref(j);
}

static int load_incumbent(agent *a, int64_t id, kope_err *err)
{
  kope_mem_case c;
  int rc;

  if ((rc = kope_mem_case_get(a->db, id, KOPE_MEM_WITH_CODE, &c, err)) != KOPE_OK)
    return rc;
  free(a->inc_src);
  a->inc_src = kope_strdup(c.in.code_after);
  a->inc_case = c.id;
  a->inc_correct = c.in.score.correct;
  a->inc_ref = c.in.score.correct && isfinite(c.in.score.speedup) ? c.in.score.speedup : 0.0;
  a->inc_ven = c.in.score.correct && isfinite(c.in.score.speedup_vendor)
      ? c.in.score.speedup_vendor : 0.0;
  kope_mem_case_release(&c);
  return a->inc_src ? KOPE_OK : kope_err_set(err, KOPE_EINPUT, "case %lld has no code",
                                              (long long)id);
}

int kope_agent_resume(agent *a, kope_err *err)
{
  kope_mem_filter f = {0};
  replay rp = {a, 0, 0.0, 0};
  int64_t inc_case = 0;
  int rc;

  read_state(a, &inc_case);
  f.session_id = a->session;
  if ((rc = kope_mem_case_each(a->db, &f, KOPE_MEM_WITH_CODE, replay_case, &rp, err)) != KOPE_OK)
    return rc;
  if (rp.nomem)
    return kope_err_nomem(err, "session history");
  if (!inc_case)
    inc_case = rp.best_id;
  if (!inc_case)
    return kope_err_set(err, KOPE_EINPUT, "session %lld has no recorded kernel to resume from",
                        (long long)a->session);
  return load_incumbent(a, inc_case, err);
}
