/*
 * `kope bench`: run configurations of the agent over operators in a
 * fixed, recorded order, re-measure every final kernel side by side and
 * write one results document (docs/bench.md). The first SIGINT stops
 * after the session in progress and still re-measures what was run; a
 * second one exits at once.
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "kope/bench.h"
#include "kope/op.h"
#include "cli.h"
#include "cmds.h"

static void usage(FILE *f)
{
  size_t i;
  const kope_bench_config *c;

  fprintf(f,
    "usage: kope bench [--ops LIST | --suite DIR | --level N] [--order FILE] [options]\n"
    "                  --out results.json\n\n"
    "Run configurations of the agent over operators in one fixed, recorded order.\n"
    "Every (configuration, repeat) starts from its own copy of --db and carries its\n"
    "memory from operator to operator; at the end the final kernels of all runs are\n"
    "re-measured side by side, and metrics are computed (docs/bench.md).\n\n"
    "operators (default: every operator in the operator directory):\n"
    "  --ops LIST            comma-separated operator names, run in that order\n"
    "  --suite DIR           every operator in DIR (also the operator directory)\n"
    "  --level N             the operators of level N\n"
    "  --order FILE          run in the order of FILE (one name a line; written by\n"
    "                        every bench to WORKDIR/order.txt)\n"
    "options:\n"
    "  --configs LIST        comma-separated (default tuner+memory,tuner-nomemory,random)\n"
    "  --budget-evals N      candidate evaluations per session (default 12)\n"
    "  --start S             seed (default) | plain: every session starts from the seed\n"
    "                        with each knob at the first of its listed values (the\n"
    "                        tables' seed row is then that kernel)\n"
    "  --repeats R           rerun everything R times with seeds S, S+1, ... (default 1)\n"
    "  --seed S              policy seed of the first repeat (default 1)\n"
    "  --db PATH             starting memory (copied per run, never modified)\n"
    "  --source-memory FILE  memory from another target (`kope memory export\n"
    "                        --format json`), for the source and both settings\n"
    "  --out FILE            results document (required)\n"
    "  --workdir DIR         per-run stores and kernels (default FILE.d)\n"
    "  --eval-seeds N        input seeds per case during the search (default 1; the\n"
    "                        timing rounds check fresh inputs once more)\n"
    "  --case-budget S       timing seconds per case during the search (default 0.03)\n"
    "  --eval-rounds N       minimum timing rounds per case during the search (default 5)\n"
    "  --search-vendor       time the vendor baseline during the search too (default:\n"
    "                        only in the final re-measurement)\n"
    "  --final-seeds N       input seeds per case when re-measuring (default 5)\n"
    "  --final-case-budget S timing seconds per case when re-measuring (default 0.1)\n"
    "  --target T            target (default cpu)\n"
    "  --threads N           OpenMP threads (default all)\n"
    "  --realtime            time kernels at real-time priority (SCHED_FIFO; root or\n"
    "                        CAP_SYS_NICE): other processes no longer disturb the timing\n"
    "  --ops-dir DIR         operator directory (default: $KOPE_OPS or ./ops)\n"
    "  --json                print the metrics as one JSON document\n"
    "  -h, --help            this help\n"
    "LLM options (llm configurations): --llm-provider, --llm-url, --llm-model, --llm-cmd,\n"
    "  --llm-replay as for kope optimize; without an LLM those configurations are\n"
    "  skipped. With --llm-replay every llm session replays the recording from its\n"
    "  first reply.\n\n"
    "configurations:\n");
  for (i = 0; (c = kope_bench_config_at(i)); i++)
    fprintf(f, "  %-16s %s\n", c->name, c->what);
  fprintf(f, "\nexit: 0 the bench ran, 2 bad input, 3 environment\n");
}

typedef struct bench_args {
  kope_bench_opts o;
  const char *ops_list, *suite, *order, *out, *configs;
  int level, json;
  char **names;          /* operator names (owned) */
  size_t nnames, capnames;
  char **cfgs;           /* configuration names (owned) */
  size_t ncfgs, capcfgs;
  char *workdir;
} bench_args;

static int bad(const char *what)
{
  fprintf(stderr, "kope bench: %s\n", what);
  return KOPE_EINPUT;
}

#define CMD "bench"

