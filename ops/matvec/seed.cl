/*
 * matvec — OpenCL seed kernel: y[i] = sum_p a[i*k + p] * x[p], A [m x k]
 * row-major, fp32 accumulation.
 *
 * A row dot product per output, two layouts: GROUP 1 gives each row of A
 * one work-group; work-item lid reads chunks of VEC consecutive elements of
 * the row (and of x) at lid * VEC, lid * VEC + WG * VEC, ... (neighbouring
 * work-items read neighbouring chunks), keeps a private partial dot
 * product, and the group combines the WG partials with a tree reduction in
 * local memory (a barrier per level). GROUP 0 gives each row one work-item
 * that walks the row alone: no barriers, good for many short rows, poor for
 * a few long ones (and its reads of A are strided across work-items). x is
 * small and stays in cache; a partial chunk at the row end falls back to
 * scalars.
 *
 * Knobs: GROUP picks the layout; WG is the work-group size (partials per
 * row with GROUP 1, rows per group with GROUP 0); VEC the vector width of
 * the loads (1 scalar, 4 float4, 8 float8). Every combination is correct
 * to the spec's tolerance.
 */
#define GROUP 1  // @knob layer=parallel values=0,1 "1 one work-group per row with a local-memory tree reduction, 0 one work-item per row"
#define WG 128   // @knob layer=parallel values=32,128,256 "work-group size (a power of two)"
#define VEC 4    // @knob layer=vectorize values=1,4,8 "vector width of the row loads: 1 scalar, 4 float4, 8 float8 (scalar tail)"

// @launch global=GROUP*m*WG+(1-GROUP)*rup(m,WG) local=WG

#if VEC == 8
#define VLOAD vload8
#define VT float8
#elif VEC == 4
#define VLOAD vload4
#define VT float4
#endif

/* Dot product of the chunks start, start + step, ... of row xr with x. */
float row_partial(__global const float *xr, __global const float *x, long cols,
                  long start, long step)
{
    float s = 0.0f;
#if VEC > 1
    VT v = (VT)(0.0f);
#endif

    for (long c = start; c < cols; c += step) {
#if VEC > 1
        if (c + VEC <= cols) {
            v += VLOAD(0, xr + c) * VLOAD(0, x + c);
            continue;
        }
#endif
        for (long e = c; e < cols && e < c + VEC; e++)
            s += xr[e] * x[e];
    }
#if VEC == 8
    v.lo += v.hi;
#endif
#if VEC > 1
    s += (v.x + v.y) + (v.z + v.w);
#endif
    return s;
}

/* Sum of s over the work-group (every work-item gets it); red has WG floats. */
float group_sum(__local float *red, float s)
{
    const int lid = get_local_id(0);

    red[lid] = s;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int h = WG / 2; h > 0; h >>= 1) {
        if (lid < h)
            red[lid] += red[lid + h];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    return red[0];
}

__kernel void matvec(__global const float *a, __global const float *x,
                     __global float *y, long m, long k)
{
#if GROUP
    __local float red[WG];
    const long r = get_group_id(0);
    const long lid = get_local_id(0);
    const float s = group_sum(red, row_partial(a + r * k, x, k, lid * VEC, WG * VEC));

    if (lid == 0)
        y[r] = s;
#else
    const long r = get_global_id(0);

    if (r >= m)
        return;
    y[r] = row_partial(a + r * k, x, k, 0, VEC);
#endif
}
