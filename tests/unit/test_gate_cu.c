/*
 * Unit tests for the CUDA source gate (src/eval/gate_cu.c) and the CUDA
 * host shim generator (src/target/cuda_shim.c). The gate: legitimate
 * constructs pass (device helpers, templates, __launch_bounds__, extern
 * __shared__, __constant__ tables, structs, static const and static
 * __shared__ locals, forbidden words inside comments), and each rule
 * refuses with its reason (host code, state across calls, I/O, directives,
 * macros, kernel count, name and arity, launch line). The shim: the exact
 * kernel declaration per dtype and role, and the translation of launch
 * expressions into case values and knob constants.
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
#include "eval/gate_cu.h"
#include "target/cuda_int.h"

#define HEAD "#define WG 128  // @knob layer=parallel values=64,128 \"block\"\n" \
             "// @launch grid=cdiv(n, WG) block=WG\n"
#define KERNEL "__global__ void relu(const float *__restrict__ x, float *y, long long n)\n"
#define BODY "{\n  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n" \
             "  if (i < n) y[i] = x[i] > 0 ? x[i] : 0;\n}\n"

static void passes(const kope_op *op, const char *src)
{
  char why[400] = "";

  if (kope_gate_cu(src, op, why, sizeof why) != 0)
    fail_msg("refused: %s\n--- source:\n%s", why, src);
}

static void refused(const kope_op *op, const char *src, const char *needle)
{
  char why[400] = "";

  if (kope_gate_cu(src, op, why, sizeof why) != -1)
    fail_msg("admitted, expected a refusal with \"%s\"\n--- source:\n%s", needle, src);
  if (!strstr(why, needle) || strncmp(why, "cuda gate: ", 11))
    fail_msg("expected \"%s\" in \"%s\"", needle, why);
}

static void legit_constructs(void **state)
{
  kope_op *op = kt_op_load("relu");

  (void)state;
  passes(op, HEAD KERNEL BODY);
  passes(op, HEAD "/* printf asm malloc #include in a comment */\n// __host__ main\n" KERNEL BODY);
  passes(op, HEAD "struct pair { float a, b; };\ntypedef float real;\n"
             "__constant__ float tbl[2] = {0.0f, 1.0f};\n"
             "template <int N> __device__ __forceinline__ real twice(real v) { return N * v; }\n"
             "static __device__ float f(float v) { return v; }\n"
             "__global__ void __launch_bounds__(WG, 2) relu(const float *__restrict__ x,\n"
             "    float *y, long long n)\n{\n  extern __shared__ float s[];\n"
             "  static __shared__ float t[WG];\n  static const int k = 1;\n"
             "  const char c = 'x';\n  struct pair p = {tbl[0], tbl[1]};\n"
             "  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
             "#pragma unroll\n  for (int u = 0; u < k; u++) t[threadIdx.x] = s[0] * 0 + c * 0;\n"
             "  if (i < n) y[i] = f(twice<1>(x[i] > p.a ? x[i] : p.a));\n}\n");
  passes(op, "#define WG 64  // @knob layer=parallel values=64 \"b\"\n#define SQ(v) ((v) * (v))\n"
             "#define STEP(i) { i += 1; }\n#if WG == 64\n#define K 1\n#else\n#define K 2\n#endif\n"
             "// @launch grid=max(1, min(cdiv(n, WG*2), 65535)) block=WG\n" KERNEL
             "{\n  long long i = threadIdx.x;\n  STEP(i)\n  if (i < n) y[i] = SQ(x[i]) * 0;\n}\n");
  kope_op_free(op);
}

