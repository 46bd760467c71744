/*
 * The final re-measurement of kope bench: for one operator, the seed and
 * the final kernel of every run are judged by ONE evaluator in one batch
 * (compiled in parallel, then run one at a time), each timed in
 * interleaved rounds against the reference, the vendor library and a
 * common base kernel (the first configuration's kernel), with fresh
 * inputs and the full default timing. The batch order is rotated from
 * operator to operator so no configuration is always timed first.
 */
#include <stdlib.h>
#include <string.h>
#include "kope/eval.h"
#include "kope/op.h"
#include "bench/bench_int.h"

static kope_evaluator *open_eval(const kope_bench_opts *o, const kope_op *op,
                                 const char *base_src, kope_err *err)
{
  kope_bench_eval fe = kope_bench_final_eval(o);
  kope_eval_opts eo;
  kope_evaluator *ev;

  kope_eval_opts_init(&eo);
  eo.target = o->target;
  eo.seeds = fe.seeds;
  eo.threads = o->threads;
  eo.case_budget_s = fe.case_budget_s;
  if (!(ev = kope_evaluator_new(op, &eo, err)))
    return NULL;
  if (base_src && kope_evaluator_set_base(ev, base_src, err) != KOPE_OK) {
    kope_evaluator_free(ev);
    return NULL;
  }
  return ev;
}

static char **read_sources(json_t *kernels, kope_err *err)
{
  size_t n = json_array_size(kernels), i;
  char **src = calloc(n ? n : 1, sizeof *src);

  if (!src) {
    kope_err_nomem(err, "kernel sources");
    return NULL;
  }
  for (i = 0; i < n; i++)
    if (!(src[i] = kope_file_read(kope_bj_str(json_array_get(kernels, i), "path"), NULL, err)))
      break;
  if (i < n) {
    while (i > 0)
      free(src[--i]);
    free(src);
    return NULL;
  }
  return src;
}

static void free_sources(char **src, size_t n)
{
  size_t i;

  for (i = 0; src && i < n; i++)
    free(src[i]);
  free(src);
}

static int judge(kope_evaluator *ev, char **src, size_t n, size_t rot, kope_report **reps,
                 kope_err *err)
{
  const char **order = calloc(n ? n : 1, sizeof *order);
  kope_report **tmp = calloc(n ? n : 1, sizeof *tmp);
  size_t i;
  int rc;

  if (!order || !tmp) {
    free(order);
    free(tmp);
    return kope_err_nomem(err, "final evaluation");
  }
  for (i = 0; i < n; i++)
    order[i] = src[(i + rot) % n];
  rc = kope_evaluate_batch(ev, order, n, tmp, err);
  for (i = 0; i < n; i++)
    reps[(i + rot) % n] = tmp[i];
  free(order);
  free(tmp);
  return rc;
}

int kope_bench_final_op(const kope_bench_opts *o, const char *opname, json_t *kernels,
                        int base_index, json_t *out, kope_err *err)
{
  size_t n = json_array_size(kernels), i;
  kope_op *op = kope_op_load(opname, o->ops_dir, err);
  kope_evaluator *ev = NULL;
  kope_report **reps = NULL;
  char **src = NULL;
  static size_t rot;
  int rc = KOPE_OK;

  if (!op)
    return err->code;
  if (!(src = read_sources(kernels, err))) {
    rc = err->code;
    goto out;
  }
  if (!(ev = open_eval(o, op, base_index >= 0 ? src[base_index] : src[0], err))) {
    rc = err->code;
    goto out;
  }
  if (!(reps = calloc(n ? n : 1, sizeof *reps))) {
    rc = kope_err_nomem(err, "final reports");
    goto out;
  }
  if ((rc = judge(ev, src, n, rot++ % (n ? n : 1), reps, err)) != KOPE_OK)
    goto out;
  for (i = 0; i < n; i++) {
    json_t *k = json_deep_copy(json_array_get(kernels, i));
    json_object_set_new(k, "report", kope_report_to_json(reps[i]));
    json_object_set_new(k, "base", json_boolean((int)i == (base_index >= 0 ? base_index : 0)));
    json_array_append_new(out, k);
  }
out:
  for (i = 0; reps && i < n; i++)
    kope_report_free(reps[i]);
  free(reps);
  free_sources(src, n);
  kope_evaluator_free(ev);
  kope_op_free(op);
  return rc;
}
