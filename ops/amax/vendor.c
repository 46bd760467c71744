/*
 * amax — vendor baseline: oneDNN (2.6) reduction primitive, algorithm
 * reduction_max, reducing axis 1 of a row-major 2-D f32 tensor
 * [rows x cols] (format tag ab) into [rows x 1], on the CPU engine. The
 * primitive, its caching and the cols == 1 copy are the shared helper
 * ops/_vendor/dnnl_reduce.h.
 */
#define KV_NAME "amax"
#include "../_vendor/dnnl_reduce.h"

void amax(const float *x, float *y, int64_t rows, int64_t cols)
{
    kv_reduce_rows(dnnl_reduction_max, x, y, rows, cols);
}