static void host_code_and_state(void **state)
{
  kope_op *op = kt_op_load("relu");

  (void)state;
  refused(op, HEAD "float g(float v) { return v; }\n" KERNEL BODY, "host function 'g'");
  refused(op, HEAD "__host__ __device__ float g(float v) { return v; }\n" KERNEL BODY,
          "'__host__'");
  refused(op, HEAD KERNEL BODY "int main() { return 0; }\n", "'main'");
  refused(op, HEAD "__device__ float g(float v);\n" KERNEL BODY, "without a body");
  refused(op, HEAD "__device__ int hits;\n" KERNEL BODY, "__device__ variable 'hits'");
  refused(op, HEAD "static __device__ float last[4];\n" KERNEL BODY, "__device__ variable 'last'");
  refused(op, HEAD "__device__ float seen[2] = {0, 0};\n" KERNEL BODY, "__device__ variable 'seen'");
  refused(op, HEAD "float host_state;\n" KERNEL BODY, "file-scope variable 'host_state'");
  refused(op, HEAD KERNEL "{\n  static int calls;\n  calls++;\n}\n", "static variable");
  refused(op, HEAD "__managed__ float m;\n" KERNEL BODY, "managed memory");
  refused(op, HEAD "extern __device__ float other;\n" KERNEL BODY, "'extern'");
  refused(op, HEAD "namespace { __device__ float z; }\n" KERNEL BODY, "namespaces");
  refused(op, HEAD KERNEL "{\n  float *p = new float[4];\n  y[0] = p[0];\n}\n", "device heap");
  refused(op, HEAD KERNEL "{\n  float *p = (float *)malloc(4);\n  y[0] = p[0];\n}\n",
          "device heap");
  refused(op, HEAD "__constant__ const float c[1] = {1};\n" KERNEL
              "{\n  const_cast<float *>(c)[0] = x[0];\n}\n", "casting const away");
  refused(op, HEAD "__constant__ float c[WG];\n" KERNEL
              "{\n  float *p = (float *)c;\n  p[threadIdx.x] = x[0];\n}\n",
          "__constant__ table 'c'");
  refused(op, HEAD "__constant__ float c[WG];\n" KERNEL
              "{\n  float *p = (float *)&c[0];\n  p[1] = x[0];\n}\n", "__constant__ table 'c'");
  refused(op, HEAD "__constant__ float c[WG];\n" KERNEL "{\n  *(float *)(c + 1) = x[0];\n}\n",
          "__constant__ table 'c'");
  passes(op, HEAD "__constant__ float c[WG];\n" KERNEL
             "{\n  if (threadIdx.x < n) y[threadIdx.x] = c[threadIdx.x] + (x[0] && c[0]);\n}\n");
  kope_op_free(op);
}

static void io_directives_macros(void **state)
{
  kope_op *op = kt_op_load("relu");

  (void)state;
  refused(op, "#include <cuda_fp16.h>\n" HEAD KERNEL BODY, "#include");
  refused(op, "#line 7 \"other.cu\"\n" HEAD KERNEL BODY, "directive #line");
  refused(op, "#pragma omp parallel\n" HEAD KERNEL BODY, "#pragma omp");
  refused(op, HEAD "#define S(x) #x\n" KERNEL BODY, "stringizing");
  refused(op, HEAD "#define J(a, b) a##b\n" KERNEL BODY, "token pasting");
  refused(op, HEAD "#define P printf\n" KERNEL BODY, "'printf' in a directive");
  refused(op, HEAD "#define K __global__ void k2(float *y) { y[0] = 0; }\n" KERNEL BODY,
          "__global__ inside a macro");
  refused(op, HEAD "#define VAR float v[8];\nVAR\n" KERNEL BODY, "macro 'VAR'");
  refused(op, HEAD KERNEL "{\n  printf(\"%d\", 1);\n}\n", "'printf'");
  refused(op, HEAD KERNEL "{\n  asm(\"trap;\");\n}\n", "inline assembly");
  refused(op, HEAD KERNEL "{\n  __asm__ volatile(\"\" ::: \"memory\");\n}\n", "inline assembly");
  refused(op, HEAD KERNEL "{\n  const char *s = \"hi\";\n  y[0] = s[0];\n}\n", "string literal");
  refused(op, HEAD KERNEL "{\n  _Pragma(\"unroll\") for (;;) {}\n}\n", "_Pragma");
  refused(op, HEAD "/* unterminated\n" KERNEL BODY, "unterminated comment");
  kope_op_free(op);
}

