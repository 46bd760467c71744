/*
 * Unit tests of retrieval and exchange: full-text retrieval across
 * operators (Case text, Journals, digests, bm25), error-driven retrieval
 * (same normalized error, what fixed it), digests (counts, median, text
 * survives refresh), the export -> import round trip (ids remapped, uids
 * and provenance kept, idempotent, scores identical), refusing a bad
 * import without changing anything, and the md/dot exports carrying the
 * facts. Real SQLite files in mkdtemp directories.
 */
#include <jansson.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "kope_test.h"
#include "kope/core.h"
#include "kope/mem.h"

typedef struct fx {
  char dir[64];
  kope_db *db;
  int64_t session;
} fx;

static char *in_dir(fx *f, const char *name)
{
  return kope_path_join(f->dir, name);
}

static int setup(void **state)
{
  fx *f = calloc(1, sizeof *f);
  kope_err err = {0};
  char *path;

  kt_tmpdir(f->dir, sizeof f->dir, "memtest");
  path = in_dir(f, "kope.db");
  f->db = kope_db_open(path, 0, &err);
  free(path);
  assert_non_null(f->db);
  *state = f;
  return 0;
}

static int teardown(void **state)
{
  fx *f = *state;

  kope_db_close(f->db);
  kope_rmtree(f->dir);
  free(f);
  return 0;
}

typedef struct spec {
  int64_t prev;
  const char *op, *category, *layer, *thought, *title, *verdict, *feedback, *journal;
  double speedup;
} spec;

static int64_t add(fx *f, spec s)
{
  kope_mem_case_in c;
  kope_err err = {0};
  int64_t id = 0;
  char code[128];

  kope_mem_case_in_init(&c);
  snprintf(code, sizeof code, "void %s(void) { /* %s */ }", s.op, s.thought);
  c.session_id = f->session;
  c.prev_case_id = s.prev;
  c.op = s.op;
  c.category = s.category ? s.category : "reduction";
  c.target = "cpu";
  c.hw = "hw-test";
  c.layer = s.layer;
  c.thought_id = s.thought;
  c.thought_title = s.title;
  c.verdict = s.verdict ? s.verdict : "correct";
  c.score.correct = !strcmp(c.verdict, "correct");
  c.score.speedup = s.speedup > 0 ? s.speedup : NAN;
  c.feedback = s.feedback;
  c.journal = s.journal;
  c.code_after = code;
  c.score.confidence = 0.8;
  if (kope_mem_case_insert(f->db, &c, &id, &err) != KOPE_OK)
    fail_msg("insert: %s", err.msg);
  return id;
}

static int has_case(const kope_mem_recs *r, int64_t id)
{
  size_t i;

  for (i = 0; i < r->n; i++)
    if (r->v[i].kind == KOPE_MEM_REC_CASE && r->v[i].id == id)
      return 1;
  return 0;
}

/* ---- full-text retrieval ---------------------------------------------- */

