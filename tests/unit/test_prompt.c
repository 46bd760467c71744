/*
 * Unit tests of the rendered LLM prompt (src/ctx/render.c, gather.c): the
 * system prompt states the promotion rule with the session's min gain and
 * alpha and what to build on; each recent candidate says why it was or
 * was not promoted; the best unpromoted correct candidate's code is shown;
 * the incumbent says which measurement its figures come from; the spec
 * states how tolerances combine, the input distribution, how timing is
 * done and every case with its name, shape and role; the experience lines
 * come with a legend for r, d and c; only knowledge cards relevant to the
 * operator's category are admitted, with no doubled heading or stray
 * line, in full at step 1 and as a reminder at the next steps; the Target
 * section gives the compute peak by the roofline review's rule (max of
 * all threads and threads x one thread), every level's bandwidth on all
 * threads and one, and marks a suspect profile. A real operator
 * (ops/softmax), a real temporary SQLite store and real Cases.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include "kope_test.h"
#include "kt_ctx.h"
#include "hw/hw_int.h"
#include "kope/core.h"
#include "kope/ctx.h"
#include "kope/mem.h"
#include "kope/op.h"
#include "kope/target.h"

typedef struct fx {
  kt_ctx k;   /* dir, db, op, seed */
  kope_ctx_state s;
} fx;

static void write_file(const char *dir, const char *name, const char *text)
{
  char *p = kope_path_join(dir, name);
  FILE *f = fopen(p, "w");

  assert_non_null(f);
  fputs(text, f);
  fclose(f);
  free(p);
}

static int setup(void **state)
{
  fx *f = calloc(1, sizeof *f);

  kt_ctx_open(&f->k, "softmax", "prompttest", &f->s);
  *state = f;
  return 0;
}

static int teardown(void **state)
{
  fx *f = *state;

  kt_ctx_close(&f->k);
  free(f);
  return 0;
}

/* Render f->s into *sys and *user (caller frees both). */
static void render(fx *f, kope_db *db, char **sys, char **user)
{
  kope_err err = {0};
  kope_ctx *c = kope_ctx_build(&f->s, db, KOPE_CTX_ACTIVE, NULL, &err);

  assert_non_null(c);
  assert_int_equal(kope_ctx_render(c, sys, user, &err), KOPE_OK);
  kope_ctx_free(c);
}

static size_t occurrences(const char *hay, const char *needle)
{
  size_t n = 0;
  const char *p = hay;

  while ((p = strstr(p, needle))) {
    n++;
    p += strlen(needle);
  }
  return n;
}

static void test_rule(void **state)
{
  fx *f = *state;
  char *sys, *user;

  render(f, NULL, &sys, &user);
  assert_non_null(strstr(sys, "Promotion rule"));
  assert_non_null(strstr(sys, "at least 1.05x"));
  assert_non_null(strstr(sys, "sign-test p below 0.05"));
  assert_non_null(strstr(sys, "(one-sided: the chance, were the two kernels equally"));
  assert_non_null(strstr(sys, "re-measured once"));
  assert_non_null(strstr(sys, "carry over any improvement"));
  assert_null(strstr(sys, "one focused change per"));
  free(sys);
  free(user);
  f->s.min_gain = 0.2;
  f->s.alpha = 0.01;
  render(f, NULL, &sys, &user);
  assert_non_null(strstr(sys, "at least 1.20x"));
  assert_non_null(strstr(sys, "sign-test p below 0.01"));
  free(sys);
  free(user);
}

static kope_ctx_step step_of(int64_t n, const char *title, int correct, double r, double lo,
                             double p, const char *src)
{
  kope_ctx_step h;

  memset(&h, 0, sizeof h);
  h.step = n;
  h.thought_id = "algorithm.x";
  h.title = title;
  h.verdict = correct ? "correct" : "compile_error";
  h.correct = correct;
  h.speedup_ref = correct ? 2.0 * r : 0.0;
  h.vs_incumbent = correct ? r : 0.0;
  h.vs_lo = correct ? lo : 0.0;
  h.vs_hi = correct ? r + 0.1 : 0.0;
  h.p_value = correct ? p : 1.0;
  h.source = src;
  return h;
}

