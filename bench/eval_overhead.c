/*
 * bench_eval_overhead: kope's own time per evaluation — everything except
 * compiling and waiting on worker processes (input generation, poisoning,
 * comparison, hashing, bookkeeping, report). For each operator it
 * evaluates the seed kernel R times with timing on and prints the median
 * and maximum overhead next to the total wall time. Target: < 50 ms.
 *
 *   build/bench_eval_overhead [--repeats R] [--no-timing] [--all | OP ...]
 *
 * --all: every operator under the operator directory (kope_ops_dir()).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kope/eval.h"
#include "kope/op.h"
#include "core/stats.h"

static int bench_op(const char *name, int repeats, int timing)
{
  kope_err err;
  kope_op *op = kope_op_load(name, NULL, &err);
  kope_eval_opts o;
  kope_evaluator *ev = NULL;
  char *src = NULL;
  double over[64], total[64], work[64];
  int i, rc = 0;

  if (!op || !(src = kope_file_read(kope_op_seed_path(op), NULL, &err))) {
    fprintf(stderr, "%s\n", err.msg);
    rc = 2;
    goto out;
  }
  kope_eval_opts_init(&o);
  o.timing = timing;
  o.case_budget_s = 0.02;
  o.min_rounds = 5;
  if (!(ev = kope_evaluator_new(op, &o, &err))) {
    fprintf(stderr, "%s\n", err.msg);
    rc = 3;
    goto out;
  }
  for (i = 0; i < repeats && i < 64; i++) {
    kope_report *r = kope_evaluate(ev, src, &err);
    if (!r || !kope_report_accepted(r)) {
      fprintf(stderr, "%s: %s\n", name, r ? kope_report_reason(r) : err.msg);
      kope_report_free(r);
      rc = 1;
      goto out;
    }
    over[i] = 1e3 * kope_report_overhead_seconds(r);
    total[i] = 1e3 * kope_report_total_seconds(r);
    work[i] = total[i] - over[i] - 1e3 * kope_report_compile_seconds(r);
    kope_report_free(r);
  }
  {
    double mx = 0;
    for (int k = 0; k < i; k++)
      mx = over[k] > mx ? over[k] : mx;
    printf("%-10s %6zu %12.1f %12.1f %12.1f %12.1f\n", name, kope_op_ncases(op),
           kope_median(over, (size_t)i), mx, kope_median(work, (size_t)i),
           kope_median(total, (size_t)i));
  }
out:
  kope_evaluator_free(ev);
  kope_op_free(op);
  free(src);
  return rc;
}

/* Every operator of kope_ops_dir(): names owned by the caller (*names and
 * each entry, kope_strv_free). Returns the count, 0 when the directory cannot be listed. */
static size_t all_ops(char ***names)
{
  kope_err err;
  char *dir = kope_ops_dir();
  size_t n = 0;

  *names = NULL;
  if (!dir || kope_ops_list(dir, names, &n, &err) != 0) {
    fprintf(stderr, "cannot list the operators: %s\n", dir ? err.msg : "no directory");
    n = 0;
  }
  free(dir);
  return n;
}

int main(int argc, char **argv)
{
  const char *defaults[] = {"relu", "softmax", "matmul", "rms_norm"};
  int repeats = 5, timing = 1, all = 0, i, n = 0, rc = 0;
  const char *ops[512];
  char **names = NULL;
  size_t nall = 0, k;

  setvbuf(stdout, NULL, _IOLBF, 0);   /* a row per operator as it is done */
  for (i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--repeats") && i + 1 < argc)
      repeats = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--no-timing"))
      timing = 0;
    else if (!strcmp(argv[i], "--all"))
      all = 1;
    else if (n < 512)
      ops[n++] = argv[i];
  }
  if (all)
    for (nall = all_ops(&names), k = 0; k < nall && n < 512; k++)
      ops[n++] = names[k];
  if (n == 0)
    for (n = 0; n < 4; n++)
      ops[n] = defaults[n];
  printf("kope evaluator overhead, %d evaluations per operator, timing %s\n", repeats,
         timing ? "on" : "off");
  printf("%-10s %6s %12s %12s %12s %12s\n", "operator", "cases", "overhead ms", "max ms",
         "workers ms", "total ms");
  for (i = 0; i < n; i++)
    rc |= bench_op(ops[i], repeats, timing);
  kope_strv_free(names, nall);
  return rc;
}
