/*
 * Timing: after all cases are correct, each case is timed in interleaved
 * rounds of candidate, reference, vendor and (when set) the base kernel
 * (order alternating every round to cancel drift). A sample is a batch of calls sized to about
 * opts.sample_s, timed by kope's clock around one command round trip, less
 * the measured round-trip overhead of an empty command. The speedup is the
 * median of per-round ratios, with a distribution-free ~95% CI; the raw
 * samples stay in the report.
 *
 * Anti-caching: calls in a batch rotate over up to KOPE_EVAL_MAX_SLOTS
 * buffer sets with different contents; in a sample of rounds (2, 5, 10,
 * 13, ...: as many in each round order) one set first gets fresh contents
 * under the same pointers, and after the round the candidate's outputs
 * are checked. Outputs are poisoned before every round, checked or not
 * (the other workers' outputs written alike), and before the caching
 * flag's single calls on fresh inputs, so a kernel cannot tell from its
 * outputs whether a call will be checked; a checked round's outputs are
 * compared with the reference's outputs of the same round. A result beyond the
 * roofline, or timed calls far faster than single calls on fresh inputs,
 * is flagged for review.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "core/stats.h"
#include "core/rng.h"
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
  cmd->in_size = l->in_size * (size_t)ev->nslots;
  cmd->out_size = l->out_size * (size_t)ev->nslots;
  cmd->in_stride = l->in_size;
  cmd->out_stride = l->out_size;
  cmd->nslots = 1;
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
      kope_eval_worker_failure(r, t->w, st, "while being timed");
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
  cmd.nslots = (uint32_t)ev->nslots;
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

/* Margins of the roofline review: the peaks are measured once, maybe on a
 * loaded machine, and a kernel's access pattern can beat the triad's a
 * little (relu reads one stream where the triad reads two). */
#define REVIEW_COMPUTE_MARGIN 3.0
#define REVIEW_MEMORY_MARGIN 4.0

/* The cache sizes are known (the hardware profile found them). A VM
 * without cache entries in sysfs or CPUID reports 0: then no case can be
 * told to run from a cache, and the memory bound is not judged. */
static int llc_known(const kope_evaluator *ev)
{
  return ev->hw && (kope_hw_cache_bytes(ev->hw, 3) > 0 || kope_hw_cache_bytes(ev->hw, 2) > 0);
}

/* Timed calls more than 8x faster than the fastest single call on fresh
 * inputs, for single calls above 2 ms: results may be reused. */
static int looks_cached(const kope_case_res *cr, double fresh_s)
{
  return fresh_s > 2e-3 && cr->t_cand * 8.0 < fresh_s;
}

/* The compute ceiling the review judges against (FLOP/s): the larger of
 * the all-threads peak and threads x the one-thread peak. The all-threads
 * figure is the one most easily measured low on a loaded machine (a
 * profile marked suspect); a legit matmul was flagged at 3.5x a 40.8
 * GFLOP/s all-threads peak whose one-thread peak was 54.3. */
static double review_peak(const kope_evaluator *ev)
{
  double all, one;

  if (!ev->hw)
    return 0;
  all = kope_hw_peak_gflops(ev->hw);
  one = kope_hw_peak_one_gflops(ev->hw) * (double)ev->o.threads;   /* threads set, > 0 */
  return (one > all ? one : all) * 1e9;
}

/* The memory ceiling (bytes/s) a working set of bytes is judged against:
 * the level it fits in (kope_hw_level_for, on all threads), and there the
 * highest of that level's figures (all threads, threads x one thread) and
 * those of every larger level: a cache is not slower than the memory
 * behind it, so a level measured low under load (a suspect profile: this
 * VM measured 0.13 GB/s for L2 on all threads, 88 GB/s on one) cannot put
 * an honest kernel beyond its bound. */
static double review_bandwidth(const kope_evaluator *ev, double bytes)
{
  double bw = kope_hw_bandwidth_gbs(ev->hw), one;
  int lv = kope_hw_level_for(ev->hw, bytes, kope_hw_threads(ev->hw));

  for (; lv <= 4; lv++) {
    one = kope_hw_level_bandwidth_gbs(ev->hw, lv, 0) * (double)ev->o.threads;
    bw = fmax(bw, fmax(one, kope_hw_level_bandwidth_gbs(ev->hw, lv, 1)));
  }
  return bw * 1e9;
}

/* Flag what no honest kernel does: beat the roofline, or run timed calls
 * far faster than calls on fresh inputs (a cache). Every timed case is
 * judged, in a cache or not, however short its bound (issue 16, class 3:
 * a kernel that recomputed a slice when its output was not poisoned ran
 * at 50x its bound where the cache and sub-microsecond cases were not
 * judged). The per-call floor: the candidate's time counts as its median
 * plus twice the round trip's share of one call (rtt / iters), the most
 * that subtracting the round trip can have taken from a batch. */
