/*
 * add — CUDA seed kernel, elementwise with a row broadcast.
 *
 * y[r][c] = a[r][c] + b[c] for a, y row-major [rows x cols] and b [cols],
 * fp32; one add per element, so the result is exact. The kernel walks the
 * flat index i = r * cols + c of a and y and takes b[i % cols].
 *
 * The grid-stride loop makes any grid cover all rows * cols elements; the
 * declared grid is one step's worth of blocks (capped at 2^20 blocks).
 * Consecutive threads take consecutive elements (or float4 vectors), so
 * the accesses to a and y are coalesced; b is small and stays in cache.
 *
 * Knobs: THREADS is the block size. EPT is how many elements (VEC 1) or
 * float4 vectors (VEC 4) each thread handles per grid-stride step, THREADS
 * apart. VEC 4 moves 16 bytes per load/store when cols is a multiple of 4
 * (so a vector never straddles two rows) and a, b and y are 16-byte
 * aligned (checked at run time; otherwise the scalar loop runs). Every
 * combination computes exactly the same values.
 */
#define THREADS 256  // @knob layer=parallel values=128,256,512,1024 "threads per block"
#define EPT 4        // @knob layer=tiling values=1,2,4,8 "elements (VEC 1) or float4 vectors (VEC 4) per thread per grid-stride step"
#define VEC 4        // @knob layer=vectorize values=1,4 "1 scalar accesses, 4 float4 loads and stores when cols % 4 == 0 and the buffers are 16-byte aligned"
// @launch grid=max(1, min(cdiv(rows*cols, THREADS*EPT*VEC), 1048576)) block=THREADS

__global__ void add(const float *__restrict__ a, const float *__restrict__ b, float *y,
                    long long rows, long long cols)
{
    const long long n = rows * cols;
    const long long step = (long long)gridDim.x * THREADS * EPT;
    const long long first = (long long)blockIdx.x * THREADS * EPT + threadIdx.x;
    long long done = 0;
#if VEC == 4
    if (cols % 4 == 0 &&
        (((unsigned long long)a | (unsigned long long)b | (unsigned long long)y) & 15) == 0) {
        const long long nv = n / 4, cv = cols / 4;
        const float4 *a4 = (const float4 *)a;
        const float4 *b4 = (const float4 *)b;
        float4 *y4 = (float4 *)y;
        for (long long base = first; base < nv; base += step) {
#pragma unroll
            for (int u = 0; u < EPT; u++) {
                const long long v = base + (long long)u * THREADS;
                if (v < nv) {
                    const float4 p = __ldg(a4 + v), q = __ldg(b4 + v % cv);
                    y4[v] = make_float4(p.x + q.x, p.y + q.y, p.z + q.z, p.w + q.w);
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
                y[i] = __ldg(a + i) + __ldg(b + i % cols);
        }
    }
}