static void test_text_transfer(void **state)
{
  fx *f = *state;
  kope_mem_state st = {0};
  kope_mem_recs r;
  kope_err err = {0};
  int64_t base = add(f, (spec){0, "softmax", "reduction", NULL, "baseline", "reference",
                               NULL, NULL, NULL, 1.0});
  int64_t online = add(f, (spec){base, "softmax", "reduction", "algorithm",
                                 "algorithm.online=on", "Online normalizer in a single pass",
                                 NULL, NULL, NULL, 1.8});
  int64_t journ = add(f, (spec){base, "softmax", "reduction", "memory", "memory.prefetch=on",
                                "Prefetch the next row", NULL, NULL,
                                "## step\nThe welford recurrence kept accuracy.", 1.1});
  int64_t other = add(f, (spec){0, "relu", "elementwise", "vectorize", "vectorize.width=8",
                                "AVX2 lanes", NULL, NULL, NULL, 1.0});

  kope_mem_recs_init(&r);
  st.op = "layer_norm";        /* a different operator: transfer by text only */
  st.target = "cpu";
  st.text = "layer_norm needs a single pass online normalizer";
  assert_int_equal(kope_mem_retrieve(f->db, &st, NULL, 8, &r, &err), KOPE_OK);
  assert_true(has_case(&r, online));
  assert_false(has_case(&r, other));
  assert_true(r.v[0].match & KOPE_MEM_BY_TEXT);
  assert_true(r.v[0].text_score < 0.0);   /* bm25: lower is better */
  kope_mem_recs_release(&r);
  st.text = "welford";                    /* found through the Journal */
  assert_int_equal(kope_mem_retrieve(f->db, &st, NULL, 8, &r, &err), KOPE_OK);
  assert_true(has_case(&r, journ));
  kope_mem_recs_release(&r);
  assert_int_equal(kope_mem_search(f->db, "online pass", 10, &r, &err), KOPE_OK);
  assert_true(r.n >= 1);
  assert_true(has_case(&r, online));
  kope_mem_recs_release(&r);
  assert_int_equal(kope_mem_search(f->db, "online welford", 10, &r, &err), KOPE_OK);
  assert_int_equal(r.n, 0);               /* search needs every word */
  kope_mem_recs_release(&r);
  assert_int_equal(kope_mem_search(f->db, "\"AND\" OR NEAR( *", 10, &r, &err), KOPE_OK);
  kope_mem_recs_release(&r);              /* query syntax in text is harmless */
}

/* ---- error-driven retrieval -------------------------------------------- */

static void test_error_driven(void **state)
{
  fx *f = *state;
  kope_mem_recs r;
  kope_err err = {0};
  int64_t base = add(f, (spec){0, "gelu", NULL, NULL, "baseline", "ref", NULL, NULL, NULL,
                               1.0});
  int64_t bad = add(f, (spec){base, "gelu", NULL, "vectorize", "vectorize.width=8", "AVX2",
                              "compile_error",
                              "/tmp/b/kernel.c:12:5: error: 'acc' undeclared (first use in "
                              "this function)", NULL, 0});
  int64_t fix = add(f, (spec){bad, "gelu", NULL, "vectorize", "vectorize.width=8",
                              "declare the accumulator", NULL, NULL, NULL, 1.4});
  int64_t wrong = add(f, (spec){base, "gelu", NULL, "tiling", "tiling.block=64", "tiles",
                                "incorrect", "mismatch at index 17: got 1.5 expected 2.5",
                                NULL, 0});

  (void)fix;
  kope_mem_recs_init(&r);
  assert_int_equal(kope_mem_fixes(f->db, "kernel.c:40:9: error: 'tmp' undeclared (first use "
                                  "in this function)", NULL, 5, &r, &err), KOPE_OK);
  assert_int_equal(r.n, 1);
  assert_true(r.v[0].id == bad);
  assert_true(r.v[0].fix_case_id == fix);
  assert_true(r.v[0].match & KOPE_MEM_BY_ERROR);
  assert_non_null(strstr(r.v[0].summary, "fixed by"));
  kope_mem_recs_release(&r);
  assert_int_equal(kope_mem_fixes(f->db, "mismatch at index 99: got 0 expected 1", NULL, 5, &r,
                                  &err), KOPE_OK);
  assert_int_equal(r.n, 1);
  assert_true(r.v[0].id == wrong && r.v[0].fix_case_id == 0);
  kope_mem_recs_release(&r);
  assert_int_equal(kope_mem_fixes(f->db, "error: expected ';' before '}'", NULL, 5, &r, &err),
                   KOPE_OK);
  assert_int_equal(r.n, 0);
  kope_mem_recs_release(&r);
}

/* ---- digests ----------------------------------------------------------------- */

