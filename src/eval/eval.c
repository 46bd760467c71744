/*
 * The evaluator's main flow: prepare (reference and vendor workers, shared
 * regions, case layouts), build candidates in parallel, then judge each
 * one alone: every case on every fresh seed against the reference, and
 * only when all are correct, time every case (timing.c).
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "eval/eval_int.h"
#include "eval/gate.h"
#include "eval/gate_cl.h"
#include "eval/gate_cu.h"
#include "eval/sandbox.h"

void kope_eval_opts_init(kope_eval_opts *o)
{
  memset(o, 0, sizeof *o);
  o->target = "cpu";
  o->seeds = 5;
  o->timeout_s = 10.0;
  o->compile_timeout_s = 60.0;
  o->timing = 1;
  o->min_rounds = 7;
  o->max_rounds = 41;
  o->sample_s = 0.002;
  o->case_budget_s = 0.15;
}

static void progress(const kope_evaluator *ev, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void progress(const kope_evaluator *ev, const char *fmt, ...)
{
  char line[256];
  va_list ap;

  if (!ev->o.progress)
    return;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  ev->o.progress(ev->o.progress_ctx, line);
}

static char *make_root(kope_err *err)
{
  const char *tmp = getenv("TMPDIR");
  char *tmpl = kope_sprintf("%s/kope-eval-XXXXXX", tmp && *tmp ? tmp : "/tmp");

  if (!mkdtemp(tmpl)) {
    kope_err_set(err, KOPE_EENV, "cannot create a scratch directory under %s",
                 tmp && *tmp ? tmp : "/tmp");
    free(tmpl);
    return NULL;
  }
  return tmpl;
}

static int build_trusted(kope_evaluator *ev, kope_build_role role, const char *path,
                         kope_build_out *out, kope_err *err)
{
  kope_build_req req;
  char *src = kope_op_trusted_source(ev->op, path, err);
  int rc;

  if (!src)
    return KOPE_EINPUT;
  memset(&req, 0, sizeof req);
  req.op = ev->op;
  req.role = role;
  req.source = src;
  req.timeout_s = 120;
  rc = kope_target_build(ev->t, &req, out, err);
  if (rc == KOPE_OK && !out->ok)
    rc = kope_err_set(err, KOPE_EINPUT, "%s: the %s of operator %s does not build:\n%s", path,
                      role == KOPE_BUILD_REFERENCE ? "reference" : "vendor baseline",
                      kope_op_name(ev->op), out->diagnostics ? out->diagnostics : "");
  free(src);
  return rc;
}

static int start_worker(kope_evaluator *ev, kope_worker *w, const char *exe, const char *name,
                        kope_build_role role, kope_region *out, kope_err *err)
{
  char *dir = kope_path_join(ev->root, name);
  kope_env env;
  int rc;

  if ((rc = kope_mkdirs(dir, err)) == KOPE_OK) {
    kope_env_init(&env, dir);
    kope_target_worker_env(ev->t, role, ev->o.threads, &env);
    /* candidates: freed heap memory is overwritten at once (no tcache,
     * whose blocks glibc does not perturb), so no result survives a free */
    if (role == KOPE_BUILD_CANDIDATE)
      kope_env_add(&env, "GLIBC_TUNABLES=glibc.malloc.tcache_count=0:glibc.malloc.perturb=165");
    rc = kope_worker_start(w, exe, dir, &env, &ev->in, out, &ev->lim,
                           role == KOPE_BUILD_CANDIDATE, err);
    kope_env_free(&env);
  }
  free(dir);
  return rc;
}

static int prepare_layouts(kope_evaluator *ev, kope_err *err)
{
  size_t c;
  int rc;

  ev->ncases = kope_op_ncases(ev->op);
  if (ev->ncases > KOPE_EVAL_MAX_CASES)
    return kope_err_set(err, KOPE_EINPUT, "%s: too many cases", kope_op_spec_path(ev->op));
  for (c = 0; c < ev->ncases; c++) {
    if ((rc = kope_op_bind(ev->op, c, &ev->binds[c], err)))
      return rc;
    kope_eval_layout(ev->op, &ev->binds[c], &ev->lay[c]);
    if (ev->lay[c].in_size > ev->max_in)
      ev->max_in = ev->lay[c].in_size;
    if (ev->lay[c].out_size > ev->max_out)
      ev->max_out = ev->lay[c].out_size;
  }
  return KOPE_OK;
}

