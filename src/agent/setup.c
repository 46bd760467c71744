/*
 * Setting a session up and tearing it down: the operator, the target and
 * its hardware profile, the experience store, the evaluator (reference,
 * vendor and incumbent workers) and the policy.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "agent/agent_int.h"

kope_eval_opts kope_agent_eval_opts(const agent *a)
{
  kope_eval_opts eo;

  kope_eval_opts_init(&eo);
  eo.target = a->o->target ? a->o->target : "cpu";
  eo.device = a->o->device;
  if (a->o->eval_seeds > 0)
    eo.seeds = a->o->eval_seeds;
  if (a->o->threads > 0)
    eo.threads = a->o->threads;
  if (a->o->case_budget_s > 0)
    eo.case_budget_s = a->o->case_budget_s;
  eo.no_vendor = a->o->no_vendor;
  if (a->o->min_rounds > 0)
    eo.min_rounds = a->o->min_rounds;
  return eo;
}

static int open_db(agent *a, kope_err *err)
{
  int flags = a->o->memory == KOPE_MEMORY_READONLY ? KOPE_DB_READONLY | KOPE_DB_NOCREATE : 0;

  a->db = kope_db_open(a->o->db_path, flags, err);
  return a->db ? KOPE_OK : err->code;
}

/* On resume, the session names the operator. */
static int resolve_op(agent *a, kope_err *err)
{
  kope_mem_session s;
  const char *name = a->o->op;
  int rc;

  memset(&s, 0, sizeof s);
  if (a->o->resume) {
    if ((rc = kope_mem_session_get(a->db, a->o->resume, &s, err)) != KOPE_OK)
      return rc;
    name = s.op;
  }
  if (!name)
    rc = kope_err_set(err, KOPE_EINPUT, "optimize: no operator given");
  else if (!(a->op = kope_op_load(name, a->o->ops_dir, err)))
    rc = err->code;
  else
    rc = KOPE_OK;
  kope_mem_session_release(&s);
  return rc;
}

static char *scene_of(const kope_op *op)
{
  kope_buf b;
  size_t c;

  kope_buf_init(&b, 2048);
  for (c = 0; c < kope_op_ncases(op); c++) {
    char *l = kope_op_case_label(op, c);
    kope_buf_printf(&b, "%s%s", c ? "; " : "", l);
    free(l);
  }
  return kope_buf_steal(&b);
}

int kope_agent_open(agent *a, int with_eval, kope_err *err)
{
  kope_eval_opts eo;
  kope_target_opts to = {a->o->device, NULL};
  kope_err hwerr;
  int rc;

  if ((rc = open_db(a, err)) || (rc = resolve_op(a, err)))
    return rc;
  if (!(a->t = kope_target_open_opts(a->o->target ? a->o->target : "cpu", &to, err)))
    return err->code;
  kope_err_clear(&hwerr);
  a->hw = kope_hw_get(NULL, 0, &hwerr);   /* the roofline and prompt text are optional */
  a->target_text = kope_target_describe(a->t, a->hw);
  a->scene = scene_of(a->op);
  eo = kope_agent_eval_opts(a);
  if (with_eval && !(a->ev = kope_evaluator_new(a->op, &eo, err)))
    return err->code;
  if (!(a->pol = kope_policy_new(a->o->policy, &a->o->pol, err)))
    return err->code;
  return KOPE_OK;
}

void kope_agent_close(agent *a)
{
  kope_agent_history_free(a);
  kope_policy_free(a->pol);
  kope_evaluator_free(a->ev);
  kope_db_close(a->db);
  kope_hw_free(a->hw);
  kope_target_free(a->t);
  kope_op_free(a->op);
  free(a->target_text);
  free(a->inc_src);
  free(a->feedback);
  free(a->run_dir);
  free(a->scene);
}
