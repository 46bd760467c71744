/*
 * Correctness machinery of the evaluator: where buffers live in the shared
 * regions, fresh inputs per seed (signed, mixed-scale variants), poisoned
 * outputs with a canary up to a guard page, and the comparison of the
 * candidate's outputs with the reference's under the operator's
 * tolerances (f32 blocks in single-precision SIMD first, exact double
 * precision where a block is in doubt), reporting the first mismatch.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include "core/par.h"
#include "eval/eval_int.h"

#define PAGE 4096u
#define CANARY 0xA5u

static uint64_t align_up(uint64_t x, uint64_t a)
{
  return (x + a - 1) / a * a;
}

void kope_eval_layout(const kope_op *op, const kope_case_bind *b, kope_layout *l)
{
  uint64_t in = 0, out = 0;
  size_t i;

  memset(l, 0, sizeof *l);
  for (i = 0; i < kope_op_nargs(op); i++) {
    const kope_arg *a = kope_op_arg(op, i);
    uint64_t bytes = (uint64_t)b->count[i] * kope_dtype_size(a->dtype);
    if (a->role == KOPE_ROLE_IN) {
      l->off[i] = in;
      l->end[i] = in + bytes;
      in = align_up(in + bytes + 1, 64);
    } else if (a->role == KOPE_ROLE_OUT) {
      l->off[i] = out;
      l->end[i] = out + bytes;
      l->guard[i] = align_up(out + bytes, PAGE);
      out = l->guard[i] + PAGE;
    }
  }
  l->in_size = (size_t)align_up(in ? in : 1, PAGE);
  l->out_size = (size_t)(out ? out : PAGE);
}

/* Inputs are generated in fixed chunks, each with its own stream, so the
 * fill runs in parallel and the values do not depend on the thread count. */
#define CHUNK 32768

static const double mixed_scales[13] = {
  1.0 / 64, 1.0 / 32, 1.0 / 16, 1.0 / 8, 1.0 / 4, 1.0 / 2, 1, 2, 4, 8, 16, 32, 64
};

/* Normals from a table of 4097 quantiles of the standard normal with
 * linear interpolation between them: 2^32 distinct, continuous-looking
 * values, tails to about 3.6 sigma, and a few ns per value (input
 * generation is most of kope's own time per evaluation). */
#define QN 4096
static double quantiles[QN + 1];
static pthread_once_t quantiles_once = PTHREAD_ONCE_INIT;

static double inv_normal(double p)
{
  double x = 0.0;
  int i;

  for (i = 0; i < 60; i++) {   /* Newton on Phi(x) - p */
    double f = 0.5 * erfc(-x / sqrt(2.0)) - p;
    double d = exp(-0.5 * x * x) / sqrt(2.0 * 3.14159265358979323846);
    x -= f / d;
    if (fabs(f) < 1e-15)
      break;
  }
  return x;
}

/* single precision: cell start and width, for f32 inputs */
static float quant_f[QN], width_f[QN];

static void init_quantiles(void)
{
  int i;

  for (i = 0; i <= QN; i++)
    quantiles[i] = inv_normal((i + 0.5) / (QN + 1.0));
  for (i = 0; i < QN; i++) {
    quant_f[i] = (float)quantiles[i];
    width_f[i] = (float)(quantiles[i + 1] - quantiles[i]);
  }
}

static inline double table_normal(uint32_t bits)
{
  uint32_t i = bits >> 20;                         /* 12 bits: cell */
  double f = (double)(bits & 0xfffff) * 0x1.0p-20;  /* 20 bits: position */
  return quantiles[i] + (quantiles[i + 1] - quantiles[i]) * f;
}

/* One f32 value from 32 random bits. */
static inline float f32_value(const kope_arg *a, uint32_t u)
{
  if (a->dist == KOPE_DIST_UNIFORM)
    return (float)(a->a + (a->b - a->a) * (double)u * 0x1.0p-32);
  return (float)a->a +
         (float)a->b * (quant_f[u >> 20] + width_f[u >> 20] * (float)(u & 0xfffff) * 0x1.0p-20f);
}

/* f32 inputs: two values per 64-bit draw at a fixed scale; the mixed
 * scales (variant 1) take the scale from the draw's low half. */
