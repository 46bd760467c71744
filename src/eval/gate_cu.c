/*
 * The CUDA source gate (see gate_cu.h). The text is first reduced to
 * code: comments and character literals become spaces, backslash-newlines
 * are joined, and a string literal is refused (a kernel has no use for
 * one; printf and asm need them). Then, line by line, directives are
 * checked; then the code is scanned token by token with the brace depth
 * and the start of each file-scope declaration tracked, which is enough
 * to tell kernels, device functions, host functions and variables apart.
 * Every identifier is checked, #define bodies included, and token pasting
 * is refused, so a macro cannot assemble a forbidden name.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "eval/gate_cu.h"
#include "target/launch.h"

static int refuse(char *why, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int refuse(char *why, size_t size, const char *fmt, ...)
{
  va_list ap;
  int n = snprintf(why, size, "cuda gate: ");

  va_start(ap, fmt);
  if (n > 0 && (size_t)n < size)
    vsnprintf(why + n, size - (size_t)n, fmt, ap);
  va_end(ap);
  return -1;
}

/* Copy of src with comments, char and string literals blanked (newlines
 * kept) and line continuations joined; *str_line is the line of the first
 * string literal (0: none). -1 (why set) for an unterminated comment. */
static int to_code(const char *src, char *code, size_t *str_line, char *why, size_t size)
{
  size_t i = 0, o = 0, line = 1;

  while (src[i]) {
    if (src[i] == '\\' && src[i + 1] == '\n') {
      code[o++] = ' ';
      code[o++] = ' ';
      i += 2;
    } else if (src[i] == '/' && src[i + 1] == '/') {
      while (src[i] && src[i] != '\n')
        code[o++] = ' ', i++;
    } else if (src[i] == '/' && src[i + 1] == '*') {
      const char *e = strstr(src + i + 2, "*/");
      if (!e)
        return refuse(why, size, "unterminated comment at line %zu", line);
      for (; src + i < e + 2; i++)
        code[o++] = src[i] == '\n' ? '\n' : ' ';
    } else if (src[i] == '"' || src[i] == '\'') {
      char q = src[i];
      if (q == '"' && !*str_line)
        *str_line = line;
      code[o++] = '0';
      for (i++; src[i] && src[i] != q && src[i] != '\n'; i++)
        i += src[i] == '\\' && src[i + 1] && src[i + 1] != '\n';
      i += src[i] == q;
    } else {
      line += src[i] == '\n';
      code[o++] = src[i++];
    }
  }
  code[o] = '\0';
  return 0;
}

/* The directive on one line (p at '#'): allow-listed, no pasting or
 * stringizing, no kernel defined by a macro. */
static int check_directive(const char *p, size_t len, size_t line, char *why, size_t size)
{
  static const char *const ok[] = {"define", "undef", "if", "ifdef", "ifndef", "elif",
                                   "else", "endif", "pragma", NULL};
  char name[32] = "", rest[512];
  size_t n = 0, i;

  p++;
  len--;
  while (len && isspace((unsigned char)*p))
    p++, len--;
  while (len && isalpha((unsigned char)*p) && n < sizeof name - 1)
    name[n++] = *p++, len--;
  name[n] = '\0';
  snprintf(rest, sizeof rest, "%.*s", (int)len, p);
  if (!strcmp(name, "include"))
    return refuse(why, size, "#include at line %zu (no headers: kope provides the CUDA "
                  "built-ins)", line);
  for (i = 0; ok[i] && strcmp(ok[i], name); i++)
    ;
  if (!ok[i])
    return refuse(why, size, "directive #%s at line %zu is not allowed", name, line);
  if (!strcmp(name, "pragma")) {
    char w[16] = "";
    if (sscanf(rest, " %15[a-z_]", w) != 1 || (strcmp(w, "unroll") && strcmp(w, "nounroll")))
      return refuse(why, size, "#pragma %s at line %zu (only unroll and nounroll)", w, line);
  }
  if (strchr(rest, '#'))
    return refuse(why, size, "token pasting or stringizing at line %zu", line);
  if (strstr(rest, "__global__"))
    return refuse(why, size, "__global__ inside a macro at line %zu", line);
  return 0;
}

#define MAX_STMT_MACROS 64
#define MAX_CONST_VARS 64

