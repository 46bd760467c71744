/*
 * Unit tests for kope bench's metrics and report (src/bench): the
 * CANN-Bench-style case score, bootstrap geomeans, evaluations-to-90%,
 * the metrics of a small hand-built results document whose answers are
 * worked out here (pass rate over operator x case pairs with a failed and
 * a missing operator, fast_p, paired ratios, score, curves), the HTML and
 * Markdown renderings of it, and the private copies of a memory store
 * (copy + import of an export) on real SQLite files.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "kope/bench.h"
#include "kope/mem.h"
#include "bench/bench_int.h"

static void test_case_score(void **state)
{
  (void)state;
  assert_float_equal(kope_bench_case_score(1.0, 1.0, 0.1), 0.5, 1e-12);      /* parity */
  assert_float_equal(kope_bench_case_score(0.1, 1.0, 0.1), 1.0, 1e-12);      /* roofline */
  assert_float_equal(kope_bench_case_score(0.05, 1.0, 0.1), 1.0, 1e-12);     /* clamped */
  /* (1 - 0.1) / ((2 - 0.1) + (1 - 0.1)) */
  assert_float_equal(kope_bench_case_score(2.0, 1.0, 0.1), 0.9 / 2.8, 1e-12);
  /* unknown roofline: T_base / (T_cand + T_base) */
  assert_float_equal(kope_bench_case_score(3.0, 1.0, 0.0), 0.25, 1e-12);
  assert_float_equal(kope_bench_case_score(0.0, 1.0, 0.1), 0.0, 0);
  assert_float_equal(kope_bench_case_score(0.1, 0.1, 0.1), 0.5, 0);
  assert_true(kope_bench_case_score(1.5, 1.0, 0.2) < kope_bench_case_score(1.2, 1.0, 0.2));
}

static void test_geomean_ci(void **state)
{
  double v[] = {1, 4, 16, -3, 0};
  double w[40], lo, hi, lo2, hi2, g;
  int i;

  (void)state;
  assert_float_equal(kope_bench_geomean_ci(v, 5, 0, 1, &lo, &hi), 4.0, 1e-12);
  for (i = 0; i < 40; i++)
    w[i] = i % 2 ? 2.0 : 0.5 + 0.01 * i;
  g = kope_bench_geomean_ci(w, 40, 2000, 7, &lo, &hi);
  assert_true(lo < g && g < hi);
  assert_true(lo > 0.5 && hi < 2.0);
  kope_bench_geomean_ci(w, 40, 2000, 7, &lo2, &hi2);
  assert_float_equal(lo, lo2, 0);   /* deterministic */
  assert_float_equal(hi, hi2, 0);
  assert_float_equal(kope_bench_geomean_ci(v + 3, 2, 100, 1, &lo, &hi), 0.0, 0);
}

static void test_evals_to_reach(void **state)
{
  double c[] = {1.0, 1.5, 1.5, 3.0, 3.2};
  double flat[] = {2.0, 2.0};
  double fail[] = {0.0, 0.0};

  (void)state;
  assert_int_equal(kope_bench_evals_to_reach(c, 5, 0.9), 3);   /* 3.0 >= 2.88 */
  assert_int_equal(kope_bench_evals_to_reach(c, 5, 0.4), 1);
  assert_int_equal(kope_bench_evals_to_reach(flat, 2, 0.9), 0);
  assert_int_equal(kope_bench_evals_to_reach(fail, 2, 0.9), -1);
  assert_int_equal(kope_bench_evals_to_reach(c, 0, 0.9), -1);
}

static void test_configs(void **state)
{
  const kope_bench_config *c = kope_bench_config_find("tuner-nomemory");

  (void)state;
  assert_non_null(c);
  assert_string_equal(c->policy, "tuner");
  assert_int_equal(c->memory, 1);
  assert_int_equal(kope_bench_config_find("both")->store, KOPE_BENCH_STORE_BOTH);
  assert_int_equal(kope_bench_config_find("passive")->context, 1);
  assert_null(kope_bench_config_find("nonsense"));
  assert_non_null(kope_bench_config_at(0));
}

