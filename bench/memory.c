/*
 * bench_memory: insertion rate and retrieval latency of the experience
 * graph memory on a synthetic store.
 *
 * Generates a forest of Cases the way optimization sessions grow one:
 * many operators in several categories on three targets; each session
 * starts from a baseline root or from the incumbent of an earlier session
 * of the same operator/target, and each step branches from the session's
 * incumbent or from an earlier attempt. Verdicts, speedups, compiler
 * errors, mismatches, kernel sources and Journal entries are synthetic
 * but shaped like real ones. Every Case is inserted in its own
 * transaction with its Journal entry (as the optimize loop does), then a mix of queries runs:
 * exact filters with text (the agent's state), thought filters, text only
 * (cross-operator transfer), label/category filters, error-driven
 * lookups, and an agent step (every memory read the context builder makes
 * before an optimization step, src/ctx/gather.c).
 *
 * Latencies are wall-clock times; on a shared machine they include time
 * the process waited for a CPU, so the CPU time the work took is printed
 * next to them (per query: this thread's; for insertion: the process's,
 * all threads, i.e. including the store's checkpoint helper). With a
 * PostgreSQL store (--db postgresql://...) the CPU time of its server
 * process per query is printed too (from /proc/PID/schedstat; the process
 * is found by its title, so nothing else may use that database meanwhile).
 *
 * usage: bench_memory [--cases N] [--queries Q] [--bulk M] [--db PATH] [--seed S]
 *                     [--keep]
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <sys/resource.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/rng.h"
#include "core/stats.h"
#include "kope/core.h"
#include "kope/mem.h"

typedef struct thought {
  const char *layer, *id, *title;
  double bias;   /* mean log step ratio when it compiles and passes */
} thought;

static const thought thoughts[] = {
  {"parallel", "parallel.outer=on", "Parallelize the outer loop with OpenMP", 0.25},
  {"parallel", "parallel.inner=on", "Parallelize the inner loop", -0.15},
  {"parallel", "parallel.threads=2", "Use two threads", 0.10},
  {"parallel", "parallel.schedule=dynamic", "Dynamic schedule for uneven rows", 0.02},
  {"tiling", "tiling.block=16", "Tile the loops with 16-element blocks", 0.05},
  {"tiling", "tiling.block=32", "Tile the loops with 32-element blocks", 0.12},
  {"tiling", "tiling.block=64", "Tile the loops with 64-element blocks", 0.15},
  {"tiling", "tiling.block=128", "Tile the loops with 128-element blocks", 0.04},
  {"tiling", "tiling.rows=4", "Process four rows per iteration", 0.08},
  {"vectorize", "vectorize.width=8", "Vectorize the inner loop with AVX2", 0.30},
  {"vectorize", "vectorize.width=16", "Vectorize with AVX-512", 0.18},
  {"vectorize", "vectorize.width=4", "Vectorize with SSE", 0.10},
  {"vectorize", "vectorize.unroll=4", "Unroll the vector loop four times", 0.06},
  {"memory", "memory.prefetch=on", "Software prefetch of the next block", 0.01},
  {"memory", "memory.layout=blocked", "Blocked layout for the weights", 0.09},
  {"memory", "memory.align=64", "Align buffers to cache lines", 0.02},
  {"memory", "memory.stream=on", "Non-temporal stores for the output", -0.05},
  {"instruction", "instruction.fma=on", "Fused multiply-add in the inner product", 0.07},
  {"instruction", "instruction.rsqrt=approx", "Approximate reciprocal square root", 0.05},
  {"instruction", "instruction.exp=poly", "Polynomial exponential", 0.12},
  {"algorithm", "algorithm.online=on", "Online softmax in one pass", 0.20},
  {"algorithm", "algorithm.twopass=on", "Two-pass reduction with partial sums", 0.03},
  {"algorithm", "algorithm.kahan=on", "Compensated summation", -0.10},
  {"algorithm", "algorithm.transpose=b", "Transpose B before the product", 0.15},
};
#define N_THOUGHTS (sizeof thoughts / sizeof thoughts[0])

