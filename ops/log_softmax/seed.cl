/*
 * log_softmax — OpenCL seed kernel: y[r][j] = x[r][j] - m_r - log(sum_k exp(x[r][k] - m_r)),
 * m_r = max_k x[r][k].
 *
 * One work-group per row of a row-major [rows x cols] fp32 matrix.
 * Work-item lid owns the chunks of VEC consecutive elements at lid * VEC,
 * lid * VEC + WG * VEC, ... (neighbouring work-items read neighbouring
 * chunks; a partial chunk at the row end falls back to scalars). Partials
 * are combined by tree reductions in local memory, a barrier per level.
 * ONLINE 0 makes three passes over the row: maximum m (group max), sum
 * s = sum exp(x - m) (group sum), output. ONLINE 1 fuses the first two:
 * each work-item keeps a running (m, s) that it rescales when m grows,
 * and the group combines the pairs (m1, s1), (m2, s2) into
 * (max, s1 exp(m1 - max) + s2 exp(m2 - max)): one read of x fewer, more
 * exps. All arithmetic is fp32.
 *
 * Knobs: WG is the work-group size (work-items per row, a power of two);
 * VEC the vector width of the loads and stores (1 scalar, 4 float4,
 * 8 float8); ONLINE picks the three-pass or the online formulation. Every
 * combination is correct to the spec's tolerance.
 */
#define WG 128    // @knob layer=parallel values=32,128,256 "work-group size: work-items per row (a power of two)"
#define VEC 4     // @knob layer=vectorize values=1,4,8 "vector width of the row loads/stores: 1 scalar, 4 float4, 8 float8 (scalar tail)"
#define ONLINE 0  // @knob layer=algorithm values=0,1 "0 three passes (max, sum, output), 1 online max+sum pass then the output pass"

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

/* Maximum of m over the work-group, as group_sum. */
float group_max(__local float *red, float m)
{
    const int lid = get_local_id(0);

    red[lid] = m;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int h = WG / 2; h > 0; h >>= 1) {
        if (lid < h)
            red[lid] = fmax(red[lid], red[lid + h]);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    m = red[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    return m;
}

/* Row maximum m and s = sum exp(x - m), the work-group's joint result. */
void row_max_sum(__global const float *xr, long cols, __local float *red,
                 __local float *red2, float *mo, float *so)
{
    const int lid = get_local_id(0);
#if ONLINE
    float m = -INFINITY, s = 0.0f;

    for (long c = lid * VEC; c < cols; c += WG * VEC)
        for (long e = c; e < cols && e < c + VEC; e++) {
            const float v = xr[e];
            if (v > m) {
                s = s * exp(m - v) + 1.0f;
                m = v;
            } else {
                s += exp(v - m);
            }
        }
    red[lid] = m;
    red2[lid] = s;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int h = WG / 2; h > 0; h >>= 1) {
        if (lid < h) {
            const float m1 = red[lid], m2 = red[lid + h];
            const float mm = fmax(m1, m2);
            float t = 0.0f;
            if (m1 != -INFINITY)
                t += red2[lid] * exp(m1 - mm);
            if (m2 != -INFINITY)
                t += red2[lid + h] * exp(m2 - mm);
            red[lid] = mm;
            red2[lid] = t;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    *mo = red[0];
    *so = red2[0];
    barrier(CLK_LOCAL_MEM_FENCE);
#else
    float m = -INFINITY, s = 0.0f;
#if VEC > 1
    VT vm = (VT)(-INFINITY), vs = (VT)(0.0f);
#endif

    (void)red2;
    for (long c = lid * VEC; c < cols; c += WG * VEC) {
#if VEC > 1
        if (c + VEC <= cols) {
            vm = fmax(vm, VLOAD(0, xr + c));
            continue;
        }
#endif
        for (long e = c; e < cols && e < c + VEC; e++)
            m = fmax(m, xr[e]);
    }
#if VEC > 1
    m = fmax(m, HMAX(vm));
#endif
    m = group_max(red, m);
    for (long c = lid * VEC; c < cols; c += WG * VEC) {
#if VEC > 1
        if (c + VEC <= cols) {
            vs += exp(VLOAD(0, xr + c) - m);
            continue;
        }
#endif
        for (long e = c; e < cols && e < c + VEC; e++)
            s += exp(xr[e] - m);
    }
#if VEC > 1
    s += HSUM(vs);
#endif
    *mo = m;
    *so = group_sum(red, s);
#endif
}

__kernel void log_softmax(__global const float *x, __global float *y,
                          long rows, long cols)
{
    __local float red[WG], red2[WG];
    const long r = get_group_id(0);
    const long lid = get_local_id(0);
    __global const float *xr = x + r * cols;
    __global float *yr = y + r * cols;
    float m, s;

    row_max_sum(xr, cols, red, red2, &m, &s);
    const float ls = log(s);
    for (long c = lid * VEC; c < cols; c += WG * VEC) {
#if VEC > 1
        if (c + VEC <= cols) {
            VSTORE((VLOAD(0, xr + c) - m) - ls, 0, yr + c);
            continue;
        }
#endif
        for (long e = c; e < cols && e < c + VEC; e++)
            yr[e] = (xr[e] - m) - ls;
    }
}