/* ---- a hand-built document ---- */

/* A timed case: candidate time tc, reference time tr (speedup tr / tc),
 * vendor time tv, roofline time thw. */
static json_t *tcase(double tc, double tr, double tv, double thw)
{
  return json_pack("{s:{s:f, s:f, s:f}, s:{s:f}, s:{s:f}, s:f}", "seconds", "candidate", tc,
                   "reference", tr, "vendor", tv, "speedup_ref", "median", tr / tc,
                   "speedup_vendor", "median", tv / tc, "roofline_fraction", thw / tc);
}

static json_t *kernel(const char *cfg, json_t *report)
{
  return json_pack("{s:s, s:i, s:s, s:o}", "config", cfg, "repeat", 0, "path", "x.c", "report",
                   report);
}

static json_t *accepted(json_t *cases)
{
  double s = 0, v = 0;
  size_t i, n = json_array_size(cases);
  json_t *c;

  json_array_foreach(cases, i, c) {
    s += log(json_real_value(json_object_get(json_object_get(c, "speedup_ref"), "median")));
    v += log(json_real_value(json_object_get(json_object_get(c, "speedup_vendor"), "median")));
  }
  return json_pack("{s:b, s:s, s:o, s:f, s:f, s:f}", "accepted", 1, "verdict", "correct",
                   "cases", cases, "speedup_ref", exp(s / n), "speedup_vendor", exp(v / n),
                   "roofline_fraction", 0.25);
}

static json_t *doc_fixture(void)
{
  json_t *d = json_pack(
      "{s:s, s:i, s:{s:i, s:i, s:[{s:s}, {s:s}]}, s:[{s:s, s:i}, {s:s, s:i}], s:[]}",
      "format", "kope-bench", "schema", 1, "settings", "repeats", 1, "budget_evals", 3,
      "configs", "name", "A", "name", "B", "operators", "name", "op1", "ncases", 2, "name",
      "op2", "ncases", 3, "runs");
  json_t *f1, *f2, *runs = json_object_get(d, "runs");

  /* op1: seed 1x and 2x; A 2x and 8x (geomean 4x); B 1x and 2x. Vendor
   * at 4x the reference. */
  f1 = json_pack("{s:s, s:[o, o, o]}", "op", "op1", "kernels",
                 kernel("seed", accepted(json_pack("[o, o]", tcase(1, 1, 0.25, 0.1),
                                                   tcase(0.5, 1, 0.25, 0.1)))),
                 kernel("A", accepted(json_pack("[o, o]", tcase(0.5, 1, 0.25, 0.1),
                                                tcase(0.125, 1, 0.25, 0.1)))),
                 kernel("B", accepted(json_pack("[o, o]", tcase(1, 1, 0.25, 0.1),
                                                tcase(0.5, 1, 0.25, 0.1)))));
  /* op2: A wrong on case 1 (case 0 passed), B has no kernel at all. */
  f2 = json_pack("{s:s, s:[o]}", "op", "op2", "kernels",
                 kernel("A", json_pack("{s:b, s:s, s:{s:i}, s:[]}", "accepted", 0, "verdict",
                                       "incorrect", "mismatch", "case", 1, "cases")));
  json_object_set_new(d, "final", json_pack("[o, o]", f1, f2));
  json_array_append_new(runs, json_pack("{s:s, s:s, s:i, s:b, s:i, s:i, s:[f, f, f, f]}", "op",
                                        "op1", "config", "A", "repeat", 0, "passed", 1,
                                        "evaluations", 3, "tokens", 100, "curve", 1.0, 2.0,
                                        2.0, 4.0));
  json_array_append_new(runs, json_pack("{s:s, s:s, s:i, s:b, s:i, s:i, s:[f, f, f, f]}", "op",
                                        "op1", "config", "B", "repeat", 0, "passed", 1,
                                        "evaluations", 3, "tokens", 0, "curve", 1.0, 2.0, 2.0,
                                        2.0));
  json_array_append_new(runs, json_pack("{s:s, s:s, s:i, s:b, s:i, s:[{s:i, s:i, s:s, s:b, "
                                        "s:f, s:s}]}", "op", "op2", "config", "A", "repeat", 0,
                                        "passed", 0, "evaluations", 3, "forest", "id", 5, "prev",
                                        0, "thought", "start.seed", "correct", 1, "speedup", 1.0,
                                        "label", "partial"));
  return d;
}

