/*
 * The OpenAI-compatible chat/completions protocol (OpenAI, vLLM,
 * llama.cpp's server, Ollama's /v1 and other compatible services):
 * the request (model, system + user messages, temperature, the
 * configurable max-token field, optional response_format, stream with
 * stream_options.include_usage), "data:" events carrying
 * choices[0].delta.content up to "data: [DONE]", and the non-streaming
 * choices[0].message.content reply. finish_reason "length" marks the
 * reply truncated; usage is read from either form.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "llm/llm_int.h"

static char *oa_request(kope_llm *l, const char *system, const char *user)
{
  json_t *j = json_object(), *msgs = json_array(), *rf;
  char *s;

  json_array_append_new(msgs, json_pack("{s:s, s:s}", "role", "system", "content", system));
  json_array_append_new(msgs, json_pack("{s:s, s:s}", "role", "user", "content", user));
  json_object_set_new(j, "model", json_string(l->model));
  json_object_set_new(j, "messages", msgs);
  if (l->o.temperature >= 0)
    json_object_set_new(j, "temperature", json_real(l->o.temperature));
  json_object_set_new(j, l->max_field, json_integer(l->o.max_tokens));
  if (l->response_format && (rf = json_loads(l->response_format, 0, NULL)))
    json_object_set_new(j, "response_format", rf);
  if (l->o.stream) {
    json_object_set_new(j, "stream", json_true());
    json_object_set_new(j, "stream_options", json_pack("{s:b}", "include_usage", 1));
  }
  s = json_dumps(j, JSON_COMPACT);
  json_decref(j);
  return s;
}

static struct curl_slist *oa_headers(kope_llm *l)
{
  return kope_llm_json_headers(l, NULL, "Authorization: Bearer ");
}

static void set_finish(llm_xfer *x, const char *reason)
{
  kope_llm_set_finish(x, reason, "length");
}

/* An {"error": {...}} object in a reply or a stream. */
static int error_object(llm_xfer *x, json_t *e)
{
  const char *m = json_string_value(json_object_get(e, "message"));

  snprintf(x->why, sizeof x->why, "the server reported an error: %s",
           m ? m : json_is_string(e) ? json_string_value(e) : "(no message)");
  x->transient_error = 1;
  return 1;
}

/* Read a chunk's or a reply's usage; its choices[0] in *ch and that
 * choice's <key>.content returned (borrowed from j). */
static json_t *oa_choice(llm_xfer *x, json_t *j, const char *key, json_t **ch)
{
  kope_llm_usage(json_object_get(j, "usage"), x->r);
  *ch = json_array_get(json_object_get(j, "choices"), 0);
  return json_object_get(json_object_get(*ch, key), "content");
}

static void oa_finish(llm_xfer *x, json_t *ch)
{
  json_t *fr = json_object_get(ch, "finish_reason");

  if (json_is_string(fr))
    set_finish(x, json_string_value(fr));
}

static int oa_event(llm_xfer *x, const char *event, const char *data)
{
  json_t *j, *ch, *c;
  int rc = 0;

  (void)event;
  if (!strcmp(data, "[DONE]")) {
    x->done = 1;
    return 0;
  }
  if (!(j = kope_llm_event_object(x, NULL, data)))
    return 1;
  if (json_object_get(j, "error")) {
    rc = error_object(x, json_object_get(j, "error"));
  } else {
    if (json_is_string(c = oa_choice(x, j, "delta", &ch)))
      kope_buf_puts(&x->text, json_string_value(c));
    oa_finish(x, ch);
  }
  json_decref(j);
  return rc;
}

static int oa_body(llm_xfer *x, const char *body)
{
  json_t *j = kope_llm_reply_object(x, body, error_object), *ch, *c;
  int rc = 0;

  if (!j)
    return -1;
  c = oa_choice(x, j, "message", &ch);
  if (!json_is_string(c) && !json_is_null(c)) {
    snprintf(x->why, sizeof x->why, "the reply has no choices[0].message.content");
    x->bad = 1;
    rc = -1;
  } else {
    kope_buf_puts(&x->text, json_is_string(c) ? json_string_value(c) : "");
    oa_finish(x, ch);
  }
  json_decref(j);
  return rc;
}

const llm_proto kope_llm_openai = {oa_request, oa_headers, oa_event, oa_body};