static void kernel_and_launch(void **state)
{
  kope_op *op = kt_op_load("relu");

  (void)state;
  refused(op, HEAD "__device__ float g(float v) { return v; }\n", "no __global__ kernel");
  refused(op, HEAD "__global__ void relu2(const float *__restrict__ x, float *y, long long n)\n"
              BODY, "not named relu");
  refused(op, HEAD KERNEL BODY "__global__ void other(float *y) { y[0] = 0; }\n",
          "second __global__");
  refused(op, HEAD "__global__ void relu(const float *x, float *y)\n{\n}\n", "has 2 parameters");
  refused(op, HEAD "__global__ void relu()\n{\n}\n", "has 0 parameters");
  refused(op, HEAD KERNEL "{\n  if (n > 1) relu<<<1, 1>>>(x, y, 1);\n}\n", "kernel launch");
  refused(op, HEAD KERNEL "{\n  cudaDeviceSynchronize();\n}\n", "CUDA runtime API");
  refused(op, "#define WG 128  // @knob layer=parallel values=128 \"b\"\n" KERNEL BODY,
          "launch: no");
  refused(op, HEAD "// @launch grid=1 block=1\n" KERNEL BODY, "launch: 2");
  refused(op, "// @launch grid=cdiv(n, TB) block=256\n" KERNEL BODY, "unknown name 'TB'");
  refused(op, "// @launch block=256\n" KERNEL BODY, "launch:");
  refused(op, "// @launch global=n grid=n block=1\n" KERNEL BODY, "launch:");
  kope_op_free(op);
}

static void shim_translation(void **state)
{
  kope_op *relu = kt_op_load("relu"), *rms = kt_op_load("rms_norm");
  kope_err err = {0, ""};
  char *decl = kope_cuda_kernel_decl(rms), *shim;

  (void)state;
  assert_string_equal(decl, "extern \"C\" __global__ void rms_norm(const float *__restrict__ x, "
                            "const float *__restrict__ w, float *y, long long rows, "
                            "long long cols, float eps)");
  shim = kope_cuda_shim_source(relu, HEAD "// @launch-note not the line\n" KERNEL BODY, &err);
  assert_non_null(shim);
  assert_non_null(strstr(shim, "g[0] = (kope_cdiv((int64_t)a->ival[2], (int64_t)128LL));"));
  assert_non_null(strstr(shim, "bl[0] = ((int64_t)128LL);"));
  assert_non_null(strstr(shim, "sh[0] = 0;"));
  assert_non_null(strstr(shim, "(float *)kope_dev_out(a->ptr[1])"));
  /* the candidate comes after the shim: it must end with the #line marker */
  assert_non_null(strstr(shim, "#line 1 \"kernel.cu\"\n"));
  assert_string_equal(strstr(shim, "#line 1 \"kernel.cu\"\n"), "#line 1 \"kernel.cu\"\n");
  free(shim);
  shim = kope_cuda_shim_source(rms, "#define TB 64  // @knob layer=parallel values=64 \"b\"\n"
                                    "// @launch grid=rows block=TB,2 shared=rup(cols*4, 128)\n",
                               &err);
  assert_non_null(shim);
  assert_non_null(strstr(shim, "g[0] = ((int64_t)a->ival[3]);"));
  assert_non_null(strstr(shim, "bl[1] = (2);"));
  assert_non_null(strstr(shim, "sh[0] = (kope_rup((int64_t)a->ival[4]*4, 128));"));
  assert_non_null(strstr(shim, "(float)a->fval[5]"));
  free(shim);
  assert_null(kope_cuda_shim_source(relu, KERNEL BODY, &err));
  assert_non_null(strstr(err.msg, "launch:"));
  free(decl);
  kope_op_free(relu);
  kope_op_free(rms);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(legit_constructs),
    cmocka_unit_test(host_code_and_state),
    cmocka_unit_test(io_directives_macros),
    cmocka_unit_test(kernel_and_launch),
    cmocka_unit_test(shim_translation),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
