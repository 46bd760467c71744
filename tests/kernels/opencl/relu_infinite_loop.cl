/* Never returns: the loop condition cannot change. */
// @launch global=n
__kernel void relu(__global const float *x, __global float *y, long n)
{
    long i = get_global_id(0);
    volatile int go = 1;
    while (go)
        y[i % n] = x[i % n];
}
