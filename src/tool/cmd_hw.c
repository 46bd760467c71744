/*
 * `kope hw`: describe this machine and measure its roofline.
 *
 * Prints the hardware profile (CPU model, cores, threads, SIMD features,
 * caches, compiler) and the measured figures every result is judged
 * against: peak FP32 GFLOP/s (all threads and one) and the triad bandwidth
 * of each memory level (all threads and one), with the suspect mark of a
 * profile measured under load. The profile comes from
 * the cache when it matches this hardware (--refresh re-measures; --cache
 * picks the file). --json prints the profile as one JSON document. Both
 * also list the sandbox layers this machine allows for candidate kernels
 * (probed now, not cached) and why any layer is unavailable.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kope/core.h"
#include "kope/eval.h"
#include "kope/hw.h"
#include "cmds.h"

struct hw_opts {
  int json;            /* --json */
  int refresh;         /* --refresh */
  const char *cache;   /* --cache PATH; NULL: <kope home>/hw.json */
};

static void hw_usage(FILE *f)
{
  fprintf(f,
      "usage: kope hw [--json] [--refresh] [--cache PATH]\n"
      "\n"
      "Describe this machine and measure its roofline: peak FP32 FLOP/s (an\n"
      "FMA loop, all threads and one) and the bandwidth of each memory level\n"
      "(a STREAM triad in L1d, L2, L3 and DRAM, all threads and one). A\n"
      "profile that looks measured under load is measured again, then kept\n"
      "marked 'suspect'. The profile is cached and reused while the hardware\n"
      "is the same.\n"
      "\n"
      "options:\n"
      "  --json        print the profile as one JSON document\n"
      "  --refresh     measure again even when the cache is valid\n"
      "  --cache PATH  cache file (default: $KOPE_HOME/hw.json, else\n"
      "                .kope/hw.json)\n"
      "  -h, --help    show this help\n"
      "\n"
      "Exit codes: 0 success, 2 usage error, 3 detection or measurement\n"
      "failed.\n");
}

static const struct option hw_longopts[] = {
  {"json", no_argument, NULL, 'j'},
  {"refresh", no_argument, NULL, 'r'},
  {"cache", required_argument, NULL, 'c'},
  {"help", no_argument, NULL, 'h'},
  {NULL, 0, NULL, 0}
};

/* The option getopt just rejected, as the user typed it. */
static void hw_bad_option(char **argv, int c)
{
  const char *arg = optind > 1 ? argv[optind - 1] : "";

  if (c == ':')
    fprintf(stderr, "kope hw: option '%s' needs a value\n\n", arg);
  else if (!strncmp(arg, "--", 2) || !optopt)
    fprintf(stderr, "kope hw: unknown option '%s'\n\n", arg);
  else
    fprintf(stderr, "kope hw: unknown option '-%c'\n\n", optopt);
  hw_usage(stderr);
}

/* Returns -1 to go on, otherwise the exit code. */
static int hw_parse(int argc, char **argv, struct hw_opts *o)
{
  int c;

  optind = 1;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":h", hw_longopts, NULL)) != -1) {
    switch (c) {
    case 'j': o->json = 1; break;
    case 'r': o->refresh = 1; break;
    case 'c': o->cache = optarg; break;
    case 'h': hw_usage(stdout); return KOPE_OK;
    default: hw_bad_option(argv, c); return KOPE_EINPUT;
    }
  }
  if (optind < argc) {
    fprintf(stderr, "kope hw: unexpected argument '%s'\n\n", argv[optind]);
    hw_usage(stderr);
    return KOPE_EINPUT;
  }
  return -1;
}

static void hw_row(const char *key, const char *value)
{
  printf("%-10s %s\n", key, value);
}

static void hw_print_caches(const kope_hw *hw)
{
  static const char *names[] = {"L1d", "L2", "L3"};
  char buf[32];
  int lv;

  for (lv = 1; lv <= 3; lv++) {
    kope_format_bytes(kope_hw_cache_bytes(hw, lv), buf, sizeof buf);
    hw_row(names[lv - 1], buf);
  }
}

