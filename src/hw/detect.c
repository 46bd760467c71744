/*
 * Hardware profile, detection: what this CPU is. Reads the facts the
 * kernel exposes: /proc/cpuinfo for the model, the physical cores (unique
 * (physical id, core id) pairs) and the SIMD flags (filtered to those a
 * compute kernel can use), sysconf for the online threads, sysfs for the
 * cache sizes of cpu0 (CPUID when sysfs has none), and the first line of
 * `gcc --version`; the fingerprint that keys the cache. The module's
 * overview: src/hw/measure.c.
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
#include "hw/hw_int.h"
#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

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
int kope_hw_has_token(const char *list, const char *word)
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
void kope_hw_sanitize(char *s)
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
  int nomem;          /* a pair could not be stored: detection fails */
};

static void hw_scan_add_pair(struct hw_scan *sc, long core)
{
  long long key = ((long long)sc->phys << 24) | (core & 0xffffff);
  size_t i;

  for (i = 0; i < sc->npairs; i++)
    if (sc->pairs[i] == key)
      return;
  if (kope_grow(&sc->pairs, &sc->cap, sc->npairs + 1, sizeof *sc->pairs) != KOPE_OK) {
    sc->nomem = 1;
    return;
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
    if (!kope_hw_has_token(flags, hw_features[i].flag) ||
        kope_hw_has_token(b.data, hw_features[i].name))
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
  kope_hw_sanitize(hw->cpu_model);
  hw->simd = hw_filter_features(sc.flags ? sc.flags : "");
  free(sc.model);
  free(sc.alt_model);
  free(sc.flags);
  free(sc.pairs);
  free(text);
  if (sc.nomem) {   /* kope_hw_detect reports a missing model as out of memory */
    free(hw->cpu_model);
    hw->cpu_model = NULL;
  }
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
  kope_hw_sanitize(line);
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
    kope_err_nomem(err, "hw profile");
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
    kope_err_nomem(err, "hw: detecting the CPU");
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
