/*
 * Unit tests of the store: r, labels and d(v) as stored on a hand-built
 * forest (a root, leaves, a failed Case and its successor, a node whose
 * score changes as successors arrive), labels at the exact thresholds,
 * lineage, validation errors, the retrieval bucket ordering by d * c,
 * migration from a version-1 and a version-3 file, the device of a Case
 * through store, export (json, md, dot) and import, refusing
 * foreign/corrupt/newer files
 * without touching them, unwritable paths, and gc keeping the graph.
 * Every test uses a real SQLite file in its own mkdtemp directory.
 */
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
#include <sqlite3.h>
#include "kope/core.h"
#include "kope/mem.h"
#include "mem/sq.h"

typedef struct fx {
  char dir[64];
  char *path;
  kope_db *db;
} fx;

static int setup(void **state)
{
  fx *f = calloc(1, sizeof *f);
  kope_err err = {0};

  kt_tmpdir(f->dir, sizeof f->dir, "memtest");
  f->path = kope_path_join(f->dir, "sub/kope.db");   /* parent made by open */
  f->db = kope_db_open(f->path, 0, &err);
  assert_non_null(f->db);
  *state = f;
  return 0;
}

static int teardown(void **state)
{
  fx *f = *state;

  kope_db_close(f->db);
  kope_rmtree(f->dir);
  free(f->path);
  free(f);
  return 0;
}

/* Insert a Case; speedup NAN for failures. Returns its id. */
static int64_t add(kope_db *db, int64_t prev, const char *op, const char *verdict,
                   double speedup, double conf, const char *thought)
{
  kope_mem_case_in c;
  kope_err err = {0};
  int64_t id = 0;

  kope_mem_case_in_init(&c);
  c.prev_case_id = prev;
  c.op = op;
  c.target = "cpu";
  c.category = "reduction";
  c.layer = "tiling";
  c.thought_id = thought;
  c.thought_title = "a thought";
  c.verdict = verdict;
  c.score.correct = !strcmp(verdict, "correct");
  c.score.speedup = speedup;
  c.score.confidence = conf;
  c.code_after = "void k(void) {}";
  assert_int_equal(kope_mem_case_insert(db, &c, &id, &err), KOPE_OK);
  assert_true(id > 0);
  return id;
}

static kope_mem_case get(kope_db *db, int64_t id)
{
  kope_mem_case c;
  kope_err err = {0};

  assert_int_equal(kope_mem_case_get(db, id, 0, &c, &err), KOPE_OK);
  return c;
}

static void expect_score(kope_db *db, int64_t id, double r, int label, double d)
{
  kope_mem_case c = get(db, id);

  assert_true(fabs(c.in.score.step_ratio - r) < 1e-12);
  assert_int_equal(c.in.score.label, label);
  if (fabs(c.in.score.d_score - d) > 1e-12)
    fail_msg("case %lld: d = %.15g, expected %.15g", (long long)id, c.in.score.d_score, d);
  assert_true(fabs(c.in.score.rank - d * c.in.score.confidence) < 1e-12);
  kope_mem_case_release(&c);
}

static void check_ok(kope_db *db)
{
  kope_err err = {0};
  kope_buf rep;

  kope_buf_init(&rep, 0);
  if (kope_mem_check(db, &rep, &err) != KOPE_OK)
    fail_msg("check failed: %s\n%s", err.msg, rep.data);
  kope_buf_release(&rep);
}

/* ---- scoring on a hand-built forest ------------------------------------ */

