/*
 * cross_entropy — vendor baseline: oneDNN (2.6) logsoftmax, then a C loop.
 *
 *   1. logsoftmax, forward_inference, axis 1, on the [rows x classes]
 *      logits: L = log_softmax(logits) into a cached scratch buffer;
 *   2. y = -(1/rows) * sum_r L[r][target[r]]   (C, double sum of rows
 *      values; oneDNN 2.6 has no gather primitive).
 *
 * All of the per-element work (max, exp, sum, log) is in the oneDNN
 * primitive; the C part touches one value per row. The engine, stream,
 * primitive, memory objects and scratch are cached for the last
 * (rows, classes) seen. Any oneDNN error aborts with a message.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <oneapi/dnnl/dnnl.h>

#define CE_DNNL_CHECK(call)                                                    \
    do {                                                                       \
        dnnl_status_t st_ = (call);                                            \
        if (st_ != dnnl_success) {                                             \
            fprintf(stderr, "cross_entropy vendor: %s failed (status %d)\n",   \
                    #call, (int)st_);                                          \
            abort();                                                           \
        }                                                                      \
    } while (0)

static dnnl_engine_t ce_engine;
static dnnl_stream_t ce_stream;
static dnnl_primitive_t ce_lsm;
static dnnl_memory_t ce_x, ce_l;
static float *ce_buf;
static int64_t ce_rows = -1, ce_classes = -1;

static void ce_setup(int64_t rows, int64_t classes)
{
    if (!ce_engine) {
        CE_DNNL_CHECK(dnnl_engine_create(&ce_engine, dnnl_cpu, 0));
        CE_DNNL_CHECK(dnnl_stream_create(&ce_stream, ce_engine,
                                         dnnl_stream_default_flags));
    }
    if (ce_lsm) {
        dnnl_primitive_destroy(ce_lsm);
        dnnl_memory_destroy(ce_x);
        dnnl_memory_destroy(ce_l);
        free(ce_buf);
    }
    dnnl_dims_t xdims = {rows, classes};
    dnnl_memory_desc_t xmd;
    CE_DNNL_CHECK(dnnl_memory_desc_init_by_tag(&xmd, 2, xdims, dnnl_f32, dnnl_ab));
    dnnl_logsoftmax_desc_t sdesc;
    CE_DNNL_CHECK(dnnl_logsoftmax_forward_desc_init(&sdesc, dnnl_forward_inference,
                                                    &xmd, 1));
    dnnl_primitive_desc_t pd;
    CE_DNNL_CHECK(dnnl_primitive_desc_create(&pd, &sdesc, NULL, ce_engine, NULL));
    CE_DNNL_CHECK(dnnl_primitive_create(&ce_lsm, pd));
    dnnl_primitive_desc_destroy(pd);
    ce_buf = malloc((size_t)(rows * classes) * sizeof(float));
    if (!ce_buf) {
        fprintf(stderr, "cross_entropy vendor: out of memory\n");
        abort();
    }
    CE_DNNL_CHECK(dnnl_memory_create(&ce_x, &xmd, ce_engine, DNNL_MEMORY_NONE));
    CE_DNNL_CHECK(dnnl_memory_create(&ce_l, &xmd, ce_engine, ce_buf));
    ce_rows = rows;
    ce_classes = classes;
}

void cross_entropy(const float *logits, const int64_t *target, float *y,
                   int64_t rows, int64_t classes)
{
    if (rows != ce_rows || classes != ce_classes)
        ce_setup(rows, classes);
    CE_DNNL_CHECK(dnnl_memory_set_data_handle(ce_x, (void *)logits));
    dnnl_exec_arg_t args[2] = {{DNNL_ARG_SRC, ce_x}, {DNNL_ARG_DST, ce_l}};
    CE_DNNL_CHECK(dnnl_primitive_execute(ce_lsm, ce_stream, 2, args));
    CE_DNNL_CHECK(dnnl_stream_wait(ce_stream));
    double s = 0.0;
    for (int64_t r = 0; r < rows; r++)
        s += ce_buf[r * classes + target[r]];
    y[0] = (float)(-s / (double)rows);
}
