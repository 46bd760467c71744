/*
 * Import of a json export (see export.c) from another machine or target,
 * in one transaction: either everything new in the file is stored, or
 * nothing is. Rows are matched by global uid ("<db uuid>:<id>"): a uid
 * minted by this store maps to its own row, a uid seen in an earlier
 * import maps to the row made then, anything else is inserted with a
 * fresh local id and its provenance (origin db, origin id, import id).
 * Links (prev, session, Journal's Case) are resolved through uids, so ids
 * never clash. Scores are recomputed here from the graph, and digests are
 * refreshed afterwards.
 */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "mem/case_fields.h"
#include "mem/engine.h"

typedef struct imp {
  kope_db *db;
  const char *path;
  json_t *doc, *sources;
  kope_mem_import_stats st;
  kope_err *err;
} imp;

static const char *jget_str(json_t *o, const char *key)
{
  json_t *v = json_object_get(o, key);
  return json_is_string(v) ? json_string_value(v) : NULL;
}

static double jget_num(json_t *o, const char *key, double dflt)
{
  json_t *v = json_object_get(o, key);
  return json_is_number(v) ? json_number_value(v) : dflt;
}

static int64_t jget_int(json_t *o, const char *key)
{
  json_t *v = json_object_get(o, key);
  return json_is_integer(v) ? (int64_t)json_integer_value(v)
         : json_is_real(v)  ? (int64_t)json_real_value(v) : 0;
}

static int bad(imp *m, const char *where, size_t i, const char *what)
{
  return kope_err_set(m->err, KOPE_EINPUT, "%s: %s[%zu]: %s", m->path, where, i, what);
}

/* Local id of a uid of kind, or 0 when this store does not have it. */
static int resolve(imp *m, int kind, const char *uid, int64_t *local)
{
  char db[128];
  int64_t id;
  int yes = 0, rc;

  *local = 0;
  if (!uid)
    return KOPE_OK;
  if (mem_uid_parse(uid, db, sizeof db, &id) != 0)
    return kope_err_set(m->err, KOPE_EINPUT, "%s: malformed uid '%s'", m->path, uid);
  if (!strcmp(db, kope_db_uuid(m->db))) {
    rc = m->db->eng->exists(m->db->impl, kind, id, &yes, m->err);
    if (rc == KOPE_OK && yes)
      *local = id;
    return rc;
  }
  return m->db->eng->find_uid(m->db->impl, kind, db, id, local, m->err);
}

static int origin_of(imp *m, const char *uid, char *db, size_t dbsize, mem_origin *o)
{
  if (mem_uid_parse(uid, db, dbsize, &o->id) != 0)
    return kope_err_set(m->err, KOPE_EINPUT, "%s: malformed uid '%s'", m->path, uid);
  o->db = db;
  o->import_id = m->st.import_id;
  return KOPE_OK;
}

/* ---- sessions ------------------------------------------------------------- */

static int import_session(imp *m, json_t *o, size_t i)
{
  kope_mem_session s = {0};
  mem_origin org;
  char db[128];
  const char *uid = jget_str(o, "uid");
  int64_t local;
  int rc;

  if (!uid || !jget_str(o, "op"))
    return bad(m, "sessions", i, "needs 'uid' and 'op'");
  if ((rc = resolve(m, MEM_U_SESSION, uid, &local)) != KOPE_OK || local)
    return rc;
  if ((rc = origin_of(m, uid, db, sizeof db, &org)) != KOPE_OK)
    return rc;
  s.op = jget_str(o, "op");
  s.target = jget_str(o, "target");
  s.hw = jget_str(o, "hw");
  s.policy = jget_str(o, "policy");
  s.budget = jget_str(o, "budget");
  s.status = jget_str(o, "status");
  s.started = jget_num(o, "started", 0.0);
  s.ended = jget_num(o, "ended", 0.0);
  if ((rc = m->db->eng->session_put(m->db->impl, &s, &org, &local, m->err)) == KOPE_OK)
    m->st.sessions_new++;
  return rc;
}

