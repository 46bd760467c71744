/*
 * unsorted_segment_sum — trusted reference.
 *
 *   y[s][j] = sum_{i : seg[i] == s} data[i][j],  0 for empty segments
 *
 * Accumulates in a double scratch matrix (one pass over the rows in
 * order), then converts; the only fp32 rounding is the final conversion.
 */
#include <stdint.h>
#include <stdlib.h>

void unsorted_segment_sum(const float *data, const int64_t *seg, float *y,
                          int64_t n, int64_t d, int64_t nseg)
{
    double *acc = calloc((size_t)(nseg * d), sizeof(double));
    if (!acc)
        abort();
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < d; j++)
            acc[seg[i] * d + j] += (double)data[i * d + j];
    for (int64_t t = 0; t < nseg * d; t++)
        y[t] = (float)acc[t];
    free(acc);
}
