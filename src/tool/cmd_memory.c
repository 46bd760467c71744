/*
 * `kope memory`: inspect and manage the experience memory.
 *
 *   stats | list | show CASE_ID | search TEXT | tree SESSION_OR_OP |
 *   export --format json|md|dot | import FILE | gc | digests | retrieve |
 *   check
 *
 * Every subcommand takes --db PATH (default <kope home>/kope.db) and
 * --help; --json prints one JSON document on stdout where it makes sense.
 * Exit codes: 0 success, 2 usage error, unknown id or a file that is not a
 * kope database (left untouched), 3 environment problem (unwritable path,
 * busy database). Uses only the public API.
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kope/core.h"
#include "kope/mem.h"
#include "cmds.h"

/* Options, as bits saying which a subcommand accepts. */
enum {
  O_JSON = 1 << 0, O_FILTER = 1 << 1, O_LIMIT = 1 << 2, O_FORMAT = 1 << 3, O_OUT = 1 << 4,
  O_NOSRC = 1 << 5, O_GC = 1 << 6, O_CODE = 1 << 7, O_REFRESH = 1 << 8, O_STATE = 1 << 9
};

typedef struct mopts {
  const char *db;
  int json, help, no_sources, dry_run, vacuum, code, refresh;
  kope_mem_filter f;
  const char *format, *out, *text, *feedback;
  long long limit, keep_journals, keep_sources, k;
  const char *pos[4];
  int npos;
} mopts;

typedef struct subcmd {
  const char *name;
  unsigned opts;
  int min_pos, max_pos;
  int (*run)(kope_db *db, mopts *o, kope_err *err);
  const char *args, *help;
} subcmd;

/* ---- option parsing --------------------------------------------------- */

static int parse_int(const char *s, long long *v)
{
  char *end;

  errno = 0;
  *v = strtoll(s, &end, 10);
  return s[0] && !*end && errno == 0 ? 0 : -1;
}

static int bad_usage(const subcmd *sc, const char *fmt, const char *what)
{
  fprintf(stderr, "kope memory %s: ", sc->name);
  fprintf(stderr, fmt, what);
  fprintf(stderr, "\nusage: kope memory %s %s (see --help)\n", sc->name, sc->args);
  return KOPE_EINPUT;
}

/* Options taking a value: name, the bit allowing it, where it goes. */
static const char **str_slot(mopts *o, const char *name, unsigned *need)
{
  struct { const char *n; unsigned bit; const char **slot; } t[] = {
    {"--db", 0, &o->db}, {"--op", O_FILTER, &o->f.op}, {"--target", O_FILTER, &o->f.target},
    {"--label", O_FILTER, &o->f.label}, {"--category", O_FILTER, &o->f.category},
    {"--layer", O_FILTER, &o->f.layer}, {"--thought", O_FILTER, &o->f.thought_id},
    {"--verdict", O_FILTER, &o->f.verdict}, {"--hw", O_FILTER, &o->f.hw},
    {"--format", O_FORMAT, &o->format}, {"--out", O_OUT, &o->out},
    {"--text", O_STATE, &o->text}, {"--feedback", O_STATE, &o->feedback}};
  size_t i;

  for (i = 0; i < sizeof t / sizeof t[0]; i++)
    if (!strcmp(name, t[i].n)) {
      *need = t[i].bit;
      return t[i].slot;
    }
  return NULL;
}

static long long *int_slot(mopts *o, const char *name, unsigned *need, long long *session)
{
  struct { const char *n; unsigned bit; long long *slot; } t[] = {
    {"--limit", O_LIMIT, &o->limit}, {"--keep-journals", O_GC, &o->keep_journals},
    {"--keep-sources", O_GC, &o->keep_sources}, {"--session", O_FILTER, session},
    {"-k", O_STATE, &o->k}};
  size_t i;

  for (i = 0; i < sizeof t / sizeof t[0]; i++)
    if (!strcmp(name, t[i].n)) {
      *need = t[i].bit;
      return t[i].slot;
    }
  return NULL;
}

