/*
 * Turning an LLM's reply into a proposal. Replies are asked for in a
 * fixed shape (LAYER/THOUGHT/TITLE/RATIONALE header, then one fenced C
 * block) but models wander, so the parser accepts: Markdown decoration
 * around the header keys (**THOUGHT:**, "- Title:"), any order, a
 * rationale over several lines, prose before and after, several code
 * blocks (the last closed block that defines the operator's function
 * wins), no fence at all (code recognised by its first preprocessor or
 * declaration line through the last closing brace). Without a THOUGHT the
 * thought is inferred from what the candidate adds over the incumbent
 * (OpenMP, intrinsics, prefetch, blocking...) and marked inferred. A reply
 * without a usable kernel yields no_kernel with the reason and the start
 * of the reply, which becomes the next step's feedback. A reply that is a
 * JSON object (structured output, --llm-json) is read by its fields
 * layer, thought_id, title, rationale and source.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <jansson.h>
#include "policy/llm_int.h"

typedef struct block {
  const char *start;   /* first line of the body */
  size_t len;
  char lang[16];
  int closed;
} block;

#define MAX_BLOCKS 32

typedef struct parsed {
  block b[MAX_BLOCKS];
  int nb;
  char *field[4];      /* layer, thought, title, rationale */
  const char *prose;   /* first non-header text outside blocks */
} parsed;

static const char *const keys[4] = {"layer", "thought", "title", "rationale"};

/* ---- lines ---- */

static const char *line_end(const char *p)
{
  const char *e = strchr(p, '\n');
  return e ? e : p + strlen(p);
}

static int is_fence(const char *p, const char *e, char lang[16])
{
  size_t n = 0;

  while (p < e && (*p == ' ' || *p == '\t'))
    p++;
  if (e - p < 3 || (strncmp(p, "```", 3) && strncmp(p, "~~~", 3)))
    return 0;
  p += 3;
  while (p < e && (*p == '`' || *p == '~' || *p == ' '))
    p++;
  while (p < e && n < 15 && !isspace((unsigned char)*p) && *p != '{')
    lang[n++] = (char)tolower((unsigned char)*p++);
  lang[n] = 0;
  return 1;
}

/* "**Thought id:** x" → key index and value; -1 when not a header line. */
static int header_line(const char *p, const char *e, char **value)
{
  const char *k, *v;
  int i;

  while (p < e && strchr(" \t*#->_`", *p))
    p++;
  for (i = 0; i < 4; i++) {
    size_t n = strlen(keys[i]);
    if ((size_t)(e - p) <= n || strncasecmp(p, keys[i], n))
      continue;
    k = p + n;
    while (k < e && (isalpha((unsigned char)*k) || *k == '_' || *k == ' ') && *k != ':')
      k++;   /* "THOUGHT ID", "thought_id" */
    while (k < e && (*k == '*' || *k == '_'))
      k++;
    if (k >= e || *k != ':')
      continue;
    v = k + 1;
    while (v < e && strchr(" \t*_`", *v))
      v++;
    while (e > v && strchr(" \t\r*_`", e[-1]))
      e--;
    *value = kope_strndup(v, (size_t)(e - v));
    return i;
  }
  return -1;
}

static void append_rationale(parsed *ps, const char *p, const char *e)
{
  char *old = ps->field[3];

  while (p < e && (*p == ' ' || *p == '\t'))
    p++;
  while (e > p && (e[-1] == '\r' || e[-1] == ' '))
    e--;
  ps->field[3] = kope_sprintf("%s%s%.*s", old, *old ? " " : "", (int)(e - p), p);
  free(old);
}

static int blank(const char *p, const char *e)
{
  for (; p < e; p++)
    if (!isspace((unsigned char)*p))
      return 0;
  return 1;
}

static void scan(const char *reply, parsed *ps)
{
  const char *p = reply;
  block *cur = NULL;
  int last = -1;

  while (*p) {
    const char *e = line_end(p);
    char lang[16], *v = NULL;
    int k;
    if (cur) {
      if (is_fence(p, e, lang)) {
        cur->len = (size_t)(p - cur->start);
        cur->closed = 1;
        cur = NULL;
      }
    } else if (is_fence(p, e, lang)) {
      if (ps->nb < MAX_BLOCKS) {
        cur = &ps->b[ps->nb++];
        snprintf(cur->lang, sizeof cur->lang, "%s", lang);
        cur->start = *e ? e + 1 : e;
      }
      last = -1;
    } else if ((k = header_line(p, e, &v)) >= 0) {
      free(ps->field[k]);
      ps->field[k] = v;
      last = k;
    } else if (blank(p, e)) {
      last = -1;
    } else if (last == 3) {
      append_rationale(ps, p, e);
    } else if (!ps->prose) {
      ps->prose = p;
    }
    p = *e ? e + 1 : e;
  }
  if (cur)
    cur->len = strlen(cur->start);
}

/* ---- choosing the code ---- */

