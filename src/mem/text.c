/*
 * Text derived from the memory: normalized error signatures (the key of
 * error-driven retrieval), search terms pulled out of free text, the
 * full-text hit list both engines fill and its order, and the one-line
 * summaries and digest lessons that go into prompts.
 */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "mem/engine.h"

#define SIG_MAX 160

/* ---- error signatures ------------------------------------------------ */

static const char *ci_find(const char *hay, const char *end, const char *needle)
{
  size_t n = strlen(needle);
  const char *p;

  for (p = hay; p + n <= end; p++)
    if (!strncasecmp(p, needle, n))
      return p;
  return NULL;
}

/* The first line of [s, end) holding one of the words; NULL if none. */
static const char *line_with(const char *s, const char *const *words, const char **lend)
{
  while (*s) {
    const char *e = strchr(s, '\n');
    size_t i;
    if (!e)
      e = s + strlen(s);
    for (i = 0; words[i]; i++)
      if (ci_find(s, e, words[i])) {
        *lend = e;
        return s;
      }
    s = *e ? e + 1 : e;
  }
  return NULL;
}

static int is_word(int c)
{
  return isalnum(c) || c == '_';
}

/* Skip a quoted span starting at p (ASCII quotes or UTF-8 ‘ ’ “ ”). */
static const char *skip_quoted(const char *p, const char *end)
{
  const unsigned char *u = (const unsigned char *)p;
  char close = *p == '`' ? '\'' : *p;

  if (u[0] == 0xE2 && p + 2 < end && u[1] == 0x80 && (u[2] == 0x98 || u[2] == 0x9C)) {
    const char *q = ci_find(p + 3, end, u[2] == 0x98 ? "\xE2\x80\x99" : "\xE2\x80\x9D");
    return q ? q + 3 : NULL;
  }
  if (*p != '\'' && *p != '"' && *p != '`')
    return NULL;
  p = memchr(p + 1, close, (size_t)(end - p - 1));
  return p ? p + 1 : NULL;
}

static const char *skip_number(const char *p, const char *end)
{
  while (p < end && (isalnum((unsigned char)*p) || *p == '.' ||
                     ((*p == '-' || *p == '+') && (p[-1] == 'e' || p[-1] == 'E'))))
    p++;
  return p;
}

static const char *skip_path(const char *p, const char *end)
{
  while (p < end && !isspace((unsigned char)*p) && *p != ':' && *p != '(' && *p != ')')
    p++;
  return p;
}

static void sig_put(char *out, size_t *n, char c)
{
  if (*n + 1 >= SIG_MAX)
    return;
  if (c == ' ' && (*n == 0 || out[*n - 1] == ' '))
    return;
  out[(*n)++] = c;
}

static void sig_normalize(const char *p, const char *end, char *out)
{
  size_t n = 0;

  while (p < end) {
    const char *q;
    unsigned char c = (unsigned char)*p;
    int prev_word = n > 0 && is_word((unsigned char)out[n - 1]);
    if ((q = skip_quoted(p, end)) != NULL) {
      sig_put(out, &n, 'Q');
      p = q;
    } else if ((isdigit(c) || ((c == '-' || c == '+') && p + 1 < end &&
                                 isdigit((unsigned char)p[1]))) && !prev_word) {
      sig_put(out, &n, '#');
      p = skip_number(p + 1, end);
    } else if (c == '/' && !prev_word) {
      sig_put(out, &n, 'P');
      p = skip_path(p, end);
    } else {
      sig_put(out, &n, isspace(c) ? ' ' : (char)tolower(c));
      p++;
    }
  }
  while (n > 0 && out[n - 1] == ' ')
    n--;
  out[n] = '\0';
}

char *kope_mem_error_signature(const char *feedback)
{
  static const char *const errs[] = {"error", NULL};
  static const char *const others[] = {"mismatch", "incorrect", "wrong", "differ",
                                       "segmentation", "signal", "abort", "timed out",
                                       "timeout", "forbidden", "not allowed", "fail",
                                       NULL};
  const char *s, *end = NULL, *e;
  char out[SIG_MAX];

  if (!feedback || !*feedback)
    return NULL;
  s = line_with(feedback, errs, &end);
  if (s && (e = ci_find(s, end, "error:")) != NULL)
    s = e;
  if (!s)
    s = line_with(feedback, others, &end);
  if (!s)
    return NULL;
  sig_normalize(s, end, out);
  return out[0] ? kope_strdup(out) : NULL;
}

/* ---- search terms ------------------------------------------------------ */

int mem_is_stopword(const char *w)
{
  static const char *const stop[] = {
    "an", "and", "are", "as", "at", "be", "but", "by", "for", "from", "has", "have", "in",
    "into", "is", "it", "its", "of", "on", "or", "that", "the", "then", "this", "to", "was",
    "were", "will", "with", "we", "our", "uses", "use", "using", "than", "so", "if", NULL};
  size_t i;

  for (i = 0; stop[i]; i++)
    if (!strcmp(w, stop[i]))
      return 1;
  return 0;
}

