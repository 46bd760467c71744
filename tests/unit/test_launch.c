/*
 * Unit tests for the declared launch geometry of GPU-style kernels
 * (src/target/launch.c): finding the one `// @launch` line, splitting keys
 * and comma-separated expressions (commas inside cdiv/rup/min belong to
 * the call), name checks against the operator (relu: dim n; add: dims rows
 * and cols) and the file's integer knobs, evaluation for bound cases, and
 * the errors: no line, two lines, unknown key or name, missing required
 * key, too many dimensions, division by zero at evaluation.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "kope_test.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kope/core.h"
#include "kope/op.h"
#include "target/launch.h"

static const char *const g_ocl_keys[] = {"global", "local", NULL};
static const char *const g_ocl_req[] = {"global", NULL};
static const char *const g_cuda_keys[] = {"grid", "block", "shared", NULL};

/* Parse src for op; expect failure and return the message. */
static const char *bad(const kope_op *op, const char *src)
{
  static kope_err err;
  kope_launch l;

  memset(&err, 0, sizeof err);
  assert_int_equal(kope_launch_parse(src, op, g_ocl_keys, g_ocl_req, &l, &err), KOPE_EINPUT);
  assert_contains(err.msg, "launch: ");
  return err.msg;
}

static kope_case_bind bind_n(const kope_op *op, int64_t n)
{
  kope_case_bind b;
  size_t i;

  memset(&b, 0, sizeof b);
  for (i = 0; i < kope_op_nargs(op); i++)
    if (!strcmp(kope_op_arg(op, i)->name, "n"))
      b.ival[i] = n;
  return b;
}

static void test_relu_geometry(void **state)
{
  kope_op *op = kt_op_load("relu");
  const char *src =
    "#define WG 64     // @knob layer=parallel values=32,64 \"wg\"\n"
    "#define EPT 4     // @knob layer=tiling values=1,4 \"ept\"\n"
    "  // @launch global=rup(cdiv(n, EPT), WG) local=WG\n"
    "__kernel void relu(__global const float *x, __global float *y, long n) {}\n";
  kope_err err = {0, ""};
  kope_launch l;
  kope_case_bind b;
  int64_t v[3];
  int n = 0;

  (void)state;
  assert_int_equal(kope_launch_parse(src, op, g_ocl_keys, g_ocl_req, &l, &err), KOPE_OK);
  assert_int_equal(l.nkeys, 2);
  assert_string_equal(l.key[0].name, "global");
  assert_int_equal(l.key[0].n, 1);
  assert_string_equal(l.key[0].expr[0], "rup(cdiv(n, EPT), WG)");
  assert_string_equal(kope_launch_find(&l, "local")->expr[0], "WG");
  assert_null(kope_launch_find(&l, "grid"));
  assert_int_equal(l.nknobs, 2);
  /* n = 1000: 250 items, rounded up to 256 */
  b = bind_n(op, 1000);
  assert_int_equal(kope_launch_eval(&l, op, &b, "global", v, &n, &err), KOPE_OK);
  assert_int_equal(n, 1);
  assert_int_equal(v[0], 256);
  assert_int_equal(v[1], 1);
  assert_int_equal(v[2], 1);
  b = bind_n(op, 1);
  assert_int_equal(kope_launch_eval(&l, op, &b, "global", v, &n, &err), KOPE_OK);
  assert_int_equal(v[0], 64);
  assert_int_equal(kope_launch_eval(&l, op, &b, "local", v, &n, &err), KOPE_OK);
  assert_int_equal(v[0], 64);
  /* a knob's current value is what counts */
  {
    char *src2 = kope_knobs_apply(src, "WG", "32", &err);
    assert_non_null(src2);
    assert_int_equal(kope_launch_parse(src2, op, g_ocl_keys, g_ocl_req, &l, &err), KOPE_OK);
    b = bind_n(op, 1000);
    assert_int_equal(kope_launch_eval(&l, op, &b, "global", v, &n, &err), KOPE_OK);
    assert_int_equal(v[0], 256);
    b = bind_n(op, 1025);
    assert_int_equal(kope_launch_eval(&l, op, &b, "global", v, &n, &err), KOPE_OK);
    assert_int_equal(v[0], 256 + 32);
    free(src2);
  }
  assert_int_equal(kope_launch_eval(&l, op, &b, "block", v, &n, &err), KOPE_EINPUT);
  kope_op_free(op);
}

