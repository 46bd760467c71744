/*
 * Unit tests for the timing statistics (src/core/stats.c): medians of odd
 * and even counts without touching the input, the distribution-free
 * confidence interval of the median (checked against order statistics
 * computed here from the binomial distribution), and geometric means that
 * skip non-positive values.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core/stats.h"

static void test_median_odd(void **state)
{
  double one[] = {7.5};
  double v[] = {5, 1, 4, 2, 3};
  double dup[] = {2, 2, 9, 2, 1};

  (void)state;
  assert_float_equal(kope_median(one, 1), 7.5, 0);
  assert_float_equal(kope_median(v, 5), 3, 0);
  assert_float_equal(kope_median(dup, 5), 2, 0);
  assert_float_equal(kope_median(v, 3), 4, 0);   /* {5,1,4} */
}

static void test_median_even(void **state)
{
  double v[] = {4, 1, 3, 2};
  double w[] = {10, -10};
  double big[] = {1e300, 1e300};

  (void)state;
  assert_float_equal(kope_median(v, 4), 2.5, 0);
  assert_float_equal(kope_median(w, 2), 0.0, 0);
  assert_float_equal(kope_median(v, 2), 2.5, 0);   /* {4,1} */
  assert_true(isfinite(kope_median(big, 2)));
  assert_float_equal(kope_median(big, 2), 1e300, 1e285);
}

static void test_median_empty(void **state)
{
  double v[] = {3};

  (void)state;
  assert_float_equal(kope_median(v, 0), 0.0, 0);
}

static void test_median_input_unchanged(void **state)
{
  double v[] = {9, 3, 7, 1, 8, 2, 6}, copy[7];
  double lo, hi;

  (void)state;
  memcpy(copy, v, sizeof v);
  assert_float_equal(kope_median(v, 7), 6, 0);
  assert_memory_equal(v, copy, sizeof v);
  kope_median_ci(v, 7, &lo, &hi);
  assert_memory_equal(v, copy, sizeof v);
}

/* Deterministic scrambled sample: x(i) (1-based order statistic) is
 * 100 + 1.5*i. */
static void make_sample(double *v, size_t n, double *sorted)
{
  size_t i;

  for (i = 0; i < n; i++)
    sorted[i] = 100.0 + 1.5 * (double)(i + 1);
  for (i = 0; i < n; i++)
    v[i] = sorted[(i * 7 + 3) % n];   /* a permutation when gcd(7, n) == 1 */
  if (n % 7 == 0) {
    for (i = 0; i < n; i++)
      v[i] = sorted[n - 1 - i];
  }
}

/* Largest j (1-based) with P(Binom(n, 1/2) < j) <= 0.025. */
static size_t ci_rank(size_t n)
{
  double pmf = ldexp(1.0, -(int)n), cdf_below = 0.0;   /* P(X = 0) */
  size_t j = 0, i;

  /* P(X < j+1) = P(X <= j) */
  for (i = 0; i <= n; i++) {
    if (cdf_below + pmf > 0.025)
      break;
    cdf_below += pmf;
    j = i + 1;
    pmf = pmf * (double)(n - i) / (double)(i + 1);
  }
  return j;
}

static void test_ci_rank_reference(void **state)
{
  (void)state;
  /* sanity of the test's own binomial: known textbook ranks */
  assert_int_equal(ci_rank(20), 6);    /* P(X<=5)=0.0207, P(X<=6)=0.0577 */
  assert_int_equal(ci_rank(6), 1);     /* P(X=0)=1/64 */
  assert_int_equal(ci_rank(5), 0);     /* 1/32 > 0.025 */
  assert_int_equal(ci_rank(10), 2);    /* P(X<=1)=11/1024 */
}

static void test_ci_n20(void **state)
{
  double v[20], sorted[20], copy[20], lo = -1, hi = -1;
  size_t j = ci_rank(20);

  (void)state;
  make_sample(v, 20, sorted);
  memcpy(copy, v, sizeof v);
  assert_int_equal(j, 6);
  kope_median_ci(v, 20, &lo, &hi);
  assert_float_equal(lo, sorted[j - 1], 0);        /* x(6) */
  assert_float_equal(hi, sorted[20 - j], 0);       /* x(15) */
  assert_float_equal(lo, 109.0, 0);
  assert_float_equal(hi, 122.5, 0);
  assert_memory_equal(v, copy, sizeof v);
  /* the interval holds the median */
  assert_true(lo <= kope_median(v, 20) && kope_median(v, 20) <= hi);
}

static void test_ci_many_n(void **state)
{
  double v[400], sorted[400], lo, hi;
  size_t n;

  (void)state;
  for (n = 6; n <= 400; n++) {
    size_t j = ci_rank(n);
    assert_true(j >= 1);
    make_sample(v, n, sorted);
    kope_median_ci(v, n, &lo, &hi);
    if (lo != sorted[j - 1] || hi != sorted[n - j])
      fail_msg("n=%zu: got [%g, %g], expected x(%zu)=%g and x(%zu)=%g", n, lo, hi, j,
               sorted[j - 1], n - j + 1, sorted[n - j]);
  }
}

static void test_ci_small_n_full_range(void **state)
{
  double v[8], sorted[8], lo, hi;
  size_t n;

  (void)state;
  for (n = 1; n < 6; n++) {
    make_sample(v, n, sorted);
    kope_median_ci(v, n, &lo, &hi);
    assert_float_equal(lo, sorted[0], 0);
    assert_float_equal(hi, sorted[n - 1], 0);
  }
  {
    double w[] = {3, 3, 3};
    kope_median_ci(w, 3, &lo, &hi);
    assert_float_equal(lo, 3, 0);
    assert_float_equal(hi, 3, 0);
  }
}

static void test_geomean(void **state)
{
  double a[] = {2, 8};
  double b[] = {2, 0, 8, -5, -0.0};
  double c[] = {0, -1, -2};
  double d[] = {1e-3, 1e3, 1};
  double e[] = {4};

  (void)state;
  assert_float_equal(kope_geomean(a, 2), 4.0, 1e-12);
  assert_float_equal(kope_geomean(b, 5), 4.0, 1e-12);
  assert_float_equal(kope_geomean(c, 3), 0.0, 0);
  assert_float_equal(kope_geomean(a, 0), 0.0, 0);
  assert_float_equal(kope_geomean(d, 3), 1.0, 1e-12);
  assert_float_equal(kope_geomean(e, 1), 4.0, 1e-12);
  {
    double f[] = {1.5, 2.5, 3.5, 0.25};
    double want = pow(1.5 * 2.5 * 3.5 * 0.25, 0.25);
    assert_float_equal(kope_geomean(f, 4), want, 1e-12);
  }
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_median_odd),
    cmocka_unit_test(test_median_even),
    cmocka_unit_test(test_median_empty),
    cmocka_unit_test(test_median_input_unchanged),
    cmocka_unit_test(test_ci_rank_reference),
    cmocka_unit_test(test_ci_n20),
    cmocka_unit_test(test_ci_many_n),
    cmocka_unit_test(test_ci_small_n_full_range),
    cmocka_unit_test(test_geomean),
  };

  return cmocka_run_group_tests(tests, NULL, NULL);
}
