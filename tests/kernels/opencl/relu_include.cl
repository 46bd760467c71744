/* Includes a file: refused by the gate. */
#include "/etc/passwd"
// @launch global=n
__kernel void relu(__global const float *x, __global float *y, long n)
{
    long i = get_global_id(0);
    if (i < n)
        y[i] = fmax(x[i], 0.0f);
}
