/*
 * Hardware profile, peak FP32: an FMA loop of independent accumulator
 * chains on every thread (AVX-512 or AVX2+FMA chosen at run time, so the
 * library itself stays generic x86-64; a scalar loop elsewhere), the best
 * of a few repetitions.
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

#define HW_PEAK_REP_S 0.06    /* target seconds per FMA repetition */
#define HW_PEAK_REPS 3

/* Written with every benchmark result so no loop can be optimised away. */
static volatile float hw_sink;

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

/* The chains of one kernel, for the vector type and operations named by
 * HW_VEC, HW_SET1, HW_FMADD and HW_ADD where it is expanded: REP(X) chains
 * v0, v1, ... each stepped iters times, their sum left in s. */
#define HW_DECL(i) HW_VEC v##i = HW_SET1(1.0f + 0.001f * (i));
#define HW_STEP(i) v##i = HW_FMADD(v##i, m, c);
#define HW_SUM(i) s = HW_ADD(s, v##i);
#define HW_FMA_CHAINS(REP, ZERO)                                \
  const HW_VEC m = HW_SET1(HW_FMA_M), c = HW_SET1(HW_FMA_C);    \
  HW_VEC s = ZERO;                                              \
  long i;                                                       \
  REP(HW_DECL)                                                  \
  for (i = 0; i < iters; i++) {                                 \
    REP(HW_STEP)                                                \
  }                                                             \
  REP(HW_SUM)

#if defined(__x86_64__)
#define HW_VEC __m512
#define HW_SET1 _mm512_set1_ps
#define HW_FMADD _mm512_fmadd_ps
#define HW_ADD _mm512_add_ps

/* 16 chains of 16 lanes: enough to cover 2 FMA ports x 4 cycles latency. */
__attribute__((target("avx512f"))) HW_BENCH
static float hw_fma_avx512(long iters)
{
  HW_FMA_CHAINS(HW_REP16, _mm512_setzero_ps())
  return _mm512_reduce_add_ps(s);
}

#undef HW_VEC
#undef HW_SET1
#undef HW_FMADD
#undef HW_ADD
#define HW_VEC __m256
#define HW_SET1 _mm256_set1_ps
#define HW_FMADD _mm256_fmadd_ps
#define HW_ADD _mm256_add_ps

/* 12 chains of 8 lanes plus the two constants fit the 16 ymm registers. */
__attribute__((target("avx2,fma"))) HW_BENCH
static float hw_fma_avx2(long iters)
{
  float lanes[8], sum = 0.0f;
  int j;
  HW_FMA_CHAINS(HW_REP12, _mm256_setzero_ps())

  _mm256_storeu_ps(lanes, s);
  for (j = 0; j < 8; j++)
    sum += lanes[j];
  return sum;
}

#undef HW_VEC
#undef HW_SET1
#undef HW_FMADD
#undef HW_ADD
#endif

#define HW_VEC float
#define HW_SET1(x) (x)
#define HW_FMADD(v, m, c) ((v) * (m) + (c))
#define HW_ADD(s, v) ((s) + (v))

/* Portable fallback: a multiply and an add per chain step, two flops
 * whether or not the compiler fuses or vectorises them. */
HW_BENCH static float hw_fma_scalar(long iters)
{
  HW_FMA_CHAINS(HW_REP12, 0.0f)
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
double kope_hw_measure_peak(int nt)
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
