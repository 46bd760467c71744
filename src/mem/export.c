/*
 * Export of the experience memory and the forest view.
 *
 * json: one document, streamed Case by Case so a large store never sits
 * in memory as a JSON tree:
 *   {"format": "kope-memory", "version": 1, "db_uuid": ..., "cases": [...],
 *    "sessions": [...], "journals": [...], "sources": {hash: text},
 *    "digests": [...], "hw_profiles": [...]}
 * Every object carries its global uid ("<db uuid>:<id>") and its links as
 * uids, which is what import uses to merge without id clashes.
 * md: a table with one row per Case (every fact of the json Case) and the
 * forest as nested lists; dot: a Graphviz digraph, one node per Case
 * (label carries the facts), one edge per lineage link.
 * A filtered export always brings the ancestors of the matching Cases.
 */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "mem/case_fields.h"
#include "mem/engine.h"

/* ---- a sorted id -> uid map of exported Cases -------------------------- */

typedef struct uid_map {
  int64_t *ids;
  char **uids;
  size_t n, cap;
} uid_map;

/* The first position whose id is not below id (binary search). */
static size_t map_lower(const uid_map *m, int64_t id)
{
  size_t lo = 0, hi = m->n;

  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (m->ids[mid] < id)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

static int map_put(uid_map *m, int64_t id, const char *uid)
{
  size_t lo = map_lower(m, id);

  if (lo < m->n && m->ids[lo] == id)
    return 0;
  if (m->n == m->cap) {
    size_t cap = m->cap ? 2 * m->cap : 64;
    int64_t *ids = realloc(m->ids, cap * sizeof *ids);
    char **uids = ids ? realloc(m->uids, cap * sizeof *uids) : NULL;
    if (ids)
      m->ids = ids;
    if (!ids || !uids)
      return -1;
    m->uids = uids;
    m->cap = cap;
  }
  memmove(m->ids + lo + 1, m->ids + lo, (m->n - lo) * sizeof *m->ids);
  memmove(m->uids + lo + 1, m->uids + lo, (m->n - lo) * sizeof *m->uids);
  m->ids[lo] = id;
  m->uids[lo] = kope_strdup(uid);
  m->n++;
  return 0;
}

static const char *map_get(const uid_map *m, int64_t id)
{
  size_t lo = map_lower(m, id);

  return lo < m->n && m->ids[lo] == id ? m->uids[lo] : NULL;
}

static void map_release(uid_map *m)
{
  size_t i;

  for (i = 0; i < m->n; i++)
    free(m->uids[i]);
  free(m->ids);
  free(m->uids);
  memset(m, 0, sizeof *m);
}

/* ---- json ------------------------------------------------------------------ */

typedef struct jx {
  kope_db *db;
  FILE *out;
  int flags;
  uid_map cases, sessions;
  json_t *hashes;   /* set of source hashes, as an object */
  size_t n;
  int rc;
  kope_err *err;
} jx;

static json_t *jstr(const char *s)
{
  return s ? json_string(s) : json_null();
}

static const char *session_uid(jx *x, int64_t id)
{
  kope_mem_session s;
  kope_err e = {0};
  const char *u = map_get(&x->sessions, id);

  if (u || !id)
    return u;
  if (kope_mem_session_get(x->db, id, &s, &e) != KOPE_OK)
    return NULL;
  map_put(&x->sessions, id, s.uid);
  kope_mem_session_release(&s);
  return map_get(&x->sessions, id);
}

/* The uid of a Case's predecessor (exported before it, so in the map) or
 * of its session. */
static const char *link_uid(const mem_field *f, int64_t id, void *ctx)
{
  jx *x = ctx;

  if (!id)
    return NULL;
  return f->flags & MF_TO_CASE ? map_get(&x->cases, id) : session_uid(x, id);
}

/* The Case's object (the one writer, with the uid links) and its source
 * hashes noted for "sources". */
static json_t *case_json(jx *x, const kope_mem_case *c)
{
  size_t i;

  for (i = 0; i < mem_n_case_fields; i++) {
    const mem_field *f = &mem_case_fields[i];
    if (f->kind == MF_SRC && MF_CHASH(c, f)[0])
      json_object_set_new(x->hashes, MF_CHASH(c, f), json_true());
  }
  return mem_case_json(c, MEM_JSON_LINKS, link_uid, x);
}

static void put_json(FILE *out, json_t *v)
{
  json_dumpf(v, out, JSON_ENCODE_ANY | JSON_COMPACT | JSON_REAL_PRECISION(17));
  json_decref(v);
}

static int json_case(const kope_mem_case *c, void *ctx)
{
  jx *x = ctx;

  fputs(x->n++ ? ",\n" : "\n", x->out);
  put_json(x->out, case_json(x, c));
  if (map_put(&x->cases, c->id, c->uid) != 0) {
    x->rc = kope_err_set(x->err, KOPE_EINTERNAL, "out of memory");
    return 1;
  }
  return 0;
}

static void json_sessions(jx *x)
{
  size_t i;

  fputs("],\n\"sessions\": [", x->out);
  for (i = 0; i < x->sessions.n; i++) {
    kope_mem_session s;
    kope_err e = {0};
    json_t *o;
    if (kope_mem_session_get(x->db, x->sessions.ids[i], &s, &e) != KOPE_OK)
      continue;
    o = json_pack("{s:I, s:s?, s:s?, s:s?, s:s?, s:s?, s:s?, s:f, s:o, s:s?}", "session_id",
                  (json_int_t)s.id, "uid", s.uid, "op", s.op, "target", s.target, "hw", s.hw,
                  "policy", s.policy, "budget", s.budget, "started", s.started, "ended",
                  s.ended > 0 ? json_real(s.ended) : json_null(), "status", s.status);
    fputs(i ? ",\n" : "\n", x->out);
    put_json(x->out, o);
    kope_mem_session_release(&s);
  }
}

static int json_journal(const kope_mem_journal *j, void *ctx)
{
  jx *x = ctx;
  const char *cu = j->case_id ? map_get(&x->cases, j->case_id) : NULL;
  json_t *o;

  if (j->case_id && !cu)
    return 0;   /* about a Case outside this export */
  if (!j->case_id && !map_get(&x->sessions, j->session_id))
    return 0;
  o = json_pack("{s:I, s:s, s:o, s:o, s:f, s:s}", "journal_id", (json_int_t)j->id, "uid",
                j->uid, "case_uid", jstr(cu), "session_uid",
                jstr(map_get(&x->sessions, j->session_id)), "created", j->created, "body",
                j->body);
  fputs(x->n++ ? ",\n" : "\n", x->out);
  put_json(x->out, o);
  return 0;
}

static void json_sources(jx *x)
{
  const char *h;
  json_t *v;
  size_t i = 0;

  fputs("],\n\"sources\": {", x->out);
  json_object_foreach(x->hashes, h, v) {
    char *body = NULL;
    kope_err e = {0};
    if ((x->flags & KOPE_MEM_EXPORT_NO_SOURCES) ||
        x->db->eng->source_get(x->db->impl, h, &body, &e) != KOPE_OK || !body)
      continue;
    fputs(i++ ? ",\n" : "\n", x->out);
    put_json(x->out, json_string(h));
    fputs(": ", x->out);
    put_json(x->out, json_string(body));
    free(body);
  }
}

static void json_digests(jx *x, const kope_mem_filter *f)
{
  kope_mem_digest *d = NULL;
  size_t n = 0, i;
  kope_err e = {0};

  fputs("},\n\"digests\": [", x->out);
  kope_mem_digest_list(x->db, f, &d, &n, &e);
  for (i = 0; i < n; i++) {
    json_t *o = json_pack("{s:I, s:s, s:s, s:s, s:s, s:s?, s:I, s:I, s:I, s:I, s:I, s:I, "
                          "s:f, s:s, s:b, s:I}", "digest_id", (json_int_t)d[i].id, "target",
                          d[i].target, "category", d[i].category, "layer", d[i].layer,
                          "thought_id", d[i].thought_id, "title", d[i].title, "attempts",
                          (json_int_t)d[i].attempts, "correct", (json_int_t)d[i].n_correct,
                          "effective", (json_int_t)d[i].n_label[0], "partial",
                          (json_int_t)d[i].n_label[1], "ineffective",
                          (json_int_t)d[i].n_label[2], "negative",
                          (json_int_t)d[i].n_label[3], "median_ratio", d[i].median_ratio,
                          "text", d[i].text, "policy_text", d[i].has_policy_text,
                          "supporting_cases", (json_int_t)d[i].n_case_ids);
    fputs(i ? ",\n" : "\n", x->out);
    put_json(x->out, o);
  }
  kope_mem_digests_free(d, n);
}

static int json_hw(const char *fp, const char *profile, void *ctx)
{
  jx *x = ctx;
  json_t *p = json_loads(profile, JSON_DECODE_ANY, NULL);

  fputs(x->n++ ? ",\n" : "\n", x->out);
  put_json(x->out, json_pack("{s:s, s:o}", "fingerprint", fp,
                             "profile", p ? p : json_string(profile)));
  return 0;
}

static int any_filter(const kope_mem_filter *f)
{
  return f && (f->op || f->category || f->layer || f->thought_id || f->target || f->hw ||
               f->label || f->verdict || f->session_id);
}

static int export_json(kope_db *db, FILE *out, const kope_mem_filter *f, int flags,
                       kope_err *err)
{
  jx x = {0};
  json_t *head = json_pack("{s:s, s:i, s:i, s:s, s:s, s:s, s:f}", "format", "kope-memory",
                           "version", 1, "schema", kope_db_schema_version(db),
                           "kope_version", KOPE_VERSION, "db_uuid", kope_db_uuid(db),
                           "source_path", kope_db_path(db), "exported_at", mem_wall_now());
  char *h = json_dumps(head, JSON_COMPACT);
  int rc;

  x.db = db;
  x.out = out;
  x.flags = flags;
  x.err = err;
  x.hashes = json_object();
  fprintf(out, "%.*s,\n\"cases\": [", (int)strlen(h) - 1, h);
  rc = kope_mem_case_each(db, f, any_filter(f) ? KOPE_MEM_EACH_ANCESTORS : 0, json_case, &x,
                          err);
  if (rc == KOPE_OK)
    rc = x.rc;
  if (rc == KOPE_OK) {
    json_sessions(&x);
    fputs("],\n\"journals\": [", out);
    x.n = 0;
    rc = db->eng->journal_each(db->impl, 0, json_journal, &x, err);
  }
  if (rc == KOPE_OK) {
    json_sources(&x);
    json_digests(&x, f);
    fputs("],\n\"hw_profiles\": [", out);
    x.n = 0;
    rc = db->eng->hw_each(db->impl, json_hw, &x, err);
    fputs("]}\n", out);
  }
  free(h);
  json_decref(head);
  json_decref(x.hashes);
  map_release(&x.cases);
  map_release(&x.sessions);
  return rc;
}

/* ---- the forest (tree, md) --------------------------------------------------- */

typedef struct fnode {
  int64_t id, prev;
  char *line;
} fnode;

typedef struct flist {
  fnode *v;
  size_t n, cap;
  int md;
} flist;

static char *tree_line(const kope_mem_case *c, int md)
{
  kope_buf b;

  kope_buf_init(&b, 4096);
  kope_buf_printf(&b, "#%lld step %lld [%s r=%.3f d=%.3f c=%.2f]", (long long)c->id,
                  (long long)c->in.step, kope_mem_label_name(c->in.score.label),
                  c->in.score.step_ratio,
                  c->in.score.d_score, c->in.score.confidence);
  if (c->in.thought_id)
    kope_buf_printf(&b, md ? " `%s`" : " %s", c->in.thought_id);
  if (c->in.thought_title)
    kope_buf_printf(&b, " \"%.60s\"", c->in.thought_title);
  kope_buf_printf(&b, ": %s", c->in.verdict);
  if (isfinite(c->in.score.speedup))
    kope_buf_printf(&b, " %.3fx", c->in.score.speedup);
  if (c->in.session_id)
    kope_buf_printf(&b, " (session %lld)", (long long)c->in.session_id);
  return kope_buf_steal(&b);
}

static int flist_add(const kope_mem_case *c, void *ctx)
{
  flist *l = ctx;

  if (l->n == l->cap) {
    size_t cap = l->cap ? 2 * l->cap : 64;
    fnode *v = realloc(l->v, cap * sizeof *v);
    if (!v)
      return 1;
    l->v = v;
    l->cap = cap;
  }
  l->v[l->n].id = c->id;
  l->v[l->n].prev = c->in.prev_case_id;
  l->v[l->n].line = tree_line(c, l->md);
  l->n++;
  return 0;
}

static size_t fpos(const flist *l, int64_t id)
{
  size_t lo = 0, hi = l->n;

  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (l->v[mid].id < id)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < l->n && l->v[lo].id == id ? lo : (size_t)-1;
}

/* Depth-first print with an explicit stack (lineages can be long). */
static int forest_print(FILE *out, const flist *l)
{
  const size_t none = (size_t)-1;
  size_t *first = malloc((l->n + 1) * sizeof *first), *next = malloc((l->n + 1) * sizeof *next);
  size_t *stack = malloc((l->n + 1) * sizeof *stack), *depth = malloc((l->n + 1) * sizeof *depth);
  size_t i, top = 0;
  int rc = -1;

  if (!first || !next || !stack || !depth)
    goto out;
  for (i = 0; i < l->n; i++)
    first[i] = none;
  for (i = l->n; i-- > 0;) {
    size_t p = l->v[i].prev ? fpos(l, l->v[i].prev) : none;
    next[i] = none;
    if (p != none) {
      next[i] = first[p];
      first[p] = i;
    }
  }
  for (i = l->n; i-- > 0;) {   /* roots, in id order once popped */
    size_t p = l->v[i].prev ? fpos(l, l->v[i].prev) : none;
    if (p == none) {
      stack[top] = i;
      depth[top++] = 0;
    }
  }
  while (top > 0) {
    size_t v = stack[--top], d = depth[top], c, k, n = 0;
    size_t shown = d > 40 ? 40 : d;
    fprintf(out, "%*s%s%s", (int)(2 * shown), "", l->md ? "- " : "", l->v[v].line);
    if (d == 0 && l->v[v].prev)
      fprintf(out, " (from #%lld)", (long long)l->v[v].prev);
    if (d > 40)
      fprintf(out, " (depth %zu)", d);
    fputc('\n', out);
    for (c = first[v]; c != none; c = next[c])
      n++;
    for (k = 0, c = first[v]; c != none; c = next[c], k++) {  /* push in reverse */
      stack[top + n - 1 - k] = c;
      depth[top + n - 1 - k] = d + 1;
    }
    top += n;
  }
  rc = 0;
out:
  free(first);
  free(next);
  free(stack);
  free(depth);
  return rc;
}

static void flist_release(flist *l)
{
  size_t i;

  for (i = 0; i < l->n; i++)
    free(l->v[i].line);
  free(l->v);
}

static int forest(kope_db *db, FILE *out, const kope_mem_filter *f, int flags, int md,
                  kope_err *err)
{
  flist l = {0};
  int rc;

  l.md = md;
  rc = kope_mem_case_each(db, f, flags, flist_add, &l, err);
  if (rc == KOPE_OK && l.n == 0 && !md)
    fprintf(out, "(no Cases)\n");
  if (rc == KOPE_OK && forest_print(out, &l) != 0)
    rc = kope_err_set(err, KOPE_EINTERNAL, "out of memory");
  flist_release(&l);
  return rc;
}

int kope_mem_tree(kope_db *db, FILE *out, const kope_mem_filter *f, kope_err *err)
{
  return forest(db, out, f, 0, 0, err);
}

/* ---- md ---------------------------------------------------------------------- */

static void md_cell(FILE *out, const char *s, size_t max)
{
  size_t i;

  fputs(" ", out);
  for (i = 0; s && s[i] && i < max; i++) {
    if (s[i] == '|')
      fputc('\\', out);
    fputc(s[i] == '\n' ? ' ' : s[i], out);
  }
  fputs(" |", out);
}

static int md_row_full(const kope_mem_case *c, void *ctx)
{
  FILE *out = ctx;
  char prev[32] = "-", ses[32] = "-", sp[32] = "-";

  if (c->in.prev_case_id)
    snprintf(prev, sizeof prev, "%lld", (long long)c->in.prev_case_id);
  if (c->in.session_id)
    snprintf(ses, sizeof ses, "%lld", (long long)c->in.session_id);
  if (isfinite(c->in.score.speedup))
    snprintf(sp, sizeof sp, "%.4g", c->in.score.speedup);
  fprintf(out, "| %lld | %s | %s | %lld |", (long long)c->id, prev, ses, (long long)c->in.step);
  md_cell(out, c->in.op, 60);
  md_cell(out, c->in.target, 40);
  md_cell(out, c->in.device[0] ? c->in.device : "-", 80);
  md_cell(out, c->in.verdict, 20);
  fprintf(out, " %s | %s | %.4f | %s | %.4f | %.2f |", c->in.score.correct ? "yes" : "no", sp,
          c->in.score.step_ratio, kope_mem_label_name(c->in.score.label), c->in.score.d_score,
          c->in.score.confidence);
  md_cell(out, c->in.layer, 20);
  md_cell(out, c->in.thought_id, 60);
  md_cell(out, c->in.thought_title, 80);
  fputc('\n', out);
  return 0;
}

static int export_md(kope_db *db, FILE *out, const kope_mem_filter *f, kope_err *err)
{
  int flags = any_filter(f) ? KOPE_MEM_EACH_ANCESTORS : 0;
  int rc;

  fprintf(out, "# kope memory export\n\nStore `%s` (uid %s, schema %d).\n\n## Cases\n\n"
          "| case | prev | session | step | op | target | device | verdict | correct | "
          "speedup | step ratio | label | d | confidence | layer | thought | title |\n"
          "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
          kope_db_path(db), kope_db_uuid(db), kope_db_schema_version(db));
  rc = kope_mem_case_each(db, f, flags, md_row_full, out, err);
  if (rc == KOPE_OK) {
    fputs("\n## Forest\n\n", out);
    rc = forest(db, out, f, flags, 1, err);
  }
  return rc;
}

/* ---- dot --------------------------------------------------------------------- */

static void dot_escape(FILE *out, const char *s, size_t max)
{
  size_t i;

  for (i = 0; s && s[i] && i < max; i++) {
    if (s[i] == '"' || s[i] == '\\')
      fputc('\\', out);
    fputc(s[i] == '\n' ? ' ' : s[i], out);
  }
}

static const char *label_color(int label)
{
  static const char *const c[] = {"palegreen", "khaki", "orange", "salmon"};
  return label >= 0 && label < KOPE_LABEL_COUNT ? c[label] : "white";
}

static int dot_node(const kope_mem_case *c, void *ctx)
{
  FILE *out = ctx;

  fprintf(out, "  c%lld [fillcolor=%s%s, label=\"#%lld ", (long long)c->id,
          label_color(c->in.score.label), c->in.score.correct ? "" : ", style=\"filled,dashed\"",
          (long long)c->id);
  dot_escape(out, c->in.op, 60);
  fputc('@', out);
  dot_escape(out, c->in.target ? c->in.target : "?", 40);
  if (c->in.device[0]) {
    fputs(" (", out);
    dot_escape(out, c->in.device, 40);
    fputc(')', out);
  }
  fprintf(out, " session %lld step %lld\\n", (long long)c->in.session_id, (long long)c->in.step);
  dot_escape(out, c->in.layer ? c->in.layer : "-", 20);
  fputs(" / ", out);
  dot_escape(out, c->in.thought_id ? c->in.thought_id : "-", 60);
  fputs("\\n", out);
  dot_escape(out, c->in.thought_title ? c->in.thought_title : "", 50);
  fprintf(out, "\\n%s correct=%s speedup=", c->in.verdict, c->in.score.correct ? "yes" : "no");
  if (isfinite(c->in.score.speedup))
    fprintf(out, "%.4g", c->in.score.speedup);
  else
    fputs("-", out);
  fprintf(out, "\\nr=%.4f %s d=%.4f c=%.2f\"];\n", c->in.score.step_ratio,
          kope_mem_label_name(c->in.score.label), c->in.score.d_score, c->in.score.confidence);
  if (c->in.prev_case_id)
    fprintf(out, "  c%lld -> c%lld;\n", (long long)c->in.prev_case_id, (long long)c->id);
  return 0;
}

static int export_dot(kope_db *db, FILE *out, const kope_mem_filter *f, kope_err *err)
{
  int rc;

  fputs("digraph kope_memory {\n  rankdir=TB;\n  node [shape=box, style=filled, "
        "fontname=\"monospace\", fontsize=10];\n", out);
  rc = kope_mem_case_each(db, f, any_filter(f) ? KOPE_MEM_EACH_ANCESTORS : 0, dot_node, out,
                          err);
  fputs("}\n", out);
  return rc;
}

int kope_mem_export(kope_db *db, FILE *out, int format, const kope_mem_filter *f, int flags,
                    kope_err *err)
{
  int rc;

  if (format == KOPE_MEM_FMT_JSON)
    rc = export_json(db, out, f, flags, err);
  else if (format == KOPE_MEM_FMT_MD)
    rc = export_md(db, out, f, err);
  else if (format == KOPE_MEM_FMT_DOT)
    rc = export_dot(db, out, f, err);
  else
    return kope_err_set(err, KOPE_EINPUT, "unknown export format %d", format);
  if (rc == KOPE_OK && (fflush(out) != 0 || ferror(out)))
    rc = kope_err_set(err, KOPE_EENV, "writing the export failed");
  return rc;
}
