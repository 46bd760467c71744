/*
 * LLM providers (include/kope/llm.h): configuration (endpoint from the
 * base URL, key from the environment), the retry loop around one HTTP
 * attempt (exponential backoff with jitter, Retry-After honoured), the
 * mapping of outcomes to kope status codes, and the table of known model
 * windows. The key lives in the handle and in request headers only;
 * every message that leaves this module is passed through the redactor.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include "llm/llm_int.h"

void kope_llm_opts_init(kope_llm_opts *o)
{
  memset(o, 0, sizeof *o);
  o->provider = "openai";
  o->temperature = -1.0;
  o->max_tokens = 4096;
  o->stream = 1;
  o->connect_timeout_s = 10.0;
  o->stall_timeout_s = 120.0;
  o->cmd_timeout_s = 600.0;
  o->retries = 4;
  o->backoff_s = 1.0;
  o->backoff_max_s = 60.0;
  o->max_reply_bytes = 4u << 20;
}

void kope_llm_reply_release(kope_llm_reply *r)
{
  if (!r)
    return;
  free(r->text);
  free(r->finish_reason);
  memset(r, 0, sizeof *r);
}

/* ---- helpers ---- */

void kope_llm_redact(const kope_llm *l, char *msg)
{
  static const char mark[] = "[redacted]";
  size_t kn;
  char *p;

  if (!l || !l->key || (kn = strlen(l->key)) < 4 || !msg)
    return;
  while ((p = strstr(msg, l->key))) {
    size_t tail = strlen(p + kn);
    if (kn >= sizeof mark - 1) {
      memcpy(p, mark, sizeof mark - 1);
      memmove(p + sizeof mark - 1, p + kn, tail + 1);
    } else {
      memset(p, '*', kn);
    }
  }
}

void kope_llm_usage(json_t *u, kope_llm_reply *r)
{
  json_t *in, *out;

  if (!json_is_object(u))
    return;
  in = json_object_get(u, "prompt_tokens");
  if (!in)
    in = json_object_get(u, "input_tokens");
  out = json_object_get(u, "completion_tokens");
  if (!out)
    out = json_object_get(u, "output_tokens");
  if (json_is_integer(in) && json_integer_value(in) > 0) {
    r->tokens_in = json_integer_value(in);
    r->usage_reported = 1;
  }
  if (json_is_integer(out)) {
    r->tokens_out = json_integer_value(out);
    r->usage_reported = 1;
  }
}

void kope_llm_excerpt(const char *s, char *out, size_t n)
{
  size_t i = 0;

  if (!n)
    return;
  for (; s && *s && i + 1 < n; s++)
    out[i++] = (*s == '\n' || *s == '\r' || *s == '\t') ? ' ' : *s;
  out[i] = 0;
}

/* ---- model limits ---- */

typedef struct model_limit {
  const char *prefix;
  long window, generation;
} model_limit;

/* Longest matching prefix wins; windows as the vendors publish them. */
static const model_limit model_limits[] = {
  {"gpt-4o", 128000, 16384},          {"gpt-4.1", 1047576, 32768},
  {"gpt-4-turbo", 128000, 4096},      {"gpt-4", 8192, 4096},
  {"gpt-3.5", 16385, 4096},           {"gpt-5", 400000, 32768},
  {"o1", 200000, 32768},              {"o3", 200000, 32768},
  {"o4", 200000, 32768},              {"claude-3-5", 200000, 8192},
  {"claude-3-7", 200000, 16384},      {"claude-3", 200000, 4096},
  {"claude-sonnet-4", 200000, 16384}, {"claude-opus-4", 200000, 16384},
  {"claude-haiku-4", 200000, 16384},  {"qwen2.5-coder", 32768, 8192},
  {"qwen3", 32768, 8192},             {"llama3.1", 131072, 8192},
  {"llama-3.1", 131072, 8192},        {"llama3", 8192, 2048},
  {"deepseek-coder", 16384, 4096},    {"deepseek", 65536, 8192},
  {"codellama", 16384, 4096},         {"mistral", 32768, 4096},
};

