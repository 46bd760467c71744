/*
 * exp_op — vendor baseline: oneDNN (2.6) eltwise exp, forward_inference,
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

#define EXP_OP_DNNL_CHECK(call)                                              \
    do {                                                                     \
        dnnl_status_t st_ = (call);                                          \
        if (st_ != dnnl_success) {                                           \
            fprintf(stderr, "exp_op vendor: %s failed (status %d)\n",        \
                    #call, (int)st_);                                        \
            abort();                                                         \
        }                                                                    \
    } while (0)

#define EXP_OP_NSTEPS 1

static dnnl_engine_t exp_op_engine;
static dnnl_stream_t exp_op_stream;
static dnnl_primitive_t exp_op_prim[EXP_OP_NSTEPS];
static dnnl_memory_t exp_op_src, exp_op_dst;
static int64_t exp_op_n = -1;

static dnnl_primitive_t exp_op_make(const dnnl_memory_desc_t *md,
                                   dnnl_alg_kind_t alg, float alpha, float beta)
{
    dnnl_eltwise_desc_t desc;
    EXP_OP_DNNL_CHECK(dnnl_eltwise_forward_desc_init(
        &desc, dnnl_forward_inference, alg, md, alpha, beta));
    dnnl_primitive_desc_t pd;
    dnnl_primitive_t prim;
    EXP_OP_DNNL_CHECK(dnnl_primitive_desc_create(&pd, &desc, NULL, exp_op_engine, NULL));
    EXP_OP_DNNL_CHECK(dnnl_primitive_create(&prim, pd));
    dnnl_primitive_desc_destroy(pd);
    return prim;
}

static void exp_op_setup(int64_t n)
{
    if (!exp_op_engine) {
        EXP_OP_DNNL_CHECK(dnnl_engine_create(&exp_op_engine, dnnl_cpu, 0));
        EXP_OP_DNNL_CHECK(dnnl_stream_create(&exp_op_stream, exp_op_engine,
                                             dnnl_stream_default_flags));
    }
    if (exp_op_prim[0]) {
        for (int s = 0; s < EXP_OP_NSTEPS; s++)
            dnnl_primitive_destroy(exp_op_prim[s]);
        dnnl_memory_destroy(exp_op_src);
        dnnl_memory_destroy(exp_op_dst);
        exp_op_prim[0] = NULL;
    }
    dnnl_dims_t dims = {n};
    dnnl_memory_desc_t md;
    EXP_OP_DNNL_CHECK(dnnl_memory_desc_init_by_tag(&md, 1, dims, dnnl_f32, dnnl_a));
    exp_op_prim[0] = exp_op_make(&md, dnnl_eltwise_exp, 0.0f, 0.0f);
    EXP_OP_DNNL_CHECK(dnnl_memory_create(&exp_op_src, &md, exp_op_engine, DNNL_MEMORY_NONE));
    EXP_OP_DNNL_CHECK(dnnl_memory_create(&exp_op_dst, &md, exp_op_engine, DNNL_MEMORY_NONE));
    exp_op_n = n;
}

void exp_op(const float *x, float *y, int64_t n)
{
    if (n != exp_op_n)
        exp_op_setup(n);
    EXP_OP_DNNL_CHECK(dnnl_memory_set_data_handle(exp_op_src, (void *)x));
    EXP_OP_DNNL_CHECK(dnnl_memory_set_data_handle(exp_op_dst, y));
    for (int s = 0; s < EXP_OP_NSTEPS; s++) {
        dnnl_exec_arg_t args[2] = {
            {DNNL_ARG_SRC, s == 0 ? exp_op_src : exp_op_dst},
            {DNNL_ARG_DST, exp_op_dst}};
        EXP_OP_DNNL_CHECK(dnnl_primitive_execute(exp_op_prim[s], exp_op_stream, 2, args));
    }
    EXP_OP_DNNL_CHECK(dnnl_stream_wait(exp_op_stream));
}