uint32_t mem_word_hash(const char *w)
{
  uint32_t h = 2166136261u;
  const unsigned char *p;

  for (p = (const unsigned char *)w; *p; p++)
    h = (h ^ *p) * 16777619u;
  return h;
}

size_t mem_terms(const char *text, char terms[][48], size_t max)
{
  size_t n = 0, i;
  const unsigned char *p = (const unsigned char *)text;

  while (p && *p && n < max) {
    char w[48];
    size_t len = 0;
    while (*p && !(is_word(*p) || *p >= 0x80))
      p++;
    while (*p && (is_word(*p) || *p >= 0x80)) {
      if (len < sizeof w - 1)
        w[len++] = (char)tolower(*p);
      p++;
    }
    w[len] = '\0';
    if (len < 2)
      continue;
    for (i = 0; i < n && strcmp(terms[i], w); i++)
      ;
    if (i == n)
      memcpy(terms[n++], w, len + 1);
  }
  return n;
}

/* ---- full-text hits ---------------------------------------------------- */

int mem_hits_push(mem_hit **hits, size_t *n, size_t *cap, mem_hit h)
{
  if (kope_grow(hits, cap, *n + 1, sizeof **hits) != KOPE_OK)
    return KOPE_ENOMEM;
  (*hits)[(*n)++] = h;
  return KOPE_OK;
}

int mem_hit_cmp(const void *a, const void *b)
{
  const mem_hit *x = a, *y = b;
  int64_t rx = x->id * 4 + x->kind, ry = y->id * 4 + y->kind;

  if (x->score != y->score)
    return x->score < y->score ? -1 : 1;
  return (rx < ry) - (rx > ry);
}

/* ---- summaries --------------------------------------------------------- */

static void put_clipped(kope_buf *b, const char *s, size_t max)
{
  size_t n = strcspn(s, "\n");

  if (n > max) {
    kope_buf_append(b, s, max);
    kope_buf_puts(b, "...");
  } else {
    kope_buf_append(b, s, n);
  }
}

char *kope_mem_case_summary(const kope_mem_case *c)
{
  kope_buf b;

  kope_buf_init(&b, 4096);
  kope_buf_printf(&b, "#%lld %s@%s step %lld [%s r=%.2f d=%.2f c=%.2f]", (long long)c->id,
                  c->in.op ? c->in.op : "?", c->in.target ? c->in.target : "?",
                  (long long)c->in.step,
                  kope_mem_label_name(c->in.score.label), c->in.score.step_ratio,
                  c->in.score.d_score,
                  c->in.score.confidence);
  if (c->in.thought_id)
    kope_buf_printf(&b, " %s", c->in.thought_id);
  if (c->in.thought_title) {
    kope_buf_puts(&b, " \"");
    put_clipped(&b, c->in.thought_title, 80);
    kope_buf_puts(&b, "\"");
  }
  kope_buf_printf(&b, ": %s", c->in.verdict ? c->in.verdict : "?");
  if (isfinite(c->in.score.speedup))
    kope_buf_printf(&b, ", %.3gx vs ref", c->in.score.speedup);
  if (c->err_sig) {
    kope_buf_puts(&b, " (");
    put_clipped(&b, c->err_sig, 100);
    kope_buf_puts(&b, ")");
  }
  return kope_buf_steal(&b);
}

char *mem_digest_auto_text(const kope_mem_digest *d)
{
  kope_buf b;

  kope_buf_init(&b, 4096);
  kope_buf_printf(&b, "On %s, for %s operators, %s", *d->target ? d->target : "any target",
                  *d->category ? d->category : "uncategorized", d->thought_id);
  if (d->title && *d->title) {
    kope_buf_puts(&b, " (");
    put_clipped(&b, d->title, 80);
    kope_buf_puts(&b, ")");
  }
  kope_buf_printf(&b, " was effective in %lld of %lld attempts (partial %lld, ineffective %lld,"
                  " negative %lld; %lld correct; median step ratio %.2f).",
                  (long long)d->n_label[KOPE_LABEL_EFFECTIVE], (long long)d->attempts,
                  (long long)d->n_label[KOPE_LABEL_PARTIAL],
                  (long long)d->n_label[KOPE_LABEL_INEFFECTIVE],
                  (long long)d->n_label[KOPE_LABEL_NEGATIVE], (long long)d->n_correct,
                  d->median_ratio);
  return kope_buf_steal(&b);
}

char *mem_digest_summary(const kope_mem_digest *d)
{
  kope_buf b;

  kope_buf_init(&b, 4096);
  kope_buf_printf(&b, "lesson %s/%s/%s: ", *d->layer ? d->layer : "-",
                  d->thought_id, *d->category ? d->category : "-");
  put_clipped(&b, d->text ? d->text : "", 400);
  return kope_buf_steal(&b);
}
