/*
 * Unit tests of the table of Case fields (src/mem/case_fields.h): every
 * field of the table round-trips through insert, read, export and import.
 * The test walks the table itself, so a field added to it is checked
 * without touching this file: each stored (CASE) field gets a distinct
 * value of its kind, two Cases (a correct root, a failed successor in a
 * session) go into a real SQLite file, are read back (every stored field
 * equal, derived fields filled), exported as json (each field under its
 * key with the value read back, the object equal to kope_mem_case_json's
 * plus the uid links), and imported into a second real file, where every
 * field but the local ids and the provenance equals the original. Also:
 * the brief JSON holds exactly the MF_BRIEF fields, and --code adds the
 * source texts; kope_db_copy makes the same store in a new file.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <jansson.h>
#include "kope/core.h"
#include "kope/mem.h"
#include "mem/case_fields.h"

typedef struct fx {
  char dir[64];
  kope_db *a, *b;
  int64_t session, root, child;
  kope_mem_case in[2];   /* what was inserted; strings in texts */
  char texts[2][64][96];
} fx;

static const mem_field *field(const char *name)
{
  size_t i;

  for (i = 0; i < mem_n_case_fields; i++)
    if (!strcmp(mem_case_fields[i].name, name))
      return &mem_case_fields[i];
  fail_msg("no field %s in the table", name);
  return NULL;
}

/* A distinct value of its kind for every stored field of c (k: which Case). */
static void fill(fx *x, int k)
{
  kope_mem_case *c = &x->in[k];
  size_t i;

  kope_mem_case_init(c);
  for (i = 0; i < mem_n_case_fields; i++) {
    const mem_field *f = &mem_case_fields[i];
    char *t = x->texts[k][i];
    if (f->place != MF_P_CASE)
      continue;
    snprintf(t, 96, "%s-%d-%s", f->kind == MF_SRC ? "/* src" : "text", k, f->name);
    switch (f->kind) {
    case MF_INT:
      *MF_AT(c, f, int64_t) = 1000 + 10 * (int64_t)i + k;
      break;
    case MF_BOOL:
    case MF_LABEL:
      *MF_AT(c, f, int) = 1;
      break;
    case MF_TEXT:
    case MF_SRC:
      *MF_AT(c, f, mf_str) = t;
      break;
    case MF_BUF:
      snprintf(MF_AT(c, f, char), f->size, "buf-%d-%s", k, f->name);
      break;
    case MF_REAL:
      *MF_AT(c, f, double) = 1.5 + (double)i + 0.25 * k;
      break;
    case MF_NUM:   /* confidence is one: it must lie in [0, 1] */
      *MF_AT(c, f, double) = 0.5 + 0.001 * (double)i + 0.01 * k;
      break;
    case MF_TIME:
      *MF_AT(c, f, double) = 1.7e9 + (double)i + 100.0 * k;
      break;
    case MF_LINK:
      break;
    }
  }
  /* what validation and the scoring demand of these two Cases */
  c->in.verdict = k == 0 ? "correct" : "compile_error";
  c->in.score.correct = k == 0;
  if (k == 1)
    c->in.feedback = "k.c:3:5: error: expected ';' before 'return'";
}

static int setup(void **state)
{
  fx *x = calloc(1, sizeof *x);
  kope_mem_session s = {0};
  kope_err err = {0};
  char *p;

  snprintf(x->dir, sizeof x->dir, "/tmp/kope-fieldtest-XXXXXX");
  assert_non_null(mkdtemp(x->dir));
  p = kope_path_join(x->dir, "a.db");
  x->a = kope_db_open(p, 0, &err);
  free(p);
  p = kope_path_join(x->dir, "b.db");
  x->b = kope_db_open(p, 0, &err);
  free(p);
  assert_non_null(x->a);
  assert_non_null(x->b);
  s.op = "text-0-op";
  s.target = "cpu";
  assert_int_equal(kope_mem_session_begin(x->a, &s, &x->session, &err), KOPE_OK);
  fill(x, 0);
  fill(x, 1);
  assert_int_equal(kope_mem_case_insert(x->a, &x->in[0].in, &x->root, &err), KOPE_OK);
  x->in[1].in.prev_case_id = x->root;
  x->in[1].in.session_id = x->session;
  assert_int_equal(kope_mem_case_insert(x->a, &x->in[1].in, &x->child, &err), KOPE_OK);
  *state = x;
  return 0;
}