static json_t *cm(json_t *d, const char *cfg)
{
  return json_object_get(json_object_get(json_object_get(d, "metrics"), "configs"), cfg);
}

static double num(json_t *o, const char *k)
{
  return json_number_value(json_object_get(o, k));
}

static void test_metrics(void **state)
{
  json_t *d = doc_fixture(), *a, *b, *p;
  kope_err err;

  (void)state;
  kope_err_clear(&err);
  assert_int_equal(kope_bench_metrics(d, &err), KOPE_OK);
  a = cm(d, "A");
  b = cm(d, "B");
  /* pass rate over 5 (operator x case) pairs */
  assert_int_equal((int)num(a, "cases_total"), 5);
  assert_float_equal(num(a, "pass_rate"), 3.0 / 5, 1e-9);
  assert_float_equal(num(b, "pass_rate"), 2.0 / 5, 1e-9);
  assert_float_equal(num(a, "ops_any_pass"), 2, 0);
  assert_float_equal(num(a, "ops_solved"), 1, 0);
  assert_float_equal(num(b, "ops_any_pass"), 1, 0);
  /* speedups over the operators that passed */
  assert_float_equal(num(a, "geomean_speedup_ref"), 4.0, 1e-6);
  assert_float_equal(num(b, "geomean_speedup_ref"), sqrt(2.0), 1e-6);
  assert_float_equal(num(a, "geomean_speedup_vendor"), 1.0, 1e-6);
  /* fast_p: fraction of all operators */
  assert_float_equal(num(json_object_get(a, "fast_p"), "1.0"), 0.5, 1e-9);
  assert_float_equal(num(json_object_get(a, "fast_p"), "2.0"), 0.5, 1e-9);
  assert_float_equal(num(json_object_get(b, "fast_p"), "1.0"), 0.5, 1e-9);
  assert_float_equal(num(json_object_get(b, "fast_p"), "1.5"), 0.0, 1e-9);
  /* score: A's op1 cases, the others 0; mean over 5 pairs, x100 */
  assert_float_equal(num(a, "score"),
                     100.0 * (kope_bench_case_score(0.5, 1, 0.1) +
                              kope_bench_case_score(0.125, 1, 0.1)) / 5, 1e-4);
  assert_int_equal((int)num(a, "evaluations"), 6);
  assert_int_equal((int)num(a, "tokens"), 100);
  assert_float_equal(num(a, "evals_to_90_median"), 3, 0);
  assert_float_equal(json_number_value(json_array_get(json_object_get(a, "curve"), 3)), 4.0, 1e-6);
  /* paired A / B on op1's two cases: 2 and 4 */
  p = json_array_get(json_object_get(d, "paired"), 0);
  assert_string_equal(json_string_value(json_object_get(p, "a")), "A");
  assert_int_equal((int)num(p, "cases"), 2);
  assert_int_equal((int)num(p, "a_faster"), 2);
  assert_float_equal(num(p, "ratio"), sqrt(8.0), 1e-6);
  assert_true(num(p, "ci_lo") >= 2.0 - 1e-9 && num(p, "ci_hi") <= 4.0 + 1e-9);
  /* seed and vendor per operator */
  assert_float_equal(num(json_object_get(json_object_get(json_object_get(d, "metrics"),
                                                         "operators"), "op1"),
                         "vendor_speedup_ref"), 4.0, 1e-6);
  json_decref(d);
}

/* Check cases (role "check", never timed) count for the pass rate, never
 * for the score: one operator, a check case and two perf cases. */
