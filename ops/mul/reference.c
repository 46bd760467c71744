/*
 * mul — trusted reference. y[i] = a[i] * b[i].
 *
 * One fp32 multiplication per element (the exact product rounded once),
 * so the spec's tolerance is 0: a correct kernel reproduces it bit for bit.
 */
#include <stdint.h>

void mul(const float *a, const float *b, float *y, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        y[i] = a[i] * b[i];
}
