/*
 * instance_norm — vendor baseline composed from two oneDNN (2.6)
 * primitives, since oneDNN 2.6 has no instance normalization:
 * layer_normalization on the tensor viewed as [n * c x hw] (each row one
 * (sample, channel) plane), then binary_mul by gamma with a binary_add
 * post-op adding beta per channel; the shared helper
 * ops/_vendor/dnnl_norm.h. This is exactly instance normalization; the
 * only difference from a fused kernel is that the normalized value is
 * rounded to fp32 before the affine step.
 */
#define KV_NAME "instance_norm"
#include "../_vendor/dnnl_norm.h"

void instance_norm(const float *x, const float *gamma, const float *beta,
                   float *y, int64_t n, int64_t c, int64_t hw, float eps)
{
    kv_norm_affine(x, gamma, beta, y, n * c, hw, n, c, hw, eps);
}
