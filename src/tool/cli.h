/*
 * Helpers shared by the subcommands: printing JSON documents, a progress
 * line on a terminal, reading a kernel file, checked numbers in options,
 * and the options, option loop and stop flag shared by `kope optimize`
 * and `kope bench`.
 */
#ifndef KOPE_TOOL_CLI_H
#define KOPE_TOOL_CLI_H

#include <getopt.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <jansson.h>
#include "kope/core.h"
#include "kope/policy.h"

/* Print j (stolen) to stdout as one document followed by a newline. */
void kope_cli_print_json(json_t *j);
/* Progress callback: rewrites one status line on stderr when it is a
 * terminal; silent otherwise. ctx is the line prefix (a string). */
void kope_cli_progress(void *ctx, const char *line);
/* Clear the progress line, if any. */
void kope_cli_progress_done(void);
/* Print an error to stderr as "kope CMD: msg" and return its code. */
int kope_cli_fail(const char *cmd, const kope_err *err);
/* "kope CMD: out of memory (what)" on stderr; returns KOPE_ENOMEM (exit 3). */
int kope_cli_nomem(const char *cmd, const char *what);

/* Numbers in options. Each parses all of v (no trailing text, no overflow)
 * into a value in [lo, hi]; on bad input it prints
 *   kope CMD: --OPT: 'V' is not an integer from LO to HI
 * (or "a number from LO to HI") to stderr and returns KOPE_EINPUT (exit
 * 2); otherwise it stores the value and returns KOPE_OK. Integers are
 * decimal, or hexadecimal with 0x. */
int kope_cli_int(const char *cmd, const char *opt, const char *v, long long lo, long long hi,
                 int *out);
int kope_cli_long(const char *cmd, const char *opt, const char *v, long long lo,
                  long long hi, long *out);
int kope_cli_i64(const char *cmd, const char *opt, const char *v, long long lo,
                 long long hi, int64_t *out);
/* Any unsigned 64-bit value (seeds). */
int kope_cli_u64(const char *cmd, const char *opt, const char *v, uint64_t *out);
int kope_cli_double(const char *cmd, const char *opt, const char *v, double lo, double hi,
                    double *out);

/* The options `kope optimize` and `kope bench` share, parsed in one place:
 * their getopt codes (put KOPE_CLI_SHARED_OPTS in the option table) and
 * where each command keeps the values. */
enum {
  KOPE_CLI_TARGET = 0x100, KOPE_CLI_OPS_DIR, KOPE_CLI_DB, KOPE_CLI_THREADS,
  KOPE_CLI_BUDGET_EVALS, KOPE_CLI_EVAL_SEEDS, KOPE_CLI_CASE_BUDGET, KOPE_CLI_SEED,
  KOPE_CLI_START, KOPE_CLI_LLM_PROVIDER, KOPE_CLI_LLM_URL, KOPE_CLI_LLM_MODEL,
  KOPE_CLI_LLM_CMD, KOPE_CLI_LLM_REPLAY, KOPE_CLI_REALTIME
};
#define KOPE_CLI_SHARED_OPTS                                                            \
  {"target", 1, 0, KOPE_CLI_TARGET}, {"ops-dir", 1, 0, KOPE_CLI_OPS_DIR},               \
  {"db", 1, 0, KOPE_CLI_DB}, {"threads", 1, 0, KOPE_CLI_THREADS},                       \
  {"budget-evals", 1, 0, KOPE_CLI_BUDGET_EVALS}, {"eval-seeds", 1, 0, KOPE_CLI_EVAL_SEEDS}, \
  {"case-budget", 1, 0, KOPE_CLI_CASE_BUDGET}, {"seed", 1, 0, KOPE_CLI_SEED},           \
  {"start", 1, 0, KOPE_CLI_START}, {"llm-provider", 1, 0, KOPE_CLI_LLM_PROVIDER},       \
  {"llm-url", 1, 0, KOPE_CLI_LLM_URL}, {"llm-model", 1, 0, KOPE_CLI_LLM_MODEL},         \
  {"llm-cmd", 1, 0, KOPE_CLI_LLM_CMD}, {"llm-replay", 1, 0, KOPE_CLI_LLM_REPLAY},     \
  {"realtime", 0, 0, KOPE_CLI_REALTIME}

typedef struct kope_cli_shared {
  const char **target, **ops_dir, **db;
  int *threads, *eval_seeds, *start_plain;
  int64_t *budget_evals;
  double *case_budget_s;
  uint64_t *seed;
  kope_policy_opts *pol;      /* the llm-* strings */
} kope_cli_shared;

/* --realtime: run kope's judge SCHED_FIFO (kope_realtime at
 * KOPE_REALTIME_PRIO) from now on. KOPE_OK, or KOPE_EENV with "kope CMD:
 * --realtime: why" printed. */
int kope_cli_realtime(const char *cmd);

/* Parse shared option ch with value v for subcommand cmd. KOPE_OK,
 * KOPE_EINPUT (message printed), or -2 when ch is not a shared option. */
int kope_cli_shared_opt(const kope_cli_shared *s, const char *cmd, int ch, const char *v);

/* The stop flag of optimize and bench: installs handlers by which SIGINT
 * and SIGTERM set it (the session stops after the current step; a second
 * signal exits at once with 130) and returns it for the options' stop. */
volatile sig_atomic_t *kope_cli_stop_flag(void);

/* The option loop of optimize and bench: getopt_long over argv with opts
 * (short options: only -h), each option handed to opt(arg, ch, optarg),
 * which returns KOPE_OK, an error status (message printed) or -2 for an
 * option it does not know. -h prints usage to stdout and returns -1; an
 * unknown option prints usage to stderr and returns KOPE_EINPUT. On
 * KOPE_OK, optind is the first operand. */
int kope_cli_getopt(int argc, char **argv, const struct option *opts,
                    int (*opt)(void *arg, int ch, const char *v), void *arg,
                    void (*usage)(FILE *f));

#endif