static void test_forest_scores(void **state)
{
  fx *f = *state;
  int64_t a, b, c, d, e;

  a = add(f->db, 0, "softmax", "correct", 1.0, 1.0, "baseline");
  expect_score(f->db, a, 1.0, KOPE_LABEL_PARTIAL, 1.0);          /* a root leaf */
  b = add(f->db, a, "softmax", "correct", 1.5, 1.0, "parallel.outer=on");
  expect_score(f->db, b, 1.5, KOPE_LABEL_EFFECTIVE, 1.5);        /* leaf: d = r */
  expect_score(f->db, a, 1.0, KOPE_LABEL_PARTIAL, 0.5 + 0.35 * 1.5);
  c = add(f->db, a, "softmax", "correct", 0.9, 1.0, "tiling.block=64");
  expect_score(f->db, c, 0.9, KOPE_LABEL_INEFFECTIVE, 0.9);
  d = add(f->db, b, "softmax", "compile_error", NAN, 1.0, "vectorize.width=8");
  expect_score(f->db, d, 0.0, KOPE_LABEL_NEGATIVE, 0.0);         /* failed: r = 0 */
  expect_score(f->db, b, 1.5, KOPE_LABEL_EFFECTIVE, 0.75);       /* successor changed it */
  e = add(f->db, d, "softmax", "correct", 1.2, 1.0, "vectorize.width=8");
  expect_score(f->db, e, 1.0, KOPE_LABEL_PARTIAL, 1.0);          /* after a failure: r = 1 */
  expect_score(f->db, d, 0.0, KOPE_LABEL_NEGATIVE, 0.35);
  expect_score(f->db, b, 1.5, KOPE_LABEL_EFFECTIVE, 0.75 + 0.35 * 0.35);
  expect_score(f->db, a, 1.0, KOPE_LABEL_PARTIAL,
               0.5 + 0.35 * ((0.75 + 0.35 * 0.35) + 0.9));
  check_ok(f->db);
}

static void test_threshold_labels_stored(void **state)
{
  fx *f = *state;
  int64_t p = add(f->db, 0, "relu", "correct", 2.0, 1.0, "baseline");

  expect_score(f->db, add(f->db, p, "relu", "correct", 2.1, 1.0, "t1"), 1.05,
               KOPE_LABEL_EFFECTIVE, 1.05);
  expect_score(f->db, add(f->db, p, "relu", "correct", 2.0, 1.0, "t2"), 1.0,
               KOPE_LABEL_PARTIAL, 1.0);
  expect_score(f->db, add(f->db, p, "relu", "correct", 1.7, 1.0, "t3"), 0.85,
               KOPE_LABEL_INEFFECTIVE, 0.85);
  expect_score(f->db, add(f->db, p, "relu", "correct", 1.69, 1.0, "t4"), 1.69 / 2.0,
               KOPE_LABEL_NEGATIVE, 1.69 / 2.0);
  expect_score(f->db, add(f->db, p, "relu", "incorrect", 3.0, 1.0, "t5"), 0.0,
               KOPE_LABEL_NEGATIVE, 0.0);   /* an incorrect Case never counts as faster */
  check_ok(f->db);
}

static void test_lineage_and_errors(void **state)
{
  fx *f = *state;
  kope_err err = {0};
  kope_mem_case c;
  kope_mem_case_in bad;
  int64_t a = add(f->db, 0, "gelu", "correct", 1.0, 1.0, "baseline");
  int64_t b = add(f->db, a, "gelu", "correct", 1.1, 1.0, "x");
  int64_t d = add(f->db, b, "gelu", "correct", 1.2, 1.0, "y");
  int64_t *ids = NULL, newid = 0;
  size_t n = 0;

  assert_int_equal(kope_mem_lineage(f->db, d, &ids, &n, &err), KOPE_OK);
  assert_int_equal(n, 3);
  assert_true(ids[0] == a && ids[1] == b && ids[2] == d);
  free(ids);
  assert_int_equal(kope_mem_successors(f->db, a, &ids, &n, &err), KOPE_OK);
  assert_int_equal(n, 1);
  assert_true(ids[0] == b);
  free(ids);
  assert_int_equal(kope_mem_case_get(f->db, 999, 0, &c, &err), KOPE_EINPUT);
  assert_non_null(strstr(err.msg, "999"));
  kope_mem_case_in_init(&bad);
  bad.op = "gelu";
  bad.verdict = "great";
  assert_int_equal(kope_mem_case_insert(f->db, &bad, &newid, &err), KOPE_EINPUT);
  bad.verdict = "correct";
  bad.prev_case_id = 4242;
  assert_int_equal(kope_mem_case_insert(f->db, &bad, &newid, &err), KOPE_EINPUT);
  bad.prev_case_id = 0;
  bad.score.confidence = 1.5;
  assert_int_equal(kope_mem_case_insert(f->db, &bad, &newid, &err), KOPE_EINPUT);
  assert_int_equal(newid, 0);
  c = get(f->db, d);
  assert_non_null(c.uid);
  assert_non_null(strstr(c.uid, kope_db_uuid(f->db)));
  assert_int_equal(strlen(c.in.code_after_hash), 64);
  kope_mem_case_release(&c);
}

