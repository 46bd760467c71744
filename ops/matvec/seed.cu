/*
 * matvec — CUDA seed kernel, one group of threads per row.
 *
 * y[i] = sum_p a[i*k + p] * x[p] for a row-major [m x k] (densely packed),
 * fp32, y overwritten. Each row is handled by TPR consecutive lanes of a
 * warp: lane l sums the products at p = l, l + TPR, ... (TPR consecutive
 * floats of the row per step, so the reads of a are coalesced), then the
 * group adds its partials with xor shuffles that stay inside the group. A
 * block holds THREADS / TPR rows; a grid-stride loop over row groups
 * covers any grid (the declared grid is one row group per block, capped
 * at 2^20 blocks).
 *
 * Knobs: THREADS is the block size. TPR is the threads per row (4 or 8
 * suit short rows, 32 long ones). XT > 0 stages x in shared memory in
 * chunks of XT floats, loaded once per block and chunk by all threads
 * (every row of the block reuses them); XT 0 reads x through the
 * read-only cache. Accumulation is fp32. Every combination is correct to
 * the spec's tolerance.
 */
#define THREADS 256  // @knob layer=parallel values=128,256,512 "threads per block"
#define TPR 32       // @knob layer=tiling values=4,8,16,32 "threads per row (a power of two up to a warp)"
#define XT 2048      // @knob layer=memory values=0,512,2048 "floats of x staged in shared memory per chunk (0: read x from global memory)"
// @launch grid=max(1, min(cdiv(m, THREADS/TPR), 1048576)) block=THREADS

#define RPB (THREADS / TPR)

__global__ void matvec(const float *__restrict__ a, const float *__restrict__ x, float *y,
                       long long m, long long k)
{
#if XT
    __shared__ float xs[XT];
#endif
    const int lane = threadIdx.x % TPR, grp = threadIdx.x / TPR;

    for (long long r0 = (long long)blockIdx.x * RPB; r0 < m; r0 += (long long)gridDim.x * RPB) {
        const long long i = r0 + grp;
        const float *ar = a + (i < m ? i : 0) * k;
        float s = 0.0f;
#if XT
        for (long long k0 = 0; k0 < k; k0 += XT) {
            const long long len = k - k0 < XT ? k - k0 : XT;
            __syncthreads(); /* the previous chunk is consumed */
            for (long long p = threadIdx.x; p < len; p += THREADS)
                xs[p] = __ldg(x + k0 + p);
            __syncthreads();
            if (i < m)
                for (long long p = lane; p < len; p += TPR)
                    s += __ldg(ar + k0 + p) * xs[p];
        }
#else
        if (i < m)
            for (long long p = lane; p < k; p += TPR)
                s += __ldg(ar + p) * __ldg(x + p);
#endif
#pragma unroll
        for (int o = TPR / 2; o > 0; o >>= 1)
            s += __shfl_xor_sync(0xffffffffu, s, o);
        if (lane == 0 && i < m)
            y[i] = s;
    }
}
