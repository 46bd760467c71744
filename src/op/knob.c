/*
 * Knob annotations in kernel sources. A knob is a macro the tuner and the
 * LLM may set, declared on one line:
 *   #define NAME VALUE  // @knob layer=LAYER values=V1,V2,... "description"
 * Parsing returns every knob with its allowed values; applying rewrites
 * the VALUE on that line only, so the result is a complete, diffable
 * source file.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kope/op.h"

const char *const kope_knob_layers[] = {
  "parallel", "tiling", "vectorize", "memory", "instruction", "algorithm", NULL
};

static const char *skip_ws(const char *p)
{
  while (*p == ' ' || *p == '\t')
    p++;
  return p;
}

static int read_token(const char **pp, char *out, size_t size)
{
  const char *p = skip_ws(*pp);
  size_t n = 0;

  while (*p && !isspace((unsigned char)*p) && *p != ',' && *p != '"' && n < size - 1)
    out[n++] = *p++;
  out[n] = '\0';
  *pp = p;
  return n ? 0 : -1;
}

static int layer_ok(const char *l)
{
  int i;

  for (i = 0; kope_knob_layers[i]; i++)
    if (!strcmp(kope_knob_layers[i], l))
      return 1;
  return 0;
}

static int parse_values(const char *p, kope_knob *k)
{
  char tok[32];

  k->nvalues = 0;
  for (;;) {
    if (read_token(&p, tok, sizeof tok) != 0 || k->nvalues == KOPE_MAX_KNOB_VALUES)
      return -1;
    snprintf(k->values[k->nvalues++], sizeof k->values[0], "%s", tok);
    if (*p != ',')
      return 0;
    p++;
  }
}

/* Parse the annotation after "@knob". Returns a message or NULL. */
static const char *parse_annotation(const char *p, kope_knob *k)
{
  const char *q;
  int i, found = 0;

  for (;;) {
    p = skip_ws(p);
    if (!strncmp(p, "layer=", 6)) {
      p += 6;
      if (read_token(&p, k->layer, sizeof k->layer) || !layer_ok(k->layer))
        return "layer= must be one of parallel, tiling, vectorize, memory, instruction, algorithm";
    } else if (!strncmp(p, "values=", 7)) {
      p += 7;
      if (parse_values(p, k))
        return "values= must be a comma-separated list of at most 16 values";
      while (*p && !isspace((unsigned char)*p))
        p++;
    } else if (*p == '"') {
      q = strchr(p + 1, '"');
      if (!q)
        return "unterminated description string";
      snprintf(k->desc, sizeof k->desc, "%.*s", (int)(q - p - 1), p + 1);
      p = q + 1;
    } else if (*p == '\0' || *p == '\n' || *p == '\r' || !strncmp(p, "*/", 2)) {
      break;
    } else {
      return "expected layer=..., values=... or a \"description\"";
    }
  }
  if (!k->layer[0])
    return "missing layer=";
  if (!k->nvalues)
    return "missing values=";
  for (i = 0; i < k->nvalues; i++)
    found |= !strcmp(k->values[i], k->value);
  if (!found)
    return "the #define's value is not among values=";
  return NULL;
}

static const char *parse_line(const char *line, kope_knob *k)
{
  const char *p = skip_ws(line), *at = strstr(line, "@knob");

  memset(k, 0, sizeof *k);
  if (*p != '#')
    return "an @knob annotation must be on a '#define NAME VALUE' line";
  p = skip_ws(p + 1);
  if (strncmp(p, "define", 6) != 0)
    return "an @knob annotation must be on a '#define NAME VALUE' line";
  p += 6;
  if (read_token(&p, k->name, sizeof k->name) ||
      read_token(&p, k->value, sizeof k->value) || strchr(k->name, '('))
    return "expected '#define NAME VALUE' before the annotation";
  return parse_annotation(at + 5, k);
}

static int knobs_fail(kope_knob **knobs, size_t *n, int rc)
{
  free(*knobs);
  *knobs = NULL;
  *n = 0;
  return rc;
}