static void test_reasons(void **state)
{
  fx *f = *state;
  kope_ctx_step h[6];
  char *sys, *user;

  h[0] = step_of(1, "promoted one", 1, 1.5, 1.3, 0.001, "/* SRC_PROMOTED */");
  h[0].promoted = 1;
  h[0].remeasured = 1;
  h[0].re_speedup = 1.45;
  h[0].re_lo = 1.2;
  h[0].re_hi = 1.6;
  h[0].re_p = 0.002;
  h[1] = step_of(2, "small gain", 1, 1.03, 1.01, 0.01, "/* SRC_SMALL */");
  h[2] = step_of(3, "wide ci", 1, 1.4, 0.95, 0.01, "/* SRC_WIDE */");
  h[3] = step_of(4, "high p", 1, 1.2, 1.05, 0.3, "/* SRC_P */");
  h[4] = step_of(5, "not confirmed", 1, 1.3, 1.1, 0.001, "/* SRC_BEST */");
  h[4].remeasured = -1;
  h[4].re_speedup = 1.02;
  h[4].re_lo = 0.97;
  h[4].re_hi = 1.08;
  h[4].re_p = 0.4;
  h[5] = step_of(6, "broken", 0, 0, 0, 1, "/* SRC_BROKEN */");
  f->s.history = h;
  f->s.nhistory = 6;
  f->s.step = 7;
  render(f, NULL, &sys, &user);
  assert_non_null(strstr(user, "Recent candidates and why"));
  assert_non_null(strstr(user, "step 1 algorithm.x (promoted one): 1.500x"));
  assert_non_null(strstr(user, "PROMOTED: re-measurement confirmed 1.450x [1.200, 1.600]"));
  assert_non_null(strstr(user, "gain 1.030x below the required 1.05x"));
  assert_non_null(strstr(user, "CI lower bound 0.950 not above 1"));
  assert_non_null(strstr(user, "sign-test p 0.3 not below 0.05"));
  assert_non_null(strstr(user, "the re-measurement gave 1.020x [0.970, 1.080]"));
  assert_non_null(strstr(user, "not promoted: verdict compile_error"));
  /* the fastest unpromoted correct candidate since the promotion: step 4
   * (1.4x; 1.3x of step 5 is slower), its code shown, the others' not */
  assert_non_null(strstr(user, "Best recent candidate that was not promoted"));
  assert_non_null(strstr(user, "Step 3 (wide ci): correct, 1.400x vs the current incumbent"));
  assert_int_equal(occurrences(user, "/* SRC_WIDE */"), 1);
  assert_null(strstr(user, "/* SRC_BEST */"));
  assert_null(strstr(user, "/* SRC_PROMOTED */"));
  assert_null(strstr(user, "/* SRC_BROKEN */"));
  free(sys);
  free(user);
  /* a 1.03x candidate since the promotion is shown; with only the
   * promoted step there is nothing to show */
  f->s.nhistory = 2;
  render(f, NULL, &sys, &user);
  assert_non_null(strstr(user, "/* SRC_SMALL */"));
  free(sys);
  free(user);
  f->s.nhistory = 1;
  render(f, NULL, &sys, &user);
  assert_null(strstr(user, "Best recent candidate that was not promoted"));
  free(sys);
  free(user);
}

/* A long incumbent with many distinct lines (the diff must find them). */
static char *long_source(const char *changed)
{
  kope_buf b;
  int i;

  kope_buf_init(&b, 0);
  for (i = 0; i < 800; i++)
    if (i == 300 && changed)
      kope_buf_printf(&b, "%s\n", changed);
    else
      kope_buf_printf(&b, "    acc%d = fmaf(a[%d], b[%d], acc%d);\n", i % 8, i, i, i % 8);
  return b.data;
}

