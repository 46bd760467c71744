/*
 * Hardware profile: what this CPU is and the two figures of its roofline.
 *
 * Detection reads the facts the kernel exposes: /proc/cpuinfo for the model,
 * the physical cores (unique (physical id, core id) pairs) and the SIMD flags
 * (filtered to those a compute kernel can use), sysconf for the online
 * threads, sysfs for the cache sizes of cpu0, and the first line of
 * `gcc --version`. Measurement runs two small benchmarks on all threads with
 * OpenMP: an FMA loop of independent accumulator chains for peak FP32
 * FLOP/s (AVX-512 or AVX2+FMA chosen at run time, so the library itself
 * stays generic x86-64; a scalar loop elsewhere) and a STREAM-style triad
 * over arrays far larger than the last-level cache for memory bandwidth.
 * Both take the best of a few repetitions; together about a second.
 *
 * Profiles are cached as JSON keyed by a fingerprint of the detected facts
 * (model, threads, SIMD features, caches). A cache that is missing,
 * unparsable, incomplete or from other hardware is ignored and re-measured;
 * a cache that cannot be written is not an error, since the measurement is
 * still valid.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sched.h>
#include <unistd.h>
#include <sys/utsname.h>
#include <jansson.h>
#include "kope/hw.h"
#include "hw_int.h"
#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

#ifndef KOPE_VERSION
#define KOPE_VERSION "unknown"
#endif

#define HW_PEAK_REP_S 0.06    /* target seconds per FMA repetition */
#define HW_PEAK_REPS 3
/* A profile is suspect when the all-threads peak is under this fraction
 * of cores x the one-thread peak, or when a smaller memory level is this
 * many times slower than a larger one (measured under load). */
#define HW_SUSPECT_PEAK 0.5
#define HW_SUSPECT_BW 2.0

/* Written with every benchmark result so no loop can be optimised away. */
static volatile float hw_sink;


/* The SIMD flags worth telling a kernel writer about: the /proc/cpuinfo
 * spelling and the name kope reports. */
static const struct {
  const char *flag;
  const char *name;
} hw_features[] = {
  {"sse2", "sse2"}, {"pni", "sse3"}, {"ssse3", "ssse3"},
  {"sse4_1", "sse4_1"}, {"sse4_2", "sse4_2"}, {"avx", "avx"},
  {"avx2", "avx2"}, {"fma", "fma"}, {"f16c", "f16c"},
  {"avx512f", "avx512f"}, {"avx512dq", "avx512dq"},
  {"avx512cd", "avx512cd"}, {"avx512bw", "avx512bw"},
  {"avx512vl", "avx512vl"}, {"avx512ifma", "avx512ifma"},
  {"avx512vbmi", "avx512vbmi"}, {"avx512_vnni", "avx512_vnni"},
  {"avx512_bf16", "avx512_bf16"}, {"avx512_fp16", "avx512_fp16"},
  {"avx_vnni", "avx_vnni"}, {"amx_tile", "amx_tile"},
  {"amx_bf16", "amx_bf16"}, {"amx_int8", "amx_int8"},
  /* Arm: "asimd" on AArch64, "neon" on 32-bit Arm. */
  {"asimd", "neon"}, {"neon", "neon"}, {"asimdhp", "asimdhp"},
  {"asimddp", "asimddp"}, {"i8mm", "i8mm"}, {"bf16", "bf16"},
  {"sve", "sve"}, {"sve2", "sve2"}, {"sme", "sme"},
};

/* ---- detection ---------------------------------------------------------- */

/* Whether word is one of the whitespace-separated tokens of list. */
static int hw_has_token(const char *list, const char *word)
{
  size_t n = word ? strlen(word) : 0;
  const char *p = list;

  if (!list || n == 0)
    return 0;
  while ((p = strstr(p, word)) != NULL) {
    int starts = p == list || isspace((unsigned char)p[-1]);
    int ends = p[n] == '\0' || isspace((unsigned char)p[n]);
    if (starts && ends)
      return 1;
    p += n;
  }
  return 0;
}

/* Keep strings printable ASCII so they are valid JSON and clean Markdown. */
static void hw_sanitize(char *s)
{
  for (; s && *s; s++)
    if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e)
      *s = '?';
}

static void hw_trim(char *s)
{
  size_t n = strlen(s);

  while (n > 0 && isspace((unsigned char)s[n - 1]))
    s[--n] = '\0';
}