static int *flag_slot(mopts *o, const char *name, unsigned *need)
{
  struct { const char *n; unsigned bit; int *slot; } t[] = {
    {"--json", O_JSON, &o->json}, {"--no-sources", O_NOSRC, &o->no_sources},
    {"--dry-run", O_GC, &o->dry_run}, {"--vacuum", O_GC, &o->vacuum},
    {"--code", O_CODE, &o->code}, {"--refresh", O_REFRESH, &o->refresh}};
  size_t i;

  for (i = 0; i < sizeof t / sizeof t[0]; i++)
    if (!strcmp(name, t[i].n)) {
      *need = t[i].bit;
      return t[i].slot;
    }
  return NULL;
}

/* Handle one option at argv[*i]; 0 or an exit code. */
static int parse_opt(const subcmd *sc, mopts *o, int argc, char **argv, int *i,
                     long long *session)
{
  char name[64];
  const char *arg = argv[*i], *eq = strchr(arg, '='), *val = NULL, **s;
  unsigned need = 0;
  long long *n;
  int *flag;

  snprintf(name, sizeof name, "%.*s", eq ? (int)(eq - arg) : (int)strlen(arg), arg);
  if ((flag = flag_slot(o, name, &need)) != NULL) {
    if (eq || !(sc->opts & need))
      return bad_usage(sc, "option %s not accepted here", name);
    *flag = 1;
    return 0;
  }
  s = str_slot(o, name, &need);
  n = s ? NULL : int_slot(o, name, &need, session);
  if ((!s && !n) || (need && !(sc->opts & need)))
    return bad_usage(sc, "unknown option %s", name);
  val = eq ? eq + 1 : (*i + 1 < argc ? argv[++*i] : NULL);
  if (!val)
    return bad_usage(sc, "option %s needs a value", name);
  if (s)
    *s = val;
  else if (parse_int(val, n) != 0 || *n < 0)
    return bad_usage(sc, "option %s needs a non-negative integer", name);
  return 0;
}

static int parse_args(const subcmd *sc, mopts *o, int argc, char **argv)
{
  long long session = 0;
  int i, rc;

  for (i = 2; i < argc; i++) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      o->help = 1;
    } else if (argv[i][0] == '-' && argv[i][1] && !(argv[i][1] >= '0' && argv[i][1] <= '9')) {
      if ((rc = parse_opt(sc, o, argc, argv, &i, &session)) != 0)
        return rc;
    } else if (o->npos < 4) {
      o->pos[o->npos++] = argv[i];
    } else {
      return bad_usage(sc, "too many arguments%s", "");
    }
  }
  o->f.session_id = session;
  if (o->help)
    return 0;
  if (o->npos < sc->min_pos || o->npos > sc->max_pos)
    return bad_usage(sc, "wrong number of arguments%s", "");
  if (o->f.label && kope_mem_label_parse(o->f.label) < 0)
    return bad_usage(sc, "unknown label '%s' (effective, partial, ineffective, negative)",
                     o->f.label);
  return 0;
}

/* ---- JSON helpers ------------------------------------------------------- */

static json_t *jstr(const char *s)
{
  return s ? json_string(s) : json_null();
}

static json_t *jnum(double v)
{
  return isfinite(v) ? json_real(v) : json_null();
}

static void print_json(json_t *doc)
{
  json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
  fputc('\n', stdout);
  json_decref(doc);
}

static json_t *counts_json(const kope_mem_count *c, size_t n)
{
  json_t *o = json_object();
  size_t i;

  for (i = 0; i < n; i++)
    json_object_set_new(o, c[i].key, json_integer(c[i].n));
  return o;
}