/* ---- bucket ordering ------------------------------------------------------ */

static void test_bucket_ordering(void **state)
{
  fx *f = *state;
  kope_mem_recs r;
  kope_mem_filter flt = {0};
  kope_err err = {0};
  int64_t root = add(f->db, 0, "rms_norm", "correct", 1.0, 1.0, "baseline");
  size_t i;

  /* effective: d 2.0 at c 0.3 (rank 0.6) vs d 1.5 at c 0.9 (rank 1.35) */
  int64_t e1 = add(f->db, root, "rms_norm", "correct", 2.0, 0.3, "e1");
  int64_t e2 = add(f->db, root, "rms_norm", "correct", 1.5, 0.9, "e2");
  int64_t p1 = add(f->db, root, "rms_norm", "correct", 1.01, 1.0, "p1");
  int64_t i1 = add(f->db, root, "rms_norm", "correct", 0.9, 1.0, "i1");
  int64_t n1 = add(f->db, root, "rms_norm", "crash", NAN, 1.0, "n1");
  int64_t n2 = add(f->db, root, "rms_norm", "correct", 0.5, 1.0, "n2");

  (void)add(f->db, 0, "other_op", "correct", 9.0, 1.0, "far");
  flt.op = "rms_norm";
  flt.max_digests = -1;
  kope_mem_recs_init(&r);
  assert_int_equal(kope_mem_retrieve(f->db, NULL, &flt, 10, &r, &err), KOPE_OK);
  assert_int_equal(r.n, 7);
  for (i = 1; i < r.n; i++) {   /* label order, then d * c descending */
    assert_true(r.v[i - 1].score.label <= r.v[i].score.label);
    if (r.v[i - 1].score.label == r.v[i].score.label)
      assert_true(r.v[i - 1].score.rank >= r.v[i].score.rank);
  }
  assert_true(r.v[0].id == e2 && r.v[1].id == e1);
  assert_int_equal(r.v[2].score.label, KOPE_LABEL_PARTIAL);   /* the root (r = 1) and p1 */
  assert_true(r.v[4].id == i1);
  assert_true((r.v[5].id == n2 && r.v[6].id == n1));    /* 0.5 before 0 */
  assert_true(p1 == r.v[2].id || p1 == r.v[3].id);
  for (i = 0; i < r.n; i++) {
    assert_true(r.v[i].tokens == kope_mem_token_estimate(r.v[i].summary));
    assert_true(r.v[i].match & KOPE_MEM_BY_FILTER);
  }
  kope_mem_recs_release(&r);
  /* k = 4 is shared round-robin: one of each label */
  assert_int_equal(kope_mem_retrieve(f->db, NULL, &flt, 4, &r, &err), KOPE_OK);
  assert_int_equal(r.n, 4);
  for (i = 0; i < 4; i++)
    assert_int_equal(r.v[i].score.label, (int)i);
  assert_true(r.v[0].id == e2 && r.v[3].id == n2);
  kope_mem_recs_release(&r);
  flt.label = "negative";
  assert_int_equal(kope_mem_retrieve(f->db, NULL, &flt, 4, &r, &err), KOPE_OK);
  assert_int_equal(r.n, 2);
  kope_mem_recs_release(&r);
}

/* ---- migration -------------------------------------------------------------- */

