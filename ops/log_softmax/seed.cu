/*
 * log_softmax — CUDA seed kernel, row-wise over the last dimension.
 *
 * y[r][j] = x[r][j] - m_r - log(sum_k exp(x[r][k] - m_r)), m_r = max_k
 * x[r][k], over a row-major [rows x cols] fp32 matrix. One block per row
 * (a grid-stride loop over rows covers any grid; the declared grid is
 * min(rows, 2^20) blocks). Three passes over the row, each thread taking
 * the columns threadIdx.x, threadIdx.x + THREADS, ... (coalesced): the
 * row maximum, the sum of exp(x - m), then the output (x - m) - log(sum),
 * the log taken once per row in double. The per-thread partials are
 * combined with warp-shuffle butterflies and one shared-memory slot per
 * warp. Passes 2 and 3 re-read the row, from L2 for all but huge rows.
 *
 * Knobs: THREADS is the block size (threads per row). VEC 4 reads (and,
 * when the x and y rows share their alignment, writes) the 16-byte
 * aligned middle of each row as float4 vectors, scalars for the head and
 * tail. ACC is the type of the exp sum. Every combination is correct to
 * the spec's tolerance.
 */
#define THREADS 256  // @knob layer=parallel values=64,128,256,512,1024 "threads per block (one block per row)"
#define VEC 4        // @knob layer=vectorize values=1,4 "1 scalar accesses, 4 float4 accesses over the 16-byte aligned middle of each row"
#define ACC float    // @knob layer=algorithm values=float,double "type of the exp sum and its block reduction"
// @launch grid=max(1, min(rows, 1048576)) block=THREADS

static __device__ __forceinline__ float max_warp(float v)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

static __device__ __forceinline__ ACC sum_warp(ACC v)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

/* Block-wide maximum and sum, returned to every thread. part is shared
 * scratch of 33 values; back-to-back calls need no extra barrier. */
static __device__ float max_block(float v, float *part)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;

    v = max_warp(v);
    if (lane == 0)
        part[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = max_warp(lane < THREADS / 32 ? part[lane] : -INFINITY);
        if (lane == 0)
            part[32] = v;
    }
    __syncthreads();
    return part[32];
}

static __device__ ACC sum_block(ACC v, ACC *part)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;

    v = sum_warp(v);
    if (lane == 0)
        part[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = sum_warp(lane < THREADS / 32 ? part[lane] : (ACC)0);
        if (lane == 0)
            part[32] = v;
    }
    __syncthreads();
    return part[32];
}

#if VEC == 4
/* Number of leading floats of p before a 16-byte boundary (at most cols). */
static __device__ __forceinline__ long long head_len(const float *p, long long cols)
{
    const long long h = (long long)((16 - ((unsigned long long)p & 15)) & 15) / 4;
    return h < cols ? h : cols;
}
#endif

/* This thread's maximum over its columns of xr (-inf if none). */
static __device__ float max_part(const float *__restrict__ xr, long long cols)
{
    float m = -INFINITY;
    long long j0 = 0;
#if VEC == 4
    const long long head = head_len(xr, cols);
    for (long long j = threadIdx.x; j < head; j += THREADS)
        m = fmaxf(m, __ldg(xr + j));
    const float4 *x4 = (const float4 *)(xr + head);
    const long long nv = (cols - head) / 4;
    for (long long v = threadIdx.x; v < nv; v += THREADS) {
        const float4 t = __ldg(x4 + v);
        m = fmaxf(m, fmaxf(fmaxf(t.x, t.y), fmaxf(t.z, t.w)));
    }
    j0 = head + nv * 4;
#endif
    for (long long j = j0 + threadIdx.x; j < cols; j += THREADS)
        m = fmaxf(m, __ldg(xr + j));
    return m;
}

/* This thread's partial sum of exp(x - m) over its columns of xr. */
static __device__ ACC expsum_part(const float *__restrict__ xr, long long cols, float m)
{
    ACC s = 0;
    long long j0 = 0;
#if VEC == 4
    const long long head = head_len(xr, cols);
    for (long long j = threadIdx.x; j < head; j += THREADS)
        s += (ACC)expf(__ldg(xr + j) - m);
    const float4 *x4 = (const float4 *)(xr + head);
    const long long nv = (cols - head) / 4;
    for (long long v = threadIdx.x; v < nv; v += THREADS) {
        const float4 t = __ldg(x4 + v);
        s += ((ACC)expf(t.x - m) + (ACC)expf(t.y - m)) +
             ((ACC)expf(t.z - m) + (ACC)expf(t.w - m));
    }
    j0 = head + nv * 4;
#endif
    for (long long j = j0 + threadIdx.x; j < cols; j += THREADS)
        s += (ACC)expf(__ldg(xr + j) - m);
    return s;
}

static __device__ __forceinline__ float out1(float v, float m, float ls)
{
    return (v - m) - ls;
}

/* yr[j] = (xr[j] - m) - ls for the columns of this thread. */
static __device__ void out_row(const float *__restrict__ xr, float *yr, long long cols,
                               float m, float ls)
{
    long long j0 = 0;
#if VEC == 4
    if ((((unsigned long long)xr ^ (unsigned long long)yr) & 15) == 0) {
        const long long head = head_len(xr, cols);
        for (long long j = threadIdx.x; j < head; j += THREADS)
            yr[j] = out1(__ldg(xr + j), m, ls);
        const float4 *x4 = (const float4 *)(xr + head);
        float4 *y4 = (float4 *)(yr + head);
        const long long nv = (cols - head) / 4;
        for (long long v = threadIdx.x; v < nv; v += THREADS) {
            const float4 t = __ldg(x4 + v);
            y4[v] = make_float4(out1(t.x, m, ls), out1(t.y, m, ls),
                                out1(t.z, m, ls), out1(t.w, m, ls));
        }
        j0 = head + nv * 4;
    }
#endif
    for (long long j = j0 + threadIdx.x; j < cols; j += THREADS)
        yr[j] = out1(__ldg(xr + j), m, ls);
}

__global__ void log_softmax(const float *__restrict__ x, float *y, long long rows, long long cols)
{
    __shared__ float pmax[33];
    __shared__ ACC psum[33];

    for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
        const float *xr = x + r * cols;
        const float m = max_block(max_part(xr, cols), pmax);
        const ACC s = sum_block(expsum_part(xr, cols, m), psum);
        out_row(xr, y + r * cols, cols, m, (float)log((double)s));
    }
}
