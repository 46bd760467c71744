/*
 * Unit tests for the static gate (src/eval/gate.c): the header and symbol
 * allow-lists, the directive scanner on raw source (comments, digraphs,
 * continuations, line markers, optimize pragmas, .incbin), the pragma and
 * attribute scan of preprocessed text, the inline-asm scan, and the ELF
 * object checks on objects gcc really compiles here (state, globals,
 * constructors, ifunc, external symbols) next to legitimate kernels that
 * must pass (OpenMP, intrinsics, const tables, static helpers).
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
#include "eval/gate.h"

static char why[512];

static void expect_refused(int rc, const char *rule)
{
  if (rc != -1)
    fail_msg("expected a refusal by rule '%s', got rc %d", rule, rc);
  if (strncmp(why, rule, strlen(rule)) != 0)
    fail_msg("expected rule '%s', got: %s", rule, why);
}

static void expect_passed(int rc)
{
  if (rc != 0)
    fail_msg("expected the gate to pass, got rc %d: %s", rc, why);
}

static void test_headers(void **state)
{
  (void)state;
  assert_true(kope_gate_header_allowed("stdint.h"));
  assert_true(kope_gate_header_allowed("omp.h"));
  assert_true(kope_gate_header_allowed("immintrin.h"));
  assert_true(kope_gate_header_allowed("x86intrin.h"));
  assert_true(kope_gate_header_allowed("math.h"));
  assert_false(kope_gate_header_allowed("pthread.h"));
  assert_false(kope_gate_header_allowed("unistd.h"));
  assert_false(kope_gate_header_allowed("sys/mman.h"));
  assert_false(kope_gate_header_allowed("dlfcn.h"));
  assert_false(kope_gate_header_allowed("../intrin.h"));
}

static void test_symbols(void **state)
{
  static const char *const ok[] = {"expf", "sqrtf", "tanhf", "exp", "fmaxf", "GOMP_parallel",
                                    "omp_get_thread_num", "memcpy", "memset", "memmove",
                                    "malloc", "free", "aligned_alloc", "calloc",
                                    "__stack_chk_fail", "_ZGVdN8v_expf", "__popcountdi2",
                                    "__mulsc3", "printf", "stderr", "GOMP_parallel_loop_static",
                                    "GOMP_loop_nonmonotonic_dynamic_next",
                                    "GOMP_critical_name_start", "GOMP_barrier", NULL};
  static const char *const bad[] = {"pthread_create", "fork", "execve", "system", "dlopen",
                                    "dlsym", "mmap", "mprotect", "syscall", "clock_gettime",
                                    "signal", "sigaction", "fopen", "open", "socket", "getenv",
                                    "write", "kill", "ptrace", "expfoo", "__libc_system",
                                    "GOMP_parallel_start", "GOMP_parallel_end",
                                    "GOMP_parallel_loop_static_start",
                                    "GOMP_parallel_sections_start", "GOMP_target_ext",
                                    "GOMP_teams_reg", NULL};
  int i;

  (void)state;
  for (i = 0; ok[i]; i++)
    if (!kope_gate_symbol_allowed(ok[i]))
      fail_msg("%s should be allowed", ok[i]);
  for (i = 0; bad[i]; i++)
    if (kope_gate_symbol_allowed(bad[i]))
      fail_msg("%s should be refused", bad[i]);
}

static void test_source(void **state)
{
  (void)state;
  expect_passed(kope_gate_source("#include <stdint.h>\n#include <immintrin.h>\n"
                                 "#pragma omp parallel for\n#pragma GCC target(\"avx2\")\n"
                                 "/* #include <unistd.h> */\n// #pragma GCC optimize(\"O0\")\n"
                                 "const char *s = \"#include <unistd.h>\";\n", why, sizeof why));
  expect_refused(kope_gate_source("int a;\n#include <pthread.h>\n", why, sizeof why), "include");
  assert_non_null(strstr(why, "line 2"));
  assert_non_null(strstr(why, "pthread.h"));
  expect_refused(kope_gate_source("  %:  include <unistd.h>\n", why, sizeof why), "include");
  expect_refused(kope_gate_source("#include \"../../ops/relu/reference.c\"\n", why, sizeof why),
                 "include");
  expect_refused(kope_gate_source("#define H <unistd.h>\n#include H\n", why, sizeof why),
                 "include");
  expect_refused(kope_gate_source("#inc\\\nlude <sys/mman.h>\n", why, sizeof why), "include");
  expect_refused(kope_gate_source("#line 7 \"x.c\"\n", why, sizeof why), "line-marker");
  expect_refused(kope_gate_source("# 1 \"/usr/include/stdio.h\" 1 3 4\n", why, sizeof why),
                 "line-marker");
  expect_refused(kope_gate_source("#pragma GCC optimize(\"O0\")\n", why, sizeof why), "flags");
  expect_refused(kope_gate_source("#pragma optimize(\"\", off)\n", why, sizeof why), "flags");
  expect_refused(kope_gate_source("__asm__(\".INCBIN \\\"/etc/passwd\\\"\");\n", why, sizeof why),
                 "incbin");
}

