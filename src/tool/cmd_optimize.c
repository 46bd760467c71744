/*
 * `kope optimize OP`: run (or resume) one optimization session with the
 * chosen policy and print a live progress line and a summary (or, with
 * --json, one summary document). --dry-run prints the context the first
 * step would send, with per-tier token counts. The first SIGINT stops the
 * loop after the evaluation in progress, with everything recorded; a
 * second one exits at once (the store stays consistent: every write is a
 * transaction).
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "kope/agent.h"
#include "kope/llm.h"
#include "cli.h"
#include "cmds.h"

static void usage(FILE *f)
{
  fprintf(f,
    "usage: kope optimize OP [options]\n"
    "       kope optimize --resume SESSION [options]\n\n"
    "Improve operator OP's kernel on this machine: each step retrieves experience,\n"
    "rebuilds the context, lets the policy propose a candidate, evaluates it\n"
    "(compile, check, time side by side with the incumbent) and records the attempt.\n"
    "The incumbent changes only for a correct candidate that is significantly faster\n"
    "(geomean >= 1 + min gain, sign test p < 0.05) and stays so when re-measured.\n"
    "At the end, up to 3 unpromoted correct candidates are re-measured against the\n"
    "incumbent (evaluations outside the budget; none when there is no such candidate)\n"
    "and one that passes the same rule becomes the session's best kernel.\n\n"
    "options:\n"
    "  --target T            target (default cpu): cpu | opencl\n"
    "  --device D            opencl: device index or name substring (default first)\n"
    "  --policy P            tuner (default) | random | llm | llm+tuner\n"
    "  --budget-evals N      stop after N candidate evaluations (default 12)\n"
    "  --budget-tokens N     stop once N LLM tokens are used\n"
    "  --budget-seconds S    stop after S seconds\n"
    "  --memory M            on (default) | off (no experience shown; attempts still\n"
    "                        recorded) | readonly (use experience, record nothing)\n"
    "  --context C           active (default, ACMI) | passive (whole history appended)\n"
    "  --db PATH             experience store (default .kope/kope.db)\n"
    "  --out FILE            where to write the best kernel\n"
    "                        (default .kope/runs/OP/SESSION/best.c)\n"
    "  --from FILE           start from FILE instead of the operator's seed\n"
    "  --start S             seed (default: the starting kernel as written) | plain\n"
    "                        (every knob at the first of its listed values; the\n"
    "                        search then has to find the good settings itself)\n"
    "  --resume SESSION      continue a stopped session (budgets count anew)\n"
    "  --seed S              policy random seed\n"
    "  --batch N             candidates per step, compiled in parallel (default 1)\n"
    "  --min-gain G          required speedup over the incumbent (default 0.05)\n"
    "  --eval-seeds N        input seeds per case (default 5)\n"
    "  --threads N           OpenMP threads (default all)\n"
    "  --realtime            time kernels at real-time priority (SCHED_FIFO; root or\n"
    "                        CAP_SYS_NICE): other processes no longer disturb the timing\n"
    "  --case-budget S       timing seconds per case (default 0.15)\n"
    "  --rounds N            minimum timing rounds per case (default 7, at least 3)\n"
    "  --no-vendor           do not time the vendor baseline (faster; speedups vs\n"
    "                        vendor are then 0)\n"
    "  --window W            context window W in tokens (default 32768)\n"
    "  --gen-tokens G        generation allowance G (default 4096)\n"
    "  --warm-quota Q        warm-tier quota Q_w (default 6000)\n"
    "  --cold-quota Q        cold-tier quota Q_c (default 3000)\n"
    "  --ops-dir DIR         operator directory (default: $KOPE_OPS or ./ops)\n"
    "  --dry-run             print the context of the first step and exit\n"
    "  --json                print the summary (or dry-run context) as JSON\n"
    "  -h, --help            this help\n\n"
    "LLM options (--policy llm | llm+tuner; see docs/llm.md):\n"
    "  --llm-provider P      openai (default; also vLLM, llama.cpp, Ollama) | anthropic |\n"
    "                        command | replay (--llm-replay FILE)\n"
    "  --llm-url URL         base URL (openai: https://api.openai.com/v1; anthropic:\n"
    "                        https://api.anthropic.com)\n"
    "  --llm-model NAME      model; also sets W and G for known models unless --window /\n"
    "                        --gen-tokens are given\n"
    "  --llm-cmd CMD         command provider: request JSON on stdin, reply on stdout\n"
    "  --llm-replay FILE     replay provider: answer call i with reply i of a recorded\n"
    "                        session (.jsonl or .jsonl.gz; the model is the header's)\n"
    "  --llm-temperature T   sampling temperature (default: the provider's)\n"
    "  --llm-max-tokens-field F  max_tokens (default) | max_completion_tokens\n"
    "  --no-llm-stream       one JSON reply instead of SSE streaming\n"
    "  --llm-json            ask for a JSON object reply (response_format json_schema)\n"
    "  --llm-max-reply-bytes N  response size cap (default 4 MiB)\n"
    "  --llm-connect-timeout S (default 10)  --llm-stall-timeout S (default 120)\n"
    "  --llm-cmd-timeout S   command provider time limit (default 600)\n"
    "  --llm-retries N (default 4)  --llm-backoff S first retry wait (default 1)\n"
    "  --llm-reflect         a short LLM call writes each Journal interpretation\n"
    "  --llm-reflect-off-budget  reflection tokens do not count against --budget-tokens\n"
    "  --llm-tuner-steps N   llm+tuner: tuner moves between LLM steps (default 2)\n"
    "  key from KOPE_LLM_API_KEY (or OPENAI_API_KEY / ANTHROPIC_API_KEY)\n\n"
    "exit: 0 a correct kernel exists, 1 none found, 2 bad input, 3 environment\n");
}

typedef struct opt_args {
  kope_opt_opts o;
  int json, dry_run;
  int window_set, gen_set;
  char *replay_model;    /* the recording's model when --llm-model is not given (owned) */
} opt_args;

