/*
 * relu — OpenCL seed kernel. y[i] = max(x[i], 0).
 *
 * Each work-item handles EPT consecutive elements (a grid-stride over the
 * work-items would do the same with fewer items); work-groups have WG
 * items. The last work-item's range is cut at n, so any n is exact.
 */
#define WG 64     // @knob layer=parallel values=16,32,64,128,256 "work-items per work-group"
#define EPT 4     // @knob layer=tiling values=1,2,4,8,16 "elements per work-item"

// @launch global=rup(cdiv(n, EPT), WG) local=WG

__kernel void relu(__global const float *x, __global float *y, long n)
{
    long i0 = (long)get_global_id(0) * EPT;
    for (int k = 0; k < EPT; k++) {
        long i = i0 + k;
        if (i < n)
            y[i] = x[i] > 0.0f ? x[i] : 0.0f;
    }
}