/* Timed batches rotate over up to KOPE_EVAL_MAX_SLOTS buffer sets, as
 * many as fit in KOPE_EVAL_SLOT_BYTES (memfd pages are only used when
 * touched). */
static int slots_for(size_t in, size_t out)
{
  int k = KOPE_EVAL_MAX_SLOTS;

  while (k > 1 && (double)k * (double)(in + out) > (double)KOPE_EVAL_SLOT_BYTES)
    k--;
  return k;
}

static int prepare_regions(kope_evaluator *ev, kope_err *err)
{
  int rc;

  ev->nslots = slots_for(ev->max_in, ev->max_out);
  ev->max_in *= (size_t)ev->nslots;
  ev->max_out *= (size_t)ev->nslots;

  if ((rc = kope_region_init(&ev->in, "kope-in", err)) ||
      (rc = kope_region_init(&ev->out_cand, "kope-out-cand", err)) ||
      (rc = kope_region_init(&ev->out_ref, "kope-out-ref", err)) ||
      (rc = kope_region_init(&ev->out_ven, "kope-out-vendor", err)) ||
      (rc = kope_region_resize(&ev->in, ev->max_in, err)) ||
      (rc = kope_region_resize(&ev->out_cand, ev->max_out, err)) ||
      (rc = kope_region_resize(&ev->out_ref, ev->max_out, err)) ||
      (rc = kope_region_resize(&ev->out_ven, ev->max_out, err)))
    return rc;
  return KOPE_OK;
}

static void set_limits(kope_evaluator *ev)
{
  long buffers_mb = (long)((ev->max_in + ev->max_out) >> 20);

  ev->lim.cpu_s = 900;
  ev->lim.mem_mb = kope_target_worker_mem_limited(ev->t) ? 16384 + 2 * buffers_mb : 0;
  ev->lim.fsize_bytes = kope_target_worker_fsize(ev->t);
  ev->lim.nofile = 64;
}

/* The vendor baseline this target times (kope_target_vendor), NULL for
 * none. */
static const char *vendor_for_target(const kope_evaluator *ev)
{
  const kope_op_vendor *v = kope_target_vendor(ev->t, ev->op);

  return v ? v->path : NULL;
}

/* Build-only: a target may build its own vendor baseline too (cuda: kope's
 * nvcc vendor build is checked without a GPU); nothing runs. */
static int build_only_vendor(kope_evaluator *ev, kope_err *err)
{
  const char *path = vendor_for_target(ev);

  if (!path || !kope_target_build_only_vendor(ev->t))
    return KOPE_OK;
  progress(ev, "building vendor baseline");
  return build_trusted(ev, KOPE_BUILD_VENDOR, path, &ev->ven, err);
}

static int open_target(kope_evaluator *ev, kope_err *err)
{
  kope_target_opts to;

  memset(&to, 0, sizeof to);
  to.device = ev->o.device;
  to.cuda_arch = ev->o.cuda_arch;
  if (!(ev->t = kope_target_open_opts(ev->o.target, &to, err)))
    return err->code;
  return kope_target_check_flags(ev->t, ev->o.cflags, err);
}

static int prepare(kope_evaluator *ev, kope_err *err)
{
  const char *vendor;
  int rc;

  if (ev->o.build_only) {  /* gate and compile only: no device, nothing runs */
    if (!(ev->root = make_root(err)))
      return err->code;
    return build_only_vendor(ev, err);
  }
  if ((rc = kope_target_check_device(ev->t, err)) ||
      (rc = prepare_layouts(ev, err)) || (rc = prepare_regions(ev, err)))
    return rc;
  if (!(ev->root = make_root(err)))
    return err->code;
  set_limits(ev);
  progress(ev, "building reference");
  if ((rc = build_trusted(ev, KOPE_BUILD_REFERENCE, kope_op_reference_path(ev->op), &ev->ref, err)))
    return rc;
  vendor = ev->o.no_vendor ? NULL : vendor_for_target(ev);
  ev->has_vendor = vendor != NULL;
  if (ev->has_vendor) {
    progress(ev, "building vendor baseline");
    if ((rc = build_trusted(ev, KOPE_BUILD_VENDOR, vendor, &ev->ven, err)) ||
        (rc = start_worker(ev, &ev->venw, ev->ven.exe, "vendor", KOPE_BUILD_VENDOR,
                           &ev->out_ven, err)))
      return rc;
  }
  return start_worker(ev, &ev->refw, ev->ref.exe, "reference", KOPE_BUILD_REFERENCE,
                      &ev->out_ref, err);
}

