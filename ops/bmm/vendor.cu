/*
 * bmm — CUDA vendor baseline: cuBLAS cublasSgemmStridedBatched.
 *
 * Trusted host code: bmm() receives device pointers and enqueues one
 * strided batched SGEMM on the default stream. Per batch t the row-major
 * c[t] = a[t] * b[t] is computed as the column-major C^T = B^T * A^T
 * (dimensions n, m, k; leading dimensions n, k, n), and consecutive
 * matrices are m*k, k*n and m*n floats apart. The handle is created once
 * per process and uses CUBLAS_DEFAULT_MATH (fp32, no TF32). Any cuBLAS
 * error aborts with a message. extern "C" keeps the C symbol name.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cublas_v2.h>

static cublasHandle_t bmm_handle;

static void bmm_check(cublasStatus_t st, const char *what)
{
    if (st != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "bmm vendor: %s failed (%s)\n", what, cublasGetStatusString(st));
        abort();
    }
}

extern "C" void bmm(const float *a, const float *b, float *c, int64_t batch, int64_t m,
                    int64_t n, int64_t k)
{
    const float one = 1.0f, zero = 0.0f;

    if (!bmm_handle) {
        bmm_check(cublasCreate(&bmm_handle), "cublasCreate");
        bmm_check(cublasSetMathMode(bmm_handle, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
    }
    bmm_check(cublasSgemmStridedBatched(bmm_handle, CUBLAS_OP_N, CUBLAS_OP_N, (int)n, (int)m,
                                        (int)k, &one, b, (int)n, (long long)k * n, a, (int)k,
                                        (long long)m * k, &zero, c, (int)n, (long long)m * n,
                                        (int)batch),
              "cublasSgemmStridedBatched");
}
