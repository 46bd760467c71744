/*
 * Unit tests of WAL checkpoints off the writer's path (src/mem/sq_ckpt.c):
 * the helper thread copies committed pages into the database file while
 * the handle stays open and the writer never checkpoints; past the hard
 * threshold the writer checkpoints itself so the WAL restarts and stays
 * bounded; the store is whole afterwards (every Case present, scores equal
 * a recomputation, integrity check clean). Thresholds are lowered with
 * sq_ckpt_tune so a few hundred Cases cross them; real files in mkdtemp
 * directories.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include "kope/core.h"
#include "kope/mem.h"
#include "mem/sq.h"

#define N_CASES 300

static long file_size(const char *path)
{
  struct stat st;

  return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

/* Insert n Cases in a chain of sessions, one transaction each, with a
 * kernel source and a Journal entry; ids into ids[]. */
static void insert_many(kope_db *db, int64_t *ids, int n)
{
  kope_mem_session s = {0};
  kope_err err = {0};
  int64_t session = 0;
  char code[256], journal[256];
  int i;

  s.op = "softmax";
  s.target = "cpu";
  assert_int_equal(kope_mem_session_begin(db, &s, &session, &err), KOPE_OK);
  for (i = 0; i < n; i++) {
    kope_mem_case_in c;
    kope_mem_case_in_init(&c);
    snprintf(code, sizeof code, "void k(float *y) { y[0] = %d.0f; }\n", i);
    snprintf(journal, sizeof journal, "## step %d\nTried unroll=%d; it %s.\n", i, i % 8,
             i % 3 ? "helped" : "did not compile");
    c.session_id = session;
    c.step = i;
    c.prev_case_id = i ? ids[(i - 1) / 2] : 0;   /* a binary tree: depth grows */
    c.op = "softmax";
    c.target = "cpu";
    c.layer = "tiling";
    c.thought_id = i % 2 ? "tiling.block=32" : "vectorize.width=8";
    c.verdict = i % 3 ? "correct" : "compile_error";
    c.score.correct = i % 3 != 0;
    c.score.speedup = c.score.correct ? 1.0 + (i % 7) * 0.1 : NAN;
    c.feedback = c.score.correct ? "ok" : "kernel.c:3:4: error: 'x' undeclared";
    c.code_after = code;
    c.journal = journal;
    assert_int_equal(kope_mem_case_insert(db, &c, &ids[i], &err), KOPE_OK);
  }
  assert_int_equal(kope_mem_session_end(db, session, "done", &err), KOPE_OK);
}

/* Reopen: every Case present, scores equal a recomputation, the integrity
 * check and foreign keys clean. */
static void verify(const char *path, const int64_t *ids, int n)
{
  kope_err err = {0};
  kope_db *db = kope_db_open(path, 0, &err);
  kope_buf rep;
  int i;

  assert_non_null(db);
  kope_buf_init(&rep, 0);
  if (kope_mem_check(db, &rep, &err) != KOPE_OK)
    fail_msg("check: %s\n%s", err.msg, rep.data);
  kope_buf_release(&rep);
  for (i = 0; i < n; i++) {
    kope_mem_case c;
    assert_int_equal(kope_mem_case_get(db, ids[i], 0, &c, &err), KOPE_OK);
    kope_mem_case_release(&c);
  }
  kope_db_close(db);
}

static char *new_store(char *dir)
{
  assert_non_null(mkdtemp(dir));
  return kope_path_join(dir, "kope.db");
}

/* Only the helper checkpoints (the writer's threshold is out of reach):
 * the database file grows while the handle is open. SQLite's automatic
 * checkpoint is off for a handle with a helper, so without one the file
 * would keep only the schema until close. */
static void test_helper_copies_pages(void **state)
{
  char dir[] = "/tmp/kope-ckpt-XXXXXX";
  char *path = new_store(dir);
  int64_t ids[N_CASES];
  kope_err err = {0};
  kope_db *db;
  long before, after = 0;
  int waited;

  (void)state;
  sq_ckpt_tune(16, 1 << 30);
  db = kope_db_open(path, 0, &err);
  assert_non_null(db);
  before = file_size(path);
  insert_many(db, ids, N_CASES);
  for (waited = 0; waited < 200; waited++) {   /* up to 10 s for the helper */
    after = file_size(path);
    if (after > before + 256 * 1024)
      break;
    usleep(50 * 1000);
  }
  kope_db_close(db);
  sq_ckpt_tune(0, 0);
  if (!(after > before + 256 * 1024))
    fail_msg("database file %ld -> %ld bytes while open: the helper did not checkpoint",
             before, after);
  verify(path, ids, N_CASES);
  kope_rmtree(dir);
  free(path);
}

/* With a low hard threshold the WAL restarts from its beginning again and
 * again, so its file stays far below what N_CASES commits write. */
static void test_wal_stays_bounded(void **state)
{
  char dir[] = "/tmp/kope-ckpt-XXXXXX";
  char *path = new_store(dir), *wal = kope_sprintf("%s-wal", path);
  int64_t ids[N_CASES];
  kope_err err = {0};
  kope_db *db;
  long wal_size, frames = 0;

  (void)state;
  sq_ckpt_tune(32, 128);
  db = kope_db_open(path, 0, &err);
  assert_non_null(db);
  insert_many(db, ids, N_CASES);
  wal_size = file_size(wal);
  kope_db_close(db);
  sq_ckpt_tune(0, 0);
  frames = wal_size / (4096 + 24);
  /* Each insert dirties several pages (Case, scores, three indexes or
   * more, the Journal, its index, the source, page 1): 15-16 frames here
   * (measured with both thresholds out of reach: 4,731 frames for 300),
   * so 300 commits wrote 4,500+ frames; a WAL that restarts after 128
   * holds about 150. */
  if (frames >= 5 * N_CASES / 2)
    fail_msg("WAL of %ld frames after %d commits: it did not restart", frames, N_CASES);
  verify(path, ids, N_CASES);
  kope_rmtree(dir);
  free(wal);
  free(path);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_helper_copies_pages),
    cmocka_unit_test(test_wal_stays_bounded),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