static void raw_exec(const char *path, const char *sql)
{
  sqlite3 *h = NULL;
  char *msg = NULL;

  assert_int_equal(sqlite3_open(path, &h), SQLITE_OK);
  if (sqlite3_exec(h, sql, NULL, NULL, &msg) != SQLITE_OK)
    fail_msg("%s: %s", sql, msg);
  sqlite3_close(h);
}

/* ---- the d walk on deep lineages ------------------------------------------ */

/* How many times the scoring-node lookup ran since the last call. */
static int node_reads(kope_db *db)
{
  sq *s = db->impl;

  return s->st[SQ_NODE_GET] ? sqlite3_stmt_status(s->st[SQ_NODE_GET],
                                                  SQLITE_STMTSTATUS_RUN, 1) : 0;
}

/* A leaf added under a node 1,500 levels deep changes the scores of its
 * nearest ancestors only: the change shrinks by 0.35 per level and rounds
 * to exactly 0 after a few dozen, where the walk stops. It must read those
 * ancestors alone (not the whole lineage), and every score must still
 * equal a recomputation of the forest. */
static void test_deep_lineage_walk(void **state)
{
  fx *f = *state;
  kope_err err = {0};
  int64_t prev = 0, mid = 0, side = 0;
  int i, reads;

  assert_int_equal(kope_db_begin(f->db, &err), KOPE_OK);
  for (i = 0; i < 1500; i++) {
    prev = add(f->db, prev, "deep_op", i % 9 == 4 ? "incorrect" : "correct",
               1.0 + 0.01 * (i % 13), 1.0, "tiling.block=32");
    if (i % 50 == 7)   /* some branching, so sums are not a plain chain */
      side = add(f->db, prev, "deep_op", "correct", 1.3, 0.5, NULL);
    if (i == 700)
      mid = prev;
  }
  assert_int_equal(kope_db_commit(f->db, &err), KOPE_OK);
  assert_true(side > 0);
  node_reads(f->db);
  add(f->db, prev, "deep_op", "correct", 2.0, 1.0, NULL);
  reads = node_reads(f->db);
  if (reads < 2 || reads > 80)
    fail_msg("a leaf 1500 levels deep read %d ancestors", reads);
  add(f->db, mid, "deep_op", "correct", 0.5, 1.0, NULL);
  add(f->db, 1, "deep_op", "compile_error", NAN, 1.0, NULL);
  check_ok(f->db);
}

/* A lineage whose predecessor is not older than the Case (only a damaged
 * file has one; here a cycle) is refused, not walked forever. */
static void test_damaged_lineage(void **state)
{
  fx *f = *state;
  kope_err err = {0};
  kope_mem_case c;
  int64_t a = add(f->db, 0, "op", "correct", 1.0, 1.0, NULL);
  int64_t b = add(f->db, a, "op", "correct", 1.2, 1.0, NULL);
  int64_t d = add(f->db, b, "op", "correct", 1.5, 1.0, NULL), id = 0;
  char sql[128];

  snprintf(sql, sizeof sql, "UPDATE case_scores SET prev_id = %lld WHERE id = %lld",
           (long long)d, (long long)b);
  raw_exec(f->path, sql);
  kope_mem_case_init(&c);
  c.in.prev_case_id = d;
  c.in.op = "op";
  c.in.verdict = "correct";
  c.in.score.correct = 1;
  c.in.score.speedup = 2.0;
  assert_int_equal(kope_mem_case_insert(f->db, &c.in, &id, &err), KOPE_EINPUT);
  assert_non_null(strstr(err.msg, "damaged"));
  assert_int_equal(id, 0);
}

