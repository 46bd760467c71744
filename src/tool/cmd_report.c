/*
 * `kope report RESULTS.json [...]`: render kope bench results as one
 * self-contained HTML page (inline CSS and SVG, no scripts, no network)
 * or, with --format md, as Markdown tables for docs. The metrics are
 * recomputed from each document's runs and final measurements.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kope/bench.h"
#include "cli.h"
#include "cmds.h"

static void usage(FILE *f)
{
  fprintf(f,
    "usage: kope report RESULTS.json [RESULTS.json ...] [--out FILE] [options]\n\n"
    "Render results of kope bench: the summary per configuration, ablation tables,\n"
    "paired ratios, per-operator speedup bars (log axis, parity and vendor lines),\n"
    "speedup-vs-evaluations curves, token use and one operator's experience forest.\n\n"
    "options:\n"
    "  --out FILE        write the report to FILE (default: stdout)\n"
    "  --format F        html (default) | md\n"
    "  --forest-op OP    operator whose experience forest is drawn (default: first)\n"
    "  --title TEXT      page title\n"
    "  -h, --help        this help\n\n"
    "exit: 0 written, 2 bad input (not a kope bench results file), 3 environment\n");
}

typedef struct report_args {
  kope_bench_report_opts o;
  const char *out;
  int md;
} report_args;

static int parse(int argc, char **argv, report_args *a)
{
  static const struct option opts[] = {
    {"out", 1, 0, 'o'}, {"format", 1, 0, 'f'}, {"forest-op", 1, 0, 'p'}, {"title", 1, 0, 't'},
    {"help", 0, 0, 'h'}, {0, 0, 0, 0}
  };
  int ch;

  optind = 1;
  while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
    switch (ch) {
    case 'o': a->out = optarg; break;
    case 'f':
      if (strcmp(optarg, "html") && strcmp(optarg, "md")) {
        fprintf(stderr, "kope report: --format must be html or md\n");
        return KOPE_EINPUT;
      }
      a->md = !strcmp(optarg, "md");
      break;
    case 'p': a->o.forest_op = optarg; break;
    case 't': a->o.title = optarg; break;
    case 'h': usage(stdout); return -1;
    default: usage(stderr); return KOPE_EINPUT;
    }
  }
  if (optind >= argc) {
    fprintf(stderr, "kope report: need at least one results file\n\n");
    usage(stderr);
    return KOPE_EINPUT;
  }
  return KOPE_OK;
}

static int load(const char *path, json_t **doc, kope_err *err)
{
  json_error_t je;

  if (!(*doc = json_load_file(path, 0, &je)))
    return kope_err_set(err, KOPE_EINPUT, "%s: not JSON (%s, line %d)", path, je.text, je.line);
  if (kope_bench_metrics(*doc, err) != KOPE_OK)
    return kope_err_set(err, KOPE_EINPUT, "%s: not a kope bench results file", path);
  return KOPE_OK;
}

static int emit(const report_args *a, const char *text, kope_err *err)
{
  if (!a->out) {
    fputs(text, stdout);
    return KOPE_OK;
  }
  return kope_file_write_atomic(a->out, text, strlen(text), err);
}

int kope_cmd_report(int argc, char **argv)
{
  report_args a;
  json_t **docs;
  kope_err err;
  char *text = NULL;
  size_t n, i;
  int rc;

  memset(&a, 0, sizeof a);
  if ((rc = parse(argc, argv, &a)) != KOPE_OK)
    return rc < 0 ? KOPE_OK : rc;
  n = (size_t)(argc - optind);
  if (!(docs = calloc(n ? n : 1, sizeof *docs)))
    return kope_cli_nomem("report", "documents");
  a.o.names = (const char *const *)(argv + optind);
  kope_err_clear(&err);
  for (i = 0; i < n && rc == KOPE_OK; i++)
    rc = load(argv[optind + (int)i], &docs[i], &err);
  if (rc == KOPE_OK) {
    text = a.md ? kope_bench_markdown(docs, n, &a.o, &err) : kope_bench_html(docs, n, &a.o, &err);
    rc = text ? emit(&a, text, &err) : err.code;
  }
  for (i = 0; i < n; i++)
    json_decref(docs[i]);
  free(docs);
  free(text);
  return rc == KOPE_OK ? KOPE_OK : kope_cli_fail("report", &err);
}