/* What the scan of /proc/cpuinfo collects. */
struct hw_scan {
  char *model;        /* "model name" */
  char *alt_model;    /* "Hardware", "Processor", "cpu model", "uarch" */
  char *flags;        /* "flags" (x86) or "Features" (Arm) of the first CPU */
  long long *pairs;   /* unique (physical id, core id), packed */
  size_t npairs, cap;
  long phys;          /* physical id of the current processor block */
};

static void hw_scan_add_pair(struct hw_scan *sc, long core)
{
  long long key = ((long long)sc->phys << 24) | (core & 0xffffff);
  size_t i;

  for (i = 0; i < sc->npairs; i++)
    if (sc->pairs[i] == key)
      return;
  if (sc->npairs == sc->cap) {
    size_t cap = sc->cap ? sc->cap * 2 : 64;
    long long *p = realloc(sc->pairs, cap * sizeof *p);
    if (!p)
      return;
    sc->pairs = p;
    sc->cap = cap;
  }
  sc->pairs[sc->npairs++] = key;
}

static int hw_is_alt_model_key(const char *key)
{
  return !strcmp(key, "Hardware") || !strcmp(key, "Processor") ||
         !strcmp(key, "cpu model") || !strcmp(key, "uarch");
}

static void hw_scan_line(struct hw_scan *sc, char *line)
{
  char *colon = strchr(line, ':');
  char *val;

  if (!colon)
    return;
  *colon = '\0';
  hw_trim(line);
  for (val = colon + 1; isspace((unsigned char)*val); val++)
    ;
  hw_trim(val);
  if (!strcmp(line, "processor"))
    sc->phys = 0;
  else if (!strcmp(line, "model name") && !sc->model && *val)
    sc->model = kope_strdup(val);
  else if (hw_is_alt_model_key(line) && !sc->alt_model && *val)
    sc->alt_model = kope_strdup(val);
  else if ((!strcmp(line, "flags") || !strcmp(line, "Features")) && !sc->flags)
    sc->flags = kope_strdup(val);
  else if (!strcmp(line, "physical id"))
    sc->phys = atol(val);
  else if (!strcmp(line, "core id"))
    hw_scan_add_pair(sc, atol(val));
}

static void hw_scan_text(struct hw_scan *sc, char *text)
{
  char *line = text, *next;

  for (; line && *line; line = next) {
    next = strchr(line, '\n');
    if (next)
      *next++ = '\0';
    hw_scan_line(sc, line);
  }
}

/* The space-separated kope names of the relevant flags, in table order. */
static char *hw_filter_features(const char *flags)
{
  kope_buf b;
  size_t i;

  kope_buf_init(&b, 0);
  for (i = 0; i < sizeof hw_features / sizeof hw_features[0]; i++) {
    if (!hw_has_token(flags, hw_features[i].flag) ||
        hw_has_token(b.data, hw_features[i].name))
      continue;
    kope_buf_printf(&b, "%s%s", b.len ? " " : "", hw_features[i].name);
  }
  return kope_buf_steal(&b);
}

static char *hw_fallback_model(void)
{
  struct utsname u;

  if (uname(&u) == 0)
    return kope_sprintf("unknown %s CPU", u.machine);
  return kope_strdup("unknown CPU");
}

static void hw_detect_cpu(kope_hw *hw)
{
  struct hw_scan sc = {0};
  char *text = kope_file_read("/proc/cpuinfo", NULL, NULL);
  long n = sysconf(_SC_NPROCESSORS_ONLN);

  if (text)
    hw_scan_text(&sc, text);
  hw->threads = n > 0 ? (int)n : 1;
  hw->cores = sc.npairs > 0 ? (int)sc.npairs : hw->threads;
  if (hw->cores > hw->threads)
    hw->cores = hw->threads;
  if (sc.model) {
    hw->cpu_model = sc.model;
    sc.model = NULL;
  } else if (sc.alt_model) {
    hw->cpu_model = sc.alt_model;
    sc.alt_model = NULL;
  } else {
    hw->cpu_model = hw_fallback_model();
  }
  hw_sanitize(hw->cpu_model);
  hw->simd = hw_filter_features(sc.flags ? sc.flags : "");
  free(sc.model);
  free(sc.alt_model);
  free(sc.flags);
  free(sc.pairs);
  free(text);
}

/* First line of a small file, without the newline; -1 when unreadable. */
static int hw_read_line(const char *path, char *buf, size_t n)
{
  FILE *f = fopen(path, "r");
  int ok;

  if (!f)
    return -1;
  ok = fgets(buf, (int)n, f) != NULL;
  fclose(f);
  if (!ok)
    return -1;
  buf[strcspn(buf, "\r\n")] = '\0';
  return 0;
}

