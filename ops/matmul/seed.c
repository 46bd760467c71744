/*
 * matmul — seed kernel. C[m x n] = A[m x k] * B[k x n], row-major fp32.
 *
 * A blocked GEMM in the Goto/BLIS style. The k dimension is cut into
 * panels of KC and n into panels of NC; for each (NC, KC) panel B is
 * packed (PACKB; by default only when m spans several MC blocks, else B
 * is read in place) into NR-wide column strips, NR = NV SIMD vectors, each
 * strip kc x NR contiguous and zero-padded at the right edge. A is packed
 * per block of MC rows into MR-tall row strips (kc x MR, k-major, rows
 * past m never read). The register-blocked micro-kernel keeps an MR x NR
 * tile of C in MR*NV vector accumulators and, per k step, loads NV vectors
 * of B and broadcasts MR scalars of A into fused multiply-adds (AVX-512
 * when the compiler targets it, else AVX2+FMA, else GCC vector extensions
 * of 4 floats). The first k panel stores the tile into C, later ones add
 * to it; tiles cut by the right edge of C go through a small buffer and
 * tiles cut by the bottom edge use a micro-kernel specialized for their
 * row count, so no case computes outside C and every shape is exact.
 * OpenMP: the threads pack all of B together (one barrier per call, so a
 * thread descheduled on a loaded machine holds the other up once, not
 * per k panel), then share the MC blocks of C, each running its k panels
 * in order. When m gives one MC block or fewer than threads (the m = 1-64
 * decode shapes) the column strips are split between the threads instead
 * and each packs only its own strips of B, panel by panel. Every knob combination computes the same sums
 * in the same order per element up to the KC panel split.
 * All buffers come from one aligned_alloc per call; if it fails the
 * kernel falls back to a plain loop, so it never fails.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#define PARALLEL 1   // @knob layer=parallel values=0,1 "share packing and C blocks across OpenMP threads"
#define MR 14        // @knob layer=instruction values=4,6,8,12,14 "rows of the register tile of C"
#define NV 2         // @knob layer=vectorize values=1,2,3,4 "SIMD vectors per row of the register tile (NR = NV x width)"
#define KU 2         // @knob layer=instruction values=1,2,4,8 "k steps unrolled in the micro-kernel"
#define MC 128       // @knob layer=tiling values=32,64,128,256,512 "rows of A per packed block (kept in L2)"
#define KC 384       // @knob layer=tiling values=128,192,256,384,512 "depth of the packed panels"
#define NC 2048      // @knob layer=tiling values=256,512,1024,2048,4096 "columns of B per packed panel (kept in L3)"
#define PACKB 2      // @knob layer=memory values=0,1,2 "pack B into strips: 0 never (read in place), 1 always, 2 when m spans several MC blocks"

#define MM_PRAGMA_(x) _Pragma(#x)
#define MM_PRAGMA(x) MM_PRAGMA_(x)

#if defined(__AVX512F__)
#define MM_W 16
typedef __m512 mm_v;
#define MM_ZERO() _mm512_setzero_ps()
#define MM_LOAD(p) _mm512_loadu_ps(p)
#define MM_STORE(p, v) _mm512_storeu_ps((p), (v))
#define MM_BCAST(x) _mm512_set1_ps(x)
#define MM_FMA(a, b, c) _mm512_fmadd_ps((a), (b), (c))
#define MM_ADD(a, b) _mm512_add_ps((a), (b))
#elif defined(__AVX2__) && defined(__FMA__)
#define MM_W 8
typedef __m256 mm_v;
#define MM_ZERO() _mm256_setzero_ps()
#define MM_LOAD(p) _mm256_loadu_ps(p)
#define MM_STORE(p, v) _mm256_storeu_ps((p), (v))
#define MM_BCAST(x) _mm256_set1_ps(x)
#define MM_FMA(a, b, c) _mm256_fmadd_ps((a), (b), (c))
#define MM_ADD(a, b) _mm256_add_ps((a), (b))
#else
#define MM_W 4
typedef float mm_v __attribute__((vector_size(16)));
static inline mm_v mm_load4(const float *p)
{
    mm_v v;
    memcpy(&v, p, sizeof v);
    return v;
}
#define MM_ZERO() ((mm_v){0.0f, 0.0f, 0.0f, 0.0f})
#define MM_LOAD(p) mm_load4(p)
#define MM_STORE(p, v) memcpy((p), &(v), sizeof(mm_v))
#define MM_BCAST(x) ((mm_v){(x), (x), (x), (x)})
#define MM_FMA(a, b, c) ((a) * (b) + (c))
#define MM_ADD(a, b) ((a) + (b))
#endif

#define NR (NV * MM_W)

static int64_t mm_min(int64_t x, int64_t y) { return x < y ? x : y; }

/*
 * One tile: c[mr x nr] = (beta ? c : 0) + ap * bp over kc steps. ap is an
 * MR-tall packed strip (row i of step p at ap[p * MR + i]); bp holds NR
 * floats per step at stride ldb. mr is a constant at every call site, so
 * the loops unroll and the accumulators live in registers.
 */
