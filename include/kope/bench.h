/*
 * kope bench: the paper's tables, measured here (docs/bench.md).
 *
 * kope_bench_run runs a set of configurations (policy x memory x context,
 * plus the cross-target memory settings) over operators in a fixed,
 * recorded order, in one process so all configurations share the
 * machine's state:
 *   - every (configuration, repeat) starts from its own copy of the
 *     starting memory, and memory carries from operator to operator
 *     within it; repeats use different policy seeds;
 *   - sessions are interleaved (for each operator, every configuration in
 *     turn) so slow drifts of the machine hit all configurations alike;
 *   - at the end the final kernel of every run is re-measured, per
 *     operator in one evaluator batch, timed in interleaved rounds
 *     against the reference, the vendor library and a common base kernel,
 *     so comparisons between configurations are side-by-side ratios.
 * The result is one JSON document (schema "kope-bench", version 1; see
 * docs/bench.md) with the environment, the settings, every run, every
 * final report with its raw samples, and the metrics computed from them
 * (kope_bench_metrics, also usable on a file read back).
 *
 * kope_bench_html / kope_bench_markdown render one or more such documents
 * as a self-contained HTML page (inline CSS and SVG, no scripts) or as
 * Markdown tables.
 *
 * Ownership: strings and arrays in options are borrowed for the call;
 * returned JSON documents and strings belong to the caller.
 */
#ifndef KOPE_BENCH_H
#define KOPE_BENCH_H

#include <signal.h>
#include <stdint.h>
#include <jansson.h>
#include "kope/core.h"
#include "kope/policy.h"

