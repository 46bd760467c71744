/*
 * add — OpenCL seed kernel: y[r][c] = a[r][c] + b[c], fp32, row-major
 * [rows x cols], b broadcast over rows (exact).
 *
 * Two-dimensional NDRange: dimension 0 runs over the columns of a row in
 * chunks, dimension 1 over the rows. In a row, work-group g0 owns
 * WG * EPT * VEC consecutive columns; work-item lid handles EPT chunks of
 * VEC columns, chunk j at (g0 * EPT + j) * WG + lid, so neighbouring
 * work-items touch neighbouring chunks. b is read with the same column
 * index (it stays in cache across rows). A partial chunk at the end of a
 * row falls back to a scalar loop. Very short rows waste most work-items of
 * a group: a flattened index (r, c) = divmod(i, cols) is the alternative.
 *
 * Knobs: WG is the work-group size along the columns; EPT the chunks per
 * work-item; VEC the vector width of a chunk (1 scalar, 4 float4, 8 float8
 * with vload/vstore, scalar tail). Every combination is exact.
 */
#define WG 128   // @knob layer=parallel values=32,128,256 "work-group size along a row (local size, dimension 0)"
#define EPT 1    // @knob layer=tiling values=1,2,8 "chunks of VEC columns per work-item"
#define VEC 4    // @knob layer=vectorize values=1,4,8 "vector width: 1 scalar, 4 float4, 8 float8 (scalar tail)"

// @launch global=rup(cdiv(cols, VEC*EPT), WG),rows local=WG,1

#if VEC == 8
#define VLOAD vload8
#define VSTORE vstore8
#define VT float8
#elif VEC == 4
#define VLOAD vload4
#define VSTORE vstore4
#define VT float4
#endif

__kernel void add(__global const float *a, __global const float *b,
                  __global float *y, long rows, long cols)
{
    const long lid = get_local_id(0);
    const long grp = get_group_id(0);
    const long r = get_global_id(1);
    __global const float *ar = a + r * cols;
    __global float *yr = y + r * cols;

    if (r >= rows)
        return;
    for (long j = 0; j < EPT; j++) {
        const long c = ((grp * EPT + j) * WG + lid) * VEC;
        if (c >= cols)
            break;
#if VEC > 1
        if (c + VEC <= cols) {
            VSTORE(VLOAD(0, ar + c) + VLOAD(0, b + c), 0, yr + c);
            continue;
        }
#endif
        for (long e = c; e < cols && e < c + VEC; e++)
            yr[e] = ar[e] + b[e];
    }
}
