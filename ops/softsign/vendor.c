/*
 * softsign — vendor baseline built from oneDNN (2.6) primitives on 1-D f32
 * tensors of n elements (2.6 has no softsign algorithm):
 *
 *   1. eltwise_abs: d = |x| into a scratch buffer;
 *   2. eltwise_linear (alpha 1, beta 1) in place: d = 1 + |x|;
 *   3. binary_div: y = x / d.
 *
 * Each step rounds exactly as a plain fp32 loop does (abs is exact, then
 * one rounded add and one rounded division). Separate primitives rather
 * than post-ops: in 2.6 an eltwise primitive with eltwise post-ops only has
 * the slow reference implementation, while each step here is JIT-compiled.
 *
 * The engine and stream are created once; primitives, memory objects and
 * the scratch buffer are cached for the last n seen, so a repeated call
 * only rebinds the data pointers and executes. Any oneDNN error aborts
 * with a message: a baseline must never silently produce garbage.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <oneapi/dnnl/dnnl.h>

#define SOFTSIGN_DNNL_CHECK(call)                                            \
    do {                                                                     \
        dnnl_status_t st_ = (call);                                          \
        if (st_ != dnnl_success) {                                           \
            fprintf(stderr, "softsign vendor: %s failed (status %d)\n",      \
                    #call, (int)st_);                                        \
            abort();                                                         \
        }                                                                    \
    } while (0)

static dnnl_engine_t ss_engine;
static dnnl_stream_t ss_stream;
static dnnl_primitive_t ss_abs, ss_plus1, ss_div;
static dnnl_memory_t ss_x, ss_d, ss_y;
static float *ss_d_buf;
static int64_t ss_n = -1;

static void ss_release(void)
{
    if (!ss_div)
        return;
    dnnl_primitive_destroy(ss_abs);
    dnnl_primitive_destroy(ss_plus1);
    dnnl_primitive_destroy(ss_div);
    dnnl_memory_destroy(ss_x);
    dnnl_memory_destroy(ss_d);
    dnnl_memory_destroy(ss_y);
    free(ss_d_buf);
    ss_abs = ss_plus1 = ss_div = NULL;
    ss_d_buf = NULL;
}

static dnnl_primitive_t ss_make(const_dnnl_op_desc_t desc)
{
    dnnl_primitive_desc_t pd;
    dnnl_primitive_t prim;
    SOFTSIGN_DNNL_CHECK(dnnl_primitive_desc_create(&pd, desc, NULL, ss_engine, NULL));
    SOFTSIGN_DNNL_CHECK(dnnl_primitive_create(&prim, pd));
    dnnl_primitive_desc_destroy(pd);
    return prim;
}

static dnnl_primitive_t ss_eltwise(const dnnl_memory_desc_t *md,
                                   dnnl_alg_kind_t alg, float alpha, float beta)
{
    dnnl_eltwise_desc_t desc;
    SOFTSIGN_DNNL_CHECK(dnnl_eltwise_forward_desc_init(
        &desc, dnnl_forward_inference, alg, md, alpha, beta));
    return ss_make(&desc);
}

static void ss_setup(int64_t n)
{
    if (!ss_engine) {
        SOFTSIGN_DNNL_CHECK(dnnl_engine_create(&ss_engine, dnnl_cpu, 0));
        SOFTSIGN_DNNL_CHECK(dnnl_stream_create(&ss_stream, ss_engine,
                                               dnnl_stream_default_flags));
    }
    ss_release();
    dnnl_dims_t dims = {n};
    dnnl_memory_desc_t md;
    SOFTSIGN_DNNL_CHECK(dnnl_memory_desc_init_by_tag(&md, 1, dims, dnnl_f32, dnnl_a));
    ss_abs = ss_eltwise(&md, dnnl_eltwise_abs, 0.0f, 0.0f);
    ss_plus1 = ss_eltwise(&md, dnnl_eltwise_linear, 1.0f, 1.0f);
    dnnl_binary_desc_t bd;
    SOFTSIGN_DNNL_CHECK(dnnl_binary_desc_init(&bd, dnnl_binary_div, &md, &md, &md));
    ss_div = ss_make(&bd);

    ss_d_buf = malloc((size_t)n * sizeof(float));
    if (!ss_d_buf) {
        fprintf(stderr, "softsign vendor: out of memory\n");
        abort();
    }
    SOFTSIGN_DNNL_CHECK(dnnl_memory_create(&ss_x, &md, ss_engine, DNNL_MEMORY_NONE));
    SOFTSIGN_DNNL_CHECK(dnnl_memory_create(&ss_d, &md, ss_engine, ss_d_buf));
    SOFTSIGN_DNNL_CHECK(dnnl_memory_create(&ss_y, &md, ss_engine, DNNL_MEMORY_NONE));
    ss_n = n;
}

void softsign(const float *x, float *y, int64_t n)
{
    if (n != ss_n)
        ss_setup(n);
    SOFTSIGN_DNNL_CHECK(dnnl_memory_set_data_handle(ss_x, (void *)x));
    SOFTSIGN_DNNL_CHECK(dnnl_memory_set_data_handle(ss_y, y));
    dnnl_exec_arg_t abs_args[2] = {{DNNL_ARG_SRC, ss_x}, {DNNL_ARG_DST, ss_d}};
    dnnl_exec_arg_t plus1_args[2] = {{DNNL_ARG_SRC, ss_d}, {DNNL_ARG_DST, ss_d}};
    dnnl_exec_arg_t div_args[3] = {{DNNL_ARG_SRC_0, ss_x},
                                   {DNNL_ARG_SRC_1, ss_d},
                                   {DNNL_ARG_DST, ss_y}};
    SOFTSIGN_DNNL_CHECK(dnnl_primitive_execute(ss_abs, ss_stream, 2, abs_args));
    SOFTSIGN_DNNL_CHECK(dnnl_primitive_execute(ss_plus1, ss_stream, 2, plus1_args));
    SOFTSIGN_DNNL_CHECK(dnnl_primitive_execute(ss_div, ss_stream, 3, div_args));
    SOFTSIGN_DNNL_CHECK(dnnl_stream_wait(ss_stream));
}