static int hw_read_cache_attr(int index, const char *attr, char *buf, size_t n)
{
  char path[128];

  snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/%s",
           index, attr);
  return hw_read_line(path, buf, n);
}

/* "48K", "2048K", "32M" to bytes; 0 when unparsable. */
static long hw_parse_size(const char *s)
{
  char *end;
  long v = strtol(s, &end, 10);

  if (v <= 0 || end == s)
    return 0;
  if (*end == 'K' || *end == 'k')
    v *= 1024L;
  else if (*end == 'M' || *end == 'm')
    v *= 1024L * 1024L;
  else if (*end == 'G' || *end == 'g')
    v *= 1024L * 1024L * 1024L;
  return v;
}

static void hw_detect_caches(kope_hw *hw)
{
  char level[16], type[32], size[32];
  int i, lv;

  for (i = 0; i < 16; i++) {
    if (hw_read_cache_attr(i, "level", level, sizeof level) != 0)
      break;
    if (hw_read_cache_attr(i, "type", type, sizeof type) != 0 ||
        hw_read_cache_attr(i, "size", size, sizeof size) != 0)
      continue;
    lv = atoi(level);
    if (lv < 1 || lv > 3 || !strcmp(type, "Instruction") || hw->cache[lv])
      continue;
    hw->cache[lv] = hw_parse_size(size);
  }
}

/* Cache sizes from the CPU itself when sysfs has none (some VMs): CPUID
 * leaf 4 (Intel) or else 0x8000001D (AMD), one subleaf per cache, size =
 * ways x partitions x line x sets. Elsewhere the sizes stay unknown (0). */
#if defined(__x86_64__)
static int hw_cpuid_caches(kope_hw *hw, unsigned leaf)
{
  unsigned a, b, c, d;
  int i, lv, type, found = 0;

  for (i = 0; i < 16; i++) {
    __cpuid_count(leaf, i, a, b, c, d);
    type = (int)(a & 0x1f);
    if (type == 0)
      break;
    lv = (int)((a >> 5) & 7);
    if (type == 2 || lv < 1 || lv > 3 || hw->cache[lv])
      continue;
    hw->cache[lv] = (long)(((b >> 22) & 0x3ff) + 1) * (long)(((b >> 12) & 0x3ff) + 1) *
                    (long)((b & 0xfff) + 1) * (long)(c + 1);
    found++;
  }
  (void)d;
  return found;
}
#endif

static void hw_detect_caches_cpuid(kope_hw *hw)
{
#if defined(__x86_64__)
  int found = 0;

  if (__get_cpuid_max(0, NULL) >= 4)
    found = hw_cpuid_caches(hw, 4);
  if (!found && __get_cpuid_max(0x80000000u, NULL) >= 0x8000001Du)
    found = hw_cpuid_caches(hw, 0x8000001Du);
  hw->cache_from_cpuid = found > 0;
#else
  (void)hw;
#endif
}

/* Trusted: a fixed command line, no user input. */
static char *hw_detect_compiler(void)
{
  char line[512] = "", rest[512];
  FILE *p = popen("gcc --version 2>/dev/null", "r");

  if (p) {
    if (!fgets(line, sizeof line, p))
      line[0] = '\0';
    while (fgets(rest, sizeof rest, p))
      ;
    pclose(p);
  }
  line[strcspn(line, "\r\n")] = '\0';
  hw_sanitize(line);
  return kope_strdup(line[0] ? line : "unknown");
}

static char *hw_make_fingerprint(const kope_hw *hw)
{
  char hex[65];
  char *canon = kope_sprintf("kope-hw-1|%s|%d|%s|%ld/%ld/%ld", hw->cpu_model,
                             hw->threads, hw->simd, hw->cache[1], hw->cache[2],
                             hw->cache[3]);

  if (!canon)
    return NULL;
  kope_sha256_hex(canon, strlen(canon), hex);
  free(canon);
  hex[16] = '\0';
  return kope_strdup(hex);
}

kope_hw *kope_hw_detect(kope_err *err)
{
  kope_hw *hw = calloc(1, sizeof *hw);

  if (!hw) {
    kope_err_set(err, KOPE_EENV, "hw: out of memory");
    return NULL;
  }
  hw_detect_cpu(hw);
  hw_detect_caches(hw);
  if (!hw->cache[1] && !hw->cache[2] && !hw->cache[3])
    hw_detect_caches_cpuid(hw);
  hw->compiler = hw_detect_compiler();
  if (hw->cpu_model && hw->simd)
    hw->fingerprint = hw_make_fingerprint(hw);
  if (!hw->cpu_model || !hw->simd || !hw->compiler || !hw->fingerprint) {
    kope_err_set(err, KOPE_EENV, "hw: out of memory while detecting the CPU");
    kope_hw_free(hw);
    return NULL;
  }
  return hw;
}