static void test_metrics_check_cases(void **state)
{
  json_t *perf = json_pack("[o, o]", tcase(0.5, 1, 0.25, 0.1), tcase(0.25, 1, 0.25, 0.1));
  json_t *cases = json_pack("[{s:s, s:s, s:s, s:b}]", "name", "tiny_prime", "shape", "n=7",
                            "role", "check", "timed", 0), *rep, *d, *a;
  kope_bench_report_opts o = {"Roles", NULL, NULL};
  char *html;
  kope_err err;
  size_t i;
  json_t *c;

  (void)state;
  json_array_foreach(perf, i, c)
    json_object_set_new(c, "role", json_string("perf"));
  rep = accepted(json_incref(perf));   /* geomeans over the perf cases, as the evaluator */
  json_array_extend(cases, perf);
  json_decref(perf);
  json_object_set_new(rep, "cases", cases);
  d = json_pack("{s:s, s:i, s:{s:i, s:i, s:[{s:s}]}, s:[{s:s, s:i}], s:[], s:[{s:s, s:[o]}]}",
                "format", "kope-bench", "schema", 1, "settings", "repeats", 1, "budget_evals",
                1, "configs", "name", "A", "operators", "name", "op1", "ncases", 3, "runs",
                "final", "op", "op1", "kernels", kernel("A", rep));
  kope_err_clear(&err);
  assert_int_equal(kope_bench_metrics(d, &err), KOPE_OK);
  a = cm(d, "A");
  assert_int_equal((int)num(a, "cases_total"), 3);
  assert_float_equal(num(a, "pass_rate"), 1.0, 1e-9);
  /* the mean over the two perf cases, not over all three */
  assert_float_equal(num(a, "score"),
                     100.0 * (kope_bench_case_score(0.5, 1, 0.1) +
                              kope_bench_case_score(0.25, 1, 0.1)) / 2, 1e-4);
  assert_float_equal(num(a, "geomean_speedup_ref"), sqrt(8.0), 1e-5);
  /* the HTML per-case table names the check case and does not time it */
  html = kope_bench_html(&d, 1, &o, &err);
  assert_non_null(html);
  assert_non_null(strstr(html, "id='per-case-table'"));
  assert_non_null(strstr(html, "<td>tiny_prime</td><td>n=7</td><td>check</td><td>not timed</td>"));
  assert_non_null(strstr(html, "<td>perf</td><td>4.000x</td>"));
  free(html);
  json_decref(d);
}

static void test_metrics_rejects(void **state)
{
  json_t *d = json_pack("{s:s}", "format", "kope-memory");
  kope_err err;

  (void)state;
  kope_err_clear(&err);
  assert_int_equal(kope_bench_metrics(d, &err), KOPE_EINPUT);
  json_decref(d);
}

static void test_reports(void **state)
{
  json_t *d = doc_fixture();
  kope_bench_report_opts o = {"Test report", "op2", NULL};
  kope_err err;
  char *html, *md;

  (void)state;
  kope_err_clear(&err);
  assert_int_equal(kope_bench_metrics(d, &err), KOPE_OK);
  html = kope_bench_html(&d, 1, &o, &err);
  assert_non_null(html);
  assert_non_null(strstr(html, "<title>Test report</title>"));
  assert_non_null(strstr(html, "id='summary'"));
  assert_non_null(strstr(html, "class='chart bars'"));
  assert_non_null(strstr(html, "class='chart curves'"));
  assert_non_null(strstr(html, "class='chart forest'"));
  assert_non_null(strstr(html, "class='parity'"));
  assert_non_null(strstr(html, "class='vendor'"));
  assert_non_null(strstr(html, "60.0% (3/5)"));
  assert_non_null(strstr(html, "2.828x"));
  assert_null(strstr(html, "<script"));
  md = kope_bench_markdown(&d, 1, &o, &err);
  assert_non_null(md);
  assert_non_null(strstr(md, "| A | 60.0% (3/5) |"));
  assert_non_null(strstr(md, "| op2 |"));
  free(html);
  free(md);
  json_decref(d);
}