static json_t *recs_json(const kope_mem_recs *r)
{
  static const char *const kinds[] = {"case", "digest", "journal"};
  json_t *a = json_array();
  size_t i;

  for (i = 0; i < r->n; i++) {
    const kope_mem_rec *x = &r->v[i];
    json_array_append_new(a, json_pack("{s:s, s:I, s:o, s:o, s:o, s:f, s:f, s:o, s:s, s:I, "
                                       "s:o}", "kind", kinds[x->kind], "id", (json_int_t)x->id,
                                       "case_id", x->case_id ? json_integer(x->case_id)
                                                             : json_null(),
                                       "label",
                                       x->score.label >= 0
                                           ? json_string(kope_mem_label_name(x->score.label))
                                           : json_null(),
                                       "op", jstr(x->op), "d_score", x->score.d_score,
                                       "confidence", x->score.confidence, "fix_case_id",
                                       x->fix_case_id ? json_integer(x->fix_case_id)
                                                      : json_null(),
                                       "summary", x->summary, "tokens", (json_int_t)x->tokens,
                                       "text_score", jnum(x->text_score)));
  }
  return a;
}

/* ---- stats, list, show ------------------------------------------------- */

static void print_counts(const char *what, const kope_mem_count *c, size_t n)
{
  size_t i;

  printf("%-12s", what);
  for (i = 0; i < n; i++)
    printf("%s %s %lld", i ? "," : "", c[i].key, (long long)c[i].n);
  printf("%s\n", n ? "" : " -");
}

static int run_stats(kope_db *db, mopts *o, kope_err *err)
{
  kope_mem_stats st;
  int rc = kope_mem_stats_get(db, &st, err);

  if (rc != KOPE_OK)
    return rc;
  if (o->json) {
    print_json(json_pack("{s:s, s:s, s:i, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:o, s:o, "
                         "s:o, s:o}", "db", kope_db_path(db), "uuid", kope_db_uuid(db),
                         "schema", st.schema, "cases", (json_int_t)st.cases, "sessions",
                         (json_int_t)st.sessions, "journals", (json_int_t)st.journals,
                         "digests", (json_int_t)st.digests, "sources", (json_int_t)st.sources,
                         "source_bytes", (json_int_t)st.source_bytes, "imports",
                         (json_int_t)st.imports, "hw_profiles", (json_int_t)st.hw_profiles,
                         "by_op", counts_json(st.by_op, st.n_op), "by_target",
                         counts_json(st.by_target, st.n_target), "by_label",
                         counts_json(st.by_label, st.n_label), "by_verdict",
                         counts_json(st.by_verdict, st.n_verdict)));
  } else {
    printf("store       %s (%s, schema %d, uid %s)\n", kope_db_path(db), kope_db_engine(db),
           st.schema, kope_db_uuid(db));
    printf("contents    %lld Cases, %lld sessions, %lld Journal entries, %lld digests, "
           "%lld kernel sources (%lld bytes), %lld imports, %lld hardware profiles\n",
           (long long)st.cases, (long long)st.sessions, (long long)st.journals,
           (long long)st.digests, (long long)st.sources, (long long)st.source_bytes,
           (long long)st.imports, (long long)st.hw_profiles);
    print_counts("operator", st.by_op, st.n_op);
    print_counts("target", st.by_target, st.n_target);
    print_counts("label", st.by_label, st.n_label);
    print_counts("verdict", st.by_verdict, st.n_verdict);
  }
  kope_mem_stats_release(&st);
  return KOPE_OK;
}

typedef struct list_ctx {
  json_t *arr;
  long long left;
} list_ctx;

static int list_one(const kope_mem_case *c, void *ctx)
{
  list_ctx *l = ctx;

  if (l->arr) {
    json_array_append_new(l->arr, kope_mem_case_json(c, KOPE_MEM_JSON_BRIEF));
  } else {
    char *s = kope_mem_case_summary(c);
    printf("%s\n", s);
    free(s);
  }
  return --l->left == 0;
}

