/*
 * relu — seed kernel. y[i] = max(x[i], 0).
 *
 * The array is cut into blocks of BLOCK elements; blocks are the unit of
 * OpenMP work. Inside a block the loop is either left to the compiler's
 * auto-vectorizer (VEC 0) or written with AVX2 / AVX-512 intrinsics
 * (VEC 8 / 16), UNROLL vectors per iteration, with a scalar tail. STREAM
 * uses non-temporal stores for y in the intrinsic paths when y is aligned
 * to the vector width, so a large output does not evict the input from
 * cache. Every combination of knob values computes the same, exact result;
 * an intrinsic path whose ISA the compiler does not enable falls back to
 * the plain loop.
 */
#include <stdint.h>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#define PARALLEL 1     // @knob layer=parallel values=0,1 "split the blocks across OpenMP threads"
#define BLOCK 16384    // @knob layer=tiling values=4096,16384,65536 "elements per OpenMP work item"
#define VEC 0          // @knob layer=vectorize values=0,8,16 "0 auto-vectorized loop, 8 AVX2 intrinsics, 16 AVX-512 intrinsics"
#define UNROLL 1       // @knob layer=instruction values=1,2,4 "vectors (or loop bodies) per iteration"
#define STREAM 0       // @knob layer=memory values=0,1 "non-temporal stores for y (intrinsic paths, aligned y only)"

#define RELU_PRAGMA_(x) _Pragma(#x)
#define RELU_PRAGMA(x) RELU_PRAGMA_(x)

#if VEC == 16 && defined(__AVX512F__)
#define RELU_W 16
#elif (VEC == 8 || VEC == 16) && defined(__AVX2__)
#define RELU_W 8
#else
#define RELU_W 0
#endif

/* One block of len elements; nt selects streaming stores. */
static void relu_block(const float *restrict x, float *restrict y,
                       int64_t len, int nt)
{
    int64_t i = 0;
#if RELU_W == 16
    const __m512 z = _mm512_setzero_ps();
    for (; i + 16 * UNROLL <= len; i += 16 * UNROLL) {
        for (int u = 0; u < UNROLL; u++) {
            __m512 v = _mm512_max_ps(_mm512_loadu_ps(x + i + 16 * u), z);
            if (nt)
                _mm512_stream_ps(y + i + 16 * u, v);
            else
                _mm512_storeu_ps(y + i + 16 * u, v);
        }
    }
#elif RELU_W == 8
    const __m256 z = _mm256_setzero_ps();
    for (; i + 8 * UNROLL <= len; i += 8 * UNROLL) {
        for (int u = 0; u < UNROLL; u++) {
            __m256 v = _mm256_max_ps(_mm256_loadu_ps(x + i + 8 * u), z);
            if (nt)
                _mm256_stream_ps(y + i + 8 * u, v);
            else
                _mm256_storeu_ps(y + i + 8 * u, v);
        }
    }
#else
    (void)nt;
    RELU_PRAGMA(GCC unroll UNROLL)
    for (; i < len; i++)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
#endif
    for (; i < len; i++)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

void relu(const float *x, float *y, int64_t n)
{
    int64_t nblocks = (n + BLOCK - 1) / BLOCK;
    int nt = 0;
#if RELU_W > 0
    /* BLOCK is a multiple of the vector width, so if y is aligned every
     * block's start is aligned too. */
    nt = STREAM && ((uintptr_t)y % (RELU_W * sizeof(float)) == 0);
#endif
#pragma omp parallel for schedule(static) if (PARALLEL && nblocks > 1)
    for (int64_t b = 0; b < nblocks; b++) {
        int64_t lo = b * (int64_t)BLOCK;
        int64_t len = n - lo < BLOCK ? n - lo : BLOCK;
        relu_block(x + lo, y + lo, len, nt);
    }
#if RELU_W > 0
    if (nt)
        _mm_sfence();
#endif
}
