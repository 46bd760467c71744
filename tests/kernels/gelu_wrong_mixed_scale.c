/*
 * A real model's gelu kernel (docs/data/llm-sessions/, passive-context bench of
 * 2026-12-04): correct on the plain inputs, wrong for large negative inputs
 * (the table's last interval), which only the mixed-scale variant draws. A
 * search on one seed promoted it at 66.8x; tests/integration/eval_variants.sh
 * checks that a one-seed evaluation rejects it (kope_eval_case_seeds).
 */
/*
 * gelu: y = x * Phi(x), Phi(x) = 0.5 * erfc(-x / sqrt(2)), fp32.
 *
 * Vector path (AVX-512, 16 lanes, branch-free, no exp/erf at run time):
 *   Phi is tabulated on intervals of width W = 0.40625 centred at
 *   c_j = j*W, j = -15..15 used (table slots hold j = -16..15); on each
 *   interval Phi(c_j + W s) ~= E0 + E1 s + E2 s^2 + E3 s^3 + E4 s^4,
 *   |s| <= 0.5, where E is the degree-6 Taylor polynomial
 *   (K_n = Phi^(n)(c) W^n / n!, Phi^(n) = (-1)^(n-1) He_{n-1}(c) phi(c))
 *   economized to degree 4 with Chebyshev T6 and T5 (on u = 2s):
 *     s^6 ~ 3/8 s^4 - 9/256 s^2 + 1/2048   (error <= 1/2048)
 *     s^5 ~ 5/16 s^3 - 5/256 s             (error <= 1/512)
 *   Error in Phi: |K5|/512 + |K6|/2048 + Taylor-7 remainder <= 2.2e-7 (at
 *   x ~ 0, where the tolerance is loosest), <= 1.3e-7 for |x| >= 0.6 and
 *   at least 5x inside atol + rtol|y| everywhere; fp32 rounding ~5e-8.
 *   t = x / W; t = range(t, 15.49) (symmetric clamp |t| <= 15.49, sign of t);
 *   r = t + 1.5*2^23 (low 5 mantissa bits = rint(t) mod 32 = table slot);
 *   s = reduce(t) = t - rint(t) (exact, same rounding as r);
 *   coefficients fetched with vpermt2ps from two 16-float registers each;
 *   y = x * P(s).
 *   Outside |x| < 6.29: x >= 6.29 gives Phi = 1.0f (true 1 - 2e-10),
 *   x <= -6.29 gives Phi ~ 1.6e-10 (|y| < 1e-6 for |x| < 6000).
 *   NaN propagates through the final x * P.
 * The table constants are erfc/exp of constants, folded by the compiler.
 *
 * Driver: small n runs serially (no OpenMP region). Otherwise each thread
 * takes one contiguous range of whole 16-float vectors; for large n the y
 * ranges start 64-byte aligned (masked head on thread 0) and are written
 * with non-temporal stores plus an x software prefetch; a masked tail is
 * done by the last thread.
 */
#include <math.h>
#include <stdint.h>
#include <omp.h>
#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#define PAR_MIN 32768    // @knob layer=parallel values=16384,32768,65536 "smallest n that opens an OpenMP region"
#define NT_MIN 2097152   // @knob layer=memory values=1048576,2097152,4194304 "smallest n written with non-temporal stores"
#define PF_DIST 512      // @knob layer=memory values=0,256,512,1024 "x prefetch distance in floats on the streaming path (0 = off)"
#define UNROLL 2         // @knob layer=instruction values=1,2 "16-lane vectors per loop iteration"

static inline float gelu_scalar(float v)
{
    return 0.5f * v * erfcf(-v * 0.70710678118654752f);
}

#if defined(__AVX512F__)

/* ---- Phi table: slot p (0..31) holds interval j = p (p < 16) or p - 32 ---- */
#define GW 0.40625
#define GJ(p) ((p) < 16 ? (p) : (p) - 32)
#define GC(p) ((double)GJ(p) * GW)
#define GPHI(p) (0.39894228040143267794 * exp(-0.5 * GC(p) * GC(p)))
/* derivatives of Phi at the centre */
#define GD0(p) (0.5 * erfc(-GC(p) * 0.70710678118654752440))
#define GD1(p) (GPHI(p))
#define GD2(p) (-GC(p) * GPHI(p))
#define GD3(p) ((GC(p) * GC(p) - 1.0) * GPHI(p))
#define GD4(p) ((3.0 - GC(p) * GC(p)) * GC(p) * GPHI(p))
#define GD5(p) (((GC(p) * GC(p) - 6.0) * GC(p) * GC(p) + 3.0) * GPHI(p))
#define GD6(p) (-(((GC(p) * GC(p) - 10.0) * GC(p) * GC(p) + 15.0) * GC(p)) \
                * GPHI(p))