static void test_preprocessed(void **state)
{
  const char *head = "# 0 \"kernel.c\"\n# 0 \"<built-in>\"\n# 0 \"<command-line>\"\n"
                     "# 1 \"./kope_proto.h\" 1\n# 1 \"/usr/include/stdint.h\" 1 3 4\n"
                     "int x;\n# 2 \"./kope_proto.h\" 2\n# 1 \"kernel.c\"\n";
  char buf[2048];

  (void)state;
  snprintf(buf, sizeof buf, "%s# 1 \"/usr/lib/gcc/x86_64-linux-gnu/12/include/immintrin.h\" 1 3 4\n"
           "int y __attribute__((section(\".x\")));\n# 3 \"kernel.c\" 2\n"
           "static inline __attribute__((always_inline, target(\"avx2\"))) int f(void);\n", head);
  expect_passed(kope_gate_preprocessed(buf, why, sizeof why));
  snprintf(buf, sizeof buf, "%s#pragma GCC optimize(\"Ofast\")\nvoid f(void);\n", head);
  expect_refused(kope_gate_preprocessed(buf, why, sizeof why), "flags");
  snprintf(buf, sizeof buf, "%sstatic void __attribute__ ((\n__constructor__)) f(void) {}\n",
           head);
  expect_refused(kope_gate_preprocessed(buf, why, sizeof why), "attribute");
  snprintf(buf, sizeof buf, "%svoid g(void) __attribute__((optimize(\"O0\")));\n", head);
  expect_refused(kope_gate_preprocessed(buf, why, sizeof why), "attribute");
  assert_non_null(strstr(why, "optimize"));
  snprintf(buf, sizeof buf, "%s# 1 \"/work/evil.h\" 1\nint z;\n# 2 \"kernel.c\" 2\n", head);
  expect_refused(kope_gate_preprocessed(buf, why, sizeof why), "include");
  snprintf(buf, sizeof buf, "%sint gnu = 1; int attribute_count(int optimize);\n", head);
  expect_passed(kope_gate_preprocessed(buf, why, sizeof why));
}

static void test_asm(void **state)
{
  (void)state;
  expect_passed(kope_gate_asm("relu:\n\tvmaxps %ymm1, %ymm0, %ymm0\n\t.p2align 4\n#APP\n"
                              "# 10 \"kernel.c\" 1\n\t\n# 0 \"\" 2\n#NO_APP\n\tret\n",
                              why, sizeof why));
  expect_refused(kope_gate_asm("#APP\n\tsyscall\n#NO_APP\n", why, sizeof why), "syscall");
  expect_refused(kope_gate_asm("#APP\n\tnop; int $0x80\n#NO_APP\n", why, sizeof why),
                 "syscall");
  expect_refused(kope_gate_asm("#APP\n1:\tsysenter\n#NO_APP\n", why, sizeof why), "syscall");
  expect_refused(kope_gate_asm("#APP\n\t.byte 0x0f, 0x05\n#NO_APP\n", why, sizeof why), "asm");
  expect_refused(kope_gate_asm("#APP\n.section .init_array\n#NO_APP\n", why, sizeof why),
                 "asm");
}

/* Inline asm in preprocessed text, as gas reads it (issue 16). */
static void test_inline_asm(void **state)
{
  (void)state;
  expect_passed(kope_gate_inline_asm("void f(void) { __asm__ volatile(\"vzeroupper\" ::: "
                                     "\"memory\"); if (1) asm(\"nop\"); }", why, sizeof why));
  expect_passed(kope_gate_inline_asm("int x = 1; const char *s = \"asm(.byte)\";", why,
                                     sizeof why));
  expect_refused(kope_gate_inline_asm("void f(void) { asm(\"/**/.byte 0x0f,0x05\"); }", why,
                                      sizeof why), "asm");
  expect_refused(kope_gate_inline_asm("void f(void) { asm(\"/* x */ \\x73yscall\"); }",
                                      why, sizeof why), "syscall");
  expect_refused(kope_gate_inline_asm("__asm__(\".inc\" \"bin \\\"f\\\"\");", why,
                                      sizeof why), "asm");
  expect_refused(kope_gate_inline_asm("void f(void) { asm(\"nop\\n#NO_APP\\n.long 1\\n#APP\"); }",
                                      why, sizeof why), "asm");
  expect_refused(kope_gate_inline_asm("long m __asm__(\".gomp_critical_user_m\");", why,
                                      sizeof why), "asm: an asm label");
  expect_refused(kope_gate_inline_asm("long m[2] asm(\"y\");", why, sizeof why),
                 "asm: an asm label");
  expect_refused(kope_gate_inline_asm("void f(void) { asm(\"movq .gomp_critical_user_a(%%rip), "
                                      "%%rax\"); }", why, sizeof why), "asm");
  expect_refused(kope_gate_asm("#APP\n/**/.byte 0x0f,0x05\n#NO_APP\n", why, sizeof why), "asm");
}

