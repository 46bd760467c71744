/*
 * softmax — CUDA vendor baseline: cuDNN cudnnSoftmaxForward.
 *
 * Trusted host code: softmax() receives device pointers and enqueues one
 * cuDNN softmax on the default stream, CUDNN_SOFTMAX_ACCURATE (the row
 * maximum is subtracted) in CUDNN_SOFTMAX_MODE_INSTANCE over a fp32 NCHW
 * tensor [rows, cols, 1, 1], i.e. over the cols of each row. The handle
 * is created once per process and the tensor descriptor is cached for the
 * last (rows, cols) seen. Any cuDNN error aborts with a message: a
 * baseline must never silently produce garbage. extern "C" keeps the C
 * symbol name.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cudnn.h>

static cudnnHandle_t softmax_handle;
static cudnnTensorDescriptor_t softmax_desc;
static int64_t softmax_rows = -1, softmax_cols = -1;

static void softmax_check(cudnnStatus_t st, const char *what)
{
    if (st != CUDNN_STATUS_SUCCESS) {
        fprintf(stderr, "softmax vendor: %s failed (%s)\n", what, cudnnGetErrorString(st));
        abort();
    }
}

extern "C" void softmax(const float *x, float *y, int64_t rows, int64_t cols)
{
    const float one = 1.0f, zero = 0.0f;

    if (!softmax_handle) {
        softmax_check(cudnnCreate(&softmax_handle), "cudnnCreate");
        softmax_check(cudnnCreateTensorDescriptor(&softmax_desc), "cudnnCreateTensorDescriptor");
    }
    if (rows != softmax_rows || cols != softmax_cols) {
        softmax_check(cudnnSetTensor4dDescriptor(softmax_desc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT,
                                                 (int)rows, (int)cols, 1, 1),
                      "cudnnSetTensor4dDescriptor");
        softmax_rows = rows;
        softmax_cols = cols;
    }
    softmax_check(cudnnSoftmaxForward(softmax_handle, CUDNN_SOFTMAX_ACCURATE,
                                      CUDNN_SOFTMAX_MODE_INSTANCE, &one, softmax_desc, x, &zero,
                                      softmax_desc, y),
                  "cudnnSoftmaxForward");
}
