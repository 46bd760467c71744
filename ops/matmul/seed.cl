/*
 * matmul — OpenCL seed kernel: C[m x n] = A[m x k] * B[k x n], row-major, fp32.
 *
 * Two-dimensional NDRange: dimension 0 runs over the columns j of C
 * (contiguous in C and B), dimension 1 over blocks of rows. A work-group
 * computes one TS x TS tile of C with TS x TS/WPT work-items; each
 * work-item accumulates WPT outputs of one column, rows ty, ty + TS/WPT,
 * ..., in fp32 registers. LOCAL 1 walks k in steps of TS: the group copies
 * a TS x TS tile of A and of B into local memory (each work-item WPT
 * elements of each, zero outside the matrices), waits at a barrier, and
 * multiplies the tiles from local memory, so every global element is read
 * by the group once per tile instead of TS times. LOCAL 0 is the simple
 * variant: every work-item reads its rows of A and its column of B straight
 * from global memory (caches do the reuse). Edges: tiles are zero-padded,
 * outputs outside C are not written.
 *
 * Knobs: TS is the tile size (work-group TS x TS/WPT); WPT the outputs per
 * work-item (register tiling along the rows); LOCAL picks local-memory
 * tiling or direct global reads. Every combination is correct to the
 * spec's tolerance.
 */
#define TS 16    // @knob layer=tiling values=8,16,32 "tile size: a work-group computes a TS x TS tile of C"
#define WPT 4    // @knob layer=instruction values=1,2,4 "outputs per work-item (rows of the tile, register tiling)"
#define LOCAL 1  // @knob layer=memory values=0,1 "1 stage TS x TS tiles of A and B in local memory, 0 read A and B from global memory"

// @launch global=rup(n,TS),rup(m,TS)/WPT local=TS,TS/WPT

#define RTS (TS / WPT)

__kernel void matmul(__global const float *a, __global const float *b,
                     __global float *c, long m, long n, long k)
{
#if LOCAL
    __local float as[TS][TS], bs[TS][TS];
#endif
    const int tx = get_local_id(0), ty = get_local_id(1);
    const long col = get_group_id(0) * TS + tx;
    const long row0 = get_group_id(1) * TS;
    float acc[WPT];

    for (int w = 0; w < WPT; w++)
        acc[w] = 0.0f;
#if LOCAL
    for (long t = 0; t < k; t += TS) {
        for (int w = 0; w < WPT; w++) {
            const int r = ty + w * RTS;
            as[r][tx] = (row0 + r < m && t + tx < k) ? a[(row0 + r) * k + t + tx] : 0.0f;
            bs[r][tx] = (t + r < k && col < n) ? b[(t + r) * n + col] : 0.0f;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int p = 0; p < TS; p++) {
            const float bv = bs[p][tx];
            for (int w = 0; w < WPT; w++)
                acc[w] += as[ty + w * RTS][p] * bv;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
#else
    if (col < n)
        for (long p = 0; p < k; p++) {
            const float bv = b[p * n + col];
            for (int w = 0; w < WPT; w++) {
                const long row = min(row0 + ty + w * RTS, m - 1);
                acc[w] += a[row * k + p] * bv;
            }
        }
#endif
    for (int w = 0; w < WPT; w++) {
        const long row = row0 + ty + w * RTS;
        if (row < m && col < n)
            c[row * n + col] = acc[w];
    }
}