/* Taylor coefficients in s (x = c + W s) */
#define GK0(p) (GD0(p))
#define GK1(p) (GD1(p) * GW)
#define GK2(p) (GD2(p) * (GW * GW / 2.0))
#define GK3(p) (GD3(p) * (GW * GW * GW / 6.0))
#define GK4(p) (GD4(p) * (GW * GW * GW * GW / 24.0))
#define GK5(p) (GD5(p) * (GW * GW * GW * GW * GW / 120.0))
#define GK6(p) (GD6(p) * (GW * GW * GW * GW * GW * GW / 720.0))
/* economized degree-4 coefficients */
#define GE0(p) ((float)(GK0(p) + GK6(p) * (1.0 / 2048.0)))
#define GE1(p) ((float)(GK1(p) - GK5(p) * (5.0 / 256.0)))
#define GE2(p) ((float)(GK2(p) - GK6(p) * (9.0 / 256.0)))
#define GE3(p) ((float)(GK3(p) + GK5(p) * (5.0 / 16.0)))
#define GE4(p) ((float)(GK4(p) + GK6(p) * (3.0 / 8.0)))
#define GLIST(K) \
    K(0), K(1), K(2), K(3), K(4), K(5), K(6), K(7), \
    K(8), K(9), K(10), K(11), K(12), K(13), K(14), K(15), \
    K(16), K(17), K(18), K(19), K(20), K(21), K(22), K(23), \
    K(24), K(25), K(26), K(27), K(28), K(29), K(30), K(31)

typedef struct {
    __m512 e0l, e0h, e1l, e1h, e2l, e2h, e3l, e3h, e4l, e4h;
} gtab_t;

static inline __attribute__((always_inline)) gtab_t gtab_load(const float *T)
{
    gtab_t tb;
    tb.e0l = _mm512_loadu_ps(T + 0);
    tb.e0h = _mm512_loadu_ps(T + 16);
    tb.e1l = _mm512_loadu_ps(T + 32);
    tb.e1h = _mm512_loadu_ps(T + 48);
    tb.e2l = _mm512_loadu_ps(T + 64);
    tb.e2h = _mm512_loadu_ps(T + 80);
    tb.e3l = _mm512_loadu_ps(T + 96);
    tb.e3h = _mm512_loadu_ps(T + 112);
    tb.e4l = _mm512_loadu_ps(T + 128);
    tb.e4h = _mm512_loadu_ps(T + 144);
    return tb;
}

