/*
 * The suite's standing against the vendor libraries, from a kope-bench
 * document (issue 19's performance bar: the suite's geomean vs vendor over
 * perf cases, for the seeds and for the best kernels of a bench run).
 * Nothing is re-run: the bench's final re-measurement already timed the
 * seed and every run's final kernel side by side against the reference
 * and the vendor library, case by case. Per operator the seed row and the
 * best kernel (the accepted non-seed kernel with the highest geomean
 * speedup vs the reference over perf cases; the seed when no run found
 * one) are summarised over the operator's timed cases (role "perf" or no
 * role; "check" cases are judged, never scored), and the suite-wide
 * geomeans are taken over the operators where both the seed and the best
 * kernel have a vendor figure, so the two lines compare the same set.
 * Several documents (a bench split into runs) give one table; an operator
 * in more than one takes its row from the last.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "bench/bench_int.h"

/* One kernel's figures over the perf cases of its report. */
typedef struct suite_fig {
  int accepted;
  int ncases;                  /* perf cases with a speedup vs the reference */
  int nven;                    /* perf cases with a vendor ratio */
  double log_ref, log_ven;     /* sums of logs over those cases */
} suite_fig;

static int case_is_perf(const json_t *jc)
{
  return strcmp(kope_bj_str(jc, "role"), "check") != 0 &&
         !json_is_false(json_object_get(jc, "timed"));
}

static void fig_of(const json_t *k, suite_fig *f)
{
  json_t *rep = json_object_get(k, "report"), *jc;
  size_t c;

  memset(f, 0, sizeof *f);
  if (!rep || !(f->accepted = kope_bj_bool(rep, "accepted")))
    return;
  json_array_foreach(json_object_get(rep, "cases"), c, jc) {
    double sr = kope_bj_num2(jc, "speedup_ref", "median", 0);
    double sv = kope_bj_num2(jc, "speedup_vendor", "median", 0);
    if (!case_is_perf(jc))
      continue;
    if (sr > 0) {
      f->log_ref += log(sr);
      f->ncases++;
    }
    if (sv > 0) {
      f->log_ven += log(sv);
      f->nven++;
    }
  }
}

static double fig_ref(const suite_fig *f)
{
  return f->ncases ? exp(f->log_ref / f->ncases) : 0.0;
}

static double fig_ven(const suite_fig *f)
{
  return f->nven ? exp(f->log_ven / f->nven) : 0.0;
}

/* The accepted non-seed kernel of op's final batch with the highest
 * speedup vs the reference over perf cases; NULL when none. */
static const json_t *best_kernel(const json_t *final_op, suite_fig *best)
{
  const json_t *pick = NULL;
  json_t *k;
  size_t i;
  suite_fig f;

  json_array_foreach(json_object_get(final_op, "kernels"), i, k) {
    if (!strcmp(kope_bj_str(k, "config"), "seed"))
      continue;
    fig_of(k, &f);
    if (f.accepted && f.ncases && (!pick || fig_ref(&f) > fig_ref(best))) {
      pick = k;
      *best = f;
    }
  }
  return pick;
}

static const json_t *final_of(const json_t *doc, const char *op)
{
  json_t *f;
  size_t i;

  json_array_foreach(json_object_get(doc, "final"), i, f)
    if (!strcmp(kope_bj_str(f, "op"), op))
      return f;
  return NULL;
}

static json_t *fig_json(const suite_fig *f, const json_t *k)
{
  json_t *ven = f->nven ? json_real(fig_ven(f)) : json_null();

  return json_pack("{s:s, s:i, s:s?, s:b, s:i, s:f, s:o, s:i}", "config",
                   k ? kope_bj_str(k, "config") : "seed", "repeat",
                   k ? (int)kope_bj_num(k, "repeat", 0) : 0,
                   "path", k ? kope_bj_str(k, "path") : NULL, "accepted", f->accepted,
                   "perf_cases", f->ncases, "speedup_ref", fig_ref(f), "speedup_vendor", ven,
                   "vendor_cases", f->nven);
}

/* Suite-wide accumulators: per-operator geomeans and pooled cases. */
typedef struct suite_acc {
  int nops, ncases;
  double log_op, log_case;
} suite_acc;

/* Add a row's kernel ({speedup_vendor, vendor_cases}): the pooled log sum
 * is vendor_cases x log of its geomean. */