kope_evaluator *kope_evaluator_new(const kope_op *op, const kope_eval_opts *opts, kope_err *err)
{
  kope_evaluator *ev = calloc(1, sizeof *ev);
  kope_err hwerr;

  ev->op = op;
  if (opts)
    ev->o = *opts;
  else
    kope_eval_opts_init(&ev->o);
  if (ev->o.threads <= 0)
    ev->o.threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
  if (ev->o.seeds < 1)
    ev->o.seeds = 1;
  if (ev->o.min_rounds < 3)
    ev->o.min_rounds = 3;
  if (ev->o.max_rounds < ev->o.min_rounds)
    ev->o.max_rounds = ev->o.min_rounds;
  ev->in.fd = ev->out_cand.fd = ev->out_ref.fd = ev->out_ven.fd = ev->out_base.fd = -1;
  ev->in.ro_fd = ev->out_cand.ro_fd = ev->out_ref.ro_fd = ev->out_ven.ro_fd = -1;
  ev->out_base.ro_fd = -1;
  if (open_target(ev, err) != KOPE_OK) {
    kope_evaluator_free(ev);
    return NULL;
  }
  /* the hardware profile is the CPU's: no roofline (or its review flag)
   * for GPU kernels until kope measures the GPU's peaks */
  if (ev->o.timing && !ev->o.build_only && kope_target_host_roofline(ev->t)) {
    kope_err_clear(&hwerr);
    ev->hw = kope_hw_get(ev->o.hw_cache, 0, &hwerr);   /* roofline is optional */
  }
  kope_sandbox_probe();   /* forks test children: before any thread starts */
  if (prepare(ev, err) != KOPE_OK) {
    kope_evaluator_free(ev);
    return NULL;
  }
  return ev;
}

static void drop_base(kope_evaluator *ev)
{
  if (!ev->has_base && !ev->base_dir)
    return;
  kope_worker_stop(&ev->basew);
  kope_buf_release(&ev->basew.log);
  kope_build_out_release(&ev->base);
  if (ev->base_dir && !ev->o.keep_workdir)
    kope_rmtree(ev->base_dir);
  free(ev->base_dir);
  ev->base_dir = NULL;
  ev->has_base = 0;
}

void kope_evaluator_free(kope_evaluator *ev)
{
  if (!ev)
    return;
  drop_base(ev);
  kope_region_release(&ev->out_base);
  kope_worker_stop(&ev->refw);
  kope_worker_stop(&ev->venw);
  kope_worker_reap_pending();   /* their exits run side by side, waited for once */
  kope_buf_release(&ev->refw.log);
  kope_buf_release(&ev->venw.log);
  kope_region_release(&ev->in);
  kope_region_release(&ev->out_cand);
  kope_region_release(&ev->out_ref);
  kope_region_release(&ev->out_ven);
  kope_build_out_release(&ev->ref);
  kope_build_out_release(&ev->ven);
  if (ev->root && !ev->o.keep_workdir)
    kope_rmtree(ev->root);
  free(ev->root);
  kope_hw_free(ev->hw);
  kope_target_free(ev->t);
  json_decref(ev->layers);
  free(ev);
}

/* ---- building candidates in parallel ---- */

typedef struct build_job {
  kope_evaluator *ev;
  const char *source;
  char *dir;
  kope_build_out out;
  kope_err err;
  int rc;
  int refused;               /* the static gate refused it (why says why) */
  char why[400];
} build_job;

/* The source gate of the candidate's language. */
static int gate_source(build_job *j)
{
  switch (kope_target_gate_kind(j->ev->t)) {
  case KOPE_TARGET_GATE_OPENCL:
    return kope_gate_cl(j->source, j->ev->op, j->why, sizeof j->why);
  case KOPE_TARGET_GATE_CUDA:
    return kope_gate_cu(j->source, j->ev->op, j->why, sizeof j->why);
  default:
    return kope_gate_source(j->source, j->why, sizeof j->why);
  }
}