void kope_hw_free(kope_hw *hw)
{
  if (!hw)
    return;
  free(hw->cpu_model);
  free(hw->simd);
  free(hw->compiler);
  free(hw->fingerprint);
  free(hw->measured_at);
  free(hw->suspect);
  free(hw);
}

/* ---- peak FP32: independent FMA chains on every thread ------------------ */

/* One FMA kernel: runs iters iterations, returns a value derived from every
 * chain; flops_per_iter counts a fused multiply-add as two. */
struct hw_fma {
  float (*fn)(long iters);
  double flops_per_iter;
};

/* acc = acc * m + c converges to c / (1 - m) = 1: no overflow, no
 * denormals, and each chain depends on its previous value. */
#define HW_FMA_M 0.9999f
#define HW_FMA_C 0.0001f
#define HW_REP12(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
#define HW_REP16(X) HW_REP12(X) X(12) X(13) X(14) X(15)

#if defined(__x86_64__)
#define HW_DECL512(i) __m512 v##i = _mm512_set1_ps(1.0f + 0.001f * (i));
#define HW_STEP512(i) v##i = _mm512_fmadd_ps(v##i, m, c);
#define HW_SUM512(i) s = _mm512_add_ps(s, v##i);

/* 16 chains of 16 lanes: enough to cover 2 FMA ports x 4 cycles latency. */
__attribute__((target("avx512f"))) HW_BENCH
static float hw_fma_avx512(long iters)
{
  const __m512 m = _mm512_set1_ps(HW_FMA_M), c = _mm512_set1_ps(HW_FMA_C);
  __m512 s = _mm512_setzero_ps();
  long i;
  HW_REP16(HW_DECL512)

  for (i = 0; i < iters; i++) {
    HW_REP16(HW_STEP512)
  }
  HW_REP16(HW_SUM512)
  return _mm512_reduce_add_ps(s);
}

#define HW_DECL256(i) __m256 v##i = _mm256_set1_ps(1.0f + 0.001f * (i));
#define HW_STEP256(i) v##i = _mm256_fmadd_ps(v##i, m, c);
#define HW_SUM256(i) s = _mm256_add_ps(s, v##i);

/* 12 chains of 8 lanes plus the two constants fit the 16 ymm registers. */
__attribute__((target("avx2,fma"))) HW_BENCH
static float hw_fma_avx2(long iters)
{
  const __m256 m = _mm256_set1_ps(HW_FMA_M), c = _mm256_set1_ps(HW_FMA_C);
  __m256 s = _mm256_setzero_ps();
  float lanes[8], sum = 0.0f;
  long i;
  int j;
  HW_REP12(HW_DECL256)

  for (i = 0; i < iters; i++) {
    HW_REP12(HW_STEP256)
  }
  HW_REP12(HW_SUM256)
  _mm256_storeu_ps(lanes, s);
  for (j = 0; j < 8; j++)
    sum += lanes[j];
  return sum;
}
#endif

#define HW_DECL1(i) float v##i = 1.0f + 0.001f * (i);
#define HW_STEP1(i) v##i = v##i * m + c;
#define HW_SUM1(i) s += v##i;

/* Portable fallback: a multiply and an add per chain step, two flops
 * whether or not the compiler fuses or vectorises them. */
HW_BENCH static float hw_fma_scalar(long iters)
{
  const float m = HW_FMA_M, c = HW_FMA_C;
  float s = 0.0f;
  long i;
  HW_REP12(HW_DECL1)

  for (i = 0; i < iters; i++) {
    HW_REP12(HW_STEP1)
  }
  HW_REP12(HW_SUM1)
  return s;
}

static struct hw_fma hw_pick_fma(void)
{
  struct hw_fma k = {hw_fma_scalar, 12 * 2};

#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) {
    k.fn = hw_fma_avx512;
    k.flops_per_iter = 16 * 16 * 2;
  } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    k.fn = hw_fma_avx2;
    k.flops_per_iter = 12 * 8 * 2;
  }
#endif
  return k;
}

/* Seconds for nt threads to each run iters iterations of k. */
static double hw_fma_time(struct hw_fma k, long iters, int nt)
{
  float sum = 0.0f;
  double t0 = kope_now(), t;

#pragma omp parallel num_threads(nt) reduction(+ : sum)
  sum += k.fn(iters);
  t = kope_now() - t0;
  hw_sink = sum;
  return t;
}

