/*
 * Unit tests for the integer expression language of operator specs
 * (src/core/expr.c): precedence and associativity, unary minus, truncating
 * division and remainder, min/max, names resolved through the lookup
 * callback, error messages (unknown name, division by zero, unbalanced
 * parentheses, trailing garbage, int64 overflow) and kope_expr_names.
 *
 * Evaluations that could trap (signed overflow in negation or division is
 * undefined behaviour in C and raises SIGFPE on x86) run in a forked child,
 * so a crash is reported as a failed assertion instead of taking down the
 * whole test program.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "kope_test.h"
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "core/expr.h"

/* Names known to the test lookup. */
static const struct {
  const char *name;
  int64_t v;
} g_names[] = {
  {"n", 10}, {"m", 3}, {"k", 7}, {"neg", -4}, {"zero", 0}, {"big", INT64_MAX},
  {"rows_2", 12},
};

static int g_lookups;   /* how many times the callback ran */

static int lookup(void *ctx, const char *name, int64_t *v)
{
  size_t i;

  g_lookups++;
  assert_ptr_equal(ctx, &g_names);   /* ctx is passed through unchanged */
  for (i = 0; i < sizeof g_names / sizeof g_names[0]; i++)
    if (!strcmp(g_names[i].name, name)) {
      *v = g_names[i].v;
      return 0;
    }
  return -1;
}

/* Evaluate text that must succeed and return its value. */
static int64_t ok(const char *text)
{
  char msg[256] = "untouched";
  int64_t v = -999999;
  int rc = kope_expr_eval(text, lookup, (void *)&g_names, &v, msg, sizeof msg);

  if (rc != 0)
    fail_msg("\"%s\" failed: %s", text, msg);
  return v;
}

/* Evaluate text that must fail; returns the message (static storage). The
 * value slot must be left alone on failure. */
static const char *bad(const char *text)
{
  static char msg[256];
  int64_t v = 424242;
  int rc;

  memset(msg, 0, sizeof msg);
  rc = kope_expr_eval(text, lookup, (void *)&g_names, &v, msg, sizeof msg);
  if (rc != -1)
    fail_msg("\"%s\" should fail but gave rc %d value %lld", text, rc, (long long)v);
  assert_int_equal(v, 424242);
  assert_true(msg[0] != '\0');
  return msg;
}

static void test_literals_and_precedence(void **state)
{
  (void)state;
  assert_int_equal(ok("0"), 0);
  assert_int_equal(ok("42"), 42);
  assert_int_equal(ok("9223372036854775807"), INT64_MAX);
  assert_int_equal(ok("2+3*4"), 14);
  assert_int_equal(ok("(2+3)*4"), 20);
  assert_int_equal(ok("2*3+4"), 10);
  assert_int_equal(ok("2*(3+4)"), 14);
  assert_int_equal(ok("((((7))))"), 7);
  /* left associativity of - and / */
  assert_int_equal(ok("10-3-2"), 5);
  assert_int_equal(ok("100/10/5"), 2);
  assert_int_equal(ok("100/(10/5)"), 50);
  assert_int_equal(ok("17%5*2"), 4);
  /* whitespace anywhere between tokens */
  assert_int_equal(ok("  2 +\t3 *   4  "), 14);
  assert_int_equal(ok("\n( 2 + 3 )\n* 4"), 20);
}

static void test_unary_minus(void **state)
{
  (void)state;
  assert_int_equal(ok("-3"), -3);
  assert_int_equal(ok("--3"), 3);
  assert_int_equal(ok("- 3 + 5"), 2);
  assert_int_equal(ok("2*-3"), -6);
  assert_int_equal(ok("2--3"), 5);
  assert_int_equal(ok("-(2+3)*2"), -10);
  assert_int_equal(ok("-n"), -10);
  assert_int_equal(ok("-neg"), 4);
  assert_int_equal(ok("0-9223372036854775807-1"), INT64_MIN);
}

static void test_division_truncates(void **state)
{
  (void)state;
  assert_int_equal(ok("7/2"), 3);
  assert_int_equal(ok("-7/2"), -3);
  assert_int_equal(ok("7/-2"), -3);
  assert_int_equal(ok("-7/-2"), 3);
  assert_int_equal(ok("7%3"), 1);
  assert_int_equal(ok("-7%3"), -1);
  assert_int_equal(ok("7%-3"), 1);
  assert_int_equal(ok("6%3"), 0);
  assert_int_equal(ok("1/3"), 0);
  assert_int_equal(ok("(n+m-1)/m"), 4);   /* ceil(10/3) */
}