void kope_llm_model_limits(const char *model, long *window, long *generation)
{
  size_t i, best = 0, bestn = 0;
  const char *m = model;

  *window = *generation = 0;
  if (!m)
    return;
  if (strrchr(m, '/'))
    m = strrchr(m, '/') + 1;   /* "Qwen/Qwen2.5-Coder-7B" style names */
  for (i = 0; i < sizeof model_limits / sizeof model_limits[0]; i++) {
    size_t n = strlen(model_limits[i].prefix);
    if (n > bestn && !strncasecmp(m, model_limits[i].prefix, n)) {
      best = i;
      bestn = n;
    }
  }
  if (bestn) {
    *window = model_limits[best].window;
    *generation = model_limits[best].generation;
  }
}

/* ---- construction ---- */

static int ends_with(const char *s, const char *suffix)
{
  size_t n = strlen(s), k = strlen(suffix);
  return n >= k && !strcmp(s + n - k, suffix);
}

static char *endpoint_of(int kind, const char *url)
{
  char *base = kope_strdup(url), *e;
  size_t n = base ? strlen(base) : 0;

  if (!base)
    return NULL;
  while (n && base[n - 1] == '/')
    base[--n] = 0;
  if (kind == LLM_OPENAI)
    e = ends_with(base, "/chat/completions") ? kope_strdup(base)
        : ends_with(base, "/v1") ? kope_sprintf("%s/chat/completions", base)
        : kope_sprintf("%s/v1/chat/completions", base);
  else
    e = ends_with(base, "/v1/messages") ? kope_strdup(base)
        : ends_with(base, "/v1") ? kope_sprintf("%s/messages", base)
        : kope_sprintf("%s/v1/messages", base);
  free(base);
  return e;
}

