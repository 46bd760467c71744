/*
 * group_norm — vendor baseline composed from two oneDNN (2.6) primitives,
 * since oneDNN 2.6 has no group normalization:
 *
 *   1. layer_normalization, forward_inference, no scale or shift, on the
 *      tensor viewed as [n * groups x cpg * hw]: each row is one group of
 *      one sample, so this writes z = (x - mu) / sqrt(var + eps) into y;
 *   2. binary_mul in place on y viewed as [n x c x hw] with gamma
 *      broadcast as [1 x c x 1], with a binary_add post-op adding beta
 *      broadcast the same way: y = z * gamma[ch] + beta[ch].
 *
 * This is exactly group normalization; the only difference from a fused
 * kernel is that z is rounded to fp32 before the affine step.
 *
 * The engine and stream are created once; the two primitives and their
 * memory objects are cached for the last (n, groups, cpg, hw, eps) seen, so
 * a repeated call only rebinds the data pointers and executes. Any oneDNN
 * error aborts with a message: a baseline must never silently produce
 * garbage.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <oneapi/dnnl/dnnl.h>

#define GN_DNNL_CHECK(call)                                                   \
    do {                                                                      \
        dnnl_status_t st_ = (call);                                           \
        if (st_ != dnnl_success) {                                            \
            fprintf(stderr, "group_norm vendor: %s failed (status %d)\n",     \
                    #call, (int)st_);                                         \
            abort();                                                          \
        }                                                                     \
    } while (0)

static dnnl_engine_t gn_engine;
static dnnl_stream_t gn_stream;
static dnnl_primitive_t gn_lnorm, gn_affine;
static dnnl_memory_t gn_src2d, gn_dst2d, gn_dst3d, gn_gamma, gn_beta;
static int64_t gn_shape[4] = {-1, -1, -1, -1};
static float gn_eps;

static void gn_release(void)
{
    if (!gn_lnorm)
        return;
    dnnl_primitive_destroy(gn_lnorm);
    dnnl_primitive_destroy(gn_affine);
    dnnl_memory_destroy(gn_src2d);
    dnnl_memory_destroy(gn_dst2d);
    dnnl_memory_destroy(gn_dst3d);
    dnnl_memory_destroy(gn_gamma);
    dnnl_memory_destroy(gn_beta);
    gn_lnorm = gn_affine = NULL;
}

static dnnl_primitive_t gn_make(const_dnnl_op_desc_t desc,
                                const_dnnl_primitive_attr_t attr)
{
    dnnl_primitive_desc_t pd;
    dnnl_primitive_t prim;
    GN_DNNL_CHECK(dnnl_primitive_desc_create(&pd, desc, attr, gn_engine, NULL));
    GN_DNNL_CHECK(dnnl_primitive_create(&prim, pd));
    dnnl_primitive_desc_destroy(pd);
    return prim;
}

static void gn_setup(int64_t rows, int64_t len, int64_t n, int64_t c,
                     int64_t hw, float eps)
{
    if (!gn_engine) {
        GN_DNNL_CHECK(dnnl_engine_create(&gn_engine, dnnl_cpu, 0));
        GN_DNNL_CHECK(dnnl_stream_create(&gn_stream, gn_engine,
                                         dnnl_stream_default_flags));
    }
    gn_release();
    dnnl_dims_t d2 = {rows, len}, s2 = {rows}, d3 = {n, c, hw}, w3 = {1, c, 1};
    dnnl_memory_desc_t md2, smd, md3, wmd;
    GN_DNNL_CHECK(dnnl_memory_desc_init_by_tag(&md2, 2, d2, dnnl_f32, dnnl_ab));
    GN_DNNL_CHECK(dnnl_memory_desc_init_by_tag(&smd, 1, s2, dnnl_f32, dnnl_a));
    /* With hw == 1 the 3-D broadcast [1 x c x 1] over [n x c x 1] gives
     * wrong results in oneDNN 2.6's jit binary; describe it as 2-D. */
    const int nd = hw > 1 ? 3 : 2;
    const dnnl_format_tag_t tag = hw > 1 ? dnnl_abc : dnnl_ab;
    GN_DNNL_CHECK(dnnl_memory_desc_init_by_tag(&md3, nd, d3, dnnl_f32, tag));
    GN_DNNL_CHECK(dnnl_memory_desc_init_by_tag(&wmd, nd, w3, dnnl_f32, tag));

    dnnl_layer_normalization_desc_t ldesc;
    GN_DNNL_CHECK(dnnl_layer_normalization_forward_desc_init(
        &ldesc, dnnl_forward_inference, &md2, &smd, eps, 0));
    gn_lnorm = gn_make(&ldesc, NULL);

    dnnl_post_ops_t po;
    dnnl_primitive_attr_t attr;
    GN_DNNL_CHECK(dnnl_post_ops_create(&po));
    GN_DNNL_CHECK(dnnl_post_ops_append_binary(po, dnnl_binary_add, &wmd));
    GN_DNNL_CHECK(dnnl_primitive_attr_create(&attr));
    GN_DNNL_CHECK(dnnl_primitive_attr_set_post_ops(attr, po));
    dnnl_binary_desc_t bdesc;
    GN_DNNL_CHECK(dnnl_binary_desc_init(&bdesc, dnnl_binary_mul, &md3, &wmd, &md3));
    gn_affine = gn_make(&bdesc, attr);
    dnnl_primitive_attr_destroy(attr);
    dnnl_post_ops_destroy(po);

    GN_DNNL_CHECK(dnnl_memory_create(&gn_src2d, &md2, gn_engine, DNNL_MEMORY_NONE));
    GN_DNNL_CHECK(dnnl_memory_create(&gn_dst2d, &md2, gn_engine, DNNL_MEMORY_NONE));
    GN_DNNL_CHECK(dnnl_memory_create(&gn_dst3d, &md3, gn_engine, DNNL_MEMORY_NONE));
    GN_DNNL_CHECK(dnnl_memory_create(&gn_gamma, &wmd, gn_engine, DNNL_MEMORY_NONE));
    GN_DNNL_CHECK(dnnl_memory_create(&gn_beta, &wmd, gn_engine, DNNL_MEMORY_NONE));
    gn_eps = eps;
}

