/*
 * rms_norm — OpenCL seed kernel: y[r][j] = x[r][j] / sqrt(mean_j x[r][j]^2 + eps) * w[j].
 *
 * One work-group per row of a row-major [rows x cols] fp32 matrix.
 * Work-item lid owns the chunks of VEC consecutive elements at lid * VEC,
 * lid * VEC + WG * VEC, ... (neighbouring work-items read neighbouring
 * chunks; a partial chunk at the row end falls back to scalars). Its
 * private partial sums are combined by a tree reduction in local memory
 * (a barrier per level), then the same work-items write their chunks.
 * Sum of squares in fp32; RECIP 1 computes rsqrt once, RECIP 0 divides
 * every element by sqrt(mean + eps).
 *
 * Knobs: WG is the work-group size (work-items per row, a power of two);
 * VEC the vector width of the loads and stores (1 scalar, 4 float4,
 * 8 float8); RECIP picks a reciprocal square root
 * and a multiply or a division per element. Every combination is correct to the spec's tolerance.
 */
#define WG 128    // @knob layer=parallel values=32,128,256 "work-group size: work-items per row (a power of two)"
#define VEC 4     // @knob layer=vectorize values=1,4,8 "vector width of the row loads/stores: 1 scalar, 4 float4, 8 float8 (scalar tail)"
#define RECIP 1   // @knob layer=instruction values=0,1 "1 multiply by rsqrt(mean + eps), 0 divide each element by sqrt(mean + eps)"

// @launch global=rows*WG local=WG

#if VEC == 8
#define VLOAD vload8
#define VSTORE vstore8
#define VT float8
#elif VEC == 4
#define VLOAD vload4
#define VSTORE vstore4
#define VT float4
#endif

/* Horizontal sum and maximum of a VT. */
#if VEC == 8
#define HSUM(v) (((v).s0 + (v).s1) + ((v).s2 + (v).s3) + (((v).s4 + (v).s5) + ((v).s6 + (v).s7)))
#define HMAX(v) fmax(fmax(fmax((v).s0, (v).s1), fmax((v).s2, (v).s3)), fmax(fmax((v).s4, (v).s5), fmax((v).s6, (v).s7)))
#elif VEC == 4
#define HSUM(v) (((v).x + (v).y) + ((v).z + (v).w))
#define HMAX(v) fmax(fmax((v).x, (v).y), fmax((v).z, (v).w))
#endif

/* Sum of s over the work-group, returned to every work-item; red holds WG
 * floats and is free again when this returns. */
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
    s = red[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    return s;
}

__kernel void rms_norm(__global const float *x, __global const float *w,
                       __global float *y, long rows, long cols, float eps)
{
    __local float red[WG];
    const long r = get_group_id(0);
    const long lid = get_local_id(0);
    __global const float *xr = x + r * cols;
    __global float *yr = y + r * cols;
    float s = 0.0f;
#if VEC > 1
    VT vs = (VT)(0.0f);
#endif

    for (long c = lid * VEC; c < cols; c += WG * VEC) {
#if VEC > 1
        if (c + VEC <= cols) {
            const VT v = VLOAD(0, xr + c);
            vs += v * v;
            continue;
        }
#endif
        for (long e = c; e < cols && e < c + VEC; e++)
            s += xr[e] * xr[e];
    }
#if VEC > 1
    s += HSUM(vs);
#endif
    s = group_sum(red, s) / (float)cols + eps;
#if RECIP
    const float inv = rsqrt(s);
#define RMS_SCALE(v) ((v) * inv)
#else
    const float d = sqrt(s);
#define RMS_SCALE(v) ((v) / d)
#endif
    for (long c = lid * VEC; c < cols; c += WG * VEC) {
#if VEC > 1
        if (c + VEC <= cols) {
            VSTORE(RMS_SCALE(VLOAD(0, xr + c)) * VLOAD(0, w + c), 0, yr + c);
            continue;
        }
#endif
        for (long e = c; e < cols && e < c + VEC; e++)
            yr[e] = RMS_SCALE(xr[e]) * w[e];
    }
}