static void test_unpromoted_diff(void **state)
{
  fx *f = *state;
  kope_ctx_step h[1];
  char *sys, *user, *inc = long_source(NULL), *cand = long_source("    /* NEW_LINE */");
  const char *d;

  assert_true(strlen(cand) > 20000);
  f->s.incumbent = inc;
  h[0] = step_of(1, "long candidate", 1, 1.3, 0.9, 0.2, cand);
  f->s.history = h;
  f->s.nhistory = 1;
  render(f, NULL, &sys, &user);
  assert_non_null(strstr(user, "as a line diff against the incumbent's code above"));
  d = strstr(user, "```diff\n");
  assert_non_null(d);
  /* one hunk: two lines of context, the removed and the added line */
  assert_non_null(strstr(d, "@@ incumbent line 299, candidate line 299 @@\n"
                            "     acc2 = fmaf(a[298], b[298], acc2);\n"
                            "     acc3 = fmaf(a[299], b[299], acc3);\n"
                            "-    acc4 = fmaf(a[300], b[300], acc4);\n"
                            "+    /* NEW_LINE */\n"
                            "     acc5 = fmaf(a[301], b[301], acc5);\n"));
  assert_int_equal(occurrences(user, "@@ incumbent line"), 1);
  assert_int_equal(occurrences(user, "acc0 = fmaf(a[0]"), 1);   /* the incumbent's copy only */
  free(sys);
  free(user);
  /* a 15,000-character candidate (a real model's size) is shown whole */
  {
    char *cut = strchr(cand + 15000, '\n');
    cut[1] = '\0';
    h[0].source = cand;
    render(f, NULL, &sys, &user);
    assert_null(strstr(user, "```diff\n"));
    assert_non_null(strstr(user, cand));
    free(sys);
    free(user);
  }
  f->s.incumbent = f->k.seed;
  free(inc);
  free(cand);
}

/* After a promotion the incumbent's own per-case times are shown (timed
 * cases only), not only the candidates'. */
static void test_incumbent_cases(void **state)
{
  fx *f = *state;
  kope_ctx_step h[2];
  char *sys, *user;
  const char *inc;

  h[0] = step_of(1, "promoted one", 1, 1.5, 1.3, 0.001, f->k.seed);
  h[0].promoted = 1;
  h[0].remeasured = 1;
  h[0].feedback = "verdict: correct\n"
                  "  case 0 \"tiny\" (rows=1 cols=1): correct (check case, not timed)\n"
                  "  case 9 \"big\" (rows=512 cols=4096): 3.250x [3.100, 3.400] vs reference, "
                  "1.500x [1.400, 1.600] vs incumbent, 0.00123 s/call\n";
  h[1] = step_of(2, "later", 1, 0.9, 0.8, 0.5, "/* LATER */");
  h[1].feedback = "  case 9 \"big\" (rows=512 cols=4096): 2.000x [1.900, 2.100] 0.00200 s/call\n";
  f->s.history = h;
  f->s.nhistory = 2;
  f->s.feedback = h[1].feedback;
  render(f, NULL, &sys, &user);
  inc = strstr(user, "## Incumbent");
  assert_non_null(inc);
  assert_non_null(strstr(inc, "Its timed cases at its own step 1 (first measurement, vs the "
                              "reference and, where given, vs the kernel it replaced):\n"
                              "  case 9 \"big\" (rows=512 cols=4096): 3.250x [3.100, 3.400] "
                              "vs reference, 1.500x [1.400, 1.600] vs incumbent, 0.00123 s/call\n"));
  assert_null(strstr(user, "(check case, not timed)"));   /* only timed cases are copied */
  free(sys);
  free(user);
  f->s.feedback = NULL;
}

static void test_noisy(void **state)
{
  fx *f = *state;
  kope_ctx_step h[2];
  char *sys, *user;

  h[0] = step_of(1, "steady", 1, 1.02, 1.0, 0.2, "/* A */");
  h[0].vs_hi = 1.04;
  h[1] = step_of(2, "noisy", 1, 1.2, 0.8, 0.2, "/* B */");
  h[1].vs_hi = 1.6;   /* 1.6 / 0.8 = 2x */
  f->s.history = h;
  f->s.nhistory = 2;
  render(f, NULL, &sys, &user);
  assert_int_equal(occurrences(user, "WARNING: very noisy measurement"), 1);
  assert_non_null(strstr(user, "(noisy): 1.200x vs its incumbent [0.800, 1.600]"));
  assert_non_null(strstr(user, "CI spans 2.00x"));
  free(sys);
  free(user);
}