#ifdef __cplusplus
extern "C" {
#endif

#define KOPE_BENCH_FORMAT "kope-bench"
#define KOPE_BENCH_SCHEMA 1

/* ---- configurations ---------------------------------------------------- */

/* Where a configuration's memory comes from. */
typedef enum kope_bench_store {
  KOPE_BENCH_STORE_START = 0,   /* a copy of --db (empty when none) */
  KOPE_BENCH_STORE_EMPTY,       /* cold: an empty store */
  KOPE_BENCH_STORE_SOURCE,      /* empty + --source-memory imported */
  KOPE_BENCH_STORE_TARGET,      /* a copy of --db (required) */
  KOPE_BENCH_STORE_BOTH         /* a copy of --db + --source-memory */
} kope_bench_store;

typedef struct kope_bench_config {
  const char *name;        /* "tuner+memory", ... */
  const char *policy;      /* tuner | random | llm | llm+tuner */
  int memory;              /* kope_memory_mode */
  int context;             /* kope_ctx_mode */
  int store;               /* kope_bench_store */
  const char *what;        /* one line for help and reports */
} kope_bench_config;

/* The known configuration named name, or NULL. */
const kope_bench_config *kope_bench_config_find(const char *name);
/* The i-th known configuration (NULL past the end). */
const kope_bench_config *kope_bench_config_at(size_t i);

/* ---- running ------------------------------------------------------------ */

typedef struct kope_bench_opts {
  const char *const *ops;      /* operator names, in the order run */
  size_t nops;
  const char *ops_dir;         /* NULL: kope_ops_dir() */
  const char *target;          /* "cpu" */
  const char *const *configs;  /* configuration names */
  size_t nconfigs;
  int64_t budget_evals;        /* per session (default 12) */
  int repeats;                 /* >= 1 */
  uint64_t seed;               /* repeat r uses seed + r */
  const char *db;              /* starting memory, copied, never modified */
  const char *source_memory;   /* `kope memory export --format json` file */
  const char *workdir;         /* per-run stores and kernels (required) */
  int eval_seeds;              /* search evaluations (0: 1) */
  double case_budget_s;        /* search timing per case (0: 0.03) */
  int eval_rounds;             /* search: minimum timing rounds per case (0: 5) */
  int search_vendor;           /* also time the vendor during the search (0: only
                                * in the final re-measurement) */
  int start_plain;             /* sessions start with every knob at its first value
                                * (--start plain); the "seed" row is that kernel */
  int final_seeds;             /* final re-measurement (0: 5) */
  double final_case_budget_s;  /* final timing per case (0: 0.1) */
  int threads;                 /* 0: all */
  kope_policy_opts pol;        /* LLM settings for llm configurations */
  volatile sig_atomic_t *stop; /* nonzero: stop after the current session */
  void (*progress)(void *ctx, const char *line);  /* one line per event */
  void *progress_ctx;
} kope_bench_opts;

void kope_bench_opts_init(kope_bench_opts *o);

/* Run the benchmark. *results gets the document (metrics included).
 * Configurations that cannot run here (an llm one with no LLM configured)
 * are skipped and listed in "skipped" with the reason. Returns KOPE_OK,
 * KOPE_EINPUT (unknown configuration or operator, missing --db for
 * "target", missing --source-memory, bad memory file) or KOPE_EENV. */
int kope_bench_run(const kope_bench_opts *o, json_t **results, kope_err *err);

/* (Re)compute the "metrics" and "paired" members of a results document
 * from its "runs" and "final" members. Deterministic (the bootstrap uses
 * a fixed seed). KOPE_EINPUT when the document is not a kope-bench one;
 * KOPE_ENOMEM when out of memory. */
int kope_bench_metrics(json_t *results, kope_err *err);

/* The suite against the vendor libraries, from the final re-measurement
 * of n results documents (nothing is re-run; kope ops check --best): per
 * operator the seed and the best kernel (the accepted non-seed kernel with
 * the highest geomean speedup vs the reference over perf cases; the seed
 * when no run found one), each with its geomeans vs the reference and the
 * vendor over perf cases, and the suite's geomeans vs vendor for both over
 * the operators where both have a vendor figure (docs/bench.md). An
 * operator in several documents takes its row from the last. *out gets
 * {"operators": [{name, document (index), vendor, seed, best,
 * best_is_seed, error}], "summary": {"seeds", "best": {operators,
 * geomean_speedup_vendor, perf_cases, geomean_speedup_vendor_cases}}},
 * owned by the caller. KOPE_EINPUT when a document is not a kope-bench
 * one with a "final" member; KOPE_ENOMEM. */
int kope_bench_suite(json_t *const *docs, size_t n, json_t **out, kope_err *err);

/* ---- metric helpers (exposed for tests) ------------------------------ */

/* CANN-Bench-style per-case score in [0, 1]:
 *   s = (T_base - T_HW) / ((T_cand - T_HW) + (T_base - T_HW))
 * with T_cand and T_base clamped to at least T_HW; 0.5 at parity with the
 * base, 1 at the roofline, towards 0 when much slower. t_hw <= 0 (unknown)
 * is taken as 0. Returns 0 when a time is not positive. */
double kope_bench_case_score(double t_cand, double t_base, double t_hw);
/* Geometric mean of the positive values of v and a percentile bootstrap
 * ~95% interval (nboot resamples, fixed seed). Non-positive values are
 * ignored. Returns the geomean (0 if none). */
double kope_bench_geomean_ci(const double *v, size_t n, int nboot, uint64_t seed,
                             double *lo, double *hi);
/* Evaluations needed to reach frac of the final value of a curve
 * (curve[k] = incumbent speedup after k evaluations, k = 0..n-1). -1 when
 * the final value is not positive. */
int kope_bench_evals_to_reach(const double *curve, size_t n, double frac);

/* ---- reports ------------------------------------------------------------- */

typedef struct kope_bench_report_opts {
  const char *title;        /* NULL: "kope bench report" */
  const char *forest_op;    /* operator whose forest is drawn; NULL: first */
  const char *const *names; /* display names of the documents (file names) */
} kope_bench_report_opts;

/* One self-contained HTML page for n documents. Caller frees. NULL with
 * err set (KOPE_EINPUT) when a document is not a kope-bench one. */
char *kope_bench_html(json_t *const *docs, size_t n, const kope_bench_report_opts *o,
                      kope_err *err);
/* Markdown: summary, ablations, paired ratios, per-operator table. */
char *kope_bench_markdown(json_t *const *docs, size_t n, const kope_bench_report_opts *o,
                          kope_err *err);

#ifdef __cplusplus
}
#endif
#endif
