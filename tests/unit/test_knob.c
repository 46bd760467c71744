/*
 * Unit tests for knob annotations (src/op/knob.c): parsing names, layers,
 * values, descriptions and line numbers; applying a value rewrites only
 * that token of that line; malformed annotations are KOPE_EINPUT errors
 * naming "file:LINE:"; thought ids; and every shipped seed kernel declares
 * knobs from at least two optimization layers, each of which applies.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "kope_test.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kope/core.h"
#include "kope/op.h"

static const char *const g_src =
  "/* a test kernel */\n"                                                            /* 1 */
  "#include <stdint.h>\n"                                                            /* 2 */
  "#define PAR 1   // @knob layer=parallel values=0,1 \"split rows across threads\"\n" /* 3 */
  "int unrelated = 64;\n"                                                            /* 4 */
  "#define BLOCK 64 // @knob layer=tiling values=32,64,128 \"tile size\"\n"          /* 5 */
  "\n"                                                                               /* 6 */
  "  #  define VEC 8  /* @knob layer=vectorize values=0,8,16 \"vector width\" */\n"  /* 7 */
  "#define PLAIN 64\n"                                                               /* 8 */
  "void f(float *y) { y[0] = BLOCK * VEC * PAR * PLAIN; }\n";                        /* 9 */

static void test_parse(void **state)
{
  kope_err err = {0, ""};
  kope_knob *k = NULL;
  size_t n = 99;

  (void)state;
  assert_int_equal(kope_knobs_parse(g_src, "k.c", &k, &n, &err), KOPE_OK);
  assert_int_equal(n, 3);

  assert_string_equal(k[0].name, "PAR");
  assert_string_equal(k[0].layer, "parallel");
  assert_string_equal(k[0].value, "1");
  assert_int_equal(k[0].nvalues, 2);
  assert_string_equal(k[0].values[0], "0");
  assert_string_equal(k[0].values[1], "1");
  assert_string_equal(k[0].desc, "split rows across threads");
  assert_int_equal(k[0].line, 3);

  assert_string_equal(k[1].name, "BLOCK");
  assert_string_equal(k[1].layer, "tiling");
  assert_string_equal(k[1].value, "64");
  assert_int_equal(k[1].nvalues, 3);
  assert_string_equal(k[1].values[0], "32");
  assert_string_equal(k[1].values[1], "64");
  assert_string_equal(k[1].values[2], "128");
  assert_string_equal(k[1].desc, "tile size");
  assert_int_equal(k[1].line, 5);

  assert_string_equal(k[2].name, "VEC");
  assert_string_equal(k[2].layer, "vectorize");
  assert_string_equal(k[2].value, "8");
  assert_int_equal(k[2].nvalues, 3);
  assert_string_equal(k[2].values[2], "16");
  assert_string_equal(k[2].desc, "vector width");
  assert_int_equal(k[2].line, 7);
  free(k);

  /* no knobs at all */
  k = NULL;
  assert_int_equal(kope_knobs_parse("int x;\n#define A 1\n", "e.c", &k, &n, &err), KOPE_OK);
  assert_int_equal(n, 0);
  free(k);
  k = NULL;
  assert_int_equal(kope_knobs_parse("", "e.c", &k, &n, &err), KOPE_OK);
  assert_int_equal(n, 0);
  free(k);

  /* the six layers */
  assert_string_equal(kope_knob_layers[0], "parallel");
  assert_null(kope_knob_layers[6]);
}

/* src with line `line` (1-based) replaced by repl. Caller frees. */
static char *replace_line(const char *src, int line, const char *repl)
{
  kope_buf b;
  const char *p = src, *e;
  int l = 1;

  kope_buf_init(&b, 0);
  while (*p) {
    e = strchr(p, '\n');
    if (!e)
      e = p + strlen(p);
    if (l == line)
      kope_buf_puts(&b, repl);
    else
      kope_buf_append(&b, p, (size_t)(e - p));
    if (*e == '\n') {
      kope_buf_puts(&b, "\n");
      e++;
    }
    p = e;
    l++;
  }
  return kope_buf_steal(&b);
}

/* kope_knobs_plain: every knob at its first listed value, nothing else
 * touched; a malformed annotation names the file. */
