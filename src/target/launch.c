/*
 * The `// @launch` line of GPU-style kernel sources (see launch.h):
 * finding the one line, splitting it into keys and comma-separated
 * expressions (commas inside parentheses belong to min/max/cdiv/rup),
 * checking every name against the operator and the file's knobs, and
 * evaluating the expressions for a bound case.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/expr.h"
#include "target/launch.h"

#define TAG "// @launch"

/* The text after the tag on the single @launch line, copied into line.
 * Returns 0, or -1 with err set. */
static int find_line(const char *src, char *line, size_t size, kope_err *err)
{
  const char *p = src, *found = NULL;
  int count = 0;
  size_t n;

  while (p && *p) {
    const char *s = p;
    while (*s == ' ' || *s == '\t')
      s++;
    if (!strncmp(s, TAG, strlen(TAG)) && (isspace((unsigned char)s[strlen(TAG)]) ||
                                          !s[strlen(TAG)])) {
      found = s + strlen(TAG);
      count++;
    }
    p = strchr(p, '\n');
    if (p)
      p++;
  }
  if (count > 1) {
    kope_err_set(err, KOPE_EINPUT, "launch: %d '%s' lines (exactly one allowed)", count, TAG);
    return -1;
  }
  if (!count) {
    kope_err_set(err, KOPE_EINPUT, "launch: no '%s' line (e.g. %s global=n local=64)", TAG, TAG);
    return -1;
  }
  n = strcspn(found, "\r\n");
  if (n >= size) {
    kope_err_set(err, KOPE_EINPUT, "launch: the '%s' line is too long", TAG);
    return -1;
  }
  memcpy(line, found, n);
  line[n] = '\0';
  return 0;
}

static int key_allowed(const char *name, const char *const *keys)
{
  for (; keys && *keys; keys++)
    if (!strcmp(*keys, name))
      return 1;
  return 0;
}

/* Does p start "NAME=" (a new key)? */
static int at_key(const char *p)
{
  if (!isalpha((unsigned char)*p))
    return 0;
  while (isalnum((unsigned char)*p) || *p == '_')
    p++;
  return *p == '=';
}

/* Split the value at *pp (up to the next key at depth 0) into k->expr. */
static int split_value(const char **pp, kope_launch_key *k, kope_err *err)
{
  const char *p = *pp, *start = p;
  int depth = 0;

  k->n = 0;
  for (;; p++) {
    int end = !*p || (depth == 0 && isspace((unsigned char)*p) && at_key(p + strspn(p, " \t")));
    if (end || (depth == 0 && *p == ',')) {
      size_t n = (size_t)(p - start);
      while (n && isspace((unsigned char)start[n - 1]))
        n--;
      while (n && isspace((unsigned char)*start))
        start++, n--;
      if (k->n == KOPE_LAUNCH_MAX_DIMS)
        return kope_err_set(err, KOPE_EINPUT, "launch: %s= takes at most %d expressions",
                            k->name, KOPE_LAUNCH_MAX_DIMS);
      if (!n || n >= sizeof k->expr[0])
        return kope_err_set(err, KOPE_EINPUT, "launch: %s= has an %s expression", k->name,
                            n ? "overlong" : "empty");
      memcpy(k->expr[k->n], start, n);
      k->expr[k->n++][n] = '\0';
      start = p + 1;
      if (end)
        break;
    }
    depth += *p == '(' ? 1 : *p == ')' ? -1 : 0;
  }
  *pp = p;
  return KOPE_OK;
}

static int parse_keys(const char *line, const char *const *keys, kope_launch *l,
                      kope_err *err)
{
  const char *p = line;
  int rc, i;

  for (;;) {
    kope_launch_key *k;
    size_t n;
    p += strspn(p, " \t");
    if (!*p)
      return KOPE_OK;
    if (!at_key(p))
      return kope_err_set(err, KOPE_EINPUT, "launch: expected KEY=EXPR at '%.40s'", p);
    n = strcspn(p, "=");
    if (l->nkeys == KOPE_LAUNCH_MAX_KEYS || n >= sizeof l->key[0].name)
      return kope_err_set(err, KOPE_EINPUT, "launch: too many or too long keys at '%.40s'", p);
    k = &l->key[l->nkeys];
    memcpy(k->name, p, n);
    k->name[n] = '\0';
    if (!key_allowed(k->name, keys))
      return kope_err_set(err, KOPE_EINPUT, "launch: unknown key '%s'", k->name);
    for (i = 0; i < l->nkeys; i++)
      if (!strcmp(l->key[i].name, k->name))
        return kope_err_set(err, KOPE_EINPUT, "launch: key '%s' given twice", k->name);
    p += n + 1;
    if ((rc = split_value(&p, k, err)))
      return rc;
    l->nkeys++;
  }
}