/* ---- Cases ---------------------------------------------------------------- */

static int valid_hash(const char *h)
{
  size_t i;

  for (i = 0; h && i < 64; i++)
    if (!((h[i] >= '0' && h[i] <= '9') || (h[i] >= 'a' && h[i] <= 'f')))
      return 0;
  return h && h[64] == '\0';
}

static int take_source(imp *m, json_t *o, const char *key, const char **text, char hash[65],
                       size_t i)
{
  const char *h = jget_str(o, key);

  *text = NULL;
  hash[0] = '\0';
  if (!h)
    return KOPE_OK;
  if (!valid_hash(h))
    return bad(m, "cases", i, "a source hash is not 64 hex digits");
  snprintf(hash, 65, "%s", h);
  *text = jget_str(m->sources, h);
  if (*text) {
    char check[65];
    kope_sha256_hex(*text, strlen(*text), check);
    if (strcmp(check, h) != 0)
      return bad(m, "cases", i, "a source's text does not match its hash");
  }
  return KOPE_OK;
}

/* Field f of c from the JSON Case o (its group's sub-object for a
 * grouped field); a missing number keeps kope_mem_case_in_init's value. */
static int import_field(imp *m, json_t *o, kope_mem_case_in *c, const mem_field *f, size_t i)
{
  json_t *p = f->group[0] ? json_object_get(o, f->group) : o, *v = json_object_get(p, f->key);

  switch (f->kind) {
  case MF_INT:
    *MF_IN_AT(c, f, int64_t) = jget_int(p, f->key);
    break;
  case MF_BOOL:
    *MF_IN_AT(c, f, int) = json_is_true(v) || (json_is_integer(v) && json_integer_value(v) != 0);
    break;
  case MF_LABEL:
    *MF_IN_AT(c, f, int) = kope_mem_label_parse(jget_str(p, f->key));
    break;
  case MF_TEXT:
    *MF_IN_AT(c, f, mf_str) = jget_str(p, f->key);
    break;
  case MF_BUF:
    snprintf(MF_IN_AT(c, f, char), f->size, "%s", jget_str(p, f->key) ? jget_str(p, f->key) : "");
    break;
  case MF_REAL:
  case MF_NUM:
  case MF_TIME:
    *MF_IN_AT(c, f, double) = jget_num(p, f->key, *MF_IN_AT(c, f, double));
    break;
  case MF_SRC:
    return take_source(m, p, f->key, MF_IN_AT(c, f, mf_str), MF_HASH(c, f), i);
  case MF_LINK:   /* case_links: through the uids */
    break;
  }
  return KOPE_OK;
}

/* The stored fields (place CASE) of the JSON Case o. */
static int case_fields(imp *m, json_t *o, kope_mem_case_in *c, size_t i)
{
  size_t k;
  int rc = KOPE_OK;

  for (k = 0; rc == KOPE_OK && k < mem_n_case_fields; k++)
    if (mem_case_fields[k].place == MF_P_CASE)
      rc = import_field(m, o, c, &mem_case_fields[k], i);
  return rc;
}

/* Each LINK field from its uid (aux): a uid this store cannot resolve is
 * refused; a link to a Case given by id without a uid too. */
static int link_field(imp *m, json_t *o, kope_mem_case_in *c, const mem_field *f, size_t i)
{
  const char *u = jget_str(o, f->aux);
  int to_case = (f->flags & MF_TO_CASE) != 0;
  int64_t *id = MF_IN_AT(c, f, int64_t);
  char msg[128];
  int rc = resolve(m, to_case ? MEM_U_CASE : MEM_U_SESSION, u, id);

  if (rc == KOPE_OK && u && !*id) {
    snprintf(msg, sizeof msg, to_case ? "its %s is neither earlier in the file nor in this "
                                        "store" : "its %s is not in the file's sessions", f->aux);
    return bad(m, "cases", i, msg);
  }
  if (rc == KOPE_OK && to_case && !u && json_is_integer(json_object_get(o, f->key))) {
    snprintf(msg, sizeof msg, "has a %s but no %s", f->key, f->aux);
    return bad(m, "cases", i, msg);
  }
  return rc;
}

