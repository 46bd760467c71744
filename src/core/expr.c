/*
 * A recursive-descent evaluator for the small integer expression language
 * of operator specs (see expr.h). Grammar:
 *   expr   := term (('+'|'-') term)*
 *   term   := unary (('*'|'/'|'%') unary)*
 *   unary  := '-' unary | primary
 *   primary:= INT | NAME | FN '(' expr ',' expr ')' | '(' expr ')'
 *   FN     := 'min' | 'max' | 'cdiv' | 'rup'
 * cdiv(a,b) is the ceiling of a/b and rup(a,b) rounds a up to a multiple
 * of b, both for a >= 0 and b > 0 (launch geometry of GPU-style kernels).
 */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "core/expr.h"

typedef struct parser {
  const char *s;
  const char *p;
  kope_expr_lookup lookup;
  void (*names)(void *, const char *);
  void *ctx;
  char *msg;
  size_t msgsize;
  int failed;
} parser;

static int64_t p_expr(parser *ps);

static int64_t fail(parser *ps, const char *what)
{
  if (!ps->failed)
    snprintf(ps->msg, ps->msgsize, "%s at character %d of \"%s\"", what,
             (int)(ps->p - ps->s) + 1, ps->s);
  ps->failed = 1;
  return 0;
}

static void skip(parser *ps)
{
  while (isspace((unsigned char)*ps->p))
    ps->p++;
}

static int eat(parser *ps, char c)
{
  skip(ps);
  if (*ps->p != c)
    return 0;
  ps->p++;
  return 1;
}

static int is_fn(const char *name)
{
  return !strcmp(name, "min") || !strcmp(name, "max") || !strcmp(name, "cdiv") ||
         !strcmp(name, "rup");
}

/* min, max, cdiv, rup of a and b. */
static int64_t apply_fn(parser *ps, const char *name, int64_t a, int64_t b)
{
  int64_t q, r;

  if (!strcmp(name, "min"))
    return a < b ? a : b;
  if (!strcmp(name, "max"))
    return a > b ? a : b;
  if (ps->names)
    return 0;
  if (b <= 0 || a < 0)
    return fail(ps, "cdiv/rup need a >= 0 and b > 0");
  q = a / b + (a % b != 0);
  if (name[0] == 'c')
    return q;
  if (__builtin_mul_overflow(q, b, &r))
    return fail(ps, "overflow");
  return r;
}

static int64_t p_name(parser *ps)
{
  char name[64];
  size_t n = 0;
  int64_t v = 0;

  while ((isalnum((unsigned char)*ps->p) || *ps->p == '_') && n < sizeof name - 1)
    name[n++] = *ps->p++;
  name[n] = '\0';
  if (is_fn(name)) {
    int64_t a, b;
    if (!eat(ps, '('))
      return fail(ps, "expected '(' after min/max/cdiv/rup");
    a = p_expr(ps);
    if (!eat(ps, ','))
      return fail(ps, "expected ','");
    b = p_expr(ps);
    if (!eat(ps, ')'))
      return fail(ps, "expected ')'");
    return ps->failed ? 0 : apply_fn(ps, name, a, b);
  }
  if (ps->names)
    ps->names(ps->ctx, name);
  else if (!ps->lookup || ps->lookup(ps->ctx, name, &v) != 0) {
    char what[128];
    snprintf(what, sizeof what, "unknown name '%s'", name);
    return fail(ps, what);
  }
  return v;
}

static int64_t p_primary(parser *ps)
{
  skip(ps);
  if (isdigit((unsigned char)*ps->p)) {
    int64_t v = 0;
    while (isdigit((unsigned char)*ps->p)) {
      if (__builtin_mul_overflow(v, 10, &v) ||
          __builtin_add_overflow(v, *ps->p - '0', &v))
        return fail(ps, "integer literal too large");
      ps->p++;
    }
    return v;
  }
  if (isalpha((unsigned char)*ps->p) || *ps->p == '_')
    return p_name(ps);
  if (eat(ps, '(')) {
    int64_t v = p_expr(ps);
    if (!eat(ps, ')'))
      return fail(ps, "expected ')'");
    return v;
  }
  return fail(ps, *ps->p ? "expected a number, a name or '('" : "unexpected end");
}

static int64_t p_unary(parser *ps)
{
  if (eat(ps, '-')) {
    int64_t v = p_unary(ps), r;
    if (__builtin_sub_overflow((int64_t)0, v, &r))
      return fail(ps, "overflow");
    return r;
  }
  return p_primary(ps);
}

static int64_t p_term(parser *ps)
{
  int64_t v = p_unary(ps), r;

  for (;;) {
    skip(ps);
    char op = *ps->p;
    if (op != '*' && op != '/' && op != '%')
      return v;
    ps->p++;
    r = p_unary(ps);
    if (ps->failed)
      return 0;
    if (op == '*') {
      if (__builtin_mul_overflow(v, r, &v))
        return fail(ps, "overflow");
    } else if (r == 0 && !ps->names) {
      return fail(ps, "division by zero");
    } else if (r == -1 && v == INT64_MIN) {
      if (op == '/')
        return fail(ps, "overflow");
      v = 0;
    } else if (r != 0) {
      v = op == '/' ? v / r : v % r;
    }
  }
}

static int64_t p_expr(parser *ps)
{
  int64_t v = p_term(ps), r;

  for (;;) {
    skip(ps);
    char op = *ps->p;
    if (op != '+' && op != '-')
      return v;
    ps->p++;
    r = p_term(ps);
    if (op == '+' ? __builtin_add_overflow(v, r, &v) : __builtin_sub_overflow(v, r, &v))
      return fail(ps, "overflow");
  }
}

static int run(parser *ps, int64_t *value)
{
  int64_t v;

  if (ps->msgsize)
    ps->msg[0] = '\0';
  v = p_expr(ps);
  skip(ps);
  if (!ps->failed && *ps->p)
    fail(ps, "unexpected character");
  if (ps->failed)
    return -1;
  if (value)
    *value = v;
  return 0;
}

int kope_expr_eval(const char *text, kope_expr_lookup lookup, void *ctx,
                   int64_t *value, char *msg, size_t msgsize)
{
  parser ps = {text, text, lookup, NULL, ctx, msg, msgsize, 0};
  return run(&ps, value);
}

int kope_expr_names(const char *text, void (*fn)(void *, const char *), void *ctx,
                    char *msg, size_t msgsize)
{
  parser ps = {text, text, NULL, fn, ctx, msg, msgsize, 0};
  return run(&ps, NULL);
}
