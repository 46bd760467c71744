/* A second kernel hidden by token pasting: the gate sees one __kernel, the
 * build finds two (compile_error). */
#define JOIN(a, b) a##b
// @launch global=n
JOIN(__ker, nel) void other(__global float *y) { y[0] = 0.0f; }
__kernel void relu(__global const float *x, __global float *y, long n)
{
    long i = get_global_id(0);
    if (i < n)
        y[i] = fmax(x[i], 0.0f);
}
