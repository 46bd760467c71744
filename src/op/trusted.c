/*
 * Trusted sources as the compiler gets them. A reference or vendor
 * baseline may include the shared vendor helpers of ops/_vendor/ with
 * `#include "../_vendor/NAME.h"` (the path is right relative to the
 * operator's folder, so an editor or a plain gcc finds the file too).
 * kope's build compiles each source alone in a work directory, so this
 * file replaces each such line by the helper's text, between #line
 * directives that keep diagnostics on the right file and line; a helper
 * may include another one beside it with `#include "NAME.h"`, and each is
 * expanded once. The helper comes from the _vendor folder beside the
 * operator's folder, or else from the shipped ops/_vendor. Candidates and
 * seeds never go through here: they stay self-contained.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kope/core.h"
#include "kope/op.h"
#include "op/op_int.h"

#define TS_MAX_HELPERS 16
#define TS_TOP_PREFIX "../_vendor/"

typedef struct ts_state {
  const kope_op *op;
  char *done[TS_MAX_HELPERS];   /* helpers expanded so far (owned) */
  size_t ndone;
  kope_buf out;
} ts_state;

static int ts_expand(ts_state *s, const char *text, const char *file, int top, kope_err *err);

/* The helper name an include line names, or NULL: at the top level
 * "../_vendor/NAME.h", inside a helper "NAME.h"; NAME of letters, digits,
 * '_' and '-'. Writes the name into name[n]. */
static const char *ts_helper_name(const char *line, size_t len, int top, char *name, size_t n)
{
  const char *p = line, *end = line + len, *q;
  size_t plen = top ? strlen(TS_TOP_PREFIX) : 0;

  while (p < end && (*p == ' ' || *p == '\t'))
    p++;
  if (p == end || *p++ != '#')
    return NULL;
  while (p < end && (*p == ' ' || *p == '\t'))
    p++;
  if (end - p < 7 || strncmp(p, "include", 7))
    return NULL;
  for (p += 7; p < end && (*p == ' ' || *p == '\t'); p++)
    ;
  if (p == end || *p++ != '"' || (size_t)(end - p) < plen || strncmp(p, TS_TOP_PREFIX, plen))
    return NULL;
  for (p += plen, q = p; q < end && *q != '"'; q++)
    if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.", *q))
      return NULL;
  if (q == end || q - p < 3 || (size_t)(q - p) >= n || strncmp(q - 2, ".h", 2) ||
      memchr(p, '.', (size_t)(q - p - 2)))
    return NULL;
  memcpy(name, p, (size_t)(q - p));
  name[q - p] = 0;
  return name;
}

/* The path of helper name: beside the operator's folder, else shipped. */
static char *ts_helper_path(const kope_op *op, const char *name)
{
  char *rel = kope_sprintf("../_vendor/%s", name);
  char *path = kope_path_join(op->dir, rel);

  free(rel);
  if (kope_is_file(path))
    return path;
  free(path);
  path = kope_sprintf("%s/ops/_vendor/%s", KOPE_SOURCE_DIR, name);
  if (kope_is_file(path))
    return path;
  free(path);
  return NULL;
}

static int ts_seen(ts_state *s, const char *name)
{
  size_t i;

  for (i = 0; i < s->ndone; i++)
    if (!strcmp(s->done[i], name))
      return 1;
  return 0;
}

/* Expand helper name in place of line `no` of file (1-based). */
static int ts_include(ts_state *s, const char *name, const char *file, int no, kope_err *err)
{
  char *path, *text;
  int rc;

  if (ts_seen(s, name))
    return KOPE_OK;
  if (s->ndone == TS_MAX_HELPERS)
    return kope_err_set(err, KOPE_EINPUT, "%s:%d: more than %d vendor helpers", file, no,
                        TS_MAX_HELPERS);
  if (!(path = ts_helper_path(s->op, name)))
    return kope_err_set(err, KOPE_EINPUT, "%s:%d: no vendor helper %s (in the _vendor folder "
                        "beside the operator's, or %s/ops/_vendor)", file, no, name,
                        KOPE_SOURCE_DIR);
  text = kope_file_read(path, NULL, err);
  free(path);
  if (!text)
    return err->code;
  if (!(s->done[s->ndone] = kope_strdup(name))) {
    free(text);
    return kope_err_nomem(err, "vendor helper name");
  }
  s->ndone++;
  kope_buf_printf(&s->out, "#line 1 \"_vendor/%s\"\n", name);
  {
    char *hfile = kope_sprintf("_vendor/%s", name);
    rc = hfile ? ts_expand(s, text, hfile, 0, err) : kope_err_nomem(err, "vendor helper name");
    free(hfile);
  }
  if (s->out.len && s->out.data[s->out.len - 1] != '\n')
    kope_buf_puts(&s->out, "\n");
  kope_buf_printf(&s->out, "#line %d \"%s\"\n", no + 1, file);
  free(text);
  return rc;
}

/* Copy text to s->out line by line, expanding helper includes. */
static int ts_expand(ts_state *s, const char *text, const char *file, int top, kope_err *err)
{
  const char *p = text;
  char name[128];
  int no = 1, rc;

  while (*p) {
    const char *nl = strchr(p, '\n');
    size_t len = nl ? (size_t)(nl - p) : strlen(p);

    if (ts_helper_name(p, len, top, name, sizeof name)) {
      if ((rc = ts_include(s, name, file, no, err)) != KOPE_OK)
        return rc;
    } else {
      kope_buf_append(&s->out, p, len);
      if (nl)
        kope_buf_puts(&s->out, "\n");
    }
    p += len + (nl ? 1 : 0);
    no++;
  }
  return KOPE_OK;
}

static const char *ts_base(const char *path)
{
  const char *b = strrchr(path, '/');

  return b ? b + 1 : path;
}

char *kope_op_trusted_source(const kope_op *op, const char *path, kope_err *err)
{
  char *text = kope_file_read(path, NULL, err), *res = NULL;
  ts_state s;
  size_t i;

  if (!text || !strstr(text, TS_TOP_PREFIX))
    return text;   /* no helper: the file as it is */
  memset(&s, 0, sizeof s);
  s.op = op;
  kope_buf_init(&s.out, 0);
  kope_buf_printf(&s.out, "#line 1 \"%s\"\n", ts_base(path));
  if (ts_expand(&s, text, ts_base(path), 1, err) == KOPE_OK) {
    if (s.out.truncated)
      kope_err_set(err, KOPE_EINPUT, "%s: too large with its vendor helpers", path);
    else
      res = kope_buf_steal(&s.out);
  }
  kope_buf_release(&s.out);
  for (i = 0; i < s.ndone; i++)
    free(s.done[i]);
  free(text);
  return res;
}
