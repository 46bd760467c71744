/*
 * kope_bench_run: the benchmark protocol (docs/bench.md). Validates the
 * configurations, prepares one private store per (configuration, repeat),
 * runs the sessions interleaved (for each repeat, for each operator in the
 * recorded order, every configuration in turn; memory carries from one
 * operator to the next within a store), then re-measures every final
 * kernel side by side (final.c) and computes the metrics (metrics.c).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kope/agent.h"
#include "kope/op.h"
#include "kope/target.h"
#include "bench/bench_int.h"

typedef struct bench {
  const kope_bench_opts *o;
  const kope_bench_config **cfg;   /* the configurations that run */
  size_t ncfg;
  json_t *doc, *runs;
  double t0;
} bench;

static void say(const bench *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void say(const bench *b, const char *fmt, ...)
{
  kope_buf line;
  va_list ap;

  if (!b->o->progress)
    return;
  kope_buf_init(&line, 4096);
  kope_buf_printf(&line, "[%.0f s] ", kope_now() - b->t0);
  va_start(ap, fmt);
  kope_buf_vprintf(&line, fmt, ap);
  va_end(ap);
  b->o->progress(b->o->progress_ctx, line.data);
  kope_buf_release(&line);
}

/* ---- validation ---- */

static int llm_available(const kope_bench_opts *o, kope_err *why)
{
  kope_policy *p = kope_policy_new("llm", &o->pol, why);

  kope_policy_free(p);
  return p != NULL;
}

static int check_config(bench *b, const kope_bench_config *c, kope_err *err)
{
  const kope_bench_opts *o = b->o;
  kope_err why;

  if ((c->store == KOPE_BENCH_STORE_SOURCE || c->store == KOPE_BENCH_STORE_BOTH) &&
      !o->source_memory)
    return kope_err_set(err, KOPE_EINPUT, "configuration %s needs --source-memory FILE "
                        "(from `kope memory export --format json` on another target)", c->name);
  if ((c->store == KOPE_BENCH_STORE_TARGET || c->store == KOPE_BENCH_STORE_BOTH) && !o->db)
    return kope_err_set(err, KOPE_EINPUT, "configuration %s needs --db (memory built on this "
                        "target)", c->name);
  kope_err_clear(&why);
  if (!strncmp(c->policy, "llm", 3) && !llm_available(o, &why)) {
    if (o->pol.llm_provider && !strcmp(o->pol.llm_provider, "replay"))
      return kope_err_set(err, KOPE_EINPUT, "%s", why.msg);   /* a bad recording */
    json_array_append_new(json_object_get(b->doc, "skipped"),
                          json_pack("{s:s, s:s}", "config", c->name, "reason", why.msg));
    say(b, "skipping %s: no LLM configured (%s)", c->name, why.msg);
    return KOPE_OK;
  }
  b->cfg[b->ncfg++] = c;
  return KOPE_OK;
}

static int check_opts(bench *b, kope_err *err)
{
  const kope_bench_opts *o = b->o;
  size_t i, j;
  int rc;

  if (!o->nops || !o->nconfigs || !o->workdir || o->repeats < 1 || o->budget_evals < 0)
    return kope_err_set(err, KOPE_EINPUT, "bench: need operators, configurations, a work "
                        "directory, repeats >= 1 and a budget >= 0");
  for (i = 0; i < o->nconfigs; i++) {
    const kope_bench_config *c = kope_bench_config_find(o->configs[i]);
    if (!c)
      return kope_err_set(err, KOPE_EINPUT, "unknown configuration '%s' (see kope bench "
                          "--help)", o->configs[i]);
    for (j = 0; j < i; j++)
      if (!strcmp(o->configs[j], o->configs[i]))
        return kope_err_set(err, KOPE_EINPUT, "configuration %s given twice", c->name);
    if ((rc = check_config(b, c, err)) != KOPE_OK)
      return rc;
  }
  if (!b->ncfg)
    return kope_err_set(err, KOPE_EINPUT, "no configuration can run here (see \"skipped\")");
  return KOPE_OK;
}

/* ---- the document ---- */

/* The vendor timed on this target (kope_target_vendor); none when the
 * target could not be opened. */
static const char *vendor_name(const kope_op *op, const kope_target *t)
{
  const kope_op_vendor *v = t ? kope_target_vendor(t, op) : NULL;

  return v ? v->name : NULL;
}

static json_t *op_json(const kope_op *op, const kope_target *t)
{
  json_t *cases = json_array();
  size_t c;

  for (c = 0; c < kope_op_ncases(op); c++) {
    char *l = kope_op_case_label(op, c);
    json_array_append_new(cases, json_string(l));
    free(l);
  }
  return json_pack("{s:s, s:s, s:i, s:I, s:o, s:s?}", "name", kope_op_name(op), "category",
                   kope_op_category(op), "level", kope_op_level(op), "ncases",
                   (json_int_t)kope_op_ncases(op), "cases", cases, "vendor",
                   vendor_name(op, t));
}

static int add_operators(bench *b, kope_err *err)
{
  json_t *arr = json_array();
  kope_target *t;
  kope_err te;
  size_t i;
  int rc = KOPE_OK;

  json_object_set_new(b->doc, "operators", arr);
  kope_err_clear(&te);
  t = kope_target_open(b->o->target ? b->o->target : "cpu", &te);
  for (i = 0; i < b->o->nops; i++) {
    kope_op *op = kope_op_load(b->o->ops[i], b->o->ops_dir, err);
    if (!op) {
      rc = err->code;
      break;
    }
    json_array_append_new(arr, op_json(op, t));
    kope_op_free(op);
  }
  kope_target_free(t);
  return rc;
}

static json_t *settings_json(const bench *b)
{
  const kope_bench_opts *o = b->o;
  kope_bench_eval se = kope_bench_search_eval(o), fe = kope_bench_final_eval(o);
  json_t *s = json_object(), *ops = json_array(), *cfgs = json_array();
  size_t i;

  for (i = 0; i < o->nops; i++)
    json_array_append_new(ops, json_string(o->ops[i]));
  for (i = 0; i < b->ncfg; i++)
    json_array_append_new(cfgs, json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "name",
        b->cfg[i]->name, "policy", b->cfg[i]->policy, "memory",
        b->cfg[i]->memory == KOPE_MEMORY_OFF ? "off" : "on", "context",
        b->cfg[i]->context == KOPE_CTX_PASSIVE ? "passive" : "active", "store",
        (const char *[]){"start", "empty", "source", "target", "both"}[b->cfg[i]->store],
        "what", b->cfg[i]->what));
  json_object_set_new(s, "order", ops);
  json_object_set_new(s, "configs", cfgs);
  json_object_set_new(s, "budget_evals", json_integer(o->budget_evals));
  json_object_set_new(s, "start", json_string(o->start_plain ? "plain" : "seed"));
  json_object_set_new(s, "repeats", json_integer(o->repeats));
  json_object_set_new(s, "seed", json_integer((json_int_t)o->seed));
  json_object_set_new(s, "db", o->db ? json_string(o->db) : json_null());
  json_object_set_new(s, "source_memory", o->source_memory ? json_string(o->source_memory) : json_null());
  json_object_set_new(s, "ops_dir", o->ops_dir ? json_string(o->ops_dir) : json_null());
  json_object_set_new(s, "workdir", json_string(o->workdir));
  json_object_set_new(s, "search_eval", json_pack("{s:i, s:f, s:i, s:b}", "seeds", se.seeds,
      "case_budget_s", se.case_budget_s, "min_rounds", se.min_rounds, "vendor",
      o->search_vendor != 0));
  json_object_set_new(s, "final_eval", json_pack("{s:i, s:f}", "seeds", fe.seeds,
      "case_budget_s", fe.case_budget_s));
  return s;
}

