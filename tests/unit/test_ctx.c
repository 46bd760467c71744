/*
 * Unit tests of context assembly (ACMI) and of the offline tuner: the hot
 * tier is always admitted and a hot payload over B_k is refused; warm and
 * cold tiers respect their quotas; experience of the same category is
 * warm and of other categories cold; passive context grows with the
 * history; the tuner's first move follows strong priors from memory, it
 * never proposes a configuration twice, and random search stays within
 * the knob space. Real operator files and real SQLite stores.
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
#include "kope_test.h"
#include "kt_ctx.h"
#include "kope/core.h"
#include "kope/ctx.h"
#include "kope/mem.h"
#include "kope/op.h"
#include "kope/policy.h"

typedef struct fx {
  kt_ctx k;   /* dir, db, op, seed */
  kope_ctx_state s;
  const char *case_target;   /* target of the Cases add_case inserts (NULL: cpu) */
} fx;

static int64_t add_case(fx *f, int64_t prev, const char *op, const char *cat, const char *layer,
                        const char *thought, int correct, double speedup)
{
  kope_mem_case_in c;
  kope_err err = {0};
  int64_t id = 0;

  kope_mem_case_in_init(&c);
  c.prev_case_id = prev;
  c.op = op;
  c.category = cat;
  c.target = f->case_target ? f->case_target : "cpu";
  c.layer = layer;
  c.thought_id = thought;
  c.thought_title = thought;
  c.code_after = thought;
  c.verdict = correct ? "correct" : "incorrect";
  c.score.correct = correct;
  c.score.speedup = correct ? speedup : NAN;
  c.feedback = correct ? "verdict: correct" : "verdict: incorrect\nreason: y[3] = 1, expected 2";
  assert_int_equal(kope_mem_case_insert(f->k.db, &c, &id, &err), KOPE_OK);
  return id;
}

