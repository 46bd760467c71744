/*
 * Hardware profile, measurement and cache: what this CPU is and the two
 * figures of its roofline (this file: measuring, the JSON cache, kope_hw_get;
 * detect.c, peak.c, bw.c, access.c and render.c the rest).
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
#include "hw/hw_int.h"
#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

#ifndef KOPE_VERSION
#define KOPE_VERSION "unknown"
#endif

/* A profile is suspect when the all-threads peak is under this fraction
 * of cores x the one-thread peak, or when a smaller memory level is this
 * many times slower than a larger one (measured under load). */
#define HW_SUSPECT_PEAK 0.5
#define HW_SUSPECT_BW 2.0

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
  hw->peak_one_gflops = kope_hw_measure_peak(1);
  hw->peak_gflops = nt > 1 ? kope_hw_measure_peak(nt) : hw->peak_one_gflops;
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

const char *const kope_hw_level_keys[] = {"", "l1d", "l2", "l3", "dram"};

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
    lv = json_object_get(levels, kope_hw_level_keys[i]);
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
  kope_hw_sanitize(hw->suspect);
  hw->measure_seconds = 0.0;
  hw->from_cache = 1;
  free(hw->measured_at);
  hw->measured_at = at ? kope_strdup(at) : NULL;
  kope_hw_sanitize(hw->measured_at);
  /* out of memory copying a note: as if there were no cache (measure) */
  return (hw->suspect || !json_is_string(json_object_get(root, "suspect"))) &&
         (hw->measured_at || !at);
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
  } else if ((home = kope_home_dir())) {
    path = kope_path_join(home, "hw.json");
  }
  if (!path && (cache_path || home)) {
    kope_err_nomem(err, "hw cache path");
    kope_hw_free(hw);
    hw = NULL;
    goto out;
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
