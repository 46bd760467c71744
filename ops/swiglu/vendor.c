/*
 * swiglu — vendor baseline built from oneDNN (2.6) primitives:
 *
 *   1. reorder: the gate half of x (a [rows x cols] view with row stride
 *      2*cols) into y, dense;
 *   2. eltwise_swish (alpha 1) in place on y: y = silu(gate);
 *   3. reorder: the up half of x (the same strided view, cols further on)
 *      into a dense [rows x cols] scratch buffer u;
 *   4. binary_mul in place: y = y * u.
 *
 * Why the copies: in oneDNN 2.6 eltwise and binary primitives on a strided
 * (non-dense) view only have the slow reference implementation, while
 * these reorders and the dense eltwise and binary primitives have fast
 * ones. The extra traffic is a real cost of expressing SwiGLU in 2.6.
 *
 * The engine and stream are created once; primitives, memory objects and
 * the scratch buffer are cached for the last (rows, cols) seen, so a
 * repeated call only rebinds the data pointers and executes. Any oneDNN
 * error aborts with a message: a baseline must never silently produce
 * garbage.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <oneapi/dnnl/dnnl.h>

#define SWIGLU_DNNL_CHECK(call)                                              \
    do {                                                                     \
        dnnl_status_t st_ = (call);                                          \
        if (st_ != dnnl_success) {                                           \
            fprintf(stderr, "swiglu vendor: %s failed (status %d)\n", #call, \
                    (int)st_);                                               \
            abort();                                                         \
        }                                                                    \
    } while (0)

static dnnl_engine_t sg_engine;
static dnnl_stream_t sg_stream;
static dnnl_primitive_t sg_copy, sg_swish, sg_mul;
static dnnl_memory_t sg_gate, sg_up, sg_y, sg_u;
static float *sg_u_buf;
static int64_t sg_rows = -1, sg_cols = -1;

static void sg_release(void)
{
    if (!sg_mul)
        return;
    dnnl_primitive_destroy(sg_copy);
    dnnl_primitive_destroy(sg_swish);
    dnnl_primitive_destroy(sg_mul);
    dnnl_memory_destroy(sg_gate);
    dnnl_memory_destroy(sg_up);
    dnnl_memory_destroy(sg_y);
    dnnl_memory_destroy(sg_u);
    free(sg_u_buf);
    sg_copy = sg_swish = sg_mul = NULL;
    sg_u_buf = NULL;
}

static dnnl_primitive_t sg_make(const_dnnl_op_desc_t desc)
{
    dnnl_primitive_desc_t pd;
    dnnl_primitive_t prim;
    SWIGLU_DNNL_CHECK(dnnl_primitive_desc_create(&pd, desc, NULL, sg_engine, NULL));
    SWIGLU_DNNL_CHECK(dnnl_primitive_create(&prim, pd));
    dnnl_primitive_desc_destroy(pd);
    return prim;
}

static void sg_setup(int64_t rows, int64_t cols)
{
    if (!sg_engine) {
        SWIGLU_DNNL_CHECK(dnnl_engine_create(&sg_engine, dnnl_cpu, 0));
        SWIGLU_DNNL_CHECK(dnnl_stream_create(&sg_stream, sg_engine,
                                             dnnl_stream_default_flags));
    }
    sg_release();
    dnnl_dims_t dims = {rows, cols}, strides = {2 * cols, 1};
    dnnl_memory_desc_t md_half, md_dense;
    SWIGLU_DNNL_CHECK(dnnl_memory_desc_init_by_strides(&md_half, 2, dims, dnnl_f32, strides));
    SWIGLU_DNNL_CHECK(dnnl_memory_desc_init_by_tag(&md_dense, 2, dims, dnnl_f32, dnnl_ab));

    dnnl_primitive_desc_t pd;
    SWIGLU_DNNL_CHECK(dnnl_reorder_primitive_desc_create(&pd, &md_half, sg_engine,
                                                         &md_dense, sg_engine, NULL));
    SWIGLU_DNNL_CHECK(dnnl_primitive_create(&sg_copy, pd));
    dnnl_primitive_desc_destroy(pd);

    dnnl_eltwise_desc_t ed;
    SWIGLU_DNNL_CHECK(dnnl_eltwise_forward_desc_init(&ed, dnnl_forward_inference,
                                                     dnnl_eltwise_swish, &md_dense,
                                                     1.0f, 0.0f));
    sg_swish = sg_make(&ed);
    dnnl_binary_desc_t bd;
    SWIGLU_DNNL_CHECK(dnnl_binary_desc_init(&bd, dnnl_binary_mul, &md_dense,
                                            &md_dense, &md_dense));
    sg_mul = sg_make(&bd);

    sg_u_buf = malloc((size_t)(rows * cols) * sizeof(float));
    if (!sg_u_buf) {
        fprintf(stderr, "swiglu vendor: out of memory\n");
        abort();
    }
    SWIGLU_DNNL_CHECK(dnnl_memory_create(&sg_gate, &md_half, sg_engine, DNNL_MEMORY_NONE));
    SWIGLU_DNNL_CHECK(dnnl_memory_create(&sg_up, &md_half, sg_engine, DNNL_MEMORY_NONE));
    SWIGLU_DNNL_CHECK(dnnl_memory_create(&sg_y, &md_dense, sg_engine, DNNL_MEMORY_NONE));
    SWIGLU_DNNL_CHECK(dnnl_memory_create(&sg_u, &md_dense, sg_engine, sg_u_buf));
    sg_rows = rows;
    sg_cols = cols;
}

static void sg_exec(dnnl_primitive_t prim, int nargs, const dnnl_exec_arg_t *args)
{
    SWIGLU_DNNL_CHECK(dnnl_primitive_execute(prim, sg_stream, nargs, args));
}

void swiglu(const float *x, float *y, int64_t rows, int64_t cols)
{
    if (rows != sg_rows || cols != sg_cols)
        sg_setup(rows, cols);
    SWIGLU_DNNL_CHECK(dnnl_memory_set_data_handle(sg_gate, (void *)x));
    SWIGLU_DNNL_CHECK(dnnl_memory_set_data_handle(sg_up, (void *)(x + cols)));
    SWIGLU_DNNL_CHECK(dnnl_memory_set_data_handle(sg_y, y));
    dnnl_exec_arg_t gate_args[2] = {{DNNL_ARG_FROM, sg_gate}, {DNNL_ARG_TO, sg_y}};
    dnnl_exec_arg_t swish_args[2] = {{DNNL_ARG_SRC, sg_y}, {DNNL_ARG_DST, sg_y}};
    dnnl_exec_arg_t up_args[2] = {{DNNL_ARG_FROM, sg_up}, {DNNL_ARG_TO, sg_u}};
    dnnl_exec_arg_t mul_args[3] = {{DNNL_ARG_SRC_0, sg_y},
                                   {DNNL_ARG_SRC_1, sg_u},
                                   {DNNL_ARG_DST, sg_y}};
    sg_exec(sg_copy, 2, gate_args);
    sg_exec(sg_swish, 2, swish_args);
    sg_exec(sg_copy, 2, up_args);
    sg_exec(sg_mul, 3, mul_args);
    SWIGLU_DNNL_CHECK(dnnl_stream_wait(sg_stream));
}
