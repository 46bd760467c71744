/*
 * `kope eval OP KERNEL.c [KERNEL.c ...]`: judge candidate kernels for an
 * operator with the trusted evaluator and print the verdict, the reason,
 * and per-case timings; --json prints the full report. Several kernels
 * compile in parallel and are then judged one at a time.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kope/eval.h"
#include "kope/op.h"
#include "cli.h"
#include "cmds.h"

static void usage(FILE *f)
{
  fprintf(f,
    "usage: kope eval OP KERNEL.c [KERNEL.c ...] [options]\n\n"
    "Compile each candidate kernel, check it against the operator's reference on\n"
    "every case with fresh random inputs, and time it against the reference (and\n"
    "the vendor baseline, when the operator has one) in interleaved rounds.\n"
    "OP is a folder name under ops/ or a path to an operator folder.\n\n"
    "options:\n"
    "  --target T        target (default cpu): cpu | opencl\n"
    "  --device D        opencl: device index or name substring (default first)\n"
    "  --json            print the full report as one JSON document on stdout\n"
    "  --seeds N         fresh input seeds per case (default 5)\n"
    "  --seed S          fix the input seed (reproducible runs; default: fresh)\n"
    "  --threads N       OpenMP threads for the candidate (default: all CPUs)\n"
    "  --realtime        time at real-time priority (SCHED_FIFO; needs root or\n"
    "                    CAP_SYS_NICE): other processes no longer disturb the timing\n"
    "  --timeout SEC     wall-clock limit per call to the kernel (default 10)\n"
    "  --no-timing       check correctness only\n"
    "  --rounds N        minimum timing rounds per case (default 7)\n"
    "  --budget SEC      timing time per case (default 0.15)\n"
    "  --cflags FLAGS    extra compiler flags from the target's allow-list\n"
    "                    (cpu: -O1..-O3, -funroll-loops, -ffast-math, -mavx2, ...)\n"
    "  --ops-dir DIR     operator directory (default: $KOPE_OPS or ./ops)\n"
    "  --hw-cache PATH   hardware profile cache (default .kope/hw.json)\n"
    "  --base FILE       also time each kernel against FILE (e.g. the incumbent)\n"
    "                    in the same interleaved rounds; prints the ratio and a\n"
    "                    sign test over all rounds\n"
    "  --keep            keep the work directories\n"
    "  --no-gate         skip the static gate (only to test the sandbox behind it;\n"
    "                    see docs/security.md)\n"
    "  --build-only      run the static gate and the compiler only (no reference, no\n"
    "                    device, nothing runs): verdict built, compile_error or forbidden\n"
    "  --cuda-arch LIST  cuda: GPU architectures, e.g. sm_90 or 80,90 (default 80,90;\n"
    "                    same as $KOPE_CUDA_ARCH)\n"
    "  -h, --help        this help\n\n"
    "verdicts: correct, compile_error, incorrect, crash, timeout, forbidden\n"
    "exit: 0 all kernels accepted, 1 a kernel was rejected, 2 bad input, 3 environment\n");
}

typedef struct eval_args {
  kope_eval_opts o;
  int json;
  const char *ops_dir;
  const char *op;
  char **kernels;
  int nkernels;
  const char *base;
} eval_args;

static int parse(int argc, char **argv, eval_args *a)
{
  static const struct option opts[] = {
    {"target", 1, 0, 't'}, {"device", 1, 0, 'D'},
    {"json", 0, 0, 'j'}, {"seeds", 1, 0, 's'}, {"seed", 1, 0, 'S'},
    {"threads", 1, 0, 'T'}, {"realtime", 0, 0, 'R'}, {"timeout", 1, 0, 'o'}, {"no-timing", 0, 0, 'n'},
    {"rounds", 1, 0, 'r'}, {"budget", 1, 0, 'b'}, {"cflags", 1, 0, 'c'},
    {"ops-dir", 1, 0, 'd'}, {"hw-cache", 1, 0, 'w'}, {"keep", 0, 0, 'k'},
    {"base", 1, 0, 'B'}, {"no-gate", 0, 0, 'G'}, {"build-only", 0, 0, 'O'},
    {"cuda-arch", 1, 0, 'A'}, {"help", 0, 0, 'h'}, {0, 0, 0, 0}
  };
  int ch, rc = KOPE_OK;

  kope_eval_opts_init(&a->o);
  optind = 1;
  while (rc == KOPE_OK && (ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
    switch (ch) {
    case 't': a->o.target = optarg; break;
    case 'D': a->o.device = optarg; break;
    case 'j': a->json = 1; break;
    case 's': rc = kope_cli_int("eval", "seeds", optarg, 1, 1000, &a->o.seeds); break;
    case 'S': rc = kope_cli_u64("eval", "seed", optarg, &a->o.seed); break;
    case 'T': rc = kope_cli_int("eval", "threads", optarg, 0, 4096, &a->o.threads); break;
    case 'R': rc = kope_cli_realtime("eval"); break;
    case 'o': rc = kope_cli_double("eval", "timeout", optarg, 0, 86400, &a->o.timeout_s); break;
    case 'n': a->o.timing = 0; break;
    case 'r': rc = kope_cli_int("eval", "rounds", optarg, 0, 100000, &a->o.min_rounds); break;
    case 'b': rc = kope_cli_double("eval", "budget", optarg, 0, 3600, &a->o.case_budget_s); break;
    case 'c': a->o.cflags = optarg; break;
    case 'd': a->ops_dir = optarg; break;
    case 'w': a->o.hw_cache = optarg; break;
    case 'k': a->o.keep_workdir = 1; break;
    case 'B': a->base = optarg; break;
    case 'G': a->o.no_gate = 1; break;
    case 'O': a->o.build_only = 1; break;
    case 'A': a->o.cuda_arch = optarg; break;
    case 'h': usage(stdout); return -1;
    default: usage(stderr); return KOPE_EINPUT;
    }
  }
  if (rc != KOPE_OK)
    return rc;
  if (argc - optind < 2) {
    fprintf(stderr, "kope eval: need an operator and at least one kernel file\n\n");
    usage(stderr);
    return KOPE_EINPUT;
  }
  if (a->o.seeds < 1 || a->o.timeout_s <= 0 || a->o.threads < 0) {
    fprintf(stderr, "kope eval: --seeds must be >= 1, --timeout > 0, --threads >= 0\n");
    return KOPE_EINPUT;
  }
  a->op = argv[optind];
  a->kernels = argv + optind + 1;
  a->nkernels = argc - optind - 1;
  return KOPE_OK;
}

/* --build-only: one JSON object per kernel, verdict "built" when admitted. */
static json_t *build_json(const char *path, const kope_report *r)
{
  kope_verdict v = kope_report_verdict(r);
  json_t *full = kope_report_to_json(r), *j;

  j = json_pack("{s:s, s:s, s:s, s:O}", "path", path, "verdict",
                v == KOPE_CORRECT ? "built" : kope_verdict_name(v), "reason",
                kope_report_reason(r), "diagnostics", json_object_get(full, "diagnostics"));
  json_decref(full);
  return j;
}