/* The file's knobs whose current value is an integer. */
static int read_knobs(const char *src, kope_launch *l, kope_err *err)
{
  kope_knob *ks = NULL;
  size_t n = 0, i;
  int rc = kope_knobs_parse(src, "kernel", &ks, &n, err);

  for (i = 0; rc == KOPE_OK && i < n; i++) {
    char *end;
    long long v;
    errno = 0;
    v = strtoll(ks[i].value, &end, 0);
    if (errno || end == ks[i].value || *end || l->nknobs == KOPE_LAUNCH_MAX_KNOBS)
      continue;   /* not an integer: not usable in the launch line */
    snprintf(l->knob[l->nknobs], sizeof l->knob[0], "%s", ks[i].name);
    l->knob_val[l->nknobs++] = (int64_t)v;
  }
  free(ks);
  return rc;
}

int kope_launch_lookup(const kope_launch *l, const kope_op *op, const int64_t *ival,
                       const char *name, int64_t *v)
{
  size_t i;
  int k;

  for (i = 0; i < kope_op_nargs(op); i++) {
    const kope_arg *a = kope_op_arg(op, i);
    int integer = a->role == KOPE_ROLE_DIM ||
                  (a->role == KOPE_ROLE_PARAM && (a->dtype == KOPE_I32 || a->dtype == KOPE_I64));
    if (integer && !strcmp(a->name, name)) {
      *v = ival ? ival[i] : 1;
      return 0;
    }
  }
  for (k = 0; k < l->nknobs; k++)
    if (!strcmp(l->knob[k], name)) {
      *v = l->knob_val[k];
      return 0;
    }
  return -1;
}

typedef struct check_ctx {
  const kope_launch *l;
  const kope_op *op;
  char unknown[64];
} check_ctx;

static void check_name(void *ctx, const char *name)
{
  check_ctx *c = ctx;
  int64_t v;

  if (!c->unknown[0] && kope_launch_lookup(c->l, c->op, NULL, name, &v) != 0)
    snprintf(c->unknown, sizeof c->unknown, "%s", name);
}

static int check_names(const kope_launch *l, const kope_op *op, kope_err *err)
{
  int i, j;
  char msg[256];

  for (i = 0; i < l->nkeys; i++)
    for (j = 0; j < l->key[i].n; j++) {
      check_ctx c = {l, op, ""};
      const char *e = l->key[i].expr[j];
      if (kope_expr_names(e, check_name, &c, msg, sizeof msg) != 0)
        return kope_err_set(err, KOPE_EINPUT, "launch: %s= %s", l->key[i].name, msg);
      if (c.unknown[0])
        return kope_err_set(err, KOPE_EINPUT, "launch: unknown name '%s' in %s=%s (names: "
                            "the operator's dims and integer params, the file's integer "
                            "knobs)", c.unknown, l->key[i].name, e);
    }
  return KOPE_OK;
}

int kope_launch_parse(const char *src, const kope_op *op, const char *const *keys,
                      const char *const *required, kope_launch *l, kope_err *err)
{
  char line[2048];
  int rc;

  memset(l, 0, sizeof *l);
  if (find_line(src, line, sizeof line, err) != 0)
    return KOPE_EINPUT;
  if ((rc = parse_keys(line, keys, l, err)) || (rc = read_knobs(src, l, err)) ||
      (rc = check_names(l, op, err)))
    return rc;
  for (; required && *required; required++)
    if (!kope_launch_find(l, *required))
      return kope_err_set(err, KOPE_EINPUT, "launch: missing %s= in the %s line", *required,
                          TAG);
  return KOPE_OK;
}

const kope_launch_key *kope_launch_find(const kope_launch *l, const char *name)
{
  int i;

  for (i = 0; i < l->nkeys; i++)
    if (!strcmp(l->key[i].name, name))
      return &l->key[i];
  return NULL;
}

typedef struct eval_ctx {
  const kope_launch *l;
  const kope_op *op;
  const kope_case_bind *b;
} eval_ctx;

static int eval_lookup(void *ctx, const char *name, int64_t *v)
{
  eval_ctx *c = ctx;

  return kope_launch_lookup(c->l, c->op, c->b->ival, name, v);
}

int kope_launch_eval(const kope_launch *l, const kope_op *op, const kope_case_bind *b,
                     const char *name, int64_t v[KOPE_LAUNCH_MAX_DIMS], int *n, kope_err *err)
{
  const kope_launch_key *k = kope_launch_find(l, name);
  eval_ctx c = {l, op, b};
  char msg[256];
  int i;

  for (i = 0; i < KOPE_LAUNCH_MAX_DIMS; i++)
    v[i] = 1;
  if (!k)
    return kope_err_set(err, KOPE_EINPUT, "launch: no %s= given", name);
  for (i = 0; i < k->n; i++)
    if (kope_expr_eval(k->expr[i], eval_lookup, &c, &v[i], msg, sizeof msg) != 0)
      return kope_err_set(err, KOPE_EINPUT, "launch: %s=%s: %s", name, k->expr[i], msg);
  if (n)
    *n = k->n;
  return KOPE_OK;
}