static int case_links(imp *m, json_t *o, kope_mem_case_in *c, size_t i)
{
  size_t k;
  int rc = KOPE_OK;

  for (k = 0; rc == KOPE_OK && k < mem_n_case_fields; k++)
    if (mem_case_fields[k].kind == MF_LINK)
      rc = link_field(m, o, c, &mem_case_fields[k], i);
  return rc;
}

static int import_case(imp *m, json_t *o, size_t i)
{
  kope_mem_case_in c;
  mem_origin org;
  char db[128], msg[sizeof m->err->msg];
  const char *uid = jget_str(o, "uid");
  int64_t local;
  int rc;

  if (!json_is_object(o) || !uid)
    return bad(m, "cases", i, "needs a 'uid'");
  if ((rc = resolve(m, MEM_U_CASE, uid, &local)) != KOPE_OK)
    return rc;
  if (local) {
    m->st.cases_known++;
    return KOPE_OK;
  }
  kope_mem_case_in_init(&c);
  if ((rc = origin_of(m, uid, db, sizeof db, &org)) != KOPE_OK ||
      (rc = case_fields(m, o, &c, i)) != KOPE_OK || (rc = case_links(m, o, &c, i)) != KOPE_OK)
    return rc;
  if ((rc = mem_case_insert(m->db, &c, &org, &local, m->err)) != KOPE_OK) {
    snprintf(msg, sizeof msg, "%s", m->err->msg);
    return bad(m, "cases", i, msg);
  }
  m->st.cases_new++;
  return KOPE_OK;
}

/* ---- Journals, sources, hardware ------------------------------------------- */

static int import_journal(imp *m, json_t *o, size_t i)
{
  kope_mem_journal j = {0};
  mem_origin org;
  char db[128];
  const char *uid = jget_str(o, "uid"), *cu = jget_str(o, "case_uid");
  const char *su = jget_str(o, "session_uid");
  int64_t local;
  int rc;

  if (!uid || !jget_str(o, "body"))
    return bad(m, "journals", i, "needs 'uid' and 'body'");
  if ((rc = resolve(m, MEM_U_JOURNAL, uid, &local)) != KOPE_OK || local)
    return rc;
  if ((rc = origin_of(m, uid, db, sizeof db, &org)) != KOPE_OK ||
      (rc = resolve(m, MEM_U_CASE, cu, &j.case_id)) != KOPE_OK ||
      (rc = resolve(m, MEM_U_SESSION, su, &j.session_id)) != KOPE_OK)
    return rc;
  if ((cu && !j.case_id) || (su && !j.session_id))
    return bad(m, "journals", i, "refers to a Case or session that is not in the file");
  j.body = (char *)jget_str(o, "body");
  j.created = jget_num(o, "created", 0.0);
  if ((rc = m->db->eng->journal_put(m->db->impl, &j, &org, &local, m->err)) == KOPE_OK)
    m->st.journals_new++;
  return rc;
}

static int import_sources(imp *m)
{
  const char *h;
  json_t *v;
  int rc = KOPE_OK;

  json_object_foreach(m->sources, h, v) {
    char got[65];
    int added = 0;
    if (!json_is_string(v) || !valid_hash(h))
      return kope_err_set(m->err, KOPE_EINPUT, "%s: sources: '%.70s' is not a hash with a "
                          "text", m->path, h);
    if ((rc = m->db->eng->source_put(m->db->impl, json_string_value(v), got, &added,
                                     m->err)) != KOPE_OK)
      return rc;
    if (strcmp(got, h) != 0)
      return kope_err_set(m->err, KOPE_EINPUT, "%s: sources: the text under %.16s... does "
                          "not match its hash", m->path, h);
    m->st.sources_new += added;
  }
  return rc;
}