static void test_migrate_from_v1(void **state)
{
  fx *f = *state;
  char *path = kope_path_join(f->dir, "v1.db");
  kope_err err = {0};
  kope_db *db;
  kope_mem_recs r;
  kope_mem_case c;

  assert_int_equal(kope_sq_create_v1(path, &err), KOPE_OK);
  raw_exec(path,
           "INSERT INTO sessions(id, op, target, started) VALUES (1, 'softmax', 'cpu', 1);"
           "INSERT INTO cases(id, session_id, step, prev_id, op, target, thought_id, "
           " thought_title, verdict, correct, speedup, confidence, created) VALUES"
           " (1, 1, 0, NULL, 'softmax', 'cpu', 'baseline', 'reference', 'correct', 1, 1.0, 1, 1),"
           " (2, 1, 1, 1, 'softmax', 'cpu', 'algorithm.online=on', 'online softmax pass',"
           "  'correct', 1, 2.0, 0.5, 2),"
           " (3, 1, 2, 2, 'softmax', 'cpu', 'vectorize.width=8', 'avx2', 'compile_error', 0,"
           "  NULL, 1, 3);"
           "UPDATE cases SET feedback = 'k.c:3:4: error: ''v'' undeclared' WHERE id = 3;"
           "INSERT INTO journals(case_id, session_id, created, body) VALUES"
           " (2, 1, 2, 'the online rescaling trick removed a pass');");
  db = kope_db_open(path, 0, &err);
  if (!db)
    fail_msg("%s", err.msg);
  assert_int_equal(kope_db_schema_version(db), KOPE_DB_SCHEMA_VERSION);
  expect_score(db, 3, 0.0, KOPE_LABEL_NEGATIVE, 0.0);
  expect_score(db, 2, 2.0, KOPE_LABEL_EFFECTIVE, 1.0);          /* 0.5*2 + 0.35*0 */
  expect_score(db, 1, 1.0, KOPE_LABEL_PARTIAL, 0.5 + 0.35 * 1.0);
  c = get(db, 3);
  assert_non_null(c.err_sig);
  assert_string_equal(c.err_sig, "error: Q undeclared");
  kope_mem_case_release(&c);
  kope_mem_recs_init(&r);
  assert_int_equal(kope_mem_search(db, "rescaling", 5, &r, &err), KOPE_OK);
  assert_int_equal(r.n, 1);
  assert_int_equal(r.v[0].kind, KOPE_MEM_REC_JOURNAL);
  assert_int_equal(r.v[0].case_id, 2);
  kope_mem_recs_release(&r);
  assert_int_equal(kope_mem_search(db, "online", 5, &r, &err), KOPE_OK);
  assert_true(r.n >= 1);
  kope_mem_recs_release(&r);
  check_ok(db);
  add(db, 2, "softmax", "correct", 3.0, 1.0, "after.migration");
  check_ok(db);
  kope_db_close(db);
  db = kope_db_open(path, 0, &err);   /* reopening does not migrate again */
  assert_non_null(db);
  check_ok(db);
  kope_db_close(db);
  free(path);
}

/* A version-3 file (made by the real migrations 0 -> 3 over v1 rows)
 * keeps every Case when opened; v4 adds cases.device, NULL for them. */