static int parse_mode(const char *v, const char *a, const char *b, const char *c, int *out)
{
  if (!strcmp(v, a))
    *out = 0;
  else if (!strcmp(v, b))
    *out = 1;
  else if (c && !strcmp(v, c))
    *out = 2;
  else
    return -1;
  return 0;
}

static int bad(const char *what)
{
  fprintf(stderr, "kope optimize: %s\n", what);
  return KOPE_EINPUT;
}

#define OPT "optimize"

/* The LLM settings only optimize has. */
static int parse_llm(kope_policy_opts *p, int ch, const char *v)
{
  switch (ch) {
  case 5: return kope_cli_double(OPT, "llm-temperature", v, 0, 10, &p->temperature);
  case 6: p->max_tokens_field = v; break;
  case 7: p->stream = 0; break;
  case 8: p->reflect = 1; break;
  case 9: return kope_cli_double(OPT, "llm-connect-timeout", v, 0, 86400, &p->connect_timeout_s);
  case 10: return kope_cli_double(OPT, "llm-stall-timeout", v, 0, 86400, &p->stall_timeout_s);
  case 11: return kope_cli_double(OPT, "llm-cmd-timeout", v, 0, 86400, &p->cmd_timeout_s);
  case 12: return kope_cli_int(OPT, "llm-retries", v, 0, 100, &p->retries);
  case 13: return kope_cli_double(OPT, "llm-backoff", v, 0, 3600, &p->backoff_s);
  case 14: p->reflect = p->reflect_off_budget = 1; break;
  case 15: return kope_cli_int(OPT, "llm-tuner-steps", v, 0, 1000, &p->tuner_steps);
  case 16: p->json_reply = 1; break;
  case 17: return kope_cli_long(OPT, "llm-max-reply-bytes", v, 0, 1L << 31, &p->max_reply_bytes);
  default: return -2;
  }
  return KOPE_OK;
}