/* Compile src with the candidate flags; returns the object's bytes. */
static unsigned char *compile(const char *src, size_t *n)
{
  char dir[] = "/tmp/kope-gate-XXXXXX", cmd[512], path[128];
  unsigned char *obj = NULL;
  FILE *f;
  long len;

  assert_non_null(mkdtemp(dir));
  snprintf(path, sizeof path, "%s/k.c", dir);
  f = fopen(path, "w");
  assert_non_null(f);
  fprintf(f, "#include <stdint.h>\n%s", src);
  fclose(f);
  snprintf(cmd, sizeof cmd, "cd %s && gcc -std=gnu11 -O3 -march=native -fopenmp -c k.c -o k.o "
           "2>/dev/null", dir);
  if (system(cmd) != 0)
    fail_msg("gcc failed on:\n%s", src);
  snprintf(path, sizeof path, "%s/k.o", dir);
  f = fopen(path, "rb");
  assert_non_null(f);
  fseek(f, 0, SEEK_END);
  len = ftell(f);
  rewind(f);
  obj = malloc((size_t)len);
  assert_int_equal(fread(obj, 1, (size_t)len, f), (size_t)len);
  fclose(f);
  *n = (size_t)len;
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  assert_int_equal(system(cmd), 0);
  return obj;
}

static int gate_obj(const char *src)
{
  size_t n;
  unsigned char *o = compile(src, &n);
  int rc = kope_gate_object(o, n, "relu", why, sizeof why);

  free(o);
  return rc;
}

#define RELU_LOOP "for (int64_t i = 0; i < n; i++) y[i] = x[i] > 0 ? x[i] : 0;"

static void test_object_legit(void **state)
{
  (void)state;
  expect_passed(gate_obj("#include <omp.h>\nvoid relu(const float *x, float *y, int64_t n)\n"
                         "{\n#pragma omp parallel for\n" RELU_LOOP "\n}\n"));
  expect_passed(gate_obj("#include <immintrin.h>\n#include <math.h>\n#include <stdlib.h>\n"
                         "static const float tbl[4] = {1, 2, 3, 4};\n"
                         "static float h(float v) { return expf(v) * tbl[(int)v & 3]; }\n"
                         "void relu(const float *x, float *y, int64_t n)\n{\n"
                         "  float *t = malloc(64); free(t);\n"
                         "#pragma omp parallel\n  {\n#pragma omp critical(acc)\n"
                         "    y[0] = h(x[0]);\n  }\n" RELU_LOOP "\n}\n"));
}

static void test_object_refused(void **state)
{
  (void)state;
  expect_refused(gate_obj("void relu(const float *x, float *y, int64_t n)\n"
                          "{ static int calls; calls++; " RELU_LOOP " }\n"), "state");
  assert_non_null(strstr(why, "calls"));
  expect_refused(gate_obj("float cache[64];\nvoid relu(const float *x, float *y, int64_t n)\n"
                          "{ cache[0] = x[0]; " RELU_LOOP " }\n"), "state");
  expect_refused(gate_obj("void helper(float *y) { y[0] = 0; }\n"
                          "void relu(const float *x, float *y, int64_t n)\n"
                          "{ " RELU_LOOP " helper(y); }\n"), "globals");
  assert_non_null(strstr(why, "helper"));
  expect_refused(gate_obj("__attribute__((constructor)) static void c(void) { __asm__ volatile(\"\"); }\n"
                          "void relu(const float *x, float *y, int64_t n) { " RELU_LOOP " }\n"),
                 "constructor");
  expect_refused(gate_obj("__attribute__((target_clones(\"avx2\", \"default\")))\n"
                          "void relu(const float *x, float *y, int64_t n) { " RELU_LOOP " }\n"),
                 "ifunc");
  expect_refused(gate_obj("typedef unsigned long pt; int pthread_create(pt *, const void *, "
                          "void *(*)(void *), void *);\nstatic void *w(void *p) { return p; }\n"
                          "void relu(const float *x, float *y, int64_t n)\n"
                          "{ pt t; pthread_create(&t, 0, w, 0); " RELU_LOOP " }\n"), "symbols");
  assert_non_null(strstr(why, "pthread_create"));
  expect_refused(gate_obj("int system(const char *) __asm__(\"system\");\n"
                          "void relu(const float *x, float *y, int64_t n)\n"
                          "{ system(\"true\"); " RELU_LOOP " }\n"), "symbols");
  expect_refused(kope_gate_object((const unsigned char *)"\177ELF not really", 16, "relu", why,
                                  sizeof why), "object");
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_headers),
    cmocka_unit_test(test_symbols),
    cmocka_unit_test(test_source),
    cmocka_unit_test(test_preprocessed),
    cmocka_unit_test(test_asm),
    cmocka_unit_test(test_inline_asm),
    cmocka_unit_test(test_object_legit),
    cmocka_unit_test(test_object_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