static void acc_add(suite_acc *a, const json_t *k)
{
  double g = kope_bj_num(k, "speedup_vendor", 0);
  int n = (int)kope_bj_num(k, "vendor_cases", 0);

  a->nops++;
  a->log_op += log(g);
  a->ncases += n;
  a->log_case += n * log(g);
}

static json_t *acc_json(const suite_acc *a)
{
  return json_pack("{s:i, s:f, s:i, s:f}", "operators", a->nops, "geomean_speedup_vendor",
                   a->nops ? exp(a->log_op / a->nops) : 0.0, "perf_cases", a->ncases,
                   "geomean_speedup_vendor_cases", a->ncases ? exp(a->log_case / a->ncases) : 0.0);
}

/* Both kernels of a row accepted with a vendor figure. */
static int row_counts(const json_t *row)
{
  const json_t *s = json_object_get(row, "seed"), *b = json_object_get(row, "best");

  return kope_bj_bool(s, "accepted") && kope_bj_bool(b, "accepted") &&
         kope_bj_num(s, "speedup_vendor", 0) > 0 && kope_bj_num(b, "speedup_vendor", 0) > 0;
}

/* One operator's row of document number d. */
static json_t *op_row(const json_t *doc, size_t d, const json_t *op)
{
  const char *name = kope_bj_str(op, "name");
  const json_t *fo = final_of(doc, name), *bk;
  const json_t *sk = kope_bench_final_kernel(doc, name, "seed", 0);
  suite_fig sf, bf;
  json_t *vendor = json_object_get(op, "vendor");

  fig_of(sk, &sf);
  bk = fo ? best_kernel(fo, &bf) : NULL;
  if (!bk)
    bf = sf;
  return json_pack("{s:s, s:i, s:O, s:o, s:o, s:b, s:s?}", "name", name, "document", (int)d,
                   "vendor", vendor ? vendor : json_null(), "seed", fig_json(&sf, sk), "best",
                   fig_json(&bf, bk ? bk : sk), "best_is_seed", bk == NULL, "error",
                   fo && json_is_string(json_object_get(fo, "error")) ? kope_bj_str(fo, "error")
                                                                     : NULL);
}

/* Put row in rows, replacing an earlier document's row of the same
 * operator. Steals row; -1 when out of memory. */
static int rows_put(json_t *rows, json_t *row)
{
  const char *name = kope_bj_str(row, "name");
  json_t *r;
  size_t i;

  json_array_foreach(rows, i, r)
    if (!strcmp(kope_bj_str(r, "name"), name))
      return json_array_set_new(rows, i, row);
  return json_array_append_new(rows, row);
}

static int doc_ok(const json_t *doc)
{
  return !strcmp(kope_bj_str(doc, "format"), KOPE_BENCH_FORMAT) &&
         json_is_array(json_object_get(doc, "operators")) &&
         json_is_array(json_object_get(doc, "final"));
}

int kope_bench_suite(json_t *const *docs, size_t n, json_t **out, kope_err *err)
{
  suite_acc seeds = {0, 0, 0, 0}, bests = {0, 0, 0, 0};
  json_t *rows, *op, *row;
  size_t d, i;

  *out = NULL;
  for (d = 0; d < n; d++)
    if (!doc_ok(docs[d]))
      return kope_err_set(err, KOPE_EINPUT, "document %zu is not a kope-bench results document "
                                            "with a final re-measurement", d + 1);
  if (!(rows = json_array()))
    return kope_err_nomem(err, "bench suite");
  for (d = 0; d < n; d++)
    json_array_foreach(json_object_get(docs[d], "operators"), i, op)
      if (!(row = op_row(docs[d], d, op)) || rows_put(rows, row)) {
        json_decref(rows);
        return kope_err_nomem(err, "bench suite");
      }
  json_array_foreach(rows, i, row)
    if (row_counts(row)) {
      acc_add(&seeds, json_object_get(row, "seed"));
      acc_add(&bests, json_object_get(row, "best"));
    }
  *out = json_pack("{s:o, s:{s:o, s:o, s:s}}", "operators", rows, "summary", "seeds",
                   acc_json(&seeds), "best", acc_json(&bests), "over",
                   "perf (timed) cases only; operators where the seed and the best kernel "
                   "both have a vendor ratio");
  return *out ? KOPE_OK : kope_err_nomem(err, "bench suite");
}
