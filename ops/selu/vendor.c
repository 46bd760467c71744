/*
 * selu — vendor baseline: oneDNN (2.6) eltwise elu then linear, forward_inference,
 * on a 1-D f32 tensor of n elements, on the CPU engine.
 * The first primitive reads x and writes y; the next ones run in place on
 * y (separate primitives: in oneDNN 2.6 an eltwise primitive with eltwise
 * post-ops only has the slow reference implementation, while each plain
 * eltwise primitive is JIT-compiled).
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

#define SELU_DNNL_CHECK(call)                                                \
    do {                                                                     \
        dnnl_status_t st_ = (call);                                          \
        if (st_ != dnnl_success) {                                           \
            fprintf(stderr, "selu vendor: %s failed (status %d)\n",          \
                    #call, (int)st_);                                        \
            abort();                                                         \
        }                                                                    \
    } while (0)

#define SELU_NSTEPS 2

static dnnl_engine_t selu_engine;
static dnnl_stream_t selu_stream;
static dnnl_primitive_t selu_prim[SELU_NSTEPS];
static dnnl_memory_t selu_src, selu_dst;
static int64_t selu_n = -1;

static dnnl_primitive_t selu_make(const dnnl_memory_desc_t *md,
                                 dnnl_alg_kind_t alg, float alpha, float beta)
{
    dnnl_eltwise_desc_t desc;
    SELU_DNNL_CHECK(dnnl_eltwise_forward_desc_init(
        &desc, dnnl_forward_inference, alg, md, alpha, beta));
    dnnl_primitive_desc_t pd;
    dnnl_primitive_t prim;
    SELU_DNNL_CHECK(dnnl_primitive_desc_create(&pd, &desc, NULL, selu_engine, NULL));
    SELU_DNNL_CHECK(dnnl_primitive_create(&prim, pd));
    dnnl_primitive_desc_destroy(pd);
    return prim;
}

static void selu_setup(int64_t n)
{
    if (!selu_engine) {
        SELU_DNNL_CHECK(dnnl_engine_create(&selu_engine, dnnl_cpu, 0));
        SELU_DNNL_CHECK(dnnl_stream_create(&selu_stream, selu_engine,
                                           dnnl_stream_default_flags));
    }
    if (selu_prim[0]) {
        for (int s = 0; s < SELU_NSTEPS; s++)
            dnnl_primitive_destroy(selu_prim[s]);
        dnnl_memory_destroy(selu_src);
        dnnl_memory_destroy(selu_dst);
        selu_prim[0] = NULL;
    }
    dnnl_dims_t dims = {n};
    dnnl_memory_desc_t md;
    SELU_DNNL_CHECK(dnnl_memory_desc_init_by_tag(&md, 1, dims, dnnl_f32, dnnl_a));
    selu_prim[0] = selu_make(&md, dnnl_eltwise_elu, 1.67326324235437728f, 0.0f);
    selu_prim[1] = selu_make(&md, dnnl_eltwise_linear, 1.05070098735548049f, 0.0f);
    SELU_DNNL_CHECK(dnnl_memory_create(&selu_src, &md, selu_engine, DNNL_MEMORY_NONE));
    SELU_DNNL_CHECK(dnnl_memory_create(&selu_dst, &md, selu_engine, DNNL_MEMORY_NONE));
    selu_n = n;
}

void selu(const float *x, float *y, int64_t n)
{
    if (n != selu_n)
        selu_setup(n);
    SELU_DNNL_CHECK(dnnl_memory_set_data_handle(selu_src, (void *)x));
    SELU_DNNL_CHECK(dnnl_memory_set_data_handle(selu_dst, y));
    for (int s = 0; s < SELU_NSTEPS; s++) {
        dnnl_exec_arg_t args[2] = {
            {DNNL_ARG_SRC, s == 0 ? selu_src : selu_dst},
            {DNNL_ARG_DST, selu_dst}};
        SELU_DNNL_CHECK(dnnl_primitive_execute(selu_prim[s], selu_stream, 2, args));
    }
    SELU_DNNL_CHECK(dnnl_stream_wait(selu_stream));
}
