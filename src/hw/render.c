/*
 * Hardware profile, rendering: the profile as JSON (kope hw --json, the
 * cache) and as Markdown for a prompt.
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
    json_object_set_new(o, kope_hw_level_keys[lv],
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

/* Threads the profile's all-threads figures were measured with. */
static int hw_describe_threads(const kope_hw *hw)
{
  return hw->bench_threads > 0 ? hw->bench_threads : hw->threads > 0 ? hw->threads : 1;
}

/* The compute ceiling as the roofline review takes it (src/eval/timing.c,
 * review_peak): the larger of the all-threads peak and threads x the
 * one-thread peak, since the all-threads figure is the one a loaded
 * machine measures low. */
static void hw_describe_peak(const kope_hw *hw, kope_buf *b, double *peak)
{
  int nt = hw_describe_threads(hw);
  double one = hw->peak_one_gflops * nt;

  *peak = fmax(hw->peak_gflops, one);
  kope_buf_printf(b, " peak FP32 (FMA loop) %.1f GFLOP/s, taken as max(all %d threads "
                     "%.1f, %d x one thread %.1f), the ceiling kope's roofline review uses.",
                  *peak, nt, hw->peak_gflops, nt, hw->peak_one_gflops);
}

/* Triad bandwidth of every measured level, all threads and one. */
static void hw_describe_levels(const kope_hw *hw, kope_buf *b)
{
  static const char *const names[] = {"", "L1d", "L2", "L3", "DRAM"};
  char size[32];
  int lv, first = 1;

  kope_buf_puts(b, " Memory bandwidth per level (STREAM-style triad, all threads / one "
                   "thread):");
  for (lv = 1; lv <= HW_DRAM; lv++) {
    if (!(hw->bw[lv][HW_ALL] > 0) && !(hw->bw[lv][HW_ONE] > 0))
      continue;
    kope_buf_printf(b, "%s %s", first ? "" : ";", names[lv]);
    if (lv < HW_DRAM && hw->cache[lv] > 0) {
      kope_format_bytes(hw->cache[lv], size, sizeof size);
      kope_buf_printf(b, " (%s)", size);
    }
    kope_buf_printf(b, " %.1f / %.1f GB/s", hw->bw[lv][HW_ALL], hw->bw[lv][HW_ONE]);
    first = 0;
  }
  if (first)
    kope_buf_printf(b, " only DRAM was measured, %.1f GB/s on all threads", hw->bandwidth_gbs);
  kope_buf_puts(b, ". A case's memory bound uses the level its working set fits in.");
}

static void hw_describe_roofline(const kope_hw *hw, kope_buf *b)
{
  double peak;

  if (!(hw->peak_gflops > 0) || !(hw->bandwidth_gbs > 0)) {
    kope_buf_puts(b, " The roofline (peak FLOP/s and memory bandwidth) has not "
                     "been measured.");
    return;
  }
  kope_buf_printf(b, " Measured by `kope hw`%s%s:", hw->measured_at ? " at " : "",
                  hw->measured_at ? hw->measured_at : "");
  hw_describe_peak(hw, b, &peak);
  hw_describe_levels(hw, b);
  kope_buf_printf(b,
      " Against DRAM (%.1f GB/s, all threads) the ridge point is %.1f FLOP/byte: a kernel "
      "doing fewer FLOPs per byte of memory traffic is memory-bound, one doing more is "
      "compute-bound.", hw->bandwidth_gbs, peak / hw->bandwidth_gbs);
  if (hw->suspect)
    kope_buf_printf(b, " **This profile is marked suspect** (%s): it was probably measured "
                       "under load, so these figures may be too low.", hw->suspect);
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
