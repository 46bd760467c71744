/*
 * Hardware profile, accessors: the detected facts and measured figures,
 * the memory level a working set lives in and the roofline time.
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

/* ---- accessors ---------------------------------------------------------- */

/* The plain accessors: a field of the profile, or what a NULL profile has. */
#define HW_GET(type, name, none)                                \
  type kope_hw_##name(const kope_hw *hw)                        \
  {                                                             \
    return hw ? hw->name : none;                                \
  }

HW_GET(const char *, cpu_model, "")
HW_GET(int, cores, 0)
HW_GET(int, threads, 0)
HW_GET(const char *, simd, "")
HW_GET(const char *, compiler, "")
HW_GET(double, peak_gflops, 0.0)
HW_GET(double, bandwidth_gbs, 0.0)
HW_GET(const char *, fingerprint, "")
HW_GET(double, measure_seconds, 0.0)
HW_GET(int, from_cache, 0)
HW_GET(double, peak_one_gflops, 0.0)
HW_GET(const char *, suspect, NULL)

int kope_hw_has_feature(const kope_hw *hw, const char *feature)
{
  return hw && kope_hw_has_token(hw->simd, feature);
}

long kope_hw_cache_bytes(const kope_hw *hw, int level)
{
  return hw && level >= 1 && level <= 3 ? hw->cache[level] : 0;
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

double kope_hw_roofline_seconds(const kope_hw *hw, double flops, double bytes)
{
  double tf, tb, bw = kope_hw_bandwidth_for(hw, bytes, hw ? hw->threads : 1);

  if (!hw || !(hw->peak_gflops > 0) || !(bw > 0))
    return 0.0;
  tf = flops / (hw->peak_gflops * 1e9);
  tb = bytes / (bw * 1e9);
  return tf > tb ? tf : tb;
}
