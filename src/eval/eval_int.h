/*
 * Internals of the evaluator shared by its files: the evaluator and
 * report structures, input generation and output checking (check.c),
 * timing (timing.c) and report rendering (report.c).
 */
#ifndef KOPE_EVAL_INT_H
#define KOPE_EVAL_INT_H

#include "kope/eval.h"
#include "kope/hw.h"
#include "kope/target.h"
#include "core/rng.h"
#include "eval/worker.h"
#include "target/target.h"

#define KOPE_EVAL_MAX_CASES 64
#define KOPE_EVAL_MAX_ROUNDS 64
#define KOPE_EVAL_MAX_SLOTS 4          /* buffer sets rotated in timed batches */
#define KOPE_EVAL_SLOT_BYTES (512L << 20)   /* all slots of one case, at most */
/* Elements (inputs and outputs) one case is checked on over all its seeds
 * before it gets fewer seeds (kope_eval_case_seeds). */
#define KOPE_EVAL_SEED_ELEMS ((int64_t)8 << 20)
/* Input variants of a float argument with "vary" (check.c: plain,
 * mixed-scale, x16, x1/16), one per seed index modulo this; a case of at
 * most KOPE_EVAL_SMALL_ELEMS elements runs all of them whatever the seeds. */
#define KOPE_EVAL_VARIANTS 4
#define KOPE_EVAL_SMALL_ELEMS ((int64_t)1 << 16)

/* Where each buffer of a case lives in its region. */
typedef struct kope_layout {
  uint64_t off[KOPE_MAX_ARGS];      /* offset in the in or out region */
  uint64_t end[KOPE_MAX_ARGS];      /* off + bytes */
  uint64_t guard[KOPE_MAX_ARGS];    /* outputs: guard page offset */
  size_t in_size, out_size;
} kope_layout;

/* idle.c: the candidate's gaps between timed batches */
typedef struct kope_idle_gap {
  double cpu0, t0;           /* at the start of the current gap */
  int open;                  /* a gap is open (the worker answered) */
  int gaps, running;         /* gaps seen; gaps that ended with a thread running */
  double cpu_s, wall_s;      /* CPU and wall time over all gaps */
} kope_idle_gap;
typedef struct kope_case_res {
  char name[64];                            /* op.json "name" ("" when none) */
  char shape[200];                          /* kope_op_case_label */
  kope_case_role role;                      /* check cases are judged, never timed */
  int timed;
  int seeds;                                /* seeds it was checked on */
  int nrounds;
  double s_cand[KOPE_EVAL_MAX_ROUNDS], s_ref[KOPE_EVAL_MAX_ROUNDS],
      s_ven[KOPE_EVAL_MAX_ROUNDS], s_base[KOPE_EVAL_MAX_ROUNDS];
  double t_cand, t_ref, t_ven;              /* medians, seconds per call */
  double sp_ref, sp_ref_lo, sp_ref_hi;      /* median of per-round ratios */
  double sp_ven, sp_ven_lo, sp_ven_hi;
  double t_base, sp_base, sp_base_lo, sp_base_hi;   /* vs the base kernel, if any */
  double roof;                              /* roofline time / candidate time */
  int in_cache;                             /* working set fits in the last-level cache */
  uint32_t iters_cand, iters_ref, iters_ven, iters_base;
  double max_err[2];                        /* worst |got-exp|, worst |got-exp|/bound */
  double flops, bytes;
  double t_fresh_s[8];                      /* single calls on fresh inputs (seeds 0-7) */
} kope_case_res;

struct kope_report {
  kope_verdict verdict;
  char reason[600];
  json_t *mismatch;           /* first mismatch, or NULL */
  char *diagnostics;          /* compiler output (trimmed) */
  char *log;                  /* candidate's stdout/stderr (bounded) */
  char *feedback;
  char source_hash[65];
  char *op_name;
  size_t ncases;
  kope_case_res cases[KOPE_EVAL_MAX_CASES];
  int has_vendor;
  char *vendor_name;
  double sp_ref, sp_ven, roof;
  int has_base;               /* timed against a base kernel too */
  kope_base_cmp base;
  double compile_s, total_s, wait_s, overhead_s;
  int seeds;
  uint64_t eval_seed;
  json_t *env;                /* environment record */
  json_t *layers;             /* sandbox layers verified in the candidate worker */
  json_t *flags;              /* [{kind, review, detail}]: findings for a human */
  int review;                 /* a flag withholds acceptance */
  int gated;                  /* the static gate ran */
  double cand_cpu_s;          /* the candidate worker's CPU time */
  kope_idle_gap idle;         /* the candidate's gaps between timed batches */
};