static void test_min_max(void **state)
{
  (void)state;
  assert_int_equal(ok("min(3,5)"), 3);
  assert_int_equal(ok("min(5,3)"), 3);
  assert_int_equal(ok("max(3,5)"), 5);
  assert_int_equal(ok("max(5,3)"), 5);
  assert_int_equal(ok("max(-1,-2)"), -1);
  assert_int_equal(ok("min( n , m )"), 3);
  assert_int_equal(ok("max(min(n,k),m)*2"), 14);
  assert_int_equal(ok("min(n*2, k+1) + max(0, neg)"), 8);
  assert_int_equal(ok("-min(2,3)"), -2);
}

/* cdiv and rup: launch geometry of GPU-style kernels. */
static void test_cdiv_rup(void **state)
{
  int64_t v;
  char msg[256];

  (void)state;
  assert_int_equal(ok("cdiv(10,3)"), 4);
  assert_int_equal(ok("cdiv(9,3)"), 3);
  assert_int_equal(ok("cdiv(0,7)"), 0);
  assert_int_equal(ok("cdiv(1,7)"), 1);
  assert_int_equal(ok("rup(10,4)"), 12);
  assert_int_equal(ok("rup(12,4)"), 12);
  assert_int_equal(ok("rup(0,64)"), 0);
  assert_int_equal(ok("rup(cdiv(n, 4), m)"), 3);
  assert_int_equal(ok("rup(cdiv(n*m*k, 8), 64) * 2"), 128);
  assert_int_equal(ok("cdiv(big, 1)"), INT64_MAX);
  assert_int_equal(ok("cdiv(big, big)"), 1);
  assert_contains(bad("cdiv(n, 0)"), "b > 0");
  assert_contains(bad("rup(n, zero)"), "b > 0");
  assert_contains(bad("cdiv(neg, 2)"), "a >= 0");
  assert_contains(bad("rup(big, 2)"), "overflow");
  assert_contains(bad("cdiv(1 2)"), "','");
  assert_contains(bad("rup 3"), "'('");
  assert_int_equal(kope_expr_eval("cdiv(7,2)", NULL, NULL, &v, msg, sizeof msg), 0);
  assert_int_equal(v, 4);
}

static void test_names(void **state)
{
  (void)state;
  g_lookups = 0;
  assert_int_equal(ok("n"), 10);
  assert_true(g_lookups >= 1);
  assert_int_equal(ok("2*n+m"), 23);
  assert_int_equal(ok("n*m*k"), 210);
  assert_int_equal(ok("rows_2/m"), 4);
  assert_int_equal(ok("4*(n*m + m*k + n*k)"), 4 * (30 + 21 + 70));
  assert_int_equal(ok("big"), INT64_MAX);
  assert_int_equal(ok("zero*big"), 0);
}

static void test_unknown_name(void **state)
{
  const char *m;
  char msg[256];
  int64_t v = 5;

  (void)state;
  m = bad("q");
  assert_contains(m, "unknown name 'q'");
  m = bad("n + 2*q");
  assert_contains(m, "unknown name 'q'");
  m = bad("min(n, qq)");
  assert_contains(m, "unknown name 'qq'");
  /* a name with no lookup at all is unknown too */
  assert_int_equal(kope_expr_eval("n+1", NULL, NULL, &v, msg, sizeof msg), -1);
  assert_contains(msg, "unknown name 'n'");
  assert_int_equal(v, 5);
  /* the message says where */
  m = bad("n+q");
  assert_contains(m, "character");
}

static void test_division_by_zero(void **state)
{
  (void)state;
  assert_contains(bad("1/0"), "division by zero");
  assert_contains(bad("5%0"), "division by zero");
  assert_contains(bad("n/zero"), "division by zero");
  assert_contains(bad("n/(m-3)"), "division by zero");
}

