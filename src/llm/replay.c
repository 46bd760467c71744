/*
 * The replay provider: answers call i of a session with reply i of a
 * recorded session (docs/llm.md, "Recorded sessions" and "Replay"). A
 * recording is JSON Lines, plain or gzip'd (decompressed by running
 * `gzip -dc`, so kope needs no compression library): a header object
 * {"kope_llm_session": 1, "model", "answerer", "op", "notes"}, then one
 * object per call {"call": i, "request": {...}, "reply": "text"} with an
 * optional "usage" object. The whole file is loaded and checked when the
 * provider is made, so a missing or corrupt recording fails before any
 * evaluation, naming the file and the line. When the recording runs out,
 * each further call fails like a provider that gave no reply (KOPE_EREJECT
 * with "replay FILE has N replies; call N+1 asked"), which the LLM policy
 * records as a no_kernel Case; the session then ends by its budget or the
 * policy's failure streak.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/proc.h"
#include "llm/llm_int.h"

struct llm_replay {
  char *path, *model, *op;
  size_t n, next;
  char **text;
  json_t **usage;      /* per call; NULL when not recorded */
  size_t cap_text, cap_usage;
};

void kope_llm_replay_free(llm_replay *r)
{
  size_t i;

  if (!r)
    return;
  for (i = 0; i < r->n; i++) {
    free(r->text[i]);
    json_decref(r->usage[i]);
  }
  free(r->text);
  free(r->usage);
  free(r->path);
  free(r->model);
  free(r->op);
  free(r);
}

/* The file's bytes, gunzipped when it starts with the gzip magic. */
static char *read_all(const char *path, kope_err *err)
{
  const char *argv[] = {"gzip", "-dc", "--", path, NULL};
  kope_proc_opts po;
  kope_proc_result res;
  unsigned char magic[2] = {0, 0};
  FILE *f = fopen(path, "rb");
  char *text = NULL;

  if (!f) {
    kope_err_set(err, KOPE_EINPUT, "replay %s: cannot open the recording", path);
    return NULL;
  }
  if (fread(magic, 1, 2, f) != 2)
    magic[0] = 0;
  fclose(f);
  if (magic[0] != 0x1f || magic[1] != 0x8b)
    return kope_file_read(path, NULL, err);
  memset(&po, 0, sizeof po);
  memset(&res, 0, sizeof res);
  po.argv = argv;
  po.timeout_s = 60;
  po.limits.fsize_bytes = -1;
  po.capture_limit = 256u << 20;
  if (kope_proc_run(&po, &res, err) != KOPE_OK)
    goto done;
  if (!res.exited || res.exit_code != 0 || res.out.truncated) {
    char ex[200];
    kope_llm_excerpt(res.out.data, ex, sizeof ex);
    kope_err_set(err, KOPE_EINPUT, "replay %s: gzip -dc failed: %s", path, *ex ? ex : "?");
    goto done;
  }
  if (!(text = kope_strdup(res.out.data ? res.out.data : "")))
    kope_err_nomem(err, path);
done:
  kope_buf_release(&res.out);
  return text;
}

static int header(llm_replay *r, json_t *j, kope_err *err)
{
  json_t *v = json_object_get(j, "kope_llm_session");

  if (!json_is_integer(v) || json_integer_value(v) != 1)
    return kope_err_set(err, KOPE_EINPUT, "replay %s:1: not a kope LLM session header "
                        "(expected {\"kope_llm_session\": 1, ...})", r->path);
  v = json_object_get(j, "model");
  r->model = kope_strdup(json_is_string(v) && *json_string_value(v) ? json_string_value(v)
                                                                    : "replay");
  v = json_object_get(j, "op");
  r->op = kope_strdup(json_is_string(v) ? json_string_value(v) : "");
  return r->model && r->op ? KOPE_OK : kope_err_nomem(err, "replay header");
}

/* A reply that is itself one JSON object with "content" (the command
 * provider's JSON form) gives its content and usage. */
