/*
 * Failure injection for the out-of-memory policy (kope/core.h): this test
 * binary alone is linked with malloc, calloc and realloc wrapped
 * (--wrap, tests/CMakeLists.txt), so the library's allocations go through
 * __wrap_* below, which can make the k-th one fail. Each case runs an
 * operation once to count its allocations, then once for every k with the
 * k-th failing, and checks the outcome is either the normal result (a
 * failure the code recovered from) or a clean failure: NULL or
 * KOPE_ENOMEM with "out of memory" in the message. A crash, a wrong
 * result or a failure reported as something else fails the test. Nothing
 * of this is in the library: release builds allocate as usual.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "kope/core.h"
#include "kope/llm.h"
#include "kope/op.h"
#include "kope/target.h"
#include "kope_test.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);

static char tmp[64];        /* this run's scratch directory */
static long fail_at = -1;   /* the allocation (from 0) that fails; -1: none */
static long count;          /* allocations since arm() */

static int fails(void)
{
  return count++ == fail_at;
}

void *__wrap_malloc(size_t n)
{
  return fails() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size)
{
  return fails() ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t n)
{
  return fails() ? NULL : __real_realloc(p, n);
}

static void arm(long k)
{
  count = 0;
  fail_at = k;
}

/* One run of an operation with allocation k failing (-1: none): 1 when
 * it gave its normal result, 0 when it failed cleanly; it asserts the rest. */
typedef int (*op_fn)(void *ctx, long k);

/* Run op with no failure, then with each of its allocations failing in
 * turn; returns how many runs failed cleanly (the caller expects some). */
static long sweep(op_fn op, void *ctx)
{
  long n, k, clean = 0;

  arm(-1);
  assert_int_equal(op(ctx, -1), 1);
  n = count;
  assert_true(n > 0);
  for (k = 0; k < n; k++) {
    int r;
    arm(k);
    r = op(ctx, k);
    fail_at = -1;
    clean += r == 0;
  }
  return clean;
}

static void assert_nomem(const kope_err *e, int rc)
{
  assert_int_equal(rc, KOPE_ENOMEM);
  assert_int_equal(e->code, KOPE_ENOMEM);
  assert_non_null(strstr(e->msg, "out of memory"));
}

/* ---- core ---- */

static int op_sprintf(void *ctx, long k)
{
  char *s = kope_sprintf("%s-%d-%0600d", "a", 7, 1);

  (void)ctx;
  (void)k;
  fail_at = -1;
  if (!s)
    return 0;
  assert_int_equal(strncmp(s, "a-7-0", 5), 0);
  assert_int_equal(strlen(s), 604);
  free(s);
  return 1;
}

static void test_sprintf(void **state)
{
  (void)state;
  assert_true(sweep(op_sprintf, NULL) > 0);
  assert_null(kope_path_join(NULL, "x"));
  assert_null(kope_path_join("x", NULL));
}

typedef struct file_ctx {
  char path[256];
  size_t len;
} file_ctx;

static int op_file_read(void *ctx, long k)
{
  file_ctx *f = ctx;
  kope_err e;
  size_t len = 0;
  char *s;

  (void)k;
  kope_err_clear(&e);
  s = kope_file_read(f->path, &len, &e);
  fail_at = -1;
  if (!s) {
    assert_nomem(&e, e.code);
    return 0;
  }
  assert_int_equal(len, f->len);
  assert_int_equal(s[len - 1], 'z');
  free(s);
  return 1;
}

static void test_file_read(void **state)
{
  file_ctx f;
  char *big = malloc(300000);
  kope_err e;

  (void)state;
  snprintf(f.path, sizeof f.path, "%s/file.txt", tmp);
  f.len = 300000;
  memset(big, 'y', f.len);
  big[f.len - 1] = 'z';
  kope_err_clear(&e);
  assert_int_equal(kope_file_write_atomic(f.path, big, f.len, &e), KOPE_OK);
  free(big);
  assert_true(sweep(op_file_read, &f) > 0);
  unlink(f.path);
  kope_err_clear(&e);
  assert_nomem(&e, kope_file_write_atomic(NULL, "x", 1, &e));
  kope_err_clear(&e);
  assert_nomem(&e, kope_mkdirs(NULL, &e));
}

/* ---- op ---- */

static size_t ops_total;

static int op_ops_list(void *ctx, long k)
{
  char **names = NULL;
  size_t n = 0;
  kope_err e;
  int rc;

  (void)k;
  kope_err_clear(&e);
  rc = kope_ops_list(ctx, &names, &n, &e);
  fail_at = -1;
  if (rc != KOPE_OK) {
    assert_nomem(&e, rc);
    assert_null(names);
    assert_int_equal(n, 0);
    return 0;
  }
  if (!ops_total)
    ops_total = n;
  assert_int_equal(n, ops_total);
  assert_true(strcmp(names[0], names[n - 1]) < 0);
  kope_strv_free(names, n);
  return 1;
}

