/* Two kernels: refused by the gate. */
// @launch global=n
__kernel void helper(__global float *y) { y[0] = 0.0f; }
__kernel void relu(__global const float *x, __global float *y, long n)
{
    long i = get_global_id(0);
    if (i < n)
        y[i] = fmax(x[i], 0.0f);
}