/* Best GFLOP/s of a few repetitions of about HW_PEAK_REP_S each. */
static double hw_measure_peak(int nt)
{
  struct hw_fma k = hw_pick_fma();
  long iters = 1L << 12;
  double t, best = 0.0;
  int r;

  /* Calibrate on one thread; this also warms the core up. */
  while ((t = hw_fma_time(k, iters, 1)) < 0.01 && iters < (1L << 40))
    iters *= 2;
  if (t > 0)
    iters = (long)((double)iters * (HW_PEAK_REP_S / t)) + 1;
  for (r = 0; r < HW_PEAK_REPS; r++) {
    t = hw_fma_time(k, iters, nt);
    if (t > 0 && k.flops_per_iter * (double)iters * nt / t > best)
      best = k.flops_per_iter * (double)iters * nt / t;
  }
  return best / 1e9;
}

/* ---- measurement and cache ---------------------------------------------- */

static char *hw_now_iso(void)
{
  char buf[32];
  time_t now = time(NULL);
  struct tm tm;

  if (!gmtime_r(&now, &tm) || !strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm))
    return NULL;
  return kope_strdup(buf);
}

/* Threads to measure with: the CPUs this process may run on, so a process
 * pinned to a few CPUs of a large machine does not oversubscribe them. */
static int hw_bench_threads(const kope_hw *hw)
{
  cpu_set_t set;
  int n;

  if (sched_getaffinity(0, sizeof set, &set) != 0)
    return hw->threads;
  n = CPU_COUNT(&set);
  return n >= 1 && n < hw->threads ? n : hw->threads;
}

/* Why the figures look measured under load, or NULL: the all-threads
 * peak far under cores x the one-thread peak, or a smaller memory level
 * much slower than a larger one. Caller frees. */
static char *hw_suspect_reason(const kope_hw *hw)
{
  static const char *names[] = {"", "L1d", "L2", "L3", "DRAM"};
  int cores = kope_hw_bench_cores(hw), lo, hi, col;

  if (cores > 1 && hw->peak_gflops < HW_SUSPECT_PEAK * cores * hw->peak_one_gflops)
    return kope_sprintf("peak on all threads %.1f GFLOP/s is under %.0f%% of %d cores x "
                        "%.1f GFLOP/s on one", hw->peak_gflops, HW_SUSPECT_PEAK * 100,
                        cores, hw->peak_one_gflops);
  for (col = HW_ALL; col <= HW_ONE; col++)
    for (lo = 1; lo < HW_DRAM; lo++)
      for (hi = lo + 1; hi <= HW_DRAM; hi++)
        if (hw->bw[lo][col] > 0 && hw->bw[lo][col] * HW_SUSPECT_BW < hw->bw[hi][col])
          return kope_sprintf("%s bandwidth %.1f GB/s is under half of %s's %.1f GB/s "
                              "(%s)", names[lo], hw->bw[lo][col], names[hi],
                              hw->bw[hi][col], col == HW_ALL ? "all threads" : "one thread");
  return NULL;
}

static int hw_measure_once(kope_hw *hw, kope_err *err)
{
  int nt = hw_bench_threads(hw);

  hw->bench_threads = nt;
  hw->peak_one_gflops = hw_measure_peak(1);
  hw->peak_gflops = nt > 1 ? hw_measure_peak(nt) : hw->peak_one_gflops;
  if (kope_hw_measure_levels(hw, nt) != 0)
    hw->bandwidth_gbs = 0;
  if (!(hw->peak_gflops > 0) || !(hw->bandwidth_gbs > 0))
    return kope_err_set(err, KOPE_EENV,
                        "hw: measurement failed (peak %.3g GFLOP/s, bandwidth "
                        "%.3g GB/s; out of memory for the triad arrays?)",
                        hw->peak_gflops, hw->bandwidth_gbs);
  free(hw->suspect);
  hw->suspect = hw_suspect_reason(hw);
  return KOPE_OK;
}

/* Measure; a suspect result is measured once more, and one still suspect
 * is kept with its reason (shown by kope hw, warned about here). */
static int hw_measure(kope_hw *hw, kope_err *err)
{
  double t0 = kope_now();
  int rc;

  if ((rc = hw_measure_once(hw, err)) != KOPE_OK)
    return rc;
  if (hw->suspect) {
    fprintf(stderr, "kope: hw: figures look measured under load (%s); measuring again\n",
            hw->suspect);
    if ((rc = hw_measure_once(hw, err)) != KOPE_OK)
      return rc;
    if (hw->suspect)
      fprintf(stderr, "kope: hw: warning: the profile is marked suspect (%s); run "
                      "`kope hw --refresh` on an idle machine\n", hw->suspect);
  }
  hw->measure_seconds = kope_now() - t0;
  hw->from_cache = 0;
  free(hw->measured_at);
  hw->measured_at = hw_now_iso();
  return KOPE_OK;
}

