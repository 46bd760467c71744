/*
 * One HTTP attempt over libcurl: POST the request, read the status line,
 * Content-Type and Retry-After from the headers, feed a 2xx event stream
 * to the SSE parser (and through it to the protocol's event hook) as
 * bytes arrive, collect anything else as a body, and classify the end:
 * complete, transient (worth a retry), unusable, or fatal. Timeouts: a
 * connect timeout and a stall timeout (no byte for S seconds, checked by
 * the progress callback, which libcurl calls at least once a second),
 * never a cap on the total time of a live stream. The response is capped
 * at max_reply_bytes.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include "llm/llm_int.h"

typedef struct hx {
  llm_xfer *x;
  const llm_proto *p;
  double last;        /* when the last byte (header or body) arrived */
  double stall_s;
  int stalled;
} hx;

static int on_progress(void *vctx, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                       curl_off_t ulnow)
{
  hx *h = vctx;

  (void)dltotal;
  (void)dlnow;
  (void)ultotal;
  (void)ulnow;
  if (kope_now() - h->last > h->stall_s) {
    h->stalled = 1;
    return 1;
  }
  return 0;
}

static void parse_retry_after(llm_xfer *x, const char *v)
{
  char tmp[128];
  size_t n = 0;
  time_t when;

  while (*v == ' ' || *v == '\t')
    v++;
  while (v[n] && v[n] != '\r' && v[n] != '\n' && n + 1 < sizeof tmp) {
    tmp[n] = v[n];
    n++;
  }
  tmp[n] = 0;
  if (isdigit((unsigned char)tmp[0])) {
    x->retry_after = strtod(tmp, NULL);
  } else if ((when = curl_getdate(tmp, NULL)) > 0) {
    double d = difftime(when, time(NULL));
    x->retry_after = d > 0 ? d : 0;
  }
}

static size_t on_header(char *b, size_t size, size_t n, void *vctx)
{
  llm_xfer *x = ((hx *)vctx)->x;
  size_t len = size * n;
  char line[512];

  ((hx *)vctx)->last = kope_now();
  snprintf(line, sizeof line, "%.*s", (int)(len < sizeof line ? len : sizeof line - 1), b);
  if (!strncmp(line, "HTTP/", 5)) {
    const char *sp = strchr(line, ' ');
    x->status = sp ? strtol(sp + 1, NULL, 10) : 0;
    x->is_sse = 0;
    x->retry_after = -1.0;
  } else if (!strncasecmp(line, "retry-after:", 12)) {
    parse_retry_after(x, line + 12);
  } else if (!strncasecmp(line, "content-type:", 13)) {
    x->is_sse = strstr(line + 13, "text/event-stream") != NULL;
  }
  return len;
}

static int on_event(const char *event, const char *data, void *vctx)
{
  hx *h = vctx;

  if (h->x->done)
    return 0;   /* anything after the end marker is ignored */
  return h->p->event(h->x, event, data) ? (h->x->bad || h->x->transient_error) : 0;
}

static size_t on_write(char *b, size_t size, size_t n, void *vctx)
{
  hx *h = vctx;
  llm_xfer *x = h->x;
  size_t len = size * n;

  h->last = kope_now();
  x->received += len;
  if (x->received > x->l->o.max_reply_bytes) {
    x->bad = 1;
    snprintf(x->why, sizeof x->why, "the reply exceeded the response cap of %zu bytes",
             x->l->o.max_reply_bytes);
    return 0;
  }
  if (x->status / 100 == 2 && x->is_sse) {
    if (kope_sse_feed(&x->sse, b, len))
      return 0;
  } else {
    kope_buf_append(&x->body, b, len);
  }
  return len;
}

static CURL *setup(kope_llm *l, const char *body, struct curl_slist *hdrs, hx *h, char *ebuf)
{
  CURL *c = curl_easy_init();

  if (!c)
    return NULL;
  curl_easy_setopt(c, CURLOPT_URL, l->endpoint);
  curl_easy_setopt(c, CURLOPT_POST, 1L);
  curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
  curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS,
                   (long)((l->o.connect_timeout_s > 0 ? l->o.connect_timeout_s : 10.0) * 1000));
  curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
  curl_easy_setopt(c, CURLOPT_XFERINFODATA, h);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, h);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_write);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, h);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, ebuf);
  curl_easy_setopt(c, CURLOPT_USERAGENT, "kope");
  return c;
}

static int retryable_status(long s)
{
  return s == 408 || s == 429 || s == 529 || (s >= 500 && s <= 599);
}

static int classify_curl(llm_xfer *x, CURLcode cc, const char *ebuf, double connect_s,
                         int stalled)
{
  const char *msg = *ebuf ? ebuf : curl_easy_strerror(cc);

  if (x->bad)
    return XFER_BAD;
  if (cc == CURLE_COULDNT_CONNECT || cc == CURLE_COULDNT_RESOLVE_HOST ||
      cc == CURLE_COULDNT_RESOLVE_PROXY ||
      ((cc == CURLE_OPERATION_TIMEDOUT || stalled) && connect_s <= 0)) {
    x->unreachable = 1;
    snprintf(x->why, sizeof x->why, "cannot connect to %s: %s", x->l->endpoint, msg);
  } else if (stalled || cc == CURLE_OPERATION_TIMEDOUT) {
    snprintf(x->why, sizeof x->why, "the reply stalled: no data for %.0f s (%zu bytes "
             "received)", x->l->o.stall_timeout_s, x->received);
  } else {
    snprintf(x->why, sizeof x->why, "connection error after %zu bytes: %s", x->received, msg);
  }
  return XFER_RETRY;
}