static int setup(void **state)
{
  fx *f = calloc(1, sizeof *f);

  kt_ctx_open(&f->k, "relu", "ctxtest", &f->s);
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

static size_t count(const kope_ctx *c, int tier, int kind)
{
  size_t i, n = 0;

  for (i = 0; i < kope_ctx_nitems(c); i++) {
    const kope_ctx_item *it = kope_ctx_item_at(c, i);
    n += (tier < 0 || it->tier == tier) && (kind < 0 || it->kind == kind);
  }
  return n;
}

static void test_tiers(void **state)
{
  fx *f = *state;
  kope_ctx_budget b;
  kope_err err = {0};
  kope_ctx *c;
  long sum = 0;
  int t;

  int64_t root = add_case(f, 0, "relu", "elementwise", "", "start.seed", 1, 1.0);
  add_case(f, root, "relu", "elementwise", "vectorize", "vectorize.vec=16", 1, 2.0);
  add_case(f, 0, "sigmoid", "elementwise", "tiling", "tiling.block=65536", 1, 1.2);
  add_case(f, 0, "matmul", "matmul", "tiling", "tiling.bm=64", 1, 3.0);
  kope_ctx_budget_init(&b);
  c = kope_ctx_build(&f->s, f->k.db, KOPE_CTX_ACTIVE, &b, &err);
  assert_non_null(c);
  assert_int_equal(count(c, KOPE_TIER_HOT, KOPE_CTX_SPEC), 1);
  assert_int_equal(count(c, KOPE_TIER_HOT, KOPE_CTX_INCUMBENT), 1);
  assert_int_equal(count(c, KOPE_TIER_HOT, KOPE_CTX_TARGET), 1);
  assert_int_equal(count(c, KOPE_TIER_WARM, KOPE_CTX_CASE), 3);   /* relu x2, sigmoid */
  assert_int_equal(count(c, KOPE_TIER_COLD, KOPE_CTX_CASE), 1);   /* matmul */
  assert_true(count(c, KOPE_TIER_COLD, KOPE_CTX_CARD) >= 1);      /* targets/cpu */
  for (t = 0; t < KOPE_TIER_COUNT; t++)
    sum += kope_ctx_tier_tokens(c, t);
  assert_int_equal(sum, kope_ctx_total_tokens(c));
  assert_true(kope_ctx_tier_tokens(c, KOPE_TIER_WARM) <= b.warm_quota);
  assert_true(kope_ctx_tier_tokens(c, KOPE_TIER_COLD) <= b.cold_quota);
  {
    size_t i;
    for (i = 0; i < kope_ctx_nitems(c); i++) {
      const kope_ctx_item *it = kope_ctx_item_at(c, i);
      if (it->kind == KOPE_CTX_CASE && !strcmp(it->op, "relu"))
        assert_true(it->relevance == 1.0);
      if (it->kind == KOPE_CTX_CASE && !strcmp(it->op, "sigmoid"))
        assert_true(it->relevance < 1.0 && it->relevance > 0.3);
    }
  }
  kope_ctx_free(c);

  /* tight quotas: fewer items, never over */
  b.warm_quota = 60;
  b.cold_quota = 0;
  c = kope_ctx_build(&f->s, f->k.db, KOPE_CTX_ACTIVE, &b, &err);
  assert_non_null(c);
  assert_true(kope_ctx_tier_tokens(c, KOPE_TIER_WARM) <= 60);
  assert_int_equal(kope_ctx_tier_tokens(c, KOPE_TIER_COLD), 0);
  assert_true(kope_ctx_dropped(c, KOPE_TIER_WARM) > 0);
  assert_true(kope_ctx_dropped(c, KOPE_TIER_COLD) > 0);
  kope_ctx_free(c);

  /* memory off: no experience, cards only */
  kope_ctx_budget_init(&b);
  c = kope_ctx_build(&f->s, NULL, KOPE_CTX_ACTIVE, &b, &err);
  assert_non_null(c);
  assert_int_equal(count(c, -1, KOPE_CTX_CASE), 0);
  kope_ctx_free(c);
}

static void test_hot_refused(void **state)
{
  fx *f = *state;
  kope_ctx_budget b;
  kope_err err = {0};

  kope_ctx_budget_init(&b);
  b.window = b.system + b.generation + b.recency + 100;   /* B_k = 100 */
  assert_int_equal(kope_ctx_knowledge_budget(&b), 100);
  assert_null(kope_ctx_build(&f->s, f->k.db, KOPE_CTX_ACTIVE, &b, &err));
  assert_int_equal(err.code, KOPE_EINPUT);
  assert_non_null(strstr(err.msg, "B_k"));
  b.window = 10;
  assert_int_equal(kope_ctx_knowledge_budget(&b), 0);
}

static void test_passive_grows(void **state)
{
  fx *f = *state;
  kope_ctx_step h[6];
  kope_ctx_budget b;
  kope_err err = {0};
  long prev = 0;
  size_t n;

  memset(h, 0, sizeof h);
  for (n = 0; n < 6; n++) {
    h[n].step = (int64_t)n + 1;
    h[n].thought_id = "tiling.block=4096";
    h[n].verdict = "correct";
    h[n].feedback = "verdict: correct\nspeedup vs reference (geomean): 1.1x";
    h[n].source = f->k.seed;
  }
  kope_ctx_budget_init(&b);
  for (n = 0; n <= 6; n++) {
    kope_ctx *c;
    f->s.history = h;
    f->s.nhistory = n;
    c = kope_ctx_build(&f->s, f->k.db, KOPE_CTX_PASSIVE, &b, &err);
    assert_non_null(c);
    assert_int_equal(count(c, -1, KOPE_CTX_HISTORY), n);
    assert_true(kope_ctx_total_tokens(c) > prev);
    prev = kope_ctx_total_tokens(c);
    kope_ctx_free(c);
  }
  f->s.nhistory = 0;
}

static void test_estimator(void **state)
{
  kope_ctx_budget b;

  (void)state;
  kope_ctx_budget_init(&b);
  assert_int_equal(kope_ctx_estimate(&b, "abcdefgh"), 2);
  assert_int_equal(kope_ctx_estimate(&b, "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"), 1);   /* 4 chars */
  kope_ctx_calibrate(&b, 3000, 1000);   /* this model: 3 chars per token */
  assert_true(b.chars_per_token < 4.0 && b.chars_per_token > 3.0);
  kope_ctx_calibrate(&b, 100, 0);       /* no usage: unchanged */
}

/* With strong experience that vec=16 pays off on relu, the tuner's first
 * move is vec=16, whatever its random seed. */
static void test_tuner_priors(void **state)
{
  fx *f = *state;
  kope_ctx_budget b;
  kope_err err = {0};
  uint64_t seed;
  int i;

  for (i = 0; i < 4; i++) {
    int64_t root = add_case(f, 0, "relu", "elementwise", "", "start.seed", 1, 1.0);
    add_case(f, root, "relu", "elementwise", "vectorize", "vectorize.vec=16", 1, 2.0);
    add_case(f, root, "relu", "elementwise", "parallel", "parallel.parallel=0", 0, 0);
  }
  kope_ctx_budget_init(&b);
  for (seed = 1; seed <= 5; seed++) {
    kope_policy_opts po;
    kope_policy *p;
    kope_proposal prop;
    kope_ctx *c = kope_ctx_build(&f->s, f->k.db, KOPE_CTX_ACTIVE, &b, &err);
    assert_non_null(c);
    kope_policy_opts_init(&po);
    po.seed = seed;
    p = kope_policy_new("tuner", &po, &err);
    assert_non_null(p);
    assert_int_equal(kope_policy_propose(p, c, &prop, &err), KOPE_OK);
    assert_string_equal(prop.thought_id, "vectorize.vec=16");
    assert_non_null(strstr(prop.source, "#define VEC 16"));
    kope_proposal_release(&prop);
    kope_policy_free(p);
    kope_ctx_free(c);
  }
}

/* Experience from another target: never in the warm tier, in the cold
 * tier marked with its target; the tuner counts it for every move of the
 * same layer (the other target's knobs have other names). */
static void test_other_targets(void **state)
{
  fx *f = *state;
  kope_ctx_budget b;
  kope_err err = {0};
  kope_policy_opts po;
  kope_policy *p;
  kope_proposal prop;
  kope_ctx *c;
  size_t i, cold_other = 0;
  int k;

  f->case_target = "opencl";
  for (k = 0; k < 4; k++) {
    int64_t root = add_case(f, 0, "relu", "elementwise", "", "start.seed", 1, 1.0);
    add_case(f, root, "relu", "elementwise", "vectorize", "vectorize.VW=8", 1, 3.0);
  }
  f->case_target = NULL;
  add_case(f, 0, "sigmoid", "elementwise", "tiling", "tiling.block=65536", 1, 1.2);
  kope_ctx_budget_init(&b);
  c = kope_ctx_build(&f->s, f->k.db, KOPE_CTX_ACTIVE, &b, &err);
  assert_non_null(c);
  for (i = 0; i < kope_ctx_nitems(c); i++) {
    const kope_ctx_item *it = kope_ctx_item_at(c, i);
    if (it->kind != KOPE_CTX_CASE)
      continue;
    if (!strcmp(it->target, "opencl")) {
      assert_int_equal(it->tier, KOPE_TIER_COLD);
      assert_true(it->other_target);
      assert_non_null(strstr(it->title, "on target opencl"));
      assert_true(it->relevance <= 0.5);
      cold_other++;
    } else {
      assert_string_equal(it->target, "cpu");
      assert_false(it->other_target);
    }
  }
  assert_true(cold_other >= 2);
  kope_policy_opts_init(&po);
  po.seed = 3;
  p = kope_policy_new("tuner", &po, &err);
  assert_non_null(p);
  assert_int_equal(kope_policy_propose(p, c, &prop, &err), KOPE_OK);
  assert_string_equal(prop.layer, "vectorize");
  assert_non_null(strstr(prop.thought_id, "vectorize.vec="));
  kope_proposal_release(&prop);
  kope_policy_free(p);
  kope_ctx_free(c);
}

/* Tuner and random search never propose the same configuration twice nor
 * the incumbent itself; the tuner ends with KOPE_EREJECT. */
static void check_distinct(fx *f, const char *name, int limit)
{
  kope_policy_opts po;
  kope_ctx_budget b;
  kope_err err = {0};
  kope_policy *p;
  kope_ctx *c;
  char (*seen)[65] = calloc((size_t)limit + 1, sizeof *seen);
  int n = 0, i, rc;

  kope_ctx_budget_init(&b);
  kope_policy_opts_init(&po);
  po.seed = 7;
  p = kope_policy_new(name, &po, &err);
  c = kope_ctx_build(&f->s, NULL, KOPE_CTX_ACTIVE, &b, &err);
  assert_non_null(p);
  assert_non_null(c);
  kope_sha256_hex(f->k.seed, strlen(f->k.seed), seen[n++]);
  while (n <= limit) {
    kope_proposal prop;
    kope_outcome o = {0};
    if ((rc = kope_policy_propose(p, c, &prop, &err)) != KOPE_OK) {
      assert_int_equal(rc, KOPE_EREJECT);
      break;
    }
    kope_sha256_hex(prop.source, strlen(prop.source), seen[n]);
    for (i = 0; i < n; i++)
      assert_string_not_equal(seen[i], seen[n]);
    n++;
    o.thought_id = prop.thought_id;
    o.verdict = "correct";
    o.correct = 1;
    o.vs_incumbent = 1.0;
    kope_policy_observe(p, c, &prop, &o);
    kope_proposal_release(&prop);
  }
  assert_true(n > 10);
  kope_ctx_free(c);
  kope_policy_free(p);
  free(seen);
}

static void test_no_repeats(void **state)
{
  check_distinct(*state, "tuner", 200);
  check_distinct(*state, "random", 40);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown(test_tiers, setup, teardown),
    cmocka_unit_test_setup_teardown(test_hot_refused, setup, teardown),
    cmocka_unit_test_setup_teardown(test_passive_grows, setup, teardown),
    cmocka_unit_test(test_estimator),
    cmocka_unit_test_setup_teardown(test_tuner_priors, setup, teardown),
    cmocka_unit_test_setup_teardown(test_no_repeats, setup, teardown),
    cmocka_unit_test_setup_teardown(test_other_targets, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
