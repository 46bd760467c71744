/*
 * Bounded growable buffers. Growth doubles the capacity; an append that
 * would cross the limit is cut at the limit and marks the buffer truncated,
 * so callers can say "output truncated" instead of running out of memory.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kope/core.h"

#define KOPE_BUF_DEFAULT_LIMIT ((size_t)64 << 20)

void kope_buf_init(kope_buf *b, size_t limit)
{
  memset(b, 0, sizeof *b);
  b->limit = limit ? limit : KOPE_BUF_DEFAULT_LIMIT;
}

void kope_buf_release(kope_buf *b)
{
  free(b->data);
  b->data = NULL;
  b->len = b->cap = 0;
  b->truncated = 0;
}

void kope_buf_reset(kope_buf *b)
{
  b->len = 0;
  b->truncated = 0;
  if (b->data)
    b->data[0] = '\0';
}

static int buf_reserve(kope_buf *b, size_t need)
{
  size_t cap;
  char *p;

  if (need + 1 <= b->cap)
    return 0;
  cap = b->cap ? b->cap : 256;
  while (cap < need + 1)
    cap *= 2;
  p = realloc(b->data, cap);
  if (!p)
    return -1;
  b->data = p;
  b->cap = cap;
  return 0;
}

int kope_buf_append(kope_buf *b, const void *data, size_t n)
{
  int rc = 0;

  if (b->len + n > b->limit) {
    n = b->limit > b->len ? b->limit - b->len : 0;
    b->truncated = 1;
    rc = -1;
  }
  if (buf_reserve(b, b->len + n) != 0)
    return -1;
  if (n)
    memcpy(b->data + b->len, data, n);
  b->len += n;
  b->data[b->len] = '\0';
  return rc;
}

int kope_buf_puts(kope_buf *b, const char *s)
{
  return kope_buf_append(b, s, strlen(s));
}

int kope_buf_vprintf(kope_buf *b, const char *fmt, va_list ap)
{
  char small[512];
  va_list cp;
  int n, rc;
  char *big;

  va_copy(cp, ap);
  n = vsnprintf(small, sizeof small, fmt, cp);
  va_end(cp);
  if (n < 0)
    return -1;
  if ((size_t)n < sizeof small)
    return kope_buf_append(b, small, (size_t)n);
  big = malloc((size_t)n + 1);
  if (!big)
    return -1;
  vsnprintf(big, (size_t)n + 1, fmt, ap);
  rc = kope_buf_append(b, big, (size_t)n);
  free(big);
  return rc;
}

int kope_buf_printf(kope_buf *b, const char *fmt, ...)
{
  va_list ap;
  int rc;

  va_start(ap, fmt);
  rc = kope_buf_vprintf(b, fmt, ap);
  va_end(ap);
  return rc;
}

char *kope_buf_steal(kope_buf *b)
{
  char *p = b->data;

  if (!p)
    p = calloc(1, 1);
  b->data = NULL;
  b->len = b->cap = 0;
  b->truncated = 0;
  return p;
}