struct kope_evaluator {
  const kope_op *op;
  kope_eval_opts o;
  kope_target *t;
  kope_hw *hw;
  char *root;                          /* scratch directory of this evaluator */
  kope_build_out ref, ven, base;
  int has_vendor, has_base;
  char *base_dir;                      /* build/work directory of the base kernel */
  kope_worker refw, venw, basew;
  kope_region in, out_cand, out_ref, out_ven, out_base;
  size_t ncases;
  kope_case_bind binds[KOPE_EVAL_MAX_CASES];
  kope_layout lay[KOPE_EVAL_MAX_CASES];
  size_t max_in, max_out;
  int ncand;                           /* candidates seen (work dir names) */
  kope_limits lim;
  int nslots;                          /* buffer sets per case (timing rotation) */
  json_t *layers;                      /* verified layers of the latest candidate */
};

/* check.c */
void kope_eval_layout(const kope_op *op, const kope_case_bind *b, kope_layout *l);
void kope_eval_fill_inputs(const kope_op *op, const kope_case_bind *b, const kope_layout *l,
                           unsigned char *in, uint64_t seed, int variant);
void kope_eval_poison(const kope_op *op, const kope_case_bind *b, const kope_layout *l,
                      unsigned char *out, uint64_t trial);
/* Compare candidate outputs with the reference's; on the first failure
 * fills r (verdict incorrect, reason, mismatch) and returns -1. */
int kope_eval_compare(const kope_op *op, size_t c, int seed_index, const kope_case_bind *b,
                      const kope_layout *l, const unsigned char *got,
                      const unsigned char *exp, uint64_t trial, kope_report *r,
                      double max_err[2]);
uint64_t kope_eval_hash(const unsigned char *p, size_t n);
/* Every byte of p[0, n) (kope_eval_hash samples regions above 4 MiB). */
uint64_t kope_eval_hash_all(const unsigned char *p, size_t n);

/* "case 2 \"tiny\" (n=7)" (the name only when the case has one): how a
 * failure names a case. */
void kope_eval_case_tag(const kope_op *op, size_t c, char *buf, size_t size);

/* eval.c: the seeds case c is checked on (opts.seeds or fewer) */
int kope_eval_case_seeds(const kope_evaluator *ev, size_t c);
/* eval.c: turn a candidate worker's failure into a verdict */
void kope_eval_worker_failure(kope_report *r, const kope_worker *w, int st, const char *when);

/* timing.c */
/* Machine-wide turns for timing (turns.c): take an exclusive lock that
 * every kope process on the machine takes before timing a case; *waited
 * says whether another process held it. Returns the descriptor to give
 * back, or -1 when no lock file could be opened (timing goes on). */
int kope_eval_turn_take(int *waited);
void kope_eval_turn_give(int fd);
int kope_eval_time_case(kope_evaluator *ev, kope_worker *cand, size_t c, kope_case_res *cr,
                        kope_report *r, kope_err *err);
void kope_eval_fill_cmd(const kope_evaluator *ev, size_t c, kope_child_cmd *cmd,
                        uint32_t kind, uint32_t iters);

/* idle.c: threads left running after a candidate's calls returned */
/* CPU seconds of every thread of pid (its process clock); < 0 if unknown. */
double kope_eval_worker_cpu(pid_t pid);
/* Threads of pid in state R. */
int kope_eval_running_threads(pid_t pid);
/* A gap starts when the worker has answered and ends before its next
 * command; threads: the worker's OpenMP threads. */
void kope_eval_gap_begin(kope_idle_gap *g, const kope_worker *w);
void kope_eval_gap_end(kope_idle_gap *g, const kope_worker *w, int threads);
/* Most gaps of the evaluation ended with a thread running: forbidden, -1. */
int kope_eval_gap_judge(const kope_idle_gap *g, kope_report *r);
/* The quiet window after the last call: forbidden and -1 when a thread
 * still runs; 0 otherwise. */
int kope_eval_check_idle(const kope_worker *w, kope_report *r);

/* report.c */
kope_report *kope_report_new(const kope_evaluator *ev);
void kope_report_finish(kope_report *r, const kope_evaluator *ev);
void kope_report_fail(kope_report *r, kope_verdict v, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Put text before the reason of a failed report. */
void kope_report_prefix(kope_report *r, const char *text);
/* Record a finding; review != 0 withholds acceptance of a correct kernel. */
void kope_report_flag(kope_report *r, const char *kind, int review, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