static int run_list(kope_db *db, mopts *o, kope_err *err)
{
  list_ctx l = {o->json ? json_array() : NULL, o->limit > 0 ? o->limit : -1};
  int rc = kope_mem_case_each(db, &o->f, 0, list_one, &l, err);

  if (rc == KOPE_OK && l.arr)
    print_json(json_pack("{s:o}", "cases", l.arr));
  else
    json_decref(l.arr);
  return rc;
}

static int parse_case_id(const char *s, int64_t *id, kope_err *err)
{
  long long v;

  if (s[0] == '#')
    s++;
  if (parse_int(s, &v) != 0 || v <= 0)
    return kope_err_set(err, KOPE_EINPUT, "'%s' is not a Case id (a positive integer)", s);
  *id = v;
  return KOPE_OK;
}

/* Summaries (or JSON objects) of the Cases in ids. */
static int show_ids(kope_db *db, const int64_t *ids, size_t n, const char *title, json_t *arr,
                    kope_err *err)
{
  size_t i;
  int rc = KOPE_OK;

  if (!arr)
    printf("%s%s\n", title, n ? "" : " none");
  for (i = 0; i < n && rc == KOPE_OK; i++) {
    kope_mem_case c;
    char *s;
    if ((rc = kope_mem_case_get(db, ids[i], 0, &c, err)) != KOPE_OK)
      break;
    if (arr) {
      json_array_append_new(arr, kope_mem_case_json(&c, KOPE_MEM_JSON_BRIEF));
    } else {
      s = kope_mem_case_summary(&c);
      printf("  %s\n", s);
      free(s);
    }
    kope_mem_case_release(&c);
  }
  return rc;
}

static void show_text(const kope_mem_case *c, int code)
{
  char *s = kope_mem_case_summary(c);

  printf("%s\n", s);
  free(s);
  printf("  uid %s, session %lld, prev %lld, hw %s, scene %s\n", c->uid,
         (long long)c->in.session_id, (long long)c->in.prev_case_id, c->in.hw ? c->in.hw : "-",
         c->in.scene ? c->in.scene : "-");
  printf("  target %s, device %s\n", c->in.target ? c->in.target : "-",
         c->in.device[0] ? c->in.device : "-");
  printf("  thought: layer %s, id %s, title %s\n", c->in.layer ? c->in.layer : "-",
         c->in.thought_id ? c->in.thought_id : "-",
         c->in.thought_title ? c->in.thought_title : "-");
  if (c->in.rationale)
    printf("  rationale: %s\n", c->in.rationale);
  printf("  verdict %s, correct %s, speedup %.4g vs ref, %.4g vs vendor, confidence %.2f\n",
         c->in.verdict, c->in.score.correct ? "yes" : "no", c->in.score.speedup,
         c->in.score.speedup_vendor,
         c->in.score.confidence);
  printf("  step ratio %.4f, label %s, d %.4f, rank %.4f, successors %lld\n",
         c->in.score.step_ratio, kope_mem_label_name(c->in.score.label), c->in.score.d_score,
         c->in.score.rank, (long long)c->n_succ);
  printf("  tokens %lld in / %lld out, eval %.3g s, harness %s, kernel %s\n",
         (long long)c->in.tokens_in, (long long)c->in.tokens_out, c->in.eval_seconds,
         c->in.harness ? c->in.harness : "-",
         c->in.code_after_hash[0] ? c->in.code_after_hash : "-");
  if (c->origin)
    printf("  %s\n", c->origin);
  if (c->in.feedback)
    printf("  feedback:\n%s\n", c->in.feedback);
  if (code)
    printf("  code after:\n%s\n", c->in.code_after ? c->in.code_after : "(not stored)");
}