static int hw_valid_figure(double v)
{
  return isfinite(v) && v > 0;
}

static const char *const hw_level_keys[] = {"", "l1d", "l2", "l3", "dram"};

/* The per-level table of a cache document; returns 0 when it is missing
 * or DRAM is not a valid figure (a cache from before the table). */
static int hw_levels_apply(kope_hw *hw, const json_t *levels)
{
  double v[5][2] = {{0}};
  json_t *lv;
  int i;

  if (!json_is_object(levels))
    return 0;
  for (i = 1; i <= HW_DRAM; i++) {
    lv = json_object_get(levels, hw_level_keys[i]);
    v[i][HW_ALL] = json_number_value(json_object_get(lv, "all_threads_gbs"));
    v[i][HW_ONE] = json_number_value(json_object_get(lv, "one_thread_gbs"));
    if (!isfinite(v[i][HW_ALL]) || v[i][HW_ALL] < 0 || !isfinite(v[i][HW_ONE]) ||
        v[i][HW_ONE] < 0)
      return 0;
  }
  if (!hw_valid_figure(v[HW_DRAM][HW_ALL]))
    return 0;
  memcpy(hw->bw, v, sizeof v);
  return 1;
}

/* Take the measured figures from a cache document when it belongs to this
 * hardware; returns 1 when it did. The detected facts stay fresh. */
static int hw_cache_apply(kope_hw *hw, const json_t *root)
{
  const char *fp = json_string_value(json_object_get(root, "fingerprint"));
  const char *at = json_string_value(json_object_get(root, "measured_at"));
  json_t *peak = json_object_get(root, "peak_gflops_fp32");
  json_t *bw = json_object_get(root, "bandwidth_gbs");

  if (!fp || strcmp(fp, hw->fingerprint) != 0 || !json_is_number(peak) ||
      !json_is_number(bw) || !hw_valid_figure(json_number_value(peak)) ||
      !hw_valid_figure(json_number_value(bw)))
    return 0;
  if (!hw_levels_apply(hw, json_object_get(root, "bandwidth_levels")))
    return 0;
  hw->peak_gflops = json_number_value(peak);
  hw->peak_one_gflops = json_number_value(json_object_get(root, "peak_gflops_fp32_one_thread"));
  hw->bandwidth_gbs = json_number_value(bw);
  hw->bench_threads = (int)json_integer_value(json_object_get(root, "bench_threads"));
  free(hw->suspect);
  hw->suspect = json_is_string(json_object_get(root, "suspect"))
                    ? kope_strdup(json_string_value(json_object_get(root, "suspect")))
                    : NULL;
  hw_sanitize(hw->suspect);
  hw->measure_seconds = 0.0;
  hw->from_cache = 1;
  free(hw->measured_at);
  hw->measured_at = at ? kope_strdup(at) : NULL;
  hw_sanitize(hw->measured_at);
  return 1;
}

static int hw_cache_load(kope_hw *hw, const char *path)
{
  size_t len = 0;
  char *text = kope_file_read(path, &len, NULL);
  json_t *root = NULL;
  int ok = 0;

  if (!text)
    goto out;
  root = json_loadb(text, len, 0, NULL);
  ok = root && hw_cache_apply(hw, root);
out:
  json_decref(root);
  free(text);
  return ok;
}

/* The directory part of path, or NULL when there is none to create. */
static char *hw_parent_dir(const char *path)
{
  const char *slash = strrchr(path, '/');

  if (!slash || slash == path)
    return NULL;
  return kope_strndup(path, (size_t)(slash - path));
}

/* Best effort: a cache that cannot be written costs a re-measure later. */
static void hw_cache_save(const kope_hw *hw, const char *path)
{
  json_t *root = kope_hw_to_json(hw);
  char *text = NULL, *dir = hw_parent_dir(path);

  if (!root)
    goto out;
  json_object_del(root, "from_cache");
  json_object_set_new(root, "kope_version", json_string(KOPE_VERSION));
  text = json_dumps(root, JSON_INDENT(2));
  if (!text)
    goto out;
  if (dir)
    kope_mkdirs(dir, NULL);
  kope_file_write_atomic(path, text, strlen(text), NULL);
out:
  free(dir);
  free(text);
  json_decref(root);
}

