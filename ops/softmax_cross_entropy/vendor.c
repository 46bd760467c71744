/*
 * softmax_cross_entropy — vendor baseline from three oneDNN (2.6)
 * primitives on [rows x classes] tensors:
 *
 *   1. logsoftmax, forward_inference, axis 1: L = log_softmax(logits)
 *      into a cached scratch buffer;
 *   2. binary_mul(L, labels) with an eltwise_linear (alpha -1) post-op,
 *      in place: L = -labels * L;
 *   3. reduction_sum over axis 1: loss[r] = sum_j L[r][j].
 *
 * oneDNN's reduction rejects equal source and destination shapes, so for
 * classes == 1 step 2 writes the loss directly and step 3 is skipped.
 * The engine and stream are created once; primitives, memory objects and
 * the scratch are cached for the last (rows, classes) seen, so a call
 * only rebinds pointers and executes. Any oneDNN error aborts with a
 * message.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <oneapi/dnnl/dnnl.h>

#define SCE_DNNL_CHECK(call)                                                   \
    do {                                                                       \
        dnnl_status_t st_ = (call);                                            \
        if (st_ != dnnl_success) {                                             \
            fprintf(stderr, "softmax_cross_entropy vendor: %s failed (status %d)\n", \
                    #call, (int)st_);                                          \
            abort();                                                           \
        }                                                                      \
    } while (0)

static dnnl_engine_t sce_engine;
static dnnl_stream_t sce_stream;
static dnnl_primitive_t sce_lsm, sce_mul, sce_sum;
static dnnl_memory_t sce_x, sce_lab, sce_l, sce_loss;
static float *sce_buf;
static int64_t sce_rows = -1, sce_classes = -1;

static void sce_release(void)
{
    if (!sce_lsm)
        return;
    dnnl_primitive_destroy(sce_lsm);
    dnnl_primitive_destroy(sce_mul);
    if (sce_sum)
        dnnl_primitive_destroy(sce_sum);
    dnnl_memory_destroy(sce_x);
    dnnl_memory_destroy(sce_lab);
    dnnl_memory_destroy(sce_l);
    dnnl_memory_destroy(sce_loss);
    free(sce_buf);
    sce_lsm = sce_mul = sce_sum = NULL;
    sce_buf = NULL;
}

static dnnl_primitive_t sce_make(const_dnnl_op_desc_t desc,
                                 const_dnnl_primitive_attr_t attr)
{
    dnnl_primitive_desc_t pd;
    dnnl_primitive_t prim;
    SCE_DNNL_CHECK(dnnl_primitive_desc_create(&pd, desc, attr, sce_engine, NULL));
    SCE_DNNL_CHECK(dnnl_primitive_create(&prim, pd));
    dnnl_primitive_desc_destroy(pd);
    return prim;
}

static void sce_setup(int64_t rows, int64_t classes)
{
    if (!sce_engine) {
        SCE_DNNL_CHECK(dnnl_engine_create(&sce_engine, dnnl_cpu, 0));
        SCE_DNNL_CHECK(dnnl_stream_create(&sce_stream, sce_engine,
                                          dnnl_stream_default_flags));
    }
    sce_release();

    dnnl_dims_t xdims = {rows, classes}, ldims = {rows, 1};
    dnnl_memory_desc_t xmd, lmd;
    SCE_DNNL_CHECK(dnnl_memory_desc_init_by_tag(&xmd, 2, xdims, dnnl_f32, dnnl_ab));
    SCE_DNNL_CHECK(dnnl_memory_desc_init_by_tag(&lmd, 2, ldims, dnnl_f32, dnnl_ab));

    dnnl_logsoftmax_desc_t sdesc;
    SCE_DNNL_CHECK(dnnl_logsoftmax_forward_desc_init(&sdesc, dnnl_forward_inference,
                                                     &xmd, 1));
    sce_lsm = sce_make(&sdesc, NULL);

    dnnl_post_ops_t ops;
    dnnl_primitive_attr_t attr;
    SCE_DNNL_CHECK(dnnl_post_ops_create(&ops));
    SCE_DNNL_CHECK(dnnl_post_ops_append_eltwise(ops, 1.0f, dnnl_eltwise_linear,
                                                -1.0f, 0.0f));
    SCE_DNNL_CHECK(dnnl_primitive_attr_create(&attr));
    SCE_DNNL_CHECK(dnnl_primitive_attr_set_post_ops(attr, ops));
    dnnl_binary_desc_t bdesc;
    SCE_DNNL_CHECK(dnnl_binary_desc_init(&bdesc, dnnl_binary_mul, &xmd, &xmd, &xmd));
    sce_mul = sce_make(&bdesc, attr);
    dnnl_primitive_attr_destroy(attr);
    dnnl_post_ops_destroy(ops);

    if (classes > 1) {
        dnnl_reduction_desc_t rdesc;
        SCE_DNNL_CHECK(dnnl_reduction_desc_init(&rdesc, dnnl_reduction_sum, &xmd,
                                                &lmd, 0.0f, 0.0f));
        sce_sum = sce_make(&rdesc, NULL);
    }
    sce_buf = malloc((size_t)(rows * classes) * sizeof(float));
    if (!sce_buf) {
        fprintf(stderr, "softmax_cross_entropy vendor: out of memory\n");
        abort();
    }
    SCE_DNNL_CHECK(dnnl_memory_create(&sce_x, &xmd, sce_engine, DNNL_MEMORY_NONE));
    SCE_DNNL_CHECK(dnnl_memory_create(&sce_lab, &xmd, sce_engine, DNNL_MEMORY_NONE));
    SCE_DNNL_CHECK(dnnl_memory_create(&sce_l, &xmd, sce_engine, sce_buf));
    SCE_DNNL_CHECK(dnnl_memory_create(&sce_loss, &lmd, sce_engine, DNNL_MEMORY_NONE));
    sce_rows = rows;
    sce_classes = classes;
}

void softmax_cross_entropy(const float *logits, const float *labels,
                           float *loss, int64_t rows, int64_t classes)
{
    if (rows != sce_rows || classes != sce_classes)
        sce_setup(rows, classes);
    SCE_DNNL_CHECK(dnnl_memory_set_data_handle(sce_x, (void *)logits));
    SCE_DNNL_CHECK(dnnl_memory_set_data_handle(sce_lab, (void *)labels));
    SCE_DNNL_CHECK(dnnl_memory_set_data_handle(sce_loss, loss));
    dnnl_exec_arg_t sargs[2] = {{DNNL_ARG_SRC, sce_x}, {DNNL_ARG_DST, sce_l}};
    SCE_DNNL_CHECK(dnnl_primitive_execute(sce_lsm, sce_stream, 2, sargs));
    /* [rows x 1] and [rows x classes] coincide when classes == 1. */
    dnnl_exec_arg_t bargs[3] = {{DNNL_ARG_SRC_0, sce_l},
                                {DNNL_ARG_SRC_1, sce_lab},
                                {DNNL_ARG_DST, sce_sum ? sce_l : sce_loss}};
    SCE_DNNL_CHECK(dnnl_primitive_execute(sce_mul, sce_stream, 3, bargs));
    if (sce_sum) {
        dnnl_exec_arg_t rargs[2] = {{DNNL_ARG_SRC, sce_l}, {DNNL_ARG_DST, sce_loss}};
        SCE_DNNL_CHECK(dnnl_primitive_execute(sce_sum, sce_stream, 2, rargs));
    }
    SCE_DNNL_CHECK(dnnl_stream_wait(sce_stream));
}
