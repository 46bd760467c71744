/*
 * The static gate (see gate.h): allow-lists for headers and external
 * symbols, a directive scanner for the raw source, a pragma/attribute
 * scanner for the preprocessed main file, an inline-asm and instruction
 * scanner for the assembly, and an ELF64 reader for the object's symbols
 * and sections. Allow-lists, not deny-lists: anything not named here is
 * refused, and the refusal says which rule and which name.
 */
#include <ctype.h>
#include <elf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "eval/gate.h"

static int refuse(char *why, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int refuse(char *why, size_t size, const char *fmt, ...)
{
  va_list ap;

  va_start(ap, fmt);
  vsnprintf(why, size, fmt, ap);
  va_end(ap);
  return -1;
}

/* ---- allow-lists ---- */

static const char *const headers[] = {
  "stdint.h", "stddef.h", "stdbool.h", "math.h", "float.h", "limits.h", "string.h",
  "stdlib.h", "omp.h", "stdio.h", "assert.h", "stdalign.h", "stdarg.h", "inttypes.h",
  "complex.h", "tgmath.h", "iso646.h", "stdnoreturn.h", "errno.h", "cpuid.h", NULL
};

int kope_gate_header_allowed(const char *name)
{
  size_t i, n = strlen(name);

  for (i = 0; headers[i]; i++)
    if (!strcmp(name, headers[i]))
      return 1;
  /* x86 intrinsic headers: immintrin.h, x86intrin.h, xmmintrin.h, ... */
  if (n > 8 && !strcmp(name + n - 8, "intrin.h") && !strchr(name, '/'))
    return 1;
  return 0;
}

static const char *const sym_exact[] = {
  "memcpy", "memset", "memmove", "memcmp", "memchr", "strlen", "strnlen", "strcmp",
  "strncmp", "strcpy", "strncpy", "strchr", "strrchr", "strstr", "malloc", "free", "calloc",
  "realloc", "aligned_alloc", "posix_memalign", "qsort", "bsearch", "abs", "labs", "llabs",
  "abort", "exit", "printf", "fprintf", "puts", "putchar", "fputs", "fputc", "fflush",
  "fwrite", "putc",
  "snprintf", "sprintf", "stdout", "stderr", "__printf_chk", "__fprintf_chk",
  "__sprintf_chk", "__snprintf_chk", "__memcpy_chk", "__memset_chk", "__memmove_chk",
  "__stack_chk_fail", "__assert_fail", "_GLOBAL_OFFSET_TABLE_", "__errno_location",
  "__cpu_model", "__cpu_features2", "__cpu_indicator_init", "__isnan", "__isnanf",
  "__isinf", "__isinff", "__finite", "__finitef", "__signbit", "__signbitf",
  "__fpclassify", "__fpclassifyf", NULL
};

/* libm functions; each may carry an f or l suffix. */
static const char *const libm[] = {
  "acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "cbrt", "ceil", "copysign",
  "cos", "cosh", "erf", "erfc", "exp", "exp2", "exp10", "expm1", "fabs", "fdim", "floor",
  "fma", "fmax", "fmin", "fmod", "frexp", "hypot", "ilogb", "ldexp", "lgamma", "llrint",
  "llround", "log", "log10", "log1p", "log2", "logb", "lrint", "lround", "modf", "nan",
  "nearbyint", "nextafter", "pow", "remainder", "remquo", "rint", "round", "scalbn",
  "scalbln", "sin", "sincos", "sinh", "sqrt", "tan", "tanh", "tgamma", "trunc", NULL
};

/* libgcc helpers the compiler may call: "__" followed by one of these. */
static const char *const libgcc_stems[] = {
  "mul", "div", "udiv", "mod", "umod", "pow", "popcount", "clz", "ctz", "ffs", "parity",
  "bswap", "float", "fix", "extend", "trunc", "neg", "ashl", "ashr", "lshr", "cmp", "ucmp",
  "add", "sub", "eq", "ne", "gt", "ge", "lt", "le", "unord", NULL
};

static int in_list(const char *name, const char *const *list)
{
  size_t i;

  for (i = 0; list[i]; i++)
    if (!strcmp(name, list[i]))
      return 1;
  return 0;
}

static int is_libm(const char *name)
{
  char base[64];
  size_t n = strlen(name);

  if (in_list(name, libm))
    return 1;
  if (n < 2 || n >= sizeof base || (name[n - 1] != 'f' && name[n - 1] != 'l'))
    return 0;
  memcpy(base, name, n - 1);
  base[n - 1] = '\0';
  return in_list(base, libm);
}

static int is_libgcc(const char *name)
{
  size_t i;

  if (strncmp(name, "__", 2) != 0)
    return 0;
  for (i = 0; libgcc_stems[i]; i++) {
    size_t k = strlen(libgcc_stems[i]);
    if (!strncmp(name + 2, libgcc_stems[i], k) &&
        (isdigit((unsigned char)name[2 + k]) || islower((unsigned char)name[2 + k]) ||
         name[2 + k] == '\0'))
      return 1;
  }
  return 0;
}

/* The libgomp entry points gcc 12 emits for the pragmas a kernel may use;
 * each joins its threads before it returns (or runs inside a region that
 * does). Not the old split ABI (GOMP_parallel_start / _end, the
 * GOMP_parallel_*_start forms): with it a kernel can return while a team
 * thread still runs. Not target offloading or teams. */
static const char *const gomp[] = {
  "GOMP_parallel", "GOMP_parallel_reductions", "GOMP_parallel_sections", "GOMP_barrier",
  "GOMP_barrier_cancel", "GOMP_critical_start", "GOMP_critical_end",
  "GOMP_critical_name_start", "GOMP_critical_name_end", "GOMP_atomic_start",
  "GOMP_atomic_end", "GOMP_single_start", "GOMP_single_copy_start", "GOMP_single_copy_end",
  "GOMP_sections_start", "GOMP_sections2_start", "GOMP_sections_next", "GOMP_sections_end",
  "GOMP_sections_end_nowait", "GOMP_sections_end_cancel", "GOMP_ordered_start",
  "GOMP_ordered_end", "GOMP_task", "GOMP_taskwait", "GOMP_taskyield",
  "GOMP_taskgroup_start", "GOMP_taskgroup_end", "GOMP_taskloop", "GOMP_taskloop_ull",
  "GOMP_doacross_post", "GOMP_doacross_wait", "GOMP_doacross_ull_post",
  "GOMP_doacross_ull_wait", "GOMP_cancel", "GOMP_cancellation_point", NULL
};

static int is_gomp(const char *name)
{
  size_t n = strlen(name);

  if (in_list(name, gomp) || !strncmp(name, "GOMP_loop_", 10))
    return 1;   /* worksharing loops (GOMP_loop_*_start/_next/_end) */
  /* combined parallel loops, new ABI only (no _start suffix) */
  return !strncmp(name, "GOMP_parallel_loop_", 19) && !(n > 6 && !strcmp(name + n - 6, "_start"));
}

int kope_gate_symbol_allowed(const char *name)
{
  return in_list(name, sym_exact) || is_libm(name) || is_libgcc(name) ||
         is_gomp(name) || !strncmp(name, "omp_", 4) ||
         !strncmp(name, "_ZGV", 4);   /* libmvec: vector variants of libm */
}

/* ---- raw source ---- */

/* Copy of src with comments replaced by spaces (newlines kept). */
static char *strip_comments(const char *src)
{
  size_t n = strlen(src), i = 0, o = 0;
  char *d = malloc(n + 1), q = 0;

  while (i < n) {
    if (q) {
      d[o++] = src[i];
      if (src[i] == '\\' && i + 1 < n)
        d[o++] = src[++i];
      else if (src[i] == q || src[i] == '\n')
        q = 0;
      i++;
    } else if (src[i] == '"' || src[i] == '\'') {
      q = src[i];
      d[o++] = src[i++];
    } else if (src[i] == '/' && src[i + 1] == '/') {
      while (i < n && src[i] != '\n')
        i++;
      d[o++] = ' ';
    } else if (src[i] == '/' && src[i + 1] == '*') {
      for (i += 2; i < n && !(src[i] == '*' && src[i + 1] == '/'); i++)
        if (src[i] == '\n')
          d[o++] = '\n';
      i = i < n ? i + 2 : n;
      d[o++] = ' ';
    } else {
      d[o++] = src[i++];
    }
  }
  d[o] = '\0';
  return d;
}

/* The next logical line (backslash-newline joined) into buf; returns the
 * position after it, or NULL at the end. *phys counts physical lines. */
static const char *logical_line(const char *p, char *buf, size_t size, int *phys)
{
  size_t o = 0;

  if (!*p)
    return NULL;
  while (*p) {
    if (*p == '\\' && p[1] == '\n') {
      p += 2;
      (*phys)++;
      continue;
    }
    if (*p == '\n') {
      p++;
      break;
    }
    if (o + 1 < size)
      buf[o++] = *p;
    p++;
  }
  buf[o] = '\0';
  return p;
}

static const char *skip_ws(const char *p)
{
  while (*p == ' ' || *p == '\t' || *p == '\f' || *p == '\v' || *p == '\r')
    p++;
  return p;
}

static const char *ident(const char *p, char *out, size_t size)
{
  size_t o = 0;

  while (isalnum((unsigned char)*p) || *p == '_') {
    if (o + 1 < size)
      out[o++] = *p;
    p++;
  }
  out[o] = '\0';
  return p;
}

static int check_include(const char *p, int line, char *why, size_t size)
{
  char name[128];
  const char *e;

  p = skip_ws(p);
  if (*p != '<' || !(e = strchr(p, '>')) || (size_t)(e - p - 1) >= sizeof name)
    return refuse(why, size, "include: line %d: only #include <header> of an allowed system "
                  "header (stdint.h, math.h, omp.h, immintrin.h, ...)", line);
  memcpy(name, p + 1, (size_t)(e - p - 1));
  name[e - p - 1] = '\0';
  if (!kope_gate_header_allowed(name))
    return refuse(why, size, "include: line %d: <%s> is not an allowed header", line, name);
  return 0;
}

/* 1 when a pragma's text (after "pragma") changes optimization options. */
static int pragma_optimize(const char *p)
{
  char w1[32], w2[32];

  p = ident(skip_ws(p), w1, sizeof w1);
  ident(skip_ws(p), w2, sizeof w2);
  return !strcmp(w1, "optimize") || (!strcmp(w1, "GCC") && !strcmp(w2, "optimize"));
}

static int check_directive(const char *p, int line, char *why, size_t size)
{
  char kw[32];

  p = skip_ws(p);
  if (isdigit((unsigned char)*p))
    return refuse(why, size, "line-marker: line %d: line markers are not allowed", line);
  p = ident(p, kw, sizeof kw);
  if (!strcmp(kw, "include") || !strcmp(kw, "include_next") || !strcmp(kw, "import"))
    return check_include(p, line, why, size);
  if (!strcmp(kw, "line"))
    return refuse(why, size, "line-marker: line %d: #line is not allowed", line);
  if (!strcmp(kw, "pragma") && pragma_optimize(p))
    return refuse(why, size, "flags: line %d: #pragma optimize changes the compiler flags",
                  line);
  return 0;
}

static int contains_ci(const char *hay, const char *needle)
{
  size_t n = strlen(needle);

  for (; *hay; hay++)
    if (!strncasecmp(hay, needle, n))
      return 1;
  return 0;
}

int kope_gate_source(const char *src, char *why, size_t size)
{
  char *text = strip_comments(src), line[4096];
  const char *p = text, *q;
  int phys = 0, start, rc = 0;

  while (rc == 0 && (start = phys + 1, p = logical_line(p, line, sizeof line, &phys))) {
    phys++;
    q = skip_ws(line);
    if (contains_ci(line, "incbin"))
      rc = refuse(why, size, "incbin: line %d: .incbin (embedding files) is not allowed",
                  start);
    else if (*q == '#')
      rc = check_directive(q + 1, start, why, size);
    else if (q[0] == '%' && q[1] == ':')
      rc = check_directive(q + 2, start, why, size);
  }
  free(text);
  return rc;
}

/* ---- preprocessed text ---- */

/* Parse a line marker "# N "file" flags"; returns 1 and fills file and
 * flags (bitmask of 1 << flag). */
static int line_marker(const char *l, char *file, size_t size, unsigned *flags)
{
  const char *p = l + 1, *e;
  size_t n;

  p = skip_ws(p);
  if (!isdigit((unsigned char)*p))
    return 0;
  while (isdigit((unsigned char)*p))
    p++;
  p = skip_ws(p);
  if (*p != '"' || !(e = strchr(p + 1, '"')))
    return 0;
  n = (size_t)(e - p - 1) < size - 1 ? (size_t)(e - p - 1) : size - 1;
  memcpy(file, p + 1, n);
  file[n] = '\0';
  *flags = 0;
  for (p = e + 1; *p; p++)
    if (isdigit((unsigned char)*p))
      *flags |= 1u << (*p - '0');
  return 1;
}

static const char *base_name(const char *path)
{
  const char *s = strrchr(path, '/');

  return s ? s + 1 : path;
}

static const char *const bad_attrs[] = {
  "optimize", "constructor", "destructor", "ifunc", "target_clones", "section", "alias",
  "weakref", "symver", NULL
};

/* Identifier w, with GNU underscores (__w__) removed, is a refused attribute. */
static const char *bad_attr(const char *w)
{
  char bare[64];
  size_t n = strlen(w), i;

  if (n > 4 && n < sizeof bare + 4 && !strncmp(w, "__", 2) && !strcmp(w + n - 2, "__")) {
    memcpy(bare, w + 2, n - 4);
    bare[n - 4] = '\0';
    w = bare;
  }
  for (i = 0; bad_attrs[i]; i++)
    if (!strcmp(w, bad_attrs[i]))
      return bad_attrs[i];
  return NULL;
}

/* Scan the attribute lists of the main file's text. */
static int check_attributes(const char *text, char *why, size_t size)
{
  const char *p = text;
  char w[64];
  const char *bad;

  while (*p) {
    if (!isalpha((unsigned char)*p) && *p != '_') {
      p++;
      continue;
    }
    p = ident(p, w, sizeof w);
    if (strcmp(w, "__attribute__") && strcmp(w, "__attribute") && strcmp(w, "gnu") &&
        strcmp(w, "__gnu__"))
      continue;
    {
      const char *q = skip_ws(p);
      int depth = 0;
      if (*q == ':' && q[1] == ':') {            /* [[gnu::name]] */
        ident(skip_ws(q + 2), w, sizeof w);
        if ((bad = bad_attr(w)))
          return refuse(why, size, "attribute: '%s' is not allowed", bad);
        continue;
      }
      if (*q != '(' || w[0] == 'g' || !strcmp(w, "__gnu__"))
        continue;
      for (; *q; q++) {                          /* __attribute__((...)) */
        if (*q == '(')
          depth++;
        else if (*q == ')' && --depth <= 0)
          break;
        else if (depth > 0 && (isalpha((unsigned char)*q) || *q == '_')) {
          q = ident(q, w, sizeof w) - 1;
          if ((bad = bad_attr(w)))
            return refuse(why, size, "attribute: '%s' is not allowed (%s)", bad,
                          !strcmp(bad, "optimize") ? "it changes the compiler flags" :
                          "it adds load-time code, symbols or sections");
        }
      }
      p = *q ? q + 1 : q;
    }
  }
  return 0;
}

/* ---- inline asm, as the assembler will read it ---- */

static int check_stmt(const char *s, int in_app, int line, char *why, size_t size);

/* Decode one C string literal at p (at the opening quote) into b; returns
 * the position after the closing quote. */
static const char *decode_literal(const char *p, kope_buf *b)
{
  for (p++; *p && *p != '"'; p++) {
    char c = *p;
    if (c == '\\' && p[1]) {
      const char *e = "nntt\\\\\"\"''aabbffrrvv", *k;
      c = *++p;
      if (c == 'x') {
        c = (char)strtol(p + 1, (char **)&p, 16);
        p--;
      } else if (c >= '0' && c <= '7') {
        int v = 0, i;
        for (i = 0; i < 3 && *p >= '0' && *p <= '7'; i++)
          v = v * 8 + (*p++ - '0');
        c = (char)v;
        p--;
      } else if ((k = strchr(e, c)) && ((k - e) % 2) == 0) {
        static const char out[] = "\n\t\\\"'\a\b\f\r\v";
        c = out[(k - e) / 2];
      }
    }
    kope_buf_printf(b, "%c", c);
  }
  return *p ? p + 1 : p;
}

/* The template of the asm statement whose '(' is at p, all adjacent
 * literals joined (".inc" "bin" is .incbin) and decoded. */
static char *asm_template(const char *p)
{
  kope_buf b;

  kope_buf_init(&b, 0);
  for (p = skip_ws(p + 1);; p = skip_ws(p)) {
    while (*p == '\n')
      p = skip_ws(p + 1);
    if (*p != '"')
      break;
    p = decode_literal(p, &b);
  }
  kope_buf_puts(&b, "");
  return kope_buf_steal(&b);
}

/* What gas reads of a template: C comments removed, '#' comments cut,
 * then every statement (lines and ';') checked like inline asm. */
static int check_template(char *t, char *why, size_t size)
{
  char *c, *l, *save = NULL, *st, *save2 = NULL;
  int rc = 0, line = 0;

  while ((c = strstr(t, "/*"))) {
    char *e = strstr(c + 2, "*/");
    memset(c, ' ', e ? (size_t)(e + 2 - c) : strlen(c));
  }
  if (strstr(t, "gomp_critical"))
    return refuse(why, size, "asm: inline assembly may not name OpenMP's lock symbols");
  for (l = strtok_r(t, "\n", &save); l && rc == 0; l = strtok_r(NULL, "\n", &save)) {
    line++;
    if ((c = strchr(l, '#')))
      *c = '\0';
    for (st = strtok_r(l, ";", &save2); st && rc == 0; st = strtok_r(NULL, ";", &save2))
      rc = check_stmt(st, 1, line, why, size);
  }
  return rc;
}

static int is_stmt_keyword(const char *w)
{
  static const char *const kw[] = {"else", "do", "return", "case", "default", "goto", NULL};
  return in_list(w, kw);
}

/* The word before the '(' that matches the ')' ending at text+end. */
static int paren_owner_is_stmt(const char *text, size_t end)
{
  int depth = 0;
  size_t i = end + 1;
  char w[32];

  while (i-- > 0) {
    if (text[i] == ')')
      depth++;
    else if (text[i] == '(' && --depth == 0)
      break;
  }
  while (i > 0 && isspace((unsigned char)text[i - 1]))
    i--;
  {
    size_t e = i;
    while (i > 0 && (isalnum((unsigned char)text[i - 1]) || text[i - 1] == '_'))
      i--;
    snprintf(w, sizeof w, "%.*s", (int)(e - i), text + i);
  }
  return !strcmp(w, "if") || !strcmp(w, "while") || !strcmp(w, "for") ||
         !strcmp(w, "switch");
}

/* 1 when the asm keyword at text+at follows a declarator (an asm label). */
static int is_asm_label(const char *text, size_t at)
{
  size_t i = at;
  char w[32];

  while (i > 0 && isspace((unsigned char)text[i - 1]))
    i--;
  if (i == 0)
    return 0;
  if (text[i - 1] == ']')
    return 1;
  if (text[i - 1] == ')')
    return !paren_owner_is_stmt(text, i - 1);
  if (isalnum((unsigned char)text[i - 1]) || text[i - 1] == '_') {
    size_t e = i;
    while (i > 0 && (isalnum((unsigned char)text[i - 1]) || text[i - 1] == '_'))
      i--;
    snprintf(w, sizeof w, "%.*s", (int)(e - i), text + i);
    return !is_stmt_keyword(w);
  }
  return 0;
}

static const char *skip_literal(const char *p)
{
  char q = *p++;

  while (*p && *p != q && *p != '\n') {
    if (*p == '\\' && p[1])
      p++;
    p++;
  }
  return *p == q ? p + 1 : p;
}

/* Every asm statement and asm label of the main file's text. */
int kope_gate_inline_asm(const char *text, char *why, size_t size)
{
  const char *p = text;
  char w[32];

  while (*p) {
    const char *start = p, *q;
    if (*p == '"' || *p == '\'') {
      p = skip_literal(p);
      continue;
    }
    if (!isalpha((unsigned char)*p) && *p != '_') {
      p++;
      continue;
    }
    p = ident(p, w, sizeof w);
    if (strcmp(w, "asm") && strcmp(w, "__asm") && strcmp(w, "__asm__"))
      continue;
    if (is_asm_label(text, (size_t)(start - text)))
      return refuse(why, size, "asm: an asm label renames a symbol (it could give a "
                    "variable a name the gate allows); not allowed");
    for (q = skip_ws(p); isalpha((unsigned char)*q) || *q == '_'; q = skip_ws(q))
      q = ident(q, w, sizeof w);               /* volatile, goto, inline */
    while (*q == '\n')
      q = skip_ws(q + 1);
    if (*q == '(') {
      char *t = asm_template(q);
      int rc = check_template(t, why, size);
      free(t);
      if (rc)
        return rc;
    }
  }
  return 0;
}

int kope_gate_preprocessed(const char *text, char *why, size_t size)
{
  char main_file[512] = "", cur[512] = "", file[512];
  const char *p = text;
  kope_buf mainbuf;
  unsigned flags;
  int rc = 0;

  kope_buf_init(&mainbuf, 0);
  while (rc == 0 && *p) {
    const char *e = strchr(p, '\n');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    char *l = kope_strndup(p, n);
    p += n + (e ? 1 : 0);
    if (l[0] == '#' && line_marker(l, file, sizeof file, &flags)) {
      if (!main_file[0])
        snprintf(main_file, sizeof main_file, "%s", file);
      else if ((flags & 2) && !strcmp(cur, main_file) &&
               (!(flags & 8) || !kope_gate_header_allowed(base_name(file))))
        rc = refuse(why, size, "include: \"%s\" is not an allowed system header", file);
      snprintf(cur, sizeof cur, "%s", file);
    } else if (main_file[0] && !strcmp(cur, main_file)) {
      const char *q = skip_ws(l);
      if (*q == '#' && !strncmp(skip_ws(q + 1), "pragma", 6) &&
          pragma_optimize(skip_ws(q + 1) + 6))
        rc = refuse(why, size, "flags: a pragma expands to '%.80s', which changes the "
                    "compiler flags", q);
      kope_buf_puts(&mainbuf, l);
      kope_buf_puts(&mainbuf, "\n");
    }
    free(l);
  }
  if (rc == 0 && mainbuf.data)
    rc = check_attributes(mainbuf.data, why, size);
  if (rc == 0 && mainbuf.data)
    rc = kope_gate_inline_asm(mainbuf.data, why, size);
  kope_buf_release(&mainbuf);
  return rc;
}

/* ---- assembly ---- */

static int bad_insn(const char *m)
{
  static const char *const insns[] = {"syscall", "sysenter", "sysexit", "sysret", "int",
                                      "int1", "int3", "into", "vmcall", "vmmcall", NULL};
  return in_list(m, insns);
}

/* One statement of assembly; in_app: it came from inline asm. */
static int check_stmt(const char *s, int in_app, int line, char *why, size_t size)
{
  char m[32];
  size_t i;

  s = skip_ws(s);
  while (*s) {                                  /* labels "name:" or "1:" */
    const char *e = s;
    while (isalnum((unsigned char)*e) || *e == '_' || *e == '.' || *e == '$')
      e++;
    if (e > s && *e == ':') {
      s = skip_ws(e + 1);
      continue;
    }
    break;
  }
  if (!*s)
    return 0;
  if (*s == '.')
    return in_app ? refuse(why, size, "asm: inline assembly may not use directives "
                           "(found '%.40s')", s) : 0;
  for (i = 0; i + 1 < sizeof m && (isalnum((unsigned char)s[i])); i++)
    m[i] = (char)tolower((unsigned char)s[i]);
  m[i] = '\0';
  if (bad_insn(m))
    return refuse(why, size, "syscall: the instruction '%s' is not allowed (%s, line %d "
                  "of the assembly)", m, in_app ? "inline asm" : "generated code", line);
  return 0;
}

/* gas reads C comments anywhere; blank them (newlines kept). */
static char *blank_c_comments(const char *text)
{
  char *t = kope_strdup(text);
  size_t i = 0, n = strlen(t);

  while (i + 1 < n) {
    if (t[i] != '/' || t[i + 1] != '*') {
      i++;
      continue;
    }
    t[i] = t[i + 1] = ' ';
    for (i += 2; i < n && !(text[i] == '*' && i + 1 < n && text[i + 1] == '/'); i++)
      if (t[i] != '\n')
        t[i] = ' ';
    if (i < n)
      t[i] = t[i + 1] = ' ';
    i += 2;
  }
  return t;
}

int kope_gate_asm(const char *text_in, char *why, size_t size)
{
  char *text = blank_c_comments(text_in);
  const char *p = text;
  int in_app = 0, line = 0, rc = 0;

  while (rc == 0 && *p) {
    const char *e = strchr(p, '\n');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    char *l = kope_strndup(p, n), *c, *save = NULL, *st;
    p += n + (e ? 1 : 0);
    line++;
    if (!strncmp(skip_ws(l), "#APP", 4))
      in_app = 1;
    else if (!strncmp(skip_ws(l), "#NO_APP", 7))
      in_app = 0;
    else {
      if ((c = strchr(l, '#')) && !in_app)
        *c = '\0';
      else if (c && in_app && c == skip_ws(l))
        *c = '\0';
      for (st = strtok_r(l, ";", &save); st && rc == 0; st = strtok_r(NULL, ";", &save))
        rc = check_stmt(st, in_app, line, why, size);
    }
    free(l);
  }
  free(text);
  return rc;
}

/* ---- ELF object ---- */

typedef struct elf_view {
  const unsigned char *b;
  size_t n;
  const Elf64_Shdr *sh;
  size_t nsh;
  const char *shstr;
  size_t shstr_n;
} elf_view;

static int elf_open(elf_view *v, const unsigned char *b, size_t n)
{
  const Elf64_Ehdr *eh = (const Elf64_Ehdr *)b;
  const Elf64_Shdr *ss;

  memset(v, 0, sizeof *v);
  if (n < sizeof *eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
      eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_shentsize != sizeof(Elf64_Shdr) ||
      eh->e_shoff > n || eh->e_shnum > (n - eh->e_shoff) / sizeof(Elf64_Shdr) ||
      eh->e_shstrndx >= eh->e_shnum)
    return -1;
  v->b = b;
  v->n = n;
  v->sh = (const Elf64_Shdr *)(b + eh->e_shoff);
  v->nsh = eh->e_shnum;
  ss = &v->sh[eh->e_shstrndx];
  if (ss->sh_offset > n || ss->sh_size > n - ss->sh_offset)
    return -1;
  v->shstr = (const char *)b + ss->sh_offset;
  v->shstr_n = ss->sh_size;
  return 0;
}

static const char *str_at(const char *tab, size_t n, size_t off)
{
  return off < n && memchr(tab + off, '\0', n - off) ? tab + off : "?";
}

static const char *sec_name(const elf_view *v, size_t i)
{
  return str_at(v->shstr, v->shstr_n, v->sh[i].sh_name);
}

static int prefix(const char *s, const char *p)
{
  return !strncmp(s, p, strlen(p));
}

/* A symbol defined in section sec (for messages), or "". */
static const char *sym_in(const elf_view *v, size_t sec)
{
  size_t i, k;

  for (i = 0; i < v->nsh; i++) {
    const Elf64_Shdr *s = &v->sh[i];
    const Elf64_Sym *sy;
    if (s->sh_type != SHT_SYMTAB || s->sh_link >= v->nsh || s->sh_offset > v->n ||
        s->sh_size > v->n - s->sh_offset)
      continue;
    sy = (const Elf64_Sym *)(v->b + s->sh_offset);
    for (k = 1; k < s->sh_size / sizeof *sy; k++) {
      const Elf64_Shdr *st = &v->sh[s->sh_link];
      if (sy[k].st_shndx == sec && ELF64_ST_TYPE(sy[k].st_info) == STT_OBJECT &&
          st->sh_offset <= v->n && st->sh_size <= v->n - st->sh_offset)
        return str_at((const char *)v->b + st->sh_offset, st->sh_size, sy[k].st_name);
    }
  }
  return "";
}

static int check_sections(const elf_view *v, char *why, size_t size)
{
  static const char *const ctor[] = {".init_array", ".fini_array", ".preinit_array",
                                     ".ctors", ".dtors", NULL};
  size_t i, k;

  for (i = 1; i < v->nsh; i++) {
    const char *name = sec_name(v, i);
    uint64_t f = v->sh[i].sh_flags;
    for (k = 0; ctor[k]; k++)
      if (prefix(name, ctor[k]))
        return refuse(why, size, "constructor: section %s runs code at load or exit "
                      "(constructor/destructor)", name);
    if (!strcmp(name, ".init") || !strcmp(name, ".fini"))
      return refuse(why, size, "constructor: section %s runs code at load or exit", name);
    if ((f & SHF_WRITE) && (f & SHF_EXECINSTR))
      return refuse(why, size, "sections: section %s is writable and executable", name);
    if ((f & SHF_ALLOC) && (f & SHF_WRITE) && v->sh[i].sh_size > 0 &&
        !prefix(name, ".data.rel.ro")) {
      const char *sym = sym_in(v, i);
      return refuse(why, size, "state: writable %sstatic storage%s%s%s in %s: a kernel must "
                    "not keep state between calls (use locals or const tables)",
                    (f & SHF_TLS) ? "thread-local " : "", *sym ? " '" : "", sym,
                    *sym ? "'" : "", name);
    }
  }
  return 0;
}

/* pass 0: load-time resolvers only; pass 1: everything else. */
static int check_symbol(const Elf64_Sym *s, const char *name, const char *entry, int pass,
                        char *why, size_t size)
{
  int bind = ELF64_ST_BIND(s->st_info), type = ELF64_ST_TYPE(s->st_info);

  if (type == STT_GNU_IFUNC)
    return refuse(why, size, "ifunc: '%s' is resolved by code run at load time "
                  "(ifunc/target_clones)", name);
  if (pass == 0)
    return 0;
  if (type == STT_FILE || type == STT_SECTION || !*name)
    return 0;
  if (s->st_shndx == SHN_UNDEF) {
    if (kope_gate_symbol_allowed(name))
      return 0;
    return refuse(why, size, "symbols: '%s' is not an allowed external function (allowed: "
                  "libm, OpenMP, memcpy/memset/memmove, malloc/free, printf)", name);
  }
  if (s->st_shndx == SHN_COMMON)
    /* what gcc emits for #pragma omp critical (NAME): one pointer-sized
     * lock word (st_value holds a common symbol's alignment) */
    return prefix(name, ".gomp_critical_user_") && s->st_size == 8 && s->st_value == 8 ? 0 :
           refuse(why, size, "state: writable static storage '%s': a kernel must not keep "
                  "state between calls", name);
  if (bind == STB_LOCAL || !strcmp(name, entry))
    return 0;
  return refuse(why, size, "globals: '%s' is defined as a global symbol; only the entry "
                "point '%s' may be global (make helpers static)", name, entry);
}

static int check_symbols(const elf_view *v, const char *entry, int pass, char *why,
                         size_t size)
{
  size_t i, k;

  for (i = 0; i < v->nsh; i++) {
    const Elf64_Shdr *s = &v->sh[i], *st;
    const Elf64_Sym *sy;
    if (s->sh_type != SHT_SYMTAB)
      continue;
    if (s->sh_link >= v->nsh || s->sh_offset > v->n || s->sh_size > v->n - s->sh_offset)
      return refuse(why, size, "object: malformed symbol table");
    st = &v->sh[s->sh_link];
    if (st->sh_offset > v->n || st->sh_size > v->n - st->sh_offset)
      return refuse(why, size, "object: malformed string table");
    sy = (const Elf64_Sym *)(v->b + s->sh_offset);
    for (k = 1; k < s->sh_size / sizeof *sy; k++) {
      const char *name = str_at((const char *)v->b + st->sh_offset, st->sh_size,
                                sy[k].st_name);
      if (check_symbol(&sy[k], name, entry, pass, why, size))
        return -1;
    }
  }
  return 0;
}

int kope_gate_object(const unsigned char *elf, size_t n, const char *entry, char *why,
                     size_t size)
{
  elf_view v;

  if (elf_open(&v, elf, n) != 0)
    return refuse(why, size, "object: not an ELF64 object");
  if (check_symbols(&v, entry, 0, why, size) || check_sections(&v, why, size) ||
      check_symbols(&v, entry, 1, why, size))
    return -1;
  return 0;
}

/* ---- all together ---- */

static char *read_opt(const char *dir, const char *name, size_t *len)
{
  char *path = kope_path_join(dir, name), *text = NULL;
  kope_err e;

  if (kope_is_file(path))
    text = kope_file_read(path, len, &e);
  free(path);
  return text;
}

int kope_gate_files(const char *dir, const char *source, const char *entry, char *why,
                    size_t size, kope_err *err)
{
  char *pre = NULL, *as = NULL, *obj = NULL;
  size_t objn = 0;
  int rc;

  if ((rc = kope_gate_source(source, why, size)))
    goto out;
  obj = read_opt(dir, "kernel.o", &objn);
  if (!obj) {
    rc = kope_err_set(err, KOPE_EENV, "gate: cannot read the candidate's object in %s", dir);
    goto out;
  }
  pre = read_opt(dir, "kernel.i", NULL);
  as = read_opt(dir, "kernel.s", NULL);
  if ((pre && (rc = kope_gate_preprocessed(pre, why, size))) ||
      (as && (rc = kope_gate_asm(as, why, size))))
    goto out;
  rc = kope_gate_object((const unsigned char *)obj, objn, entry, why, size);
out:
  free(pre);
  free(as);
  free(obj);
  return rc;
}