static inline __attribute__((always_inline)) void
mm_tile(const int mr, int64_t kc, const float *restrict ap,
        const float *restrict bp, int64_t ldb, float *restrict c,
        int64_t ldc, int64_t nr, int beta)
{
    mm_v acc[MR][NV];
    for (int i = 0; i < mr; i++)
        for (int j = 0; j < NV; j++)
            acc[i][j] = MM_ZERO();
    MM_PRAGMA(GCC unroll KU)
    for (int64_t p = 0; p < kc; p++) {
        mm_v bv[NV];
        for (int j = 0; j < NV; j++)
            bv[j] = MM_LOAD(bp + p * ldb + j * MM_W);
        for (int i = 0; i < mr; i++) {
            const mm_v av = MM_BCAST(ap[p * MR + i]);
            for (int j = 0; j < NV; j++)
                acc[i][j] = MM_FMA(av, bv[j], acc[i][j]);
        }
    }
    if (nr == NR) {
        for (int i = 0; i < mr; i++)
            for (int j = 0; j < NV; j++) {
                mm_v v = acc[i][j];
                if (beta)
                    v = MM_ADD(v, MM_LOAD(c + i * ldc + j * MM_W));
                MM_STORE(c + i * ldc + j * MM_W, v);
            }
        return;
    }
    for (int i = 0; i < mr; i++) {
        float t[NR];
        for (int j = 0; j < NV; j++)
            MM_STORE(t + j * MM_W, acc[i][j]);
        for (int64_t j = 0; j < nr; j++)
            c[i * ldc + j] = beta ? c[i * ldc + j] + t[j] : t[j];
    }
}

#define MM_CASE(r)                                                   \
    case r:                                                          \
        mm_tile(r, kc, ap, bp, ldb, c, ldc, nr, beta);               \
        break;

/* The tile with its row count mr (1..MR) as a compile-time constant. */
static void mm_tile_rows(int mr, int64_t kc, const float *restrict ap,
                         const float *restrict bp, int64_t ldb,
                         float *restrict c, int64_t ldc, int64_t nr, int beta)
{
    switch (mr) {
        MM_CASE(1)
        MM_CASE(2)
        MM_CASE(3)
        MM_CASE(4)
#if MR >= 5
        MM_CASE(5)
#endif
#if MR >= 6
        MM_CASE(6)
#endif
#if MR >= 7
        MM_CASE(7)
#endif
#if MR >= 8
        MM_CASE(8)
#endif
#if MR >= 9
        MM_CASE(9)
#endif
#if MR >= 10
        MM_CASE(10)
#endif
#if MR >= 11
        MM_CASE(11)
#endif
#if MR >= 12
        MM_CASE(12)
#endif
#if MR >= 13
        MM_CASE(13)
#endif
#if MR >= 14
        MM_CASE(14)
#endif
    default:
        break;
    }
}

/* Packs rows [0, mc) x columns [0, kc) of a (leading dimension lda) into
 * MR-tall strips: strip s, step p, row i at ap[s * MR * kc + p * MR + i]. */
