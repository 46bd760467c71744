/*
 * matvec — CUDA vendor baseline: cuBLAS cublasSgemv.
 *
 * Trusted host code: matvec() receives device pointers and enqueues one
 * SGEMV on the default stream. The row-major a [m x k] is the
 * column-major matrix A^T (k rows, m columns, leading dimension k), so
 * y = a * x is y = (A^T)^T * x: cublasSgemv with CUBLAS_OP_T on a k x m
 * matrix. The handle is created once per process and uses
 * CUBLAS_DEFAULT_MATH (fp32). Any cuBLAS error aborts with a message.
 * extern "C" keeps the C symbol name.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cublas_v2.h>

static cublasHandle_t matvec_handle;

static void matvec_check(cublasStatus_t st, const char *what)
{
    if (st != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "matvec vendor: %s failed (%s)\n", what, cublasGetStatusString(st));
        abort();
    }
}

extern "C" void matvec(const float *a, const float *x, float *y, int64_t m, int64_t k)
{
    const float one = 1.0f, zero = 0.0f;

    if (!matvec_handle) {
        matvec_check(cublasCreate(&matvec_handle), "cublasCreate");
        matvec_check(cublasSetMathMode(matvec_handle, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
    }
    matvec_check(cublasSgemv(matvec_handle, CUBLAS_OP_T, (int)k, (int)m, &one, a, (int)k, x, 1,
                             &zero, y, 1),
                 "cublasSgemv");
}
