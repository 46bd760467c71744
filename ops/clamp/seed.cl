/*
 * clamp — OpenCL seed kernel: y[i] = min(max(x[i], lo), hi), fp32 (exact).
 *
 * Streaming elementwise kernel. Each work-group owns one contiguous block
 * of WG * EPT * VEC elements; work-item lid handles EPT chunks of VEC
 * consecutive elements, chunk j at (group * EPT + j) * WG + lid, so
 * neighbouring work-items touch neighbouring chunks (coalesced on a GPU;
 * PoCL on a CPU vectorizes the work-group loop across work-items). The
 * last, partial chunk falls back to a scalar loop.
 *
 * Compares and selects (the ternary works component-wise on vectors), so
 * the result is one of x, lo, hi bit for bit.
 *
 * clamp is also an OpenCL built-in; PoCL implements its built-ins as macros
 * (clamp -> _cl_clamp), which would rename this kernel, so the macro is
 * removed first. The built-in clamp is not used here.
 *
 * Knobs: WG is the work-group size (local size); EPT the chunks per
 * work-item (more work per item, fewer work-items); VEC the vector width of
 * each chunk (1 scalar, 4 float4, 8 float8 via vload/vstore, scalar tail).
 * Every combination is correct to the spec's tolerance.
 */
#undef clamp

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
#define F(v) ((v) < lo ? (float)lo : ((v) > hi ? (float)hi : (v)))

__kernel void clamp(__global const float *x, __global float *y, long n, float lo, float hi)
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
