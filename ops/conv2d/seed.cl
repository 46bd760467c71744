/*
 * conv2d — OpenCL seed kernel: direct 2-D convolution (cross-correlation),
 * NCHW, fp32: y[b][o][r][s] = bias[o] + sum_{c,i,j} w[o][c][i][j] *
 * x[b][c][r*stride - pad + i][s*stride - pad + j], zero padding,
 * oh = (ih + 2*pad - kh)/stride + 1, ow = (iw + 2*pad - kw)/stride + 1.
 *
 * Three-dimensional NDRange: dimension 0 runs over output columns s,
 * dimension 1 over output rows r, dimension 2 over (image b, block of OPC
 * output channels). A work-group is a WGX x WGY patch of output pixels of
 * one image and one channel block, so neighbouring work-items read
 * neighbouring input pixels (stride 1) and the same weights. Each
 * work-item accumulates OPC output channels at once in fp32 registers:
 * every input value it loads is used OPC times (register tiling over the
 * output channels). Padding taps are skipped by clipping the kernel window
 * once per output pixel, not tested per tap.
 *
 * Knobs: WGX and WGY are the work-group's extent along output columns and
 * rows; OPC the output channels per work-item. Every combination is
 * correct to the spec's tolerance.
 */
#define WGX 16   // @knob layer=parallel values=8,16,32 "work-group extent along output columns (local size, dimension 0)"
#define WGY 4    // @knob layer=parallel values=1,2,4 "work-group extent along output rows (local size, dimension 1)"
#define OPC 2    // @knob layer=tiling values=1,2,4 "output channels per work-item (register tiling, each input value reused OPC times)"

// @launch global=rup((iw + 2*pad - kw)/stride + 1, WGX),rup((ih + 2*pad - kh)/stride + 1, WGY),n*cdiv(cout, OPC) local=WGX,WGY,1

__kernel void conv2d(__global const float *x, __global const float *w,
                     __global const float *bias, __global float *y, long n,
                     long cin, long cout, long ih, long iw, long kh, long kw,
                     long stride, long pad)
{
    const long oh = (ih + 2 * pad - kh) / stride + 1;
    const long ow = (iw + 2 * pad - kw) / stride + 1;
    const long s = get_global_id(0), r = get_global_id(1);
    const long nblk = (cout + OPC - 1) / OPC;
    const long b = get_global_id(2) / nblk;
    const long o0 = (get_global_id(2) % nblk) * OPC;
    float acc[OPC];

    if (s >= ow || r >= oh)
        return;
    /* the kernel window clipped to the input: taps i0..i1-1, j0..j1-1 */
    const long r0 = r * stride - pad, s0 = s * stride - pad;
    const long i0 = max(-r0, 0L), i1 = min(kh, ih - r0);
    const long j0 = max(-s0, 0L), j1 = min(kw, iw - s0);

    for (int q = 0; q < OPC; q++)
        acc[q] = 0.0f;
    for (long c = 0; c < cin; c++) {
        __global const float *xc = x + (b * cin + c) * ih * iw;
        for (long i = i0; i < i1; i++)
            for (long j = j0; j < j1; j++) {
                const float xv = xc[(r0 + i) * iw + s0 + j];
                for (int q = 0; q < OPC; q++) {
                    const long o = min(o0 + q, cout - 1);
                    acc[q] += w[((o * cin + c) * kh + i) * kw + j] * xv;
                }
            }
    }
    for (int q = 0; q < OPC; q++)
        if (o0 + q < cout)
            y[((b * cout + o0 + q) * oh + r) * ow + s] = acc[q] + bias[o0 + q];
}