kope_hw *kope_hw_get(const char *cache_path, int refresh, kope_err *err)
{
  kope_hw *hw = kope_hw_detect(err);
  char *home = NULL, *path = NULL;

  if (!hw)
    goto out;
  if (cache_path) {
    path = kope_strdup(cache_path);
  } else {
    home = kope_home_dir();
    path = home ? kope_path_join(home, "hw.json") : NULL;
  }
  if (path && !refresh && hw_cache_load(hw, path))
    goto out;
  if (hw_measure(hw, err) != KOPE_OK) {
    kope_hw_free(hw);
    hw = NULL;
    goto out;
  }
  if (path)
    hw_cache_save(hw, path);
out:
  free(home);
  free(path);
  return hw;
}

/* ---- accessors ---------------------------------------------------------- */

const char *kope_hw_cpu_model(const kope_hw *hw)
{
  return hw ? hw->cpu_model : "";
}

int kope_hw_cores(const kope_hw *hw)
{
  return hw ? hw->cores : 0;
}

int kope_hw_threads(const kope_hw *hw)
{
  return hw ? hw->threads : 0;
}

const char *kope_hw_simd(const kope_hw *hw)
{
  return hw ? hw->simd : "";
}

int kope_hw_has_feature(const kope_hw *hw, const char *feature)
{
  return hw && hw_has_token(hw->simd, feature);
}

long kope_hw_cache_bytes(const kope_hw *hw, int level)
{
  return hw && level >= 1 && level <= 3 ? hw->cache[level] : 0;
}

const char *kope_hw_compiler(const kope_hw *hw)
{
  return hw ? hw->compiler : "";
}

double kope_hw_peak_gflops(const kope_hw *hw)
{
  return hw ? hw->peak_gflops : 0.0;
}

double kope_hw_bandwidth_gbs(const kope_hw *hw)
{
  return hw ? hw->bandwidth_gbs : 0.0;
}

const char *kope_hw_fingerprint(const kope_hw *hw)
{
  return hw ? hw->fingerprint : "";
}

double kope_hw_measure_seconds(const kope_hw *hw)
{
  return hw ? hw->measure_seconds : 0.0;
}

int kope_hw_from_cache(const kope_hw *hw)
{
  return hw ? hw->from_cache : 0;
}

double kope_hw_peak_one_gflops(const kope_hw *hw)
{
  return hw ? hw->peak_one_gflops : 0.0;
}

double kope_hw_level_bandwidth_gbs(const kope_hw *hw, int level, int all_threads)
{
  if (!hw || level < 1 || level > HW_DRAM)
    return 0.0;
  return hw->bw[level][all_threads ? HW_ALL : HW_ONE];
}

int kope_hw_level_for(const kope_hw *hw, double bytes, int threads)
{
  int lv;
  double cap;

  if (!hw)
    return HW_DRAM;
  for (lv = 1; lv < HW_DRAM; lv++) {
    cap = (double)hw->cache[lv] * (lv < 3 && threads > 1 ? kope_hw_bench_cores(hw) : 1);
    if (hw->cache[lv] > 0 && bytes <= cap && kope_hw_level_bandwidth_gbs(hw, lv, threads > 1) > 0)
      return lv;
  }
  return HW_DRAM;
}

double kope_hw_bandwidth_for(const kope_hw *hw, double bytes, int threads)
{
  double bw = kope_hw_level_bandwidth_gbs(hw, kope_hw_level_for(hw, bytes, threads), threads > 1);

  if (!(bw > 0) && hw && threads > 1)
    bw = hw->bandwidth_gbs;   /* a profile without the table: DRAM, all threads */
  return bw;
}

const char *kope_hw_suspect(const kope_hw *hw)
{
  return hw ? hw->suspect : NULL;
}

double kope_hw_roofline_seconds(const kope_hw *hw, double flops, double bytes)
{
  double tf, tb, bw = kope_hw_bandwidth_for(hw, bytes, hw ? hw->threads : 1);

  if (!hw || !(hw->peak_gflops > 0) || !(bw > 0))
    return 0.0;
  tf = flops / (hw->peak_gflops * 1e9);
  tb = bytes / (bw * 1e9);
  return tf > tb ? tf : tb;
}

/* ---- rendering ---------------------------------------------------------- */

static json_t *hw_simd_array(const char *simd)
{
  json_t *arr = json_array();
  const char *p = simd, *end;

  while (arr && p && *p) {
    end = strchr(p, ' ');
    if (!end)
      end = p + strlen(p);
    if (end > p)
      json_array_append_new(arr, json_stringn(p, (size_t)(end - p)));
    p = *end ? end + 1 : end;
  }
  return arr;
}