static void mm_pack_a(const float *a, int64_t lda, int64_t mc, int64_t kc,
                      float *restrict ap)
{
    for (int64_t s = 0; s * MR < mc; s++) {
        const int64_t rows = mm_min(MR, mc - s * MR);
        float *restrict dst = ap + s * MR * kc;
        for (int64_t i = 0; i < rows; i++) {
            const float *src = a + (s * MR + i) * lda;
            for (int64_t p = 0; p < kc; p++)
                dst[p * MR + i] = src[p];
        }
    }
}

/* Packs columns [0, nr) of kc rows of b (leading dimension ldb) into one
 * kc x NR strip, zero-padding columns nr..NR-1. */
static void mm_pack_b(const float *b, int64_t ldb, int64_t kc, int64_t nr,
                      float *restrict bp)
{
    for (int64_t p = 0; p < kc; p++) {
        memcpy(bp + p * NR, b + p * ldb, sizeof(float) * (size_t)nr);
        for (int64_t j = nr; j < NR; j++)
            bp[p * NR + j] = 0.0f;
    }
}

/* The plain loop, used only when a buffer cannot be allocated. */
static void mm_plain(const float *a, const float *b, float *c, int64_t m,
                     int64_t n, int64_t k)
{
    for (int64_t i = 0; i < m; i++) {
        float *ci = c + i * n;
        for (int64_t j = 0; j < n; j++)
            ci[j] = 0.0f;
        for (int64_t p = 0; p < k; p++) {
            const float aip = a[i * k + p];
            for (int64_t j = 0; j < n; j++)
                ci[j] += aip * b[p * n + j];
        }
    }
}

/* Bytes of n floats rounded up to 64 (aligned_alloc wants a multiple). */
static size_t mm_bytes(int64_t n)
{
    return ((size_t)n * sizeof(float) + 63) / 64 * 64;
}

/* Strip s (NR columns from s * NR) of rows [ic, ic + mc) of C over the k
 * panel at pc of depth kc, with the A block packed in apack and the strip
 * of B packed at bstrip, or read in place when bstrip is NULL. */
static void mm_strip(const float *b, float *c, int64_t n, int64_t pc,
                     int64_t kc, int64_t s, int64_t ic, int64_t mc,
                     const float *apack, const float *bstrip, float *tail,
                     int beta)
{
    const int64_t nr = mm_min(NR, n - s * NR);
    const float *bp = bstrip;
    int64_t ldb = NR;
    if (!bp && nr == NR) {
        bp = b + pc * n + s * NR;
        ldb = n;
    } else if (!bp) {
        /* the right-edge strip, packed again per A block: one strip only */
        mm_pack_b(b + pc * n + s * NR, n, kc, nr, tail);
        bp = tail;
    }
    for (int64_t ir = 0; ir < mc; ir += MR)
        mm_tile_rows((int)mm_min(MR, mc - ir), kc, apack + ir * kc, bp, ldb,
                     c + (ic + ir) * n + s * NR, n, nr, beta);
}

/* Rows [ic, ic + mc) x strips [s0, s1) of C: NC-wide column chunks, in
 * each the k panels in order (the first stores, later ones add). B comes
 * packed in bpack (all of it), or, with bloc, is packed here panel by
 * panel (only this item's strips: the column-split mode), or is read in
 * place (packb 0). */
static void mm_item(const float *a, const float *b, float *c, int64_t n,
                    int64_t k, int64_t ic, int64_t mc, int64_t s0, int64_t s1,
                    int packb, const float *bpack, float *bloc, float *apack,
                    float *tail)
{
    const int64_t nsn = (n + NR - 1) / NR, chunk = NC / NR > 0 ? NC / NR : 1;
    for (int64_t j0 = s0; j0 < s1; j0 += chunk) {
        const int64_t j1 = mm_min(s1, j0 + chunk);
        for (int64_t pc = 0; pc < k; pc += KC) {
            const int64_t kc = mm_min(KC, k - pc);
            if (bloc)
                for (int64_t s = j0; s < j1; s++)
                    mm_pack_b(b + pc * n + s * NR, n, kc, mm_min(NR, n - s * NR),
                              bloc + (s - j0) * kc * NR);
            /* repacked per chunk: with n <= NC there is one chunk */
            mm_pack_a(a + ic * k + pc, k, mc, kc, apack);
            for (int64_t s = j0; s < j1; s++) {
                const float *bstrip = NULL;
                if (packb)
                    bstrip = bloc ? bloc + (s - j0) * kc * NR
                                  : bpack + pc * nsn * NR + s * kc * NR;
                mm_strip(b, c, n, pc, kc, s, ic, mc, apack, bstrip, tail, pc > 0);
            }
        }
    }
}