static void *build_thread(void *arg)
{
  build_job *j = arg;
  kope_build_req req;

  memset(&req, 0, sizeof req);
  req.op = j->ev->op;
  req.role = KOPE_BUILD_CANDIDATE;
  req.source = j->source;
  req.workdir = j->dir;
  req.extra_flags = j->ev->o.cflags;
  req.timeout_s = j->ev->o.compile_timeout_s;
  kope_err_clear(&j->err);
  j->rc = kope_mkdirs(j->dir, &j->err);
  /* the source directives first: an #include of a file outside the
   * allow-list must not even reach the compiler */
  if (j->rc == KOPE_OK && !j->ev->o.no_gate && gate_source(j) != 0) {
    j->refused = 1;
    return NULL;
  }
  if (j->rc == KOPE_OK)
    j->rc = kope_target_build(j->ev->t, &req, &j->out, &j->err);
  /* the artifact checks read the C build's .i, .s and .o */
  if (j->rc == KOPE_OK && j->out.ok && !j->ev->o.no_gate &&
      kope_target_gate_artifacts(j->ev->t)) {
    int g = kope_gate_files(j->dir, j->source, kope_op_name(j->ev->op), j->why,
                            sizeof j->why, &j->err);
    if (g < 0)
      j->refused = 1;
    else if (g > 0)
      j->rc = g;
  }
  return NULL;
}

static void build_all(kope_evaluator *ev, build_job *jobs, size_t n)
{
  size_t par = ev->o.parallel_builds > 0 ? (size_t)ev->o.parallel_builds
                                         : (size_t)sysconf(_SC_NPROCESSORS_ONLN);
  pthread_t th[64];
  size_t i, k;

  if (par > 64)
    par = 64;
  for (i = 0; i < n; i += par) {
    size_t m = n - i < par ? n - i : par;
    for (k = 0; k < m; k++)
      pthread_create(&th[k], NULL, build_thread, &jobs[i + k]);
    for (k = 0; k < m; k++)
      pthread_join(th[k], NULL);
  }
}

int kope_evaluator_set_base(kope_evaluator *ev, const char *source, kope_err *err)
{
  build_job j;
  int rc;

  drop_base(ev);
  if (!source)
    return KOPE_OK;
  memset(&j, 0, sizeof j);
  j.ev = ev;
  j.source = source;
  j.dir = kope_sprintf("%s/base-%d", ev->root, ev->ncand++);
  ev->base_dir = j.dir;
  build_thread(&j);
  ev->base = j.out;
  if ((rc = j.rc) != KOPE_OK) {
    *err = j.err;
    goto out;
  }
  if (!j.out.ok || j.refused) {
    rc = kope_err_set(err, KOPE_EINPUT, "the base kernel %s: %s",
                      j.refused ? "is refused by the static gate" : "does not compile",
                      j.refused ? j.why : j.out.diagnostics ? j.out.diagnostics : "");
    goto out;
  }
  if (ev->out_base.fd < 0 && ((rc = kope_region_init(&ev->out_base, "kope-out-base", err)) ||
                              (rc = kope_region_resize(&ev->out_base, ev->max_out, err))))
    goto out;
  if ((rc = start_worker(ev, &ev->basew, j.out.exe, strrchr(j.dir, '/') + 1,
                         KOPE_BUILD_CANDIDATE, &ev->out_base, err)) == KOPE_OK)
    ev->has_base = 1;
out:
  if (rc != KOPE_OK)
    drop_base(ev);
  return rc;
}

/* ---- judging one built candidate ---- */

static const char *first_error_line(const char *diag, char *buf, size_t size)
{
  const char *p = strstr(diag, "error");
  const char *start, *end;

  if (!p)
    p = diag;
  start = p;
  while (start > diag && start[-1] != '\n')
    start--;
  end = strchr(start, '\n');
  snprintf(buf, size, "%.*s", (int)(end ? end - start : (long)strlen(start)), start);
  return buf;
}