static void test_syntax_errors(void **state)
{
  (void)state;
  assert_contains(bad("(2+3"), "')'");
  assert_contains(bad("((2+3)*4"), "')'");
  assert_contains(bad("min(2,3"), "')'");
  assert_contains(bad("min(2 3)"), "','");
  assert_contains(bad("min 2"), "'('");
  bad("2+3)");
  bad(")");
  bad("()");
  bad("");
  bad("   ");
  bad("2+");
  bad("*2");
  bad("2**3");
  /* trailing garbage */
  assert_contains(bad("2 3"), "unexpected character");
  assert_contains(bad("2+3)"), "unexpected character");
  assert_contains(bad("4 $"), "unexpected character");
  assert_contains(bad("n;"), "unexpected character");
  /* the position is the offending character (1-based) */
  assert_contains(bad("2 3"), "character 3");
}

static void test_overflow(void **state)
{
  (void)state;
  assert_contains(bad("9223372036854775807+1"), "overflow");
  assert_contains(bad("big+1"), "overflow");
  assert_contains(bad("0-9223372036854775807-2"), "overflow");
  assert_contains(bad("3037000500*3037000500"), "overflow");
  assert_contains(bad("big*2"), "overflow");
  assert_contains(bad("-big*2"), "overflow");
  assert_contains(bad("9223372036854775808"), "too large");
  assert_contains(bad("99999999999999999999999"), "too large");
  /* big but representable */
  assert_int_equal(ok("3037000499*3037000499"), INT64_C(9223372030926249001));
  assert_int_equal(ok("big-1+1"), INT64_MAX);
}

/* ---- evaluations that may trap, in a child process ---- */

struct child_res {
  int rc;
  int64_t v;
  char msg[200];
};

/* Evaluates text in a child; returns 0 and fills *res when the child
 * finished normally, or the terminating signal number (or 1000 + exit
 * status) when it did not. */
static int eval_in_child(const char *text, struct child_res *res)
{
  int fd[2], status;
  pid_t pid;
  ssize_t got;

  assert_int_equal(pipe(fd), 0);
  fflush(NULL);
  pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    struct child_res r;
    /* cmocka's handlers would longjmp into the parent's test runner */
    signal(SIGFPE, SIG_DFL);
    signal(SIGSEGV, SIG_DFL);
    signal(SIGILL, SIG_DFL);
    signal(SIGBUS, SIG_DFL);
    signal(SIGABRT, SIG_DFL);
    memset(&r, 0, sizeof r);
    close(fd[0]);
    r.rc = kope_expr_eval(text, lookup, (void *)&g_names, &r.v, r.msg, sizeof r.msg);
    if (write(fd[1], &r, sizeof r) != (ssize_t)sizeof r)
      _exit(3);
    _exit(0);
  }
  close(fd[1]);
  got = read(fd[0], res, sizeof *res);
  close(fd[0]);
  assert_int_equal(waitpid(pid, &status, 0), pid);
  if (WIFSIGNALED(status))
    return WTERMSIG(status);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || got != (ssize_t)sizeof *res)
    return 1000 + (WIFEXITED(status) ? WEXITSTATUS(status) : 0);
  return 0;
}

/* -INT64_MIN does not fit in int64: expected an "overflow" error, like the
 * binary operators give. */
static void test_negation_overflow(void **state)
{
  struct child_res r;
  int st;

  (void)state;
  st = eval_in_child("-(0-9223372036854775807-1)", &r);
  if (st)
    fail_msg("evaluating -(INT64_MIN) crashed the process (status %d); expected an "
             "\"overflow\" error", st);
  if (r.rc == 0)
    fail_msg("-(INT64_MIN) evaluated to %lld; expected an \"overflow\" error",
             (long long)r.v);
  assert_non_null(strstr(r.msg, "overflow"));
}

/* INT64_MIN / -1 does not fit in int64 (and traps on x86): expected an
 * "overflow" error. */
static void test_division_overflow(void **state)
{
  struct child_res r;
  int st;

  (void)state;
  st = eval_in_child("(0-9223372036854775807-1)/-1", &r);
  if (st)
    fail_msg("evaluating INT64_MIN/-1 crashed the process (status %d, SIGFPE=%d); "
             "expected an \"overflow\" error", st, SIGFPE);
  if (r.rc == 0)
    fail_msg("INT64_MIN/-1 evaluated to %lld; expected an \"overflow\" error",
             (long long)r.v);
  assert_non_null(strstr(r.msg, "overflow"));
  /* INT64_MIN % -1 is mathematically 0; either 0 or an error is fine, a
   * crash is not */
  st = eval_in_child("(0-9223372036854775807-1)%-1", &r);
  if (st)
    fail_msg("evaluating INT64_MIN %% -1 crashed the process (status %d)", st);
  if (r.rc == 0)
    assert_int_equal(r.v, 0);
}