static const char *const categories[] = {"elementwise", "reduction", "matmul", "normalization",
                                         "convolution", "pooling", "scan", "attention"};
static const char *const bases[] = {"relu", "gelu", "softmax", "matmul", "rms_norm",
                                    "layer_norm", "conv2d", "maxpool", "cumsum", "attention",
                                    "sigmoid", "sum", "argmax", "gemv", "batch_norm"};
static const char *const targets[] = {"cpu", "cpu-avx512", "riscv"};
static const char *const undeclared[] = {"acc", "tmp", "vsum", "_mm256_hadd_ps", "row_max",
                                         "tile", "ptr", "lane"};

typedef struct bench {
  kope_db *db;
  kope_rng rng;
  long cases_target, inserted, journals, sessions;
  long batch, pending;           /* Cases per transaction; open in this one */
  long mark;                     /* inserted count when t_tail started */
  double t_case, t_tail, t_digest;
  double cpu_tail;               /* process CPU seconds spent in the tail's inserts */
  long server;                   /* PostgreSQL: the store's server process, 0 = none */
  long max_depth;
  double depth_sum;
  kope_err err;
} bench;

typedef struct step_rec {
  int64_t id;
  double a;
  long depth;
} step_rec;

/* The best correct Case (id, a, depth) so far per operator and target. */
typedef struct incumbent {
  int64_t id;
  double a;
  long depth;
} incumbent;