static int teardown(void **state)
{
  fx *x = *state;

  kope_db_close(x->a);
  kope_db_close(x->b);
  kope_rmtree(x->dir);
  free(x);
  return 0;
}

/* Is field f equal in a and b? */
static int same(const kope_mem_case *a, const kope_mem_case *b, const mem_field *f)
{
  switch (f->kind) {
  case MF_LINK:
  case MF_INT:
    return *MF_CAT(a, f, int64_t) == *MF_CAT(b, f, int64_t);
  case MF_BOOL:
  case MF_LABEL:
    return *MF_CAT(a, f, int) == *MF_CAT(b, f, int);
  case MF_TEXT: {
    const char *s = *MF_CAT(a, f, mf_str), *t = *MF_CAT(b, f, mf_str);
    return (!s && !t) || (s && t && !strcmp(s, t));
  }
  case MF_BUF:
    return !strcmp(MF_CAT(a, f, char), MF_CAT(b, f, char));
  case MF_REAL:
  case MF_NUM:
  case MF_TIME:
    return *MF_CAT(a, f, double) == *MF_CAT(b, f, double) ||
           (isnan(*MF_CAT(a, f, double)) && isnan(*MF_CAT(b, f, double)));
  case MF_SRC: {
    const char *s = *MF_CAT(a, f, mf_str), *t = *MF_CAT(b, f, mf_str);
    return !strcmp(MF_CHASH(a, f), MF_CHASH(b, f)) &&
           ((!s && !t) || (s && t && !strcmp(s, t)));
  }
  }
  return 0;
}

/* Every stored field reads back as inserted; the others are filled. */
/* The one ownership rule needs every field given on insert (place CASE)
 * inside kope_mem_case_in, and every field the library fills on read
 * (DERIVED, ENGINE, and n_succ) outside it. */
static void test_input_part(void **state)
{
  size_t i;

  (void)state;
  for (i = 0; i < mem_n_case_fields; i++) {
    const mem_field *f = &mem_case_fields[i];
    int inside = f->off + f->size <= sizeof(kope_mem_case_in);
    if (f->place == MF_P_CASE && !inside)
      fail_msg("field %s is given on insert but lies outside kope_mem_case_in", f->name);
    if ((f->place == MF_P_DERIVED || f->place == MF_P_ENGINE) && inside)
      fail_msg("field %s is filled on read but lies in kope_mem_case_in", f->name);
  }
}

static void test_insert_read(void **state)
{
  fx *x = *state;
  kope_err err = {0};
  int k;

  for (k = 0; k < 2; k++) {
    kope_mem_case c;
    size_t i;
    assert_int_equal(kope_mem_case_get(x->a, k ? x->child : x->root, KOPE_MEM_WITH_CODE, &c,
                                       &err), KOPE_OK);
    for (i = 0; i < mem_n_case_fields; i++) {
      const mem_field *f = &mem_case_fields[i];
      if (f->kind == MF_SRC) {   /* the text, and its hash filled on read */
        char h[65];
        assert_string_equal(*MF_CAT(&c, f, mf_str), *MF_CAT(&x->in[k], f, mf_str));
        kope_sha256_hex(*MF_CAT(&c, f, mf_str), strlen(*MF_CAT(&c, f, mf_str)), h);
        assert_string_equal(MF_CHASH(&c, f), h);
      } else if (f->place == MF_P_CASE && !same(&c, &x->in[k], f)) {
        fail_msg("Case %d: field %s does not read back as stored", k, f->name);
      }
    }
    assert_int_equal(c.id, k ? x->child : x->root);
    assert_non_null(c.uid);
    assert_null(c.origin);
    if (k == 1) {
      assert_non_null(c.err_sig);   /* a failed Case with an error */
      assert_int_equal(c.in.score.label, KOPE_LABEL_NEGATIVE);
    } else {
      assert_null(c.err_sig);
      assert_int_equal(c.n_succ, 1);
    }
    kope_mem_case_release(&c);
  }
}