/* ---- stores ---- */

static char *run_dir(const bench *b, const kope_bench_config *c, int rep)
{
  return kope_sprintf("%s/%s/r%d", b->o->workdir, c->name, rep);
}

static int prepare_store(const bench *b, const kope_bench_config *c, int rep, kope_err *err)
{
  char *dir = run_dir(b, c, rep), *db = kope_path_join(dir, "memory.db");
  const char *src = NULL, *imp = NULL;
  int rc;

  if (!db) {
    free(dir);
    return kope_err_nomem(err, "run directory");
  }
  if (c->store == KOPE_BENCH_STORE_START || c->store == KOPE_BENCH_STORE_TARGET ||
      c->store == KOPE_BENCH_STORE_BOTH)
    src = b->o->db;
  if (c->store == KOPE_BENCH_STORE_SOURCE || c->store == KOPE_BENCH_STORE_BOTH)
    imp = b->o->source_memory;
  rc = kope_mkdirs(dir, err);
  if (rc == KOPE_OK)
    rc = kope_bench_store_prepare(db, src, imp, err);
  free(dir);
  free(db);
  return rc;
}

static int write_order(const bench *b, kope_err *err)
{
  kope_buf t;
  char *path = kope_path_join(b->o->workdir, "order.txt");
  size_t i;
  int rc;

  kope_buf_init(&t, 0);
  for (i = 0; i < b->o->nops; i++)
    kope_buf_printf(&t, "%s\n", b->o->ops[i]);
  rc = kope_file_write_atomic(path, t.data, t.len, err);
  kope_buf_release(&t);
  free(path);
  return rc;
}