static void test_migrate_from_v3(void **state)
{
  fx *f = *state;
  char *path = kope_path_join(f->dir, "v3.db");
  kope_err err = {0};
  kope_mem_case c;
  kope_db *db;
  int64_t i, id;

  assert_int_equal(kope_sq_create_at(path, 1, &err), KOPE_OK);
  raw_exec(path,
           "INSERT INTO cases(id, step, prev_id, op, target, hw, thought_id, verdict, correct,"
           " speedup, confidence, created) VALUES"
           " (1, 0, NULL, 'relu', 'cpu', 'fp-a', 'baseline', 'correct', 1, 1.0, 1, 1),"
           " (2, 1, 1, 'relu', 'opencl', 'fp-a', 'tiling.tile=64', 'correct', 1, 1.5, 1, 2),"
           " (3, 2, 2, 'relu', 'cuda', 'fp-b', 'memory.vec=4', 'crash', 0, NULL, 1, 3);");
  assert_int_equal(kope_sq_create_at(path, 3, &err), KOPE_OK);   /* 1 -> 3 */
  {
    sqlite3 *h = NULL;
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_open(path, &h), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(h, "PRAGMA user_version", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int(st, 0), 3);
    sqlite3_finalize(st);
    /* a v3 file has no device column yet */
    assert_int_not_equal(sqlite3_prepare_v2(h, "SELECT device FROM cases", -1, &st, NULL),
                         SQLITE_OK);
    sqlite3_finalize(st);
    sqlite3_close(h);
  }
  db = kope_db_open(path, 0, &err);
  if (!db)
    fail_msg("%s", err.msg);
  assert_int_equal(kope_db_schema_version(db), KOPE_DB_SCHEMA_VERSION);
  for (i = 1; i <= 3; i++) {
    c = get(db, i);
    assert_string_equal(c.in.op, "relu");
    assert_string_equal(c.in.device, "");   /* NULL: recorded before v4 */
    kope_mem_case_release(&c);
  }
  c = get(db, 2);
  assert_string_equal(c.in.target, "opencl");
  assert_string_equal(c.in.hw, "fp-a");
  kope_mem_case_release(&c);
  expect_score(db, 2, 1.5, KOPE_LABEL_EFFECTIVE, 0.5 * 1.5 + 0.35 * 0.0);
  kope_mem_case_init(&c);
  c.in.prev_case_id = 2;
  c.in.op = "relu";
  c.in.target = "cuda";
  snprintf(c.in.device, sizeof c.in.device, "NVIDIA H200 (sm_90)");
  c.in.verdict = "correct";
  c.in.score.correct = 1;
  c.in.score.speedup = 2.0;
  assert_int_equal(kope_mem_case_insert(db, &c.in, &id, &err), KOPE_OK);
  assert_int_equal(id, 4);
  c = get(db, id);
  assert_string_equal(c.in.device, "NVIDIA H200 (sm_90)");
  kope_mem_case_release(&c);
  check_ok(db);
  kope_db_close(db);
  free(path);
}

/* Export path to a file and return its text (caller frees). */
static char *export_text(kope_db *db, const char *path, int format)
{
  kope_err err = {0};
  FILE *out = fopen(path, "w");
  char *text;

  assert_non_null(out);
  assert_int_equal(kope_mem_export(db, out, format, NULL, 0, &err), KOPE_OK);
  fclose(out);
  text = kope_file_read(path, NULL, &err);
  assert_non_null(text);
  return text;
}

/* A Case's device is stored, read back, exported (json, md, dot) and
 * imported into another store; a Case without one stays without. */
static void test_device_roundtrip(void **state)
{
  fx *f = *state;
  char *json = kope_path_join(f->dir, "x.json"), *md = kope_path_join(f->dir, "x.md");
  char *dot = kope_path_join(f->dir, "x.dot"), *other = kope_path_join(f->dir, "o.db");
  const char *dev = "Portable Computing Language / cpu-haswell-AMD EPYC 7B13 64-Core";
  kope_mem_import_stats st;
  kope_err err = {0};
  kope_mem_case c;
  kope_db *db2;
  int64_t a, b, i, n;
  char *text;

  kope_mem_case_init(&c);
  c.in.op = "relu";
  c.in.target = "opencl";
  snprintf(c.in.device, sizeof c.in.device, "%s", dev);
  c.in.verdict = "correct";
  c.in.score.correct = 1;
  c.in.score.speedup = 1.0;
  assert_int_equal(kope_mem_case_insert(f->db, &c.in, &a, &err), KOPE_OK);
  kope_mem_case_init(&c);
  c.in.op = "relu";
  c.in.target = "cpu";
  c.in.prev_case_id = a;
  c.in.verdict = "compile_error";
  assert_int_equal(kope_mem_case_insert(f->db, &c.in, &b, &err), KOPE_OK);
  c = get(f->db, a);
  assert_string_equal(c.in.device, dev);
  kope_mem_case_release(&c);
  c = get(f->db, b);
  assert_string_equal(c.in.device, "");
  kope_mem_case_release(&c);

  text = export_text(f->db, json, KOPE_MEM_FMT_JSON);
  assert_non_null(strstr(text, "\"device\":\"Portable Computing Language / cpu-haswell"));
  assert_non_null(strstr(text, "\"device\":null"));
  free(text);
  text = export_text(f->db, md, KOPE_MEM_FMT_MD);
  assert_non_null(strstr(text, "| target | device |"));
  assert_non_null(strstr(text, "| opencl | Portable Computing Language / cpu-haswell"));
  free(text);
  text = export_text(f->db, dot, KOPE_MEM_FMT_DOT);
  assert_non_null(strstr(text, "relu@opencl (Portable Computing Language"));
  free(text);

  db2 = kope_db_open(other, 0, &err);
  assert_non_null(db2);
  assert_int_equal(kope_mem_import(db2, json, &st, &err), KOPE_OK);
  assert_int_equal(st.cases_new, 2);
  for (n = 0, i = 1; i <= 2; i++) {
    c = get(db2, i);
    if (!strcmp(c.in.target, "opencl")) {
      assert_string_equal(c.in.device, dev);
      n++;
    } else {
      assert_string_equal(c.in.device, "");
    }
    kope_mem_case_release(&c);
  }
  assert_int_equal(n, 1);
  check_ok(db2);
  kope_db_close(db2);
  free(json);
  free(md);
  free(dot);
  free(other);
}