void kope_eval_worker_failure(kope_report *r, const kope_worker *w, int st, const char *when)
{
  char why[200];

  if (st == KOPE_WORKER_PROTO && w->proto_status == KOPE_CHILD_ST_FPSTATE)
    kope_report_fail(r, KOPE_INCORRECT, "the kernel changed the floating-point control state "
                     "%s (%s); it must restore it before returning", when, w->proto_msg);
  else if (st == KOPE_WORKER_DIED && !w->signo &&
           kope_sandbox_death(w->log.data, w->exit_code, why, sizeof why))
    kope_report_fail(r, KOPE_FORBIDDEN, "%s %s", why, when);
  else if (st == KOPE_WORKER_DIED && w->signo == SIGSYS)
    kope_report_fail(r, KOPE_FORBIDDEN, "sandbox: killed by SIGSYS (a refused system call) %s",
                     when);
  else if (st == KOPE_WORKER_TIMEOUT)
    kope_report_fail(r, KOPE_TIMEOUT, "no answer within the time limit %s (killed)", when);
  else if (st == KOPE_WORKER_PROTO)
    kope_report_fail(r, KOPE_CRASH, "the worker reported an error %s: %s", when, w->proto_msg);
  else if (w->signo)
    kope_report_fail(r, w->signo == SIGXCPU ? KOPE_TIMEOUT : KOPE_CRASH,
                     "killed by signal %d (SIG%s) %s", w->signo, sigabbrev_np(w->signo), when);
  else
    kope_report_fail(r, KOPE_CRASH, "exited with status %d %s", w->exit_code, when);
}

/* Map case c's buffers in w. A candidate's first MAP seals it (OpenMP
 * pool, heap perturbation, seccomp), and kope then reads from /proc which
 * layers are really active. */
static int map_case(kope_evaluator *ev, kope_worker *w, size_t c)
{
  const kope_sandbox_caps *sb = kope_sandbox_probe();
  kope_child_cmd cmd;
  int st, first = w->strict && !w->sealed;

  kope_eval_fill_cmd(ev, c, &cmd, KOPE_CMD_MAP, 0);
  if (first && sb->seccomp)
    cmd.flags |= KOPE_CMDF_SEAL;
  st = kope_worker_command(w, &cmd, ev->o.timeout_s, NULL);
  if (st == KOPE_WORKER_OK && first) {
    w->sealed = 1;
    json_decref(ev->layers);
    ev->layers = kope_sandbox_verify(w->pid, sb->landlock_abi);
  }
  return st;
}

static int call_once(kope_evaluator *ev, kope_worker *w, size_t c, double *elapsed)
{
  kope_child_cmd cmd;

  kope_eval_fill_cmd(ev, c, &cmd, KOPE_CMD_CALL, 1);
  return kope_worker_command(w, &cmd, ev->o.timeout_s, elapsed);
}

static int baseline_failed(kope_evaluator *ev, const kope_worker *w, const char *who, int st,
                           kope_err *err)
{
  return kope_err_set(err, KOPE_EINTERNAL, "the %s worker of %s failed (state %d): %s", who,
                      kope_op_name(ev->op), st, w->log.data ? w->log.data : "");
}

/* Call the candidate a second time on the same inputs (outputs poisoned
 * with another pattern): the result must be correct again, and a result
 * that is not bit-identical (its hash differs from the first's) is
 * flagged (legitimate kernels may reduce in a nondeterministic order).
 * Returns 0 or -1 (rejected). */
static int call_again(kope_evaluator *ev, kope_worker *cand, kope_region *out, size_t c,
                      uint64_t trial, kope_report *r)
{
  const kope_layout *l = &ev->lay[c];
  uint64_t first = kope_eval_hash_all(out->base, l->out_size);
  double max_err[2] = {0, 0};
  char when[360], tag[300];
  int st;

  kope_eval_poison(ev->op, &ev->binds[c], l, out->base, trial ^ 0x5eed5eedULL);
  kope_eval_case_tag(ev->op, c, tag, sizeof tag);
  snprintf(when, sizeof when, "during the second call of %s", tag);
  if ((st = call_once(ev, cand, c, NULL)) != KOPE_WORKER_OK) {
    kope_eval_worker_failure(r, cand, st, when);
    return -1;
  }
  if (kope_eval_compare(ev->op, c, 0, &ev->binds[c], l, out->base, ev->out_ref.base,
                        trial ^ 0x5eed5eedULL, r, max_err)) {
    kope_report_prefix(r, "second call on identical inputs: ");
    return -1;
  }
  if (kope_eval_hash_all(out->base, l->out_size) != first)
    kope_report_flag(r, "nondeterministic", 0, "two calls on identical inputs of %s "
                     "gave different (but correct) results", tag);
  return 0;
}

