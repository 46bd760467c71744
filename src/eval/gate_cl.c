/*
 * The static gate for OpenCL C candidates (see gate_cl.h): comments and
 * string literals are blanked, directives are checked line by line, then
 * the tokens are scanned for kernel qualifiers and forbidden names, and
 * the one kernel's name and parameter count are compared with the
 * operator's. The @launch line is parsed on the raw text (it is a
 * comment).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "eval/gate_cl.h"
#include "target/launch.h"

static const char *const ocl_keys[] = {"global", "local", NULL};
static const char *const ocl_required[] = {"global", NULL};

static int refuse(char *why, size_t size, const char *fmt, const char *a, const char *b)
{
  char detail[300];

  snprintf(detail, sizeof detail, fmt, a, b);
  snprintf(why, size, "opencl gate: %s", detail);
  return -1;
}

/* Copy of src with comments and string/char literals blanked (newlines
 * kept). Caller frees. */
static char *blank(const char *src)
{
  char *t = kope_strdup(src), *p = t;

  while (*p) {
    if (p[0] == '/' && p[1] == '/') {
      while (*p && *p != '\n')
        *p++ = ' ';
    } else if (p[0] == '/' && p[1] == '*') {
      *p++ = ' ';
      *p++ = ' ';
      while (*p && !(p[0] == '*' && p[1] == '/'))
        if (*p != '\n')
          *p++ = ' ';
        else
          p++;
      if (*p)
        *p++ = ' ', *p++ = ' ';
    } else if (*p == '"' || *p == '\'') {
      char q = *p++;
      while (*p && *p != q && *p != '\n') {
        if (*p == '\\' && p[1])
          *p++ = ' ';
        *p++ = ' ';
      }
      if (*p == q)
        p++;
    } else {
      p++;
    }
  }
  return t;
}

static int directive_ok(const char *line, char *why, size_t size)
{
  const char *p = line + strspn(line, " \t");
  char word[32] = "";
  size_t n;

  if (*p != '#')
    return 0;
  p++;
  p += strspn(p, " \t");
  n = strspn(p, "abcdefghijklmnopqrstuvwxyz_");
  snprintf(word, sizeof word, "%.*s", (int)(n < 31 ? n : 31), p);
  if (!strcmp(word, "include") || !strcmp(word, "line") || !strcmp(word, "embed") ||
      !strcmp(word, "include_next") || !strcmp(word, "import") || isdigit((unsigned char)*p))
    return refuse(why, size, "#%s is not allowed (the kernel must be one self-contained "
                  "file)", word[0] ? word : "line", "");
  if (!strcmp(word, "pragma")) {
    const char *q = p + n;
    q += strspn(q, " \t");
    if (strncmp(q, "OPENCL", 6) && strncmp(q, "unroll", 6) && strncmp(q, "nounroll", 8))
      return refuse(why, size, "#pragma %.40s is not allowed (only OPENCL and unroll)", q, "");
  }
  return 0;
}

static int directives(const char *text, char *why, size_t size)
{
  const char *p = text;
  char line[1024];

  while (*p) {
    size_t n = strcspn(p, "\n");
    snprintf(line, sizeof line, "%.*s", (int)(n < sizeof line - 1 ? n : sizeof line - 1), p);
    if (directive_ok(line, why, size))
      return -1;
    p += n + (p[n] == '\n');
  }
  return 0;
}

/* Next identifier at or after *pp; 0 when none. */
static int next_ident(const char **pp, char *out, size_t size)
{
  const char *p = *pp;
  size_t n = 0;

  while (*p && !(isalpha((unsigned char)*p) || *p == '_')) {
    if (isdigit((unsigned char)*p))   /* skip numbers such as 1e5f whole */
      while (isalnum((unsigned char)*p) || *p == '.')
        p++;
    else
      p++;
  }
  if (!*p)
    return 0;
  while ((isalnum((unsigned char)*p) || *p == '_') && n < size - 1)
    out[n++] = *p++;
  out[n] = '\0';
  while (isalnum((unsigned char)*p) || *p == '_')
    p++;
  *pp = p;
  return 1;
}

