/*
 * Crash test of the store: a writer process (forked from this test)
 * inserts Cases with Journal entries, opens and closes sessions (digest
 * refresh), and now and then runs gc, reporting each Case id over a pipe
 * only after its insert committed. The parent kills it with SIGKILL at a
 * random moment, 24 times over the same file, and after each kill checks
 * PRAGMA integrity_check, that every reported Case is present, and that
 * the stored scores still equal a recomputation from the graph (so no
 * half-applied d(v) walk survived).
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include "kope/core.h"
#include "kope/mem.h"

#define ROUNDS 24

static int64_t store_size(kope_db *db)
{
  kope_mem_stats st;
  kope_err err = {0};
  int64_t n = 0;

  if (kope_mem_stats_get(db, &st, &err) == KOPE_OK)
    n = st.cases;
  kope_mem_stats_release(&st);
  return n;
}

static int insert_one(kope_db *db, int64_t session, int64_t prev, unsigned r, int64_t *id)
{
  kope_mem_case_in c;
  kope_err err = {0};
  char code[96], journal[96];
  static const char *const verdicts[] = {"correct", "correct", "correct", "compile_error",
                                         "incorrect"};

  kope_mem_case_in_init(&c);
  snprintf(code, sizeof code, "void k(void) { /* %u */ }", r);
  snprintf(journal, sizeof journal, "## attempt %u\nwe tried tiling %u", r, r % 7);
  c.session_id = session;
  c.prev_case_id = prev;
  c.op = r % 2 ? "softmax" : "relu";
  c.target = "cpu";
  c.category = "reduction";
  c.layer = "tiling";
  c.thought_id = r % 3 ? "tiling.block=64" : "tiling.block=32";
  c.verdict = verdicts[r % 5];
  c.score.correct = r % 5 < 3;
  c.score.speedup = c.score.correct ? 0.5 + (r % 100) / 40.0 : NAN;
  c.feedback = c.score.correct ? "ok" : "kernel.c:3:4: error: 'x' undeclared";
  c.code_after = code;
  c.journal = journal;
  c.score.confidence = 0.5 + (r % 50) / 100.0;
  return kope_mem_case_insert(db, &c, id, &err);
}

/* The writer: runs until killed, reporting committed ids on fd. */
static void writer(const char *path, int fd, unsigned seed)
{
  kope_err err = {0};
  kope_db *db = kope_db_open(path, 0, &err);
  kope_mem_session s = {0};
  int64_t n, session = 0, id;
  unsigned r = seed;

  if (!db)
    _exit(3);
  n = store_size(db);
  s.op = "softmax";
  for (;;) {
    r = r * 1103515245u + 12345u;
    if (!session && kope_mem_session_begin(db, &s, &session, &err) != KOPE_OK)
      _exit(4);
    if (insert_one(db, session, n && r % 4 ? 1 + (int64_t)(r % (unsigned)n) : 0, r >> 8, &id)
        != KOPE_OK)
      _exit(5);
    n = id;
    if (write(fd, &id, sizeof id) != sizeof id)
      _exit(6);
    if (r % 23 == 0) {
      kope_mem_session_end(db, session, "done", &err);
      session = 0;
    }
    if (r % 97 == 0) {
      kope_mem_gc_opts o = {50, 50, 0, 0};
      kope_mem_gc(db, &o, NULL, &err);
    }
  }
}

static void sleep_ms(long ms)
{
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

  while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
    ;
}

/* Every id read from fd (the writer is dead: read to EOF). */
static size_t read_ids(int fd, int64_t **ids)
{
  size_t n = 0, cap = 0;
  int64_t id;

  *ids = NULL;
  while (read(fd, &id, sizeof id) == (ssize_t)sizeof id) {
    if (n == cap) {
      cap = cap ? 2 * cap : 256;
      *ids = realloc(*ids, cap * sizeof **ids);
      assert_non_null(*ids);
    }
    (*ids)[n++] = id;
  }
  return n;
}

static void verify(const char *path, const int64_t *ids, size_t n)
{
  kope_err err = {0};
  kope_db *db = kope_db_open(path, 0, &err);
  kope_buf rep;
  size_t i;

  if (!db)
    fail_msg("reopen after kill: %s", err.msg);
  kope_buf_init(&rep, 0);
  if (kope_mem_check(db, &rep, &err) != KOPE_OK)
    fail_msg("after a kill: %s\n%s", err.msg, rep.data);
  kope_buf_release(&rep);
  for (i = 0; i < n; i++) {
    kope_mem_case c;
    if (kope_mem_case_get(db, ids[i], 0, &c, &err) != KOPE_OK)
      fail_msg("Case %lld was reported stored but is missing", (long long)ids[i]);
    kope_mem_case_release(&c);
  }
  kope_db_close(db);
}

static void test_kill_writer(void **state)
{
  char dir[] = "/tmp/kope-crash-XXXXXX";
  char *path;
  size_t total = 0;
  int round;

  (void)state;
  assert_non_null(mkdtemp(dir));
  path = kope_path_join(dir, "kope.db");
  srand((unsigned)time(NULL) ^ (unsigned)getpid());
  for (round = 0; round < ROUNDS; round++) {
    int fds[2], status;
    int64_t *ids = NULL;
    size_t n;
    pid_t pid;
    assert_int_equal(pipe(fds), 0);
    fflush(NULL);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
      close(fds[0]);
      writer(path, fds[1], (unsigned)rand());
    }
    close(fds[1]);
    sleep_ms(20 + rand() % 180);
    kill(pid, SIGKILL);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (!(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL))
      fail_msg("writer ended by itself (status %d) in round %d", status, round);
    n = read_ids(fds[0], &ids);
    close(fds[0]);
    verify(path, ids, n);
    total += n;
    free(ids);
  }
  print_message("%d kills, %zu Cases reported and found\n", ROUNDS, total);
  assert_true(total > 0);
  kope_rmtree(dir);
  free(path);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_kill_writer),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
