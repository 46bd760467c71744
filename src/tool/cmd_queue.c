/*
 * `kope queue add|list`: the work queue of a PostgreSQL store. add queues
 * one job per operator (extra `kope optimize` arguments after "--" travel
 * with the job); list shows every job and the progress (done / running /
 * pending / failed), as text or one JSON document.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kope/eval.h"
#include "kope/queue.h"
#include "cli.h"
#include "cmds.h"

static void usage(FILE *f)
{
  fprintf(f,
    "usage: kope queue add OP... --target T --policy P --budget-evals N [--db URL]\n"
    "                  [-- OPTIMIZE-ARGS...]\n"
    "       kope queue list [--db URL] [--json]\n\n"
    "The work queue of a PostgreSQL store (--db postgresql://user@host/dbname or\n"
    "$KOPE_DB; an SQLite store has none). add queues one job per operator, with this\n"
    "kope's harness version; arguments after -- are passed to `kope optimize` by the\n"
    "worker (e.g. -- --eval-seeds 1 --case-budget 0.02). `kope worker` runs them.\n\n"
    "options:\n"
    "  --target T         target of the jobs (default cpu)\n"
    "  --policy P         policy (default tuner)\n"
    "  --budget-evals N   candidate evaluations per job (default 12)\n"
    "  --db URL           the store (default $KOPE_DB)\n"
    "  --json             add: the new job ids; list: every job and the counts\n"
    "  -h, --help         this help\n\n"
    "exit: 0 ok, 2 usage or not a PostgreSQL store, 3 database unreachable\n");
}

static char *options_json(int argc, char **argv)
{
  json_t *a = json_array();
  char *s;
  int i;

  for (i = 0; i < argc; i++)
    json_array_append_new(a, json_string(argv[i]));
  s = json_dumps(a, JSON_COMPACT);
  json_decref(a);
  return s;
}

static int queue_add(kope_queue *q, int nops, char **ops, const char *target,
                     const char *policy, int64_t evals, const char *opts, int json)
{
  json_t *ids = json_array();
  kope_err err = {0};
  int i, rc = KOPE_OK;

  for (i = 0; i < nops && rc == KOPE_OK; i++) {
    int64_t id = 0;
    rc = kope_queue_add(q, ops[i], target, policy, evals, opts, KOPE_HARNESS_VERSION, &id,
                        &err);
    if (rc == KOPE_OK && !json)
      printf("queued job %lld: %s on %s, %s, %lld evaluations\n", (long long)id, ops[i],
             target, policy, (long long)evals);
    json_array_append_new(ids, json_integer(id));
  }
  if (rc != KOPE_OK) {
    json_decref(ids);
    return kope_cli_fail("queue", &err);
  }
  if (json)
    kope_cli_print_json(json_pack("{s:o}", "jobs", ids));
  else
    json_decref(ids);
  return 0;
}

static json_t *job_json(const kope_job *j)
{
  return json_pack("{s:I, s:s, s:s, s:s, s:I, s:s, s:s, s:s, s:s, s:i, s:I, s:i, s:b, s:f, "
                   "s:s, s:f}", "id", (json_int_t)j->id, "op", j->op, "target", j->target,
                   "policy", j->policy, "budget_evals", (json_int_t)j->budget_evals, "harness",
                   j->harness, "state", j->state, "worker", j->worker, "device", j->device,
                   "claims", j->claims, "session", (json_int_t)j->session_id, "exit_code",
                   j->exit_code, "passed", j->passed, "best_speedup", j->best_speedup,
                   "stop_reason", j->stop_reason, "age_s", j->age_s);
}

static int queue_list(kope_queue *q, int json)
{
  kope_job *jobs = NULL;
  size_t n = 0, i;
  long cnt[4] = {0};
  static const char *const states[4] = {"pending", "running", "done", "failed"};
  kope_err err = {0};
  json_t *arr;
  int k;

  if (kope_queue_list(q, &jobs, &n, &err) != KOPE_OK)
    return kope_cli_fail("queue", &err);
  arr = json_array();
  for (i = 0; i < n; i++) {
    for (k = 0; k < 4; k++)
      cnt[k] += !strcmp(jobs[i].state, states[k]);
    if (json)
      json_array_append_new(arr, job_json(&jobs[i]));
    else
      printf("%5lld  %-8s %-16s %-6s %-10s evals %-4lld claims %d  %s  session %lld\n",
             (long long)jobs[i].id, jobs[i].state, jobs[i].op, jobs[i].target, jobs[i].policy,
             (long long)jobs[i].budget_evals, jobs[i].claims, jobs[i].worker,
             (long long)jobs[i].session_id);
  }
  if (json)
    kope_cli_print_json(json_pack("{s:o, s:{s:I, s:i, s:i, s:i, s:i}}", "jobs", arr, "progress",
                                  "total", (json_int_t)n, "pending", (int)cnt[0], "running",
                                  (int)cnt[1], "done", (int)cnt[2], "failed", (int)cnt[3]));
  else {
    json_decref(arr);
    printf("%zu jobs: %ld done, %ld running, %ld pending, %ld failed\n", n, cnt[2], cnt[1],
           cnt[0], cnt[3]);
  }
  kope_jobs_free(jobs, n);
  return 0;
}

int kope_cmd_queue(int argc, char **argv)
{
  static const struct option lo[] = {
    {"target", 1, 0, 't'}, {"policy", 1, 0, 'p'}, {"budget-evals", 1, 0, 'b'},
    {"db", 1, 0, 'd'}, {"json", 0, 0, 'j'}, {"help", 0, 0, 'h'}, {0, 0, 0, 0}};
  const char *target = "cpu", *policy = "tuner", *db = NULL, *sub;
  int64_t evals = 12;
  int json = 0, c, rc, nops, dash;
  char *opts = NULL;
  kope_queue *q;
  kope_err err = {0};

  if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
    usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  sub = argv[1];
  for (dash = 2; dash < argc && strcmp(argv[dash], "--"); dash++)
    ;
  optind = 1;
  while ((c = getopt_long(dash - 1, argv + 1, "h", lo, NULL)) != -1) {
    switch (c) {
    case 't': target = optarg; break;
    case 'p': policy = optarg; break;
    case 'b':
      if (kope_cli_i64("queue", "budget-evals", optarg, 1, 1000000000, &evals))
        return 2;
      break;
    case 'd': db = optarg; break;
    case 'j': json = 1; break;
    case 'h': usage(stdout); return 0;
    default: usage(stderr); return 2;
    }
  }
  nops = dash - 1 - optind;
  if (strcmp(sub, "add") && strcmp(sub, "list")) {
    fprintf(stderr, "kope queue: unknown subcommand '%s' (add, list)\n", sub);
    return 2;
  }
  if (!strcmp(sub, "add") && (nops < 1 || evals < 1)) {
    fprintf(stderr, "kope queue add: give at least one operator and --budget-evals >= 1\n");
    return 2;
  }
  if (!(q = kope_queue_open(db, &err)))
    return kope_cli_fail("queue", &err);
  if (!strcmp(sub, "add")) {
    opts = options_json(dash < argc ? argc - dash - 1 : 0, argv + dash + 1);
    rc = queue_add(q, nops, argv + 1 + optind, target, policy, evals, opts, json);
  } else {
    rc = queue_list(q, json);
  }
  free(opts);
  kope_queue_close(q);
  return rc;
}
