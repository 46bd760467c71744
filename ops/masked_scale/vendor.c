/*
 * masked_scale — vendor baseline built from oneDNN (2.6) primitives on 1-D
 * tensors of n elements:
 *
 *   1. reorder: the s32 mask into an f32 scratch buffer m;
 *   2. binary_mul (x * m) with an eltwise_linear post-op (alpha = scale,
 *      beta = 0) writing y.
 *
 * Why the reorder: a binary primitive with an s32 second source only has
 * oneDNN's slow reference implementation, while the s32->f32 reorder and
 * the f32 binary with a linear post-op are JIT-compiled. x * m is exact
 * (m is 0 or 1), so y = x * scale rounded once, as the spec requires.
 *
 * The engine and stream are created once; the primitives, memory objects
 * and scratch buffer are cached for the last (n, scale) seen, so a repeated
 * call only rebinds the data pointers and executes. Any oneDNN error aborts
 * with a message: a baseline must never silently produce garbage.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <oneapi/dnnl/dnnl.h>

#define MSCALE_DNNL_CHECK(call)                                              \
    do {                                                                     \
        dnnl_status_t st_ = (call);                                          \
        if (st_ != dnnl_success) {                                           \
            fprintf(stderr, "masked_scale vendor: %s failed (status %d)\n",  \
                    #call, (int)st_);                                        \
            abort();                                                         \
        }                                                                    \
    } while (0)

static dnnl_engine_t ms_engine;
static dnnl_stream_t ms_stream;
static dnnl_primitive_t ms_reorder, ms_mul;
static dnnl_memory_t ms_x, ms_mask, ms_m, ms_y;
static float *ms_m_buf;
static int64_t ms_n = -1;
static float ms_scale;

static void ms_release(void)
{
    if (!ms_mul)
        return;
    dnnl_primitive_destroy(ms_reorder);
    dnnl_primitive_destroy(ms_mul);
    dnnl_memory_destroy(ms_x);
    dnnl_memory_destroy(ms_mask);
    dnnl_memory_destroy(ms_m);
    dnnl_memory_destroy(ms_y);
    free(ms_m_buf);
    ms_reorder = ms_mul = NULL;
    ms_m_buf = NULL;
}

static void ms_setup(int64_t n, float scale)
{
    if (!ms_engine) {
        MSCALE_DNNL_CHECK(dnnl_engine_create(&ms_engine, dnnl_cpu, 0));
        MSCALE_DNNL_CHECK(dnnl_stream_create(&ms_stream, ms_engine,
                                             dnnl_stream_default_flags));
    }
    ms_release();
    dnnl_dims_t dims = {n};
    dnnl_memory_desc_t md_f, md_i;
    MSCALE_DNNL_CHECK(dnnl_memory_desc_init_by_tag(&md_f, 1, dims, dnnl_f32, dnnl_a));
    MSCALE_DNNL_CHECK(dnnl_memory_desc_init_by_tag(&md_i, 1, dims, dnnl_s32, dnnl_a));

    dnnl_primitive_desc_t pd;
    MSCALE_DNNL_CHECK(dnnl_reorder_primitive_desc_create(&pd, &md_i, ms_engine,
                                                         &md_f, ms_engine, NULL));
    MSCALE_DNNL_CHECK(dnnl_primitive_create(&ms_reorder, pd));
    dnnl_primitive_desc_destroy(pd);

    dnnl_post_ops_t po;
    dnnl_primitive_attr_t attr;
    MSCALE_DNNL_CHECK(dnnl_post_ops_create(&po));
    MSCALE_DNNL_CHECK(dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_linear,
                                                   scale, 0.0f));
    MSCALE_DNNL_CHECK(dnnl_primitive_attr_create(&attr));
    MSCALE_DNNL_CHECK(dnnl_primitive_attr_set_post_ops(attr, po));
    dnnl_binary_desc_t desc;
    MSCALE_DNNL_CHECK(dnnl_binary_desc_init(&desc, dnnl_binary_mul, &md_f, &md_f, &md_f));
    MSCALE_DNNL_CHECK(dnnl_primitive_desc_create(&pd, &desc, attr, ms_engine, NULL));
    MSCALE_DNNL_CHECK(dnnl_primitive_create(&ms_mul, pd));
    dnnl_primitive_desc_destroy(pd);
    dnnl_primitive_attr_destroy(attr);
    dnnl_post_ops_destroy(po);

    ms_m_buf = malloc((size_t)n * sizeof(float));
    if (!ms_m_buf) {
        fprintf(stderr, "masked_scale vendor: out of memory\n");
        abort();
    }
    MSCALE_DNNL_CHECK(dnnl_memory_create(&ms_x, &md_f, ms_engine, DNNL_MEMORY_NONE));
    MSCALE_DNNL_CHECK(dnnl_memory_create(&ms_mask, &md_i, ms_engine, DNNL_MEMORY_NONE));
    MSCALE_DNNL_CHECK(dnnl_memory_create(&ms_m, &md_f, ms_engine, ms_m_buf));
    MSCALE_DNNL_CHECK(dnnl_memory_create(&ms_y, &md_f, ms_engine, DNNL_MEMORY_NONE));
    ms_n = n;
    ms_scale = scale;
}

void masked_scale(const float *x, const int32_t *mask, float *y, int64_t n,
                  float scale)
{
    if (n != ms_n || scale != ms_scale)
        ms_setup(n, scale);
    MSCALE_DNNL_CHECK(dnnl_memory_set_data_handle(ms_x, (void *)x));
    MSCALE_DNNL_CHECK(dnnl_memory_set_data_handle(ms_mask, (void *)mask));
    MSCALE_DNNL_CHECK(dnnl_memory_set_data_handle(ms_y, y));
    dnnl_exec_arg_t rargs[2] = {{DNNL_ARG_FROM, ms_mask}, {DNNL_ARG_TO, ms_m}};
    MSCALE_DNNL_CHECK(dnnl_primitive_execute(ms_reorder, ms_stream, 2, rargs));
    dnnl_exec_arg_t margs[3] = {{DNNL_ARG_SRC_0, ms_x},
                                {DNNL_ARG_SRC_1, ms_m},
                                {DNNL_ARG_DST, ms_y}};
    MSCALE_DNNL_CHECK(dnnl_primitive_execute(ms_mul, ms_stream, 3, margs));
    MSCALE_DNNL_CHECK(dnnl_stream_wait(ms_stream));
}
