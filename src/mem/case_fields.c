/*
 * The table of a Case's fields (case_fields.h) as an array, and what is
 * generated from it without an engine: the one Case-to-JSON writer (the
 * objects of `kope memory export` and of the CLI's --json), the release
 * of a Case's strings, and the loading of its sources through an
 * engine's source_get (shared by the SQLite and PostgreSQL engines).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "mem/case_fields.h"
#include "mem/engine.h"

#define MF_HASH_OFF_SRC(name) offsetof(kope_mem_case, name##_hash)
#define MF_HASH_OFF_LINK(name) 0
#define MF_HASH_OFF_INT(name) 0
#define MF_HASH_OFF_BOOL(name) 0
#define MF_HASH_OFF_TEXT(name) 0
#define MF_HASH_OFF_BUF(name) 0
#define MF_HASH_OFF_REAL(name) 0
#define MF_HASH_OFF_NUM(name) 0
#define MF_HASH_OFF_TIME(name) 0
#define MF_HASH_OFF_LABEL(name) 0

#define MF_ROW(name, kind, place, column, group, key, aux, flags)                          \
  {#name, MF_##kind, MF_P_##place, column, group, key, aux, flags,                        \
   offsetof(kope_mem_case, name), MF_HASH_OFF_##kind(name),                               \
   sizeof(((kope_mem_case *)0)->name)},

const mem_field mem_case_fields[] = {MEM_CASE_FIELDS(MF_ROW)};
const size_t mem_n_case_fields = sizeof mem_case_fields / sizeof mem_case_fields[0];

/* ---- JSON ------------------------------------------------------------- */

static json_t *jstr(const char *s)
{
  return s ? json_string(s) : json_null();
}

static json_t *field_json(const kope_mem_case *c, const mem_field *f)
{
  switch (f->kind) {
  case MF_LINK:
    return *MF_CAT(c, f, int64_t) ? json_integer(*MF_CAT(c, f, int64_t)) : json_null();
  case MF_INT:
    return json_integer(*MF_CAT(c, f, int64_t));
  case MF_BOOL:
    return json_boolean(*MF_CAT(c, f, int));
  case MF_TEXT:
    return jstr(*MF_CAT(c, f, mf_str));
  case MF_BUF:
    return jstr(MF_CAT(c, f, char)[0] ? MF_CAT(c, f, char) : NULL);
  case MF_REAL:
    return isfinite(*MF_CAT(c, f, double)) ? json_real(*MF_CAT(c, f, double)) : json_null();
  case MF_NUM:
  case MF_TIME:
    return json_real(*MF_CAT(c, f, double));
  case MF_LABEL:
    return json_string(kope_mem_label_name(*MF_CAT(c, f, int)));
  case MF_SRC:
    return jstr(MF_CHASH(c, f)[0] ? MF_CHASH(c, f) : NULL);
  }
  return json_null();
}

/* The object a field goes into: o itself or its group's sub-object
 * (made, at this position, on the group's first field). */
static json_t *field_parent(json_t *o, const mem_field *f)
{
  json_t *g;

  if (!f->group[0])
    return o;
  if (!(g = json_object_get(o, f->group))) {
    g = json_object();
    json_object_set_new(o, f->group, g);
  }
  return g;
}

json_t *mem_case_json(const kope_mem_case *c, int flags, mem_link_fn link, void *ctx)
{
  json_t *o = json_object();
  size_t i;

  for (i = 0; o && i < mem_n_case_fields; i++) {
    const mem_field *f = &mem_case_fields[i];
    json_t *p;
    if ((flags & KOPE_MEM_JSON_BRIEF) && !(f->flags & MF_BRIEF))
      continue;
    p = field_parent(o, f);
    json_object_set_new(p, f->key, field_json(c, f));
    if (f->kind == MF_LINK && (flags & MEM_JSON_LINKS))
      json_object_set_new(p, f->aux, jstr(link ? link(f, *MF_CAT(c, f, int64_t), ctx) : NULL));
    if (f->kind == MF_SRC && (flags & KOPE_MEM_JSON_CODE) && *MF_CAT(c, f, mf_str))
      json_object_set_new(p, f->aux, json_string(*MF_CAT(c, f, mf_str)));
  }
  return o;
}

json_t *kope_mem_case_json(const kope_mem_case *c, int flags)
{
  return c ? mem_case_json(c, flags & (KOPE_MEM_JSON_BRIEF | KOPE_MEM_JSON_CODE), NULL, NULL)
           : NULL;
}

/* ---- release ------------------------------------------------------------ */

void mem_case_release_strings(kope_mem_case *c)
{
  size_t i;

  for (i = 0; i < mem_n_case_fields; i++) {
    const mem_field *f = &mem_case_fields[i];
    if (f->kind == MF_TEXT || f->kind == MF_SRC) {
      free((char *)*MF_AT(c, f, mf_str));
      *MF_AT(c, f, mf_str) = NULL;
    }
  }
}

/* ---- sources ------------------------------------------------------------ */

int mem_case_load_code(kope_mem_case *c,
                       int (*get)(void *impl, const char *hash, char **body, kope_err *err),
                       void *impl, kope_err *err)
{
  size_t k;
  int rc = KOPE_OK;

  for (k = 0; rc == KOPE_OK && k < mem_n_case_fields; k++) {
    const mem_field *f = &mem_case_fields[k];
    char *body = NULL;
    if (f->kind != MF_SRC || !MF_HASH(c, f)[0])
      continue;
    rc = get(impl, MF_HASH(c, f), &body, err);
    *MF_AT(c, f, mf_str) = body;
  }
  return rc;
}