/* The options only optimize has (the shared ones: cli.c). */
static int parse_own(opt_args *a, int ch, const char *v)
{
  kope_opt_opts *o = &a->o;
  kope_policy_opts *p = &o->pol;

  switch (ch) {
  case 20: o->device = v; break;
  case 'p': o->policy = v; break;
  case 'K': return kope_cli_i64(OPT, "budget-tokens", v, 0, INT64_MAX, &o->budget_tokens);
  case 'S': return kope_cli_double(OPT, "budget-seconds", v, 0, 1e9, &o->budget_seconds);
  case 'm':
    if (parse_mode(v, "on", "off", "readonly", &o->memory))
      return bad("--memory must be on, off or readonly");
    break;
  case 'c':
    if (parse_mode(v, "active", "passive", NULL, &o->context))
      return bad("--context must be active or passive");
    break;
  case 'o': o->out = v; break;
  case 'f': o->from = v; break;
  case 'r': return kope_cli_i64(OPT, "resume", v, 1, INT64_MAX, &o->resume);
  case 'b': return kope_cli_int(OPT, "batch", v, 1, 8, &o->batch);
  case 'g': return kope_cli_double(OPT, "min-gain", v, 0, 100, &o->min_gain);
  case 'N': o->no_vendor = 1; break;
  case 'Q': return kope_cli_int(OPT, "rounds", v, 0, 100000, &o->min_rounds);
  case 'W': a->window_set = 1; return kope_cli_long(OPT, "window", v, 1, 100000000, &o->budget.window);
  case 'G':
    a->gen_set = 1;
    if (kope_cli_long(OPT, "gen-tokens", v, 1, 100000000, &o->budget.generation))
      return KOPE_EINPUT;
    p->max_tokens = o->budget.generation;
    break;
  case 'w': return kope_cli_long(OPT, "warm-quota", v, 0, 100000000, &o->budget.warm_quota);
  case 'C': return kope_cli_long(OPT, "cold-quota", v, 0, 100000000, &o->budget.cold_quota);
  case 'n': a->dry_run = 1; break;
  case 'j': a->json = 1; break;
  default: return parse_llm(p, ch, v);
  }
  return KOPE_OK;
}

static int parse_opt(void *arg, int ch, const char *v)
{
  opt_args *a = arg;
  kope_opt_opts *o = &a->o;
  kope_cli_shared sh = {&o->target, &o->ops_dir, &o->db_path, &o->threads, &o->eval_seeds,
                        &o->start_plain, &o->budget_evals, &o->case_budget_s, &o->seed,
                        &o->pol};
  int rc = kope_cli_shared_opt(&sh, OPT, ch, v);

  if (rc == KOPE_OK && ch == KOPE_CLI_SEED)
    o->pol.seed = o->seed;
  return rc == -2 ? parse_own(a, ch, v) : rc;
}

/* The replay provider: the recording's model names the session (unless
 * --llm-model is given) and sets W and G; a recording made for another
 * operator is replayed with a warning. A missing or corrupt file is bad
 * input. */
static int replay_header(opt_args *a)
{
  char *model = NULL, *op = NULL;
  kope_err err;

  if (!a->o.pol.llm_provider || strcmp(a->o.pol.llm_provider, "replay") ||
      strncmp(a->o.policy, "llm", 3))
    return KOPE_OK;
  if (!a->o.pol.llm_replay)
    return bad("--llm-provider replay needs --llm-replay FILE");
  kope_err_clear(&err);
  if (kope_llm_replay_info(a->o.pol.llm_replay, &model, &op, &err) != KOPE_OK)
    return kope_cli_fail("optimize", &err);
  if (a->o.op && *op && strcmp(op, a->o.op))
    fprintf(stderr, "kope optimize: warning: %s was recorded for operator %s, replayed for %s\n",
            a->o.pol.llm_replay, op, a->o.op);
  if (!a->o.pol.llm_model)
    a->o.pol.llm_model = a->replay_model = model;
  else
    free(model);
  free(op);
  return KOPE_OK;
}