static void fill_chunk_f32(const kope_arg *a, float *p, int64_t lo, int64_t hi, kope_rng *r,
                           int variant)
{
  float fixed = variant == 2 ? 16.0f : variant == 3 ? 1.0f / 16.0f : 1.0f;
  int64_t j;

  if (variant == 1) {
    for (j = lo; j < hi; j++) {
      uint64_t bits = kope_rng_next(r);
      uint32_t k = (uint32_t)(((bits & 0xffffffffu) * 13) >> 32);
      p[j] = f32_value(a, (uint32_t)(bits >> 32)) * (float)mixed_scales[k];
    }
    return;
  }
  for (j = lo; j + 1 < hi; j += 2) {
    uint64_t bits = kope_rng_next(r);
    p[j] = f32_value(a, (uint32_t)(bits >> 32)) * fixed;
    p[j + 1] = f32_value(a, (uint32_t)bits) * fixed;
  }
  if (j < hi)
    p[j] = f32_value(a, (uint32_t)(kope_rng_next(r) >> 32)) * fixed;
}

/* f64 inputs: one value per draw, in double precision. */
static void fill_chunk(const kope_arg *a, unsigned char *p, int64_t lo, int64_t hi,
                       kope_rng *r, int variant)
{
  double fixed = variant == 2 ? 16.0 : variant == 3 ? 1.0 / 16.0 : 1.0;
  int64_t j;

  for (j = lo; j < hi; j++) {
    uint64_t bits = kope_rng_next(r);
    double x, sc = fixed;
    if (a->dist == KOPE_DIST_UNIFORM)
      x = a->a + (a->b - a->a) * (double)(bits >> 11) * 0x1.0p-53;
    else
      x = a->a + a->b * table_normal((uint32_t)(bits >> 32));
    if (variant == 1)
      sc = mixed_scales[(bits & 0xffffffffu) % 13];
    ((double *)(void *)p)[j] = x * sc;
  }
}

typedef struct fill_ctx {
  const kope_arg *a;
  unsigned char *p;
  int64_t n;
  uint64_t seed;
  int variant;
} fill_ctx;

static void fill_part(void *vctx, int64_t lo, int64_t hi, int part)
{
  fill_ctx *c = vctx;
  int64_t k;

  (void)part;
  for (k = lo; k < hi; k++) {
    kope_rng r;
    int64_t end = (k + 1) * CHUNK < c->n ? (k + 1) * CHUNK : c->n;
    kope_rng_seed(&r, kope_rng_mix(c->seed, (uint64_t)k));
    if (c->a->dtype == KOPE_F32)
      fill_chunk_f32(c->a, (float *)(void *)c->p, k * CHUNK, end, &r, c->variant);
    else
      fill_chunk(c->a, c->p, k * CHUNK, end, &r, c->variant);
  }
}

static void fill_float(const kope_arg *a, unsigned char *p, int64_t n, uint64_t seed,
                       int variant)
{
  fill_ctx c = {a, p, n, seed, a->vary ? variant % 4 : 0};

  pthread_once(&quantiles_once, init_quantiles);
  kope_par_for((n + CHUNK - 1) / CHUNK, 4, fill_part, &c);
}

static void fill_int(const kope_op *op, const kope_arg *a, const kope_case_bind *b,
                     unsigned char *p, int64_t n, kope_rng *r)
{
  int64_t lo = 0, hi = 0, j;

  kope_op_eval_expr(op, b, a->lo_expr, &lo, NULL);
  kope_op_eval_expr(op, b, a->hi_expr, &hi, NULL);
  for (j = 0; j < n; j++) {
    int64_t x = kope_rng_int(r, lo, hi);
    if (a->dtype == KOPE_I32)
      ((int32_t *)p)[j] = (int32_t)x;
    else
      ((int64_t *)p)[j] = x;
  }
}

void kope_eval_fill_inputs(const kope_op *op, const kope_case_bind *b, const kope_layout *l,
                           unsigned char *in, uint64_t seed, int variant)
{
  size_t i;

  for (i = 0; i < kope_op_nargs(op); i++) {
    const kope_arg *a = kope_op_arg(op, i);
    kope_rng r;
    if (a->role != KOPE_ROLE_IN)
      continue;
    if (a->dtype == KOPE_F32 || a->dtype == KOPE_F64) {
      fill_float(a, in + l->off[i], b->count[i], kope_rng_mix(seed, i + 1), variant);
    } else {
      kope_rng_seed(&r, kope_rng_mix(seed, i + 1));
      fill_int(op, a, b, in + l->off[i], b->count[i], &r);
    }
  }
}

