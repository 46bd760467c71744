/*
 * kope — entry point of the CLI. Dispatches `kope SUBCOMMAND [options]` to
 * the subcommand files in this folder; they use only the public API.
 */
#include <stdio.h>
#include <string.h>
#include "kope/core.h"
#include "cmds.h"

struct subcmd {
  const char *name;
  int (*fn)(int, char **);
  const char *summary;
};

static const struct subcmd subcmds[] = {
  {"hw", kope_cmd_hw, "describe this machine and measure its roofline"},
  {"ops", kope_cmd_ops, "list, show and check operators"},
  {"eval", kope_cmd_eval, "compile, check and time a candidate kernel"},
  {"optimize", kope_cmd_optimize, "optimize an operator's kernel with the agent loop"},
  {"memory", kope_cmd_memory, "inspect and manage the experience memory"},
  {"bench", kope_cmd_bench, "benchmark configurations side by side (results JSON)"},
  {"report", kope_cmd_report, "render bench results as HTML or Markdown"},
  {"queue", kope_cmd_queue, "queue optimization jobs in a PostgreSQL store"},
  {"worker", kope_cmd_worker, "run the queued jobs of a PostgreSQL store"},
  {NULL, NULL, NULL}
};

static void usage(FILE *f)
{
  const struct subcmd *s;

  fprintf(f, "usage: kope SUBCOMMAND [options]\n\n"
             "kope makes compute kernels fast with an agent that learns from\n"
             "its own experience. Subcommands:\n\n");
  for (s = subcmds; s->name; s++)
    fprintf(f, "  %-8s %s\n", s->name, s->summary);
  fprintf(f, "\nEvery subcommand takes --help; --json prints one JSON document.\n"
             "Exit codes: 0 success, 1 kernel rejected, 2 usage or bad input,\n"
             "3 environment problem.\n");
}

int main(int argc, char **argv)
{
  const struct subcmd *s;

  if (argc < 2) {
    usage(stderr);
    return KOPE_EINPUT;
  }
  if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
    usage(stdout);
    return KOPE_OK;
  }
  if (!strcmp(argv[1], "--version")) {
    printf("kope %s\n", KOPE_VERSION);
    return KOPE_OK;
  }
  for (s = subcmds; s->name; s++)
    if (!strcmp(argv[1], s->name))
      return s->fn(argc - 1, argv + 1);
  fprintf(stderr, "kope: unknown subcommand '%s'\n\n", argv[1]);
  usage(stderr);
  return KOPE_EINPUT;
}