static void test_digests(void **state)
{
  fx *f = *state;
  kope_mem_session s = {0};
  kope_mem_digest *d = NULL;
  kope_mem_filter flt = {0};
  kope_err err = {0};
  size_t n = 0, i;
  int64_t base;
  double sp[] = {1.5, 1.2, 0.5, 1.02, 2.0};

  s.op = "sum";
  s.target = "cpu";
  assert_int_equal(kope_mem_session_begin(f->db, &s, &f->session, &err), KOPE_OK);
  base = add(f, (spec){0, "sum", NULL, NULL, NULL, NULL, NULL, NULL, NULL, 1.0});
  for (i = 0; i < 5; i++)
    add(f, (spec){base, "sum", NULL, "parallel", "parallel.outer=on", "parallel outer loop",
                  NULL, NULL, NULL, sp[i]});
  add(f, (spec){base, "sum", NULL, "parallel", "parallel.outer=on", "parallel outer loop",
                "crash", "signal 11", NULL, 0});
  assert_int_equal(kope_mem_session_end(f->db, f->session, "done", &err), KOPE_OK);
  flt.thought_id = "parallel.outer=on";
  assert_int_equal(kope_mem_digest_list(f->db, &flt, &d, &n, &err), KOPE_OK);
  assert_int_equal(n, 1);
  assert_int_equal(d[0].attempts, 6);
  assert_int_equal(d[0].n_correct, 5);
  assert_int_equal(d[0].n_label[KOPE_LABEL_EFFECTIVE], 3);   /* 1.5, 1.2, 2.0 */
  assert_int_equal(d[0].n_label[KOPE_LABEL_PARTIAL], 1);     /* 1.02 */
  assert_int_equal(d[0].n_label[KOPE_LABEL_NEGATIVE], 2);    /* 0.5 and the crash */
  assert_true(fabs(d[0].median_ratio - (1.02 + 1.2) / 2) < 1e-12);
  assert_int_equal(d[0].n_case_ids, 6);
  assert_non_null(strstr(d[0].text, "effective in 3 of 6"));
  assert_int_equal(kope_mem_digest_set_text(f->db, d[0].id, "Outer loops scale; keep it.",
                                            &err), KOPE_OK);
  kope_mem_digests_free(d, n);
  add(f, (spec){base, "sum", NULL, "parallel", "parallel.outer=on", "parallel outer loop",
                NULL, NULL, NULL, 3.0});
  assert_int_equal(kope_mem_digest_refresh(f->db, 0, &n, &err), KOPE_OK);
  assert_int_equal(kope_mem_digest_list(f->db, &flt, &d, &n, &err), KOPE_OK);
  assert_int_equal(d[0].attempts, 7);                        /* counts stay computed */
  assert_string_equal(d[0].text, "Outer loops scale; keep it.");
  assert_true(d[0].has_policy_text);
  kope_mem_digests_free(d, n);
  {
    kope_mem_recs r;
    kope_mem_state st = {0};
    kope_mem_filter none = {0};
    st.text = "scale";
    kope_mem_recs_init(&r);
    assert_int_equal(kope_mem_retrieve(f->db, &st, &none, 4, &r, &err), KOPE_OK);
    assert_true(r.n >= 1);
    assert_int_equal(r.v[r.n - 1].kind, KOPE_MEM_REC_DIGEST);
    kope_mem_recs_release(&r);
  }
  assert_int_equal(kope_mem_digest_set_text(f->db, 999, "x", &err), KOPE_EINPUT);
}

/* ---- export / import ---------------------------------------------------------- */

static int64_t build_sample(fx *f)
{
  kope_mem_session s = {0};
  kope_err err = {0};
  int64_t a, b, c;

  s.op = "softmax";
  s.target = "cpu";
  s.policy = "tuner";
  assert_int_equal(kope_mem_session_begin(f->db, &s, &f->session, &err), KOPE_OK);
  a = add(f, (spec){0, "softmax", NULL, NULL, "baseline", "ref", NULL, NULL, "## start", 1.0});
  b = add(f, (spec){a, "softmax", NULL, "parallel", "parallel.outer=on", "outer", NULL, NULL,
                    "## parallel\nworked", 1.7});
  c = add(f, (spec){b, "softmax", NULL, "vectorize", "vectorize.width=8", "avx \"2\" | x",
                    "compile_error", "k.c:1:2: error: 'q' undeclared", NULL, 0});
  add(f, (spec){c, "softmax", NULL, "vectorize", "vectorize.width=8", "fixed", NULL, NULL,
                NULL, 2.2});
  assert_int_equal(kope_mem_session_end(f->db, f->session, "done", &err), KOPE_OK);
  assert_int_equal(kope_mem_hw_put(f->db, "hw-test", "{\"cpu\": \"test\"}", &err), KOPE_OK);
  return b;
}