/* A poison value that changes per trial: a quiet NaN with a trial payload
 * for floats, a large trial-dependent pattern for integers. Large buffers
 * are written at memset speed: a 4 KiB block of the pattern, copied. */
static void poison_buf(kope_dtype t, unsigned char *p, int64_t n, uint64_t trial)
{
  uint32_t p32 = 0x7fc00000u | (uint32_t)(trial * 2654435761u & 0x3fffffu);
  uint64_t p64 = 0x7ff8000000000000ull | (trial * 0x9e3779b97f4a7c15ull & 0x7ffffffffffffull);
  uint64_t blk[512];
  size_t sz = kope_dtype_size(t), bytes = (size_t)n * sz, off, k;

  if (t == KOPE_I32)
    p32 = 0x5a5a0000u ^ (uint32_t)(trial & 0xffff);
  if (t == KOPE_I64)
    p64 = 0x5a5a5a5a00000000ull ^ (trial & 0xffffffffull);
  if (sz == 4)
    p64 = (uint64_t)p32 << 32 | p32;
  for (k = 0; k < 512 && k * 8 < bytes; k++)
    blk[k] = p64;
  for (off = 0; off < bytes; off += sizeof blk)
    memcpy(p + off, blk, bytes - off < sizeof blk ? bytes - off : sizeof blk);
}

void kope_eval_poison(const kope_op *op, const kope_case_bind *b, const kope_layout *l,
                      unsigned char *out, uint64_t trial)
{
  size_t i;

  for (i = 0; i < kope_op_nargs(op); i++) {
    const kope_arg *a = kope_op_arg(op, i);
    if (a->role != KOPE_ROLE_OUT)
      continue;
    poison_buf(a->dtype, out + l->off[i], b->count[i], trial);
    memset(out + l->end[i], CANARY, l->guard[i] - l->end[i]);
  }
}

static inline double get_f(const unsigned char *p, kope_dtype t, int64_t j)
{
  switch (t) {
  case KOPE_F32: return ((const float *)p)[j];
  case KOPE_F64: return ((const double *)p)[j];
  case KOPE_I32: return ((const int32_t *)p)[j];
  default: return (double)((const int64_t *)p)[j];
  }
}

typedef struct cmp_ctx {
  const kope_arg *a;
  const unsigned char *g, *e;
  double rms;
  uint64_t trial;
  double sum[KOPE_PAR_MAX], worst[KOPE_PAR_MAX], wratio[KOPE_PAR_MAX];
  int64_t count[KOPE_PAR_MAX], first[KOPE_PAR_MAX];
} cmp_ctx;

static void rms_part(void *vctx, int64_t lo, int64_t hi, int part)
{
  cmp_ctx *c = vctx;
  double s = 0.0;
  int64_t j, k = 0;

  if (c->a->dtype == KOPE_F32) {
    const float *e = (const float *)(const void *)c->e;
    for (j = lo; j < hi; j++) {
      double x = e[j];
      int fin = isfinite(x);
      s += fin ? x * x : 0.0;
      k += fin;
    }
    c->sum[part] = s;
    c->count[part] = k;
    return;
  }
  for (j = lo; j < hi; j++) {
    double x = get_f(c->e, c->a->dtype, j);
    if (isfinite(x)) {
      s += x * x;
      k++;
    }
  }
  c->sum[part] = s;
  c->count[part] = k;
}

static double rms_of(cmp_ctx *c, int64_t n)
{
  double s = 0.0;
  int64_t k = 0;
  int p, parts = kope_par_for(n, 65536, rms_part, c);

  for (p = 0; p < parts; p++) {
    s += c->sum[p];
    k += c->count[p];
  }
  return k ? sqrt(s / (double)k) : 0.0;
}

/* 1 when got passes against exp. */
static inline int elem_ok(const kope_arg *a, double e, double g, double rms, double *err,
                          double *bound)
{
  *err = 0.0;
  *bound = 0.0;
  if (a->dtype == KOPE_I32 || a->dtype == KOPE_I64) {
    *err = fabs(g - e);
    return g == e;
  }
  if (isnan(e))
    return isnan(g);
  if (isinf(e))
    return g == e;
  if (!isfinite(g))
    return 0;
  *err = fabs(g - e);
  *bound = a->atol + a->rtol * fabs(e) + a->nrtol * rms;
  return *err <= *bound;
}

