/*
 * elu — vendor baseline: oneDNN (2.6) eltwise elu, forward_inference,
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

#define ELU_DNNL_CHECK(call)                                                 \
    do {                                                                     \
        dnnl_status_t st_ = (call);                                          \
        if (st_ != dnnl_success) {                                           \
            fprintf(stderr, "elu vendor: %s failed (status %d)\n",           \
                    #call, (int)st_);                                        \
            abort();                                                         \
        }                                                                    \
    } while (0)

#define ELU_NSTEPS 1

static dnnl_engine_t elu_engine;
static dnnl_stream_t elu_stream;
static dnnl_primitive_t elu_prim[ELU_NSTEPS];
static dnnl_memory_t elu_src, elu_dst;
static int64_t elu_n = -1;
static float elu_k_alpha;

static dnnl_primitive_t elu_make(const dnnl_memory_desc_t *md,
                                dnnl_alg_kind_t alg, float alpha, float beta)
{
    dnnl_eltwise_desc_t desc;
    ELU_DNNL_CHECK(dnnl_eltwise_forward_desc_init(
        &desc, dnnl_forward_inference, alg, md, alpha, beta));
    dnnl_primitive_desc_t pd;
    dnnl_primitive_t prim;
    ELU_DNNL_CHECK(dnnl_primitive_desc_create(&pd, &desc, NULL, elu_engine, NULL));
    ELU_DNNL_CHECK(dnnl_primitive_create(&prim, pd));
    dnnl_primitive_desc_destroy(pd);
    return prim;
}

static void elu_setup(int64_t n, float alpha)
{
    if (!elu_engine) {
        ELU_DNNL_CHECK(dnnl_engine_create(&elu_engine, dnnl_cpu, 0));
        ELU_DNNL_CHECK(dnnl_stream_create(&elu_stream, elu_engine,
                                          dnnl_stream_default_flags));
    }
    if (elu_prim[0]) {
        for (int s = 0; s < ELU_NSTEPS; s++)
            dnnl_primitive_destroy(elu_prim[s]);
        dnnl_memory_destroy(elu_src);
        dnnl_memory_destroy(elu_dst);
        elu_prim[0] = NULL;
    }
    dnnl_dims_t dims = {n};
    dnnl_memory_desc_t md;
    ELU_DNNL_CHECK(dnnl_memory_desc_init_by_tag(&md, 1, dims, dnnl_f32, dnnl_a));
    elu_prim[0] = elu_make(&md, dnnl_eltwise_elu, alpha, 0.0f);
    ELU_DNNL_CHECK(dnnl_memory_create(&elu_src, &md, elu_engine, DNNL_MEMORY_NONE));
    ELU_DNNL_CHECK(dnnl_memory_create(&elu_dst, &md, elu_engine, DNNL_MEMORY_NONE));
    elu_n = n;
    elu_k_alpha = alpha;
}

void elu(const float *x, float *y, int64_t n, float alpha)
{
    if (n != elu_n || alpha != elu_k_alpha)
        elu_setup(n, alpha);
    ELU_DNNL_CHECK(dnnl_memory_set_data_handle(elu_src, (void *)x));
    ELU_DNNL_CHECK(dnnl_memory_set_data_handle(elu_dst, y));
    for (int s = 0; s < ELU_NSTEPS; s++) {
        dnnl_exec_arg_t args[2] = {
            {DNNL_ARG_SRC, s == 0 ? elu_src : elu_dst},
            {DNNL_ARG_DST, elu_dst}};
        ELU_DNNL_CHECK(dnnl_primitive_execute(elu_prim[s], elu_stream, 2, args));
    }
    ELU_DNNL_CHECK(dnnl_stream_wait(elu_stream));
}
