/*
 * Internals of the hardware profile (include/kope/hw.h) shared by the
 * files of src/hw/: the profile structure (detect.c detects it, peak.c
 * and bw.c measure its peaks and per-level bandwidths, measure.c measures
 * and caches it, access.c answers for it, render.c renders it), the helpers
 * they share, and the attribute that keeps benchmark loops optimised in
 * every build type. Not a public header.
 */
#ifndef KOPE_HW_INT_H
#define KOPE_HW_INT_H

#include <stddef.h>
#include "kope/hw.h"

#define HW_MIB ((size_t)1 << 20)

/* Memory levels of the bandwidth table: 1..3 caches, 4 DRAM; columns:
 * HW_ALL (every thread the process may use), HW_ONE (one thread). */
#define HW_DRAM 4
#define HW_ALL 0
#define HW_ONE 1

struct kope_hw {
  char *cpu_model;        /* "model name" of the first CPU */
  int cores;              /* physical cores */
  int threads;            /* online logical CPUs */
  char *simd;             /* space-separated, in hw_features order */
  long cache[4];          /* bytes per level; [1] is L1 data; 0 unknown */
  int cache_from_cpuid;   /* sysfs had no sizes; they came from CPUID */
  char *compiler;         /* first line of gcc --version */
  char *fingerprint;      /* hash of model, threads, simd and caches */
  double peak_gflops;     /* measured FP32, all threads; 0 unmeasured */
  double peak_one_gflops; /* measured FP32, one thread; 0 unmeasured */
  double bandwidth_gbs;   /* measured triad from DRAM, all threads */
  double bw[5][2];        /* GB/s per level [1..4] and column; 0 unmeasured */
  int bench_threads;      /* threads the figures were measured with */
  char *suspect;          /* why the figures look measured under load; NULL */
  double measure_seconds; /* 0 when loaded from the cache */
  int from_cache;
  char *measured_at;      /* ISO 8601 UTC; NULL when never measured */
};

/* detect.c: whether the space-separated list holds word; s with every
 * byte outside printable ASCII replaced (in place). */
int kope_hw_has_token(const char *list, const char *word);
void kope_hw_sanitize(char *s);
/* peak.c: the FP32 peak in GFLOP/s on nt threads (best of a few runs). */
double kope_hw_measure_peak(int nt);
/* measure.c: the JSON keys of the memory levels 1..4 ([0] is ""). */
extern const char *const kope_hw_level_keys[];

/* Cores the all-threads column spreads over (each has its own L1/L2). */
int kope_hw_bench_cores(const kope_hw *hw);

/* Measure the triad bandwidth of every level with a known size, and DRAM,
 * on nt threads and on one; fills hw->bw and hw->bandwidth_gbs. Returns
 * 0, or -1 when the DRAM arrays could not be allocated. */
int kope_hw_measure_levels(kope_hw *hw, int nt);

/* The benchmark loops are compiled optimised and uninstrumented whatever
 * the build type, so a Debug or sanitizer build measures the machine, not
 * its own instrumentation (their OpenMP bodies inherit the attributes).
 * They touch only memory they allocated, so nothing is lost by it. */
#if defined(__GNUC__) && !defined(__clang__)
#define HW_BENCH __attribute__((optimize("O3"), no_sanitize("address", "undefined")))
#elif defined(__clang__)
#define HW_BENCH __attribute__((no_sanitize("address", "undefined")))
#else
#define HW_BENCH
#endif

#endif
