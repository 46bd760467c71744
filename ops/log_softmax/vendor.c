/*
 * log_softmax — vendor baseline: oneDNN logsoftmax primitive,
 * forward_inference, along axis 1 of a row-major 2-D f32 tensor
 * [rows x cols] (format tag ab), on the CPU engine.
 *
 * Creating a oneDNN primitive is expensive (it may JIT-compile code), so the
 * engine and stream are created once and the primitive plus its two memory
 * objects are cached for the last (rows, cols) seen; a call with the same
 * shape only rebinds the data pointers and executes. Any oneDNN error aborts
 * with a message: a baseline must never silently produce garbage.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <oneapi/dnnl/dnnl.h>

#define LOG_SOFTMAX_DNNL_CHECK(call)                                              \
    do {                                                                      \
        dnnl_status_t st_ = (call);                                           \
        if (st_ != dnnl_success) {                                            \
            fprintf(stderr, "log_softmax vendor: %s failed (status %d)\n", #call, \
                    (int)st_);                                                \
            abort();                                                          \
        }                                                                     \
    } while (0)

static dnnl_engine_t log_softmax_engine;
static dnnl_stream_t log_softmax_stream;
static dnnl_primitive_t log_softmax_prim;
static dnnl_memory_t log_softmax_src, log_softmax_dst;
static int64_t log_softmax_rows = -1, log_softmax_cols = -1;

static void log_softmax_setup(int64_t rows, int64_t cols)
{
    if (!log_softmax_engine) {
        LOG_SOFTMAX_DNNL_CHECK(dnnl_engine_create(&log_softmax_engine, dnnl_cpu, 0));
        LOG_SOFTMAX_DNNL_CHECK(dnnl_stream_create(&log_softmax_stream, log_softmax_engine,
                                              dnnl_stream_default_flags));
    }
    if (log_softmax_prim) {
        dnnl_primitive_destroy(log_softmax_prim);
        dnnl_memory_destroy(log_softmax_src);
        dnnl_memory_destroy(log_softmax_dst);
        log_softmax_prim = NULL;
    }
    dnnl_dims_t dims = {rows, cols};
    dnnl_memory_desc_t md;
    LOG_SOFTMAX_DNNL_CHECK(dnnl_memory_desc_init_by_tag(&md, 2, dims, dnnl_f32, dnnl_ab));
    dnnl_logsoftmax_desc_t desc;
    LOG_SOFTMAX_DNNL_CHECK(dnnl_logsoftmax_forward_desc_init(&desc, dnnl_forward_inference, &md, 1));
    dnnl_primitive_desc_t pd;
    LOG_SOFTMAX_DNNL_CHECK(dnnl_primitive_desc_create(&pd, &desc, NULL, log_softmax_engine, NULL));
    LOG_SOFTMAX_DNNL_CHECK(dnnl_primitive_create(&log_softmax_prim, pd));
    dnnl_primitive_desc_destroy(pd);
    LOG_SOFTMAX_DNNL_CHECK(dnnl_memory_create(&log_softmax_src, &md, log_softmax_engine, DNNL_MEMORY_NONE));
    LOG_SOFTMAX_DNNL_CHECK(dnnl_memory_create(&log_softmax_dst, &md, log_softmax_engine, DNNL_MEMORY_NONE));
    log_softmax_rows = rows;
    log_softmax_cols = cols;
}

void log_softmax(const float *x, float *y, int64_t rows, int64_t cols)
{
    if (rows != log_softmax_rows || cols != log_softmax_cols)
        log_softmax_setup(rows, cols);
    LOG_SOFTMAX_DNNL_CHECK(dnnl_memory_set_data_handle(log_softmax_src, (void *)x));
    LOG_SOFTMAX_DNNL_CHECK(dnnl_memory_set_data_handle(log_softmax_dst, y));
    dnnl_exec_arg_t args[2] = {{DNNL_ARG_SRC, log_softmax_src}, {DNNL_ARG_DST, log_softmax_dst}};
    LOG_SOFTMAX_DNNL_CHECK(dnnl_primitive_execute(log_softmax_prim, log_softmax_stream, 2, args));
    LOG_SOFTMAX_DNNL_CHECK(dnnl_stream_wait(log_softmax_stream));
}
