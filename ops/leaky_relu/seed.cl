/*
 * leaky_relu — OpenCL seed kernel: y[i] = x[i] > 0 ? x[i] : negative_slope * x[i], fp32 (exact).
 *
 * Streaming elementwise kernel. Each work-group owns one contiguous block
 * of WG * EPT * VEC elements; work-item lid handles EPT chunks of VEC
 * consecutive elements, chunk j at (group * EPT + j) * WG + lid, so
 * neighbouring work-items touch neighbouring chunks (coalesced on a GPU;
 * PoCL on a CPU vectorizes the work-group loop across work-items). The
 * last, partial chunk falls back to a scalar loop.
 *
 * The ternary works component-wise on vectors (OpenCL select semantics).
 *
 * Knobs: WG is the work-group size (local size); EPT the chunks per
 * work-item (more work per item, fewer work-items); VEC the vector width of
 * each chunk (1 scalar, 4 float4, 8 float8 via vload/vstore, scalar tail).
 * Every combination is correct to the spec's tolerance.
 */
#define WG 128   // @knob layer=parallel values=64,128,256 "work-group size (local size)"
#define EPT 1    // @knob layer=tiling values=1,4,16 "chunks of VEC elements per work-item"
#define VEC 4    // @knob layer=vectorize values=1,4,8 "vector width: 1 scalar, 4 float4, 8 float8 (scalar tail)"

// @launch global=rup(cdiv(n, VEC*EPT), WG) local=WG

#if VEC == 8
#define VLOAD vload8
#define VSTORE vstore8
#define VT float8
#elif VEC == 4
#define VLOAD vload4
#define VSTORE vstore4
#define VT float4
#endif

/* The operator on a float or a floatN (the same source serves both). */
#define F(v) ((v) > 0.0f ? (v) : (v) * negative_slope)

__kernel void leaky_relu(__global const float *x, __global float *y, long n, float negative_slope)
{
    const long lid = get_local_id(0);
    const long grp = get_group_id(0);

    for (long j = 0; j < EPT; j++) {
        const long i = ((grp * EPT + j) * WG + lid) * VEC;
        if (i >= n)
            break;
#if VEC > 1
        if (i + VEC <= n) {
            VT v = VLOAD(0, x + i);
            VSTORE(F(v), 0, y + i);
            continue;
        }
#endif
        for (long e = i; e < n && e < i + VEC; e++)
            y[e] = F(x[e]);
    }
}