void group_norm(const float *x, const float *gamma, const float *beta,
                float *y, int64_t n, int64_t groups, int64_t cpg, int64_t hw,
                float eps)
{
    if (n != gn_shape[0] || groups != gn_shape[1] || cpg != gn_shape[2] ||
        hw != gn_shape[3] || memcmp(&eps, &gn_eps, sizeof eps)) {
        gn_setup(n * groups, cpg * hw, n, groups * cpg, hw, eps);
        gn_shape[0] = n;
        gn_shape[1] = groups;
        gn_shape[2] = cpg;
        gn_shape[3] = hw;
    }
    GN_DNNL_CHECK(dnnl_memory_set_data_handle(gn_src2d, (void *)x));
    GN_DNNL_CHECK(dnnl_memory_set_data_handle(gn_dst2d, y));
    GN_DNNL_CHECK(dnnl_memory_set_data_handle(gn_dst3d, y));
    GN_DNNL_CHECK(dnnl_memory_set_data_handle(gn_gamma, (void *)gamma));
    GN_DNNL_CHECK(dnnl_memory_set_data_handle(gn_beta, (void *)beta));
    dnnl_exec_arg_t largs[2] = {{DNNL_ARG_SRC, gn_src2d}, {DNNL_ARG_DST, gn_dst2d}};
    GN_DNNL_CHECK(dnnl_primitive_execute(gn_lnorm, gn_stream, 2, largs));
    dnnl_exec_arg_t bargs[4] = {
        {DNNL_ARG_SRC_0, gn_dst3d},
        {DNNL_ARG_SRC_1, gn_gamma},
        {DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, gn_beta},
        {DNNL_ARG_DST, gn_dst3d}};
    GN_DNNL_CHECK(dnnl_primitive_execute(gn_affine, gn_stream, 4, bargs));
    GN_DNNL_CHECK(dnnl_stream_wait(gn_stream));
}
