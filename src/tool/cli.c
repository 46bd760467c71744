/*
 * Shared CLI helpers (see cli.h): JSON output, the progress line, errors,
 * the stop flag and option loop of optimize and bench, and checked
 * numbers in options (a bad number is a usage error, exit 2,
 * naming the option, the value and what was expected).
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"

static int progress_shown;
static volatile sig_atomic_t stop_requested;

static void on_sigint(int sig)
{
  (void)sig;
  if (stop_requested)
    _exit(130);
  stop_requested = 1;
}


void kope_cli_print_json(json_t *j)
{
  char *s = json_dumps(j, JSON_INDENT(2) | JSON_REAL_PRECISION(6));

  if (s) {
    fputs(s, stdout);
    fputc('\n', stdout);
  }
  free(s);
  json_decref(j);
}

void kope_cli_progress(void *ctx, const char *line)
{
  if (!isatty(2))
    return;
  fprintf(stderr, "\r\033[K%s%s", ctx ? (const char *)ctx : "", line);
  fflush(stderr);
  progress_shown = 1;
}

void kope_cli_progress_done(void)
{
  if (progress_shown) {
    fprintf(stderr, "\r\033[K");
    fflush(stderr);
  }
  progress_shown = 0;
}

int kope_cli_fail(const char *cmd, const kope_err *err)
{
  kope_cli_progress_done();
  fprintf(stderr, "kope %s: %s\n", cmd, err->msg[0] ? err->msg : "failed");
  return err->code ? err->code : 1;
}

int kope_cli_nomem(const char *cmd, const char *what)
{
  kope_err e;

  kope_err_clear(&e);
  kope_err_nomem(&e, what);
  return kope_cli_fail(cmd, &e);
}

/* ---- numbers in options ---- */

static int bad_number(const char *cmd, const char *opt, const char *v, const char *what,
                      const char *lo, const char *hi)
{
  fprintf(stderr, "kope %s: --%s: '%s' is not %s from %s to %s\n", cmd, opt, v, what, lo, hi);
  return KOPE_EINPUT;
}

static int parse_ll(const char *cmd, const char *opt, const char *v, long long lo,
                    long long hi, long long *out)
{
  char *end, slo[32], shi[32];
  long long x;

  errno = 0;
  x = strtoll(v, &end, v[0] == '0' && (v[1] == 'x' || v[1] == 'X') ? 16 : 10);
  if (!*v || *end || errno || x < lo || x > hi) {
    snprintf(slo, sizeof slo, "%lld", lo);
    snprintf(shi, sizeof shi, "%lld", hi);
    return bad_number(cmd, opt, v, "an integer", slo, shi);
  }
  *out = x;
  return KOPE_OK;
}

int kope_cli_int(const char *cmd, const char *opt, const char *v, long long lo, long long hi,
                 int *out)
{
  long long x;
  int rc = parse_ll(cmd, opt, v, lo < INT_MIN ? INT_MIN : lo, hi > INT_MAX ? INT_MAX : hi, &x);

  if (rc == KOPE_OK)
    *out = (int)x;
  return rc;
}

int kope_cli_long(const char *cmd, const char *opt, const char *v, long long lo,
                  long long hi, long *out)
{
  long long x;
  int rc = parse_ll(cmd, opt, v, lo < LONG_MIN ? LONG_MIN : lo, hi > LONG_MAX ? LONG_MAX : hi,
                    &x);

  if (rc == KOPE_OK)
    *out = (long)x;
  return rc;
}

int kope_cli_i64(const char *cmd, const char *opt, const char *v, long long lo,
                 long long hi, int64_t *out)
{
  long long x;
  int rc = parse_ll(cmd, opt, v, lo, hi, &x);

  if (rc == KOPE_OK)
    *out = (int64_t)x;
  return rc;
}

