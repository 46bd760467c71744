/*
 * mul — CUDA seed kernel, elementwise.
 *
 * y[i] = a[i] * b[i] for i in [0, n), fp32; one multiply per element, so
 * the result is exact.
 *
 * The grid-stride loop makes any grid cover all n elements; the declared
 * grid is one step's worth of blocks (capped at 2^20 blocks). Consecutive
 * threads take consecutive elements (or float4 vectors), so every access
 * is coalesced.
 *
 * Knobs: THREADS is the block size. EPT is how many elements (VEC 1) or
 * float4 vectors (VEC 4) each thread handles per grid-stride step, THREADS
 * apart (more independent loads in flight per thread, fewer blocks).
 * VEC 4 moves 16 bytes per load/store when a, b and y are all 16-byte
 * aligned (checked at run time; otherwise, and for the last n % 4
 * elements, the scalar loop runs). Every combination computes exactly
 * the same values.
 */
#define THREADS 256  // @knob layer=parallel values=128,256,512,1024 "threads per block"
#define EPT 4        // @knob layer=tiling values=1,2,4,8 "elements (VEC 1) or float4 vectors (VEC 4) per thread per grid-stride step"
#define VEC 4        // @knob layer=vectorize values=1,4 "1 scalar accesses, 4 float4 loads and stores when every buffer is 16-byte aligned"
// @launch grid=max(1, min(cdiv(n, THREADS*EPT*VEC), 1048576)) block=THREADS

__global__ void mul(const float *__restrict__ a, const float *__restrict__ b, float *y, long long n)
{
    const long long step = (long long)gridDim.x * THREADS * EPT;
    const long long first = (long long)blockIdx.x * THREADS * EPT + threadIdx.x;
    long long done = 0;
#if VEC == 4
    if ((((unsigned long long)a | (unsigned long long)b | (unsigned long long)y) & 15) == 0) {
        const long long nv = n / 4;
        const float4 *a4 = (const float4 *)a;
        const float4 *b4 = (const float4 *)b;
        float4 *y4 = (float4 *)y;
        for (long long base = first; base < nv; base += step) {
#pragma unroll
            for (int u = 0; u < EPT; u++) {
                const long long v = base + (long long)u * THREADS;
                if (v < nv) {
                    const float4 p = __ldg(a4 + v), q = __ldg(b4 + v);
                    y4[v] = make_float4(p.x * q.x, p.y * q.y, p.z * q.z, p.w * q.w);
                }
            }
        }
        done = nv * 4;
    }
#endif
    for (long long base = done + first; base < n; base += step) {
#pragma unroll
        for (int u = 0; u < EPT; u++) {
            const long long i = base + (long long)u * THREADS;
            if (i < n)
                y[i] = __ldg(a + i) * __ldg(b + i);
        }
    }
}