static void test_incumbent_source(void **state)
{
  fx *f = *state;
  char *sys, *user;

  render(f, NULL, &sys, &user);
  assert_non_null(strstr(user, "Speedup vs reference 1.500x (first measurement)"));
  free(sys);
  free(user);
  f->s.inc_remeasured = 1;
  render(f, NULL, &sys, &user);
  assert_non_null(strstr(user, "1.500x (from its confirming re-measurement"));
  assert_non_null(strstr(user, "Latest feedback (first measurement") || !f->s.feedback);
  free(sys);
  free(user);
}

static void test_spec(void **state)
{
  fx *f = *state;
  char *sys, *user, *line;
  size_t i, nperf = 0;

  render(f, NULL, &sys, &user);
  assert_non_null(strstr(user, "|got - exp| <= atol + rtol*|exp| + nrtol*rms(exp)"));
  assert_non_null(strstr(user, "NaN and Inf positions must match"));
  assert_non_null(strstr(user, "- x: in f32 [rows x cols], normal(mean 0, std 1)"));
  assert_non_null(strstr(user, "median of the per-round time ratios"));
  assert_non_null(strstr(user, "rotate over up to 4 buffer sets"));
  assert_non_null(strstr(user, "one pinned per CPU"));
  assert_non_null(strstr(user, "GOMP_SPINCOUNT=10000"));
  assert_non_null(strstr(user, "no writable static or global variables"));
  /* what answerers asked (2026-12-04): the timed sets' inputs, when outputs
   * are poisoned, what s/call holds, whether knobs are swept */
  assert_non_null(strstr(user, "the timed sets hold inputs of the distribution stated per argument"));
  assert_non_null(strstr(user, "poisoned (NaN, written by kope's process) once before every "
                               "round, not before every call"));
  assert_non_null(strstr(user, "s/call is the batch's time over its calls less the round trip"));
  assert_non_null(strstr(user, "kope measures the values as written"));
  for (i = 0; i < kope_op_ncases(f->k.op); i++) {
    char *label = kope_op_case_label(f->k.op, i);
    const char *src = kope_op_case_source(f->k.op, i);
    line = kope_sprintf("- case %zu %s %s: %s", i, kope_op_case_name(f->k.op, i), label,
                        kope_op_case_timed(f->k.op, i) ? "perf" : "check (correctness only");
    assert_non_null(strstr(user, line));
    if (*src)
      assert_non_null(strstr(user, src));
    if (kope_op_case_timed(f->k.op, i)) {   /* softmax: x and y, rows x cols f32 each */
      kope_case_bind cb;
      kope_err err;
      double mib;
      char *set, *end = strstr(strstr(user, line), "\n");
      assert_int_equal(kope_op_bind(f->k.op, i, &cb, &err), KOPE_OK);
      mib = 2.0 * 4.0 * (double)cb.ival[2] * (double)cb.ival[3] / (1 << 20);
      set = mib >= 1 ? kope_sprintf("one buffer set (inputs + outputs) %.1f MiB", mib)
                     : kope_sprintf("one buffer set (inputs + outputs) %.1f KiB", mib * 1024);
      assert_non_null(strstr(strstr(user, line), set));
      assert_true(strstr(strstr(user, line), set) < end);
      free(set);
    } else {   /* a check case's line names no buffer set */
      const char *at = strstr(user, line), *end = strchr(at, '\n'), *set = strstr(at, "one buffer set");
      assert_true(!set || set > end);
    }
    nperf += kope_op_case_timed(f->k.op, i) != 0;
    free(line);
    free(label);
  }
  line = kope_sprintf("%zu timed and scored (perf)", nperf);
  assert_non_null(strstr(user, line));
  free(line);
  free(sys);
  free(user);
}

static void test_legend(void **state)
{
  fx *f = *state;
  kope_mem_case_in c;
  kope_err err = {0};
  int64_t id = 0;
  char *sys, *user;

  render(f, f->k.db, &sys, &user);
  assert_null(strstr(user, "Each experience line reads"));   /* no Cases yet */
  free(sys);
  free(user);
  kope_mem_case_in_init(&c);
  c.op = "softmax";
  c.category = "normalization";
  c.target = "cpu";
  c.layer = "algorithm";
  c.thought_id = "algorithm.online=1";
  c.thought_title = "online softmax";
  c.code_after = "/* online */";
  c.verdict = "correct";
  c.score.correct = 1;
  c.score.speedup = 2.5;
  c.feedback = "verdict: correct";
  assert_int_equal(kope_mem_case_insert(f->k.db, &c, &id, &err), KOPE_OK);
  render(f, f->k.db, &sys, &user);
  assert_non_null(strstr(user, "Each experience line reads [label r=.. d=.. c=..]"));
  assert_non_null(strstr(user, "r=1.00"));   /* the Case's own line, after the legend */
  assert_true(strstr(user, "Each experience line") < strstr(user, "r=1.00"));
  free(sys);
  free(user);
}

