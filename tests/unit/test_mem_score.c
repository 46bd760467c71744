/*
 * Unit tests of the memory's pure scoring and text functions: effective
 * speedup, step ratio (root, non-positive predecessor, failed Case),
 * labels at the exact thresholds 1.05, 1.0 and 0.85, d(v), the token
 * estimate, verdict names and error signatures.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "kope/mem.h"

static void test_effective_speedup(void **state)
{
  (void)state;
  assert_true(kope_mem_effective_speedup("correct", 1, 2.5) == 2.5);
  assert_true(kope_mem_effective_speedup("correct", 0, 2.5) == 0.0);
  assert_true(kope_mem_effective_speedup("incorrect", 1, 2.5) == 0.0);
  assert_true(kope_mem_effective_speedup("compile_error", 0, NAN) == 0.0);
  assert_true(kope_mem_effective_speedup("correct", 1, NAN) == 0.0);
  assert_true(kope_mem_effective_speedup("correct", 1, INFINITY) == 0.0);
  assert_true(kope_mem_effective_speedup("correct", 1, -1.0) == 0.0);
  assert_true(kope_mem_effective_speedup(NULL, 1, 1.0) == 0.0);
}

static void test_step_ratio(void **state)
{
  (void)state;
  assert_true(kope_mem_step_ratio(3.0, 0, 0.0) == 1.0);     /* root */
  assert_true(kope_mem_step_ratio(3.0, 1, 2.0) == 1.5);
  assert_true(kope_mem_step_ratio(1.0, 1, 2.0) == 0.5);
  assert_true(kope_mem_step_ratio(3.0, 1, 0.0) == 1.0);     /* failed predecessor */
  assert_true(kope_mem_step_ratio(3.0, 1, -1.0) == 1.0);
  assert_true(kope_mem_step_ratio(0.0, 1, 2.0) == 0.0);     /* failed Case */
  assert_true(kope_mem_step_ratio(0.0, 0, 0.0) == 0.0);     /* failed root */
}

static void test_labels_at_thresholds(void **state)
{
  (void)state;
  assert_int_equal(kope_mem_label_of(1.05), KOPE_LABEL_EFFECTIVE);
  assert_int_equal(kope_mem_label_of(nextafter(1.05, 0.0)), KOPE_LABEL_PARTIAL);
  assert_int_equal(kope_mem_label_of(2.1 / 2.0), KOPE_LABEL_EFFECTIVE);
  assert_int_equal(kope_mem_label_of(1.0), KOPE_LABEL_PARTIAL);
  assert_int_equal(kope_mem_label_of(nextafter(1.0, 0.0)), KOPE_LABEL_INEFFECTIVE);
  assert_int_equal(kope_mem_label_of(0.85), KOPE_LABEL_INEFFECTIVE);
  assert_int_equal(kope_mem_label_of(nextafter(0.85, 0.0)), KOPE_LABEL_NEGATIVE);
  assert_int_equal(kope_mem_label_of(0.0), KOPE_LABEL_NEGATIVE);
  assert_int_equal(kope_mem_label_of(7.0), KOPE_LABEL_EFFECTIVE);
  assert_string_equal(kope_mem_label_name(KOPE_LABEL_INEFFECTIVE), "ineffective");
  assert_int_equal(kope_mem_label_parse("negative"), KOPE_LABEL_NEGATIVE);
  assert_int_equal(kope_mem_label_parse("great"), -1);
}

static void test_d_score(void **state)
{
  (void)state;
  assert_true(kope_mem_d_score(1.3, 0, 0.0) == 1.3);                  /* leaf: r */
  assert_true(fabs(kope_mem_d_score(1.0, 2, 2.0) - (0.5 + 0.35 * 2.0)) < 1e-15);
  assert_true(fabs(kope_mem_d_score(0.0, 1, 1.0) - 0.35) < 1e-15);
}

static void test_tokens_and_verdicts(void **state)
{
  (void)state;
  assert_int_equal(kope_mem_token_estimate(""), 0);
  assert_int_equal(kope_mem_token_estimate("abcd"), 1);
  assert_int_equal(kope_mem_token_estimate("abcde"), 2);
  assert_int_equal(kope_mem_token_estimate("\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"), 1); /* 4 chars */
  assert_true(kope_mem_verdict_valid("correct"));
  assert_true(kope_mem_verdict_valid("forbidden"));
  assert_false(kope_mem_verdict_valid("ok"));
  assert_false(kope_mem_verdict_valid(NULL));
}

static void test_error_signature(void **state)
{
  char *a = kope_mem_error_signature(
      "In file included from /tmp/x/kernel.c:1:\n"
      "/tmp/build-1/kernel.c:12:5: error: 'acc' undeclared (first use in this function)\n"
      "   12 |     acc += x[i];\n");
  char *b = kope_mem_error_signature(
      "kernel.c:40:17: error: 'tmp' undeclared (first use in this function)");
  char *c = kope_mem_error_signature("kernel.c:3:1: error: expected ';' before '}' token");
  char *m1 = kope_mem_error_signature("mismatch at index 17: got 1.5 expected 2.25");
  char *m2 = kope_mem_error_signature("mismatch at index 90210: got -3e-05 expected 7");

  (void)state;
  assert_non_null(a);
  assert_non_null(b);
  assert_string_equal(a, b);
  assert_string_equal(a, "error: Q undeclared (first use in this function)");
  assert_non_null(c);
  assert_string_not_equal(a, c);
  assert_non_null(m1);
  assert_string_equal(m1, m2);
  assert_null(kope_mem_error_signature("all good"));
  assert_null(kope_mem_error_signature(NULL));
  free(a);
  free(b);
  free(c);
  free(m1);
  free(m2);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_effective_speedup),
    cmocka_unit_test(test_step_ratio),
    cmocka_unit_test(test_labels_at_thresholds),
    cmocka_unit_test(test_d_score),
    cmocka_unit_test(test_tokens_and_verdicts),
    cmocka_unit_test(test_error_signature),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