static int classify_status(llm_xfer *x)
{
  char ex[400];

  kope_llm_excerpt(x->body.data ? x->body.data : "", ex, sizeof ex);
  snprintf(x->why, sizeof x->why, "HTTP %ld from %s: %s", x->status, x->l->endpoint,
           *ex ? ex : "(empty body)");
  return retryable_status(x->status) ? XFER_RETRY : XFER_FATAL;
}

static int classify_reply(llm_xfer *x, const llm_proto *p)
{
  if (!x->is_sse) {
    if (p->body(x, x->body.data ? x->body.data : "") != 0)
      return x->transient_error ? XFER_RETRY : XFER_BAD;
    x->done = 1;
  } else {
    kope_sse_finish(&x->sse);
  }
  if (x->bad)
    return XFER_BAD;
  if (x->transient_error)
    return XFER_RETRY;
  if (x->text.truncated) {
    snprintf(x->why, sizeof x->why, "the reply text exceeded the response cap of %zu bytes",
             x->l->o.max_reply_bytes);
    return XFER_BAD;
  }
  if (!x->done && !(x->r->finish_reason && *x->r->finish_reason)) {
    snprintf(x->why, sizeof x->why, "the stream ended before its end marker (%zu bytes "
             "received)", x->received);
    return XFER_RETRY;
  }
  return XFER_OK;
}

struct curl_slist *kope_llm_json_headers(const kope_llm *l, const char *extra,
                                         const char *key_prefix)
{
  struct curl_slist *h = NULL;

  h = curl_slist_append(h, "Content-Type: application/json");
  if (extra)
    h = curl_slist_append(h, extra);
  h = curl_slist_append(h, l->o.stream ? "Accept: text/event-stream" : "Accept: application/json");
  h = curl_slist_append(h, "Expect:");
  if (l->key) {
    char *a = kope_sprintf("%s%s", key_prefix, l->key);
    if (a) {   /* out of memory: no key header, the server says 401 */
      h = curl_slist_append(h, a);
      memset(a, 0, strlen(a));
      free(a);
    }
  }
  return h;
}

void kope_llm_set_finish(llm_xfer *x, const char *reason, const char *length_reason)
{
  free(x->r->finish_reason);
  x->r->finish_reason = kope_strdup(reason);
  x->r->truncated = !strcmp(reason, length_reason);
}

json_t *kope_llm_reply_object(llm_xfer *x, const char *body,
                              int (*on_error)(llm_xfer *x, json_t *e))
{
  json_t *j = json_loads(body, 0, NULL);
  char ex[200];

  if (!json_is_object(j)) {
    kope_llm_excerpt(body, ex, sizeof ex);
    snprintf(x->why, sizeof x->why, "the reply is not a JSON object: %s", ex);
    x->bad = 1;
  } else if (json_object_get(j, "error")) {
    on_error(x, json_object_get(j, "error"));
  } else {
    return j;
  }
  json_decref(j);
  return NULL;
}

json_t *kope_llm_event_object(llm_xfer *x, const char *event, const char *data)
{
  json_error_t je;
  json_t *j = json_loads(data, 0, &je);

  if (json_is_object(j))
    return j;
  x->bad = 1;
  if (event)
    snprintf(x->why, sizeof x->why, "invalid JSON in the '%s' event (%s) after %zu bytes",
             event, je.text, x->received);
  else
    snprintf(x->why, sizeof x->why, "invalid JSON in the event stream (%s) after %zu bytes",
             je.text, x->received);
  json_decref(j);
  return NULL;
}

int kope_llm_http_attempt(kope_llm *l, const llm_proto *p, const char *body, llm_xfer *x)
{
  struct curl_slist *hdrs = p->headers(l);
  char ebuf[CURL_ERROR_SIZE] = "";
  hx h = {x, p, kope_now(), l->o.stall_timeout_s > 0 ? l->o.stall_timeout_s : 120.0, 0};
  double connect_s = 0;
  CURLcode cc;
  CURL *c;
  int cls;

  kope_sse_init(&x->sse, on_event, &h);
  if (!(c = setup(l, body, hdrs, &h, ebuf))) {
    snprintf(x->why, sizeof x->why, "cannot initialise libcurl");
    x->unreachable = 1;
    cls = XFER_FATAL;
    goto out;
  }
  cc = curl_easy_perform(c);
  curl_easy_getinfo(c, CURLINFO_CONNECT_TIME, &connect_s);
  if (cc == CURLE_OK || (cc == CURLE_WRITE_ERROR && x->bad))
    cls = x->bad ? XFER_BAD : x->status / 100 != 2 ? classify_status(x) : classify_reply(x, p);
  else if (cc == CURLE_WRITE_ERROR && x->transient_error)
    cls = XFER_RETRY;
  else
    cls = classify_curl(x, cc, ebuf, connect_s, h.stalled);
  curl_easy_cleanup(c);
out:
  kope_sse_release(&x->sse);
  curl_slist_free_all(hdrs);
  return cls;
}
