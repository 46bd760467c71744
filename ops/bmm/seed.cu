/*
 * bmm — CUDA seed kernel, batched shared-memory tiled GEMM.
 *
 * c[t] = a[t] * b[t] for t in [0, batch): a is [batch x m x k], b
 * [batch x k x n], c [batch x m x n], each a stack of densely packed
 * row-major matrices, fp32, c overwritten. Block (blockIdx.x, blockIdx.y,
 * blockIdx.z) computes one TILE x TILE tile of c[blockIdx.z]: columns
 * blockIdx.x * TILE ..., rows blockIdx.y * TILE ...; the grid is
 * cdiv(n, TILE) x cdiv(m, TILE) x batch (y and z capped at 65535, the
 * loops over row tiles and batches cover the rest). The block walks k in
 * steps of TILE, staging a tile of a and one of b in shared memory
 * (coalesced loads, zeros outside the matrices). Thread (tx, ty) owns
 * column tx of the tile and rows ty, ty + TILE/WPT, ...
 *
 * Knobs: TILE is the tile edge (and the k step; small matrices such as
 * batches of 4x4 waste most of a large tile); WPT is how many rows of the
 * tile each thread computes (register blocking). Accumulation is fp32 in
 * k order. Every combination is correct to the spec's tolerance.
 */
#define TILE 16  // @knob layer=tiling values=8,16,32 "edge of the square tile of c per block, and the k step"
#define WPT 2    // @knob layer=instruction values=1,2,4 "rows of the tile per thread (register blocking)"
// @launch grid=cdiv(n, TILE),min(cdiv(m, TILE), 65535),min(batch, 65535) block=TILE,TILE/WPT

#define TY (TILE / WPT)

__global__ void bmm(const float *__restrict__ a, const float *__restrict__ b, float *c,
                    long long batch, long long m, long long n, long long k)
{
    __shared__ float as[TILE][TILE];
    __shared__ float bs[TILE][TILE];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const long long col = (long long)blockIdx.x * TILE + tx;

    for (long long t = blockIdx.z; t < batch; t += gridDim.z) {
        const float *at = a + t * m * k, *bt = b + t * k * n;
        float *ct = c + t * m * n;
        for (long long row0 = (long long)blockIdx.y * TILE; row0 < m;
             row0 += (long long)gridDim.y * TILE) {
            float acc[WPT];
#pragma unroll
            for (int w = 0; w < WPT; w++)
                acc[w] = 0.0f;
            for (long long k0 = 0; k0 < k; k0 += TILE) {
#pragma unroll
                for (int w = 0; w < WPT; w++) {
                    const int r = ty + w * TY;
                    const long long ar = row0 + r, ak = k0 + tx, bk = k0 + r;
                    as[r][tx] = ar < m && ak < k ? __ldg(at + ar * k + ak) : 0.0f;
                    bs[r][tx] = bk < k && col < n ? __ldg(bt + bk * n + col) : 0.0f;
                }
                __syncthreads();
#pragma unroll
                for (int kk = 0; kk < TILE; kk++) {
                    const float bv = bs[kk][tx];
#pragma unroll
                    for (int w = 0; w < WPT; w++)
                        acc[w] += as[ty + w * TY][kk] * bv;
                }
                __syncthreads();
            }
#pragma unroll
            for (int w = 0; w < WPT; w++) {
                const long long r = row0 + ty + w * TY;
                if (r < m && col < n)
                    ct[r * n + col] = acc[w];
            }
        }
    }
}