static const char *env_key(int kind)
{
  const char *k = getenv("KOPE_LLM_API_KEY");

  if (!k || !*k)
    k = getenv(kind == LLM_ANTHROPIC ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY");
  return k && *k ? k : NULL;
}

static int configure_replay(kope_llm *l, const kope_llm_opts *o, kope_err *err)
{
  int rc;

  if (!o->replay || !*o->replay)
    return kope_err_set(err, KOPE_EINPUT, "llm: the replay provider needs --llm-replay FILE");
  if ((rc = kope_llm_replay_load(o->replay, &l->replay, err)) != KOPE_OK)
    return rc;
  l->model = kope_strdup(kope_llm_replay_model(l->replay));
  l->name = kope_sprintf("replay:%s", l->model);
  l->endpoint = kope_strdup("");
  return KOPE_OK;
}

static int configure(kope_llm *l, const kope_llm_opts *o, kope_err *err)
{
  const char *p = o->provider ? o->provider : "openai";
  const char *key = o->api_key ? o->api_key : NULL;

  if (!strcmp(p, "openai"))
    l->kind = LLM_OPENAI;
  else if (!strcmp(p, "anthropic"))
    l->kind = LLM_ANTHROPIC;
  else if (!strcmp(p, "command"))
    l->kind = LLM_COMMAND;
  else if (!strcmp(p, "replay"))
    l->kind = LLM_REPLAY;
  else
    return kope_err_set(err, KOPE_EINPUT, "llm: unknown provider '%s' (expected openai, "
                        "anthropic, command or replay)", p);
  if (l->kind == LLM_REPLAY)
    return configure_replay(l, o, err);
  if (l->kind == LLM_COMMAND) {
    if (!o->cmd || !*o->cmd)
      return kope_err_set(err, KOPE_EINPUT, "llm: the command provider needs --llm-cmd");
    l->cmd = kope_strdup(o->cmd);
    l->model = kope_strdup(o->model ? o->model : "command");
    l->name = kope_sprintf("command:%s", l->model);
    l->endpoint = kope_strdup("");
    return KOPE_OK;
  }
  if (!o->model || !*o->model)
    return kope_err_set(err, KOPE_EINPUT, "llm: no model given (--llm-model NAME)");
  l->model = kope_strdup(o->model);
  l->endpoint = endpoint_of(l->kind, o->url ? o->url
                            : l->kind == LLM_OPENAI ? "https://api.openai.com/v1"
                                                    : "https://api.anthropic.com");
  if (!key)
    key = env_key(l->kind);
  l->key = key ? kope_strdup(key) : NULL;
  l->name = kope_sprintf("%s:%s", l->kind == LLM_OPENAI ? "openai" : "anthropic", l->model);
  return KOPE_OK;
}

/* Whether every copy configure and kope_llm_new made was allocated. */
static int copies_made(const kope_llm *l, const kope_llm_opts *o)
{
  const char *key = o->api_key ? o->api_key : l->kind <= LLM_ANTHROPIC ? env_key(l->kind) : NULL;

  return l->model && l->name && l->endpoint && l->max_field &&
         (l->kind != LLM_COMMAND || l->cmd) && (!key || l->key) &&
         (!o->response_format || l->response_format);
}

kope_llm *kope_llm_new(const kope_llm_opts *o, kope_err *err)
{
  kope_llm *l = calloc(1, sizeof *l);
  kope_llm_opts def;

  if (!l) {
    kope_err_nomem(err, "LLM client");
    return NULL;
  }
  if (!o) {
    kope_llm_opts_init(&def);
    o = &def;
  }
  l->o = *o;
  if (configure(l, o, err) != KOPE_OK) {
    kope_llm_free(l);
    return NULL;
  }
  l->max_field = kope_strdup(o->max_tokens_field && *o->max_tokens_field ? o->max_tokens_field
                                                                         : "max_tokens");
  l->response_format = o->response_format ? kope_strdup(o->response_format) : NULL;
  if (!copies_made(l, o)) {
    kope_err_nomem(err, "LLM client");
    kope_llm_free(l);
    return NULL;
  }
  l->o.provider = l->o.url = l->o.cmd = l->o.api_key = l->o.replay = NULL;   /* copies only */
  l->o.model = l->model;
  l->o.max_tokens_field = l->max_field;
  l->o.response_format = l->response_format;
  if (l->o.max_tokens <= 0)
    l->o.max_tokens = 4096;
  if (l->o.max_reply_bytes == 0)
    l->o.max_reply_bytes = 4u << 20;
  kope_rng_seed(&l->rng, o->seed ? o->seed : kope_rng_os_seed());
  curl_global_init(CURL_GLOBAL_DEFAULT);
  return l;
}

void kope_llm_free(kope_llm *l)
{
  if (!l)
    return;
  if (l->key)
    memset(l->key, 0, strlen(l->key));
  free(l->key);
  free(l->model);
  free(l->cmd);
  free(l->endpoint);
  free(l->name);
  free(l->max_field);
  free(l->response_format);
  kope_llm_replay_free(l->replay);
  free(l);
  curl_global_cleanup();   /* pairs with the init in kope_llm_new (reference counted) */
}

const char *kope_llm_name(const kope_llm *l) { return l->name; }
const char *kope_llm_endpoint(const kope_llm *l) { return l->endpoint; }

/* ---- the retry loop ---- */

static void sleep_s(double s)
{
  struct timespec ts;

  if (s <= 0)
    return;
  ts.tv_sec = (time_t)s;
  ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
  while (nanosleep(&ts, &ts) != 0)
    ;
}

/* Wait before retry number k (0-based): Retry-After when the server gave
 * one, else base·2^k with "equal jitter" (half fixed, half random). */
static double backoff(kope_llm *l, int k, double retry_after)
{
  double d = l->o.backoff_s > 0 ? l->o.backoff_s : 1.0, cap = l->o.backoff_max_s;

  if (cap <= 0)
    cap = 60.0;
  if (retry_after >= 0)
    return retry_after < cap ? retry_after : cap;
  d *= pow(2.0, k);
  if (d > cap)
    d = cap;
  return d / 2.0 + kope_rng_uniform(&l->rng) * d / 2.0;
}

static void xfer_init(llm_xfer *x, kope_llm *l, kope_llm_reply *r)
{
  memset(x, 0, sizeof *x);
  x->l = l;
  x->r = r;
  x->retry_after = -1.0;
  kope_buf_init(&x->text, l->o.max_reply_bytes);
  kope_buf_init(&x->body, l->o.max_reply_bytes);
}

static void xfer_release(llm_xfer *x)
{
  kope_buf_release(&x->text);
  kope_buf_release(&x->body);
}

/* Keep what the last attempt received in the reply. */
static void take_text(llm_xfer *x)
{
  free(x->r->text);
  x->r->text = kope_strdup(x->text.data ? x->text.data : "");
}

/* Hosted endpoints refuse requests without a key: say so before asking
 * (construction does not insist, so --dry-run works without one). */
static int need_key(const kope_llm *l, kope_err *err)
{
  if (l->key || !(strstr(l->endpoint, "api.openai.com") || strstr(l->endpoint, "api.anthropic.com")))
    return KOPE_OK;
  return kope_err_set(err, KOPE_EENV, "llm: %s needs an API key: set KOPE_LLM_API_KEY (or %s)",
                      l->endpoint, l->kind == LLM_OPENAI ? "OPENAI_API_KEY" : "ANTHROPIC_API_KEY");
}

static int http_chat(kope_llm *l, const char *system, const char *user, kope_llm_reply *out,
                     kope_err *err)
{
  const llm_proto *p = l->kind == LLM_ANTHROPIC ? &kope_llm_anthropic : &kope_llm_openai;
  char *body = p->request(l, system, user);
  int k, cls = XFER_RETRY, rc, retries = l->o.retries > 0 ? l->o.retries : 0;
  llm_xfer x;

  if (!body)
    return kope_err_nomem(err, "LLM request");
  for (k = 0; k <= retries; k++) {
    double ra;
    xfer_init(&x, l, out);
    out->truncated = 0;
    free(out->finish_reason);
    out->finish_reason = NULL;
    out->attempts++;
    cls = kope_llm_http_attempt(l, p, body, &x);
    take_text(&x);
    ra = x.retry_after;
    if (cls != XFER_RETRY || k == retries)
      break;
    xfer_release(&x);
    sleep_s(backoff(l, k, ra));
  }
  kope_llm_redact(l, x.why);
  if (cls == XFER_OK && !out->text)
    rc = kope_err_nomem(err, "LLM reply");
  else if (cls == XFER_OK)
    rc = KOPE_OK;
  else if (cls == XFER_FATAL)
    rc = kope_err_set(err, KOPE_EENV, "llm %s: %s", l->name, x.why);
  else if (cls == XFER_BAD)
    rc = kope_err_set(err, KOPE_EREJECT, "llm %s: %s", l->name, x.why);
  else if (x.unreachable)
    rc = kope_err_set(err, KOPE_EENV, "llm %s: %s (after %d attempts)", l->name, x.why,
                      out->attempts);
  else
    rc = kope_err_set(err, KOPE_EREJECT, "llm %s: %s (after %d attempts)", l->name, x.why,
                      out->attempts);
  if (!out->finish_reason)
    out->finish_reason = kope_strdup("");
  xfer_release(&x);
  free(body);
  return rc;
}

int kope_llm_chat(kope_llm *l, const char *system, const char *user, kope_llm_reply *out,
                  kope_err *err)
{
  double t0 = kope_now();
  int rc;

  memset(out, 0, sizeof *out);
  if (l->kind == LLM_COMMAND)
    rc = kope_llm_command_run(l, system, user, out, err);
  else if (l->kind == LLM_REPLAY)
    rc = kope_llm_replay_chat(l, system, user, out, err);
  else if ((rc = need_key(l, err)) == KOPE_OK)
    rc = http_chat(l, system, user, out, err);
  if (!out->text)
    out->text = kope_strdup("");
  if (!out->finish_reason)
    out->finish_reason = kope_strdup("");
  if (!out->text || !out->finish_reason)
    rc = kope_err_nomem(err, "LLM reply");
  if (err)
    kope_llm_redact(l, err->msg);
  out->seconds = kope_now() - t0;
  return rc;
}