static int show_rest(kope_db *db, int64_t id, json_t *doc, kope_err *err)
{
  int64_t *lin = NULL, *succ = NULL;
  size_t nl = 0, ns = 0, nj = 0, i;
  kope_mem_journal *j = NULL;
  json_t *la = doc ? json_array() : NULL, *sa = doc ? json_array() : NULL;
  int rc = kope_mem_lineage(db, id, &lin, &nl, err);

  if (rc == KOPE_OK)
    rc = kope_mem_successors(db, id, &succ, &ns, err);
  if (rc == KOPE_OK)
    rc = show_ids(db, lin, nl, "lineage (root first):", la, err);
  if (rc == KOPE_OK)
    rc = show_ids(db, succ, ns, "successors:", sa, err);
  if (rc == KOPE_OK)
    rc = kope_mem_journal_list(db, id, &j, &nj, err);
  if (doc) {
    json_t *ja = json_array();
    for (i = 0; i < nj; i++)
      json_array_append_new(ja, json_pack("{s:I, s:f, s:s}", "journal_id", (json_int_t)j[i].id,
                                          "created", j[i].created, "body", j[i].body));
    json_object_set_new(doc, "lineage", la);
    json_object_set_new(doc, "successors", sa);
    json_object_set_new(doc, "journals", ja);
  } else {
    for (i = 0; i < nj; i++)
      printf("journal #%lld:\n%s\n", (long long)j[i].id, j[i].body);
  }
  kope_mem_journals_free(j, nj);
  free(lin);
  free(succ);
  return rc;
}

static int run_show(kope_db *db, mopts *o, kope_err *err)
{
  kope_mem_case c;
  json_t *doc = NULL;
  int64_t id = 0;
  int rc = parse_case_id(o->pos[0], &id, err);

  if (rc != KOPE_OK)
    return rc;
  if ((rc = kope_mem_case_get(db, id, o->code ? KOPE_MEM_WITH_CODE : 0, &c, err)) != KOPE_OK)
    return rc;
  if (o->json)
    doc = json_pack("{s:o}", "case", kope_mem_case_json(&c, KOPE_MEM_JSON_CODE));
  else
    show_text(&c, o->code);
  kope_mem_case_release(&c);
  rc = show_rest(db, id, doc, err);
  if (rc == KOPE_OK && doc)
    print_json(doc);
  else
    json_decref(doc);
  return rc;
}

/* ---- search, retrieve, tree, digests ------------------------------------ */

static void print_recs(const kope_mem_recs *r)
{
  static const char *const kinds[] = {"case", "digest", "journal"};
  size_t i;

  for (i = 0; i < r->n; i++)
    printf("%-7s %s  (~%zu tokens)\n", kinds[r->v[i].kind], r->v[i].summary, r->v[i].tokens);
  if (r->n == 0)
    printf("(nothing found)\n");
}

static int run_search(kope_db *db, mopts *o, kope_err *err)
{
  kope_mem_recs r;
  int rc;

  kope_mem_recs_init(&r);
  rc = kope_mem_search(db, o->pos[0], o->limit > 0 ? (size_t)o->limit : 20, &r, err);
  if (rc == KOPE_OK && o->json)
    print_json(json_pack("{s:s, s:o}", "query", o->pos[0], "results", recs_json(&r)));
  else if (rc == KOPE_OK)
    print_recs(&r);
  kope_mem_recs_release(&r);
  return rc;
}

static int run_retrieve(kope_db *db, mopts *o, kope_err *err)
{
  kope_mem_state s = {0};
  kope_mem_recs r, fx;
  size_t k = o->k > 0 ? (size_t)o->k : 8;
  int rc;

  s.op = o->f.op;
  s.target = o->f.target;
  s.category = o->f.category;
  s.hw = o->f.hw;
  s.text = o->text;
  s.feedback = o->feedback;
  kope_mem_recs_init(&r);
  kope_mem_recs_init(&fx);
  rc = kope_mem_retrieve(db, &s, &o->f, k, &r, err);
  if (rc == KOPE_OK && o->feedback)
    rc = kope_mem_fixes(db, o->feedback, NULL, k, &fx, err);
  if (rc == KOPE_OK && o->json) {
    print_json(json_pack("{s:o, s:o}", "records", recs_json(&r), "fixes", recs_json(&fx)));
  } else if (rc == KOPE_OK) {
    print_recs(&r);
    if (o->feedback) {
      printf("error-driven:\n");
      print_recs(&fx);
    }
  }
  kope_mem_recs_release(&r);
  kope_mem_recs_release(&fx);
  return rc;
}