/* W and G from the model's known limits unless given; G is also the
 * reply allowance the provider is asked for. */
static void model_limits(opt_args *a)
{
  long w = 0, g = 0;

  if (strncmp(a->o.policy, "llm", 3))
    return;
  kope_llm_model_limits(a->o.pol.llm_model, &w, &g);
  if (!a->window_set && w > 0)
    a->o.budget.window = w;
  if (!a->gen_set && g > 0)
    a->o.budget.generation = g;
  if (a->o.pol.max_tokens <= 0)
    a->o.pol.max_tokens = a->o.budget.generation;
}

static int parse(int argc, char **argv, opt_args *a)
{
  static const struct option opts[] = {
    KOPE_CLI_SHARED_OPTS,
    {"device", 1, 0, 20}, {"policy", 1, 0, 'p'},
    {"budget-tokens", 1, 0, 'K'}, {"budget-seconds", 1, 0, 'S'}, {"memory", 1, 0, 'm'},
    {"context", 1, 0, 'c'}, {"out", 1, 0, 'o'}, {"from", 1, 0, 'f'},
    {"resume", 1, 0, 'r'}, {"batch", 1, 0, 'b'}, {"min-gain", 1, 0, 'g'},
    {"no-vendor", 0, 0, 'N'}, {"rounds", 1, 0, 'Q'},
    {"window", 1, 0, 'W'}, {"gen-tokens", 1, 0, 'G'}, {"warm-quota", 1, 0, 'w'},
    {"cold-quota", 1, 0, 'C'}, {"dry-run", 0, 0, 'n'},
    {"json", 0, 0, 'j'}, {"llm-temperature", 1, 0, 5},
    {"llm-max-tokens-field", 1, 0, 6}, {"no-llm-stream", 0, 0, 7}, {"llm-reflect", 0, 0, 8},
    {"llm-connect-timeout", 1, 0, 9}, {"llm-stall-timeout", 1, 0, 10},
    {"llm-cmd-timeout", 1, 0, 11}, {"llm-retries", 1, 0, 12}, {"llm-backoff", 1, 0, 13},
    {"llm-reflect-off-budget", 0, 0, 14}, {"llm-tuner-steps", 1, 0, 15},
    {"llm-json", 0, 0, 16}, {"llm-max-reply-bytes", 1, 0, 17},
    {"help", 0, 0, 'h'}, {0, 0, 0, 0}
  };
  int rc;

  kope_opt_opts_init(&a->o);
  a->o.budget_evals = 12;
  if ((rc = kope_cli_getopt(argc, argv, opts, parse_opt, a, usage)) != KOPE_OK)
    return rc;
  if (argc - optind > 1)
    return bad("give one operator (see --help)");
  if (argc - optind == 1)
    a->o.op = argv[optind];
  if (!a->o.op && !a->o.resume)
    return bad("need an operator or --resume SESSION (see --help)");
  if (a->o.budget_evals < 0 || a->o.budget_tokens < 0 || a->o.budget_seconds < 0)
    return bad("budgets must be >= 0");
  if ((rc = replay_header(a)) != KOPE_OK)
    return rc;
  model_limits(a);
  return KOPE_OK;
}

/* ---- progress and summary ---- */