/* {"l1d": {"bytes": .., "all_threads_gbs": .., "one_thread_gbs": ..}, ...} */
static json_t *hw_levels_json(const kope_hw *hw)
{
  json_t *o = json_object();
  int lv;

  for (lv = 1; lv <= HW_DRAM; lv++)
    json_object_set_new(o, hw_level_keys[lv],
                        json_pack("{s:I,s:f,s:f}", "bytes",
                                  (json_int_t)(lv < HW_DRAM ? hw->cache[lv] : 0),
                                  "all_threads_gbs", hw->bw[lv][HW_ALL],
                                  "one_thread_gbs", hw->bw[lv][HW_ONE]));
  return o;
}

json_t *kope_hw_to_json(const kope_hw *hw)
{
  json_t *o, *cache;

  if (!hw)
    return NULL;
  o = json_object();
  cache = json_object();
  json_object_set_new(cache, "l1d", json_integer(hw->cache[1]));
  json_object_set_new(cache, "l2", json_integer(hw->cache[2]));
  json_object_set_new(cache, "l3", json_integer(hw->cache[3]));
  json_object_set_new(o, "cpu_model", json_string(hw->cpu_model));
  json_object_set_new(o, "cores", json_integer(hw->cores));
  json_object_set_new(o, "threads", json_integer(hw->threads));
  json_object_set_new(o, "simd", hw_simd_array(hw->simd));
  json_object_set_new(o, "cache", cache);
  json_object_set_new(o, "compiler", json_string(hw->compiler));
  json_object_set_new(o, "peak_gflops_fp32", json_real(hw->peak_gflops));
  json_object_set_new(o, "bandwidth_gbs", json_real(hw->bandwidth_gbs));
  json_object_set_new(o, "peak_gflops_fp32_one_thread", json_real(hw->peak_one_gflops));
  json_object_set_new(o, "bandwidth_levels", hw_levels_json(hw));
  json_object_set_new(o, "bench_threads", json_integer(hw->bench_threads));
  json_object_set_new(o, "cache_source", json_string(hw->cache_from_cpuid ? "cpuid" : "sysfs"));
  json_object_set_new(o, "suspect", hw->suspect ? json_string(hw->suspect) : json_null());
  json_object_set_new(o, "fingerprint", json_string(hw->fingerprint));
  json_object_set_new(o, "from_cache", json_boolean(hw->from_cache));
  json_object_set_new(o, "measure_seconds", json_real(hw->measure_seconds));
  json_object_set_new(o, "measured_at",
                      hw->measured_at ? json_string(hw->measured_at) : json_null());
  return o;
}

static void hw_describe_roofline(const kope_hw *hw, kope_buf *b)
{
  double ridge;

  if (!(hw->peak_gflops > 0) || !(hw->bandwidth_gbs > 0)) {
    kope_buf_puts(b, " The roofline (peak FLOP/s and memory bandwidth) has not "
                     "been measured.");
    return;
  }
  ridge = hw->peak_gflops / hw->bandwidth_gbs;
  kope_buf_printf(b,
      " Measured on all threads: peak FP32 %.1f GFLOP/s (FMA loop) and memory "
      "bandwidth %.1f GB/s (STREAM triad), so the ridge point is %.1f "
      "FLOP/byte: a kernel doing fewer FLOPs per byte of memory traffic is "
      "memory-bound, one doing more is compute-bound.",
      hw->peak_gflops, hw->bandwidth_gbs, ridge);
}

char *kope_hw_describe(const kope_hw *hw)
{
  kope_buf b;
  char l1[32], l2[32], l3[32];

  if (!hw)
    return NULL;
  kope_format_bytes(hw->cache[1], l1, sizeof l1);
  kope_format_bytes(hw->cache[2], l2, sizeof l2);
  kope_format_bytes(hw->cache[3], l3, sizeof l3);
  kope_buf_init(&b, 0);
  kope_buf_printf(&b,
      "**Target hardware.** %s, %d physical core%s / %d thread%s. SIMD: %s. "
      "Caches: L1d %s, L2 %s, L3 %s. Compiler: %s.",
      hw->cpu_model, hw->cores, hw->cores == 1 ? "" : "s", hw->threads,
      hw->threads == 1 ? "" : "s", hw->simd[0] ? hw->simd : "none detected",
      l1, l2, l3, hw->compiler);
  hw_describe_roofline(hw, &b);
  return kope_buf_steal(&b);
}
