/* The global size is not a multiple of the local size for most n: the
 * launch fails (crash with the OpenCL error). */
// @launch global=n local=64
__kernel void relu(__global const float *x, __global float *y, long n)
{
    long i = get_global_id(0);
    if (i < n)
        y[i] = fmax(x[i], 0.0f);
}