static void test_plain(void **state)
{
  kope_err err = {0, ""};
  kope_knob *k = NULL;
  size_t n;
  char *out, *want, *tmp;

  (void)state;
  out = kope_knobs_plain(g_src, "k.c", &err);
  if (!out)
    fail_msg("%s", err.msg);
  tmp = replace_line(g_src, 3, "#define PAR 0   // @knob layer=parallel values=0,1 "
                               "\"split rows across threads\"");
  want = replace_line(tmp, 5, "#define BLOCK 32 // @knob layer=tiling values=32,64,128 "
                              "\"tile size\"");
  free(tmp);
  tmp = want;
  want = replace_line(tmp, 7, "  #  define VEC 0  /* @knob layer=vectorize values=0,8,16 "
                              "\"vector width\" */");
  free(tmp);
  assert_string_equal(out, want);
  assert_int_equal(kope_knobs_parse(out, "k.c", &k, &n, &err), KOPE_OK);
  assert_int_equal(n, 3);
  assert_string_equal(k[0].value, "0");
  assert_string_equal(k[1].value, "32");
  assert_string_equal(k[2].value, "0");
  free(k);
  free(out);
  free(want);
  /* already plain: unchanged; no knobs: unchanged */
  out = kope_knobs_plain("int x;\n", "k.c", &err);
  assert_non_null(out);
  assert_string_equal(out, "int x;\n");
  free(out);
  assert_null(kope_knobs_plain("#define A 1 // @knob layer=nope values=1,2\n", "bad.c", &err));
  assert_int_equal(err.code, KOPE_EINPUT);
  assert_contains(err.msg, "bad.c");
}

static void test_apply(void **state)
{
  kope_err err = {0, ""};
  char *out, *want;
  kope_knob *k = NULL;
  size_t n;

  (void)state;
  out = kope_knobs_apply(g_src, "BLOCK", "128", &err);
  if (!out)
    fail_msg("%s", err.msg);
  want = replace_line(g_src, 5,
                      "#define BLOCK 128 // @knob layer=tiling values=32,64,128 \"tile size\"");
  assert_string_equal(out, want);
  assert_int_equal(strlen(out), strlen(g_src) + 1);
  /* the new value parses back */
  assert_int_equal(kope_knobs_parse(out, "k.c", &k, &n, &err), KOPE_OK);
  assert_int_equal(n, 3);
  assert_string_equal(k[1].value, "128");
  assert_string_equal(k[0].value, "1");
  assert_string_equal(k[2].value, "8");
  free(k);
  /* and back again to the original, byte for byte */
  {
    char *back = kope_knobs_apply(out, "BLOCK", "64", &err);
    assert_non_null(back);
    assert_string_equal(back, g_src);
    free(back);
  }
  free(out);
  free(want);

  /* a shorter value, on the indented, block-comment line */
  out = kope_knobs_apply(g_src, "VEC", "0", &err);
  if (!out)
    fail_msg("%s", err.msg);
  want = replace_line(g_src, 7, "  #  define VEC 0  /* @knob layer=vectorize values=0,8,16 "
                                "\"vector width\" */");
  assert_string_equal(out, want);
  free(out);
  free(want);

  /* the first knob */
  out = kope_knobs_apply(g_src, "PAR", "0", &err);
  assert_non_null(out);
  want = replace_line(g_src, 3, "#define PAR 0   // @knob layer=parallel values=0,1 "
                                "\"split rows across threads\"");
  assert_string_equal(out, want);
  free(out);
  free(want);

  /* the current value: unchanged text */
  out = kope_knobs_apply(g_src, "BLOCK", "64", &err);
  assert_non_null(out);
  assert_string_equal(out, g_src);
  free(out);

  /* a name that contains the value, and a file without a final newline */
  {
    const char *s = "#define T64 64 // @knob layer=memory values=64,128\nint z = 64;";
    out = kope_knobs_apply(s, "T64", "128", &err);
    assert_non_null(out);
    assert_string_equal(out, "#define T64 128 // @knob layer=memory values=64,128\n"
                             "int z = 64;");
    free(out);
    s = "x\n#define T64 64 // @knob layer=memory values=64,128";
    out = kope_knobs_apply(s, "T64", "128", &err);
    assert_non_null(out);
    assert_string_equal(out, "x\n#define T64 128 // @knob layer=memory values=64,128");
    free(out);
  }
}

