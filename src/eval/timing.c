/*
 * Timing: after all cases are correct, each case is timed in interleaved
 * rounds of candidate, reference, vendor and (when set) the base kernel
 * (order alternating every round to cancel drift). A sample is a batch of calls sized to about
 * opts.sample_s, timed by kope's clock around one command round trip, less
 * the measured round-trip overhead of an empty command. The speedup is the
 * median of per-round ratios, with a distribution-free ~95% CI; the raw
 * samples stay in the report.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "core/stats.h"
#include "eval/eval_int.h"

void kope_eval_fill_cmd(const kope_evaluator *ev, size_t c, kope_child_cmd *cmd,
                        uint32_t kind, uint32_t iters)
{
  const kope_layout *l = &ev->lay[c];
  const kope_case_bind *b = &ev->binds[c];
  size_t i, n = kope_op_nargs(ev->op);

  memset(cmd, 0, sizeof *cmd);
  cmd->magic = KOPE_CHILD_MAGIC;
  cmd->kind = kind;
  cmd->iters = iters;
  cmd->nargs = (uint32_t)n;
  cmd->in_size = l->in_size;
  cmd->out_size = l->out_size;
  for (i = 0; i < n; i++) {
    const kope_arg *a = kope_op_arg(ev->op, i);
    cmd->off[i] = l->off[i];
    cmd->ival[i] = b->ival[i];
    cmd->fval[i] = b->fval[i];
    cmd->argk[i] = a->role == KOPE_ROLE_IN ? KOPE_ARGK_IN :
                   a->role == KOPE_ROLE_OUT ? KOPE_ARGK_OUT : KOPE_ARGK_SCALAR;
    if (a->role == KOPE_ROLE_OUT)
      cmd->guard_off[cmd->nguards++] = l->guard[i];
  }
}

typedef struct timed {
  kope_worker *w;
  const char *who;
  uint32_t iters;
  double t1;
  double *samples;
} timed;

/* A failed command: the candidate's failure is a verdict; a baseline's is
 * an environment error. */
static int cmd_failed(timed *t, int st, kope_report *r, kope_err *err)
{
  if (!strcmp(t->who, "candidate")) {
    if (st == KOPE_WORKER_TIMEOUT)
      kope_report_fail(r, KOPE_TIMEOUT, "candidate did not finish a timing batch in time");
    else
      kope_report_fail(r, KOPE_CRASH, "candidate died while being timed (signal %d)",
                       t->w->signo);
    return -1;
  }
  kope_err_set(err, KOPE_EINTERNAL, "the %s worker failed while timing (state %d, signal %d)",
               t->who, st, t->w->signo);
  return -2;
}

static int run_batch(kope_evaluator *ev, size_t c, timed *t, uint32_t iters, double *el,
                     kope_report *r, kope_err *err)
{
  kope_child_cmd cmd;
  double limit = ev->o.timeout_s;
  int st;

  if (t->t1 > 0 && 20.0 * t->t1 * iters > limit)
    limit = 20.0 * t->t1 * iters;
  kope_eval_fill_cmd(ev, c, &cmd, KOPE_CMD_CALL, iters);
  st = kope_worker_command(t->w, &cmd, limit, el);
  return st == KOPE_WORKER_OK ? 0 : cmd_failed(t, st, r, err);
}

static double ping_rtt(kope_worker *w, double timeout)
{
  kope_child_cmd cmd;
  double s[15], el;
  int i;

  memset(&cmd, 0, sizeof cmd);
  cmd.magic = KOPE_CHILD_MAGIC;
  cmd.kind = KOPE_CMD_PING;
  for (i = 0; i < 15; i++) {
    if (kope_worker_command(w, &cmd, timeout, &el) != KOPE_WORKER_OK)
      return 0.0;
    s[i] = el;
  }
  return kope_median(s, 15);
}

/* Warm up, then grow the batch until one sample lasts about sample_s. */
static int calibrate(kope_evaluator *ev, size_t c, timed *t, double rtt, kope_report *r,
                     kope_err *err)
{
  double el, work, grow;
  int rc, k;

  if ((rc = run_batch(ev, c, t, 1, &el, r, err)))
    return rc;
  t->t1 = el;
  t->iters = 1;
  for (k = 0; k < 30; k++) {
    if ((rc = run_batch(ev, c, t, t->iters, &el, r, err)))
      return rc;
    work = el - rtt;
    if (work >= ev->o.sample_s || t->iters >= 1000000)
      break;
    grow = work > 0 ? 1.2 * ev->o.sample_s / work : 10.0;
    grow = grow < 2.0 ? 2.0 : grow > 100.0 ? 100.0 : grow;
    t->iters = (uint32_t)fmin((double)t->iters * grow, 1e6);
  }
  t->t1 = el / t->iters;
  return 0;
}

