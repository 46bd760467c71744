/*
 * clamp — vendor baseline: oneDNN (2.6) eltwise clip_v2, forward_inference,
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

#define CLAMP_DNNL_CHECK(call)                                               \
    do {                                                                     \
        dnnl_status_t st_ = (call);                                          \
        if (st_ != dnnl_success) {                                           \
            fprintf(stderr, "clamp vendor: %s failed (status %d)\n",         \
                    #call, (int)st_);                                        \
            abort();                                                         \
        }                                                                    \
    } while (0)

#define CLAMP_NSTEPS 1

static dnnl_engine_t clamp_engine;
static dnnl_stream_t clamp_stream;
static dnnl_primitive_t clamp_prim[CLAMP_NSTEPS];
static dnnl_memory_t clamp_src, clamp_dst;
static int64_t clamp_n = -1;
static float clamp_k_lo;
static float clamp_k_hi;

static dnnl_primitive_t clamp_make(const dnnl_memory_desc_t *md,
                                  dnnl_alg_kind_t alg, float alpha, float beta)
{
    dnnl_eltwise_desc_t desc;
    CLAMP_DNNL_CHECK(dnnl_eltwise_forward_desc_init(
        &desc, dnnl_forward_inference, alg, md, alpha, beta));
    dnnl_primitive_desc_t pd;
    dnnl_primitive_t prim;
    CLAMP_DNNL_CHECK(dnnl_primitive_desc_create(&pd, &desc, NULL, clamp_engine, NULL));
    CLAMP_DNNL_CHECK(dnnl_primitive_create(&prim, pd));
    dnnl_primitive_desc_destroy(pd);
    return prim;
}

static void clamp_setup(int64_t n, float lo, float hi)
{
    if (!clamp_engine) {
        CLAMP_DNNL_CHECK(dnnl_engine_create(&clamp_engine, dnnl_cpu, 0));
        CLAMP_DNNL_CHECK(dnnl_stream_create(&clamp_stream, clamp_engine,
                                            dnnl_stream_default_flags));
    }
    if (clamp_prim[0]) {
        for (int s = 0; s < CLAMP_NSTEPS; s++)
            dnnl_primitive_destroy(clamp_prim[s]);
        dnnl_memory_destroy(clamp_src);
        dnnl_memory_destroy(clamp_dst);
        clamp_prim[0] = NULL;
    }
    dnnl_dims_t dims = {n};
    dnnl_memory_desc_t md;
    CLAMP_DNNL_CHECK(dnnl_memory_desc_init_by_tag(&md, 1, dims, dnnl_f32, dnnl_a));
    clamp_prim[0] = clamp_make(&md, dnnl_eltwise_clip_v2, lo, hi);
    CLAMP_DNNL_CHECK(dnnl_memory_create(&clamp_src, &md, clamp_engine, DNNL_MEMORY_NONE));
    CLAMP_DNNL_CHECK(dnnl_memory_create(&clamp_dst, &md, clamp_engine, DNNL_MEMORY_NONE));
    clamp_n = n;
    clamp_k_lo = lo;
    clamp_k_hi = hi;
}

void clamp(const float *x, float *y, int64_t n, float lo, float hi)
{
    if (n != clamp_n || lo != clamp_k_lo || hi != clamp_k_hi)
        clamp_setup(n, lo, hi);
    CLAMP_DNNL_CHECK(dnnl_memory_set_data_handle(clamp_src, (void *)x));
    CLAMP_DNNL_CHECK(dnnl_memory_set_data_handle(clamp_dst, y));
    for (int s = 0; s < CLAMP_NSTEPS; s++) {
        dnnl_exec_arg_t args[2] = {
            {DNNL_ARG_SRC, s == 0 ? clamp_src : clamp_dst},
            {DNNL_ARG_DST, clamp_dst}};
        CLAMP_DNNL_CHECK(dnnl_primitive_execute(clamp_prim[s], clamp_stream, 2, args));
    }
    CLAMP_DNNL_CHECK(dnnl_stream_wait(clamp_stream));
}
