/*
 * matmul_tb — CUDA vendor baseline: cuBLAS cublasSgemm with B transposed.
 *
 * Trusted host code: matmul_tb() receives device pointers and enqueues
 * one SGEMM on the default stream. cuBLAS is column-major: the row-major
 * a [m x k] is the column-major A^T (k x m, leading dimension k) and the
 * row-major b [n x k] the column-major B^T (k x n, leading dimension k).
 * The row-major c = a * b^T is the column-major C^T = B * A^T (n x m,
 * leading dimension n), i.e. op(b) = transpose, op(a) = none. The handle
 * is created once per process and uses CUBLAS_DEFAULT_MATH (fp32, no
 * TF32). Any cuBLAS error aborts with a message. extern "C" keeps the C
 * symbol name.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cublas_v2.h>

static cublasHandle_t matmul_tb_handle;

static void matmul_tb_check(cublasStatus_t st, const char *what)
{
    if (st != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "matmul_tb vendor: %s failed (%s)\n", what, cublasGetStatusString(st));
        abort();
    }
}

extern "C" void matmul_tb(const float *a, const float *b, float *c, int64_t m, int64_t n,
                          int64_t k)
{
    const float one = 1.0f, zero = 0.0f;

    if (!matmul_tb_handle) {
        matmul_tb_check(cublasCreate(&matmul_tb_handle), "cublasCreate");
        matmul_tb_check(cublasSetMathMode(matmul_tb_handle, CUBLAS_DEFAULT_MATH),
                        "cublasSetMathMode");
    }
    matmul_tb_check(cublasSgemm(matmul_tb_handle, CUBLAS_OP_T, CUBLAS_OP_N, (int)n, (int)m,
                                (int)k, &one, b, (int)k, a, (int)k, &zero, c, (int)n),
                    "cublasSgemm");
}