/* CPU seconds of this process (all threads). */
static double cpu_process(void)
{
  struct rusage ru;

  if (getrusage(RUSAGE_SELF, &ru) != 0)
    return 0.0;
  return (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec +
         (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec;
}

/* CPU seconds of the calling thread. */
static double cpu_thread(void)
{
  struct timespec ts;

  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
    return 0.0;
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The server process of a PostgreSQL store: the one process titled
 * "postgres: USER DB [local] ..." or "postgres: USER DB HOST..." for the
 * database DB of the URL (the bench's own connection; run nothing else on
 * that database meanwhile). 0 when not found or not unique. */
static long pg_backend(const char *url)
{
  char db[128], want[160], buf[512];
  const char *a = strstr(url, "://"), *q;
  long pid = 0, found = 0;
  struct dirent *e;
  DIR *d;

  if (!a || !(a = strchr(a + 3, '/')))
    return 0;
  q = a + 1 + strcspn(a + 1, "?");
  snprintf(db, sizeof db, "%.*s", (int)(q - a - 1), a + 1);
  snprintf(want, sizeof want, " %s ", db);
  if (!(d = opendir("/proc")))
    return 0;
  while ((e = readdir(d)) != NULL) {
    FILE *f;
    size_t n;
    char path[300];
    if (e->d_name[0] < '1' || e->d_name[0] > '9')
      continue;
    snprintf(path, sizeof path, "/proc/%s/cmdline", e->d_name);
    if (!(f = fopen(path, "rb")))
      continue;
    n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    if (!strncmp(buf, "postgres: ", 10) && strstr(buf + 10, want)) {
      pid = atol(e->d_name);
      found++;
    }
  }
  closedir(d);
  return found == 1 ? pid : 0;
}

/* CPU seconds the process pid has run (schedstat: nanoseconds). */
static double cpu_of(long pid)
{
  char path[64];
  unsigned long long ns = 0;
  FILE *f;

  snprintf(path, sizeof path, "/proc/%ld/schedstat", pid);
  if (!pid || !(f = fopen(path, "r")))
    return 0.0;
  if (fscanf(f, "%llu", &ns) != 1)
    ns = 0;
  fclose(f);
  return 1e-9 * (double)ns;
}

static int pick(kope_rng *r, int n)
{
  return (int)kope_rng_int(r, 0, n - 1);
}

static const char *verdict_of(kope_rng *r)
{
  double u = kope_rng_uniform(r);

  return u < 0.70 ? "correct" : u < 0.82 ? "compile_error" : u < 0.92 ? "incorrect"
       : u < 0.95 ? "crash" : u < 0.98 ? "timeout" : "forbidden";
}

static void feedback_of(kope_rng *r, const char *verdict, double a, char *out, size_t n)
{
  int line = (int)kope_rng_int(r, 5, 120), col = (int)kope_rng_int(r, 3, 40);

  if (!strcmp(verdict, "compile_error")) {
    switch (pick(r, 4)) {
    case 0: snprintf(out, n, "/tmp/kope-build/kernel.c:%d:%d: error: '%s' undeclared (first use "
                     "in this function)", line, col, undeclared[pick(r, 8)]); break;
    case 1: snprintf(out, n, "kernel.c:%d:%d: error: implicit declaration of function '%s'",
                     line, col, undeclared[pick(r, 8)]); break;
    case 2: snprintf(out, n, "kernel.c:%d:%d: error: expected ';' before '}' token", line,
                     col); break;
    default: snprintf(out, n, "kernel.c:%d:%d: error: incompatible types when assigning to "
                      "type '__m256' from type 'float'", line, col);
    }
  } else if (!strcmp(verdict, "incorrect")) {
    snprintf(out, n, "mismatch at index %d: got %.4f expected %.4f (max abs error %.2e, "
             "tolerance 1e-05)", (int)kope_rng_int(r, 0, 99999), kope_rng_normal(r),
             kope_rng_normal(r), kope_rng_uniform(r));
  } else if (!strcmp(verdict, "crash")) {
    snprintf(out, n, "candidate terminated by signal 11 (Segmentation fault)");
  } else if (!strcmp(verdict, "timeout")) {
    snprintf(out, n, "timed out after %d s", (int)kope_rng_int(r, 5, 30));
  } else if (!strcmp(verdict, "forbidden")) {
    snprintf(out, n, "forbidden: call to 'system' is not allowed in a kernel");
  } else {
    snprintf(out, n, "ok: max abs error %.1e; median %.3f ms over 15 runs; %.3fx vs reference",
             kope_rng_uniform(r) * 1e-6, 1.0 / a, a);
  }
}

static void code_of(const char *op, long serial, const thought *t, char *out, size_t n)
{
  snprintf(out, n,
           "#include <stdint.h>\n#include <immintrin.h>\n"
           "/* %s, candidate %ld: %s */\n"
           "void %s(const float *x, float *y, int64_t rows, int64_t cols)\n{\n"
           "  #pragma omp parallel for schedule(static)\n"
           "  for (int64_t r = 0; r < rows; r++) {\n"
           "    const float *xr = x + r * cols;\n    float acc = 0.0f;\n"
           "    for (int64_t c = 0; c < cols; c += %ld) {\n"
           "      acc += xr[c];\n    }\n"
           "    y[r] = acc * %ld.0f;\n  }\n}\n",
           op, serial, t ? t->id : "baseline", op, serial % 64 + 1, serial % 1000);
}

typedef struct gen_step {
  const char *op, *category, *target, *hw;
  int64_t session, prev;
  double a_prev;
  long depth, step;
  const thought *t;
} gen_step;

static int insert_one(bench *b, const gen_step *g, step_rec *out)
{
  kope_mem_case_in c;
  char fb[512], code[1024], scene[64], journal[1024];
  const char *verdict = g->t ? verdict_of(&b->rng) : "correct";
  double a = g->a_prev > 0 ? g->a_prev : 1.0, t0, c0;
  int64_t id = 0;
  int rc;

  if (g->t)
    a *= exp(g->t->bias * 0.5 + 0.15 * kope_rng_normal(&b->rng));
  kope_mem_case_in_init(&c);
  snprintf(scene, sizeof scene, "rows=%d cols=%d", 1 << (int)kope_rng_int(&b->rng, 6, 12),
           1 << (int)kope_rng_int(&b->rng, 6, 12));
  feedback_of(&b->rng, verdict, a, fb, sizeof fb);
  code_of(g->op, b->inserted, g->t, code, sizeof code);
  c.session_id = g->session;
  c.step = g->step;
  c.prev_case_id = g->prev;
  c.op = g->op;
  c.category = g->category;
  c.target = g->target;
  c.hw = g->hw;
  c.scene = scene;
  if (g->t) {
    c.layer = g->t->layer;
    c.thought_id = g->t->id;
    c.thought_title = g->t->title;
    c.rationale = "the profile shows the loop is bound by this resource";
  }
  c.code_after = code;
  c.feedback = fb;
  c.verdict = verdict;
  c.score.correct = !strcmp(verdict, "correct");
  c.score.speedup = c.score.correct ? a : NAN;
  c.score.speedup_vendor = c.score.correct ? a * 0.3 : NAN;
  c.score.confidence = 0.5 + 0.5 * kope_rng_uniform(&b->rng);
  c.tokens_in = kope_rng_int(&b->rng, 800, 6000);
  c.tokens_out = kope_rng_int(&b->rng, 100, 900);
  c.eval_seconds = 0.2 + kope_rng_uniform(&b->rng);
  c.harness = "kope-eval 0.1";
  snprintf(journal, sizeof journal, "## %s step %ld: %s\n\n**Strategy**: %s (%s).\n"
           "**Validation**: %s.\n**Measurement**: %.3fx vs reference.\n"
           "**Interpretation**: %s.\n", g->op, g->step, g->t ? g->t->title : "baseline",
           g->t ? g->t->id : "reference kernel", g->t ? g->t->layer : "none", verdict, a,
           c.score.correct ? "keep exploring this direction" : "fix the failure before tuning");
  c.journal = journal;
  c0 = b->inserted >= b->mark ? cpu_process() : 0.0;
  t0 = kope_now();
  if (b->batch > 1 && b->pending == 0)
    rc = kope_db_begin(b->db, &b->err);
  else
    rc = KOPE_OK;
  if (rc == KOPE_OK)
    rc = kope_mem_case_insert(b->db, &c, &id, &b->err);
  if (rc == KOPE_OK && b->batch > 1 && ++b->pending == b->batch) {
    rc = kope_db_commit(b->db, &b->err);
    b->pending = 0;
  }
  b->t_case += kope_now() - t0;
  if (b->inserted >= b->mark) {
    b->t_tail += kope_now() - t0;
    b->cpu_tail += cpu_process() - c0;
  }
  if (rc != KOPE_OK)
    return rc;
  out->id = id;
  out->a = c.score.correct ? a : 0.0;
  out->depth = g->depth;
  b->inserted++;
  b->journals++;
  b->depth_sum += (double)g->depth;
  if (g->depth > b->max_depth)
    b->max_depth = g->depth;
  return rc;
}

static int run_session(bench *b, int opi, int tgt, incumbent *inc)
{
  char op[64], hw[64];
  kope_mem_session s = {0};
  step_rec steps[64], best;
  gen_step g = {0};
  int64_t sid = 0;
  long n = kope_rng_int(&b->rng, 10, 40), i;
  double t0;
  int rc;

  snprintf(op, sizeof op, "%s_%d", bases[opi % 15], opi / 15);
  snprintf(hw, sizeof hw, "hw-%s-%d", targets[tgt], tgt * 7 + 3);
  s.op = op;
  s.target = targets[tgt];
  s.hw = hw;
  s.policy = "tuner";
  s.budget = "steps=40";
  if ((rc = kope_mem_session_begin(b->db, &s, &sid, &b->err)) != KOPE_OK)
    return rc;
  g.op = op;
  g.category = categories[opi % 8];
  g.target = targets[tgt];
  g.hw = hw;
  g.session = sid;
  if (inc->id && kope_rng_uniform(&b->rng) < 0.3) {   /* continue from the incumbent */
    best.id = inc->id;
    best.a = inc->a;
    best.depth = inc->depth;
  } else {                                             /* a fresh baseline root */
    g.depth = 0;
    if ((rc = insert_one(b, &g, &best)) != KOPE_OK)
      return rc;
  }
  steps[0] = best;
  for (i = 1; i < n && b->inserted < b->cases_target; i++) {
    step_rec from = kope_rng_uniform(&b->rng) < 0.6 ? best : steps[pick(&b->rng, (int)i)];
    g.prev = from.id;
    g.a_prev = from.a;
    g.depth = from.depth + 1;
    g.step = i;
    g.t = &thoughts[pick(&b->rng, N_THOUGHTS)];
    if ((rc = insert_one(b, &g, &steps[i])) != KOPE_OK)
      return rc;
    if (steps[i].a > best.a)
      best = steps[i];
  }
  if (best.a > inc->a) {
    inc->id = best.id;
    inc->a = best.a;
    inc->depth = best.depth;
  }
  t0 = kope_now();
  rc = kope_mem_session_end(b->db, sid, "done", &b->err);
  b->t_digest += kope_now() - t0;
  b->sessions++;
  return rc;
}

static incumbent incumbents[60][3];

/* Grow the store to b->cases_target Cases. */
static int generate(bench *b)
{
  int rc = KOPE_OK;

  while (rc == KOPE_OK && b->inserted < b->cases_target) {
    int opi = pick(&b->rng, 60), tgt = pick(&b->rng, 3);
    rc = run_session(b, opi, tgt, &incumbents[opi][tgt]);
  }
  if (rc == KOPE_OK && b->pending) {
    double t0 = kope_now();
    rc = kope_db_commit(b->db, &b->err);
    b->t_case += kope_now() - t0;
    b->t_tail += kope_now() - t0;
    b->pending = 0;
  }
  return rc;
}

/* ---- queries ------------------------------------------------------------ */

enum { Q_STATE, Q_THOUGHT, Q_TEXT, Q_LABEL, Q_FIXES, Q_AGENT, Q_KINDS };
static const char *const qnames[Q_KINDS] = {
  "state: op+target filters + text", "thought-id filter", "text only (transfer)",
  "category+label filter", "error-driven (fixes)", "agent step (ctx warm+cold)"};

/* Every memory read the agent's context builder makes before a step
 * (src/ctx/gather.c, kope_ctx_add_warm then kope_ctx_add_cold): the fixes
 * of the last error (when the last step failed), the best 24 Cases of
 * this category and target, the category's digests on the target; then
 * 12 Cases of any category on the target, 48 of the category on any
 * target (other targets' experience) and the target's digests. */
static int agent_step(bench *b, const kope_mem_state *s, const char *fb, kope_mem_recs *r)
{
  kope_mem_state other = *s;
  kope_mem_filter f = {0};
  kope_mem_digest *d = NULL;
  size_t n = 0;
  int rc = KOPE_OK;

  f.target = s->target;
  if (fb)
    rc = kope_mem_fixes(b->db, fb, &f, 3, r, &b->err);
  f.category = s->category;
  f.max_digests = -1;
  if (rc == KOPE_OK)
    rc = kope_mem_retrieve(b->db, s, &f, 24, r, &b->err);
  if (rc == KOPE_OK && (rc = kope_mem_digest_list(b->db, &f, &d, &n, &b->err)) == KOPE_OK)
    kope_mem_digests_free(d, n);
  f.category = NULL;
  if (rc == KOPE_OK)
    rc = kope_mem_retrieve(b->db, s, &f, 12, r, &b->err);
  f.category = s->category;
  f.target = NULL;
  other.target = NULL;
  other.feedback = NULL;
  if (rc == KOPE_OK)
    rc = kope_mem_retrieve(b->db, &other, &f, 48, r, &b->err);
  f.category = NULL;
  f.target = s->target;
  if (rc == KOPE_OK && (rc = kope_mem_digest_list(b->db, &f, &d, &n, &b->err)) == KOPE_OK)
    kope_mem_digests_free(d, n);
  return rc;
}

static int one_query(bench *b, int kind, kope_mem_recs *r)
{
  kope_mem_state s = {0};
  kope_mem_filter f = {0};
  char op[64], text[256], fb[512];
  int opi = pick(&b->rng, 60);
  const thought *t = &thoughts[pick(&b->rng, N_THOUGHTS)];

  snprintf(op, sizeof op, "%s_%d", bases[opi % 15], opi / 15);
  snprintf(text, sizeof text, "%s %s kernel: %s; incumbent uses %s", categories[opi % 8], op,
           t->title, thoughts[pick(&b->rng, N_THOUGHTS)].title);
  feedback_of(&b->rng, kope_rng_uniform(&b->rng) < 0.5 ? "compile_error" : "incorrect", 1.0,
              fb, sizeof fb);
  s.op = op;
  s.category = categories[opi % 8];
  s.target = targets[pick(&b->rng, 3)];
  switch (kind) {
  case Q_STATE:
    s.text = text;
    s.feedback = kope_rng_uniform(&b->rng) < 0.5 ? fb : NULL;
    return kope_mem_retrieve(b->db, &s, NULL, 8, r, &b->err);
  case Q_THOUGHT:
    f.thought_id = t->id;
    f.target = s.target;
    return kope_mem_retrieve(b->db, &s, &f, 8, r, &b->err);
  case Q_TEXT:
    s.text = text;
    f.max_digests = 4;
    return kope_mem_retrieve(b->db, &s, &f, 8, r, &b->err);
  case Q_LABEL:
    f.category = s.category;
    f.label = kope_mem_label_name(pick(&b->rng, 4));
    return kope_mem_retrieve(b->db, &s, &f, 8, r, &b->err);
  case Q_AGENT:   /* the operator's description as text, the last feedback */
    snprintf(text, sizeof text, "%s: %s kernel, row-major float32 input and output", op,
             categories[opi % 8]);
    s.text = text;
    s.feedback = kope_rng_uniform(&b->rng) < 0.5 ? fb : NULL;
    return agent_step(b, &s, s.feedback, r);
  default:
    return kope_mem_fixes(b->db, fb, NULL, 8, r, &b->err);
  }
}

static int cmp_d(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double pct(double *v, size_t n, double p)
{
  size_t i;

  if (n == 0)
    return 0.0;
  qsort(v, n, sizeof *v, cmp_d);
  i = (size_t)ceil(p * (double)n) - 1;
  return v[i < n ? i : n - 1];
}

/* Run q queries after a warm-up of max(100, q/10) that is timed apart (a
 * fresh process reads the index pages it needs and learns term counts). */
static int run_queries(bench *b, long q)
{
  long warm = q / 10 > 100 ? q / 10 : 100, i;
  double *all = calloc((size_t)q + 1, sizeof *all), *per[Q_KINDS], *cpu[Q_KINDS];
  double *srv[Q_KINDS], *both[Q_KINDS];
  double first = 0, wmax = 0;
  size_t nk[Q_KINDS] = {0}, recs = 0, tokens = 0;
  int k, rc = KOPE_OK;

  for (k = 0; k < Q_KINDS; k++) {
    per[k] = calloc((size_t)q + 1, sizeof *per[k]);
    cpu[k] = calloc((size_t)q + 1, sizeof *cpu[k]);
    srv[k] = calloc((size_t)q + 1, sizeof *srv[k]);
    both[k] = calloc((size_t)q + 1, sizeof *both[k]);
  }
  for (i = -warm; i < q && rc == KOPE_OK; i++) {
    kope_mem_recs r;
    double t0, c0, s0, ms, cms;
    size_t j;
    k = (int)((i + warm) % Q_KINDS);
    kope_mem_recs_init(&r);
    s0 = cpu_of(b->server);
    c0 = cpu_thread();
    t0 = kope_now();
    rc = one_query(b, k, &r);
    ms = (kope_now() - t0) * 1e3;
    cms = (cpu_thread() - c0) * 1e3;
    srv[k][nk[k]] = (cpu_of(b->server) - s0) * 1e3;
    both[k][nk[k]] = cms + srv[k][nk[k]];
    if (i == -warm)
      first = ms;
    if (i < 0) {
      wmax = ms > wmax ? ms : wmax;
    } else {
      all[i] = ms;
      cpu[k][nk[k]] = cms;
      per[k][nk[k]++] = ms;
      recs += r.n;
      for (j = 0; j < r.n; j++)
        tokens += r.v[j].tokens;
    }
    kope_mem_recs_release(&r);
  }
  printf("retrieval: warm-up of %ld queries (first %.3f ms, slowest %.3f ms), then %ld "
         "queries with %.1f records and %.0f tokens each\n", warm, first, wmax, q,
         (double)recs / (double)q, (double)tokens / (double)q);
  for (k = 0; k < Q_KINDS; k++) {
    printf("  %-34s p50 %.3f ms  p99 %.3f ms  max %.3f ms  (n=%zu)\n", qnames[k],
           pct(per[k], nk[k], 0.5), pct(per[k], nk[k], 0.99), pct(per[k], nk[k], 1.0), nk[k]);
    printf("  %-34s CPU p50 %.3f ms  p99 %.3f ms\n", "", pct(cpu[k], nk[k], 0.5),
           pct(cpu[k], nk[k], 0.99));
    if (b->server)
      printf("  %-34s server CPU p50 %.3f ms  p99 %.3f ms; both p50 %.3f ms  p99 %.3f ms\n",
             "", pct(srv[k], nk[k], 0.5), pct(srv[k], nk[k], 0.99), pct(both[k], nk[k], 0.5),
             pct(both[k], nk[k], 0.99));
  }
  printf("  %-34s p50 %.3f ms  p99 %.3f ms  max %.3f ms\n", "all", pct(all, (size_t)q, 0.5),
         pct(all, (size_t)q, 0.99), pct(all, (size_t)q, 1.0));
  for (k = 0; k < Q_KINDS; k++) {
    free(per[k]);
    free(cpu[k]);
    free(srv[k]);
    free(both[k]);
  }
  free(all);
  return rc;
}

/* ---- main ------------------------------------------------------------------ */

static long file_size(const char *path)
{
  FILE *f = fopen(path, "rb");
  long n = -1;

  if (f && fseek(f, 0, SEEK_END) == 0)
    n = ftell(f);
  if (f)
    fclose(f);
  return n;
}

static int parse_args(int argc, char **argv, long *cases, long *queries, const char **db,
                      uint64_t *seed, int *keep, long *bulk)
{
  int i;

  for (i = 1; i < argc; i++) {
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(argv[i], "--keep"))
      *keep = 1;
    else if (v && !strcmp(argv[i], "--cases") && (i++, 1))
      *cases = atol(v);
    else if (v && !strcmp(argv[i], "--queries") && (i++, 1))
      *queries = atol(v);
    else if (v && !strcmp(argv[i], "--db") && (i++, 1))
      *db = v;
    else if (v && !strcmp(argv[i], "--seed") && (i++, 1))
      *seed = (uint64_t)atoll(v);
    else if (v && !strcmp(argv[i], "--bulk") && (i++, 1))
      *bulk = atol(v);
    else {
      fprintf(stderr, "usage: bench_memory [--cases N] [--queries Q] [--bulk M] "
                      "[--db PATH] [--seed S] [--keep]\n");
      return 2;
    }
  }
  return *cases > 0 && *queries > 0 ? 0 : 2;
}

static void report_growth(const bench *b, const char *path, double t_all)
{
  printf("store: %s, %ld Cases in %ld sessions, %ld Journal entries, file %.1f MiB\n", path,
         b->inserted, b->sessions, b->journals, (double)file_size(path) / 1048576.0);
  printf("forest: mean depth %.1f, max depth %ld\n", b->depth_sum / (double)b->inserted,
         b->max_depth);
  printf("insertion, one transaction per Case (kernel source, Case, Journal entry, full-text "
         "rows, ancestors' d):\n  %.0f Cases/s over the whole growth, %.0f Cases/s over the "
         "last %ld (store of %ld+)\n", (double)b->inserted / b->t_case,
         (double)(b->inserted - b->mark) / b->t_tail, b->inserted - b->mark, b->mark);
  printf("  CPU time over the last %ld: %.0f us per Case (all threads; wall %.0f us)\n",
         b->inserted - b->mark, 1e6 * b->cpu_tail / (double)(b->inserted - b->mark),
         1e6 * b->t_tail / (double)(b->inserted - b->mark));
  printf("  digest refresh at session end %.2f ms mean; total generation %.1f s\n",
         1e3 * b->t_digest / (double)b->sessions, t_all);
}

/* Add m more Cases, 500 per transaction (the import/bulk path). */
static int bulk_phase(bench *b, long m)
{
  long before = b->inserted;
  int rc;

  b->batch = 500;
  b->cases_target = b->inserted + m;
  b->mark = b->inserted;
  b->t_tail = 0.0;
  rc = generate(b);
  if (rc == KOPE_OK)
    printf("insertion, 500 Cases per transaction (bulk/import path), store of %ld+: "
           "%.0f Cases/s\n", before, (double)(b->inserted - before) / b->t_tail);
  return rc;
}

int main(int argc, char **argv)
{
  bench b;
  long cases = 100000, queries = 2000, bulk = -1;
  const char *dbpath = NULL;
  char dir[] = "/tmp/kope-bench-XXXXXX", *path = NULL;
  uint64_t seed = 42;
  int keep = 0, rc;
  double t0, t_all;

  if (parse_args(argc, argv, &cases, &queries, &dbpath, &seed, &keep, &bulk) != 0)
    return 2;
  memset(&b, 0, sizeof b);
  kope_rng_seed(&b.rng, seed);
  b.cases_target = cases;
  b.mark = cases - cases / 10;
  b.batch = 1;
  if (bulk < 0)
    bulk = cases / 10;
  if (!dbpath && !mkdtemp(dir))
    return 3;
  path = dbpath ? kope_strdup(dbpath) : kope_path_join(dir, "bench.db");
  if (!(b.db = kope_db_open(path, 0, &b.err))) {
    fprintf(stderr, "bench_memory: %s\n", b.err.msg);
    return b.err.code;
  }
  t0 = kope_now();
  rc = generate(&b);
  t_all = kope_now() - t0;
  if (rc == KOPE_OK)
    report_growth(&b, path, t_all);
  if (rc == KOPE_OK && bulk > 0)
    rc = bulk_phase(&b, bulk);
  if (rc == KOPE_OK && !strncmp(path, "postgres", 8)) {
    b.server = pg_backend(path);
    printf("server process: %ld%s\n", b.server,
           b.server ? "" : " (not found: no server CPU figures)");
  }
  if (rc == KOPE_OK)
    rc = run_queries(&b, queries);
  if (rc != KOPE_OK)
    fprintf(stderr, "bench_memory: %s\n", b.err.msg);
  kope_db_close(b.db);
  if (!dbpath && !keep)
    kope_rmtree(dir);
  free(path);
  return rc;
}