/* ---- sessions ---- */

static void opt_opts(const bench *b, const kope_bench_config *c, int rep, const char *op,
                     const char *db, const char *out, kope_opt_opts *oo)
{
  const kope_bench_opts *o = b->o;
  kope_bench_eval se = kope_bench_search_eval(o);

  kope_opt_opts_init(oo);
  oo->op = op;
  oo->ops_dir = o->ops_dir;
  oo->target = o->target;
  oo->policy = c->policy;
  oo->pol = o->pol;
  oo->pol.seed = o->seed + (uint64_t)rep;
  oo->seed = o->seed + (uint64_t)rep;
  oo->db_path = db;
  oo->memory = c->memory;
  oo->context = c->context;
  oo->budget_evals = o->budget_evals;
  oo->out = out;
  oo->eval_seeds = se.seeds;
  oo->no_vendor = !o->search_vendor;
  oo->case_budget_s = se.case_budget_s;
  oo->min_rounds = se.min_rounds;
  oo->threads = o->threads;
  oo->start_plain = o->start_plain;
  oo->stop = o->stop;
}

static json_t *result_json(const kope_opt_result *r)
{
  json_t *j = kope_opt_result_json(r);
  long sum = 0;
  int i;

  for (i = 0; i < r->nctx; i++)
    sum += r->ctx_tokens[i];
  json_object_set_new(j, "context_tokens_sum", json_integer(sum));
  json_object_del(j, "context_tokens");
  return j;
}

static void add_session_graph(json_t *run, const char *db, const kope_opt_result *r)
{
  json_t *forest, *curve;
  kope_err e;

  kope_err_clear(&e);
  if (kope_bench_session_read(db, r->session_id, r->best_case_id, &forest, &curve, &e) != KOPE_OK) {
    json_object_set_new(run, "graph_error", json_string(e.msg));
    return;
  }
  json_object_set_new(run, "forest", forest);
  json_object_set_new(run, "curve", curve);
}