static inline __attribute__((always_inline)) __m512 gelu16(__m512 x,
                                                          const gtab_t *tb)
{
    const __m512 magic = _mm512_set1_ps(12582912.0f); /* 1.5 * 2^23 */
    __m512 t = _mm512_mul_ps(x, _mm512_set1_ps(2.46153846153846154f)); /* x/W */
#if defined(__AVX512DQ__)
    /* |t| <= 15.49 keeping the sign of t (abs-min, sign from src1) */
    t = _mm512_range_ps(t, _mm512_set1_ps(15.49f), 0x06);
    __m512 r = _mm512_add_ps(t, magic);              /* magic + rint(t) */
    __m512 s = _mm512_reduce_ps(t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
#else
    t = _mm512_max_ps(t, _mm512_set1_ps(-15.49f));   /* NaN -> -15.49 */
    t = _mm512_min_ps(t, _mm512_set1_ps(15.49f));
    __m512 r = _mm512_add_ps(t, magic);
    __m512 s = _mm512_sub_ps(t, _mm512_sub_ps(r, magic));
#endif
    __m512i j = _mm512_castps_si512(r);              /* low 5 bits = slot */
    __m512 p = _mm512_permutex2var_ps(tb->e4l, j, tb->e4h);
    p = _mm512_fmadd_ps(p, s, _mm512_permutex2var_ps(tb->e3l, j, tb->e3h));
    p = _mm512_fmadd_ps(p, s, _mm512_permutex2var_ps(tb->e2l, j, tb->e2h));
    p = _mm512_fmadd_ps(p, s, _mm512_permutex2var_ps(tb->e1l, j, tb->e1h));
    p = _mm512_fmadd_ps(p, s, _mm512_permutex2var_ps(tb->e0l, j, tb->e0h));
    return _mm512_mul_ps(x, p);                      /* x * Phi(x) */
}

/* y[i] for i in [i0, i1), (i1 - i0) a multiple of 16, ordinary stores */
static inline void body_store(const float *restrict x, float *restrict y,
                              int64_t i0, int64_t i1, const float *T)
{
    const gtab_t tb = gtab_load(T);
    int64_t i = i0;
#if UNROLL >= 2
    for (; i + 32 <= i1; i += 32) {
        __m512 va = _mm512_loadu_ps(x + i);
        __m512 vb = _mm512_loadu_ps(x + i + 16);
        _mm512_storeu_ps(y + i, gelu16(va, &tb));
        _mm512_storeu_ps(y + i + 16, gelu16(vb, &tb));
    }
#endif
    for (; i + 16 <= i1; i += 16)
        _mm512_storeu_ps(y + i, gelu16(_mm512_loadu_ps(x + i), &tb));
}

/* same, y + i0 64-byte aligned, non-temporal stores, x prefetched ahead */
static inline void body_stream(const float *restrict x, float *restrict y,
                               int64_t i0, int64_t i1, const float *T)
{
    const gtab_t tb = gtab_load(T);
    int64_t i = i0;
#if UNROLL >= 2
    for (; i + 32 <= i1; i += 32) {
#if PF_DIST > 0
        _mm_prefetch((const char *)(x + i + PF_DIST), _MM_HINT_T0);
        _mm_prefetch((const char *)(x + i + 16 + PF_DIST), _MM_HINT_T0);
#endif
        __m512 va = _mm512_loadu_ps(x + i);
        __m512 vb = _mm512_loadu_ps(x + i + 16);
        _mm512_stream_ps(y + i, gelu16(va, &tb));
        _mm512_stream_ps(y + i + 16, gelu16(vb, &tb));
    }
#endif
    for (; i + 16 <= i1; i += 16) {
#if PF_DIST > 0
        _mm_prefetch((const char *)(x + i + PF_DIST), _MM_HINT_T0);
#endif
        _mm512_stream_ps(y + i, gelu16(_mm512_loadu_ps(x + i), &tb));
    }
}

/* len in 1..15 elements starting at i, masked load/store */
static inline void part_masked(const float *restrict x, float *restrict y,
                               int64_t i, int64_t len, const float *T)
{
    const gtab_t tb = gtab_load(T);
    const __mmask16 m = (__mmask16)((1u << (unsigned)len) - 1u);
    __m512 v = _mm512_maskz_loadu_ps(m, x + i);
    _mm512_mask_storeu_ps(y + i, m, gelu16(v, &tb));
}

void gelu(const float *x, float *y, int64_t n)
{
    if (n <= 0)
        return;

    /* E0[32], E1[32], ..., E4[32]; constants folded at compile time */
    const float GT[5 * 32] __attribute__((aligned(64))) = {
        GLIST(GE0), GLIST(GE1), GLIST(GE2), GLIST(GE3), GLIST(GE4)
    };

    if (n < PAR_MIN) {
        const int64_t nb = n & ~(int64_t)15;
        body_store(x, y, 0, nb, GT);
        if (n > nb)
            part_masked(x, y, nb, n - nb, GT);
        return;
    }

    const int use_nt = (n >= NT_MIN) && (((uintptr_t)y & 3u) == 0);
    /* floats before y is 64-byte aligned (0..15); only used with NT */
    const int64_t head =
        use_nt ? (int64_t)((((uintptr_t)0 - (uintptr_t)y) & 63u) >> 2) : 0;
    const int64_t nvec = (n - head) >> 4;
    const int64_t tail0 = head + (nvec << 4);
    const float *T = GT;

#pragma omp parallel
    {
        const int64_t nth = omp_get_num_threads();
        const int64_t tid = omp_get_thread_num();
        const int64_t v0 = nvec * tid / nth;
        const int64_t v1 = nvec * (tid + 1) / nth;
        const int64_t i0 = head + (v0 << 4);
        const int64_t i1 = head + (v1 << 4);
        if (use_nt)
            body_stream(x, y, i0, i1, T);
        else
            body_store(x, y, i0, i1, T);
        if (tid == 0 && head > 0)
            part_masked(x, y, 0, head, T);
        if (tid == nth - 1 && n > tail0)
            part_masked(x, y, tail0, n - tail0, T);
        if (use_nt)
            _mm_sfence();
    }
}

#else /* no AVX-512: scalar libm fallback */

void gelu(const float *x, float *y, int64_t n)
{
    if (n < PAR_MIN) {
        for (int64_t i = 0; i < n; i++)
            y[i] = gelu_scalar(x[i]);
        return;
    }
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++)
        y[i] = gelu_scalar(x[i]);
}

#endif