/* ---- refusing files ------------------------------------------------------------ */

static void hash_file(const char *path, char out[65])
{
  size_t len = 0;
  char *data = kope_file_read(path, &len, NULL);

  assert_non_null(data);
  kope_sha256_hex(data, len, out);
  free(data);
}

static void expect_refused(const char *path, int code, const char *words)
{
  char before[65], after[65];
  kope_err err = {0};
  kope_db *db;

  hash_file(path, before);
  db = kope_db_open(path, 0, &err);
  assert_null(db);
  assert_int_equal(err.code, code);
  if (!strstr(err.msg, words))
    fail_msg("message '%s' lacks '%s'", err.msg, words);
  hash_file(path, after);
  assert_string_equal(before, after);
}

static void test_refuse_bad_files(void **state)
{
  fx *f = *state;
  char *text = kope_path_join(f->dir, "notes.txt");
  char *foreign = kope_path_join(f->dir, "foreign.db");
  char *newer = kope_path_join(f->dir, "newer.db");
  kope_err err = {0};
  kope_db *db;

  assert_int_equal(kope_file_write_atomic(text, "hello\n", 6, &err), KOPE_OK);
  expect_refused(text, KOPE_EINPUT, "not a kope database");
  raw_exec(foreign, "CREATE TABLE t(x); INSERT INTO t VALUES (1);");
  expect_refused(foreign, KOPE_EINPUT, "another application");
  db = kope_db_open(newer, 0, &err);
  assert_non_null(db);
  add(db, 0, "relu", "correct", 1.0, 1.0, "baseline");
  kope_db_close(db);
  raw_exec(newer, "PRAGMA user_version = 99;");
  expect_refused(newer, KOPE_EINPUT, "newer kope");
  assert_null(kope_db_open("/proc/kope-test/nope/kope.db", 0, &err));
  assert_int_equal(err.code, KOPE_EENV);
  assert_null(kope_db_open(f->dir, 0, &err));   /* a directory */
  assert_int_equal(err.code, KOPE_EINPUT);
  free(text);
  free(foreign);
  free(newer);
}

static void test_corrupt_file(void **state)
{
  fx *f = *state;
  char *path = kope_path_join(f->dir, "corrupt.db");
  kope_err err = {0};
  kope_mem_stats st;
  kope_db *db = kope_db_open(path, 0, &err);
  size_t len = 0, i;
  char *data;
  int i_case;

  assert_non_null(db);
  for (i_case = 0; i_case < 200; i_case++)
    add(db, 0, "relu", "correct", 1.0 + i_case, 1.0, "baseline");
  kope_db_close(db);   /* checkpoints the WAL into the file */
  data = kope_file_read(path, &len, NULL);
  assert_true(len > 8192);
  for (i = 4096; i < len; i++)   /* keep the header page, garble the rest */
    data[i] = (char)(i * 7 + 13);
  assert_int_equal(kope_file_write_atomic(path, data, len, &err), KOPE_OK);
  free(data);
  db = kope_db_open(path, 0, &err);
  if (db) {
    assert_int_not_equal(kope_mem_stats_get(db, &st, &err), KOPE_OK);
    kope_mem_stats_release(&st);
    kope_db_close(db);
  }
  assert_int_equal(err.code, KOPE_EINPUT);
  free(path);
}