/* "sandbox    no_new_privs seccomp_bpf ..." and one line per missing layer. */
static void hw_print_sandbox(void)
{
  json_t *sb = kope_eval_sandbox_json(), *v;
  const char *key;
  kope_buf b;
  size_t i;

  kope_buf_init(&b, 0);
  json_array_foreach(json_object_get(sb, "available"), i, v)
    kope_buf_printf(&b, "%s%s", i ? " " : "", json_string_value(v));
  hw_row("sandbox", b.data ? b.data : "(none)");
  json_object_foreach(json_object_get(sb, "unavailable"), key, v)
    printf("%-10s %s unavailable: %s\n", "", key, json_string_value(v));
  kope_buf_release(&b);
  json_decref(sb);
}

/* "bandwidth  level  size  all threads  one thread" and one row per level;
 * a level whose size is unknown was not measured ("-"). */
static void hw_print_levels(const kope_hw *hw)
{
  static const char *names[] = {"", "L1d", "L2", "L3", "DRAM"};
  char size[32];
  double all, one;
  int lv;

  printf("%-10s %-5s %9s %14s %14s\n", "bandwidth", "level", "size", "all threads",
         "one thread");
  for (lv = 1; lv <= 4; lv++) {
    all = kope_hw_level_bandwidth_gbs(hw, lv, 1);
    one = kope_hw_level_bandwidth_gbs(hw, lv, 0);
    if (lv < 4)
      kope_format_bytes(kope_hw_cache_bytes(hw, lv), size, sizeof size);
    else
      snprintf(size, sizeof size, "-");
    if (all > 0 || one > 0)
      printf("%-10s %-5s %9s %9.1f GB/s %9.1f GB/s\n", "", names[lv], size, all, one);
    else
      printf("%-10s %-5s %9s %14s %14s\n", "", names[lv], size, "-", "-");
  }
}

static void hw_print_table(const kope_hw *hw)
{
  double peak = kope_hw_peak_gflops(hw), bw = kope_hw_bandwidth_gbs(hw);
  const char *simd = kope_hw_simd(hw);
  char buf[96];

  hw_row("model", kope_hw_cpu_model(hw));
  printf("%-10s %d\n", "cores", kope_hw_cores(hw));
  printf("%-10s %d\n", "threads", kope_hw_threads(hw));
  hw_row("simd", simd[0] ? simd : "(none detected)");
  hw_print_caches(hw);
  hw_row("compiler", kope_hw_compiler(hw));
  snprintf(buf, sizeof buf, "%.1f GFLOP/s (FP32, all threads), %.1f GFLOP/s (one thread)",
           peak, kope_hw_peak_one_gflops(hw));
  hw_row("peak", buf);
  hw_print_levels(hw);
  snprintf(buf, sizeof buf, "%.1f FLOP/byte (DRAM, all threads: %.1f GB/s triad)",
           bw > 0 ? peak / bw : 0.0, bw);
  hw_row("ridge", buf);
  if (kope_hw_suspect(hw))
    printf("%-10s %s (--refresh on an idle machine to measure again)\n", "suspect",
           kope_hw_suspect(hw));
  hw_print_sandbox();
  if (kope_hw_from_cache(hw))
    hw_row("profile", "cached (--refresh to measure again)");
  else {
    snprintf(buf, sizeof buf, "measured in %.2f s", kope_hw_measure_seconds(hw));
    hw_row("profile", buf);
  }
}

static int hw_print_json(const kope_hw *hw)
{
  json_t *j = kope_hw_to_json(hw);
  char *text;
  int rc = KOPE_OK;

  if (j)
    json_object_set_new(j, "sandbox", kope_eval_sandbox_json());
  text = j ? json_dumps(j, JSON_INDENT(2)) : NULL;

  if (!text) {
    fprintf(stderr, "kope hw: cannot render the profile as JSON\n");
    rc = KOPE_EINTERNAL;
    goto out;
  }
  printf("%s\n", text);
out:
  free(text);
  json_decref(j);
  return rc;
}

int kope_cmd_hw(int argc, char **argv)
{
  struct hw_opts o = {0, 0, NULL};
  kope_err err = {0, ""};
  kope_hw *hw;
  int rc = hw_parse(argc, argv, &o);

  if (rc >= 0)
    return rc;
  hw = kope_hw_get(o.cache, o.refresh, &err);
  if (!hw) {
    fprintf(stderr, "kope hw: %s\n", err.msg[0] ? err.msg : "cannot detect the hardware");
    return KOPE_EENV;
  }
  if (o.json)
    rc = hw_print_json(hw);
  else {
    hw_print_table(hw);
    rc = KOPE_OK;
  }
  kope_hw_free(hw);
  return rc;
}
