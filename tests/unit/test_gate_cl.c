/*
 * Unit tests for the OpenCL source gate (src/eval/gate_cl.c) on relu
 * (x, y, n) and add (a, b, y, rows, cols): legitimate kernels pass
 * (attributes, the `kernel` spelling, helpers, OPENCL and unroll pragmas,
 * "printf" and "__kernel" inside comments and strings); each rule refuses
 * with its reason: #include, #line, other pragmas, printf, no kernel, two
 * kernels, a wrongly named kernel, the wrong parameter count, a non-void
 * kernel, a missing or invalid @launch line.
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
#include "eval/gate_cl.h"

#define LAUNCH "// @launch global=n\n"
#define BODY "{ long i = get_global_id(0); if (i < n) y[i] = fmax(x[i], 0.0f); }\n"
#define RELU "__kernel void relu(__global const float *x, __global float *y, long n)\n" BODY

static kope_op *g_relu, *g_add;

static int setup(void **state)
{
  (void)state;
  g_relu = kt_op_load("relu");
  g_add = kt_op_load("add");
  return 0;
}

static int teardown(void **state)
{
  (void)state;
  kope_op_free(g_relu);
  kope_op_free(g_add);
  return 0;
}

static void pass(const kope_op *op, const char *src)
{
  char why[400] = "";

  if (kope_gate_cl(src, op, why, sizeof why) != 0)
    fail_msg("refused: %s\n--- source:\n%s", why, src);
}

static void refused(const kope_op *op, const char *src, const char *reason)
{
  char why[400] = "";

  if (kope_gate_cl(src, op, why, sizeof why) != -1)
    fail_msg("admitted, expected \"%s\"\n--- source:\n%s", reason, src);
  if (!strstr(why, "opencl gate: ") || !strstr(why, reason))
    fail_msg("reason \"%s\" lacks \"%s\"", why, reason);
}

static void test_legit(void **state)
{
  (void)state;
  pass(g_relu, LAUNCH RELU);
  pass(g_relu, "/* printf(\"x\") and __kernel in a comment */\n"
               "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
               "#define WG 64 // @knob layer=parallel values=32,64 \"wg\"\n"
               "// @launch global=rup(n, WG) local=WG\n"
               "static float f(float v) { return v > 0.0f ? v : 0.0f; }\n"
               "__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))\n"
               "void relu(__global const float *restrict x,\n"
               "          __global float *restrict y, long n)\n"
               "{\n  long i = get_global_id(0);\n"
               "#pragma unroll 4\n  for (int k = 0; k < 1; k++)\n"
               "    if (i < n) y[i] = f(x[i]);\n"
               "  const char *s = \"printf __kernel\"; (void)s;\n}\n");
  pass(g_relu, LAUNCH "kernel void relu(global const float *x, global float *y, long n)\n"
               BODY);
  pass(g_add, "// @launch global=cols, rows\n"
              "__kernel void add(__global const float *a, __global const float *b,\n"
              "                  __global float *y, long rows, long cols)\n"
              "{ long c = get_global_id(0), r = get_global_id(1);\n"
              "  y[r * cols + c] = a[r * cols + c] + b[c]; }\n");
}

static void test_directives(void **state)
{
  (void)state;
  refused(g_relu, "#include <stdio.h>\n" LAUNCH RELU, "#include is not allowed");
  refused(g_relu, "  #  include \"x.h\"\n" LAUNCH RELU, "#include is not allowed");
  refused(g_relu, "#line 7 \"other.cl\"\n" LAUNCH RELU, "#line is not allowed");
  refused(g_relu, "# 7 \"other.cl\"\n" LAUNCH RELU, "#line is not allowed");
  refused(g_relu, "#pragma clang diagnostic ignored \"-Wall\"\n" LAUNCH RELU,
          "#pragma clang");
}

static void test_kernels(void **state)
{
  (void)state;
  refused(g_relu, LAUNCH "void relu(__global const float *x, __global float *y, long n)\n"
                  BODY, "0 kernels");
  refused(g_relu, LAUNCH "__kernel void other(__global float *y) { y[0] = 0.0f; }\n" RELU,
          "2 kernels");
  refused(g_relu, LAUNCH "__kernel void relu2(__global const float *x, __global float *y, "
                  "long n)\n" BODY, "named 'relu2'");
  refused(g_relu, LAUNCH "__kernel void relu(__global const float *x, __global float *y)\n"
                  "{ y[0] = x[0]; }\n", "2 parameters; the operator has 3");
  refused(g_relu, LAUNCH "__kernel void relu(void) { }\n", "0 parameters");
  refused(g_relu, LAUNCH "__kernel int relu(__global const float *x, __global float *y, "
                  "long n)\n" BODY, "return void");
  refused(g_relu, LAUNCH "__kernel void relu(__global const float *x, __global float *y, "
                  "long n)\n{ printf(\"%f\", x[0]); }\n", "printf");
  refused(g_add, LAUNCH RELU, "named 'relu'");
}

static void test_launch(void **state)
{
  (void)state;
  refused(g_relu, RELU, "no '// @launch' line");
  refused(g_relu, "// @launch global=m\n" RELU, "unknown name 'm'");
  refused(g_relu, "// @launch local=64\n" RELU, "missing global=");
  refused(g_relu, "// @launch grid=n\n" RELU, "unknown key 'grid'");
  refused(g_relu, LAUNCH LAUNCH RELU, "2 '// @launch' lines");
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_legit),
    cmocka_unit_test(test_directives),
    cmocka_unit_test(test_kernels),
    cmocka_unit_test(test_launch),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