static int op_op_load(void *ctx, long k)
{
  kope_err e;
  kope_op *op;

  (void)k;
  kope_err_clear(&e);
  op = kope_op_load("softmax", ctx, &e);
  fail_at = -1;
  if (!op) {
    assert_nomem(&e, e.code);
    return 0;
  }
  assert_string_equal(kope_op_name(op), "softmax");
  assert_true(kope_op_nargs(op) > 0);
  kope_op_free(op);
  return 1;
}

static int op_knobs(void *ctx, long k)
{
  kope_err e;
  char *plain;

  (void)k;
  kope_err_clear(&e);
  plain = kope_knobs_plain(ctx, "relu/seed.c", &e);
  fail_at = -1;
  if (!plain) {
    assert_nomem(&e, e.code);
    return 0;
  }
  assert_non_null(strstr(plain, "#define BLOCK 4096 "));   /* first listed value */
  assert_true(strlen(plain) + 1 == strlen(ctx));            /* 16384 -> 4096, nothing cut */
  free(plain);
  return 1;
}

static void test_ops(void **state)
{
  char *dir = kt_ops_dir(), *seed = kope_path_join(dir, "relu/seed.c"), *src;
  kope_err e;

  (void)state;
  assert_true(sweep(op_ops_list, dir) > 0);
  assert_true(ops_total > 10);
  assert_true(sweep(op_op_load, dir) > 0);
  kope_err_clear(&e);
  assert_non_null(src = kope_file_read(seed, NULL, &e));
  assert_true(sweep(op_knobs, src) > 0);
  free(src);
  free(seed);
  free(dir);
}

/* ---- llm ---- */

static int op_llm_command(void *ctx, long k)
{
  kope_llm_opts o;
  kope_llm *l;
  kope_err e;

  (void)ctx;
  (void)k;
  kope_llm_opts_init(&o);
  o.provider = "command";
  o.cmd = "cat";
  o.model = "m";
  o.response_format = "{\"type\":\"json_object\"}";
  kope_err_clear(&e);
  l = kope_llm_new(&o, &e);
  fail_at = -1;
  if (!l) {
    assert_nomem(&e, e.code);
    return 0;
  }
  assert_string_equal(kope_llm_name(l), "command:m");
  kope_llm_free(l);
  return 1;
}

static int op_llm_replay(void *ctx, long k)
{
  kope_llm_opts o;
  kope_llm_reply r;
  kope_llm *l;
  kope_err e;
  int rc;

  (void)k;
  kope_llm_opts_init(&o);
  o.provider = "replay";
  o.replay = ctx;
  kope_err_clear(&e);
  if (!(l = kope_llm_new(&o, &e))) {
    fail_at = -1;
    assert_nomem(&e, e.code);
    return 0;
  }
  rc = kope_llm_chat(l, "system", "user", &r, &e);
  fail_at = -1;
  kope_llm_free(l);
  if (rc != KOPE_OK) {
    assert_nomem(&e, rc);
    kope_llm_reply_release(&r);
    return 0;
  }
  assert_string_equal(r.text, "the reply");
  kope_llm_reply_release(&r);
  return 1;
}

static void test_llm(void **state)
{
  char path[256];
  FILE *f;

  (void)state;
  assert_true(sweep(op_llm_command, NULL) > 0);
  snprintf(path, sizeof path, "%s/session.jsonl", tmp);
  assert_non_null(f = fopen(path, "w"));
  fputs("{\"kope_llm_session\": 1, \"model\": \"rec\", \"op\": \"relu\"}\n"
        "{\"call\": 1, \"reply\": \"the reply\"}\n", f);
  fclose(f);
  assert_true(sweep(op_llm_replay, path) > 0);
  unlink(path);
}

/* ---- target ---- */

static int op_target(void *ctx, long k)
{
  kope_target *t;
  kope_err e;
  int rc;

  (void)ctx;
  (void)k;
  kope_err_clear(&e);
  if (!(t = kope_target_open("cpu", &e))) {
    fail_at = -1;
    assert_nomem(&e, e.code);
    return 0;
  }
  rc = kope_target_check_flags(t, "-O3 -march=native", &e);
  fail_at = -1;
  kope_target_free(t);
  if (rc != KOPE_OK) {
    assert_nomem(&e, rc);
    return 0;
  }
  return 1;
}

static void test_target(void **state)
{
  (void)state;
  assert_true(sweep(op_target, NULL) > 0);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_sprintf),
    cmocka_unit_test(test_file_read),
    cmocka_unit_test(test_ops),
    cmocka_unit_test(test_llm),
    cmocka_unit_test(test_target),
  };
  int rc;

  kt_tmpdir(tmp, sizeof tmp, "nomem");
  rc = cmocka_run_group_tests(tests, NULL, NULL);
  kope_rmtree(tmp);
  return rc;
}