static void run_one(bench *b, const kope_bench_config *c, int rep, const char *op)
{
  char *dir = run_dir(b, c, rep), *db = kope_path_join(dir, "memory.db");
  char *out = dir ? kope_sprintf("%s/%s.c", dir, op) : NULL;
  kope_opt_result *r = calloc(1, sizeof *r);
  kope_opt_opts oo;
  json_t *run;
  kope_err e;
  int rc;

  if (!db || !out || !r) {   /* counted as a failed run, like any other error */
    say(b, "r%d %s %s: error: out of memory", rep, op, c->name);
    json_array_append_new(b->runs, json_pack("{s:s, s:i, s:s, s:b, s:s}", "config", c->name,
                                             "repeat", rep, "op", op, "passed", 0, "error",
                                             "out of memory"));
    goto done;
  }
  opt_opts(b, c, rep, op, db, out, &oo);
  kope_err_clear(&e);
  rc = kope_optimize(&oo, r, &e);
  /* a session that failed after finding a correct kernel (the provider
   * stopped answering) counts with that kernel, and says why it ended */
  run = rc == KOPE_OK || (r->session_id && r->passed) ? result_json(r) : json_object();
  json_object_set_new(run, "config", json_string(c->name));
  json_object_set_new(run, "repeat", json_integer(rep));
  json_object_set_new(run, "seed", json_integer((json_int_t)oo.seed));
  json_object_set_new(run, "op", json_string(op));
  json_object_set_new(run, "kernel", json_string(out));
  if (rc != KOPE_OK && r->session_id && r->passed) {
    json_object_set_new(run, "error", json_string(e.msg));
    add_session_graph(run, db, r);
    say(b, "r%d %s %s: stopped early (%s); its best kernel is kept: %.3fx vs reference, "
        "%lld evaluations", rep, op, c->name, e.msg, r->best_ref, (long long)r->evals);
  } else if (rc != KOPE_OK) {
    json_object_set_new(run, "passed", json_false());
    json_object_set_new(run, "error", json_string(e.msg));
    say(b, "r%d %s %s: error: %s", rep, op, c->name, e.msg);
  } else {
    add_session_graph(run, db, r);
    say(b, "r%d %s %s: %s, best %.3fx vs reference, %lld evaluations", rep, op, c->name,
        r->passed ? "passed" : "no correct kernel", r->best_ref, (long long)r->evals);
  }
  json_array_append_new(b->runs, run);
done:
  free(r);
  free(out);
  free(db);
  free(dir);
}

static void run_sessions(bench *b)
{
  const kope_bench_opts *o = b->o;
  int rep;
  size_t i, k;

  for (rep = 0; rep < o->repeats; rep++)
    for (i = 0; i < o->nops; i++)
      for (k = 0; k < b->ncfg; k++) {
        if (o->stop && *o->stop) {
          json_object_set_new(b->doc, "interrupted", json_true());
          return;
        }
        run_one(b, b->cfg[k], rep, o->ops[i]);
      }
}

/* ---- final re-measurement ---- */

/* The seed kernel of the bench's target (seed.cl for opencl, seed.cu for
 * cuda, the spec's seed for cpu). Caller frees. */
static char *target_seed(const bench *b, const kope_op *op)
{
  kope_err e;
  kope_target *t;
  char *path;

  kope_err_clear(&e);
  t = kope_target_open(b->o->target ? b->o->target : "cpu", &e);
  path = kope_op_seed_path_for(op, t ? kope_target_source_ext(t) : NULL);
  kope_target_free(t);
  return path;
}

/* The kernel of the tables' "seed" row, from seed_path (the target's
 * seed, which this takes over): without --start plain that path itself;
 * with it, the plain starting kernel every session began from, written to
 * WORKDIR/start/OP.EXT. Returns the path to judge (caller frees), NULL
 * with e set on error. */
static char *start_kernel(const bench *b, const char *opname, char *seed_path, kope_err *e)
{
  const char *ext = strrchr(seed_path, '.');
  char *src, *plain = NULL, *dir = NULL, *path = NULL;

  if (!b->o->start_plain)
    return seed_path;
  if (!(src = kope_file_read(seed_path, NULL, e)) ||
      !(plain = kope_knobs_plain(src, seed_path, e)))
    goto out;
  dir = kope_path_join(b->o->workdir, "start");
  path = kope_sprintf("%s/%s%s", dir, opname, ext ? ext : ".c");
  if (kope_mkdirs(dir, e) != KOPE_OK ||
      kope_file_write_atomic(path, plain, strlen(plain), e) != KOPE_OK) {
    free(path);
    path = NULL;
  }
out:
  free(src);
  free(plain);
  free(dir);
  free(seed_path);
  return path;
}