int kope_knobs_parse(const char *src, const char *where, kope_knob **knobs, size_t *n,
                     kope_err *err)
{
  const char *line = src;
  size_t cap = 0, i;
  int lineno = 1;

  *n = 0;
  *knobs = NULL;
  if (kope_grow(knobs, &cap, 1, sizeof **knobs) != KOPE_OK)
    return kope_err_nomem(err, "knobs");
  while (line && *line) {
    const char *end = strchr(line, '\n');
    size_t len = end ? (size_t)(end - line) : strlen(line);
    char *l = kope_strndup(line, len);
    if (!l)
      return knobs_fail(knobs, n, kope_err_nomem(err, "knobs"));
    if (strstr(l, "@knob")) {
      kope_knob k;
      const char *msg = parse_line(l, &k);
      free(l);
      if (msg)
        return knobs_fail(knobs, n, kope_err_set(err, KOPE_EINPUT, "%s:%d: bad knob: %s",
                                                 where, lineno, msg));
      for (i = 0; i < *n; i++)
        if (!strcmp((*knobs)[i].name, k.name))
          return knobs_fail(knobs, n, kope_err_set(err, KOPE_EINPUT,
                                                   "%s:%d: knob %s declared twice", where,
                                                   lineno, k.name));
      k.line = lineno;
      if (kope_grow(knobs, &cap, *n + 1, sizeof **knobs) != KOPE_OK)
        return knobs_fail(knobs, n, kope_err_nomem(err, "knobs"));
      (*knobs)[(*n)++] = k;
    } else {
      free(l);
    }
    line = end ? end + 1 : NULL;
    lineno++;
  }
  return KOPE_OK;
}

/* The byte offsets of the value token on the knob's line. */
static int value_span(const char *src, const kope_knob *k, size_t *start, size_t *len)
{
  const char *p = src;
  int line = 1;
  char tok[64];

  while (line < k->line && (p = strchr(p, '\n')))
    p++, line++;
  if (!p)
    return -1;
  p = skip_ws(skip_ws(p) + 1);   /* past '#' */
  p += 6;                        /* "define" */
  if (read_token(&p, tok, sizeof tok))
    return -1;
  p = skip_ws(p);
  *start = (size_t)(p - src);
  if (read_token(&p, tok, sizeof tok))
    return -1;
  *len = strlen(tok);
  return 0;
}

char *kope_knobs_apply(const char *src, const char *name, const char *value, kope_err *err)
{
  kope_knob *ks = NULL, *k = NULL;
  size_t n = 0, i, start, len;
  kope_buf b;
  char *res = NULL;
  int ok = 0;

  if (kope_knobs_parse(src, "kernel", &ks, &n, err))
    goto out;
  for (i = 0; i < n; i++)
    if (!strcmp(ks[i].name, name))
      k = &ks[i];
  if (!k) {
    kope_err_set(err, KOPE_EINPUT, "no knob named %s", name);
    goto out;
  }
  for (i = 0; i < (size_t)k->nvalues; i++)
    ok |= !strcmp(k->values[i], value);
  if (!ok) {
    kope_err_set(err, KOPE_EINPUT, "knob %s does not allow value %s", name, value);
    goto out;
  }
  if (value_span(src, k, &start, &len)) {
    kope_err_set(err, KOPE_EINTERNAL, "knob %s: cannot locate its value", name);
    goto out;
  }
  kope_buf_init(&b, 0);
  if (kope_buf_append(&b, src, start) || kope_buf_puts(&b, value) ||
      kope_buf_puts(&b, src + start + len)) {   /* never a cut kernel */
    kope_buf_release(&b);
    kope_err_nomem(err, "knob value");
    goto out;
  }
  if (!(res = kope_buf_steal(&b)))
    kope_err_nomem(err, "knob value");
out:
  free(ks);
  return res;
}

char *kope_knobs_plain(const char *src, const char *where, kope_err *err)
{
  kope_knob *ks = NULL;
  size_t n = 0, i;
  char *cur = NULL, *next;

  if (kope_knobs_parse(src, where, &ks, &n, err))
    goto out;
  if (!(cur = kope_strdup(src))) {
    kope_err_nomem(err, "plain configuration");
    goto out;
  }
  for (i = 0; i < n; i++) {
    if (!(next = kope_knobs_apply(cur, ks[i].name, ks[i].values[0], err))) {
      free(cur);
      cur = NULL;
      goto out;
    }
    free(cur);
    cur = next;
  }
out:
  free(ks);
  return cur;
}

char *kope_knob_thought_id(const kope_knob *k, const char *value)
{
  char lower[64];
  size_t i;

  for (i = 0; k->name[i] && i < sizeof lower - 1; i++)
    lower[i] = (char)tolower((unsigned char)k->name[i]);
  lower[i] = '\0';
  return kope_sprintf("%s.%s=%s", k->layer, lower, value);
}