typedef struct scan {
  const char *code;
  const kope_op *op;
  int depth, paren;
  int nglobal;
  size_t line;
  /* the file-scope declaration in progress */
  int decl_active, decl_device, decl_global, decl_constant, decl_shared, decl_const;
  int decl_type, decl_func, decl_init;
  size_t decl_line;
  char decl_name[64], last_ident[64];
  /* the kernel's parameter list */
  int nparams, kernel_named, want_kernel_name, in_kernel_params, kparen;
  /* macros whose body holds ';', '{' or '}' (refused at file scope) */
  char stmt_macro[MAX_STMT_MACROS][64];
  int nstmt;
  /* __constant__ tables: only NAME[...] may follow (no pointer to them) */
  char const_var[MAX_CONST_VARS][64];
  int nconst;
  int bracket;          /* [ ] depth (array sizes are not the declared name) */
  int prev_amp;         /* the previous token was a unary or binary '&' */
} scan;

/* Identifiers refused anywhere, with the reason. */
static const char *forbidden(const char *id)
{
  static const char *const names[][2] = {
    {"asm", "inline assembly"}, {"__asm", "inline assembly"}, {"__asm__", "inline assembly"},
    {"__host__", "host code"}, {"main", "main"}, {"printf", "printf"},
    {"vprintf", "printf"}, {"fprintf", "printf"}, {"puts", "I/O"}, {"malloc", "device heap"},
    {"free", "device heap"}, {"calloc", "device heap"}, {"realloc", "device heap"},
    {"new", "device heap"}, {"delete", "device heap"}, {"assert", "assert (prints)"},
    {"__assertfail", "assert (prints)"}, {"__managed__", "managed memory"},
    {"namespace", "namespaces"}, {"_Pragma", "_Pragma"}, {"__pragma", "__pragma"},
    {"const_cast", "casting const away"}, {"thread_local", "thread-local state"},
    {NULL, NULL}};
  int i;

  for (i = 0; names[i][0]; i++)
    if (!strcmp(id, names[i][0]))
      return names[i][1];
  if (!strncmp(id, "cuda", 4))
    return "CUDA runtime API in device code";
  return NULL;
}

static void decl_reset(scan *s)
{
  s->decl_active = s->decl_device = s->decl_global = s->decl_constant = 0;
  s->decl_shared = s->decl_const = s->decl_type = s->decl_func = s->decl_init = 0;
  s->decl_name[0] = '\0';
}

static int is_stmt_macro(const scan *s, const char *id)
{
  int i;

  for (i = 0; i < s->nstmt; i++)
    if (!strcmp(s->stmt_macro[i], id))
      return 1;
  return 0;
}

static int is_const_var(const scan *s, const char *id)
{
  int i;

  for (i = 0; i < s->nconst; i++)
    if (!strcmp(s->const_var[i], id))
      return 1;
  return 0;
}

static void decl_ident(scan *s, const char *id)
{
  static const char *const types[] = {"struct", "union", "enum", "typedef", "using",
                                      "static_assert", NULL};
  int i;

  if (!s->decl_active) {
    s->decl_active = 1;
    s->decl_line = s->line;
  }
  s->decl_device |= !strcmp(id, "__device__");
  s->decl_global |= !strcmp(id, "__global__");
  s->decl_constant |= !strcmp(id, "__constant__");
  s->decl_shared |= !strcmp(id, "__shared__");
  s->decl_const |= !strcmp(id, "const") || !strcmp(id, "constexpr");
  for (i = 0; types[i]; i++)
    s->decl_type |= !strcmp(id, types[i]);
  if (s->paren == 0 && s->bracket == 0 && !s->decl_func)
    snprintf(s->decl_name, sizeof s->decl_name, "%s", id);
}

/* An identifier of the code; -1 (why set) when refused. */
static int on_ident(scan *s, const char *id, const char *next, char *why, size_t size)
{
  const char *bad = forbidden(id);

  if (bad)
    return refuse(why, size, "'%s' at line %zu (%s is not allowed)", id, s->line, bad);
  if (!strcmp(id, "extern") && strncmp(next, "__shared__", 10))
    return refuse(why, size, "'extern' at line %zu (only 'extern __shared__' arrays)", s->line);
  if (!strcmp(id, "static") && s->depth > 0 && strncmp(next, "const", 5) &&
      strncmp(next, "__shared__", 10))
    return refuse(why, size, "static variable at line %zu (state that persists across calls)",
                  s->line);
  if (is_const_var(s, id) && (*next != '[' || s->prev_amp))
    return refuse(why, size, "__constant__ table '%s' used at line %zu other than as %s[i] "
                  "(a pointer to it could write constant memory, which persists)", id,
                  s->line, id);
  if (s->depth == 0 && is_stmt_macro(s, id))
    return refuse(why, size, "macro '%s' with statements used at file scope (line %zu)", id,
                  s->line);
  if (!strcmp(id, "__global__")) {
    if (++s->nglobal > 1)
      return refuse(why, size, "a second __global__ kernel at line %zu (exactly one, named %s)",
                    s->line, kope_op_name(s->op));
    s->want_kernel_name = 1;
  }
  if (s->depth == 0 && !s->decl_init)
    decl_ident(s, id);
  snprintf(s->last_ident, sizeof s->last_ident, "%s", id);
  return 0;
}

