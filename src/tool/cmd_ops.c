/*
 * `kope ops`: list operators, show one (prototype, arguments, cases,
 * knobs), and check them: validate every spec, evaluate every seed kernel
 * (correctness and timing) and every vendor baseline (correctness), and
 * print one table; and screen them: kernels that compute nothing (zeros,
 * a constant, the input's mean, a copy of the input) must be rejected.
 * `check --from FILE` renders a saved `check --json` document without
 * running anything; `check --best BENCH.json` prints the suite against the
 * vendor libraries for the seeds and the best kernels of a bench run, from
 * the bench's final re-measurement (kope_bench_suite; nothing is re-run).
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kope/bench.h"
#include "kope/eval.h"
#include "kope/op.h"
#include "kope/target.h"
#include "cli.h"
#include "cmds.h"

static void usage(FILE *f)
{
  fprintf(f,
    "usage: kope ops [--json] [--ops-dir DIR]\n"
    "       kope ops show OP [--json]\n"
    "       kope ops check [OP ...] [--json|--format md] [--no-timing] [--seeds N]\n"
    "       kope ops check --from CHECK.json [--format md]\n"
    "       kope ops check --best BENCH.json [BENCH.json ...] [--json|--format md]\n"
    "       kope ops screen [OP ...] [--json] [--seeds N]\n\n"
    "  (list)   every operator with category, level, cases and vendor baseline\n"
    "  show     the generated C prototype, arguments, cases and the seed's knobs\n"
    "  check    validate specs, evaluate each seed kernel (correctness + timing)\n"
    "           and each vendor baseline (correctness); prints a table.\n"
    "           Exit 1 when a seed or baseline is rejected, 2 for a bad spec.\n"
    "           --from renders a saved `check --json` document (nothing runs);\n"
    "           --best prints, per operator of a `kope bench` results document,\n"
    "           the seed and the best final kernel vs reference and vendor over\n"
    "           perf cases, and the suite's geomean vs vendor for both (taken\n"
    "           from the bench's final re-measurement, nothing is re-run);\n"
    "           several documents give one table (an operator in more than\n"
    "           one takes its row from the last).\n"
    "  screen   the no-compute screen: kernels writing zeros, a constant (1),\n"
    "           the mean of the first float input, or a copy of the first input\n"
    "           must each be rejected by the operator's check. Exit 1 when one\n"
    "           is accepted (the operator's cases or tolerance are too weak).\n\n"
    "options:\n"
    "  --json          one JSON document on stdout\n"
    "  --format md     check: the table as Markdown (docs/suite.md is made so)\n"
    "  --ops-dir DIR   operator directory (default: $KOPE_OPS or ./ops)\n"
    "  --no-timing     check: correctness only\n"
    "  --seeds N       check: input seeds per case (default 5)\n"
    "  --threads N     check: OpenMP threads (default all)\n"
    "  --target T      check: target (default cpu); opencl checks each seed.cl\n"
    "                  (operators without one are skipped unless named)\n"
    "  --device D      opencl: device index or name substring (default first)\n"
    "  --build-only    check: static gate and compiler only, nothing runs (no GPU\n"
    "                  needed): each seed is built, compile_error or forbidden;\n"
    "                  with --target cuda each vendor_cuda baseline is built too\n"
    "  -h, --help      this help\n");
}

typedef struct ops_args {
  int json, md, timing, seeds, threads;
  int build_only;       /* check: gate + compile only */
  const char *dir;
  const char *target;   /* check: target name */
  char ext[16];         /* check: its source extension (seed.c, seed.cl) */
  kope_op_vendor_lang vendor;  /* check: the language of its own vendor baseline */
  int build_only_vendor;       /* check: --build-only builds that baseline too */
  const char *device;   /* check: --device */
  const char *from;     /* check: render this saved --json document */
  const char *best;     /* check: this bench results document's suite table */
  char **names;
  int nnames;
} ops_args;