/* ---- stores ---- */

static int64_t count_cases(const char *path)
{
  kope_err err;
  kope_db *db;
  kope_mem_stats st;
  int64_t n;

  kope_err_clear(&err);
  db = kope_db_open(path, KOPE_DB_NOCREATE, &err);
  assert_non_null(db);
  memset(&st, 0, sizeof st);
  assert_int_equal(kope_mem_stats_get(db, &st, &err), KOPE_OK);
  n = st.cases;
  kope_mem_stats_release(&st);
  kope_db_close(db);
  return n;
}

static void add_case(const char *path, const char *op)
{
  kope_err err;
  kope_db *db;
  kope_mem_case_in c;
  int64_t id;

  kope_err_clear(&err);
  assert_non_null(db = kope_db_open(path, 0, &err));
  kope_mem_case_in_init(&c);
  c.op = op;
  c.target = "cpu";
  c.verdict = "correct";
  c.score.correct = 1;
  c.score.speedup = 1.5;
  assert_int_equal(kope_mem_case_insert(db, &c, &id, &err), KOPE_OK);
  kope_db_close(db);
}

static void test_store_copies(void **state)
{
  char dir[] = "/tmp/kope-test-bench-XXXXXX", *start, *copy, *src, *exp_path, *both;
  kope_err err;
  kope_db *db;
  FILE *f;

  (void)state;
  assert_non_null(mkdtemp(dir));
  start = kope_path_join(dir, "start.db");
  copy = kope_path_join(dir, "copy.db");
  src = kope_path_join(dir, "other.db");
  exp_path = kope_path_join(dir, "other.json");
  both = kope_path_join(dir, "both.db");
  add_case(start, "relu");
  add_case(start, "relu");
  add_case(src, "softmax");
  kope_err_clear(&err);
  assert_non_null(db = kope_db_open(src, 0, &err));
  assert_non_null(f = fopen(exp_path, "w"));
  assert_int_equal(kope_mem_export(db, f, KOPE_MEM_FMT_JSON, NULL, 0, &err), KOPE_OK);
  fclose(f);
  kope_db_close(db);
  /* a copy has the cases; writing to it leaves the original alone */
  assert_int_equal(kope_bench_store_prepare(copy, start, NULL, &err), KOPE_OK);
  assert_int_equal(count_cases(copy), 2);
  add_case(copy, "relu");
  assert_int_equal(count_cases(copy), 3);
  assert_int_equal(count_cases(start), 2);
  /* preparing again starts over */
  assert_int_equal(kope_bench_store_prepare(copy, start, NULL, &err), KOPE_OK);
  assert_int_equal(count_cases(copy), 2);
  /* empty, source only, both */
  assert_int_equal(kope_bench_store_prepare(copy, NULL, NULL, &err), KOPE_OK);
  assert_int_equal(count_cases(copy), 0);
  assert_int_equal(kope_bench_store_prepare(copy, NULL, exp_path, &err), KOPE_OK);
  assert_int_equal(count_cases(copy), 1);
  assert_int_equal(kope_bench_store_prepare(both, start, exp_path, &err), KOPE_OK);
  assert_int_equal(count_cases(both), 3);
  /* a file that is not a store is refused */
  assert_int_equal(kope_bench_store_prepare(copy, exp_path, NULL, &err), KOPE_EINPUT);
  kope_rmtree(dir);
  free(start);
  free(copy);
  free(src);
  free(exp_path);
  free(both);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_case_score),
    cmocka_unit_test(test_geomean_ci),
    cmocka_unit_test(test_evals_to_reach),
    cmocka_unit_test(test_configs),
    cmocka_unit_test(test_metrics),
    cmocka_unit_test(test_metrics_check_cases),
    cmocka_unit_test(test_metrics_rejects),
    cmocka_unit_test(test_reports),
    cmocka_unit_test(test_store_copies),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
