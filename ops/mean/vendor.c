/*
 * mean — vendor baseline: oneDNN (2.6) reduction primitive, algorithm
 * reduction_mean, reducing axis 1 of a row-major 2-D f32 tensor
 * [rows x cols] (format tag ab) into [rows x 1], on the CPU engine. The
 * primitive, its caching and the cols == 1 copy are the shared helper
 * ops/_vendor/dnnl_reduce.h.
 */
#define KV_NAME "mean"
#include "../_vendor/dnnl_reduce.h"

void mean(const float *x, float *y, int64_t rows, int64_t cols)
{
    kv_reduce_rows(dnnl_reduction_mean, x, y, rows, cols);
}