/* Seeds of case c: every seed (opts.seeds) while the case's buffers hold
 * at most KOPE_EVAL_SEED_ELEMS / seeds elements; a larger case runs on as
 * many seeds as fit in that budget, at least one (a check case) or three
 * (a timed case: its seeds 1-2 time the single calls on fresh inputs
 * that the caching review compares with). The small cases, where edge
 * cases (tails, primes, one element) catch the most bugs, keep every
 * seed and every input variant; a large case is there for its size
 * (index overflow, thread partitioning), which one seed exercises, and a
 * timed case also gets fresh contents checked in its timed rounds. With
 * fewer seeds than input variants, a small case runs on one seed per
 * variant (KOPE_EVAL_VARIANTS) all the same. */
int kope_eval_case_seeds(const kope_evaluator *ev, size_t c)
{
  int64_t n = 0, fit;
  int lo = kope_op_case_timed(ev->op, c) ? 3 : 1, s = ev->o.seeds, vary = 0;
  size_t i;

  for (i = 0; i < kope_op_nargs(ev->op); i++) {
    const kope_arg *a = kope_op_arg(ev->op, i);
    if (a->role == KOPE_ROLE_IN || a->role == KOPE_ROLE_OUT)
      n += ev->binds[c].count[i];
    vary |= a->role == KOPE_ROLE_IN && a->vary;
  }
  /* A search on one seed (kope bench's --eval-seeds 1) saw only the plain
   * variant: a gelu kernel wrong for large negative inputs (mixed scale)
   * was promoted at 66.8x and rejected only by the final re-measurement.
   * The small cases, cheap, run every variant. */
  if (vary && s < KOPE_EVAL_VARIANTS && n <= KOPE_EVAL_SMALL_ELEMS)
    return KOPE_EVAL_VARIANTS;
  fit = n > 0 ? KOPE_EVAL_SEED_ELEMS / n : s;
  if (fit < lo)
    fit = lo;
  return fit < s ? (int)fit : s;
}

/* One seed of one case. Returns 0 pass, -1 candidate rejected, else an
 * error code. */
static int check_seed(kope_evaluator *ev, kope_worker *cand, kope_region *out, size_t c,
                      int s, uint64_t seed, kope_report *r, kope_err *err)
{
  const kope_layout *l = &ev->lay[c];
  uint64_t trial = kope_rng_mix(seed, ((uint64_t)c << 16) | (uint64_t)s), h0;
  char when[360], tag[300];
  int st;

  kope_eval_fill_inputs(ev->op, &ev->binds[c], l, ev->in.base, trial, s);
  h0 = kope_eval_hash(ev->in.base, l->in_size);
  kope_eval_poison(ev->op, &ev->binds[c], l, out->base, trial);
  if ((st = call_once(ev, &ev->refw, c, NULL)) != KOPE_WORKER_OK)
    return baseline_failed(ev, &ev->refw, "reference", st, err);
  if ((st = call_once(ev, cand, c, &r->cases[c].t_fresh_s[s % 8])) != KOPE_WORKER_OK) {
    kope_eval_case_tag(ev->op, c, tag, sizeof tag);
    snprintf(when, sizeof when, "during %s, seed %d", tag, s);
    kope_eval_worker_failure(r, cand, st, when);
    return -1;
  }
  if (kope_eval_compare(ev->op, c, s, &ev->binds[c], l, out->base, ev->out_ref.base,
                        trial, r, r->cases[c].max_err))
    return -1;
  if (kope_eval_hash(ev->in.base, l->in_size) != h0) {
    kope_eval_case_tag(ev->op, c, tag, sizeof tag);
    kope_report_fail(r, KOPE_INCORRECT, "an input buffer changed during %s", tag);
    return -1;
  }
  return s == 0 && cand->strict ? call_again(ev, cand, out, c, trial, r) : 0;
}

static int check_all(kope_evaluator *ev, kope_worker *cand, kope_region *out, kope_report *r,
                     kope_err *err)
{
  size_t c;
  int s, st, rc;

  for (c = 0; c < ev->ncases; c++) {
    progress(ev, "checking case %zu/%zu", c + 1, ev->ncases);
    if ((st = map_case(ev, &ev->refw, c)) != KOPE_WORKER_OK)
      return baseline_failed(ev, &ev->refw, "reference", st, err);
    if ((st = map_case(ev, cand, c)) != KOPE_WORKER_OK) {
      kope_eval_worker_failure(r, cand, st, "while mapping buffers");
      return -1;
    }
    r->cases[c].seeds = kope_eval_case_seeds(ev, c);
    for (s = 0; s < r->cases[c].seeds; s++)
      if ((rc = check_seed(ev, cand, out, c, s, r->eval_seed, r, err)))
        return rc;
  }
  return 0;
}