static int add_call(llm_replay *r, const char *reply, json_t *usage)
{
  json_t *j = NULL, *c;

  if (kope_grow(&r->text, &r->cap_text, r->n + 1, sizeof *r->text) != KOPE_OK ||
      kope_grow(&r->usage, &r->cap_usage, r->n + 1, sizeof *r->usage) != KOPE_OK)
    return KOPE_ENOMEM;
  if (*reply == '{')
    j = json_loads(reply, 0, NULL);
  c = json_object_get(j, "content");
  if (json_is_string(c)) {
    r->text[r->n] = kope_strdup(json_string_value(c));
    if (!usage)
      usage = json_object_get(j, "usage");
  } else {
    r->text[r->n] = kope_strdup(reply);
  }
  if (!r->text[r->n]) {
    json_decref(j);
    return KOPE_ENOMEM;
  }
  r->usage[r->n] = json_is_object(usage) ? json_incref(usage) : NULL;
  r->n++;
  json_decref(j);
  return KOPE_OK;
}

static int call_line(llm_replay *r, json_t *j, long lineno, kope_err *err)
{
  json_t *call = json_object_get(j, "call"), *reply = json_object_get(j, "reply");

  if (!json_is_string(reply))
    return kope_err_set(err, KOPE_EINPUT, "replay %s:%ld: no \"reply\" string", r->path,
                        lineno);
  if (json_is_integer(call) && json_integer_value(call) != (json_int_t)r->n + 1)
    return kope_err_set(err, KOPE_EINPUT, "replay %s:%ld: call %lld out of order "
                        "(expected %zu)", r->path, lineno,
                        (long long)json_integer_value(call), r->n + 1);
  if (add_call(r, json_string_value(reply), json_object_get(j, "usage")) != KOPE_OK)
    return kope_err_nomem(err, "replay recording");
  return KOPE_OK;
}

static int parse_lines(llm_replay *r, char *text, kope_err *err)
{
  char *line = text, *nl;
  long lineno = 0;
  int rc = KOPE_OK;

  for (; rc == KOPE_OK && line && *line; line = nl ? nl + 1 : NULL) {
    json_error_t je;
    json_t *j;
    nl = strchr(line, '\n');
    if (nl)
      *nl = 0;
    lineno++;
    if (!*line)
      continue;
    if (!(j = json_loads(line, 0, &je)) || !json_is_object(j))
      rc = kope_err_set(err, KOPE_EINPUT, "replay %s:%ld: not a JSON object: %s", r->path,
                        lineno, j ? "another JSON value" : je.text);
    else
      rc = lineno == 1 ? header(r, j, err) : call_line(r, j, lineno, err);
    json_decref(j);
  }
  if (rc == KOPE_OK && !r->model)
    rc = kope_err_set(err, KOPE_EINPUT, "replay %s: empty recording", r->path);
  return rc;
}

int kope_llm_replay_load(const char *path, llm_replay **out, kope_err *err)
{
  llm_replay *r = calloc(1, sizeof *r);
  char *text = NULL;
  int rc = KOPE_EINPUT;

  *out = NULL;
  if (!r)
    return kope_err_nomem(err, "replay recording");
  r->path = kope_strdup(path);
  if ((text = read_all(path, err)))
    rc = parse_lines(r, text, err);
  free(text);
  if (rc != KOPE_OK)
    kope_llm_replay_free(r);
  else
    *out = r;
  return rc;
}

const char *kope_llm_replay_model(const llm_replay *r) { return r->model; }

int kope_llm_replay_info(const char *path, char **model, char **op, kope_err *err)
{
  llm_replay *r;
  int rc = kope_llm_replay_load(path, &r, err);

  if (rc != KOPE_OK)
    return rc;
  if (model)
    *model = kope_strdup(r->model);
  if (op)
    *op = kope_strdup(r->op);
  kope_llm_replay_free(r);
  if ((model && !*model) || (op && !*op)) {
    if (model)
      free(*model), *model = NULL;
    if (op)
      free(*op), *op = NULL;
    return kope_err_nomem(err, "replay header");
  }
  return KOPE_OK;
}

int kope_llm_replay_chat(kope_llm *l, const char *system, const char *user,
                         kope_llm_reply *out, kope_err *err)
{
  llm_replay *r = l->replay;
  size_t i = r->next++;

  out->attempts = 1;
  if (i >= r->n)
    return kope_err_set(err, KOPE_EREJECT, "replay %s has %zu replies; call %zu asked", r->path,
                        r->n, i + 1);
  out->text = kope_strdup(r->text[i]);
  out->finish_reason = kope_strdup("replay");
  if (!out->text || !out->finish_reason)
    return kope_err_nomem(err, "replay reply");
  kope_llm_usage(r->usage[i], out);
  if (!out->usage_reported)
    out->tokens_in = out->tokens_out = 0;   /* the policy estimates */
  (void)system;
  (void)user;
  return KOPE_OK;
}
