/*
 * hardtanh — vendor baseline: oneDNN (2.6) eltwise clip, forward_inference,
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

#define HARDTANH_DNNL_CHECK(call)                                            \
    do {                                                                     \
        dnnl_status_t st_ = (call);                                          \
        if (st_ != dnnl_success) {                                           \
            fprintf(stderr, "hardtanh vendor: %s failed (status %d)\n",      \
                    #call, (int)st_);                                        \
            abort();                                                         \
        }                                                                    \
    } while (0)

#define HARDTANH_NSTEPS 1

static dnnl_engine_t hardtanh_engine;
static dnnl_stream_t hardtanh_stream;
static dnnl_primitive_t hardtanh_prim[HARDTANH_NSTEPS];
static dnnl_memory_t hardtanh_src, hardtanh_dst;
static int64_t hardtanh_n = -1;
static float hardtanh_k_min_val;
static float hardtanh_k_max_val;

static dnnl_primitive_t hardtanh_make(const dnnl_memory_desc_t *md,
                                     dnnl_alg_kind_t alg, float alpha, float beta)
{
    dnnl_eltwise_desc_t desc;
    HARDTANH_DNNL_CHECK(dnnl_eltwise_forward_desc_init(
        &desc, dnnl_forward_inference, alg, md, alpha, beta));
    dnnl_primitive_desc_t pd;
    dnnl_primitive_t prim;
    HARDTANH_DNNL_CHECK(dnnl_primitive_desc_create(&pd, &desc, NULL, hardtanh_engine, NULL));
    HARDTANH_DNNL_CHECK(dnnl_primitive_create(&prim, pd));
    dnnl_primitive_desc_destroy(pd);
    return prim;
}

static void hardtanh_setup(int64_t n, float min_val, float max_val)
{
    if (!hardtanh_engine) {
        HARDTANH_DNNL_CHECK(dnnl_engine_create(&hardtanh_engine, dnnl_cpu, 0));
        HARDTANH_DNNL_CHECK(dnnl_stream_create(&hardtanh_stream, hardtanh_engine,
                                               dnnl_stream_default_flags));
    }
    if (hardtanh_prim[0]) {
        for (int s = 0; s < HARDTANH_NSTEPS; s++)
            dnnl_primitive_destroy(hardtanh_prim[s]);
        dnnl_memory_destroy(hardtanh_src);
        dnnl_memory_destroy(hardtanh_dst);
        hardtanh_prim[0] = NULL;
    }
    dnnl_dims_t dims = {n};
    dnnl_memory_desc_t md;
    HARDTANH_DNNL_CHECK(dnnl_memory_desc_init_by_tag(&md, 1, dims, dnnl_f32, dnnl_a));
    hardtanh_prim[0] = hardtanh_make(&md, dnnl_eltwise_clip, min_val, max_val);
    HARDTANH_DNNL_CHECK(dnnl_memory_create(&hardtanh_src, &md, hardtanh_engine, DNNL_MEMORY_NONE));
    HARDTANH_DNNL_CHECK(dnnl_memory_create(&hardtanh_dst, &md, hardtanh_engine, DNNL_MEMORY_NONE));
    hardtanh_n = n;
    hardtanh_k_min_val = min_val;
    hardtanh_k_max_val = max_val;
}

void hardtanh(const float *x, float *y, int64_t n, float min_val, float max_val)
{
    if (n != hardtanh_n || min_val != hardtanh_k_min_val || max_val != hardtanh_k_max_val)
        hardtanh_setup(n, min_val, max_val);
    HARDTANH_DNNL_CHECK(dnnl_memory_set_data_handle(hardtanh_src, (void *)x));
    HARDTANH_DNNL_CHECK(dnnl_memory_set_data_handle(hardtanh_dst, y));
    for (int s = 0; s < HARDTANH_NSTEPS; s++) {
        dnnl_exec_arg_t args[2] = {
            {DNNL_ARG_SRC, s == 0 ? hardtanh_src : hardtanh_dst},
            {DNNL_ARG_DST, hardtanh_dst}};
        HARDTANH_DNNL_CHECK(dnnl_primitive_execute(hardtanh_prim[s], hardtanh_stream, 2, args));
    }
    HARDTANH_DNNL_CHECK(dnnl_stream_wait(hardtanh_stream));
}