static void review(const kope_evaluator *ev, size_t c, const kope_case_res *cr,
                   double fresh_s, double rtt, kope_report *r)
{
  double peak = review_peak(ev), bw = ev->hw ? review_bandwidth(ev, cr->bytes) : 0;
  double tf = peak > 0 ? cr->flops / peak : 0, tb = bw > 0 ? cr->bytes / bw : 0;
  double t = cr->t_cand + 2.0 * rtt / (cr->iters_cand ? cr->iters_cand : 1);

  if (tf > 0 && t * REVIEW_COMPUTE_MARGIN < tf)
    kope_report_flag(r, "roofline", 1, "case %zu: %.3g s per call beats the compute bound "
                     "%.3g s (%.3g GFLOP/s peak)", c, cr->t_cand, tf, peak * 1e-9);
  else if (llc_known(ev) && tb > 0 && t * REVIEW_MEMORY_MARGIN < tb)
    kope_report_flag(r, "roofline", 1, "case %zu: %.3g s per call beats the memory bound "
                     "%.3g s (%.3g GB/s, the level %.3g bytes fit in)", c, cr->t_cand, tb,
                     bw * 1e-9, cr->bytes);
  if (looks_cached(cr, fresh_s))
    kope_report_flag(r, "caching", 1, "case %zu: timed calls took %.3g s but calls on fresh "
                     "inputs %.3g s: results may be reused", c, cr->t_cand, fresh_s);
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
  /* the bound uses the bandwidth of the level the working set fits in;
   * in_cache: that level is a cache of known size (not DRAM) */
  if (ev->hw && cr->t_cand > 0) {
    cr->roof = kope_hw_roofline_seconds(ev->hw, cr->flops, cr->bytes) / cr->t_cand;
    cr->in_cache = kope_hw_level_for(ev->hw, cr->bytes, kope_hw_threads(ev->hw)) < 4;
  }
}

static void fill_slot(kope_evaluator *ev, size_t c, int s, uint64_t seed)
{
  const kope_layout *l = &ev->lay[c];

  kope_eval_fill_inputs(ev->op, &ev->binds[c], l, ev->in.base + (size_t)s * l->in_size, seed,
                        0);
}

/* Buffer sets every batch of the candidate and the reference writes. */
static int active_slots(const kope_evaluator *ev, const timed *ts)
{
  uint32_t k = (uint32_t)ev->nslots;

  if (ts[0].iters < k)
    k = ts[0].iters;
  if (ts[1].iters < k)
    k = ts[1].iters;
  return k < 1 ? 1 : (int)k;
}

static uint64_t slot_trial(const kope_report *r, size_t c, int k, int s)
{
  return kope_rng_mix(r->eval_seed, 0x51075ULL + ((uint64_t)c << 24) + ((uint64_t)k << 8) +
                                        (uint64_t)s);
}

/* Before a checked round the candidate's outputs are poisoned; the other
 * workers' outputs are written the same way, so each pays the same cost
 * of lines last written by kope's process (only the candidate's are
 * checked; the others rewrite theirs). */
static void poison_slots(kope_evaluator *ev, size_t c, int keff, int k, const kope_report *r)
{
  const kope_layout *l = &ev->lay[c];
  int s;

  for (s = 0; s < keff; s++) {
    size_t o = (size_t)s * l->out_size;
    uint64_t trial = slot_trial(r, c, k, s);
    kope_eval_poison(ev->op, &ev->binds[c], l, ev->out_cand.base + o, trial);
    kope_eval_poison(ev->op, &ev->binds[c], l, ev->out_ref.base + o, trial ^ 1);
    if (ev->has_vendor)
      kope_eval_poison(ev->op, &ev->binds[c], l, ev->out_ven.base + o, trial ^ 2);
    if (ev->has_base)
      kope_eval_poison(ev->op, &ev->binds[c], l, ev->out_base.base + o, trial ^ 3);
  }
}

/* The candidate's outputs of round k against the reference's. */
static int verify_slots(kope_evaluator *ev, size_t c, int keff, int k, kope_report *r)
{
  const kope_layout *l = &ev->lay[c];
  double max_err[2] = {0, 0};
  char pre[96];
  int s;

  for (s = 0; s < keff; s++) {
    size_t o = (size_t)s * l->out_size;
    if (kope_eval_compare(ev->op, c, 0, &ev->binds[c], l, ev->out_cand.base + o,
                          ev->out_ref.base + o, slot_trial(r, c, k, s), r, max_err)) {
      snprintf(pre, sizeof pre, "timed call (round %d, buffer set %d): ", k, s);
      kope_report_prefix(r, pre);
      return -1;
    }
  }
  return 0;
}