/* ---- gc --------------------------------------------------------------------- */

static void test_gc_keeps_graph(void **state)
{
  fx *f = *state;
  kope_err err = {0};
  kope_mem_gc_opts o = {2, 3, 0, 1};
  kope_mem_gc_stats st;
  kope_mem_journal *j = NULL;
  kope_mem_case c, old;
  int64_t prev = 0, ids[12];
  size_t nj = 0;
  char code[64];
  int i;

  for (i = 0; i < 12; i++) {
    kope_mem_case_init(&c);
    snprintf(code, sizeof code, "void k(void) { /* %d */ }", i);
    c.in.op = "relu";
    c.in.verdict = "correct";
    c.in.score.correct = 1;
    c.in.score.speedup = i == 4 ? 50.0 : 1.0 + 0.1 * i;   /* case 4 is the best ever */
    c.in.prev_case_id = prev;
    c.in.code_after = code;
    c.in.journal = "## a step\nwe tried something";
    assert_int_equal(kope_mem_case_insert(f->db, &c.in, &ids[i], &err), KOPE_OK);
    prev = ids[i];
  }
  assert_int_equal(kope_mem_gc(f->db, &o, &st, &err), KOPE_OK);
  assert_int_equal(st.journals_dropped, 10);
  assert_int_equal(st.sources_dropped, 12 - 3 - 1);
  assert_int_equal(kope_mem_journal_list(f->db, 0, &j, &nj, &err), KOPE_OK);
  assert_int_equal(nj, 2);
  kope_mem_journals_free(j, nj);
  assert_int_equal(kope_mem_case_get(f->db, ids[0], KOPE_MEM_WITH_CODE, &old, &err), KOPE_OK);
  assert_null(old.in.code_after);                  /* text gone, hash and Case kept */
  assert_int_equal(strlen(old.in.code_after_hash), 64);
  kope_mem_case_release(&old);
  assert_int_equal(kope_mem_case_get(f->db, ids[4], KOPE_MEM_WITH_CODE, &old, &err), KOPE_OK);
  assert_non_null(old.in.code_after);              /* the best kernel survives */
  kope_mem_case_release(&old);
  assert_int_equal(kope_mem_case_get(f->db, ids[11], KOPE_MEM_WITH_CODE, &old, &err), KOPE_OK);
  assert_non_null(old.in.code_after);
  kope_mem_case_release(&old);
  check_ok(f->db);
  o.dry_run = 1;
  assert_int_equal(kope_mem_gc(f->db, &o, &st, &err), KOPE_OK);
  assert_int_equal(st.journals_dropped + st.sources_dropped, 0);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown(test_forest_scores, setup, teardown),
    cmocka_unit_test_setup_teardown(test_threshold_labels_stored, setup, teardown),
    cmocka_unit_test_setup_teardown(test_lineage_and_errors, setup, teardown),
    cmocka_unit_test_setup_teardown(test_bucket_ordering, setup, teardown),
    cmocka_unit_test_setup_teardown(test_deep_lineage_walk, setup, teardown),
    cmocka_unit_test_setup_teardown(test_damaged_lineage, setup, teardown),
    cmocka_unit_test_setup_teardown(test_migrate_from_v1, setup, teardown),
    cmocka_unit_test_setup_teardown(test_migrate_from_v3, setup, teardown),
    cmocka_unit_test_setup_teardown(test_device_roundtrip, setup, teardown),
    cmocka_unit_test_setup_teardown(test_refuse_bad_files, setup, teardown),
    cmocka_unit_test_setup_teardown(test_corrupt_file, setup, teardown),
    cmocka_unit_test_setup_teardown(test_gc_keeps_graph, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
