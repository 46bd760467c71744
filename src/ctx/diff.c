/*
 * A line diff for prompts: the best unpromoted candidate is shown as its
 * changes against the incumbent when its whole source would not fit the
 * hot tier's allowance (a strong model builds on both, and most steps
 * change a few dozen lines of a long kernel). The diff is a longest
 * common subsequence of lines (O(n*m) cells, both sides capped at
 * KOPE_CTX_DIFF_MAX_LINES lines), printed as hunks with two lines of
 * context: "@@ incumbent line A, candidate line B @@", then ' ', '-' and
 * '+' lines as in a unified diff.
 */
#include <stdlib.h>
#include <string.h>
#include "ctx_int.h"

#define KOPE_CTX_DIFF_MAX_LINES 4000
#define KOPE_CTX_DIFF_CONTEXT 2

typedef struct dlines {
  const char **p;   /* start of each line (borrowed from the text) */
  size_t *len;      /* its length without the newline */
  size_t n;
} dlines;

static int split(const char *s, dlines *l)
{
  size_t n = 0, i;
  const char *q;

  for (q = s; *q; q++)
    n += *q == '\n';
  n += *s && s[strlen(s) - 1] != '\n';
  if (n > KOPE_CTX_DIFF_MAX_LINES)
    return -1;
  l->p = calloc(n + 1, sizeof *l->p);
  l->len = calloc(n + 1, sizeof *l->len);
  if (!l->p || !l->len)
    return -1;
  for (i = 0, q = s; i < n; i++) {
    const char *e = strchr(q, '\n');
    l->p[i] = q;
    l->len[i] = e ? (size_t)(e - q) : strlen(q);
    q = e ? e + 1 : q + l->len[i];
  }
  l->n = n;
  return 0;
}

static int same(const dlines *a, size_t i, const dlines *b, size_t j)
{
  return a->len[i] == b->len[j] && !memcmp(a->p[i], b->p[j], a->len[i]);
}

/* One output op per line: ' ' both, '-' only in a, '+' only in b. */
static char *script(const dlines *a, const dlines *b, size_t *nops)
{
  size_t w = b->n + 1, i, j, k = 0;
  unsigned *t = calloc((a->n + 1) * w, sizeof *t);
  char *ops = malloc(a->n + b->n + 1);

  if (!t || !ops) {
    free(t);
    free(ops);
    return NULL;
  }
  for (i = a->n; i-- > 0;)
    for (j = b->n; j-- > 0;)
      t[i * w + j] = same(a, i, b, j) ? t[(i + 1) * w + j + 1] + 1
                     : t[(i + 1) * w + j] > t[i * w + j + 1] ? t[(i + 1) * w + j]
                                                              : t[i * w + j + 1];
  for (i = j = 0; i < a->n || j < b->n;)
    if (i < a->n && j < b->n && same(a, i, b, j))
      ops[k++] = ' ', i++, j++;
    else if (i < a->n && (j == b->n || t[(i + 1) * w + j] >= t[i * w + j + 1]))
      ops[k++] = '-', i++;   /* removals first, as unified diffs print them */
    else
      ops[k++] = '+', j++;
  free(t);
  *nops = k;
  return ops;
}

/* Is op k within KOPE_CTX_DIFF_CONTEXT of a change? */
static int near_change(const char *ops, size_t n, size_t k)
{
  size_t lo = k > KOPE_CTX_DIFF_CONTEXT ? k - KOPE_CTX_DIFF_CONTEXT : 0;
  size_t hi = k + KOPE_CTX_DIFF_CONTEXT < n ? k + KOPE_CTX_DIFF_CONTEXT : n - 1;

  for (; lo <= hi; lo++)
    if (ops[lo] != ' ')
      return 1;
  return 0;
}

static void emit(const char *ops, size_t nops, const dlines *a, const dlines *b, kope_buf *out)
{
  size_t k, i = 0, j = 0;
  int in_hunk = 0;

  for (k = 0; k < nops; k++) {
    if (!near_change(ops, nops, k)) {
      in_hunk = 0;
    } else {
      if (!in_hunk)
        kope_buf_printf(out, "@@ incumbent line %zu, candidate line %zu @@\n", i + 1, j + 1);
      in_hunk = 1;
      if (ops[k] == '+')
        kope_buf_printf(out, "+%.*s\n", (int)b->len[j], b->p[j]);
      else
        kope_buf_printf(out, "%c%.*s\n", ops[k], (int)a->len[i], a->p[i]);
    }
    i += ops[k] != '+';
    j += ops[k] != '-';
  }
}

int kope_ctx_line_diff(const char *a, const char *b, kope_buf *out)
{
  dlines la = {0}, lb = {0};
  char *ops = NULL;
  size_t nops = 0;
  int rc = -1;

  if (split(a, &la) || split(b, &lb) || !(ops = script(&la, &lb, &nops)))
    goto out;
  emit(ops, nops, &la, &lb, out);
  rc = 0;
out:
  free(ops);
  free(la.p);
  free(la.len);
  free(lb.p);
  free(lb.len);
  return rc;
}
