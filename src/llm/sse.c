/*
 * An incremental Server-Sent Events parser (the framing both providers
 * stream in): lines end in LF, CR or CRLF, possibly split across network
 * reads; "event:" names the event, "data:" lines accumulate (joined by
 * '\n'), a line starting with ':' is a comment, and a blank line
 * dispatches the event. Lines and data are capped like every kope buffer.
 */
#include <string.h>
#include "kope/llm.h"

#define SSE_LINE_LIMIT (1u << 20)
#define SSE_DATA_LIMIT (4u << 20)

void kope_sse_init(kope_sse *s, kope_sse_cb cb, void *ctx)
{
  memset(s, 0, sizeof *s);
  kope_buf_init(&s->line, SSE_LINE_LIMIT);
  kope_buf_init(&s->data, SSE_DATA_LIMIT);
  s->cb = cb;
  s->ctx = ctx;
}

void kope_sse_release(kope_sse *s)
{
  kope_buf_release(&s->line);
  kope_buf_release(&s->data);
}

static int dispatch(kope_sse *s)
{
  int rc = 0;

  if (s->data.len || s->event[0])
    rc = s->cb(s->event[0] ? s->event : "message", s->data.data ? s->data.data : "", s->ctx);
  kope_buf_reset(&s->data);
  s->event[0] = 0;
  return rc;
}

/* One complete line (without its terminator). */
static int line(kope_sse *s, const char *l, size_t n)
{
  const char *colon;
  size_t fn, vn;
  const char *v;

  if (n == 0)
    return dispatch(s);
  if (l[0] == ':')
    return 0;
  colon = memchr(l, ':', n);
  fn = colon ? (size_t)(colon - l) : n;
  v = colon ? colon + 1 : l + n;
  vn = colon ? n - fn - 1 : 0;
  if (vn && *v == ' ') {
    v++;
    vn--;
  }
  if (fn == 4 && !memcmp(l, "data", 4)) {
    if (s->data.len)
      kope_buf_append(&s->data, "\n", 1);
    kope_buf_append(&s->data, v, vn);
  } else if (fn == 5 && !memcmp(l, "event", 5)) {
    size_t k = vn < sizeof s->event - 1 ? vn : sizeof s->event - 1;
    memcpy(s->event, v, k);
    s->event[k] = 0;
  }
  return 0;   /* id:, retry: and unknown fields are ignored */
}

int kope_sse_feed(kope_sse *s, const char *bytes, size_t n)
{
  size_t i;
  int rc;

  for (i = 0; i < n; i++) {
    char ch = bytes[i];
    if (ch == '\n' && s->cr) {
      s->cr = 0;   /* the LF of a CRLF */
      continue;
    }
    s->cr = ch == '\r';
    if (ch == '\n' || ch == '\r') {
      rc = line(s, s->line.data ? s->line.data : "", s->line.len);
      kope_buf_reset(&s->line);
      if (rc)
        return rc;
    } else {
      kope_buf_append(&s->line, &ch, 1);
    }
  }
  return 0;
}

int kope_sse_finish(kope_sse *s)
{
  int rc = 0;

  if (s->line.len) {
    rc = line(s, s->line.data, s->line.len);
    kope_buf_reset(&s->line);
  }
  return rc ? rc : dispatch(s);
}
