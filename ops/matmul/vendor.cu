/*
 * matmul — CUDA vendor baseline: cuBLAS cublasSgemm.
 *
 * Trusted host code: matmul() receives device pointers and enqueues one
 * SGEMM on the default stream. cuBLAS is column-major, so the row-major
 * product C[m x n] = A[m x k] * B[k x n] is computed as its transpose
 * C^T = B^T * A^T: a column-major view of the row-major buffers, no
 * transposes, dimensions (n, m, k) and leading dimensions n, k, n. The
 * handle is created once per process (its setup is expensive) and uses
 * CUBLAS_DEFAULT_MATH, so fp32 stays fp32 (no TF32 tensor-core
 * rounding). Any cuBLAS error aborts with a message: a baseline must
 * never silently produce garbage. extern "C" keeps the C symbol name.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cublas_v2.h>

static cublasHandle_t matmul_handle;

static void matmul_check(cublasStatus_t st, const char *what)
{
    if (st != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "matmul vendor: %s failed (%s)\n", what, cublasGetStatusString(st));
        abort();
    }
}

extern "C" void matmul(const float *a, const float *b, float *c, int64_t m, int64_t n,
                       int64_t k)
{
    const float one = 1.0f, zero = 0.0f;

    if (!matmul_handle) {
        matmul_check(cublasCreate(&matmul_handle), "cublasCreate");
        matmul_check(cublasSetMathMode(matmul_handle, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
    }
    matmul_check(cublasSgemm(matmul_handle, CUBLAS_OP_N, CUBLAS_OP_N, (int)n, (int)m, (int)k,
                             &one, b, (int)n, a, (int)k, &zero, c, (int)n),
                 "cublasSgemm");
}
