/*
 * kope LLM providers: one chat call (a system and a user prompt in, the
 * model's text out) over three backends:
 *   openai     POST {base}/chat/completions (OpenAI, vLLM, llama.cpp's
 *              server, Ollama's /v1, ...); base as OpenAI SDKs take it,
 *              "/v1" added when missing; SSE streaming or one JSON reply;
 *   anthropic  POST {host}/v1/messages with x-api-key and
 *              anthropic-version; named SSE events or one JSON reply;
 *   command    a user-given shell command gets the request JSON on stdin
 *              and answers on stdout (plain text, or JSON with "content"),
 *              under a timeout (any CLI runner, or a person answering);
 *   replay     answers call i with reply i of a recorded session (a JSONL
 *              file, gzip'd or not; see docs/llm.md "Replay").
 * Robustness: a connect timeout and a stall timeout (no data for S
 * seconds), but no cap on a stream's total time; retries with exponential
 * backoff and jitter on connection errors, stalls, 408, 429, 5xx and 529,
 * honouring Retry-After; no retry on other 4xx, whose body goes into the
 * error; a reply cut off by the length limit is marked truncated; the
 * reply is capped in size. The API key is only ever put in a request
 * header: never in a log line, an error message, or anything returned.
 */
#ifndef KOPE_LLM_H
#define KOPE_LLM_H

#include <stdint.h>
#include "kope/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kope_llm kope_llm;

typedef struct kope_llm_opts {
  const char *provider;        /* openai (default) | anthropic | command | replay */
  const char *url;             /* NULL: the provider's public endpoint */
  const char *model;           /* required for openai and anthropic */
  const char *cmd;             /* command provider: run with /bin/sh -c */
  const char *replay;          /* replay provider: the recording's path */
  const char *api_key;         /* NULL: KOPE_LLM_API_KEY, then OPENAI_API_KEY
                                  or ANTHROPIC_API_KEY by provider */
  double temperature;          /* < 0: not sent */
  long max_tokens;             /* reply allowance G (0: 4096) */
  const char *max_tokens_field;  /* openai: max_tokens (default) |
                                    max_completion_tokens */
  const char *response_format;   /* openai: a JSON object sent as
                                    response_format, or NULL */
  int stream;                  /* 1: SSE streaming */
  double connect_timeout_s;    /* default 10 */
  double stall_timeout_s;      /* no bytes for this long: give up (default 120) */
  double cmd_timeout_s;        /* command provider wall clock (default 600) */
  int retries;                 /* extra attempts after the first (default 4) */
  double backoff_s;            /* first backoff (default 1); doubles, jittered */
  double backoff_max_s;        /* cap on one wait (default 60) */
  size_t max_reply_bytes;      /* response size cap (default 4 MiB) */
  uint64_t seed;               /* jitter seed (0: from the OS) */
} kope_llm_opts;

void kope_llm_opts_init(kope_llm_opts *o);

/* One reply. Strings owned by the reply. */
typedef struct kope_llm_reply {
  char *text;                  /* the model's text ("" when none) */
  char *finish_reason;         /* as the provider said it, or "" */
  int truncated;               /* cut off by the length limit */
  int64_t tokens_in, tokens_out;
  int usage_reported;          /* the provider reported usage */
  int attempts;                /* HTTP attempts / command runs used */
  double seconds;
} kope_llm_reply;

void kope_llm_reply_release(kope_llm_reply *r);

/* Caller frees. KOPE_EINPUT for a bad configuration (unknown provider,
 * no model, no command); a missing key is reported by the first chat. */
kope_llm *kope_llm_new(const kope_llm_opts *o, kope_err *err);
void kope_llm_free(kope_llm *l);
/* "openai:<model>", "anthropic:<model>", "command:<model>",
 * "replay:<model>" (borrowed). */
const char *kope_llm_name(const kope_llm *l);
/* The endpoint requests go to (borrowed), "" for the command provider. */
const char *kope_llm_endpoint(const kope_llm *l);

/* Ask. Returns
 *   KOPE_OK       *out filled (check out->truncated);
 *   KOPE_EREJECT  no usable reply this time: retries used up on
 *                 transient failures (5xx, 429, stall), a malformed reply
 *                 (invalid JSON in the stream, oversized), the command
 *                 timed out or exited non-zero — err says why, *out holds
 *                 what was received (partial text, usage);
 *   KOPE_EENV     the provider is unreachable after the retries, or it
 *                 refused the request (4xx other than 408/429: the message
 *                 quotes its error body), or no API key where one is needed.
 * *out is always initialised; release it. */
int kope_llm_chat(kope_llm *l, const char *system, const char *user, kope_llm_reply *out,
                  kope_err *err);

/* The header of a recorded session: its model and operator (either may
 * be NULL when not wanted; caller frees; "" for an operator not recorded).
 * KOPE_EINPUT naming the file (and line) when it is missing or corrupt. */
int kope_llm_replay_info(const char *path, char **model, char **op, kope_err *err);

/* A single-line excerpt of s (at most n − 1 bytes) into out. */
void kope_llm_excerpt(const char *s, char *out, size_t n);

/* Window W and a sensible generation allowance G for a model name (known
 * families by prefix; 0 when unknown). */
void kope_llm_model_limits(const char *model, long *window, long *generation);

/* Incremental Server-Sent Events parser (exposed for tests): feed bytes
 * as they arrive; on each complete event cb(event name or "message", data
 * with multi-line data joined by '\n', ctx) is called; a nonzero return
 * stops parsing and is returned by kope_sse_feed. */
typedef int (*kope_sse_cb)(const char *event, const char *data, void *ctx);
typedef struct kope_sse {
  kope_buf line, data;
  char event[64];
  int cr;                      /* last byte was '\r' */
  kope_sse_cb cb;
  void *ctx;
} kope_sse;
void kope_sse_init(kope_sse *s, kope_sse_cb cb, void *ctx);
int kope_sse_feed(kope_sse *s, const char *bytes, size_t n);
/* Dispatch a last event without its blank line (end of stream). */
int kope_sse_finish(kope_sse *s);
void kope_sse_release(kope_sse *s);

#ifdef __cplusplus
}
#endif

#endif