static char *export_to(fx *f, kope_db *db, const char *name, int fmt)
{
  char *path = in_dir(f, name);
  FILE *out = fopen(path, "w");
  kope_err err = {0};

  assert_non_null(out);
  assert_int_equal(kope_mem_export(db, out, fmt, NULL, 0, &err), KOPE_OK);
  fclose(out);
  return path;
}

/* The facts of every Case, keyed by uid, without local ids. */
static json_t *facts(const char *path)
{
  json_t *doc = json_load_file(path, 0, NULL), *out = json_object(), *c;
  size_t i;

  assert_non_null(doc);
  json_array_foreach(json_object_get(doc, "cases"), i, c) {
    json_t *x = json_deep_copy(c);
    json_object_del(x, "case_id");
    json_object_del(x, "prev_case_id");
    json_object_del(x, "session_id");
    json_object_del(x, "origin");
    json_object_set(out, json_string_value(json_object_get(c, "uid")), x);
    json_decref(x);
  }
  json_decref(doc);
  return out;
}

static void add_plain(kope_db *db)
{
  kope_mem_case_in c;
  kope_err err = {0};
  int64_t id;

  kope_mem_case_in_init(&c);
  c.op = "unrelated";
  c.verdict = "correct";
  c.score.correct = 1;
  c.score.speedup = 1.0;
  assert_int_equal(kope_mem_case_insert(db, &c, &id, &err), KOPE_OK);
}

static void expect_same_facts(json_t *fa, json_t *fb)
{
  const char *k;
  json_t *v;

  json_object_foreach(fa, k, v) {
    json_t *w = json_object_get(fb, k);
    if (!w || !json_equal(v, w))
      fail_msg("Case %s differs after the round trip:\n%s\n%s", k,
               json_dumps(v, JSON_SORT_KEYS), w ? json_dumps(w, JSON_SORT_KEYS) : "(none)");
  }
}

static void test_round_trip(void **state)
{
  fx *f = *state;
  kope_err err = {0};
  kope_mem_import_stats st;
  kope_mem_case c;
  char *p1, *p2, *bpath = in_dir(f, "b.db"), *own;
  kope_db *b;
  json_t *fa, *fb;

  build_sample(f);
  p1 = export_to(f, f->db, "a.json", KOPE_MEM_FMT_JSON);
  b = kope_db_open(bpath, 0, &err);
  assert_non_null(b);
  add_plain(b);                              /* so local ids differ */
  assert_int_equal(kope_mem_import(b, p1, &st, &err), KOPE_OK);
  assert_int_equal(st.cases_new, 4);
  assert_int_equal(st.sessions_new, 1);
  assert_int_equal(st.journals_new, 2);
  assert_int_equal(st.hw_new, 1);
  assert_int_equal(kope_mem_case_get(b, 3, KOPE_MEM_WITH_CODE, &c, &err), KOPE_OK);
  assert_non_null(c.origin);                 /* provenance */
  assert_non_null(strstr(c.uid, kope_db_uuid(f->db)));
  assert_int_equal(c.in.prev_case_id, 2);       /* remapped: it was 1 in a */
  assert_non_null(c.in.code_after);
  kope_mem_case_release(&c);
  p2 = export_to(f, b, "b.json", KOPE_MEM_FMT_JSON);
  fa = facts(p1);
  fb = facts(p2);
  assert_int_equal(json_object_size(fb), 5);
  own = kope_sprintf("%s:1", kope_db_uuid(b));
  assert_non_null(json_object_get(fb, own));
  json_object_del(fb, own);
  expect_same_facts(fa, fb);
  assert_int_equal(kope_mem_import(b, p1, &st, &err), KOPE_OK);   /* idempotent */
  assert_int_equal(st.cases_new, 0);
  assert_int_equal(st.cases_known, 4);
  assert_int_equal(kope_mem_import(f->db, p2, &st, &err), KOPE_OK);   /* back home */
  assert_int_equal(st.cases_new, 1);
  assert_int_equal(st.cases_known, 4);
  json_decref(fa);
  json_decref(fb);
  kope_db_close(b);
  free(own);
  free(p1);
  free(p2);
  free(bpath);
}

