/*
 * log_softmax — CUDA vendor baseline: cuDNN cudnnSoftmaxForward (log).
 *
 * Trusted host code: log_softmax() receives device pointers and enqueues
 * one cuDNN softmax on the default stream with CUDNN_SOFTMAX_LOG (the log
 * of the softmax, computed like CUDNN_SOFTMAX_ACCURATE with the row
 * maximum subtracted, so it does not overflow) in
 * CUDNN_SOFTMAX_MODE_INSTANCE over a fp32 NCHW tensor [rows, cols, 1, 1],
 * i.e. over the cols of each row. The handle is created once per process
 * and the tensor descriptor is cached for the last (rows, cols) seen. Any
 * cuDNN error aborts with a message: a baseline must never silently
 * produce garbage. extern "C" keeps the C symbol name.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cudnn.h>

static cudnnHandle_t log_softmax_handle;
static cudnnTensorDescriptor_t log_softmax_desc;
static int64_t log_softmax_rows = -1, log_softmax_cols = -1;

static void log_softmax_check(cudnnStatus_t st, const char *what)
{
    if (st != CUDNN_STATUS_SUCCESS) {
        fprintf(stderr, "log_softmax vendor: %s failed (%s)\n", what, cudnnGetErrorString(st));
        abort();
    }
}

extern "C" void log_softmax(const float *x, float *y, int64_t rows, int64_t cols)
{
    const float one = 1.0f, zero = 0.0f;

    if (!log_softmax_handle) {
        log_softmax_check(cudnnCreate(&log_softmax_handle), "cudnnCreate");
        log_softmax_check(cudnnCreateTensorDescriptor(&log_softmax_desc),
                          "cudnnCreateTensorDescriptor");
    }
    if (rows != log_softmax_rows || cols != log_softmax_cols) {
        log_softmax_check(cudnnSetTensor4dDescriptor(log_softmax_desc, CUDNN_TENSOR_NCHW,
                                                     CUDNN_DATA_FLOAT, (int)rows, (int)cols, 1, 1),
                          "cudnnSetTensor4dDescriptor");
        log_softmax_rows = rows;
        log_softmax_cols = cols;
    }
    log_softmax_check(cudnnSoftmaxForward(log_softmax_handle, CUDNN_SOFTMAX_LOG,
                                          CUDNN_SOFTMAX_MODE_INSTANCE, &one, log_softmax_desc,
                                          x, &zero, log_softmax_desc, y),
                      "cudnnSoftmaxForward");
}