static json_t *final_kernels(const bench *b, const char *op, const char *seed_path, int *base)
{
  json_t *k = json_array(), *run;
  size_t i;

  *base = -1;
  json_array_append_new(k, json_pack("{s:s, s:i, s:s}", "config", "seed", "repeat", 0, "path",
                                     seed_path));
  json_array_foreach(b->runs, i, run) {
    if (strcmp(kope_bj_str(run, "op"), op) || !kope_bj_bool(run, "passed"))
      continue;
    if (*base < 0 && !strcmp(kope_bj_str(run, "config"), b->cfg[0]->name) &&
        kope_bj_num(run, "repeat", 0) == 0)
      *base = (int)json_array_size(k);
    json_array_append_new(k, json_pack("{s:s, s:I, s:s}", "config", kope_bj_str(run, "config"),
                                       "repeat", (json_int_t)kope_bj_num(run, "repeat", 0),
                                       "path", kope_bj_str(run, "kernel")));
  }
  return k;
}

static void final_one(bench *b, const char *opname, json_t *finals)
{
  kope_err e;
  kope_op *op;
  json_t *ks, *entry = json_pack("{s:s, s:[]}", "op", opname, "kernels");
  char *seed;
  int base;

  kope_err_clear(&e);
  if (!(op = kope_op_load(opname, b->o->ops_dir, &e))) {
    json_object_set_new(entry, "error", json_string(e.msg));
    json_array_append_new(finals, entry);
    return;
  }
  if (!(seed = start_kernel(b, opname, target_seed(b, op), &e))) {
    json_object_set_new(entry, "error", json_string(e.msg));
    json_array_append_new(finals, entry);
    kope_op_free(op);
    return;
  }
  ks = final_kernels(b, opname, seed, &base);
  free(seed);
  say(b, "final re-measurement: %s, %zu kernels side by side", opname, json_array_size(ks));
  if (kope_bench_final_op(b->o, opname, ks, base, json_object_get(entry, "kernels"), &e) != KOPE_OK) {
    json_object_set_new(entry, "error", json_string(e.msg));
    say(b, "final re-measurement of %s failed: %s", opname, e.msg);
  }
  json_decref(ks);
  kope_op_free(op);
  json_array_append_new(finals, entry);
}

static void final_all(bench *b)
{
  json_t *finals = json_array();
  size_t i;

  json_object_set_new(b->doc, "final", finals);
  for (i = 0; i < b->o->nops; i++)
    final_one(b, b->o->ops[i], finals);
}

/* ---- entry point ---- */

static int setup(bench *b, kope_err *err)
{
  size_t k;
  int rep, rc;

  b->doc = json_pack("{s:s, s:i, s:[]}", "format", KOPE_BENCH_FORMAT, "schema",
                     KOPE_BENCH_SCHEMA, "skipped");
  if ((rc = check_opts(b, err)) != KOPE_OK || (rc = add_operators(b, err)) != KOPE_OK)
    return rc;
  if ((rc = kope_mkdirs(b->o->workdir, err)) != KOPE_OK || (rc = write_order(b, err)) != KOPE_OK)
    return rc;
  json_object_set_new(b->doc, "settings", settings_json(b));
  json_object_set_new(b->doc, "environment", kope_bench_environment(b->o));
  for (rep = 0; rep < b->o->repeats; rep++)
    for (k = 0; k < b->ncfg; k++)
      if ((rc = prepare_store(b, b->cfg[k], rep, err)) != KOPE_OK)
        return rc;
  b->runs = json_array();
  json_object_set_new(b->doc, "runs", b->runs);
  return KOPE_OK;
}

int kope_bench_run(const kope_bench_opts *o, json_t **results, kope_err *err)
{
  bench b;
  int rc;

  memset(&b, 0, sizeof b);
  b.o = o;
  b.t0 = kope_now();
  b.cfg = calloc(o->nconfigs ? o->nconfigs : 1, sizeof *b.cfg);
  *results = NULL;
  if (!b.cfg)
    return kope_err_nomem(err, "bench configurations");
  if ((rc = setup(&b, err)) != KOPE_OK)
    goto out;
  run_sessions(&b);
  final_all(&b);
  json_object_set_new(b.doc, "seconds", json_real(kope_now() - b.t0));
  if ((rc = kope_bench_metrics(b.doc, err)) != KOPE_OK)
    goto out;
  *results = b.doc;
  b.doc = NULL;
out:
  json_decref(b.doc);
  free(b.cfg);
  return rc;
}
