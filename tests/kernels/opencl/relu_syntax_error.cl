/* Does not compile: an undeclared identifier on line 6. */
// @launch global=n
__kernel void relu(__global const float *x, __global float *y, long n)
{
    long i = get_global_id(0);
    y[i] = undeclared_thing + x[i];
}