static void make_cards(fx *f, char *dir, size_t len)
{
  snprintf(dir, len, "%s/cards", f->k.dir);
  assert_int_equal(mkdir(dir, 0700), 0);
  write_file(dir, "a_matmul.md", "# Matmul card\nApplies to: matmul conv\n- MATMUL_BODY\n");
  write_file(dir, "b_general.md", "# General card\nApplies to: all\n- GENERAL_BODY\n");
  write_file(dir, "c_norm.md", "# Norm card\nApplies to: reduction, normalization\n- NORM_BODY\n");
  write_file(dir, "d_plain.md", "# Plain card\n- PLAIN_BODY\n");
  write_file(dir, "e_normx.md", "# Near-miss card\nApplies to: normalizationx\n- NEAR_BODY\n");
}

static void test_cards(void **state)
{
  fx *f = *state;
  char dir[128], *sys, *user;

  make_cards(f, dir, sizeof dir);
  f->s.cards_dir = dir;
  render(f, NULL, &sys, &user);
  assert_null(strstr(user, "MATMUL_BODY"));     /* softmax is normalization */
  assert_null(strstr(user, "NEAR_BODY"));       /* whole words only */
  assert_non_null(strstr(user, "## General card\n- GENERAL_BODY"));
  assert_non_null(strstr(user, "## Norm card\n- NORM_BODY"));
  assert_non_null(strstr(user, "## Plain card\n- PLAIN_BODY"));
  assert_int_equal(occurrences(user, "Norm card"), 1);   /* no doubled heading */
  assert_null(strstr(user, "Applies to:"));
  assert_null(strstr(user, "\n-\n"));                     /* no stray line */
  free(sys);
  free(user);
  /* step 2: a reminder naming the cards, not their bodies */
  f->s.step = 2;
  render(f, NULL, &sys, &user);
  assert_null(strstr(user, "GENERAL_BODY"));
  assert_non_null(strstr(user, "## Knowledge cards (reminder)\nShown in full at step 1"));
  assert_non_null(strstr(user, "General card; Norm card; Plain card."));
  free(sys);
  free(user);
  /* step 5: in full again */
  f->s.step = 5;
  render(f, NULL, &sys, &user);
  assert_non_null(strstr(user, "GENERAL_BODY"));
  assert_null(strstr(user, "(reminder)"));
  free(sys);
  free(user);
  /* step 2 after an unanswered step 1 (the provider timed out): the
   * prompt with the cards was never read, so they come in full */
  {
    kope_ctx_step h = step_of(1, "no reply", 0, 0, 0, 1, NULL);
    h.verdict = "no_kernel";
    f->s.history = &h;
    f->s.nhistory = 1;
    f->s.step = 2;
    render(f, NULL, &sys, &user);
    assert_non_null(strstr(user, "GENERAL_BODY"));
    assert_null(strstr(user, "(reminder)"));
    free(sys);
    free(user);
    f->s.history = NULL;
    f->s.nhistory = 0;
  }
}

/* The real cards of targets/cpu: nothing the model cannot run, no static
 * hardware figures (they come from the hardware profile). */
static void test_real_cards(void **state)
{
  fx *f = *state;
  char *sys, *user, *cards;

  f->s.cards_dir = NULL;
  render(f, NULL, &sys, &user);
  cards = strstr(user, "# Background knowledge");
  assert_non_null(cards);
  assert_null(strstr(cards, "kope hw"));
  assert_null(strstr(cards, "KiB"));
  assert_null(strstr(cards, "MiB"));
  assert_null(strstr(cards, "GB/s"));
  assert_null(strstr(cards, "-core"));
  assert_null(strstr(cards, "Matmul-like"));
  assert_non_null(strstr(cards, "Reductions, normalization"));
  assert_null(strstr(cards, "\n-\n"));
  free(sys);
  free(user);
}

