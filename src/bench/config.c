/*
 * The benchmark's configurations: which policy, memory mode, context mode
 * and starting memory each one uses (docs/bench.md), and the small shared
 * helpers of the module (JSON getters, a seeded generator, colours).
 */
#include <string.h>
#include "kope/agent.h"
#include "bench/bench_int.h"

static const kope_bench_config configs[] = {
  {"tuner+memory", "tuner", KOPE_MEMORY_ON, KOPE_CTX_ACTIVE, KOPE_BENCH_STORE_START,
   "the default system: offline tuner, experience memory on, active context"},
  {"tuner-nomemory", "tuner", KOPE_MEMORY_OFF, KOPE_CTX_ACTIVE, KOPE_BENCH_STORE_START,
   "the tuner without experience (uniform priors)"},
  {"random", "random", KOPE_MEMORY_OFF, KOPE_CTX_ACTIVE, KOPE_BENCH_STORE_START,
   "blind random knob search (the autotuner baseline)"},
  {"passive", "tuner", KOPE_MEMORY_ON, KOPE_CTX_PASSIVE, KOPE_BENCH_STORE_START,
   "the tuner with passive context (whole history appended)"},
  {"llm+memory", "llm", KOPE_MEMORY_ON, KOPE_CTX_ACTIVE, KOPE_BENCH_STORE_START,
   "the LLM policy with experience memory and active context"},
  {"llm-nomemory", "llm", KOPE_MEMORY_OFF, KOPE_CTX_ACTIVE, KOPE_BENCH_STORE_START,
   "the LLM policy without experience"},
  {"llm-passive", "llm", KOPE_MEMORY_ON, KOPE_CTX_PASSIVE, KOPE_BENCH_STORE_START,
   "the LLM policy with passive context (whole history appended)"},
  {"llm+tuner", "llm+tuner", KOPE_MEMORY_ON, KOPE_CTX_ACTIVE, KOPE_BENCH_STORE_START,
   "LLM steps with offline tuner moves between them, memory on"},
  {"cold", "tuner", KOPE_MEMORY_ON, KOPE_CTX_ACTIVE, KOPE_BENCH_STORE_EMPTY,
   "cross-target: starts from an empty memory"},
  {"source", "tuner", KOPE_MEMORY_ON, KOPE_CTX_ACTIVE, KOPE_BENCH_STORE_SOURCE,
   "cross-target: only memory imported from another target (--source-memory)"},
  {"target", "tuner", KOPE_MEMORY_ON, KOPE_CTX_ACTIVE, KOPE_BENCH_STORE_TARGET,
   "cross-target: memory built on this target (--db)"},
  {"both", "tuner", KOPE_MEMORY_ON, KOPE_CTX_ACTIVE, KOPE_BENCH_STORE_BOTH,
   "cross-target: this target's memory (--db) plus the imported one"},
};

const kope_bench_config *kope_bench_config_find(const char *name)
{
  size_t i;

  for (i = 0; name && i < sizeof configs / sizeof configs[0]; i++)
    if (!strcmp(configs[i].name, name))
      return &configs[i];
  return NULL;
}

const kope_bench_config *kope_bench_config_at(size_t i)
{
  return i < sizeof configs / sizeof configs[0] ? &configs[i] : NULL;
}

void kope_bench_opts_init(kope_bench_opts *o)
{
  memset(o, 0, sizeof *o);
  o->target = "cpu";
  o->budget_evals = 12;
  o->repeats = 1;
  o->seed = 1;
  kope_policy_opts_init(&o->pol);
}

/* ---- JSON getters ---- */

double kope_bj_num(const json_t *o, const char *key, double dflt)
{
  json_t *v = json_object_get(o, key);

  return json_is_number(v) ? json_number_value(v) : dflt;
}

double kope_bj_num2(const json_t *o, const char *k1, const char *k2, double dflt)
{
  return kope_bj_num(json_object_get(o, k1), k2, dflt);
}

kope_bench_eval kope_bench_search_eval(const kope_bench_opts *o)
{
  kope_bench_eval e;

  e.seeds = o->eval_seeds > 0 ? o->eval_seeds : 1;
  e.case_budget_s = o->case_budget_s > 0 ? o->case_budget_s : 0.03;
  e.min_rounds = o->eval_rounds > 0 ? o->eval_rounds : 5;
  return e;
}

kope_bench_eval kope_bench_final_eval(const kope_bench_opts *o)
{
  kope_bench_eval e;

  e.seeds = o->final_seeds > 0 ? o->final_seeds : 5;
  e.case_budget_s = o->final_case_budget_s > 0 ? o->final_case_budget_s : 0.1;
  e.min_rounds = 0;   /* the evaluator's default */
  return e;
}

const char *kope_bj_str(const json_t *o, const char *key)
{
  const char *s = json_string_value(json_object_get(o, key));

  return s ? s : "";
}

int kope_bj_bool(const json_t *o, const char *key)
{
  return json_is_true(json_object_get(o, key));
}

uint64_t kope_bench_rand(uint64_t *state)
{
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

const char *kope_bench_colour(size_t i)
{
  static const char *const c[] = {"#1b6ec2", "#d9822b", "#7a7a7a", "#2e9e5b", "#9b51e0",
                                  "#c0392b", "#16a2b8", "#b8860b", "#6c3483", "#d35d9a"};
  return c[i % (sizeof c / sizeof c[0])];
}