static void test_bad_import(void **state)
{
  fx *f = *state;
  kope_err err = {0};
  kope_mem_stats before, after;
  char *p = in_dir(f, "bad.json"), *good;
  json_t *doc;

  build_sample(f);
  good = export_to(f, f->db, "good.json", KOPE_MEM_FMT_JSON);
  doc = json_load_file(good, 0, NULL);
  json_object_set_new(doc, "db_uuid", json_string("other-store"));
  {   /* every uid from another store, and the last Case broken */
    size_t i;
    json_t *c, *arr = json_object_get(doc, "cases");
    json_array_foreach(arr, i, c) {
      char uid[64];
      snprintf(uid, sizeof uid, "other-store:%zu", i + 1);
      json_object_set_new(c, "uid", json_string(uid));
      snprintf(uid, sizeof uid, "other-store:%zu", i);
      json_object_set_new(c, "prev_uid", i ? json_string(uid) : json_null());
      json_object_set_new(c, "session_uid", json_null());
    }
    json_object_set_new(json_array_get(arr, json_array_size(arr) - 1), "verdict",
                        json_string("splendid"));
  }
  json_dump_file(doc, p, 0);
  json_decref(doc);
  assert_int_equal(kope_mem_stats_get(f->db, &before, &err), KOPE_OK);
  assert_int_equal(kope_mem_import(f->db, p, NULL, &err), KOPE_EINPUT);
  assert_non_null(strstr(err.msg, "splendid"));
  assert_int_equal(kope_mem_stats_get(f->db, &after, &err), KOPE_OK);
  assert_int_equal(after.cases, before.cases);   /* all or nothing */
  assert_int_equal(after.imports, before.imports);
  kope_mem_stats_release(&before);
  kope_mem_stats_release(&after);
  assert_int_equal(kope_file_write_atomic(p, "{\"cases\": 3}", 12, &err), KOPE_OK);
  assert_int_equal(kope_mem_import(f->db, p, NULL, &err), KOPE_EINPUT);
  assert_int_equal(kope_file_write_atomic(p, "not json", 8, &err), KOPE_OK);
  assert_int_equal(kope_mem_import(f->db, p, NULL, &err), KOPE_EINPUT);
  free(p);
  free(good);
}

static void test_md_dot(void **state)
{
  fx *f = *state;
  int64_t b = build_sample(f);
  char *md = export_to(f, f->db, "m.md", KOPE_MEM_FMT_MD);
  char *dot = export_to(f, f->db, "m.dot", KOPE_MEM_FMT_DOT);
  char *t1 = kope_file_read(md, NULL, NULL), *t2 = kope_file_read(dot, NULL, NULL);
  char edge[64];

  assert_non_null(strstr(t1, "| case | prev |"));
  assert_non_null(strstr(t1, "parallel.outer=on"));
  assert_non_null(strstr(t1, "effective"));
  assert_non_null(strstr(t1, "compile_error"));
  assert_non_null(strstr(t1, "avx \"2\" \\| x"));   /* table cells escaped */
  assert_non_null(strstr(t2, "digraph kope_memory {"));
  snprintf(edge, sizeof edge, "c%lld -> c%lld;", (long long)(b - 1), (long long)b);
  assert_non_null(strstr(t2, edge));
  assert_non_null(strstr(t2, "avx \\\"2\\\" | x"));  /* dot labels escaped */
  assert_non_null(strstr(t2, "r=1.7000 effective"));
  free(t1);
  free(t2);
  free(md);
  free(dot);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown(test_text_transfer, setup, teardown),
    cmocka_unit_test_setup_teardown(test_error_driven, setup, teardown),
    cmocka_unit_test_setup_teardown(test_digests, setup, teardown),
    cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
    cmocka_unit_test_setup_teardown(test_bad_import, setup, teardown),
    cmocka_unit_test_setup_teardown(test_md_dot, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