static int parse(int argc, char **argv, ops_args *a)
{
  static const struct option opts[] = {
    {"json", 0, 0, 'j'}, {"ops-dir", 1, 0, 'd'}, {"no-timing", 0, 0, 'n'},
    {"seeds", 1, 0, 's'}, {"threads", 1, 0, 'T'}, {"format", 1, 0, 'f'},
    {"target", 1, 0, 't'}, {"device", 1, 0, 'D'}, {"build-only", 0, 0, 'O'},
    {"from", 1, 0, 'F'}, {"best", 1, 0, 'B'},
    {"help", 0, 0, 'h'}, {0, 0, 0, 0}
  };
  int ch, rc = KOPE_OK;

  a->timing = 1;
  a->seeds = 5;
  a->target = "cpu";
  optind = 1;
  while (rc == KOPE_OK && (ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
    switch (ch) {
    case 'j': a->json = 1; break;
    case 'd': a->dir = optarg; break;
    case 'n': a->timing = 0; break;
    case 's': rc = kope_cli_int("ops", "seeds", optarg, 1, 1000, &a->seeds); break;
    case 'T': rc = kope_cli_int("ops", "threads", optarg, 0, 4096, &a->threads); break;
    case 't': a->target = optarg; break;
    case 'O': a->build_only = 1; a->timing = 0; break;
    case 'D': a->device = optarg; break;
    case 'F': a->from = optarg; break;
    case 'B': a->best = optarg; break;
    case 'f':
      if (strcmp(optarg, "md") && strcmp(optarg, "text")) {
        fprintf(stderr, "kope ops: --format takes md or text, not '%s'\n", optarg);
        return KOPE_EINPUT;
      }
      a->md = !strcmp(optarg, "md");
      break;
    case 'h': usage(stdout); return -1;
    default: usage(stderr); return KOPE_EINPUT;
    }
  }
  if (rc != KOPE_OK)
    return rc;
  a->names = argv + optind;
  a->nnames = argc - optind;
  return KOPE_OK;
}

/* Names to work on: those given, or every folder of the ops dir. */
static int collect(ops_args *a, char ***names, size_t *n, kope_err *err)
{
  char *dir;
  int rc, i;

  if (a->nnames > 0) {
    *n = (size_t)a->nnames;
    if (!(*names = calloc(*n, sizeof **names)))
      return kope_err_nomem(err, "operator names");
    for (i = 0; i < a->nnames; i++)
      if (!((*names)[i] = kope_strdup(a->names[i]))) {
        while (i-- > 0)
          free((*names)[i]);
        free(*names);
        *names = NULL;
        *n = 0;
        return kope_err_nomem(err, "operator names");
      }
    return KOPE_OK;
  }
  dir = a->dir ? kope_strdup(a->dir) : kope_ops_dir();
  rc = kope_ops_list(dir, names, n, err);
  free(dir);
  return rc;
}

/* One operator of the list as JSON: vendor / vendor_name are the C
 * baseline (cpu), vendor_cuda / vendor_cuda_name the CUDA one. */
static json_t *list_json(const kope_op *op)
{
  const kope_op_vendor *cu = kope_op_vendor_for(op, KOPE_OP_VENDOR_CUDA);

  return json_pack("{s:s, s:s, s:i, s:i, s:b, s:s*, s:b, s:s*}", "name", kope_op_name(op),
                   "category", kope_op_category(op), "level", kope_op_level(op), "cases",
                   (int)kope_op_ncases(op), "vendor", kope_op_vendor_path(op) != NULL,
                   "vendor_name", kope_op_vendor_name(op), "vendor_cuda", cu != NULL,
                   "vendor_cuda_name", cu ? cu->name : NULL);
}

static int cmd_list(ops_args *a)
{
  char **names = NULL;
  size_t n = 0, i;
  kope_err err;
  json_t *arr = json_array();
  int rc;

  kope_err_clear(&err);
  if ((rc = collect(a, &names, &n, &err)))
    return json_decref(arr), kope_cli_fail("ops", &err);
  if (!a->json)
    printf("%-22s %-14s %5s %5s  %s\n", "operator", "category", "level", "cases", "vendor");
  for (i = 0; i < n && rc == KOPE_OK; i++) {
    kope_op *op = kope_op_load(names[i], a->dir, &err);
    if (!op) {
      rc = kope_cli_fail("ops", &err);
      break;
    }
    if (a->json)
      json_array_append_new(arr, list_json(op));
    else
      printf("%-22s %-14s %5d %5zu  %s\n", kope_op_name(op), kope_op_category(op),
             kope_op_level(op), kope_op_ncases(op),
             kope_op_vendor_path(op) ? kope_op_vendor_name(op) : "-");
    kope_op_free(op);
  }
  if (rc == KOPE_OK && a->json)
    kope_cli_print_json(json_pack("{s:o}", "operators", arr));
  else
    json_decref(arr);
  kope_strv_free(names, n);
  return rc;
}

static json_t *knobs_json(const kope_op *op, const char *path, kope_err *err, int *rc)
{
  char *src = kope_file_read(path, NULL, err);
  kope_knob *ks = NULL;
  size_t n = 0, i;
  json_t *arr = json_array();
  int v;

  *rc = src ? kope_knobs_parse(src, path, &ks, &n, err) : KOPE_EINPUT;
  for (i = 0; *rc == KOPE_OK && i < n; i++) {
    json_t *vals = json_array();
    for (v = 0; v < ks[i].nvalues; v++)
      json_array_append_new(vals, json_string(ks[i].values[v]));
    json_array_append_new(arr, json_pack("{s:s, s:s, s:s, s:o, s:s, s:i}", "name", ks[i].name,
                                         "layer", ks[i].layer, "value", ks[i].value, "values",
                                         vals, "description", ks[i].desc, "line", ks[i].line));
  }
  free(ks);
  free(src);
  return arr;
}

static void print_show(const kope_op *op, json_t *knobs)
{
  char *proto = kope_op_prototype(op);
  size_t i;
  json_t *k;

  printf("%s (%s, level %d)\n  %s\n\nprototype:\n  %s\n\ncases:\n", kope_op_name(op),
         kope_op_category(op), kope_op_level(op), kope_op_description(op), proto);
  for (i = 0; i < kope_op_ncases(op); i++) {
    char *l = kope_op_case_label(op, i);
    const char *src = kope_op_case_source(op, i);
    printf("  %2zu  %-5s %s %s%s%s%s\n", i, kope_case_role_name(kope_op_case_role(op, i)), l,
           kope_op_case_name(op, i), *src ? " (source: " : "", src, *src ? ")" : "");
    free(l);
  }
  printf("  (check: judged, never timed or scored; perf and both: judged, timed, scored)\n");
  printf("\nseed knobs (%s):\n", kope_op_seed_path(op));
  json_array_foreach(knobs, i, k) {
    char *vals = json_dumps(json_object_get(k, "values"), JSON_COMPACT);
    printf("  %-16s layer=%-11s value=%-6s values=%s  %s\n",
           json_string_value(json_object_get(k, "name")),
           json_string_value(json_object_get(k, "layer")),
           json_string_value(json_object_get(k, "value")), vals ? vals : "[]",
           json_string_value(json_object_get(k, "description")));
    free(vals);
  }
  printf("\nvendor baseline: %s\n", kope_op_vendor_path(op) ? kope_op_vendor_name(op) : "none");
  if (kope_op_vendor_for(op, KOPE_OP_VENDOR_CUDA))
    printf("CUDA vendor baseline: %s (%s)\n", kope_op_vendor_for(op, KOPE_OP_VENDOR_CUDA)->name,
           kope_op_vendor_for(op, KOPE_OP_VENDOR_CUDA)->path);
  free(proto);
}

static int cmd_show(ops_args *a)
{
  kope_err err;
  kope_op *op;
  json_t *knobs, *j;
  int rc;

  kope_err_clear(&err);
  if (a->nnames != 1) {
    fprintf(stderr, "kope ops show: name one operator\n");
    return KOPE_EINPUT;
  }
  if (!(op = kope_op_load(a->names[0], a->dir, &err)))
    return kope_cli_fail("ops show", &err);
  knobs = knobs_json(op, kope_op_seed_path(op), &err, &rc);
  if (rc != KOPE_OK) {
    json_decref(knobs);
    kope_op_free(op);
    return kope_cli_fail("ops show", &err);
  }
  if (a->json) {
    j = kope_op_to_json(op);
    json_object_set_new(j, "knobs", knobs);
    kope_cli_print_json(j);
  } else {
    print_show(op, knobs);
    json_decref(knobs);
  }
  kope_op_free(op);
  return KOPE_OK;
}

/* ---- check ---- */

typedef struct check_row {
  char name[64], category[32], seed_verdict[32], vendor_verdict[32], reason[600];
  char vendor_name[160];
  int level, ncases, ntimed, has_vendor, knobs;
  int skipped;          /* no seed for the target (not named on the command line) */
  double sp_ref, sp_ven, roof, seconds;
  double seed_err, vendor_err;  /* worst error as a fraction of the tolerance bound */
} check_row;

/* A seed or baseline using more than this fraction of its tolerance gets a
 * warning: a kernel summing in another order, or the vendor library on
 * another CPU, may cross the bound (docs/operator-format.md, section 6). */
#define OPS_THIN_MARGIN 0.5

static void warn_margin(const check_row *row, const char *who, double ratio)
{
  if (ratio > OPS_THIN_MARGIN && ratio <= 1.0)
    fprintf(stderr,
            "kope ops check %s: warning: the %s used %.0f%% of the tolerance (worst error "
            "/ bound = %.3f); other summation orders or CPUs may fail it\n",
            row->name, who, 100.0 * ratio, ratio);
}

static int check_op(ops_args *a, const char *name, check_row *row, kope_err *err)
{
  kope_eval_opts o;
  kope_op *op = kope_op_load(name, a->dir, err);
  kope_evaluator *ev = NULL;
  kope_report *r = NULL, *v = NULL;
  const kope_op_vendor *ven;
  char *src = NULL, prefix[96], *seed = NULL;
  double t0 = kope_now();
  json_t *knobs;
  int rc = KOPE_OK;

  if (!op)
    return err->code;
  snprintf(row->name, sizeof row->name, "%s", kope_op_name(op));
  snprintf(row->category, sizeof row->category, "%s", kope_op_category(op));
  row->level = kope_op_level(op);
  row->ncases = (int)kope_op_ncases(op);
  for (size_t c = 0; c < kope_op_ncases(op); c++)
    row->ntimed += kope_op_case_timed(op, c) != 0;
  /* checked: the cpu target's C baseline and the cuda target's
   * vendor_cuda (build-only: built, not run); opencl has none of its own */
  ven = kope_op_vendor_for(op, a->vendor);
  row->has_vendor = ven && (!a->build_only || a->build_only_vendor);
  seed = kope_op_seed_path_for(op, a->ext);
  if (a->nnames == 0 && !kope_is_file(seed)) {
    row->skipped = 1;
    goto out;
  }
  snprintf(row->vendor_name, sizeof row->vendor_name, "%s", row->has_vendor ? ven->name : "");
  knobs = knobs_json(op, seed, err, &rc);
  row->knobs = (int)json_array_size(knobs);
  json_decref(knobs);
  if (rc != KOPE_OK || !(src = kope_file_read(seed, NULL, err)))
    goto out;
  kope_eval_opts_init(&o);
  o.target = a->target;
  o.device = a->device;
  o.timing = a->timing;
  o.build_only = a->build_only;
  o.seeds = a->seeds;
  o.threads = a->threads;
  snprintf(prefix, sizeof prefix, "kope ops check %s: ", row->name);
  o.progress = kope_cli_progress;
  o.progress_ctx = prefix;
  if (!(ev = kope_evaluator_new(op, &o, err)) || !(r = kope_evaluate(ev, src, err))) {
    rc = err->code;
    goto out;
  }
  snprintf(row->seed_verdict, sizeof row->seed_verdict, "%s",
           a->build_only && kope_report_verdict(r) == KOPE_CORRECT ? "built"
                                                                  : kope_verdict_name(kope_report_verdict(r)));
  snprintf(row->reason, sizeof row->reason, "%s", kope_report_reason(r));
  row->sp_ref = kope_report_speedup_ref(r);
  row->sp_ven = kope_report_speedup_vendor(r);
  row->roof = kope_report_roofline(r);
  row->seed_err = kope_report_max_error_ratio(r);
  if (!a->build_only)
    warn_margin(row, "seed", row->seed_err);
  snprintf(row->vendor_verdict, sizeof row->vendor_verdict, "-");
  if (row->has_vendor && a->build_only) {
    /* the evaluator built it or failed above naming vendor.cu */
    snprintf(row->vendor_verdict, sizeof row->vendor_verdict, "built");
  } else if (row->has_vendor) {
    if (!(v = kope_evaluate_vendor(ev, err))) {
      rc = err->code;
      goto out;
    }
    snprintf(row->vendor_verdict, sizeof row->vendor_verdict, "%s",
             kope_verdict_name(kope_report_verdict(v)));
    row->vendor_err = kope_report_max_error_ratio(v);
    warn_margin(row, "vendor baseline", row->vendor_err);
    if (!kope_report_accepted(v))
      snprintf(row->reason, sizeof row->reason, "vendor: %s", kope_report_reason(v));
  }
out:
  row->seconds = kope_now() - t0;
  kope_report_free(r);
  kope_report_free(v);
  kope_evaluator_free(ev);
  kope_op_free(op);
  free(src);
  free(seed);
  return rc;
}

static int row_ok(const check_row *row)
{
  return (!strcmp(row->seed_verdict, "correct") || !strcmp(row->seed_verdict, "built")) &&
         (!row->has_vendor || !strcmp(row->vendor_verdict, "correct") ||
          !strcmp(row->vendor_verdict, "built"));
}

static json_t *row_json(const check_row *r)
{
  return json_pack("{s:s, s:s, s:i, s:i, s:i, s:i, s:s, s:s, s:s, s:s, s:f, s:o, s:f, s:f, "
                   "s:f, s:o, s:b}", "name", r->name, "category", r->category, "level", r->level,
                   "cases", r->ncases, "timed_cases", r->ntimed, "knobs", r->knobs,
                   "seed_verdict", r->seed_verdict, "vendor_verdict", r->vendor_verdict,
                   "vendor_name", r->vendor_name, "reason", r->reason, "speedup_ref",
                   r->sp_ref, "speedup_vendor",
                   r->has_vendor ? json_real(r->sp_ven) : json_null(), "roofline_fraction",
                   r->roof, "seconds", r->seconds, "seed_max_error_ratio", r->seed_err,
                   "vendor_max_error_ratio",
                   r->has_vendor ? json_real(r->vendor_err) : json_null(), "ok", row_ok(r));
}

static void print_row(const check_row *r, int timing)
{
  char ven[24];

  snprintf(ven, sizeof ven, r->has_vendor && timing ? "%.3fx" : "-", r->sp_ven);
  printf("%-18s %-13s %3d %5d %5d  %-9s %-9s", r->name, r->category, r->level, r->ncases,
         r->knobs, r->seed_verdict, r->vendor_verdict);
  if (timing)
    printf(" %9.3fx %10s %8.3f", r->sp_ref, ven, r->roof);
  printf(" %6.1fs%s%s\n", r->seconds, row_ok(r) ? "" : "  ", row_ok(r) ? "" : r->reason);
  fflush(stdout);
}

static void print_md_head(int timing)
{
  printf("| operator | category | level | cases | perf cases | knobs | vendor baseline | seed | "
         "vendor |%s\n", timing ? " seed vs ref | seed vs vendor | roofline fraction |" : "");
  printf("|---|---|---:|---:|---:|---:|---|---|---|%s\n", timing ? "---:|---:|---:|" : "");
}

/* A table cell: '|' would end the cell, so it is escaped. */
static void print_md_cell(const char *s)
{
  printf(" ");
  for (; *s; s++)
    if (*s == '|')
      fputs("\\|", stdout);
    else
      putchar(*s);
  printf(" |");
}

static void print_md_row(const check_row *r, int timing)
{
  printf("| %s | %s | %d | %d | %d | %d |", r->name, r->category, r->level, r->ncases, r->ntimed,
         r->knobs);
  print_md_cell(r->has_vendor ? r->vendor_name : "none");
  printf(" %s | %s |", r->seed_verdict, r->vendor_verdict);
  if (timing) {
    printf(" %.3fx |", r->sp_ref);
    if (r->has_vendor && r->sp_ven > 0)
      printf(" %.3fx |", r->sp_ven);
    else
      printf(" - |");
    printf(" %.3f |", r->roof);
  }
  printf("\n");
  fflush(stdout);
}

/* The target's source extension (opening it checks the toolchain). */
static int target_ext(ops_args *a, kope_err *err)
{
  kope_target_opts to = {a->device, NULL};
  kope_target *t = kope_target_open_opts(a->target, &to, err);

  if (!t)
    return err->code;
  snprintf(a->ext, sizeof a->ext, "%s", kope_target_source_ext(t));
  a->vendor = kope_target_vendor_lang(t);
  a->build_only_vendor = kope_target_build_only_vendor(t);
  kope_target_free(t);
  return KOPE_OK;
}

/* Suite-wide geometric means of the correct seeds' per-operator geomeans
 * (each over its timed cases only). */
typedef struct check_sum {
  double log_ref, log_ven;
  int nref, nven;
} check_sum;

static void sum_add(check_sum *s, const check_row *r)
{
  if (!row_ok(r) || r->sp_ref <= 0)
    return;
  s->log_ref += log(r->sp_ref);
  s->nref++;
  if (r->has_vendor && r->sp_ven > 0) {
    s->log_ven += log(r->sp_ven);
    s->nven++;
  }
}

static json_t *sum_json(const check_sum *s)
{
  return json_pack("{s:i, s:f, s:i, s:f, s:s}", "operators", s->nref, "geomean_speedup_ref",
                   s->nref ? exp(s->log_ref / s->nref) : 0.0, "operators_with_vendor", s->nven,
                   "geomean_speedup_vendor", s->nven ? exp(s->log_ven / s->nven) : 0.0, "over",
                   "timed (perf) cases only");
}

static void sum_print(const check_sum *s)
{
  printf("%s seeds: geomean %.3fx vs reference over %d operators, %.3fx vs vendor over %d "
         "(each over its timed cases only)\n", "suite", s->nref ? exp(s->log_ref / s->nref) : 0.0,
         s->nref, s->nven ? exp(s->log_ven / s->nven) : 0.0, s->nven);
}

/* The table's head: Markdown or text. */
static void check_head(int md, int timing)
{
  if (md) {
    print_md_head(timing);
    return;
  }
  printf("%-18s %-13s %3s %5s %5s  %-9s %-9s", "operator", "category", "lvl", "cases",
         "knobs", "seed", "vendor");
  if (timing)
    printf(" %10s %10s %8s", "vs ref", "vs vendor", "roofline");
  printf(" %7s\n", "time");
}

/* The summary line under the table (after a blank line in Markdown). */
static void check_tail(int md, const check_sum *s)
{
  if (md)
    printf("\n");
  sum_print(s);
}

static int cmd_from(ops_args *a);
static int cmd_best(ops_args *a);

static int cmd_check(ops_args *a)
{
  check_sum sum = {0, 0, 0, 0};
  char **names = NULL;
  size_t n = 0, i;
  kope_err err;
  json_t *arr = json_array();
  int rc, bad = 0, envrc = KOPE_OK, skipped = 0;
  check_row row;

  if (a->from || a->best) {
    json_decref(arr);
    return a->best ? cmd_best(a) : cmd_from(a);
  }
  kope_err_clear(&err);
  if ((rc = target_ext(a, &err)) || (rc = collect(a, &names, &n, &err)))
    return json_decref(arr), kope_cli_fail("ops check", &err);
  if (!a->json)
    check_head(a->md, a->timing);
  for (i = 0; i < n; i++) {
    memset(&row, 0, sizeof row);
    kope_err_clear(&err);
    rc = check_op(a, names[i], &row, &err);
    kope_cli_progress_done();
    if (rc != KOPE_OK) {
      fprintf(stderr, "kope ops check: %s\n", err.msg);
      if (envrc == KOPE_OK || rc == KOPE_EINPUT)
        envrc = rc;
      continue;
    }
    if (row.skipped) {
      skipped++;
      continue;
    }
    bad |= !row_ok(&row);
    sum_add(&sum, &row);
    if (a->json)
      json_array_append_new(arr, row_json(&row));
    else if (a->md)
      print_md_row(&row, a->timing);
    else
      print_row(&row, a->timing);
  }
  if (skipped)
    fprintf(stderr, "kope ops check: skipped %d operators without a seed%s for target %s\n",
            skipped, a->ext, a->target);
  if (a->json)
    kope_cli_print_json(json_pack("{s:o, s:o?, s:b}", "operators", arr, "summary",
                                  a->timing && !a->build_only ? sum_json(&sum) : NULL, "ok",
                                  !bad && !envrc));
  else
    json_decref(arr);
  if (!a->json && a->timing && !a->build_only)
    check_tail(a->md, &sum);
  kope_strv_free(names, n);
  return envrc != KOPE_OK ? envrc : bad ? KOPE_EREJECT : KOPE_OK;
}

/* ---- check --from: a saved `check --json` document, rendered ---- */

static void jstr(char *dst, size_t n, const json_t *o, const char *key)
{
  const char *v = json_string_value(json_object_get(o, key));

  snprintf(dst, n, "%s", v ? v : "");
}

static double jnum(const json_t *o, const char *key)
{
  return json_number_value(json_object_get(o, key));
}

/* The C baseline's name from the spec (documents written before
 * "vendor_name" was a member of a row). */
static void vendor_name_from_spec(const ops_args *a, check_row *r)
{
  kope_err err;
  kope_op *op;
  const kope_op_vendor *v;

  kope_err_clear(&err);
  if (!(op = kope_op_load(r->name, a->dir, &err)))
    return;
  v = kope_op_vendor_for(op, KOPE_OP_VENDOR_C);
  snprintf(r->vendor_name, sizeof r->vendor_name, "%s", v ? v->name : "");
  kope_op_free(op);
}

static void row_from_json(const ops_args *a, const json_t *j, check_row *r)
{
  memset(r, 0, sizeof *r);
  jstr(r->name, sizeof r->name, j, "name");
  jstr(r->category, sizeof r->category, j, "category");
  jstr(r->seed_verdict, sizeof r->seed_verdict, j, "seed_verdict");
  jstr(r->vendor_verdict, sizeof r->vendor_verdict, j, "vendor_verdict");
  jstr(r->vendor_name, sizeof r->vendor_name, j, "vendor_name");
  jstr(r->reason, sizeof r->reason, j, "reason");
  r->level = (int)jnum(j, "level");
  r->ncases = (int)jnum(j, "cases");
  r->ntimed = (int)jnum(j, "timed_cases");
  r->knobs = (int)jnum(j, "knobs");
  r->has_vendor = r->vendor_verdict[0] && strcmp(r->vendor_verdict, "-") != 0;
  r->sp_ref = jnum(j, "speedup_ref");
  r->sp_ven = jnum(j, "speedup_vendor");
  r->roof = jnum(j, "roofline_fraction");
  r->seconds = jnum(j, "seconds");
  r->seed_err = jnum(j, "seed_max_error_ratio");
  r->vendor_err = jnum(j, "vendor_max_error_ratio");
  if (r->has_vendor && !r->vendor_name[0])
    vendor_name_from_spec(a, r);
}

static int cmd_from(ops_args *a)
{
  json_error_t je;
  json_t *doc = json_load_file(a->from, 0, &je), *ops = json_object_get(doc, "operators"), *j;
  check_sum sum = {0, 0, 0, 0};
  check_row row;
  size_t i;
  int timing, bad = 0;

  if (!doc || !json_is_array(ops) || a->json) {
    fprintf(stderr, "kope ops check: --from %s: %s\n", a->from,
            a->json ? "renders as text or Markdown only (the file is the JSON)"
            : doc   ? "not a `kope ops check --json` document"
                    : je.text);
    json_decref(doc);
    return KOPE_EINPUT;
  }
  timing = json_is_object(json_object_get(doc, "summary"));
  check_head(a->md, timing);
  json_array_foreach(ops, i, j) {
    row_from_json(a, j, &row);
    bad |= !row_ok(&row);
    sum_add(&sum, &row);
    if (a->md)
      print_md_row(&row, timing);
    else
      print_row(&row, timing);
  }
  if (timing)
    check_tail(a->md, &sum);
  json_decref(doc);
  return bad ? KOPE_EREJECT : KOPE_OK;
}

/* ---- check --best: seeds and a bench's best kernels vs vendor ---- */

/* "1.234x", or "-" for a JSON null or a missing figure. */
static const char *fmt_x(char *buf, size_t n, const json_t *o, const char *key)
{
  double v = jnum(o, key);

  snprintf(buf, n, v > 0 ? "%.3fx" : "-", v);
  return buf;
}

static void best_row(const json_t *r, int md)
{
  const json_t *s = json_object_get(r, "seed"), *b = json_object_get(r, "best");
  char sr[24], sv[24], br[24], bv[24], who[96];
  const char *vendor = json_string_value(json_object_get(r, "vendor"));

  fmt_x(sr, sizeof sr, s, "speedup_ref");
  fmt_x(sv, sizeof sv, s, "speedup_vendor");
  fmt_x(br, sizeof br, b, "speedup_ref");
  fmt_x(bv, sizeof bv, b, "speedup_vendor");
  snprintf(who, sizeof who, "%s r%d", json_string_value(json_object_get(b, "config")),
           (int)jnum(b, "repeat"));
  if (json_is_true(json_object_get(r, "best_is_seed")))
    snprintf(who, sizeof who, "seed (no run kernel)");
  if (md) {
    printf("| %s | %d |", json_string_value(json_object_get(r, "name")), (int)jnum(s, "perf_cases"));
    print_md_cell(vendor ? vendor : "none");
    printf(" %s | %s | %s | %s | %s |\n", sr, sv, who, br, bv);
  } else {
    printf("%-22s %4d %11s %11s  %-24s %11s %11s\n",
           json_string_value(json_object_get(r, "name")), (int)jnum(s, "perf_cases"), sr, sv,
           who, br, bv);
  }
}

static void best_line(const char *what, const json_t *s)
{
  printf("suite %s: geomean %.3fx vs vendor over %d operators (each over its perf cases; "
         "%d perf cases pooled: %.3fx)\n", what, jnum(s, "geomean_speedup_vendor"),
         (int)jnum(s, "operators"), (int)jnum(s, "perf_cases"),
         jnum(s, "geomean_speedup_vendor_cases"));
}

static void best_print(const json_t *out, int md)
{
  const json_t *sum = json_object_get(out, "summary"), *r;
  size_t i;

  if (md)
    printf("| operator | perf cases | vendor baseline | seed vs ref | seed vs vendor | best "
           "kernel | best vs ref | best vs vendor |\n|---|---:|---|---:|---:|---|---:|---:|\n");
  else
    printf("%-22s %4s %11s %11s  %-24s %11s %11s\n", "operator", "perf", "seed vs ref",
           "vs vendor", "best kernel", "best vs ref", "vs vendor");
  json_array_foreach(json_object_get(out, "operators"), i, r)
    best_row(r, md);
  if (md)
    printf("\n");
  best_line("seeds", json_object_get(sum, "seeds"));
  if (md)
    printf("\n");
  best_line("best", json_object_get(sum, "best"));
}

/* --best A.json [B.json ...]: the documents after the first come as the
 * positional arguments. */
static int cmd_best(ops_args *a)
{
  size_t n = 1 + (size_t)a->nnames, i, got = 0;
  json_t **docs = calloc(n, sizeof *docs), *out = NULL;
  json_error_t je;
  kope_err err;
  int rc = KOPE_OK;

  kope_err_clear(&err);
  if (!docs)
    return kope_cli_nomem("ops check --best", "documents");
  for (i = 0; i < n && rc == KOPE_OK; i++, got++) {
    const char *path = i ? a->names[i - 1] : a->best;
    if (!(docs[i] = json_load_file(path, 0, &je))) {
      fprintf(stderr, "kope ops check: --best %s: %s\n", path, je.text);
      rc = KOPE_EINPUT;
    }
  }
  if (rc == KOPE_OK && (rc = kope_bench_suite(docs, n, &out, &err)) != KOPE_OK)
    kope_cli_fail("ops check --best", &err);
  if (rc == KOPE_OK && a->json)
    kope_cli_print_json(out);
  else if (rc == KOPE_OK)
    best_print(out, a->md);
  if (rc != KOPE_OK || !a->json)
    json_decref(out);
  for (i = 0; i < got; i++)
    json_decref(docs[i]);
  free(docs);
  return rc;
}

/* ---- screen ---- */

#define SCREEN_MAX 8

/* Evaluate every applicable screen kernel of one operator (correctness
 * only); *leaks counts those accepted. Fills a JSON object per kernel. */
static int screen_op(ops_args *a, const char *name, json_t *kernels, int *leaks,
                     kope_err *err)
{
  kope_eval_opts o;
  kope_op *op = kope_op_load(name, a->dir, err);
  kope_evaluator *ev = NULL;
  kope_report *r[SCREEN_MAX] = {0};
  char *src[SCREEN_MAX] = {0};
  const char *kinds[SCREEN_MAX];
  size_t n = 0, i;
  int rc = KOPE_OK;

  if (!op)
    return err->code;
  for (i = 0; kope_screen_kinds[i] && n < SCREEN_MAX; i++) {
    kope_err e2;
    kope_err_clear(&e2);
    if ((src[n] = kope_op_screen_kernel(op, kope_screen_kinds[i], &e2)))
      kinds[n++] = kope_screen_kinds[i];
  }
  kope_eval_opts_init(&o);
  o.timing = 0;
  o.seeds = a->seeds;
  o.threads = a->threads ? a->threads : 1;
  if (!(ev = kope_evaluator_new(op, &o, err)) ||
      (rc = kope_evaluate_batch(ev, (const char *const *)src, n, r, err)) != KOPE_OK) {
    rc = err->code;
    goto out;
  }
  for (i = 0; i < n; i++) {
    int acc = kope_report_accepted(r[i]);
    *leaks += acc;
    json_array_append_new(kernels, json_pack("{s:s, s:s, s:s, s:b}", "kind", kinds[i],
                                             "verdict", kope_verdict_name(kope_report_verdict(r[i])),
                                             "reason", kope_report_reason(r[i]),
                                             "rejected", !acc));
  }
out:
  for (i = 0; i < n; i++) {
    kope_report_free(r[i]);
    free(src[i]);
  }
  kope_evaluator_free(ev);
  kope_op_free(op);
  return rc;
}

static void print_screen(const char *name, json_t *kernels, int leaks)
{
  size_t i;
  json_t *k;

  printf("%-22s %-6s", name, leaks ? "LEAKS" : "ok");
  json_array_foreach(kernels, i, k)
    printf("  %s=%s", json_string_value(json_object_get(k, "kind")),
           json_string_value(json_object_get(k, "verdict")));
  printf("\n");
  json_array_foreach(kernels, i, k)
    if (!json_is_true(json_object_get(k, "rejected")))
      printf("    %s kernel accepted: the cases or tolerance do not catch it\n",
             json_string_value(json_object_get(k, "kind")));
  fflush(stdout);
}

static int cmd_screen(ops_args *a)
{
  char **names = NULL;
  size_t n = 0, i;
  kope_err err;
  json_t *arr = json_array();
  int rc, bad = 0, envrc = KOPE_OK;

  kope_err_clear(&err);
  if ((rc = collect(a, &names, &n, &err)))
    return json_decref(arr), kope_cli_fail("ops screen", &err);
  for (i = 0; i < n; i++) {
    json_t *kernels = json_array();
    int leaks = 0;
    kope_err_clear(&err);
    rc = screen_op(a, names[i], kernels, &leaks, &err);
    if (rc != KOPE_OK) {
      fprintf(stderr, "kope ops screen: %s: %s\n", names[i], err.msg);
      if (envrc == KOPE_OK || rc == KOPE_EINPUT)
        envrc = rc;
      json_decref(kernels);
      continue;
    }
    bad |= leaks > 0;
    if (!a->json)
      print_screen(names[i], kernels, leaks);
    json_array_append_new(arr, json_pack("{s:s, s:o, s:b}", "name", names[i], "kernels",
                                         kernels, "ok", leaks == 0));
  }
  if (a->json)
    kope_cli_print_json(json_pack("{s:o, s:b}", "operators", arr, "ok", !bad && !envrc));
  else
    json_decref(arr);
  kope_strv_free(names, n);
  return envrc != KOPE_OK ? envrc : bad ? KOPE_EREJECT : KOPE_OK;
}

int kope_cmd_ops(int argc, char **argv)
{
  ops_args a;
  const char *sub = argc > 1 && argv[1][0] != '-' ? argv[1] : NULL;
  int rc;

  memset(&a, 0, sizeof a);
  if (sub && (!strcmp(sub, "show") || !strcmp(sub, "check") || !strcmp(sub, "list") ||
              !strcmp(sub, "screen"))) {
    argc--;
    argv++;
  } else if (sub) {
    fprintf(stderr, "kope ops: unknown subcommand '%s'\n\n", sub);
    usage(stderr);
    return KOPE_EINPUT;
  }
  if ((rc = parse(argc, argv, &a)) != KOPE_OK)
    return rc < 0 ? KOPE_OK : rc;
  if (!sub || !strcmp(sub, "list"))
    return cmd_list(&a);
  if (!strcmp(sub, "show"))
    return cmd_show(&a);
  if (!strcmp(sub, "screen"))
    return cmd_screen(&a);
  return cmd_check(&a);
}