/* The value of field f in the exported object o equals c's. */
static void check_json_field(json_t *o, const kope_mem_case *c, const mem_field *f)
{
  json_t *p = f->group[0] ? json_object_get(o, f->group) : o, *v = json_object_get(p, f->key);
  int ok = 0;

  if (!v)
    fail_msg("field %s: no key %s%s%s in the export", f->name, f->group, f->group[0] ? "." : "",
             f->key);
  switch (f->kind) {
  case MF_LINK:
    ok = *MF_CAT(c, f, int64_t) ? json_integer_value(v) == *MF_CAT(c, f, int64_t)
                                : json_is_null(v);
    break;
  case MF_INT:
    ok = json_integer_value(v) == *MF_CAT(c, f, int64_t);
    break;
  case MF_BOOL:
    ok = json_is_boolean(v) && json_is_true(v) == (*MF_CAT(c, f, int) != 0);
    break;
  case MF_LABEL:
    ok = json_is_string(v) &&
         kope_mem_label_parse(json_string_value(v)) == *MF_CAT(c, f, int);
    break;
  case MF_TEXT:
    ok = *MF_CAT(c, f, mf_str) ? json_is_string(v) &&
                                     !strcmp(json_string_value(v), *MF_CAT(c, f, mf_str))
                               : json_is_null(v);
    break;
  case MF_BUF:
    ok = json_is_string(v) && !strcmp(json_string_value(v), MF_CAT(c, f, char));
    break;
  case MF_REAL:
  case MF_NUM:
  case MF_TIME:
    ok = json_is_real(v) && json_real_value(v) == *MF_CAT(c, f, double);
    break;
  case MF_SRC:
    ok = json_is_string(v) && !strcmp(json_string_value(v), MF_CHASH(c, f));
    break;
  }
  if (!ok)
    fail_msg("field %s: the export's %s is not the stored value", f->name, f->key);
}

static json_t *export_a(fx *x, char **path)
{
  kope_err err = {0};
  json_error_t je;
  FILE *out;
  json_t *doc;

  *path = kope_path_join(x->dir, "a.json");
  out = fopen(*path, "w");
  assert_non_null(out);
  assert_int_equal(kope_mem_export(x->a, out, KOPE_MEM_FMT_JSON, NULL, 0, &err), KOPE_OK);
  fclose(out);
  doc = json_load_file(*path, 0, &je);
  assert_non_null(doc);
  assert_int_equal(json_array_size(json_object_get(doc, "cases")), 2);
  return doc;
}

/* Every field is exported under its key with the stored value, and the
 * object is the one writer's plus the uid links. */
static void test_export(void **state)
{
  fx *x = *state;
  kope_err err = {0};
  char *path;
  json_t *doc = export_a(x, &path), *o;
  size_t k, i;

  json_array_foreach(json_object_get(doc, "cases"), k, o) {
    kope_mem_case c;
    json_t *mine, *links;
    assert_int_equal(kope_mem_case_get(x->a, json_integer_value(json_object_get(o, "case_id")),
                                       0, &c, &err), KOPE_OK);
    for (i = 0; i < mem_n_case_fields; i++)
      check_json_field(o, &c, &mem_case_fields[i]);
    assert_true(json_is_string(json_object_get(o, "session_uid")) == (c.in.session_id != 0));
    assert_true(json_is_string(json_object_get(o, "prev_uid")) == (c.in.prev_case_id != 0));
    assert_non_null(json_object_get(json_object_get(doc, "sources"), c.in.code_after_hash));
    links = json_deep_copy(o);
    json_object_del(links, field("in.prev_case_id")->aux);
    json_object_del(links, field("in.session_id")->aux);
    mine = kope_mem_case_json(&c, 0);
    assert_true(json_equal(links, mine));
    json_decref(links);
    json_decref(mine);
    kope_mem_case_release(&c);
  }
  json_decref(doc);
  free(path);
}

/* Import into a second store: every field but the local ids and the
 * provenance equals the original. */
