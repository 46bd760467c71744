/*
 * Internals of the bench module shared by its files: small JSON getters
 * that tolerate missing members, the run/final steps of kope_bench_run,
 * and the SVG/HTML helpers of the report.
 */
#ifndef KOPE_BENCH_INT_H
#define KOPE_BENCH_INT_H

#include <stdio.h>
#include <jansson.h>
#include "kope/bench.h"
#include "kope/core.h"

/* Number member (integer or real) of o at key; dflt when absent. */
double kope_bj_num(const json_t *o, const char *key, double dflt);
/* o[k1][k2] as a number; dflt when absent. */
double kope_bj_num2(const json_t *o, const char *k1, const char *k2, double dflt);
/* The final re-measurement of (op, configuration, repeat) in a kope-bench
 * document ({config, repeat, path, report}), or NULL; borrowed. */
json_t *kope_bench_final_kernel(const json_t *doc, const char *op, const char *cfg, int rep);
/* String member, "" when absent. */
const char *kope_bj_str(const json_t *o, const char *key);
int kope_bj_bool(const json_t *o, const char *key);

/* Evaluation settings of the search and of the final re-measurement, the
 * options with their defaults applied (config.c; docs/bench.md). */
typedef struct kope_bench_eval {
  int seeds;                 /* input seeds per case */
  double case_budget_s;      /* timing seconds per case */
  int min_rounds;            /* search: minimum timing rounds per case */
} kope_bench_eval;
kope_bench_eval kope_bench_search_eval(const kope_bench_opts *o);
kope_bench_eval kope_bench_final_eval(const kope_bench_opts *o);

/* A deterministic 64-bit generator (splitmix64). */
uint64_t kope_bench_rand(uint64_t *state);

/* Store preparation (store.c): create path as a copy of src (NULL: empty
 * store), then import source_memory into it when not NULL. */
int kope_bench_store_prepare(const char *path, const char *src, const char *source_memory,
                             kope_err *err);
/* The session's Cases from the store at db_path: "forest" nodes and the
 * incumbent curve (speedup vs reference after k evaluations). */
int kope_bench_session_read(const char *db_path, int64_t session, int64_t best_case,
                            json_t **forest, json_t **curve, kope_err *err);

/* Final re-measurement of one operator (final.c). kernels is an array of
 * {"config", "repeat", "path"} objects; base_index the kernel timed as the
 * common base (-1: the seed). Appends one object per kernel to out. */
int kope_bench_final_op(const kope_bench_opts *o, const char *op, json_t *kernels,
                        int base_index, json_t *out, kope_err *err);

/* Environment of the run (env.c). */
json_t *kope_bench_environment(const kope_bench_opts *o);

/* HTML escaping into b. */
void kope_bench_esc(kope_buf *b, const char *s);

/* Report pieces (svg.c): per-operator bars, curves, tokens, forest. */
void kope_bench_svg_bars(kope_buf *b, const json_t *doc);
void kope_bench_svg_curves(kope_buf *b, const json_t *doc);
void kope_bench_svg_tokens(kope_buf *b, const json_t *doc);
/* The forest of op (NULL: the first operator with one); 1 drawn, 0 when
 * none, KOPE_ENOMEM (nothing drawn) when out of memory. */
int kope_bench_svg_forest(kope_buf *b, const json_t *doc, const char *op);

/* A colour per configuration index. */
const char *kope_bench_colour(size_t i);

#endif
