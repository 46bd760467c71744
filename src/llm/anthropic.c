/*
 * Anthropic's Messages API: POST {host}/v1/messages with x-api-key and
 * anthropic-version, the system prompt at the top level, max_tokens
 * required; streaming uses named SSE events (message_start with the input
 * usage, content_block_delta with text_delta pieces, message_delta with
 * stop_reason and output usage, message_stop, ping, error), the
 * non-streaming reply has content[] blocks. stop_reason "max_tokens"
 * marks the reply truncated. An "overloaded_error" or "api_error" event
 * is transient (retried); other error events make the reply unusable.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "llm/llm_int.h"

static char *an_request(kope_llm *l, const char *system, const char *user)
{
  json_t *j = json_object(), *msgs = json_array();
  char *s;

  json_array_append_new(msgs, json_pack("{s:s, s:s}", "role", "user", "content", user));
  json_object_set_new(j, "model", json_string(l->model));
  json_object_set_new(j, "max_tokens", json_integer(l->o.max_tokens));
  json_object_set_new(j, "system", json_string(system));
  json_object_set_new(j, "messages", msgs);
  if (l->o.temperature >= 0)
    json_object_set_new(j, "temperature", json_real(l->o.temperature));
  if (l->o.stream)
    json_object_set_new(j, "stream", json_true());
  s = json_dumps(j, JSON_COMPACT);
  json_decref(j);
  return s;
}

static struct curl_slist *an_headers(kope_llm *l)
{
  return kope_llm_json_headers(l, "anthropic-version: 2023-06-01", "x-api-key: ");
}

static void set_stop(llm_xfer *x, const char *reason)
{
  kope_llm_set_finish(x, reason, "max_tokens");
}

static int error_event(llm_xfer *x, json_t *e)
{
  const char *type = json_string_value(json_object_get(e, "type"));
  const char *m = json_string_value(json_object_get(e, "message"));

  snprintf(x->why, sizeof x->why, "the server reported %s: %s", type ? type : "an error",
           m ? m : "(no message)");
  if (type && (!strcmp(type, "overloaded_error") || !strcmp(type, "api_error")))
    x->transient_error = 1;
  else
    x->bad = 1;
  return 1;
}

static void on_data(llm_xfer *x, const char *event, json_t *j)
{
  json_t *d = json_object_get(j, "delta");

  if (!strcmp(event, "message_start")) {
    kope_llm_usage(json_object_get(json_object_get(j, "message"), "usage"), x->r);
  } else if (!strcmp(event, "content_block_delta")) {
    json_t *t = json_object_get(d, "text");
    if (json_is_string(t))
      kope_buf_puts(&x->text, json_string_value(t));
  } else if (!strcmp(event, "message_delta")) {
    json_t *sr = json_object_get(d, "stop_reason");
    json_t *out = json_object_get(json_object_get(j, "usage"), "output_tokens");
    if (json_is_string(sr))
      set_stop(x, json_string_value(sr));
    if (json_is_integer(out)) {
      x->r->tokens_out = json_integer_value(out);
      x->r->usage_reported = 1;
    }
  } else if (!strcmp(event, "message_stop")) {
    x->done = 1;
  }
}

static int an_event(llm_xfer *x, const char *event, const char *data)
{
  json_t *j;
  int rc = 0;

  if (!strcmp(event, "ping"))
    return 0;
  if (!(j = kope_llm_event_object(x, event, data)))
    return 1;
  if (!strcmp(event, "error"))
    rc = error_event(x, json_object_get(j, "error"));
  else
    on_data(x, event, j);
  json_decref(j);
  return rc;
}

static int an_body(llm_xfer *x, const char *body)
{
  json_t *j = kope_llm_reply_object(x, body, error_event), *content, *b, *sr;
  size_t i;
  int rc = 0;

  if (!j)
    return -1;
  if (!json_is_array(content = json_object_get(j, "content"))) {
    snprintf(x->why, sizeof x->why, "the reply has no content[] array");
    x->bad = 1;
    rc = -1;
    goto out;
  }
  json_array_foreach(content, i, b)
    if (json_is_string(json_object_get(b, "text")))
      kope_buf_puts(&x->text, json_string_value(json_object_get(b, "text")));
  kope_llm_usage(json_object_get(j, "usage"), x->r);
  if (json_is_string(sr = json_object_get(j, "stop_reason")))
    set_stop(x, json_string_value(sr));
out:
  json_decref(j);
  return rc;
}

const llm_proto kope_llm_anthropic = {an_request, an_headers, an_event, an_body};
