/* ident — reference: a plain copy (an operator the screen must flag). */
#include <stdint.h>

void ident(const float *x, float *y, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        y[i] = x[i];
}