static int is_poison(kope_dtype t, const unsigned char *p, int64_t j, uint64_t trial)
{
  unsigned char ref[8];

  poison_buf(t, ref, 1, trial);
  return !memcmp(p + (size_t)j * kope_dtype_size(t), ref, kope_dtype_size(t));
}

/* f32 fast path: finite values within tolerance pass here; anything else
 * (NaN, Inf, out of tolerance) goes through elem_ok. */
static int64_t fail_f32(cmp_ctx *c, int64_t j, int64_t hi, double *worst, double *wratio)
{
  const float *g = (const float *)(const void *)c->g, *e = (const float *)(const void *)c->e;
  double base = c->a->atol + c->a->nrtol * c->rms, rtol = c->a->rtol, w = *worst, wr = *wratio;

  for (; j < hi; j++) {
    double d = fabs((double)g[j] - (double)e[j]), bound = base + rtol * fabs((double)e[j]);
    if (!(d <= bound) || !isfinite(d))
      break;
    w = d > w ? d : w;
    if (d > wr * bound)   /* d > 0 here, so bound > 0 */
      wr = d / bound;
  }
  *worst = w;
  *wratio = wr;
  return j;
}

/* The exact judgement of elements [lo, hi): index of the first failure
 * or -1; worst and wratio grow with the passing elements. */
static int64_t exact_range(cmp_ctx *c, int64_t lo, int64_t hi, double *worst, double *wratio)
{
  int64_t j;

  for (j = lo; j < hi; j++) {
    if (c->a->dtype == KOPE_F32 && (j = fail_f32(c, j, hi, worst, wratio)) >= hi)
      break;
    double err, bound, ev = get_f(c->e, c->a->dtype, j);
    /* where the reference gives NaN, the poison NaN must still be gone */
    if (!elem_ok(c->a, ev, get_f(c->g, c->a->dtype, j), c->rms, &err, &bound) ||
        (isnan(ev) && is_poison(c->a->dtype, c->g, j, c->trial)))
      return j;
    *worst = err > *worst ? err : *worst;
    if (err > *wratio * bound)
      *wratio = err / bound;
  }
  return -1;
}

/* f32 blocks of SIMD_BLOCK elements are first judged four lanes at a time
 * in single precision (GCC/Clang vector extensions, SSE on x86-64), with
 * a margin: a block passes here only when every element equals its
 * expected value or is below 1 - 2^-20 of a finite bound of at least
 * 2^-126, which the single-precision rounding of the difference and the
 * bound (a few 2^-24) cannot turn into a failure in double precision.
 * Any other block (a NaN, an Inf, poison, an element near or beyond its
 * bound) is judged again by exact_range. The block's largest
 * error and error/bound ratio are single-precision figures. */
#define SIMD_BLOCK 1024
typedef float v4f __attribute__((vector_size(16)));
typedef int32_t v4i __attribute__((vector_size(16)));

static int simd_block_ok(const cmp_ctx *c, int64_t j, double *worst, double *wratio)
{
  const float *g = (const float *)(const void *)c->g + j;
  const float *e = (const float *)(const void *)c->e + j;
  const float base = (float)(c->a->atol + c->a->nrtol * c->rms), rtol = (float)c->a->rtol;
  const v4i absm = {0x7fffffff, 0x7fffffff, 0x7fffffff, 0x7fffffff};
  const v4f vb = {base, base, base, base}, vr = {rtol, rtol, rtol, rtol};
  const v4f shrink = {1.0f - 0x1p-20f, 1.0f - 0x1p-20f, 1.0f - 0x1p-20f, 1.0f - 0x1p-20f};
  const v4f tiny = {0x1p-126f, 0x1p-126f, 0x1p-126f, 0x1p-126f}, zero = {0, 0, 0, 0};
  const v4f inf = (v4f)(absm ^ 0x007fffff);
  v4i bad = {0, 0, 0, 0}, wm = bad, qm = bad;
  float lane[8];
  int k;

  for (k = 0; k < SIMD_BLOCK; k += 4) {
    v4f gv, ev, d, b, q;
    v4i di, qi, gt;
    memcpy(&gv, g + k, sizeof gv);
    memcpy(&ev, e + k, sizeof ev);
    di = (v4i)(gv - ev) & absm;
    d = (v4f)di;
    b = vb + vr * (v4f)((v4i)ev & absm);
    /* d == 0: equal finite values, a pass at any bound; else d within
     * the margin of a finite bound in the normal range (a subnormal
     * bound's rounding is not relative); NaN and Inf fail every test */
    bad |= ~((d == zero) | ((d <= b * shrink) & (b >= tiny) & (b < inf)));
    gt = di > wm;                /* non-negative floats order as integers */
    wm = (wm & ~gt) | (di & gt);
    q = d / (b + tiny);
    qi = (v4i)q;
    gt = qi > qm;
    qm = (qm & ~gt) | (qi & gt);
  }
  if (bad[0] | bad[1] | bad[2] | bad[3])
    return 0;
  memcpy(lane, &wm, sizeof wm);
  memcpy(lane + 4, &qm, sizeof qm);
  for (k = 0; k < 4; k++) {
    *worst = lane[k] > *worst ? lane[k] : *worst;
    *wratio = lane[4 + k] > *wratio ? lane[4 + k] : *wratio;
  }
  return 1;
}

