/*
 * relu — trusted reference. y[i] = max(x[i], 0).
 *
 * Exact in fp32 (a comparison and a copy), so the spec's tolerance is 0:
 * a correct kernel reproduces it bit for bit (up to the sign of zero,
 * which the tolerance rule does not distinguish).
 */
#include <stdint.h>

void relu(const float *x, float *y, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