static void on_progress(void *ctx, const kope_opt_progress *p)
{
  char line[300];

  (void)ctx;
  snprintf(line, sizeof line, "step %lld, evals %lld%s%lld | best %.2fx ref, %.2fx vendor | "
           "last %s%s | tokens %lld | %.0f s | %s",
           (long long)p->step, (long long)p->evals, p->budget_evals ? "/" : "",
           (long long)p->budget_evals, p->best_ref, p->best_vendor,
           p->last_verdict ? p->last_verdict : "-", p->last_promoted ? " (promoted)" : "",
           (long long)p->tokens, p->seconds, p->phase ? p->phase : "");
  kope_cli_progress((void *)"kope optimize: ", line);
}

static void print_summary(const kope_opt_result *r)
{
  printf("operator %s on %s, policy %s, session %lld\n", r->op, r->target, r->policy,
         (long long)r->session_id);
  printf("  seed:  %.3fx vs reference, %.3fx vs vendor\n", r->seed_ref, r->seed_vendor);
  if (r->passed)
    printf("  best:  %.3fx vs reference, %.3fx vs vendor, roofline fraction %.3f (case %lld)\n",
           r->best_ref, r->best_vendor, r->best_roofline, (long long)r->best_case_id);
  else
    printf("  best:  no correct kernel\n");
  printf("  %lld evaluations (+%lld re-measurements), %lld promotions, %lld tokens, %.1f s; "
         "stopped: %s\n", (long long)r->evals, (long long)r->remeasures,
         (long long)r->promotions, (long long)(r->tokens_in + r->tokens_out), r->seconds,
         r->stop_reason);
  if (r->passed)
    printf("  best kernel: %s\n", r->best_path);
}

static int dry_run(opt_args *a)
{
  json_t *j = NULL, *t;
  kope_err err;

  kope_err_clear(&err);
  if (kope_optimize_dry_run(&a->o, &j, &err) != KOPE_OK)
    return kope_cli_fail("optimize", &err);
  if (a->json) {
    kope_cli_print_json(j);
    return KOPE_OK;
  }
  t = json_object_get(json_object_get(j, "context"), "tokens");
  printf("=== system prompt (%lld tokens) ===\n%s\n=== user prompt (%lld tokens) ===\n%s\n",
         (long long)json_integer_value(json_object_get(j, "system_tokens")),
         json_string_value(json_object_get(j, "system")),
         (long long)json_integer_value(json_object_get(j, "user_tokens")),
         json_string_value(json_object_get(j, "user")));
  printf("=== tokens per tier: hot %lld, warm %lld, cold %lld, total %lld (B_k %lld) ===\n",
         (long long)json_integer_value(json_object_get(t, "hot")),
         (long long)json_integer_value(json_object_get(t, "warm")),
         (long long)json_integer_value(json_object_get(t, "cold")),
         (long long)json_integer_value(json_object_get(t, "total")),
         (long long)json_integer_value(json_object_get(
             json_object_get(json_object_get(j, "context"), "budget"), "knowledge")));
  json_decref(j);
  return KOPE_OK;
}

static int optimize_main(int argc, char **argv, opt_args *ap)
{
  opt_args a;
  kope_opt_result res;
  kope_err err;
  int rc;

  rc = parse(argc, argv, ap);
  a = *ap;
  if (rc != KOPE_OK)
    return rc < 0 ? KOPE_OK : rc;
  if (a.dry_run)
    return dry_run(&a);
  a.o.stop = kope_cli_stop_flag();
  a.o.progress = on_progress;
  kope_err_clear(&err);
  rc = kope_optimize(&a.o, &res, &err);
  kope_cli_progress_done();
  if (rc != KOPE_OK)
    return kope_cli_fail("optimize", &err);
  if (a.json)
    kope_cli_print_json(kope_opt_result_json(&res));
  else
    print_summary(&res);
  return res.passed ? KOPE_OK : KOPE_EREJECT;
}

int kope_cmd_optimize(int argc, char **argv)
{
  opt_args a;
  int rc;

  memset(&a, 0, sizeof a);
  rc = optimize_main(argc, argv, &a);
  free(a.replay_model);
  return rc;
}