static int import_hw(imp *m, json_t *arr)
{
  size_t i;
  json_t *o;
  int rc = KOPE_OK;

  json_array_foreach(arr, i, o) {
    const char *fp = jget_str(o, "fingerprint");
    json_t *p = json_object_get(o, "profile");
    char *text = p ? json_dumps(p, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
    int added = 0;
    if (fp)
      rc = m->db->eng->hw_put(m->db->impl, fp, text, &added, m->err);
    free(text);
    if (rc != KOPE_OK)
      return rc;
    m->st.hw_new += added;
  }
  return rc;
}

/* ---- the document ----------------------------------------------------------- */

typedef int (*item_fn)(imp *m, json_t *o, size_t i);

static int each_item(imp *m, const char *key, item_fn fn)
{
  json_t *arr = json_object_get(m->doc, key), *o;
  size_t i;
  int rc = KOPE_OK;

  if (arr && !json_is_array(arr))
    return kope_err_set(m->err, KOPE_EINPUT, "%s: '%s' is not an array", m->path, key);
  json_array_foreach(arr, i, o) {
    if (!json_is_object(o))
      return bad(m, key, i, "is not an object");
    if ((rc = fn(m, o, i)) != KOPE_OK)
      break;
  }
  return rc;
}

static int load_doc(imp *m)
{
  json_error_t je;
  const char *fmt;

  m->doc = json_load_file(m->path, 0, &je);
  if (!m->doc)
    return kope_err_set(m->err, KOPE_EINPUT, "%s: not a kope memory export: line %d: %s",
                        m->path, je.line, je.text);
  fmt = jget_str(m->doc, "format");
  if (!fmt || strcmp(fmt, "kope-memory") != 0 || !jget_str(m->doc, "db_uuid"))
    return kope_err_set(m->err, KOPE_EINPUT, "%s: not a kope memory export (no \"format\": "
                        "\"kope-memory\" and \"db_uuid\")", m->path);
  if (jget_int(m->doc, "version") > 1)
    return kope_err_set(m->err, KOPE_EINPUT, "%s: export format version %lld is newer than "
                        "this kope reads (1)", m->path, (long long)jget_int(m->doc, "version"));
  m->sources = json_object_get(m->doc, "sources");
  if (m->sources && !json_is_object(m->sources))
    return kope_err_set(m->err, KOPE_EINPUT, "%s: 'sources' is not an object", m->path);
  return KOPE_OK;
}

static int import_all(imp *m)
{
  int rc = m->db->eng->import_begin(m->db->impl, jget_str(m->doc, "db_uuid"), m->path,
                                    &m->st.import_id, m->err);

  if (rc == KOPE_OK)
    rc = import_hw(m, json_object_get(m->doc, "hw_profiles"));
  if (rc == KOPE_OK && m->sources)
    rc = import_sources(m);
  if (rc == KOPE_OK)
    rc = each_item(m, "sessions", import_session);
  if (rc == KOPE_OK)
    rc = each_item(m, "cases", import_case);
  if (rc == KOPE_OK)
    rc = each_item(m, "journals", import_journal);
  if (rc == KOPE_OK && m->st.cases_new)
    rc = kope_mem_digest_refresh(m->db, 0, NULL, m->err);
  if (rc == KOPE_OK)
    rc = m->db->eng->import_end(m->db->impl, &m->st, m->err);
  return rc;
}

int kope_mem_import(kope_db *db, const char *path, kope_mem_import_stats *st, kope_err *err)
{
  kope_err local_err = {0};
  imp m = {0};
  int rc;

  m.db = db;
  m.path = path;
  m.err = err ? err : &local_err;
  if ((rc = load_doc(&m)) != KOPE_OK)
    goto out;
  if ((rc = kope_db_begin(db, m.err)) != KOPE_OK)
    goto out;
  if ((rc = import_all(&m)) != KOPE_OK) {
    kope_db_rollback(db);
    goto out;
  }
  rc = kope_db_commit(db, m.err);
out:
  json_decref(m.doc);
  if (rc == KOPE_OK && st)
    *st = m.st;
  return rc;
}