/* The head of a file-scope declaration ended (at '{', ';' or '='):
 * judge what it declares. */
static int judge_decl(scan *s, char end, char *why, size_t size)
{
  if (!s->decl_active || s->decl_type || s->decl_init)
    return 0;
  if (s->decl_func && end == '{' && !s->decl_device && !s->decl_global)
    return refuse(why, size, "host function '%s' at line %zu (device functions need "
                  "__device__; only kope writes host code)", s->decl_name, s->decl_line);
  if (s->decl_func && end != '{')
    return refuse(why, size, "file-scope declaration '%s' at line %zu without a body (no "
                  "prototypes or direct-initialized variables; define functions before use)",
                  s->decl_name, s->decl_line);
  if (s->decl_constant && !s->decl_func && s->nconst < MAX_CONST_VARS)
    snprintf(s->const_var[s->nconst++], sizeof s->const_var[0], "%s", s->decl_name);
  if (s->decl_func || s->decl_shared || s->decl_constant)
    return 0;
  if (s->decl_device)
    return refuse(why, size, "__device__ variable '%s' at line %zu (state that persists "
                  "across calls; use __constant__ for tables)", s->decl_name, s->decl_line);
  if (!s->decl_const)
    return refuse(why, size, "file-scope variable '%s' at line %zu (state that persists "
                  "across calls; only __constant__, const or __shared__)", s->decl_name,
                  s->decl_line);
  return 0;
}

static void open_paren(scan *s)
{
  if (s->want_kernel_name && s->paren == 0 && strcmp(s->last_ident, "__launch_bounds__") &&
      strcmp(s->last_ident, "__attribute__") && strcmp(s->last_ident, "__align__")) {
    s->want_kernel_name = 0;
    s->kernel_named = !strcmp(s->last_ident, kope_op_name(s->op));
    s->in_kernel_params = 1;
    s->kparen = 1;
    s->nparams = 0;
  }
  if (s->depth == 0 && s->paren == 0 && s->decl_active && !s->decl_init &&
      strcmp(s->last_ident, "__launch_bounds__") && strcmp(s->last_ident, "__attribute__") &&
      strcmp(s->last_ident, "__align__"))
    s->decl_func = 1;
  s->paren++;
}

static int on_punct(scan *s, char c, char *why, size_t size)
{
  if (c == '[') {
    s->bracket++;
  } else if (c == ']') {
    s->bracket -= s->bracket > 0;
  } else if (c == '(') {
    open_paren(s);
  } else if (c == ')') {
    if (s->in_kernel_params && s->paren == s->kparen)
      s->in_kernel_params = 0;
    s->paren -= s->paren > 0;
  } else if (c == ',' && s->in_kernel_params && s->paren == s->kparen) {
    s->nparams++;
  } else if (c == '{') {
    if (s->depth == 0 && s->paren == 0 && judge_decl(s, '{', why, size))
      return -1;
    s->depth++;
  } else if (c == '}') {
    s->depth -= s->depth > 0;
    if (s->depth == 0 && s->decl_func)
      decl_reset(s);
  } else if ((c == ';' || c == '=') && s->depth == 0 && s->paren == 0) {
    if (judge_decl(s, c, why, size))
      return -1;
    if (c == ';')
      decl_reset(s);
    else
      s->decl_init = 1;   /* the initializer: nothing more to judge */
  }
  return 0;
}

/* A directive line: the allow-list, then its identifiers (a macro body
 * cannot hide a forbidden name); a macro with statements is remembered. */