static int map_all(kope_evaluator *ev, kope_worker *cand, size_t c, kope_report *r,
                   kope_err *err)
{
  int st;

  if ((st = map_case(ev, &ev->refw, c)) != KOPE_WORKER_OK)
    return baseline_failed(ev, &ev->refw, "reference", st, err);
  if (ev->has_vendor && (st = map_case(ev, &ev->venw, c)) != KOPE_WORKER_OK)
    return baseline_failed(ev, &ev->venw, "vendor", st, err);
  if (ev->has_base && (st = map_case(ev, &ev->basew, c)) != KOPE_WORKER_OK)
    return baseline_failed(ev, &ev->basew, "base", st, err);
  if ((st = map_case(ev, cand, c)) != KOPE_WORKER_OK) {
    kope_eval_worker_failure(r, cand, st, "while mapping buffers");
    return -1;
  }
  return 0;
}

/* --realtime (kope_realtime): for a timing turn only, the judge runs
 * SCHED_FIFO at the level and every thread of the workers it times one
 * step below, so it preempts them at once and nothing else on the
 * machine preempts a timed kernel; prio 0 puts them all back to
 * SCHED_OTHER. Compiling, checking, starting and reaping workers never
 * run real-time: reaping at RT livelocked the kernel with several kope
 * processes at once. A worker that cannot be raised is timed as it is. */
static void rt_turn(kope_evaluator *ev, kope_worker *cand, int prio)
{
  kope_worker *ws[4] = {cand, &ev->refw, ev->has_vendor ? &ev->venw : NULL,
                        ev->has_base ? &ev->basew : NULL};
  int i;

  if (prio == 0)
    kope_proc_rt_set(0);
  for (i = 0; i < 4; i++)
    if (ws[i] && ws[i]->up)
      kope_proc_rt_set_threads(ws[i]->pid, prio > 1 ? prio - 1 : 0);
  if (prio > 0)
    kope_proc_rt_set(prio);
}

/* Time case c in this machine's turn (turns.c): no other kope process
 * times a kernel meanwhile. */
static int time_one(kope_evaluator *ev, kope_worker *cand, size_t c, kope_report *r,
                    kope_err *err)
{
  int waited, turn, rc, rt = kope_proc_rt_level();

  if ((rc = map_all(ev, cand, c, r, err)))
    return rc;
  kope_worker_reap_pending();   /* no stopped worker's exit beside the timing */
  turn = kope_eval_turn_take(&waited);
  if (waited)
    progress(ev, "timing case %zu/%zu (after another kope process's turn)", c + 1, ev->ncases);
  if (rt > 0)
    rt_turn(ev, cand, rt);
  rc = kope_eval_time_case(ev, cand, c, &r->cases[c], r, err);
  if (rt > 0)
    rt_turn(ev, cand, 0);
  kope_eval_turn_give(turn);
  return rc;
}

static int time_all(kope_evaluator *ev, kope_worker *cand, kope_report *r, kope_err *err)
{
  size_t c;
  int rc;

  for (c = 0; c < ev->ncases; c++) {
    if (!kope_op_case_timed(ev->op, c))
      continue;   /* a check case is judged for correctness only */
    progress(ev, "timing case %zu/%zu", c + 1, ev->ncases);
    if ((rc = time_one(ev, cand, c, r, err)))
      return rc;
  }
  return 0;
}

/* CPU time the worker used beyond what the calls kope waited for can
 * only be work done after a call "returned" (threads left running). */
static void check_cpu_time(const kope_evaluator *ev, const kope_worker *w, kope_report *r)
{
  double allowed = 1.5 * ev->o.threads * w->wait_s + 1.0;

  if (w->cpu_s > allowed)
    kope_report_flag(r, "cpu_time", 1, "the worker used %.2f s of CPU time but kope waited "
                     "only %.2f s on %d threads: work continued after the calls returned",
                     w->cpu_s, w->wait_s, ev->o.threads);
}

