/*
 * mean — CUDA seed kernel, row reduction.
 *
 * y[r] = (sum_j x[r][j]) / cols over a row-major [rows x cols] fp32
 * matrix, the sum divided once in ACC. One
 * block per row (a grid-stride loop over rows covers any grid; the
 * declared grid is min(rows, 2^20) blocks). Each thread sums the columns
 * threadIdx.x, threadIdx.x + THREADS, ... (coalesced), then the block
 * combines its partial sums: a butterfly of warp shuffles inside each
 * warp, one shared-memory slot per warp, and a last warp shuffle.
 *
 * Knobs: THREADS is the block size (threads per row). VEC 4 reads the
 * 16-byte aligned middle of each row as float4 vectors (the unaligned
 * head and the tail are read as scalars; rows start unaligned when cols
 * is not a multiple of 4). ACC is the type of the partial sums and of the
 * block reduction: float is usually accurate enough because the tree
 * order keeps each chain short (at most cols / THREADS terms); double
 * matches the reference more closely. Every combination is correct to
 * the spec's tolerance.
 */
#define THREADS 256  // @knob layer=parallel values=64,128,256,512,1024 "threads per block (one block per row)"
#define VEC 4        // @knob layer=vectorize values=1,4 "1 scalar loads, 4 float4 loads over the 16-byte aligned middle of each row"
#define ACC float    // @knob layer=algorithm values=float,double "type of the per-thread partial sums and of the block reduction"
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

/* This thread's partial sum of the row xr[0..cols). */
static __device__ ACC sum_part(const float *__restrict__ xr, long long cols)
{
    ACC s = 0;
    long long j0 = 0;
#if VEC == 4
    long long head = (long long)((16 - ((unsigned long long)xr & 15)) & 15) / 4;
    if (head > cols)
        head = cols;
    for (long long j = threadIdx.x; j < head; j += THREADS)
        s += (ACC)__ldg(xr + j);
    const float4 *x4 = (const float4 *)(xr + head);
    const long long nv = (cols - head) / 4;
    for (long long v = threadIdx.x; v < nv; v += THREADS) {
        const float4 t = __ldg(x4 + v);
        s += ((ACC)t.x + (ACC)t.y) + ((ACC)t.z + (ACC)t.w);
    }
    j0 = head + nv * 4;
#endif
    for (long long j = j0 + threadIdx.x; j < cols; j += THREADS)
        s += (ACC)__ldg(xr + j);
    return s;
}

__global__ void mean(const float *__restrict__ x, float *y, long long rows, long long cols)
{
    __shared__ ACC part[33];

    for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
        const ACC s = sum_block(sum_part(x + r * cols, cols), part);
        if (threadIdx.x == 0)
            y[r] = (float)(s / (ACC)cols);
    }
}
