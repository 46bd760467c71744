/*
 * masked_scale — trusted reference. y[i] = x[i] * mask[i] * scale with
 * mask[i] in {0, 1} (dropout's masked scale).
 *
 * Computed in double: the product of two floats is exact in double, so
 * rounding it once to fp32 gives exactly the fp32 product x[i] * scale (or
 * 0 where the mask is 0). The spec's tolerance is therefore 0.
 */
#include <stdint.h>

void masked_scale(const float *x, const int32_t *mask, float *y, int64_t n,
                  float scale)
{
    for (int64_t i = 0; i < n; i++)
        y[i] = (float)((double)x[i] * (double)mask[i] * (double)scale);
}
