/*
 * matmul_tb — CUDA seed kernel, shared-memory tiled GEMM with B transposed.
 *
 * c[i][j] = sum_p a[i*k + p] * b[j*k + p]: a is row-major [m x k], b is
 * row-major [n x k] (so c = a * b^T), c row-major [m x n], fp32, c
 * overwritten. Each block computes one TILE x TILE tile of c: block
 * (blockIdx.x, blockIdx.y) covers columns blockIdx.x * TILE ... and rows
 * blockIdx.y * TILE ...; the grid is cdiv(n, TILE) x cdiv(m, TILE). The
 * block walks k in steps of TILE, staging a tile of a (as[row][p]) and a
 * tile of b transposed (bs[p][col]) in shared memory. Both global loads
 * run along k, so they are coalesced; bs has one column of padding so the
 * transposing stores hit distinct banks. Thread (tx, ty) owns column tx
 * of the tile and rows ty, ty + TILE/WPT, ...
 *
 * Knobs: TILE is the tile edge (and the k step); WPT is how many rows of
 * the tile each thread computes (register blocking: the block has
 * TILE * TILE / WPT threads). Accumulation is fp32 in k order. Every
 * combination is correct to the spec's tolerance.
 */
#define TILE 32  // @knob layer=tiling values=8,16,32 "edge of the square tile of c per block, and the k step"
#define WPT 4    // @knob layer=instruction values=1,2,4 "rows of the tile per thread (register blocking)"
// @launch grid=cdiv(n, TILE),min(cdiv(m, TILE), 65535) block=TILE,TILE/WPT

#define TY (TILE / WPT)

__global__ void matmul_tb(const float *__restrict__ a, const float *__restrict__ b, float *c,
                          long long m, long long n, long long k)
{
    __shared__ float as[TILE][TILE];
    __shared__ float bs[TILE][TILE + 1];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const long long col0 = (long long)blockIdx.x * TILE;
    const long long col = col0 + tx;

    for (long long row0 = (long long)blockIdx.y * TILE; row0 < m; row0 += (long long)gridDim.y * TILE) {
        float acc[WPT];
#pragma unroll
        for (int w = 0; w < WPT; w++)
            acc[w] = 0.0f;
        for (long long k0 = 0; k0 < k; k0 += TILE) {
            const long long pk = k0 + tx;
#pragma unroll
            for (int w = 0; w < WPT; w++) {
                const int r = ty + w * TY;
                const long long ar = row0 + r, bn = col0 + r;
                as[r][tx] = ar < m && pk < k ? __ldg(a + ar * k + pk) : 0.0f;
                bs[tx][r] = bn < n && pk < k ? __ldg(b + bn * k + pk) : 0.0f;
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
                c[r * n + col] = acc[w];
        }
    }
}