int kope_cli_u64(const char *cmd, const char *opt, const char *v, uint64_t *out)
{
  char *end;
  unsigned long long x;

  errno = 0;
  x = strtoull(v, &end, 0);
  if (!*v || *end || errno || *v == '-')
    return bad_number(cmd, opt, v, "an integer", "0", "18446744073709551615");
  *out = (uint64_t)x;
  return KOPE_OK;
}

int kope_cli_double(const char *cmd, const char *opt, const char *v, double lo, double hi,
                    double *out)
{
  char *end, slo[32], shi[32];
  double x;

  errno = 0;
  x = strtod(v, &end);
  if (!*v || *end || errno || !isfinite(x) || x < lo || x > hi) {
    snprintf(slo, sizeof slo, "%g", lo);
    snprintf(shi, sizeof shi, "%g", hi);
    return bad_number(cmd, opt, v, "a number", slo, shi);
  }
  *out = x;
  return KOPE_OK;
}

/* ---- options shared by optimize and bench ---- */

int kope_cli_realtime(const char *cmd)
{
  kope_err err;

  kope_err_clear(&err);
  if (kope_realtime(KOPE_REALTIME_PRIO, &err) == KOPE_OK)
    return KOPE_OK;
  fprintf(stderr, "kope %s: --realtime: %s\n", cmd, err.msg);
  return err.code;
}

int kope_cli_shared_opt(const kope_cli_shared *s, const char *cmd, int ch, const char *v)
{
  switch (ch) {
  case KOPE_CLI_TARGET: *s->target = v; return KOPE_OK;
  case KOPE_CLI_OPS_DIR: *s->ops_dir = v; return KOPE_OK;
  case KOPE_CLI_DB: *s->db = v; return KOPE_OK;
  case KOPE_CLI_THREADS: return kope_cli_int(cmd, "threads", v, 0, 4096, s->threads);
  case KOPE_CLI_BUDGET_EVALS:
    return kope_cli_i64(cmd, "budget-evals", v, 0, 1000000000, s->budget_evals);
  case KOPE_CLI_EVAL_SEEDS: return kope_cli_int(cmd, "eval-seeds", v, 0, 1000, s->eval_seeds);
  case KOPE_CLI_CASE_BUDGET:
    return kope_cli_double(cmd, "case-budget", v, 0, 3600, s->case_budget_s);
  case KOPE_CLI_SEED: return kope_cli_u64(cmd, "seed", v, s->seed);
  case KOPE_CLI_START:
    if (strcmp(v, "seed") && strcmp(v, "plain")) {
      fprintf(stderr, "kope %s: --start must be seed or plain\n", cmd);
      return KOPE_EINPUT;
    }
    *s->start_plain = !strcmp(v, "plain");
    return KOPE_OK;
  case KOPE_CLI_LLM_PROVIDER: s->pol->llm_provider = v; return KOPE_OK;
  case KOPE_CLI_LLM_URL: s->pol->llm_url = v; return KOPE_OK;
  case KOPE_CLI_LLM_MODEL: s->pol->llm_model = v; return KOPE_OK;
  case KOPE_CLI_LLM_CMD: s->pol->llm_cmd = v; return KOPE_OK;
  case KOPE_CLI_LLM_REPLAY: s->pol->llm_replay = v; return KOPE_OK;
  case KOPE_CLI_REALTIME: return kope_cli_realtime(cmd);
  default: return -2;
  }
}

volatile sig_atomic_t *kope_cli_stop_flag(void)
{
  struct sigaction sa;

  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_sigint;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  return &stop_requested;
}

int kope_cli_getopt(int argc, char **argv, const struct option *opts,
                    int (*opt)(void *arg, int ch, const char *v), void *arg,
                    void (*usage)(FILE *f))
{
  int ch, rc;

  optind = 1;
  while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
    if (ch == 'h') {
      usage(stdout);
      return -1;
    }
    if ((rc = opt(arg, ch, optarg)) == -2) {
      usage(stderr);
      return KOPE_EINPUT;
    }
    if (rc != KOPE_OK)
      return rc;
  }
  return KOPE_OK;
}