/* The options only bench has (the shared ones: cli.c). */
static int parse_own(bench_args *a, int ch, const char *v)
{
  kope_bench_opts *o = &a->o;

  switch (ch) {
  case 'O': a->ops_list = v; break;
  case 'U': a->suite = v; break;
  case 'L': return kope_cli_int(CMD, "level", v, 1, 1000, &a->level);
  case 'r': a->order = v; break;
  case 'c': a->configs = v; break;
  case 'R': return kope_cli_int(CMD, "repeats", v, 1, 1000, &o->repeats);
  case 'm': o->source_memory = v; break;
  case 'o': a->out = v; break;
  case 'w': o->workdir = v; break;
  case 'V': o->search_vendor = 1; break;
  case 'K': return kope_cli_int(CMD, "eval-rounds", v, 0, 100000, &o->eval_rounds);
  case 'f': return kope_cli_int(CMD, "final-seeds", v, 0, 1000, &o->final_seeds);
  case 'F': return kope_cli_double(CMD, "final-case-budget", v, 0, 3600, &o->final_case_budget_s);
  case 'j': a->json = 1; break;
  default: return -2;
  }
  return KOPE_OK;
}

static int parse_opt(void *arg, int ch, const char *v)
{
  bench_args *a = arg;
  kope_bench_opts *o = &a->o;
  kope_cli_shared sh = {&o->target, &o->ops_dir, &o->db, &o->threads, &o->eval_seeds,
                        &o->start_plain, &o->budget_evals, &o->case_budget_s, &o->seed,
                        &o->pol};
  int rc = kope_cli_shared_opt(&sh, CMD, ch, v);

  return rc == -2 ? parse_own(a, ch, v) : rc;
}

static int parse(int argc, char **argv, bench_args *a)
{
  static const struct option opts[] = {
    KOPE_CLI_SHARED_OPTS,
    {"ops", 1, 0, 'O'}, {"suite", 1, 0, 'U'}, {"level", 1, 0, 'L'}, {"order", 1, 0, 'r'},
    {"configs", 1, 0, 'c'}, {"repeats", 1, 0, 'R'},
    {"source-memory", 1, 0, 'm'}, {"out", 1, 0, 'o'}, {"workdir", 1, 0, 'w'},
    {"search-vendor", 0, 0, 'V'}, {"eval-rounds", 1, 0, 'K'},
    {"final-seeds", 1, 0, 'f'}, {"final-case-budget", 1, 0, 'F'}, {"json", 0, 0, 'j'},
    {"help", 0, 0, 'h'}, {0, 0, 0, 0}
  };
  int rc;

  kope_bench_opts_init(&a->o);
  if ((rc = kope_cli_getopt(argc, argv, opts, parse_opt, a, usage)) != KOPE_OK)
    return rc;
  if (optind < argc)
    return bad("unexpected argument (operators go in --ops a,b,c)");
  if (!a->out)
    return bad("need --out results.json (see --help)");
  if (a->o.repeats < 1 || a->o.budget_evals < 0)
    return bad("--repeats must be >= 1 and --budget-evals >= 0");
  if (!!a->ops_list + !!a->suite + !!a->level > 1)
    return bad("give one of --ops, --suite and --level");
  if (a->suite)
    a->o.ops_dir = a->suite;
  return KOPE_OK;
}

/* ---- lists ---- */

/* Append a copy of s[0..len) to *v (*n entries, capacity *cap); out of
 * memory ends the command with a message and exit 3. */
static void push(char ***v, size_t *n, size_t *cap, const char *s, size_t len)
{
  if (kope_grow(v, cap, *n + 1, sizeof **v) != KOPE_OK || !((*v)[*n] = kope_strndup(s, len)))
    exit(kope_cli_nomem(CMD, "list of names"));
  (*n)++;
}

static void split(const char *s, const char *seps, char ***v, size_t *n, size_t *cap)
{
  while (s && *s) {
    size_t len = strcspn(s, seps);
    const char *e = s + len;
    while (len && (*s == ' ' || *s == '\t'))
      s++, len--;
    while (len && (s[len - 1] == ' ' || s[len - 1] == '\t' || s[len - 1] == '\r'))
      len--;
    if (len && *s != '#')
      push(v, n, cap, s, len);
    s = *e ? e + 1 : e;
  }
}

static int keep_level(bench_args *a, kope_err *err)
{
  size_t i, k = 0;

  for (i = 0; i < a->nnames; i++) {
    kope_op *op = kope_op_load(a->names[i], a->o.ops_dir, err);
    if (!op) {
      /* a suite under construction: say so and go on without it */
      fprintf(stderr, "kope bench: skipping %s: %s\n", a->names[i], err->msg);
      free(a->names[i]);
      kope_err_clear(err);
      continue;
    }
    if (kope_op_level(op) == a->level)
      a->names[k++] = a->names[i];
    else
      free(a->names[i]);
    kope_op_free(op);
  }
  a->nnames = k;
  return KOPE_OK;
}

