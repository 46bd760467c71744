/*
 * group_norm — vendor baseline composed from two oneDNN (2.6) primitives,
 * since oneDNN 2.6 has no group normalization: layer_normalization on the
 * tensor viewed as [n * groups x cpg * hw] (each row one group of one
 * sample), then binary_mul by gamma with a binary_add post-op adding beta
 * per channel; the shared helper ops/_vendor/dnnl_norm.h. This is exactly
 * group normalization; the only difference from a fused kernel is that
 * the normalized value is rounded to fp32 before the affine step.
 */
#define KV_NAME "group_norm"
#include "../_vendor/dnnl_norm.h"

void group_norm(const float *x, const float *gamma, const float *beta,
                float *y, int64_t n, int64_t groups, int64_t cpg, int64_t hw,
                float eps)
{
    kv_norm_affine(x, gamma, beta, y, n * groups, cpg * hw, n, groups * cpg, hw, eps);
}