static void print_human(const char *path, const kope_report *r,
                        int build_only)
{
  json_t *j = kope_report_to_json(r), *cases = json_object_get(j, "cases"), *c;
  size_t i;

  printf("%s: %s — %s\n", path, kope_report_verdict(r) == KOPE_CORRECT && build_only ? "built" :
         kope_verdict_name(kope_report_verdict(r)), kope_report_reason(r));
  if (kope_report_verdict(r) == KOPE_COMPILE_ERROR)
    printf("%s", json_string_value(json_object_get(j, "diagnostics")));
  if (kope_report_accepted(r) && kope_report_speedup_ref(r) > 0 && !build_only) {
    printf("  %-4s %-5s %-16s %-24s %12s %12s %22s %10s %8s\n", "case", "role", "name", "dims",
           "kernel s", "ref s", "vs ref [95% CI]", "vs vendor", "roofline");
    json_array_foreach(cases, i, c) {
      char ci[48];
      json_t *sr = json_object_get(c, "speedup_ref"), *sv = json_object_get(c, "speedup_vendor");
      printf("  %-4zu %-5s %-16.16s %-24.24s", i, kope_case_role_name(kope_report_case_role(r, i)),
             kope_report_case_name(r, i), kope_report_case_label(r, i));
      if (!kope_report_case_timed(r, i)) {
        printf(" %12s\n", "correct, not timed");
        continue;
      }
      snprintf(ci, sizeof ci, "%.2fx [%.2f, %.2f]", json_real_value(json_object_get(sr, "median")),
               json_real_value(json_object_get(sr, "ci_lo")),
               json_real_value(json_object_get(sr, "ci_hi")));
      printf(" %12.3g %12.3g %22s %9.2fx %8.3f\n",
             json_real_value(json_object_get(json_object_get(c, "seconds"), "candidate")),
             json_real_value(json_object_get(json_object_get(c, "seconds"), "reference")), ci,
             sv ? json_real_value(json_object_get(sv, "median")) : 0.0,
             json_real_value(json_object_get(c, "roofline_fraction")));
    }
    printf("  geomean over the timed cases: %.3fx vs reference", kope_report_speedup_ref(r));
    if (kope_report_speedup_vendor(r) > 0)   /* the target's own vendor, named in the report */
      printf(", %.3fx vs %s", kope_report_speedup_vendor(r),
             json_string_value(json_object_get(j, "vendor")));
    printf(", roofline fraction %.3f\n", kope_report_roofline(r));
  }
  {
    kope_base_cmp b;
    if (kope_report_accepted(r) && kope_report_vs_base(r, &b))
      printf("  vs base: %.3fx [%.3f, %.3f], faster in %d of %d rounds (sign test p = %.2g)\n",
             b.speedup, b.lo, b.hi, b.wins, b.rounds, b.p_value);
  }
  printf("  compile %.2f s, total %.2f s, kope overhead %.1f ms\n",
         kope_report_compile_seconds(r), kope_report_total_seconds(r),
         1e3 * kope_report_overhead_seconds(r));
  json_decref(j);
}