static int select_ops(bench_args *a, kope_err *err)
{
  char *dir = a->o.ops_dir ? kope_strdup(a->o.ops_dir) : kope_ops_dir(), *text;
  int rc = KOPE_OK;

  if (!dir)
    return kope_err_nomem(err, "operators directory");
  if (a->order) {
    if (!(text = kope_file_read(a->order, NULL, err)))
      rc = KOPE_EINPUT;
    else
      split(text, "\n", &a->names, &a->nnames, &a->capnames);
    free(text);
  } else if (a->ops_list) {
    split(a->ops_list, ",", &a->names, &a->nnames, &a->capnames);
  } else {
    rc = kope_ops_list(dir, &a->names, &a->nnames, err);
  }
  if (rc == KOPE_OK && a->level)
    rc = keep_level(a, err);
  if (rc == KOPE_OK && !a->nnames)
    rc = kope_err_set(err, KOPE_EINPUT, "no operators selected (in %s)", dir);
  free(dir);
  return rc;
}

/* ---- output ---- */

static void on_progress(void *ctx, const char *line)
{
  (void)ctx;
  fprintf(stderr, "kope bench: %s\n", line);
}

static void print_summary(const json_t *doc, const char *out)
{
  json_t *m = json_object_get(json_object_get(doc, "metrics"), "configs"), *c;
  const char *name;

  printf("%-16s %10s %8s %10s %10s %7s %7s %6s\n", "configuration", "pass rate", "solved",
         "vs ref", "vs vendor", "fast_1", "score", "evals");
  json_object_foreach(m, name, c)
    printf("%-16s %9.1f%% %4g/%-3g %9.3fx %9.3fx %7.2f %7.1f %6lld\n", name,
           100 * json_number_value(json_object_get(c, "pass_rate")),
           json_number_value(json_object_get(c, "ops_solved")),
           json_number_value(json_object_get(c, "ops_total")),
           json_number_value(json_object_get(c, "geomean_speedup_ref")),
           json_number_value(json_object_get(c, "geomean_speedup_vendor")),
           json_number_value(json_object_get(json_object_get(c, "fast_p"), "1.0")),
           json_number_value(json_object_get(c, "score")),
           (long long)json_integer_value(json_object_get(c, "evaluations")));
  printf("results: %s (kope report %s --out report.html)\n", out, out);
}

static int write_results(const json_t *doc, const char *out, kope_err *err)
{
  char *text = json_dumps(doc, JSON_INDENT(1) | JSON_REAL_PRECISION(6));
  int rc;

  if (!text)
    return kope_err_set(err, KOPE_EINTERNAL, "cannot serialize the results");
  rc = kope_file_write_atomic(out, text, strlen(text), err);
  free(text);
  return rc;
}

static int run(bench_args *a)
{
  json_t *doc = NULL;
  kope_err err;
  int rc;

  kope_err_clear(&err);
  if ((rc = select_ops(a, &err)) != KOPE_OK)
    return kope_cli_fail("bench", &err);
  split(a->configs ? a->configs : "tuner+memory,tuner-nomemory,random", ",", &a->cfgs, &a->ncfgs,
        &a->capcfgs);
  a->o.ops = (const char *const *)a->names;
  a->o.nops = a->nnames;
  a->o.configs = (const char *const *)a->cfgs;
  a->o.nconfigs = a->ncfgs;
  if (!a->o.workdir)
    a->o.workdir = a->workdir = kope_sprintf("%s.d", a->out);
  if (!a->o.workdir)
    return kope_cli_nomem(CMD, "work directory");
  a->o.stop = kope_cli_stop_flag();
  a->o.progress = on_progress;
  if ((rc = kope_bench_run(&a->o, &doc, &err)) != KOPE_OK)
    return kope_cli_fail("bench", &err);
  if ((rc = write_results(doc, a->out, &err)) != KOPE_OK) {
    json_decref(doc);
    return kope_cli_fail("bench", &err);
  }
  if (a->json)
    kope_cli_print_json(json_pack("{s:s, s:O, s:O}", "out", a->out, "metrics",
                                  json_object_get(doc, "metrics"), "paired",
                                  json_object_get(doc, "paired")));
  else
    print_summary(doc, a->out);
  json_decref(doc);
  return KOPE_OK;
}

int kope_cmd_bench(int argc, char **argv)
{
  bench_args a;
  int rc;

  memset(&a, 0, sizeof a);
  if ((rc = parse(argc, argv, &a)) == KOPE_OK)
    rc = run(&a);
  else if (rc < 0)
    rc = KOPE_OK;
  kope_strv_free(a.names, a.nnames);
  kope_strv_free(a.cfgs, a.ncfgs);
  free(a.workdir);
  return rc;
}