/* Skip whitespace and __attribute__((...)) blocks. */
static const char *skip_attrs(const char *p)
{
  for (;;) {
    p += strspn(p, " \t\r\n");
    if (strncmp(p, "__attribute__", 13))
      return p;
    p += 13;
    p += strspn(p, " \t\r\n");
    if (*p == '(') {
      int depth = 0;
      do {
        depth += *p == '(' ? 1 : *p == ')' ? -1 : 0;
        p++;
      } while (*p && depth > 0);
    }
  }
}

/* Parameters of the list starting at '(' in p; -1 when unbalanced. */
static int count_params(const char *p)
{
  int depth = 0, commas = 0, any = 0;
  const char *s = p;

  for (; *p; p++) {
    if (*p == '(' || *p == '[')
      depth++;
    else if (*p == ')' || *p == ']') {
      if (--depth == 0)
        break;
    } else if (*p == ',' && depth == 1)
      commas++;
    else if (!isspace((unsigned char)*p))
      any = 1;
  }
  if (!*p)
    return -1;
  if (!any)
    return 0;
  {
    char inner[16];
    const char *q = s + 1;
    if (next_ident(&q, inner, sizeof inner) && !strcmp(inner, "void") && commas == 0) {
      q += strspn(q, " \t\r\n");
      if (*q == ')')
        return 0;
    }
  }
  return commas + 1;
}

/* The kernel after the qualifier at p: name and parameter count. */
static int check_kernel(const char *p, const kope_op *op, char *why, size_t size)
{
  char word[128], name[128];
  int np;

  p = skip_attrs(p);
  if (!next_ident(&p, word, sizeof word) || strcmp(word, "void"))
    return refuse(why, size, "a kernel must return void", "", "");
  p = skip_attrs(p);
  if (!next_ident(&p, name, sizeof name))
    return refuse(why, size, "a kernel without a name", "", "");
  if (strcmp(name, kope_op_name(op)))
    return refuse(why, size, "the kernel is named '%s'; it must be named '%s' after the "
                  "operator", name, kope_op_name(op));
  p += strspn(p, " \t\r\n");
  if (*p != '(' || (np = count_params(p)) < 0)
    return refuse(why, size, "cannot read the parameter list of kernel '%s'", name, "");
  if ((size_t)np != kope_op_nargs(op)) {
    char a[16], b[16];
    snprintf(a, sizeof a, "%d", np);
    snprintf(b, sizeof b, "%zu", kope_op_nargs(op));
    return refuse(why, size, "the kernel has %s parameters; the operator has %s", a, b);
  }
  return 0;
}

static int tokens(const char *text, const kope_op *op, char *why, size_t size)
{
  const char *p = text, *kpos = NULL;
  char word[128];
  int nk = 0;

  while (next_ident(&p, word, sizeof word)) {
    if (!strcmp(word, "printf"))
      return refuse(why, size, "printf is not allowed", "", "");
    if (!strcmp(word, "__kernel") || !strcmp(word, "kernel")) {
      if (++nk == 1)
        kpos = p;
    }
  }
  if (nk != 1) {
    char n[16];
    snprintf(n, sizeof n, "%d", nk);
    return refuse(why, size, "%s kernels (`__kernel`); exactly one, named '%s', is allowed",
                  n, kope_op_name(op));
  }
  return check_kernel(kpos, op, why, size);
}

int kope_gate_cl(const char *src, const kope_op *op, char *why, size_t size)
{
  char *text = blank(src);
  kope_launch l;
  kope_err err;
  int rc;

  kope_err_clear(&err);
  rc = directives(text, why, size);
  if (rc == 0)
    rc = tokens(text, op, why, size);
  if (rc == 0 && kope_launch_parse(src, op, ocl_keys, ocl_required, &l, &err) != KOPE_OK)
    rc = refuse(why, size, "%.280s", err.msg, "");
  free(text);
  return rc;
}