static void ratio_stats(const double *num, const double *den, int n, double *med,
                        double *lo, double *hi)
{
  double v[KOPE_EVAL_MAX_ROUNDS];
  int i;

  for (i = 0; i < n; i++)
    v[i] = num[i] / den[i];
  *med = kope_median(v, (size_t)n);
  kope_median_ci(v, (size_t)n, lo, hi);
}

static void summarize(kope_evaluator *ev, size_t c, kope_case_res *cr)
{
  int n = cr->nrounds;

  cr->timed = 1;
  cr->t_cand = kope_median(cr->s_cand, (size_t)n);
  cr->t_ref = kope_median(cr->s_ref, (size_t)n);
  ratio_stats(cr->s_ref, cr->s_cand, n, &cr->sp_ref, &cr->sp_ref_lo, &cr->sp_ref_hi);
  if (ev->has_vendor) {
    cr->t_ven = kope_median(cr->s_ven, (size_t)n);
    ratio_stats(cr->s_ven, cr->s_cand, n, &cr->sp_ven, &cr->sp_ven_lo, &cr->sp_ven_hi);
  }
  if (ev->has_base) {
    cr->t_base = kope_median(cr->s_base, (size_t)n);
    ratio_stats(cr->s_base, cr->s_cand, n, &cr->sp_base, &cr->sp_base_lo, &cr->sp_base_hi);
  }
  cr->flops = ev->binds[c].flops;
  cr->bytes = ev->binds[c].bytes;
  if (ev->hw && cr->t_cand > 0) {
    long llc = kope_hw_cache_bytes(ev->hw, 3) ? kope_hw_cache_bytes(ev->hw, 3)
                                              : kope_hw_cache_bytes(ev->hw, 2);
    cr->roof = kope_hw_roofline_seconds(ev->hw, cr->flops, cr->bytes) / cr->t_cand;
    cr->in_cache = llc > 0 && cr->bytes < (double)llc;
  }
}

static int rounds(kope_evaluator *ev, size_t c, timed *ts, int nt, double rtt,
                  kope_case_res *cr, kope_report *r, kope_err *err)
{
  double start = kope_now(), el;
  int k, j, rc;

  for (k = 0; k < ev->o.max_rounds && k < KOPE_EVAL_MAX_ROUNDS; k++) {
    for (j = 0; j < nt; j++) {
      timed *t = &ts[k % 2 ? nt - 1 - j : j];
      if ((rc = run_batch(ev, c, t, t->iters, &el, r, err)))
        return rc;
      t->samples[k] = (el - rtt > 1e-9 ? el - rtt : 1e-9) / t->iters;
    }
    cr->nrounds = k + 1;
    if (k + 1 >= ev->o.min_rounds && kope_now() - start > ev->o.case_budget_s)
      break;
  }
  return 0;
}

int kope_eval_time_case(kope_evaluator *ev, kope_worker *cand, size_t c, kope_case_res *cr,
                        kope_report *r, kope_err *err)
{
  timed ts[4] = {{cand, "candidate", 0, 0, cr->s_cand}, {&ev->refw, "reference", 0, 0, cr->s_ref}};
  int nt = 2, iv = -1, ib = -1, j, rc;
  double rtt = ping_rtt(cand, ev->o.timeout_s);

  if (ev->has_vendor)
    ts[iv = nt++] = (timed){&ev->venw, "vendor", 0, 0, cr->s_ven};
  if (ev->has_base)
    ts[ib = nt++] = (timed){&ev->basew, "base", 0, 0, cr->s_base};
  for (j = 0; j < nt; j++)
    if ((rc = calibrate(ev, c, &ts[j], rtt, r, err)))
      return rc;
  cr->iters_cand = ts[0].iters;
  cr->iters_ref = ts[1].iters;
  cr->iters_ven = iv > 0 ? ts[iv].iters : 0;
  cr->iters_base = ib > 0 ? ts[ib].iters : 0;
  if ((rc = rounds(ev, c, ts, nt, rtt, cr, r, err)))
    return rc;
  summarize(ev, c, cr);
  return 0;
}
