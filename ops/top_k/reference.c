/*
 * top_k — trusted reference, per row: the k largest values in descending
 * order and their column indices, ties broken by smaller index first.
 *
 * Insertion into a sorted list of at most k (value, index) pairs while
 * scanning the row left to right. A later element never beats an equal
 * earlier one (same value, larger index), so an element enters only if it
 * is strictly larger than the current k-th value, or the list is not yet
 * full; it is inserted after every kept element with a value >= its own.
 * The outputs double as the list. Exact.
 */
#include <stdint.h>

void top_k(const float *x, float *values, int64_t *indices, int64_t rows,
           int64_t cols, int64_t k)
{
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * cols;
        float *v = values + r * k;
        int64_t *ix = indices + r * k;
        int64_t len = 0;
        for (int64_t j = 0; j < cols; j++) {
            float xv = xr[j];
            if (len == k && !(xv > v[k - 1]))
                continue;
            int64_t pos = len < k ? len : k - 1;
            while (pos > 0 && v[pos - 1] < xv) {
                v[pos] = v[pos - 1];
                ix[pos] = ix[pos - 1];
                pos--;
            }
            v[pos] = xv;
            ix[pos] = j;
            if (len < k)
                len++;
        }
    }
}
