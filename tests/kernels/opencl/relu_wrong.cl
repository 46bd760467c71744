/* relu that leaves negative values unchanged: incorrect. */
// @launch global=n local=1
__kernel void relu(__global const float *x, __global float *y, long n)
{
    long i = get_global_id(0);
    if (i < n)
        y[i] = x[i] >= -1.0f ? x[i] : 0.0f;
}
