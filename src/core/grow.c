/*
 * Checked array growth, the one way the library grows an array (the
 * out-of-memory policy is stated in kope/core.h). Capacity doubles from a
 * small start, the byte size is checked for overflow, new elements are
 * zeroed, and a failure leaves the caller's array and capacity as they
 * were, so the caller can release what it holds and return KOPE_ENOMEM.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "kope/core.h"

#define KOPE_GROW_MIN 16

/* The capacity to grow to: doubled until it holds need; 0 on overflow. */
static size_t grow_cap(size_t cap, size_t need, size_t elem)
{
  size_t c = cap ? cap : KOPE_GROW_MIN;

  while (c < need) {
    if (c > SIZE_MAX / 2)
      return need;
    c *= 2;
  }
  return c > SIZE_MAX / elem ? 0 : c;
}

int kope_grow(void *pp, size_t *cap, size_t need, size_t elem)
{
  void *old, *p;
  size_t c;

  if (need <= *cap)
    return KOPE_OK;
  if (!elem || !(c = grow_cap(*cap, need, elem)))
    return KOPE_ENOMEM;
  memcpy(&old, pp, sizeof old);
  if (!(p = realloc(old, c * elem)))
    return KOPE_ENOMEM;
  memset((char *)p + *cap * elem, 0, (c - *cap) * elem);
  memcpy(pp, &p, sizeof p);
  *cap = c;
  return KOPE_OK;
}