/* ---- kope_expr_names ---- */

struct names {
  char v[16][64];
  int n;
};

static void collect(void *ctx, const char *name)
{
  struct names *ns = ctx;

  assert_true(ns->n < 16);
  snprintf(ns->v[ns->n++], sizeof ns->v[0], "%s", name);
}

static void test_names_collects(void **state)
{
  struct names ns;
  char msg[256];
  int i;

  (void)state;
  memset(&ns, 0, sizeof ns);
  assert_int_equal(kope_expr_names("4*(m*k + k*n) + min(rows, cols) - max(a_1, 2)",
                                   collect, &ns, msg, sizeof msg), 0);
  assert_int_equal(ns.n, 7);
  /* cdiv and rup are functions, not names, and are not evaluated */
  {
    struct names ns2;
    memset(&ns2, 0, sizeof ns2);
    assert_int_equal(kope_expr_names("cdiv(q, 0) + rup(WG, zero)", collect, &ns2, msg,
                                     sizeof msg), 0);
    assert_int_equal(ns2.n, 3);
    assert_string_equal(ns2.v[0], "q");
    assert_string_equal(ns2.v[1], "WG");
    assert_string_equal(ns2.v[2], "zero");
  }
  assert_string_equal(ns.v[0], "m");
  assert_string_equal(ns.v[1], "k");
  assert_string_equal(ns.v[2], "k");
  assert_string_equal(ns.v[3], "n");
  assert_string_equal(ns.v[4], "rows");
  assert_string_equal(ns.v[5], "cols");
  assert_string_equal(ns.v[6], "a_1");
  for (i = 0; i < ns.n; i++) {
    assert_string_not_equal(ns.v[i], "min");
    assert_string_not_equal(ns.v[i], "max");
  }

  /* no names at all */
  memset(&ns, 0, sizeof ns);
  assert_int_equal(kope_expr_names("2*3+min(1,2)", collect, &ns, msg, sizeof msg), 0);
  assert_int_equal(ns.n, 0);

  /* a name that merely starts with min is a name */
  memset(&ns, 0, sizeof ns);
  assert_int_equal(kope_expr_names("minimum + maxi", collect, &ns, msg, sizeof msg), 0);
  assert_int_equal(ns.n, 2);
  assert_string_equal(ns.v[0], "minimum");
  assert_string_equal(ns.v[1], "maxi");

  /* names mode checks syntax only: no lookup, no division by zero */
  memset(&ns, 0, sizeof ns);
  assert_int_equal(kope_expr_names("n/0", collect, &ns, msg, sizeof msg), 0);
  assert_int_equal(ns.n, 1);
}

static void test_names_syntax_error(void **state)
{
  struct names ns;
  char msg[256];

  (void)state;
  memset(&ns, 0, sizeof ns);
  msg[0] = '\0';
  assert_int_equal(kope_expr_names("m*(n+", collect, &ns, msg, sizeof msg), -1);
  assert_true(msg[0] != '\0');
  assert_int_equal(kope_expr_names("m n", collect, &ns, msg, sizeof msg), -1);
  assert_non_null(strstr(msg, "unexpected character"));
  assert_int_equal(kope_expr_names("min(m)", collect, &ns, msg, sizeof msg), -1);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_literals_and_precedence),
    cmocka_unit_test(test_unary_minus),
    cmocka_unit_test(test_division_truncates),
    cmocka_unit_test(test_min_max),
    cmocka_unit_test(test_cdiv_rup),
    cmocka_unit_test(test_names),
    cmocka_unit_test(test_unknown_name),
    cmocka_unit_test(test_division_by_zero),
    cmocka_unit_test(test_syntax_errors),
    cmocka_unit_test(test_overflow),
    cmocka_unit_test(test_negation_overflow),
    cmocka_unit_test(test_division_overflow),
    cmocka_unit_test(test_names_collects),
    cmocka_unit_test(test_names_syntax_error),
  };

  return cmocka_run_group_tests(tests, NULL, NULL);
}
