/* The launch line names something that is not a dim, param or knob. */
// @launch global=rows
__kernel void relu(__global const float *x, __global float *y, long n)
{
    long i = get_global_id(0);
    if (i < n)
        y[i] = fmax(x[i], 0.0f);
}