static int judge(kope_evaluator *ev, build_job *j, kope_report *r, kope_err *err)
{
  kope_worker cand;
  double waits0 = ev->refw.wait_s + ev->venw.wait_s + ev->basew.wait_s;
  int rc;

  if ((rc = start_worker(ev, &cand, j->out.exe, strrchr(j->dir, '/') + 1,
                         KOPE_BUILD_CANDIDATE, &ev->out_cand, err)))
    return rc;
  json_decref(ev->layers);
  ev->layers = NULL;
  rc = check_all(ev, &cand, &ev->out_cand, r, err);
  if (rc == 0 && ev->o.timing)
    rc = time_all(ev, &cand, r, err);
  if (rc == 0)   /* no thread may still run once the calls returned */
    rc = kope_eval_check_idle(&cand, r);
  r->wait_s = cand.wait_s + ev->refw.wait_s + ev->venw.wait_s + ev->basew.wait_s - waits0;
  kope_worker_stop(&cand);
  r->log = kope_buf_steal(&cand.log);
  r->layers = ev->layers ? json_incref(ev->layers) : NULL;
  r->cand_cpu_s = cand.cpu_s;
  if (rc == 0)
    check_cpu_time(ev, &cand, r);
  return rc < 0 ? KOPE_OK : rc;
}

static int evaluate_job(kope_evaluator *ev, build_job *j, kope_report **out, kope_err *err)
{
  double t0 = kope_now();
  kope_report *r = kope_report_new(ev);
  char line[300];
  int rc = KOPE_OK;

  if (!r)
    return kope_err_nomem(err, "evaluation report");
  kope_sha256_hex(j->source, strlen(j->source), r->source_hash);
  r->compile_s = j->out.seconds;
  r->diagnostics = kope_strdup(j->out.diagnostics ? j->out.diagnostics : "");
  if (j->refused)
    kope_report_fail(r, KOPE_FORBIDDEN, "static gate: %s", j->why);
  else if (!j->out.ok)
    kope_report_fail(r, KOPE_COMPILE_ERROR, "%s",
                     first_error_line(r->diagnostics, line, sizeof line));
  r->gated = !ev->o.no_gate;
  if (j->out.ok && !j->refused && !ev->o.build_only)
    rc = judge(ev, j, r, err);
  r->total_s = kope_now() - t0 + j->out.seconds;
  kope_report_finish(r, ev);
  if (ev->o.build_only && r->verdict == KOPE_CORRECT)
    snprintf(r->reason, sizeof r->reason, "built (gate passed, compiled; build-only: not run)");
  if (rc != KOPE_OK) {
    kope_report_free(r);
    r = NULL;
  }
  *out = r;
  return rc;
}

int kope_evaluate_batch(kope_evaluator *ev, const char *const *sources, size_t n,
                        kope_report **reports, kope_err *err)
{
  build_job *jobs = calloc(n ? n : 1, sizeof *jobs);
  size_t i;
  int rc = KOPE_OK;

  for (i = 0; i < n; i++) {
    jobs[i].ev = ev;
    jobs[i].source = sources[i];
    jobs[i].dir = kope_sprintf("%s/cand-%d", ev->root, ev->ncand++);
    reports[i] = NULL;
  }
  progress(ev, "compiling %zu candidate%s", n, n == 1 ? "" : "s");
  build_all(ev, jobs, n);
  for (i = 0; i < n; i++) {
    if (rc == KOPE_OK && jobs[i].rc != KOPE_OK) {
      *err = jobs[i].err;
      rc = jobs[i].rc;
    }
    if (rc == KOPE_OK)
      rc = evaluate_job(ev, &jobs[i], &reports[i], err);
    if (!ev->o.keep_workdir)
      kope_rmtree(jobs[i].dir);
    kope_build_out_release(&jobs[i].out);
    free(jobs[i].dir);
  }
  free(jobs);
  return rc;
}

kope_report *kope_evaluate(kope_evaluator *ev, const char *source, kope_err *err)
{
  kope_report *r = NULL;

  kope_evaluate_batch(ev, &source, 1, &r, err);
  return r;
}

kope_report *kope_evaluate_vendor(kope_evaluator *ev, kope_err *err)
{
  kope_report *r;
  double t0 = kope_now();
  int rc;

  if (!ev->has_vendor) {
    kope_err_set(err, KOPE_EINPUT, "operator %s has no vendor baseline", kope_op_name(ev->op));
    return NULL;
  }
  if (!(r = kope_report_new(ev))) {
    kope_err_nomem(err, "evaluation report");
    return NULL;
  }
  rc = check_all(ev, &ev->venw, &ev->out_ven, r, err);
  r->total_s = kope_now() - t0;
  kope_report_finish(r, ev);
  if (rc > 0) {
    kope_report_free(r);
    return NULL;
  }
  return r;
}