static void test_apply_refuses(void **state)
{
  kope_err err = {0, ""};

  (void)state;
  assert_null(kope_knobs_apply(g_src, "NOPE", "1", &err));
  assert_int_equal(err.code, KOPE_EINPUT);
  assert_contains(err.msg, "NOPE");
  kope_err_clear(&err);
  /* a plain #define is not a knob */
  assert_null(kope_knobs_apply(g_src, "PLAIN", "32", &err));
  assert_int_equal(err.code, KOPE_EINPUT);
  kope_err_clear(&err);
  assert_null(kope_knobs_apply(g_src, "BLOCK", "48", &err));
  assert_int_equal(err.code, KOPE_EINPUT);
  assert_contains(err.msg, "48");
  kope_err_clear(&err);
  assert_null(kope_knobs_apply(g_src, "BLOCK", "6", &err));   /* a prefix of 64 */
  assert_int_equal(err.code, KOPE_EINPUT);
  kope_err_clear(&err);
  assert_null(kope_knobs_apply(g_src, "BLOCK", "", &err));
  assert_int_equal(err.code, KOPE_EINPUT);
  kope_err_clear(&err);
  /* a malformed source is refused too */
  assert_null(kope_knobs_apply("#define A 3 // @knob layer=tiling values=1,2\n", "A", "1",
                               &err));
  assert_int_equal(err.code, KOPE_EINPUT);
}

/* Parse src, expecting KOPE_EINPUT with "file:LINE:" and needle. */
static void expect_bad(const char *src, int line, const char *needle)
{
  kope_err err = {0, ""};
  kope_knob *k = NULL;
  size_t n = 0;
  char where[32];
  int rc = kope_knobs_parse(src, "bad.c", &k, &n, &err);

  free(k);
  if (rc == KOPE_OK)
    fail_msg("accepted: %s", src);
  assert_int_equal(rc, KOPE_EINPUT);
  assert_int_equal(err.code, KOPE_EINPUT);
  snprintf(where, sizeof where, "bad.c:%d:", line);
  assert_contains(err.msg, where);
  if (needle)
    assert_contains(err.msg, needle);
}

static void test_malformed(void **state)
{
  (void)state;
  /* unknown layer */
  expect_bad("int a;\n#define X 1 // @knob layer=magic values=0,1\n", 2, "layer");
  /* the #define's value not in values= */
  expect_bad("\n\n#define X 3 // @knob layer=tiling values=1,2\n", 3, "values");
  /* @knob on a line that is not a #define */
  expect_bad("int x = 1; // @knob layer=tiling values=1,2\n", 1, "#define");
  expect_bad("#include <x.h> // @knob layer=tiling values=1,2\n", 1, NULL);
  /* the same knob twice */
  expect_bad("#define X 1 // @knob layer=tiling values=1,2\n"
             "int y;\n"
             "#define X 2 // @knob layer=memory values=1,2\n", 3, "X");
  /* missing parts */
  expect_bad("#define X 1 // @knob values=1,2\n", 1, "layer");
  expect_bad("#define X 1 // @knob layer=tiling\n", 1, "values");
  expect_bad("#define X 1 // @knob layer=tiling values=\n", 1, "values");
  expect_bad("#define X 1 // @knob layer=tiling values=1,2 \"no end\n", 1, "description");
  expect_bad("#define X 1 // @knob layer=tiling values=1,2 color=red\n", 1, NULL);
  /* a define without a value, a function-like macro */
  expect_bad("#define X // @knob layer=tiling values=1,2\n", 1, NULL);
  expect_bad("#define F(x) 1 // @knob layer=tiling values=1,2\n", 1, NULL);
  /* more than 16 values */
  expect_bad("#define X 1 // @knob layer=tiling "
             "values=1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17\n", 1, NULL);
  /* the error names the right line well into a file */
  expect_bad("a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n#define Q 1 // @knob layer=algorithm "
             "values=1 \"fine\"\n#define R 1 // @knob layer=nope values=1\n", 12, NULL);
}

