/*
 * amin — vendor baseline: oneDNN (2.6) reduction primitive, algorithm
 * reduction_min, reducing axis 1 of a row-major 2-D f32 tensor
 * [rows x cols] (format tag ab) into [rows x 1], on the CPU engine. The
 * primitive, its caching and the cols == 1 copy are the shared helper
 * ops/_vendor/dnnl_reduce.h.
 */
#define KV_NAME "amin"
#include "../_vendor/dnnl_reduce.h"

void amin(const float *x, float *y, int64_t rows, int64_t cols)
{
    kv_reduce_rows(dnnl_reduction_min, x, y, rows, cols);
}