static int scan_directive(scan *s, const char *p, size_t len, char *why, size_t size)
{
  const char *e = p + len, *q = p;
  char id[64], name[64] = "";
  int nid = 0;

  if (check_directive(p, len, s->line, why, size))
    return -1;
  while (q < e) {
    size_t n = 0;
    if (!isalpha((unsigned char)*q) && *q != '_') {
      q++;
      continue;
    }
    while (q < e && (isalnum((unsigned char)*q) || *q == '_') && n < sizeof id - 1)
      id[n++] = *q++;
    id[n] = '\0';
    while (q < e && (isalnum((unsigned char)*q) || *q == '_'))
      q++;
    if (forbidden(id))
      return refuse(why, size, "'%s' in a directive at line %zu (%s is not allowed)", id,
                    s->line, forbidden(id));
    if (nid++ == 1)
      snprintf(name, sizeof name, "%s", id);
  }
  if (!strncmp(p + 1 + strspn(p + 1, " \t"), "define", 6) && strpbrk(p, ";{}") &&
      (size_t)(strpbrk(p, ";{}") - p) < len && s->nstmt < MAX_STMT_MACROS)
    snprintf(s->stmt_macro[s->nstmt++], sizeof s->stmt_macro[0], "%s", name);
  return 0;
}

static int scan_code(scan *s, char *why, size_t size)
{
  const char *p = s->code;
  int bol = 1;

  while (*p) {
    if (*p == '\n') {
      s->line++;
      bol = 1;
      p++;
    } else if (isspace((unsigned char)*p)) {
      p++;
    } else if (bol && *p == '#') {
      size_t len = strcspn(p, "\n");
      if (scan_directive(s, p, len, why, size))
        return -1;
      p += len;
    } else if (isalpha((unsigned char)*p) || *p == '_') {
      char id[64];
      size_t n = 0;
      while ((isalnum((unsigned char)*p) || *p == '_') && n < sizeof id - 1)
        id[n++] = *p++;
      id[n] = '\0';
      while (isalnum((unsigned char)*p) || *p == '_')
        p++;
      if (s->in_kernel_params && s->nparams == 0)
        s->nparams = 1;
      if (on_ident(s, id, p + strspn(p, " \t\n"), why, size))
        return -1;
      s->prev_amp = 0;
      bol = 0;
    } else {
      if (p[0] == '#' && p[1] == '#')
        return refuse(why, size, "token pasting '##' at line %zu", s->line);
      if (p[0] == '<' && p[1] == '<' && p[2] == '<')
        return refuse(why, size, "a kernel launch at line %zu (kope launches the kernel)",
                      s->line);
      if (s->in_kernel_params && s->nparams == 0 && *p != ')' && *p != '(')
        s->nparams = 1;
      if (on_punct(s, *p, why, size))
        return -1;
      s->prev_amp = *p == '&' && p[1] != '&' && (p == s->code || p[-1] != '&');
      bol = 0;
      p++;
    }
  }
  return 0;
}

int kope_gate_cu(const char *src, const kope_op *op, char *why, size_t size)
{
  static const char *const keys[] = {"grid", "block", "shared", NULL};
  static const char *const required[] = {"grid", "block", NULL};
  char *code = malloc(strlen(src) * 2 + 2);
  scan s;
  kope_launch l;
  kope_err err;
  size_t str_line = 0;
  int rc;

  memset(&s, 0, sizeof s);
  s.code = code;
  s.op = op;
  s.line = 1;
  if ((rc = to_code(src, code, &str_line, why, size)) || (rc = scan_code(&s, why, size)))
    goto out;
  if (str_line) {
    rc = refuse(why, size, "string literal at line %zu (kernels do no I/O)", str_line);
    goto out;
  }
  if (s.nglobal == 0) {
    rc = refuse(why, size, "no __global__ kernel (it must be named %s)", kope_op_name(op));
    goto out;
  }
  if (!s.kernel_named) {
    rc = refuse(why, size, "the __global__ kernel is not named %s", kope_op_name(op));
    goto out;
  }
  if ((size_t)s.nparams != kope_op_nargs(op)) {
    rc = refuse(why, size, "kernel %s has %d parameters, the operator has %zu",
                kope_op_name(op), s.nparams, kope_op_nargs(op));
    goto out;
  }
  kope_err_clear(&err);
  if (kope_launch_parse(src, op, keys, required, &l, &err) != KOPE_OK)
    rc = refuse(why, size, "%s", err.msg);
out:
  free(code);
  return rc;
}