/* The text defines op_name: "op_name (" followed later by '{'. */
static int defines(const char *s, size_t n, const char *op)
{
  size_t k = strlen(op), i;

  for (i = 0; i + k < n; i++) {
    size_t j = i + k;
    if (strncmp(s + i, op, k) || (i && (isalnum((unsigned char)s[i - 1]) || s[i - 1] == '_')))
      continue;
    while (j < n && (s[j] == ' ' || s[j] == '\t'))
      j++;
    if (j < n && s[j] == '(' && memchr(s + j, '{', n - j))
      return 1;
  }
  return 0;
}

static const block *pick(const parsed *ps, const char *op, int *unclosed)
{
  int i;

  *unclosed = 0;
  for (i = ps->nb - 1; i >= 0; i--)
    if (ps->b[i].closed && defines(ps->b[i].start, ps->b[i].len, op))
      return &ps->b[i];
  for (i = ps->nb - 1; i >= 0; i--)
    if (!ps->b[i].closed && defines(ps->b[i].start, ps->b[i].len, op))
      *unclosed = 1;
  return NULL;
}

static int code_start(const char *p)
{
  static const char *const starts[] = {"#include", "#define", "#pragma", "#if", "void ",
                                       "static ", "typedef ", "/*", "inline "};
  size_t i;

  for (i = 0; i < sizeof starts / sizeof starts[0]; i++)
    if (!strncmp(p, starts[i], strlen(starts[i])))
      return 1;
  return 0;
}

/* Unfenced code: from the first line that starts like C to the last '}'
 * at the start of a line. */
static char *unfenced(const char *reply, const char *op)
{
  const char *p = reply, *first = NULL, *endp = NULL;

  while (*p) {
    const char *e = line_end(p);
    if (!first && code_start(p))
      first = p;
    if (first && *p == '}')
      endp = e;
    p = *e ? e + 1 : e;
  }
  if (!first || !endp || !defines(first, (size_t)(endp - first), op))
    return NULL;
  return kope_sprintf("%.*s\n", (int)(endp - first), first);
}

/* ---- the thought ---- */

typedef struct hint {
  const char *needle, *layer, *thought, *title;
} hint;

static const hint hints[] = {
  {"omp parallel", "parallel", "parallel.omp_parallel_for", "parallelize the loop with OpenMP"},
  {"_mm512_", "vectorize", "vectorize.avx512_intrinsics", "vectorize with AVX-512 intrinsics"},
  {"_mm256_", "vectorize", "vectorize.avx2_intrinsics", "vectorize with AVX2 intrinsics"},
  {"_mm_", "vectorize", "vectorize.sse_intrinsics", "vectorize with SSE intrinsics"},
  {"omp simd", "vectorize", "vectorize.omp_simd", "vectorize with omp simd"},
  {"__builtin_prefetch", "memory", "memory.prefetch", "software prefetching"},
  {"restrict", "memory", "memory.restrict", "restrict-qualified pointers"},
  {"BLOCK", "tiling", "tiling.blocking", "loop blocking"},
  {"TILE", "tiling", "tiling.blocking", "loop tiling"},
  {"#pragma unroll", "instruction", "instruction.unroll", "loop unrolling"},
};

static void infer(kope_proposal *out, const char *src, const char *inc)
{
  size_t i;

  for (i = 0; i < sizeof hints / sizeof hints[0]; i++)
    if (strstr(src, hints[i].needle) && !(inc && strstr(inc, hints[i].needle)))
      break;
  if (!out->layer)
    out->layer = kope_strdup(i < sizeof hints / sizeof hints[0] ? hints[i].layer : "algorithm");
  out->thought_id = kope_strdup(i < sizeof hints / sizeof hints[0] ? hints[i].thought
                                                                  : "algorithm.rewrite");
  if (!out->title)
    out->title = kope_sprintf("(inferred) %s", i < sizeof hints / sizeof hints[0]
                                                   ? hints[i].title : "rewrite of the kernel");
  out->thought_inferred = 1;
}

/* "Parallel.OMP for" → "parallel.omp_for"; prefixed by the layer when
 * it has no dot. */
static char *clean_id(const char *raw, const char *layer)
{
  char buf[128];
  size_t n = 0;

  for (; *raw && n + 1 < sizeof buf; raw++) {
    unsigned char c = (unsigned char)*raw;
    if (isalnum(c) || strchr("._=,+-", c))
      buf[n++] = (char)tolower(c);
    else if ((c == ' ' || c == '/') && n && buf[n - 1] != '_')
      buf[n++] = '_';
  }
  while (n && buf[n - 1] == '_')
    n--;
  buf[n] = 0;
  if (!n)
    return NULL;
  return strchr(buf, '.') ? kope_strdup(buf) : kope_sprintf("%s.%s", layer ? layer : "algorithm", buf);
}

static char *clean_layer(const char *raw)
{
  char buf[32];
  size_t n = 0;

  for (; *raw && n + 1 < sizeof buf; raw++) {
    if (isalpha((unsigned char)*raw))
      buf[n++] = (char)tolower((unsigned char)*raw);
    else if (n)
      break;   /* "parallel (OpenMP)" → "parallel" */
  }
  buf[n] = 0;
  return n ? kope_strdup(buf) : NULL;
}