void matmul(const float *a, const float *b, float *c, int64_t m, int64_t n,
            int64_t k)
{
    const int64_t kcmax = mm_min(KC, k), nsn = (n + NR - 1) / NR;
    /* Rows are cut into MR strips and the strips into nic blocks of about
     * MC rows; the largest block has at most mcmax rows. */
    const int64_t nstr = (m + MR - 1) / MR, nic0 = (m + MC - 1) / MC;
    const int64_t mcmax = (nstr + nic0 - 1) / nic0 * MR;
    const int par = PARALLEL && (double)m * n * k >= 65536.0;
    int maxt = 1;
#ifdef _OPENMP
    if (par)
        maxt = omp_get_max_threads();
#endif
    /* One MC block, or fewer than threads: the threads split the columns
     * and each packs its own strips of B panel by panel (no barrier, the
     * panel stays in cache); else all of B is packed once, shared, before
     * the threads start (one barrier per call). */
    const int colsplit = nic0 == 1 || nic0 < maxt;
    const int packb = PACKB == 1 || (PACKB == 2 && nic0 > 1);
    /* One buffer: the shared packed B (k panel P's strip S at
     * P * KC * nsn * NR + S * kc * NR), then per thread its A block, one
     * strip for the right edge and, when the columns are split, its
     * local B panel. */
    const int64_t bsize = packb && !colsplit ? k * nsn * NR : 0;
    const int64_t lsize = packb && colsplit ? kcmax * mm_min(nsn, NC / NR > 0 ? NC / NR : 1) * NR : 0;
    const int64_t tsize = mcmax * kcmax + kcmax * NR + lsize;
    float *buf = aligned_alloc(64, mm_bytes(bsize + tsize * maxt));
    if (!buf) {
        mm_plain(a, b, c, m, n, k);
        return;
    }
#pragma omp parallel if (par) num_threads(maxt)
    {
        int nt = 1, t = 0;
#ifdef _OPENMP
        nt = omp_get_num_threads();
        t = omp_get_thread_num();
#endif
        float *apack = buf + bsize + tsize * t;
        float *tail = apack + mcmax * kcmax;
        float *bloc = lsize ? tail + kcmax * NR : NULL;
        /* The only barrier: the shared B is packed before it is read. */
        const int64_t npc = bsize ? (k + KC - 1) / KC : 0;
#pragma omp for schedule(static)
        for (int64_t w = 0; w < npc * nsn; w++) {
            const int64_t pc = w / nsn * KC, s = w % nsn;
            const int64_t kc = mm_min(KC, k - pc);
            mm_pack_b(b + pc * n + s * NR, n, kc, mm_min(NR, n - s * NR),
                      buf + pc * nsn * NR + s * kc * NR);
        }
        /* enough blocks: a multiple of nt of them (balanced); too few:
         * each block's column strips are split between threads */
        const int64_t nic = nic0 >= nt ? mm_min(nstr, (nic0 + nt - 1) / nt * nt) : nic0;
        const int64_t nsplit = nic >= nt ? 1 : mm_min(nsn, (nt + nic - 1) / nic);
#pragma omp for schedule(static) nowait
        for (int64_t w = 0; w < nic * nsplit; w++) {
            const int64_t ib = w / nsplit, sp = w % nsplit;
            const int64_t ic = MR * (nstr * ib / nic);
            const int64_t mc = mm_min(m, MR * (nstr * (ib + 1) / nic)) - ic;
            mm_item(a, b, c, n, k, ic, mc, nsn * sp / nsplit,
                    nsn * (sp + 1) / nsplit, packb, buf, bloc, apack, tail);
        }
    }
    free(buf);
}
