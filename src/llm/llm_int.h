/*
 * Internals of the LLM providers: the provider handle, the state of one
 * HTTP attempt (what has been received so far), and the per-protocol
 * hooks (request body, headers, stream events, whole-body replies) that
 * openai.c and anthropic.c implement for the transport in http.c.
 */
#ifndef KOPE_LLM_INT_H
#define KOPE_LLM_INT_H

#include <curl/curl.h>
#include <jansson.h>
#include "core/rng.h"
#include "kope/llm.h"

enum { LLM_OPENAI = 0, LLM_ANTHROPIC = 1, LLM_COMMAND = 2, LLM_REPLAY = 3 };

typedef struct llm_replay llm_replay;   /* replay.c: a loaded recording */

struct kope_llm {
  kope_llm_opts o;        /* string fields point into the copies below */
  int kind;
  char *model, *cmd, *key, *endpoint, *name, *max_field, *response_format;
  llm_replay *replay;     /* replay provider: owned */
  kope_rng rng;
};

/* How one attempt ended. */
enum {
  XFER_OK = 0,      /* a complete (or length-truncated) reply */
  XFER_RETRY,       /* transient: connection, stall, 408/429/5xx/529, cut stream */
  XFER_BAD,         /* the reply is unusable and retrying will not help */
  XFER_FATAL,       /* refused (4xx) or unreachable: stop the session */
};

/* One attempt in progress. */
typedef struct llm_xfer {
  kope_llm *l;
  kope_llm_reply *r;      /* usage, finish reason, truncated */
  kope_buf text;          /* the model's text so far */
  kope_buf body;          /* a whole-body reply or an error body */
  kope_sse sse;
  int is_sse;             /* the reply is an event stream */
  long status;
  double retry_after;     /* seconds; < 0 when not given */
  size_t received;        /* bytes of body */
  int done;               /* the protocol's end marker was seen */
  int bad;                /* a protocol error (message in why) */
  int transient_error;    /* an error event that is worth a retry */
  int unreachable;        /* no connection could be made */
  char why[600];
} llm_xfer;

typedef struct llm_proto {
  /* the request body (caller frees) */
  char *(*request)(kope_llm *l, const char *system, const char *user);
  /* headers (the key only here); caller frees with curl_slist_free_all */
  struct curl_slist *(*headers)(kope_llm *l);
  /* one SSE event; nonzero stops the transfer (x->bad or x->done set) */
  int (*event)(llm_xfer *x, const char *event, const char *data);
  /* a whole JSON body: 0 ok, -1 bad (x->why set) */
  int (*body)(llm_xfer *x, const char *body);
} llm_proto;

extern const llm_proto kope_llm_openai;
extern const llm_proto kope_llm_anthropic;

/* http.c: one POST attempt. Returns an XFER_* class; x->why says why
 * when not XFER_OK. */
int kope_llm_http_attempt(kope_llm *l, const llm_proto *p, const char *body, llm_xfer *x);

/* command.c: one run of the command. KOPE_OK, KOPE_EREJECT (timeout,
 * non-zero exit, no output; err says which) or KOPE_EENV (cannot start). */
int kope_llm_command_run(kope_llm *l, const char *system, const char *user,
                         kope_llm_reply *out, kope_err *err);

/* replay.c: load a recording (KOPE_EINPUT naming the file and line when
 * it is missing or corrupt); *out owned by the caller. */
int kope_llm_replay_load(const char *path, llm_replay **out, kope_err *err);
void kope_llm_replay_free(llm_replay *r);
const char *kope_llm_replay_model(const llm_replay *r);   /* borrowed */
/* The next recorded reply; KOPE_EREJECT once the recording has run out. */
int kope_llm_replay_chat(kope_llm *l, const char *system, const char *user,
                         kope_llm_reply *out, kope_err *err);

/* http.c: headers of a JSON POST — content type, the extra fixed header
 * (NULL: none), accept (SSE when streaming), no 100-continue, and
 * "<key_prefix><key>" when there is a key; the formatted key is wiped from
 * kope's memory once curl holds its copy. Caller frees with
 * curl_slist_free_all. */
struct curl_slist *kope_llm_json_headers(const kope_llm *l, const char *extra,
                                         const char *key_prefix);
/* Record the reply's stop reason; the reply is truncated when the reason
 * is the protocol's length-limit reason. */
void kope_llm_set_finish(llm_xfer *x, const char *reason, const char *length_reason);
/* http.c: a whole non-streaming reply parsed as a JSON object (owned by
 * the caller), or NULL when it is not one (x->why set, x->bad) or when it
 * is an {"error": ...} object, which goes to the protocol's on_error. */
json_t *kope_llm_reply_object(llm_xfer *x, const char *body,
                              int (*on_error)(llm_xfer *x, json_t *e));
/* http.c: one event's data parsed as a JSON object (owned by the caller),
 * or NULL with x->bad and x->why naming the event (NULL: "the event
 * stream") and the bytes received so far. */
json_t *kope_llm_event_object(llm_xfer *x, const char *event, const char *data);

/* Shared helpers. */
void kope_llm_redact(const kope_llm *l, char *msg);   /* key → "[redacted]" in place */
/* Parse a usage object (openai or anthropic names) into r. */
void kope_llm_usage(json_t *usage, kope_llm_reply *r);

#endif
