/*
 * Unit tests for the checked array growth of the out-of-memory policy
 * (src/core/grow.c, kope/core.h): capacity doubles from 16 and covers the
 * request, contents survive and new elements are zeroed, a request that
 * fits does nothing, and an allocation that cannot succeed (a byte size
 * that overflows, or one far beyond any machine's memory) returns
 * KOPE_ENOMEM with the array and its capacity untouched. kope_err_nomem
 * sets the message and the status.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include "kope/core.h"

/* Under AddressSanitizer a huge allocation must return NULL (as glibc's
 * does) instead of aborting the test; ignored without the sanitizer. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
  return "allocator_may_return_null=1";
}

static void test_grows_and_zeroes(void **state)
{
  int *v = NULL;
  size_t cap = 0, i;

  (void)state;
  assert_int_equal(kope_grow(&v, &cap, 1, sizeof *v), KOPE_OK);
  assert_non_null(v);
  assert_int_equal(cap, 16);
  for (i = 0; i < cap; i++)
    assert_int_equal(v[i], 0);
  for (i = 0; i < 16; i++)
    v[i] = (int)i + 1;
  assert_int_equal(kope_grow(&v, &cap, 16, sizeof *v), KOPE_OK);
  assert_int_equal(cap, 16);   /* fits: nothing to do */
  assert_int_equal(kope_grow(&v, &cap, 17, sizeof *v), KOPE_OK);
  assert_int_equal(cap, 32);
  assert_int_equal(kope_grow(&v, &cap, 100, sizeof *v), KOPE_OK);
  assert_int_equal(cap, 128);
  for (i = 0; i < 16; i++)
    assert_int_equal(v[i], (int)i + 1);
  for (i = 16; i < cap; i++)
    assert_int_equal(v[i], 0);
  free(v);
}

static void test_structs(void **state)
{
  struct item { double x; const char *s; } *v = NULL;
  size_t cap = 0, n;

  (void)state;
  for (n = 0; n < 1000; n++) {
    assert_int_equal(kope_grow(&v, &cap, n + 1, sizeof *v), KOPE_OK);
    assert_null(v[n].s);
    v[n].x = (double)n;
    v[n].s = "x";
  }
  assert_true(cap >= 1000 && cap < 2000);
  for (n = 0; n < 1000; n++)
    assert_true(v[n].x == (double)n);
  free(v);
}

static void test_failure_keeps_array(void **state)
{
  long *v = NULL, *before;
  size_t cap = 0;

  (void)state;
  assert_int_equal(kope_grow(&v, &cap, 3, sizeof *v), KOPE_OK);
  v[2] = 42;
  before = v;
  /* the byte size overflows size_t */
  assert_int_equal(kope_grow(&v, &cap, SIZE_MAX / 4, sizeof *v), KOPE_ENOMEM);
  assert_ptr_equal(v, before);
  assert_int_equal(cap, 16);
  /* 2^50 bytes: realloc itself fails */
  assert_int_equal(kope_grow(&v, &cap, (size_t)1 << 47, sizeof *v), KOPE_ENOMEM);
  assert_ptr_equal(v, before);
  assert_int_equal(cap, 16);
  assert_int_equal(v[2], 42);
  assert_int_equal(kope_grow(&v, &cap, 4, 0), KOPE_OK);   /* fits before elem matters */
  assert_int_equal(kope_grow(&v, &cap, 17, 0), KOPE_ENOMEM);
  free(v);
}

static void test_err_nomem(void **state)
{
  kope_err err;

  (void)state;
  kope_err_clear(&err);
  assert_int_equal(kope_err_nomem(&err, "tuner arms"), KOPE_ENOMEM);
  assert_int_equal(err.code, KOPE_ENOMEM);
  assert_int_equal(KOPE_ENOMEM, KOPE_EENV);   /* exit code 3 */
  assert_string_equal(err.msg, "out of memory (tuner arms)");
  assert_int_equal(kope_err_nomem(NULL, "x"), KOPE_ENOMEM);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_grows_and_zeroes),
    cmocka_unit_test(test_structs),
    cmocka_unit_test(test_failure_keeps_array),
    cmocka_unit_test(test_err_nomem),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