static void fail_part(void *vctx, int64_t lo, int64_t hi, int part)
{
  cmp_ctx *c = vctx;
  double worst = 0.0, wratio = 0.0;
  int64_t j, end, first = -1;

  for (j = lo; j < hi && first < 0; j = end) {
    end = hi - j < SIMD_BLOCK ? hi : j + SIMD_BLOCK;
    if (c->a->dtype == KOPE_F32 && end - j == SIMD_BLOCK && simd_block_ok(c, j, &worst, &wratio))
      continue;
    first = exact_range(c, j, end, &worst, &wratio);
  }
  c->first[part] = first;
  c->worst[part] = worst;
  c->wratio[part] = wratio;
}

/* Index of the first failing element (n when none); the largest error of
 * the passing elements goes to max_err[0], the largest error as a fraction
 * of its tolerance bound to max_err[1]. */
static int64_t first_failure(cmp_ctx *c, int64_t n, double max_err[2])
{
  int p, parts = kope_par_for(n, 65536, fail_part, c);

  for (p = 0; p < parts; p++) {
    if (c->worst[p] > max_err[0])
      max_err[0] = c->worst[p];
    if (c->wratio[p] > max_err[1])
      max_err[1] = c->wratio[p];
    if (c->first[p] >= 0)
      return c->first[p];   /* parts are in order: the first hit is the first failure */
  }
  return n;
}

static void mismatch(const kope_op *op, size_t c, int s, const kope_arg *a, int64_t j,
                     double e, double g, int unwritten, kope_report *r)
{
  char *label = kope_op_case_label(op, c), tag[300];

  kope_eval_case_tag(op, c, tag, sizeof tag);
  if (unwritten)
    kope_report_fail(r, KOPE_INCORRECT, "%s[%lld] was never written (still poison), expected "
                     "%.9g (%s, seed %d)", a->name, (long long)j, e, tag, s);
  else
    kope_report_fail(r, KOPE_INCORRECT, "%s[%lld] = %.9g, expected %.9g (%s, seed %d)",
                     a->name, (long long)j, g, e, tag, s);
  {
    char es[40], gs[40];
    snprintf(es, sizeof es, "%.9g", e);
    snprintf(gs, sizeof gs, "%.9g", g);
    r->mismatch = json_pack("{s:i, s:s, s:s, s:i, s:s, s:I, s:s, s:s, s:b}", "case", (int)c,
                            "case_name", kope_op_case_name(op, c), "case_dims", label, "seed", s, "output", a->name, "index",
                            (json_int_t)j, "expected", es, "got", gs, "unwritten", unwritten);
  }
  free(label);
}

void kope_eval_case_tag(const kope_op *op, size_t c, char *buf, size_t size)
{
  char *label = kope_op_case_label(op, c);
  const char *name = kope_op_case_name(op, c);

  if (*name)
    snprintf(buf, size, "case %zu \"%s\" (%s)", c, name, label);
  else
    snprintf(buf, size, "case %zu (%s)", c, label);
  free(label);
}

static int check_canary(const kope_op *op, const kope_arg *a, const kope_layout *l, size_t i,
                        const unsigned char *got, size_t c, kope_report *r)
{
  uint64_t k;

  for (k = l->end[i]; k < l->guard[i]; k++)
    if (got[k] != CANARY) {
      char tag[300];
      kope_eval_case_tag(op, c, tag, sizeof tag);
      kope_report_fail(r, KOPE_INCORRECT, "wrote past the end of output %s (byte %llu after "
                       "its last element, %s)", a->name,
                       (unsigned long long)(k - l->end[i]), tag);
      return -1;
    }
  return 0;
}

