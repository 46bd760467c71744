/*
 * mish — vendor baseline: oneDNN (2.6) eltwise mish, forward_inference,
 * on a 1-D f32 tensor of n elements, on the CPU engine.
 *
 * The engine and stream are created once; the primitive(s) and the two
 * memory objects are cached for the last n (and params) seen, so a call
 * with the same shape only rebinds the data pointers and executes. Any
 * oneDNN error aborts with a message: a baseline must never silently
 * produce garbage.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <oneapi/dnnl/dnnl.h>

#define MISH_DNNL_CHECK(call)                                                \
    do {                                                                     \
        dnnl_status_t st_ = (call);                                          \
        if (st_ != dnnl_success) {                                           \
            fprintf(stderr, "mish vendor: %s failed (status %d)\n",          \
                    #call, (int)st_);                                        \
            abort();                                                         \
        }                                                                    \
    } while (0)

#define MISH_NSTEPS 1

static dnnl_engine_t mish_engine;
static dnnl_stream_t mish_stream;
static dnnl_primitive_t mish_prim[MISH_NSTEPS];
static dnnl_memory_t mish_src, mish_dst;
static int64_t mish_n = -1;

static dnnl_primitive_t mish_make(const dnnl_memory_desc_t *md,
                                 dnnl_alg_kind_t alg, float alpha, float beta)
{
    dnnl_eltwise_desc_t desc;
    MISH_DNNL_CHECK(dnnl_eltwise_forward_desc_init(
        &desc, dnnl_forward_inference, alg, md, alpha, beta));
    dnnl_primitive_desc_t pd;
    dnnl_primitive_t prim;
    MISH_DNNL_CHECK(dnnl_primitive_desc_create(&pd, &desc, NULL, mish_engine, NULL));
    MISH_DNNL_CHECK(dnnl_primitive_create(&prim, pd));
    dnnl_primitive_desc_destroy(pd);
    return prim;
}

static void mish_setup(int64_t n)
{
    if (!mish_engine) {
        MISH_DNNL_CHECK(dnnl_engine_create(&mish_engine, dnnl_cpu, 0));
        MISH_DNNL_CHECK(dnnl_stream_create(&mish_stream, mish_engine,
                                           dnnl_stream_default_flags));
    }
    if (mish_prim[0]) {
        for (int s = 0; s < MISH_NSTEPS; s++)
            dnnl_primitive_destroy(mish_prim[s]);
        dnnl_memory_destroy(mish_src);
        dnnl_memory_destroy(mish_dst);
        mish_prim[0] = NULL;
    }
    dnnl_dims_t dims = {n};
    dnnl_memory_desc_t md;
    MISH_DNNL_CHECK(dnnl_memory_desc_init_by_tag(&md, 1, dims, dnnl_f32, dnnl_a));
    mish_prim[0] = mish_make(&md, dnnl_eltwise_mish, 0.0f, 0.0f);
    MISH_DNNL_CHECK(dnnl_memory_create(&mish_src, &md, mish_engine, DNNL_MEMORY_NONE));
    MISH_DNNL_CHECK(dnnl_memory_create(&mish_dst, &md, mish_engine, DNNL_MEMORY_NONE));
    mish_n = n;
}

void mish(const float *x, float *y, int64_t n)
{
    if (n != mish_n)
        mish_setup(n);
    MISH_DNNL_CHECK(dnnl_memory_set_data_handle(mish_src, (void *)x));
    MISH_DNNL_CHECK(dnnl_memory_set_data_handle(mish_dst, y));
    for (int s = 0; s < MISH_NSTEPS; s++) {
        dnnl_exec_arg_t args[2] = {
            {DNNL_ARG_SRC, s == 0 ? mish_src : mish_dst},
            {DNNL_ARG_DST, mish_dst}};
        MISH_DNNL_CHECK(dnnl_primitive_execute(mish_prim[s], mish_stream, 2, args));
    }
    MISH_DNNL_CHECK(dnnl_stream_wait(mish_stream));
}