static int run(eval_args *a, kope_op *op, char **sources)
{
  kope_err err;
  kope_evaluator *ev;
  kope_report **reps = calloc((size_t)a->nkernels, sizeof *reps);
  int i, rc, all = 1;

  if (!reps)
    return kope_cli_nomem("eval", "reports");
  kope_err_clear(&err);
  a->o.progress = kope_cli_progress;
  a->o.progress_ctx = "kope eval: ";
  ev = kope_evaluator_new(op, &a->o, &err);
  if (ev && a->base) {
    char *src = kope_file_read(a->base, NULL, &err);
    if (!src || kope_evaluator_set_base(ev, src, &err) != KOPE_OK) {
      kope_evaluator_free(ev);
      ev = NULL;
    }
    free(src);
  }
  if (!ev) {
    free(reps);
    return kope_cli_fail("eval", &err);
  }
  rc = kope_evaluate_batch(ev, (const char *const *)sources, (size_t)a->nkernels, reps, &err);
  kope_cli_progress_done();
  if (rc != KOPE_OK)
    kope_cli_fail("eval", &err);
  for (i = 0; rc == KOPE_OK && i < a->nkernels; i++)
    all &= a->o.build_only ? kope_report_verdict(reps[i]) == KOPE_CORRECT
                           : kope_report_accepted(reps[i]);
  if (rc == KOPE_OK && a->json && a->o.build_only) {
    json_t *arr = json_array();
    for (i = 0; i < a->nkernels; i++)
      json_array_append_new(arr, build_json(a->kernels[i], reps[i]));
    kope_cli_print_json(json_pack("{s:s, s:s, s:o}", "op", kope_op_name(op), "target",
                                  a->o.target, "builds", arr));
  } else if (rc == KOPE_OK && a->json && a->nkernels == 1) {
    kope_cli_print_json(kope_report_to_json(reps[0]));
  } else if (rc == KOPE_OK && a->json) {
    json_t *arr = json_array();
    for (i = 0; i < a->nkernels; i++)
      json_array_append_new(arr, kope_report_to_json(reps[i]));
    kope_cli_print_json(json_pack("{s:s, s:o}", "op", kope_op_name(op), "reports", arr));
  } else if (rc == KOPE_OK) {
    for (i = 0; i < a->nkernels; i++)
      print_human(a->kernels[i], reps[i], a->o.build_only);
  }
  for (i = 0; i < a->nkernels; i++)
    kope_report_free(reps[i]);
  free(reps);
  kope_evaluator_free(ev);
  return rc != KOPE_OK ? rc : all ? KOPE_OK : KOPE_EREJECT;
}

int kope_cmd_eval(int argc, char **argv)
{
  eval_args a;
  kope_err err;
  kope_op *op;
  char **sources;
  int i, rc;

  memset(&a, 0, sizeof a);
  if ((rc = parse(argc, argv, &a)) != KOPE_OK)
    return rc < 0 ? KOPE_OK : rc;
  kope_err_clear(&err);
  if (!(op = kope_op_load(a.op, a.ops_dir, &err)))
    return kope_cli_fail("eval", &err);
  if (!(sources = calloc((size_t)a.nkernels, sizeof *sources))) {
    kope_op_free(op);
    return kope_cli_nomem("eval", "kernel sources");
  }
  for (i = 0, rc = KOPE_OK; i < a.nkernels && rc == KOPE_OK; i++)
    if (!(sources[i] = kope_file_read(a.kernels[i], NULL, &err)))
      rc = kope_cli_fail("eval", &err);
  if (rc == KOPE_OK)
    rc = run(&a, op, sources);
  for (i = 0; i < a.nkernels; i++)
    free(sources[i]);
  free(sources);
  kope_op_free(op);
  return rc;
}