static int rounds(kope_evaluator *ev, size_t c, timed *ts, int nt, double rtt,
                  kope_case_res *cr, kope_report *r, kope_err *err)
{
  double start = kope_now(), el;
  int k, j, rc, keff = active_slots(ev, ts), check;

  for (k = 0; k < ev->o.max_rounds && k < KOPE_EVAL_MAX_ROUNDS; k++) {
    /* rounds 2, 5, 10, 13, ...: at least one (min_rounds >= 3), and as
     * many in each order, so the candidate is not always the first to
     * read the new contents */
    check = k % 8 == 2 || k % 8 == 5;
    if (check)   /* new contents under the same pointers before each check */
      fill_slot(ev, c, k % keff, kope_rng_mix(r->eval_seed, 0x7133 + ((uint64_t)c << 16) +
                                                  (uint64_t)k));
    /* every round, checked or not: a kernel cannot tell from its outputs
     * whether anyone will look (issue 16, class 3) */
    poison_slots(ev, c, keff, k, r);
    for (j = 0; j < nt; j++) {
      timed *t = &ts[k % 2 ? nt - 1 - j : j];
      if (t == ts && k > 0)   /* the candidate idled while the others ran */
        kope_eval_gap_end(&r->idle, t->w, ev->o.threads);
      if ((rc = run_batch(ev, c, t, t->iters, &el, r, err)))
        return rc;
      if (t == ts)
        kope_eval_gap_begin(&r->idle, t->w);
      t->samples[k] = (el - rtt > 1e-9 ? el - rtt : 1e-9) / t->iters;
    }
    if (check && verify_slots(ev, c, keff, k, r))
      return -1;
    cr->nrounds = k + 1;
    if (k + 1 >= ev->o.min_rounds && kope_now() - start > ev->o.case_budget_s)
      break;
  }
  r->idle.open = 0;   /* the next case starts with calibration */
  return kope_eval_gap_judge(&r->idle, r);
}

/* Fastest single call on fresh inputs of the correctness seeds (seed 0
 * pays the page faults of a new mapping: seeds 1.. only); 0 when fewer
 * than three seeds ran. */
static double fresh_min(const kope_case_res *cr, int seeds)
{
  int n = seeds < 8 ? seeds : 8, i;
  double fresh = 0;

  for (i = 1; i < n; i++)
    if (i == 1 || cr->t_fresh_s[i] < fresh)
      fresh = cr->t_fresh_s[i];
  return n >= 3 ? fresh : 0;
}

/* While the seeds' single calls look far slower than timed calls (before
 * that is flagged as caching), time up to CONFIRM_CALLS more single calls,
 * each on new contents (a content-keyed cache misses every one). On a
 * loaded machine one call can lose a whole time slice, so only the
 * fastest counts; a real cache stays slow on every fresh call. */
#define CONFIRM_CALLS 5
static int confirm_fresh(kope_evaluator *ev, size_t c, timed *cand, double rtt,
                         const kope_case_res *cr, double *fresh, kope_report *r,
                         kope_err *err)
{
  double el;
  int k, rc;

  for (k = 0; k < CONFIRM_CALLS && looks_cached(cr, *fresh); k++) {
    fill_slot(ev, c, 0, kope_rng_mix(r->eval_seed, 0xf7e54ULL + ((uint64_t)c << 16) +
                                         (uint64_t)k));
    /* poisoned like a checked call's, so the call looks like one */
    kope_eval_poison(ev->op, &ev->binds[c], &ev->lay[c], ev->out_cand.base,
                     slot_trial(r, c, 1000 + k, 0));
    if ((rc = run_batch(ev, c, cand, 1, &el, r, err)))
      return rc;
    if (el - rtt < *fresh)
      *fresh = el - rtt;
  }
  return 0;
}

int kope_eval_time_case(kope_evaluator *ev, kope_worker *cand, size_t c, kope_case_res *cr,
                        kope_report *r, kope_err *err)
{
  timed ts[4] = {{cand, "candidate", 0, 0, cr->s_cand}, {&ev->refw, "reference", 0, 0, cr->s_ref}};
  int nt = 2, iv = -1, ib = -1, j, rc;
  double rtt = ping_rtt(cand, ev->o.timeout_s), fresh;

  /* distinct contents per set; sets above 8 MiB start as copies (input
   * generation costs ~100x a copy) and get fresh contents before checks */
  for (j = 0; j < ev->nslots; j++) {
    size_t in = ev->lay[c].in_size;
    if (j > 0 && in > (8u << 20))
      memcpy(ev->in.base + (size_t)j * in, ev->in.base, in);
    else
      fill_slot(ev, c, j, kope_rng_mix(r->eval_seed, 0x7133 + ((uint64_t)c << 16) +
                                           ((uint64_t)j << 40)));
  }
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
  fresh = fresh_min(cr, cr->seeds);
  if ((rc = confirm_fresh(ev, c, &ts[0], rtt, cr, &fresh, r, err)))
    return rc;
  review(ev, c, cr, fresh, rtt, r);
  return 0;
}
