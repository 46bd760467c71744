/* Writes its input through a cast: the input region is read-only, so the
 * worker faults (crash) rather than corrupting the judge's inputs. */
// @launch global=n
__kernel void relu(__global const float *x, __global float *y, long n)
{
    long i = get_global_id(0);
    if (i < n) {
        ((__global float *)x)[i] = 0.0f;
        y[i] = 0.0f;
    }
}