int kope_eval_compare(const kope_op *op, size_t c, int s, const kope_case_bind *b,
                      const kope_layout *l, const unsigned char *got, const unsigned char *exp,
                      uint64_t trial, kope_report *r, double max_err[2])
{
  size_t i;
  int64_t j;

  for (i = 0; i < kope_op_nargs(op); i++) {
    const kope_arg *a = kope_op_arg(op, i);
    const unsigned char *g, *e;
    double rms;
    if (a->role != KOPE_ROLE_OUT)
      continue;
    g = got + l->off[i];
    e = exp + l->off[i];
    {
      cmp_ctx cc;
      memset(&cc, 0, sizeof cc);
      cc.a = a;
      cc.g = g;
      cc.e = e;
      cc.trial = trial;
      rms = a->nrtol != 0 ? rms_of(&cc, b->count[i]) : 0.0;   /* nrtol 0: unused */
      cc.rms = rms;
      j = first_failure(&cc, b->count[i], max_err);
    }
    if (j < b->count[i]) {
      mismatch(op, c, s, a, j, get_f(e, a->dtype, j), get_f(g, a->dtype, j),
               is_poison(a->dtype, g, j, trial), r);
      return -1;
    }
    if (check_canary(op, a, l, i, got, c, r))
      return -1;
  }
  return 0;
}

static uint64_t hash_full(const unsigned char *p, size_t n);

/* Four independent lanes of 8 bytes (no chain of multiplies from one
 * word to the next), combined at the end. */
static uint64_t hash_block(const unsigned char *p, size_t n)
{
  uint64_t h[4] = {0x84222325cbf29ce4ull, 1, 2, 3}, w;
  size_t i;
  int k;

  for (i = 0; i + 32 <= n; i += 32)
    for (k = 0; k < 4; k++) {
      memcpy(&w, p + i + 8 * k, 8);
      h[k] = (h[k] ^ w) * 0x100000001b3ull;
      h[k] ^= h[k] >> 29;
    }
  for (k = 1; k < 4; k++)
    h[0] = kope_rng_mix(h[0], h[k]);
  for (; i < n; i++)
    h[0] = (h[0] ^ p[i]) * 0x100000001b3ull;
  return h[0];
}

/* A fast non-cryptographic hash of a region, computed in 1 MiB blocks in
 * parallel and combined in order. Regions above 4 MiB are sampled (the
 * first and last 64 KiB whole, then one 64-byte line per 4 KiB page):
 * workers map inputs read-only, so this is a check on kope itself and must
 * not cost a full pass over hundreds of MB per seed. */
uint64_t kope_eval_hash(const unsigned char *p, size_t n)
{
  if (n > ((size_t)4 << 20)) {
    uint64_t h = hash_block(p, 65536) ^ kope_rng_mix(hash_block(p + n - 65536, 65536), 1);
    size_t off;
    for (off = 65536; off + 64 <= n - 65536; off += 4096)
      h = kope_rng_mix(h, hash_block(p + off, 64));
    return h;
  }
  return hash_full(p, n);
}

typedef struct hash_ctx {
  const unsigned char *p;
  size_t n;
  uint64_t h[KOPE_PAR_MAX];
} hash_ctx;

static void hash_part(void *vctx, int64_t lo, int64_t hi, int part)
{
  hash_ctx *c = vctx;
  const size_t blk = (size_t)1 << 20;
  uint64_t h = 0;
  int64_t k;

  for (k = lo; k < hi; k++) {
    size_t off = (size_t)k * blk, len = c->n - off < blk ? c->n - off : blk;
    h ^= kope_rng_mix(hash_block(c->p + off, len), (uint64_t)k);
  }
  c->h[part] = h;
}

uint64_t kope_eval_hash_all(const unsigned char *p, size_t n)
{
  return hash_full(p, n);
}

static uint64_t hash_full(const unsigned char *p, size_t n)
{
  hash_ctx c = {p, n, {0}};
  uint64_t h = 0;
  int k, parts = kope_par_for((int64_t)((n + ((size_t)1 << 20) - 1) >> 20), 3, hash_part, &c);

  for (k = 0; k < parts; k++)
    h ^= c.h[k];
  return h;
}
