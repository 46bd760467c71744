/*
 * rms_norm — CUDA seed kernel, row normalization.
 *
 * y[r][j] = x[r][j] / sqrt(mean_j(x[r][j]^2) + eps) * w[j] over a
 * row-major [rows x cols] fp32 matrix with a per-column weight. One block
 * per row (a grid-stride loop over rows covers any grid; the declared
 * grid is min(rows, 2^20) blocks). Pass 1: each thread sums the squares
 * of the columns threadIdx.x, threadIdx.x + THREADS, ... (coalesced) and
 * the block adds the partials (warp-shuffle butterflies, one shared slot
 * per warp). Pass 2 re-reads the row (from L2 for all but huge rows) and
 * writes x * inv * w.
 *
 * Knobs: THREADS is the block size (threads per row). VEC 4 uses float4
 * accesses over the 16-byte aligned middle of each row (the output pass
 * only when the x, y and w pointers share their alignment, i.e. cols % 4
 * == 0 with aligned buffers), scalars for the head and tail. ACC is the
 * type of the sum of squares and of 1/sqrt(mean + eps); the output pass
 * is fp32. Every combination is correct to the spec's tolerance.
 */
#define THREADS 256  // @knob layer=parallel values=64,128,256,512,1024 "threads per block (one block per row)"
#define VEC 4        // @knob layer=vectorize values=1,4 "1 scalar accesses, 4 float4 accesses over the 16-byte aligned middle of each row"
#define ACC float    // @knob layer=algorithm values=float,double "type of the sum of squares and its block reduction"
// @launch grid=max(1, min(rows, 1048576)) block=THREADS

static __device__ __forceinline__ ACC sum_warp(ACC v)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

/* The sum of v over the block, returned to every thread. part is shared
 * scratch of 33 values; back-to-back calls need no extra barrier. */
static __device__ ACC sum_block(ACC v, ACC *part)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;

    v = sum_warp(v);
    if (lane == 0)
        part[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < THREADS / 32 ? part[lane] : (ACC)0;
        v = sum_warp(v);
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

/* This thread's partial sum of squares of xr[0..cols). */
static __device__ ACC sumsq_part(const float *__restrict__ xr, long long cols)
{
    ACC s = 0;
    long long j0 = 0;
#if VEC == 4
    const long long head = head_len(xr, cols);
    for (long long j = threadIdx.x; j < head; j += THREADS) {
        const ACC v = __ldg(xr + j);
        s += v * v;
    }
    const float4 *x4 = (const float4 *)(xr + head);
    const long long nv = (cols - head) / 4;
    for (long long v = threadIdx.x; v < nv; v += THREADS) {
        const float4 t = __ldg(x4 + v);
        s += ((ACC)t.x * t.x + (ACC)t.y * t.y) + ((ACC)t.z * t.z + (ACC)t.w * t.w);
    }
    j0 = head + nv * 4;
#endif
    for (long long j = j0 + threadIdx.x; j < cols; j += THREADS) {
        const ACC v = __ldg(xr + j);
        s += v * v;
    }
    return s;
}

/* yr[j] = xr[j] * inv * w[j] for the columns of this thread. */
static __device__ void out_row(const float *__restrict__ xr, const float *__restrict__ w,
                               float *yr, long long cols, float inv)
{
    long long j0 = 0;
#if VEC == 4
    const unsigned long long px = (unsigned long long)xr;
    if ((((px ^ (unsigned long long)yr) | (px ^ (unsigned long long)w)) & 15) == 0) {
        const long long head = head_len(xr, cols);
        for (long long j = threadIdx.x; j < head; j += THREADS)
            yr[j] = __ldg(xr + j) * inv * __ldg(w + j);
        const float4 *x4 = (const float4 *)(xr + head);
        const float4 *w4 = (const float4 *)(w + head);
        float4 *y4 = (float4 *)(yr + head);
        const long long nv = (cols - head) / 4;
        for (long long v = threadIdx.x; v < nv; v += THREADS) {
            const float4 t = __ldg(x4 + v), g = __ldg(w4 + v);
            y4[v] = make_float4(t.x * inv * g.x, t.y * inv * g.y, t.z * inv * g.z,
                                t.w * inv * g.w);
        }
        j0 = head + nv * 4;
    }
#endif
    for (long long j = j0 + threadIdx.x; j < cols; j += THREADS)
        yr[j] = __ldg(xr + j) * inv * __ldg(w + j);
}

__global__ void rms_norm(const float *__restrict__ x, const float *__restrict__ w, float *y,
                         long long rows, long long cols, float eps)
{
    __shared__ ACC part[33];

    for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
        const ACC ss = sum_block(sumsq_part(x + r * cols, cols), part);
        const ACC inv = (ACC)1 / sqrt(ss / (ACC)cols + (ACC)eps);
        out_row(x + r * cols, w, y + r * cols, cols, (float)inv);
    }
}