static void header(kope_proposal *out, parsed *ps, const char *src, const char *inc)
{
  if (ps->field[0] && *ps->field[0])
    out->layer = clean_layer(ps->field[0]);
  if (ps->field[2] && *ps->field[2])
    out->title = kope_strdup(ps->field[2]);
  if (ps->field[3] && *ps->field[3])
    out->rationale = kope_strdup(ps->field[3]);
  if (ps->field[1] && *ps->field[1])
    out->thought_id = clean_id(ps->field[1], out->layer);
  if (!out->thought_id)
    infer(out, src, inc);
  if (!out->layer) {
    const char *dot = strchr(out->thought_id, '.');
    out->layer = kope_strndup(out->thought_id, dot ? (size_t)(dot - out->thought_id) : 0);
  }
  if (!out->title)
    out->title = kope_strdup(out->thought_id);
  if (!out->rationale) {
    char ex[300];
    size_t n = 0;
    const char *p = ps->prose;
    while (p && *p && *p != '`' && n + 1 < sizeof ex) {
      ex[n++] = *p == '\n' ? ' ' : *p;
      p++;
    }
    ex[n] = 0;
    out->rationale = kope_strdup(n ? ex : "(the reply gave no rationale)");
  }
}

static void no_kernel(kope_proposal *out, const char *why, const char *reply)
{
  char ex[241];
  size_t i = 0;

  for (; reply && reply[i] && i + 1 < sizeof ex; i++)
    ex[i] = reply[i] == '\n' ? ' ' : reply[i];
  ex[i] = 0;
  out->no_kernel = kope_sprintf("%s; the reply began: \"%s%s\"", why, ex,
                                reply && strlen(reply) >= sizeof ex - 1 ? "..." : "");
}

static char *jstr(json_t *j, const char *key)
{
  const char *s = json_string_value(json_object_get(j, key));
  return s && *s ? kope_strdup(s) : NULL;
}

/* {"layer", "thought_id", "title", "rationale", "source"}: 1 kernel, 0
 * no kernel (no_kernel set), -1 not such an object. */
static int parse_json(const char *reply, const char *op, const char *inc, kope_proposal *out)
{
  json_t *j;
  char *raw;
  int rc = -1;

  while (*reply == ' ' || *reply == '\n' || *reply == '\r' || *reply == '\t')
    reply++;
  if (*reply != '{' || !(j = json_loads(reply, JSON_DISABLE_EOF_CHECK, NULL)))
    return -1;
  if (json_is_object(j) && json_is_string(json_object_get(j, "source"))) {
    const char *src = json_string_value(json_object_get(j, "source"));
    rc = defines(src, strlen(src), op);
    if (rc) {
      out->source = kope_strdup(src);
      out->layer = (raw = jstr(j, "layer")) ? clean_layer(raw) : NULL;
      free(raw);
      out->thought_id = (raw = jstr(j, "thought_id")) ? clean_id(raw, out->layer) : NULL;
      free(raw);
      out->title = jstr(j, "title");
      out->rationale = jstr(j, "rationale");
      if (!out->thought_id)
        infer(out, src, inc);
      if (!out->layer)
        out->layer = kope_strndup(out->thought_id, strcspn(out->thought_id, "."));
      if (!out->title)
        out->title = kope_strdup(out->thought_id);
      if (!out->rationale)
        out->rationale = kope_strdup("(the reply gave no rationale)");
    } else {
      char *why = kope_sprintf("the JSON reply's source does not define %s()", op);
      no_kernel(out, why, reply);
      free(why);
    }
  }
  json_decref(j);
  return rc;
}

int kope_llm_parse_reply(const char *reply, const char *op, const char *inc, kope_proposal *out)
{
  parsed ps;
  const block *b;
  int unclosed, i, found = 0;
  char *why = NULL;

  if (reply && (found = parse_json(reply, op, inc, out)) >= 0)
    return found;
  found = 0;
  memset(&ps, 0, sizeof ps);
  scan(reply ? reply : "", &ps);
  if ((b = pick(&ps, op, &unclosed)))
    out->source = kope_strndup(b->start, b->len);
  else if (!ps.nb)
    out->source = unfenced(reply ? reply : "", op);
  if (out->source) {
    header(out, &ps, out->source, inc);
    found = 1;
  } else {
    why = unclosed ? kope_sprintf("the code block defining %s() is not closed (the reply "
                                  "looks cut off)", op)
          : ps.nb ? kope_sprintf("none of the %d code blocks defines %s()", ps.nb, op)
                  : kope_sprintf("the reply contains no code defining %s()", op);
    no_kernel(out, why, reply);
    if (ps.field[1] && *ps.field[1]) {
      out->thought_id = clean_id(ps.field[1], NULL);
      out->title = ps.field[2] ? kope_strdup(ps.field[2]) : NULL;
    }
  }
  for (i = 0; i < 4; i++)
    free(ps.field[i]);
  free(why);
  return found;
}