static void test_thought_id(void **state)
{
  kope_knob k;
  char *id;

  (void)state;
  memset(&k, 0, sizeof k);
  snprintf(k.name, sizeof k.name, "BLOCK");
  snprintf(k.layer, sizeof k.layer, "tiling");
  id = kope_knob_thought_id(&k, "64");
  assert_string_equal(id, "tiling.block=64");
  free(id);
  snprintf(k.name, sizeof k.name, "K_UNROLL2");
  snprintf(k.layer, sizeof k.layer, "instruction");
  id = kope_knob_thought_id(&k, "4");
  assert_string_equal(id, "instruction.k_unroll2=4");
  free(id);
}

/* BUG candidate: a source with CRLF line endings (a kernel saved on
 * Windows, or an LLM reply with \r\n) is refused: the '\r' after the
 * description is taken for an unknown annotation part. Expected: parsed
 * like the LF version, and applying keeps the CRLF endings. */
static void test_crlf(void **state)
{
  const char *src = "#include <stdint.h>\r\n"
                    "#define BLOCK 64 // @knob layer=tiling values=32,64 \"tile\"\r\n"
                    "int x;\r\n";
  kope_err err = {0, ""};
  kope_knob *k = NULL;
  size_t n = 0;
  int rc;
  char *out;

  (void)state;
  rc = kope_knobs_parse(src, "crlf.c", &k, &n, &err);
  free(k);
  if (rc != KOPE_OK)
    fail_msg("CRLF source refused: %s", err.msg);
  assert_int_equal(n, 1);
  out = kope_knobs_apply(src, "BLOCK", "32", &err);
  assert_non_null(out);
  assert_string_equal(out, "#include <stdint.h>\r\n"
                           "#define BLOCK 32 // @knob layer=tiling values=32,64 \"tile\"\r\n"
                           "int x;\r\n");
  free(out);
}

static void test_shipped_seeds(void **state)
{
  char *dir = kt_ops_dir(), **names = NULL;
  size_t nops = 0, i, j, v;
  kope_err err = {0, ""};

  (void)state;
  assert_int_equal(kope_ops_list(dir, &names, &nops, &err), KOPE_OK);
  assert_true(nops >= 4);
  for (i = 0; i < nops; i++) {
    char *opdir = kope_path_join(dir, names[i]), *path = kope_path_join(opdir, "seed.c");
    char *src = kope_file_read(path, NULL, &err);
    kope_knob *k = NULL;
    size_t n = 0;
    int layers = 0, l;
    if (!src)
      fail_msg("%s: %s", path, err.msg);
    if (kope_knobs_parse(src, path, &k, &n, &err) != KOPE_OK)
      fail_msg("%s: %s", path, err.msg);
    for (l = 0; kope_knob_layers[l]; l++)
      for (j = 0; j < n; j++)
        if (!strcmp(k[j].layer, kope_knob_layers[l])) {
          layers++;
          break;
        }
    if (layers < 2)
      fail_msg("%s: knobs from %d layer(s), expected at least 2", path, layers);
    /* every allowed value of every knob applies and reads back */
    for (j = 0; j < n; j++) {
      assert_true(k[j].line > 0);
      assert_true(k[j].nvalues >= 2);
      for (v = 0; v < (size_t)k[j].nvalues; v++) {
        char *out = kope_knobs_apply(src, k[j].name, k[j].values[v], &err);
        kope_knob *k2 = NULL;
        size_t n2 = 0;
        if (!out)
          fail_msg("%s: %s=%s: %s", path, k[j].name, k[j].values[v], err.msg);
        assert_int_equal(kope_knobs_parse(out, path, &k2, &n2, &err), KOPE_OK);
        assert_int_equal(n2, n);
        assert_string_equal(k2[j].value, k[j].values[v]);
        assert_int_equal(strlen(out) + strlen(k[j].value),
                         strlen(src) + strlen(k[j].values[v]));
        free(k2);
        free(out);
      }
    }
    free(k);
    free(src);
    free(path);
    free(opdir);
  }
  kope_strv_free(names, nops);
  free(dir);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_parse),
    cmocka_unit_test(test_apply),
    cmocka_unit_test(test_plain),
    cmocka_unit_test(test_apply_refuses),
    cmocka_unit_test(test_malformed),
    cmocka_unit_test(test_thought_id),
    cmocka_unit_test(test_crlf),
    cmocka_unit_test(test_shipped_seeds),
  };

  return cmocka_run_group_tests(tests, NULL, NULL);
}