static int run_tree(kope_db *db, mopts *o, kope_err *err)
{
  long long v;

  if (parse_int(o->pos[0], &v) == 0 && v > 0)
    o->f.session_id = v;
  else
    o->f.op = o->pos[0];
  return kope_mem_tree(db, stdout, &o->f, err);
}

static int run_digests(kope_db *db, mopts *o, kope_err *err)
{
  kope_mem_digest *d = NULL;
  size_t n = 0, i;
  json_t *arr = o->json ? json_array() : NULL;
  int rc = o->refresh ? kope_mem_digest_refresh(db, 0, NULL, err) : KOPE_OK;

  if (rc == KOPE_OK)
    rc = kope_mem_digest_list(db, &o->f, &d, &n, err);
  for (i = 0; rc == KOPE_OK && i < n; i++) {
    if (arr)
      json_array_append_new(arr, json_pack("{s:I, s:s, s:s, s:s, s:s, s:I, s:I, s:I, s:I, "
                                           "s:f, s:s}", "digest_id", (json_int_t)d[i].id,
                                           "target", d[i].target, "category", d[i].category,
                                           "layer", d[i].layer, "thought_id", d[i].thought_id,
                                           "attempts", (json_int_t)d[i].attempts,
                                           "effective", (json_int_t)d[i].n_label[0],
                                           "negative", (json_int_t)d[i].n_label[3],
                                           "supporting_cases", (json_int_t)d[i].n_case_ids,
                                           "median_ratio", d[i].median_ratio, "text",
                                           d[i].text));
    else
      printf("#%lld %s\n", (long long)d[i].id, d[i].text);
  }
  if (rc == KOPE_OK && arr)
    print_json(json_pack("{s:o}", "digests", arr));
  else
    json_decref(arr);
  if (rc == KOPE_OK && !o->json && n == 0)
    printf("(no digests)\n");
  kope_mem_digests_free(d, n);
  return rc;
}

/* ---- export, import, gc, check ------------------------------------------- */

static int parse_format(const char *s, int *fmt, kope_err *err)
{
  if (!s || !strcmp(s, "json"))
    *fmt = KOPE_MEM_FMT_JSON;
  else if (!strcmp(s, "md"))
    *fmt = KOPE_MEM_FMT_MD;
  else if (!strcmp(s, "dot"))
    *fmt = KOPE_MEM_FMT_DOT;
  else
    return kope_err_set(err, KOPE_EINPUT, "unknown format '%s' (json, md or dot)", s);
  return KOPE_OK;
}

static int run_export(kope_db *db, mopts *o, kope_err *err)
{
  FILE *out = stdout;
  char *tmp = NULL;
  int fmt = KOPE_MEM_FMT_JSON, rc = parse_format(o->format, &fmt, err);

  if (rc != KOPE_OK)
    return rc;
  if (o->out) {
    tmp = kope_sprintf("%s.tmp", o->out);
    if (!(out = fopen(tmp, "w"))) {
      rc = kope_err_set(err, KOPE_EENV, "%s: cannot write: %s", o->out, strerror(errno));
      goto out;
    }
  }
  rc = kope_mem_export(db, out, fmt, &o->f, o->no_sources ? KOPE_MEM_EXPORT_NO_SOURCES : 0,
                       err);
  if (o->out) {
    if (fclose(out) != 0 && rc == KOPE_OK)
      rc = kope_err_set(err, KOPE_EENV, "%s: write failed", o->out);
    if (rc == KOPE_OK && rename(tmp, o->out) != 0)
      rc = kope_err_set(err, KOPE_EENV, "%s: cannot write: %s", o->out, strerror(errno));
    if (rc != KOPE_OK)
      remove(tmp);
  }
out:
  free(tmp);
  return rc;
}

