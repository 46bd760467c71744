/*
 * Unit tests of trusted sources with shared vendor helpers
 * (kope_op_trusted_source, src/op/trusted.c): amax's shipped vendor.c gets
 * ops/_vendor/dnnl_reduce.h and, through it, dnnl.h expanded once between
 * #line directives, and the result really compiles with gcc; a source
 * without a helper comes back unchanged; a helper in the _vendor folder
 * beside a temporary operator directory is used, with the line after the
 * include numbered right; an unknown helper fails naming file:line and the
 * helper; an include with a path outside the folder is left alone.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "kope_test.h"
#include "kope/core.h"
#include "kope/op.h"

static size_t count(const char *hay, const char *needle)
{
  size_t n = 0;

  for (; (hay = strstr(hay, needle)); hay++)
    n++;
  return n;
}

static void write_file(const char *path, const char *text)
{
  FILE *f = fopen(path, "w");

  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

static void test_shipped_helper(void **state)
{
  char *dir = kt_ops_dir(), dtmp[] = "/tmp/kope-trusted-XXXXXX", *src, *path, *cmd;
  kope_err err = {0, ""};
  kope_op *op = kope_op_load("amax", dir, &err);

  (void)state;
  if (!op)
    fail_msg("%s", err.msg);
  src = kope_op_trusted_source(op, kope_op_vendor_path(op), &err);
  if (!src)
    fail_msg("%s", err.msg);
  assert_int_equal(count(src, "#line 1 \"_vendor/dnnl_reduce.h\""), 1);
  assert_int_equal(count(src, "#line 1 \"_vendor/dnnl.h\""), 1);
  assert_int_equal(count(src, "#define KV_DNNL_H"), 1);
  assert_int_equal(count(src, "\n#include \"../_vendor/"), 0);
  assert_int_equal(strncmp(src, "#line 1 \"vendor.c\"\n", 19), 0);
  assert_non_null(strstr(src, "kv_reduce_rows(dnnl_reduction_max, x, y, rows, cols)"));
  assert_non_null(mkdtemp(dtmp));
  path = kope_path_join(dtmp, "kernel.c");
  write_file(path, src);
  cmd = kope_sprintf("gcc -std=gnu11 -Wall -Wextra -Werror -fsyntax-only %s", path);
  assert_int_equal(system(cmd), 0);
  free(cmd);
  free(path);
  free(src);
  kope_rmtree(dtmp);
  kope_op_free(op);
  free(dir);
}

static void test_unchanged(void **state)
{
  char *dir = kt_ops_dir(), *src, *plain;
  kope_err err = {0, ""};
  kope_op *op = kope_op_load("relu", dir, &err);

  (void)state;
  if (!op)
    fail_msg("%s", err.msg);
  src = kope_op_trusted_source(op, kope_op_reference_path(op), &err);
  plain = kope_file_read(kope_op_reference_path(op), NULL, &err);
  assert_non_null(src);
  assert_non_null(plain);
  assert_string_equal(src, plain);
  free(src);
  free(plain);
  kope_op_free(op);
  free(dir);
}

/* A copy of relu in root/ops/relu with root/ops/_vendor/mine.h. */
static kope_op *local_op(const char *root)
{
  char *dir = kt_ops_dir();
  char *cmd = kope_sprintf("mkdir -p %s/ops/_vendor && cp -r %s/relu %s/ops/", root, dir, root);
  char *h = kope_sprintf("%s/ops/_vendor/mine.h", root), *d = kope_sprintf("%s/ops", root);
  kope_err err = {0, ""};
  kope_op *op;

  assert_int_equal(system(cmd), 0);
  write_file(h, "static int mine_helper(void) { return 42; }\n");
  op = kope_op_load("relu", d, &err);
  if (!op)
    fail_msg("%s", err.msg);
  free(cmd);
  free(h);
  free(d);
  free(dir);
  return op;
}

static void test_local_helper(void **state)
{
  char root[] = "/tmp/kope-trusted-XXXXXX", *v, *src;
  kope_err err = {0, ""};
  kope_op *op;

  (void)state;
  assert_non_null(mkdtemp(root));
  op = local_op(root);
  v = kope_sprintf("%s/v.c", root);
  write_file(v, "/* one */\n#include \"../_vendor/mine.h\"\nint three = 3;\n"
                "#include \"../_vendor/../mine.h\"\n");
  src = kope_op_trusted_source(op, v, &err);
  if (!src)
    fail_msg("%s", err.msg);
  assert_non_null(strstr(src, "#line 1 \"_vendor/mine.h\"\nstatic int mine_helper(void)"));
  assert_non_null(strstr(src, "#line 3 \"v.c\"\nint three = 3;\n"));
  assert_non_null(strstr(src, "#include \"../_vendor/../mine.h\"\n"));
  free(src);
  write_file(v, "/* one */\n#include \"../_vendor/nope.h\"\n");
  assert_null(kope_op_trusted_source(op, v, &err));
  assert_int_equal(err.code, KOPE_EINPUT);
  assert_non_null(strstr(err.msg, "v.c:2"));
  assert_non_null(strstr(err.msg, "nope.h"));
  free(v);
  kope_op_free(op);
  kope_rmtree(root);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_shipped_helper),
    cmocka_unit_test(test_unchanged),
    cmocka_unit_test(test_local_helper),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