static void test_import(void **state)
{
  fx *x = *state;
  kope_err err = {0};
  kope_mem_import_stats st;
  char *path;
  json_t *doc = export_a(x, &path);
  int64_t *lin = NULL;
  size_t n = 0, i;
  int k;

  assert_int_equal(kope_mem_import(x->b, path, &st, &err), KOPE_OK);
  assert_int_equal(st.cases_new, 2);
  for (k = 0; k < 2; k++) {
    kope_mem_case a, b;
    int64_t bid = 0;
    assert_int_equal(kope_mem_case_get(x->a, k ? x->child : x->root, KOPE_MEM_WITH_CODE, &a,
                                       &err), KOPE_OK);
    for (bid = 1; bid <= 2; bid++) {   /* the imported Case with a's uid */
      assert_int_equal(kope_mem_case_get(x->b, bid, KOPE_MEM_WITH_CODE, &b, &err), KOPE_OK);
      if (!strcmp(b.uid, a.uid))
        break;
      kope_mem_case_release(&b);
    }
    assert_true(bid <= 2);
    for (i = 0; i < mem_n_case_fields; i++) {
      const mem_field *f = &mem_case_fields[i];
      if (f->kind == MF_LINK || !strcmp(f->name, "id") || !strcmp(f->name, "origin"))
        continue;
      if (!same(&a, &b, f))
        fail_msg("Case %d: field %s differs after import", k, f->name);
    }
    assert_non_null(b.origin);
    assert_true((a.in.prev_case_id != 0) == (b.in.prev_case_id != 0));
    assert_true((a.in.session_id != 0) == (b.in.session_id != 0));
    if (k == 1) {
      assert_int_equal(kope_mem_lineage(x->b, b.id, &lin, &n, &err), KOPE_OK);
      assert_int_equal(n, 2);
      free(lin);
    }
    kope_mem_case_release(&a);
    kope_mem_case_release(&b);
  }
  json_decref(doc);
  free(path);
}

/* BRIEF holds exactly the MF_BRIEF fields; CODE adds the loaded texts. */
static void test_brief_code(void **state)
{
  fx *x = *state;
  kope_err err = {0};
  kope_mem_case c;
  json_t *brief, *full;
  size_t i;

  assert_int_equal(kope_mem_case_get(x->a, x->child, KOPE_MEM_WITH_CODE, &c, &err), KOPE_OK);
  brief = kope_mem_case_json(&c, KOPE_MEM_JSON_BRIEF);
  full = kope_mem_case_json(&c, KOPE_MEM_JSON_CODE);
  for (i = 0; i < mem_n_case_fields; i++) {
    const mem_field *f = &mem_case_fields[i];
    json_t *bp = f->group[0] ? json_object_get(brief, f->group) : brief;
    json_t *fp = f->group[0] ? json_object_get(full, f->group) : full;
    assert_true((json_object_get(bp, f->key) != NULL) == ((f->flags & MF_BRIEF) != 0));
    assert_non_null(json_object_get(fp, f->key));
    if (f->kind == MF_SRC)
      assert_string_equal(json_string_value(json_object_get(fp, f->aux)),
                          *MF_CAT(&c, f, mf_str));
  }
  assert_null(json_object_get(full, "prev_uid"));
  json_decref(brief);
  json_decref(full);
  kope_mem_case_release(&c);
}

/* kope_db_copy: the copy is the same store (uuid, every Case field); an
 * unwritable destination is an environment error. */
static void test_copy(void **state)
{
  fx *x = *state;
  kope_err err = {0};
  char *p = kope_path_join(x->dir, "copy.db");
  kope_db *c;
  kope_mem_case a, b;
  size_t i;

  assert_int_equal(kope_db_copy(x->a, p, &err), KOPE_OK);
  c = kope_db_open(p, KOPE_DB_NOCREATE | KOPE_DB_READONLY, &err);
  assert_non_null(c);
  assert_string_equal(kope_db_uuid(c), kope_db_uuid(x->a));
  assert_int_equal(kope_mem_case_get(x->a, x->child, KOPE_MEM_WITH_CODE, &a, &err), KOPE_OK);
  assert_int_equal(kope_mem_case_get(c, x->child, KOPE_MEM_WITH_CODE, &b, &err), KOPE_OK);
  for (i = 0; i < mem_n_case_fields; i++)
    if (!same(&a, &b, &mem_case_fields[i]))
      fail_msg("field %s differs in the copy", mem_case_fields[i].name);
  kope_mem_case_release(&a);
  kope_mem_case_release(&b);
  kope_db_close(c);
  assert_int_equal(kope_db_copy(x->a, "/proc/kope-no/such.db", &err), KOPE_EENV);
  free(p);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_input_part),
    cmocka_unit_test_setup_teardown(test_insert_read, setup, teardown),
    cmocka_unit_test_setup_teardown(test_export, setup, teardown),
    cmocka_unit_test_setup_teardown(test_import, setup, teardown),
    cmocka_unit_test_setup_teardown(test_brief_code, setup, teardown),
    cmocka_unit_test_setup_teardown(test_copy, setup, teardown),
  };

  return cmocka_run_group_tests(tests, NULL, NULL);
}