static void test_two_dims(void **state)
{
  kope_op *op = kt_op_load("add");
  const char *src =
    "#define WG 128 // @knob layer=parallel values=32,128 \"wg\"\n"
    "// @launch global=rup(cdiv(cols, 4*2), WG), rows local=WG,1\n";
  kope_err err = {0, ""};
  kope_launch l;
  kope_case_bind b;
  int64_t v[3];
  int n = 0;
  size_t i;

  (void)state;
  assert_int_equal(kope_launch_parse(src, op, g_ocl_keys, NULL, &l, &err), KOPE_OK);
  assert_int_equal(l.key[0].n, 2);
  assert_string_equal(l.key[0].expr[1], "rows");
  assert_int_equal(l.key[1].n, 2);
  memset(&b, 0, sizeof b);
  for (i = 0; i < kope_op_nargs(op); i++) {
    if (!strcmp(kope_op_arg(op, i)->name, "rows"))
      b.ival[i] = 3;
    if (!strcmp(kope_op_arg(op, i)->name, "cols"))
      b.ival[i] = 1025;
  }
  assert_int_equal(kope_launch_eval(&l, op, &b, "global", v, &n, &err), KOPE_OK);
  assert_int_equal(n, 2);
  assert_int_equal(v[0], 256);
  assert_int_equal(v[1], 3);
  assert_int_equal(v[2], 1);
  /* the CUDA keys with the same module */
  assert_int_equal(kope_launch_parse("// @launch grid=cdiv(cols,256),rows,1 block=256 "
                                     "shared=4*256\n", op, g_cuda_keys, NULL, &l, &err),
                   KOPE_OK);
  assert_int_equal(l.nkeys, 3);
  assert_int_equal(kope_launch_eval(&l, op, &b, "grid", v, &n, &err), KOPE_OK);
  assert_int_equal(n, 3);
  assert_int_equal(v[0], 5);
  assert_int_equal(v[1], 3);
  assert_int_equal(kope_launch_eval(&l, op, &b, "shared", v, &n, &err), KOPE_OK);
  assert_int_equal(v[0], 1024);
  kope_op_free(op);
}

static void test_errors(void **state)
{
  kope_op *op = kt_op_load("relu");
  kope_launch l;
  kope_err err = {0, ""};
  kope_case_bind b;
  int64_t v[3];

  (void)state;
  assert_contains(bad(op, "__kernel void relu() {}\n"), "no '// @launch' line");
  assert_contains(bad(op, "// @launch global=n\n// @launch global=n\n"), "2 '// @launch' lines");
  assert_contains(bad(op, "// @launch global=X*2\n"), "unknown name 'X' in global=X*2");
  assert_contains(bad(op, "// @launch global=n local=WG\n"), "unknown name 'WG' in local=WG");
  assert_contains(bad(op, "// @launch grid=n\n"), "unknown key 'grid'");
  assert_contains(bad(op, "// @launch local=64\n"), "missing global=");
  assert_contains(bad(op, "// @launch global=n,n,n,n\n"), "at most 3");
  assert_contains(bad(op, "// @launch global=n, local=4\n"), "empty");
  assert_contains(bad(op, "// @launch global=(n+1\n"), "')'");
  assert_contains(bad(op, "// @launch global=n global=n\n"), "twice");
  assert_contains(bad(op, "// @launch 64\n"), "expected KEY=EXPR");
  /* a knob whose value is not an integer cannot be used */
  assert_contains(bad(op, "#define T float // @knob layer=memory values=float,half \"t\"\n"
                          "// @launch global=T\n"), "unknown name 'T'");
  /* division by zero shows at evaluation, with the case's values */
  assert_int_equal(kope_launch_parse("// @launch global=64/(n-5)\n", op, g_ocl_keys, g_ocl_req,
                                     &l, &err), KOPE_OK);
  b = bind_n(op, 5);
  assert_int_equal(kope_launch_eval(&l, op, &b, "global", v, NULL, &err), KOPE_EINPUT);
  assert_contains(err.msg, "division by zero");
  b = bind_n(op, 7);
  assert_int_equal(kope_launch_eval(&l, op, &b, "global", v, NULL, &err), KOPE_OK);
  assert_int_equal(v[0], 32);
  /* the tag must be the line's first text, followed by a space */
  assert_contains(bad(op, "x = 1; // @launch global=n\n// @launchx global=n\n"), "no '");
  kope_op_free(op);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_relu_geometry),
    cmocka_unit_test(test_two_dims),
    cmocka_unit_test(test_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
