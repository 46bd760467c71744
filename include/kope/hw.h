/*
 * kope hardware profile: what the CPU is and what it can do.
 *
 * A profile holds the facts read from the machine (CPU model, cores,
 * threads, SIMD features, cache sizes, compiler version) and two measured
 * figures that form the roofline every result is reported against: peak
 * FP32 FLOP/s (an FMA microbenchmark, all threads and one) and memory
 * bandwidth per level (a STREAM-style triad with working sets in L1d, L2,
 * L3 and DRAM, all threads and one). Measuring takes a few seconds,
 * so profiles are cached in a JSON file keyed by a fingerprint of the
 * machine; later runs reuse it.
 */
#ifndef KOPE_HW_H
#define KOPE_HW_H

#include <jansson.h>
#include "kope/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kope_hw kope_hw;

/* Load the cached profile from cache_path (NULL: <kope_home>/hw.json) or,
 * when absent, stale (fingerprint differs) or refresh != 0, detect and
 * measure, then write the cache. Returns NULL with err set on failure.
 * The profile is owned by the caller: kope_hw_free. */
kope_hw *kope_hw_get(const char *cache_path, int refresh, kope_err *err);
/* Detection only, no measurement and no cache (peaks are 0). */
kope_hw *kope_hw_detect(kope_err *err);
void kope_hw_free(kope_hw *hw);

const char *kope_hw_cpu_model(const kope_hw *hw);
int kope_hw_cores(const kope_hw *hw);          /* physical cores */
int kope_hw_threads(const kope_hw *hw);        /* online logical CPUs */
/* Space-separated SIMD feature list, e.g. "sse4_2 avx avx2 fma avx512f". */
const char *kope_hw_simd(const kope_hw *hw);
int kope_hw_has_feature(const kope_hw *hw, const char *feature);
/* Cache size in bytes for level 1 (data), 2 or 3; 0 when unknown. */
long kope_hw_cache_bytes(const kope_hw *hw, int level);
const char *kope_hw_compiler(const kope_hw *hw);  /* "gcc (Debian 12.2.0...) 12.2.0" */
double kope_hw_peak_gflops(const kope_hw *hw);    /* measured FP32, all threads */
double kope_hw_bandwidth_gbs(const kope_hw *hw);  /* measured triad, all threads */
/* A stable string identifying this machine's hardware (model, threads,
 * features, caches); changes when the hardware does. */
const char *kope_hw_fingerprint(const kope_hw *hw);
/* Wall-clock time the last measurement took (0 when loaded from cache). */
double kope_hw_measure_seconds(const kope_hw *hw);
int kope_hw_from_cache(const kope_hw *hw);

/* Measured FP32 peak of one thread (one core). */
double kope_hw_peak_one_gflops(const kope_hw *hw);
/* Measured triad bandwidth (GB/s) of memory level 1..3 (L1d, L2, L3) or 4
 * (DRAM), on all threads (all_threads != 0) or one; 0 when the level's
 * size is unknown (not measured) or level is out of range. */
double kope_hw_level_bandwidth_gbs(const kope_hw *hw, int level, int all_threads);
/* The level (1..4) a working set of bytes fits in when threads threads
 * share it: L1d and L2 count once per core used, L3 once. A level whose
 * size is unknown (no sysfs entry and no CPUID answer) is skipped, so
 * with no sizes every working set is DRAM (4). */
int kope_hw_level_for(const kope_hw *hw, double bytes, int threads);
/* Bandwidth (GB/s) of kope_hw_level_for(hw, bytes, threads): the one-thread
 * column when threads <= 1, else the all-threads one. */
double kope_hw_bandwidth_for(const kope_hw *hw, double bytes, int threads);
/* Why the measured figures look taken under load (the all-threads peak
 * under half of cores x one-thread peak, or a cache level under half the
 * bandwidth of a larger level), after one re-measurement; NULL when they
 * look sound. Owned by the profile. */
const char *kope_hw_suspect(const kope_hw *hw);

/* Roofline time bound in seconds for a kernel doing flops and moving bytes
 * on all threads: max(flops / peak, bytes / bandwidth), the bandwidth
 * being that of the level a working set of bytes fits in
 * (kope_hw_bandwidth_for). 0 when the peaks are unknown. */
double kope_hw_roofline_seconds(const kope_hw *hw, double flops, double bytes);

/* JSON description (new reference, caller decrefs). */
json_t *kope_hw_to_json(const kope_hw *hw);
/* Markdown paragraph for a prompt. Caller frees. */
char *kope_hw_describe(const kope_hw *hw);

#ifdef __cplusplus
}
#endif
#endif