static int run_import(kope_db *db, mopts *o, kope_err *err)
{
  kope_mem_import_stats st;
  int rc = kope_mem_import(db, o->pos[0], &st, err);

  if (rc != KOPE_OK)
    return rc;
  if (o->json)
    print_json(json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "file", o->pos[0],
                         "import_id", (json_int_t)st.import_id, "cases_new",
                         (json_int_t)st.cases_new, "cases_known", (json_int_t)st.cases_known,
                         "sessions_new", (json_int_t)st.sessions_new, "journals_new",
                         (json_int_t)st.journals_new, "sources_new", (json_int_t)st.sources_new,
                         "hw_profiles_new", (json_int_t)st.hw_new));
  else
    printf("imported %s: %lld new Cases (%lld already present), %lld sessions, %lld Journal "
           "entries, %lld kernel sources, %lld hardware profiles (import #%lld)\n", o->pos[0],
           (long long)st.cases_new, (long long)st.cases_known, (long long)st.sessions_new,
           (long long)st.journals_new, (long long)st.sources_new, (long long)st.hw_new,
           (long long)st.import_id);
  return KOPE_OK;
}

static int run_gc(kope_db *db, mopts *o, kope_err *err)
{
  kope_mem_gc_opts g = {o->keep_journals, o->keep_sources, o->dry_run, o->vacuum};
  kope_mem_gc_stats st;
  int rc = kope_mem_gc(db, &g, &st, err);

  if (rc != KOPE_OK)
    return rc;
  if (o->json)
    print_json(json_pack("{s:b, s:I, s:I, s:I}", "dry_run", o->dry_run, "journals_dropped",
                         (json_int_t)st.journals_dropped, "sources_dropped",
                         (json_int_t)st.sources_dropped, "source_bytes_dropped",
                         (json_int_t)st.source_bytes_dropped));
  else
    printf("%s %lld Journal entries and %lld kernel sources (%lld bytes); Cases kept\n",
           o->dry_run ? "would drop" : "dropped", (long long)st.journals_dropped,
           (long long)st.sources_dropped, (long long)st.source_bytes_dropped);
  return KOPE_OK;
}

static int run_check(kope_db *db, mopts *o, kope_err *err)
{
  kope_buf rep;
  int rc;

  kope_buf_init(&rep, 1 << 20);
  rc = kope_mem_check(db, &rep, err);
  if (o->json)
    print_json(json_pack("{s:b, s:s}", "ok", rc == KOPE_OK, "report", rep.data ? rep.data : ""));
  else
    fputs(rep.data ? rep.data : "", stdout);
  kope_buf_release(&rep);
  return rc;
}

/* ---- dispatch ------------------------------------------------------------ */