/* A profile with known figures (the internal structure, so no machine
 * is measured): the all-threads peak measured low, as under load. */
static kope_hw *fake_hw(const char *suspect)
{
  kope_hw *hw = calloc(1, sizeof *hw);
  static const double bw[5][2] = {{0, 0}, {160, 110}, {170, 90}, {150, 60}, {30, 20}};

  assert_non_null(hw);
  hw->cpu_model = kope_strdup("Test CPU");
  hw->simd = kope_strdup("avx2 fma");
  hw->compiler = kope_strdup("gcc 12");
  hw->fingerprint = kope_strdup("test");
  hw->cores = hw->threads = hw->bench_threads = 2;
  hw->cache[1] = 32 << 10;
  hw->cache[2] = 1 << 20;
  hw->cache[3] = 32 << 20;
  hw->peak_gflops = 150.0;
  hw->peak_one_gflops = 110.0;
  memcpy(hw->bw, bw, sizeof bw);
  hw->bandwidth_gbs = 30.0;
  hw->suspect = suspect ? kope_strdup(suspect) : NULL;
  return hw;
}

/* The Target section as kope optimize builds it (the cpu target's
 * description of the profile), rendered into the prompt. */
static char *target_prompt(fx *f, const char *suspect)
{
  kope_err err = {0};
  kope_target *t = kope_target_open("cpu", &err);
  kope_hw *hw = fake_hw(suspect);
  char *text, *sys, *user;

  assert_non_null(t);
  text = kope_target_describe(t, hw);
  assert_non_null(text);
  f->s.target_text = text;
  render(f, NULL, &sys, &user);
  free(sys);
  free(text);
  kope_hw_free(hw);
  kope_target_free(t);
  return user;
}

static void test_target_roofline(void **state)
{
  fx *f = *state;
  char *user = target_prompt(f, NULL), *tgt;

  tgt = strstr(user, "## Target");
  assert_non_null(tgt);
  /* the peak rule: max(150, 2 x 110) = 220 */
  assert_non_null(strstr(tgt, "220.0 GFLOP/s, taken as max(all 2 threads 150.0, 2 x one thread "
                              "110.0)"));
  /* every level, all threads / one thread */
  assert_non_null(strstr(tgt, "L1d (32 KiB) 160.0 / 110.0 GB/s"));
  assert_non_null(strstr(tgt, "L2 (1 MiB) 170.0 / 90.0 GB/s"));
  assert_non_null(strstr(tgt, "L3 (32 MiB) 150.0 / 60.0 GB/s"));
  assert_non_null(strstr(tgt, "DRAM 30.0 / 20.0 GB/s"));
  /* the ridge against DRAM with the same peak: 220 / 30 */
  assert_non_null(strstr(tgt, "ridge point is 7.3 FLOP/byte"));
  assert_null(strstr(tgt, "suspect"));
  free(user);

  user = target_prompt(f, "peak on all threads under 50% of 2 cores x one");
  tgt = strstr(user, "## Target");
  assert_non_null(tgt);
  assert_non_null(strstr(tgt, "**This profile is marked suspect** (peak on all threads under "
                              "50% of 2 cores x one)"));
  free(user);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_rule, setup, teardown),
      cmocka_unit_test_setup_teardown(test_reasons, setup, teardown),
      cmocka_unit_test_setup_teardown(test_noisy, setup, teardown),
      cmocka_unit_test_setup_teardown(test_incumbent_cases, setup, teardown),
      cmocka_unit_test_setup_teardown(test_unpromoted_diff, setup, teardown),
      cmocka_unit_test_setup_teardown(test_incumbent_source, setup, teardown),
      cmocka_unit_test_setup_teardown(test_spec, setup, teardown),
      cmocka_unit_test_setup_teardown(test_legend, setup, teardown),
      cmocka_unit_test_setup_teardown(test_cards, setup, teardown),
      cmocka_unit_test_setup_teardown(test_real_cards, setup, teardown),
      cmocka_unit_test_setup_teardown(test_target_roofline, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