static const subcmd subs[] = {
  {"stats", O_JSON, 0, 0, run_stats, "[--db PATH] [--json]",
   "Counts of Cases by operator, target, label and verdict, and of everything else."},
  {"list", O_JSON | O_FILTER | O_LIMIT, 0, 0, run_list,
   "[--op OP] [--target T] [--label L] [--session N] [--limit N] [--json]",
   "One line per Case matching the filters (also --category, --layer, --thought,\n"
   "--verdict, --hw), in id order."},
  {"show", O_JSON | O_CODE, 1, 1, run_show, "CASE_ID [--code] [--json]",
   "A Case with every field, its lineage back to the root, its successors and\n"
   "its Journal entries. --code prints the kernel source."},
  {"search", O_JSON | O_LIMIT, 1, 1, run_search, "TEXT [--limit N] [--json]",
   "Full-text search (every word must match) over Case thoughts and feedback,\n"
   "Journals and digests, best bm25 first."},
  {"tree", O_FILTER, 1, 1, run_tree, "SESSION_ID_OR_OP [--target T]",
   "The experience forest of a session (a number) or an operator (a name), as\n"
   "indented text with step ratios, labels and d scores."},
  {"export", O_FORMAT | O_OUT | O_FILTER | O_NOSRC, 0, 0, run_export,
   "[--format json|md|dot] [--out FILE] [filters] [--no-sources]",
   "Write the memory (or the Cases matching filters, with their ancestors).\n"
   "json is what import reads; dot renders with Graphviz (dot -Tsvg)."},
  {"import", O_JSON, 1, 1, run_import, "FILE [--json]",
   "Merge a json export from another machine or target. New Cases get fresh ids\n"
   "and keep their uid and provenance; importing twice adds nothing."},
  {"gc", O_JSON | O_GC, 0, 0, run_gc,
   "[--keep-journals N] [--keep-sources N] [--dry-run] [--vacuum] [--json]",
   "Drop Journal entries beyond the newest N (default 10000) and kernel sources\n"
   "not used by the newest N Cases or by the best Case of an operator/target.\n"
   "Cases, their source hashes and scores are kept."},
  {"digests", O_JSON | O_FILTER | O_REFRESH, 0, 0, run_digests,
   "[--target T] [--category C] [--layer L] [--thought ID] [--refresh] [--json]",
   "The distilled lessons per (target, category, layer, thought id)."},
  {"retrieve", O_JSON | O_FILTER | O_STATE, 0, 0, run_retrieve,
   "[--op OP] [--target T] [--text TEXT] [--feedback TEXT] [-k N] [--json]",
   "What the agent would be shown for a state: graph-ranked Cases and digests,\n"
   "and with --feedback the past fixes of the same error."},
  {"check", O_JSON, 0, 0, run_check, "[--json]",
   "SQLite integrity check plus a recomputation of every stored score."},
  {NULL, 0, 0, 0, NULL, NULL, NULL}
};

static const subcmd *find_sub(const char *name)
{
  const subcmd *s;

  for (s = subs; s->name; s++)
    if (!strcmp(s->name, name))
      return s;
  return NULL;
}

static void usage(FILE *f)
{
  const subcmd *s;

  fprintf(f, "usage: kope memory SUBCOMMAND [--db PATH] [options]\n\n"
             "The experience graph memory (Cases, Journals, digests). Subcommands:\n\n");
  for (s = subs; s->name; s++)
    fprintf(f, "  %-8s %s\n", s->name, s->args);
  fprintf(f, "\n--db PATH defaults to $KOPE_HOME/kope.db (./.kope/kope.db). Exit codes: 0 ok,\n"
             "2 usage, unknown id or not a kope database, 3 unwritable or busy database.\n");
}

static void sub_help(const subcmd *s)
{
  printf("usage: kope memory %s %s\n\n%s\n\nEvery subcommand takes --db PATH.\n", s->name,
         s->args, s->help);
}

int kope_cmd_memory(int argc, char **argv)
{
  const subcmd *sc;
  mopts o;
  kope_err err = {0};
  kope_db *db;
  int rc;

  if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
      !strcmp(argv[1], "help")) {
    usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? KOPE_EINPUT : KOPE_OK;
  }
  if (!(sc = find_sub(argv[1]))) {
    fprintf(stderr, "kope memory: unknown subcommand '%s'\n\n", argv[1]);
    usage(stderr);
    return KOPE_EINPUT;
  }
  memset(&o, 0, sizeof o);
  o.keep_journals = o.keep_sources = -1;
  if ((rc = parse_args(sc, &o, argc, argv)) != 0)
    return rc;
  if (o.help) {
    sub_help(sc);
    return KOPE_OK;
  }
  if (!(db = kope_db_open(o.db, 0, &err))) {
    fprintf(stderr, "kope memory %s: %s\n", sc->name, err.msg);
    return err.code ? err.code : KOPE_EENV;
  }
  rc = sc->run(db, &o, &err);
  kope_db_close(db);
  if (rc != KOPE_OK)
    fprintf(stderr, "kope memory %s: %s\n", sc->name, err.msg);
  return rc;
}
