/*
 * Medians and their confidence intervals, geometric means (see stats.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core/stats.h"

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double *sorted_copy(const double *v, size_t n)
{
  double *c = malloc((n ? n : 1) * sizeof *c);

  if (!c)
    return NULL;
  memcpy(c, v, n * sizeof *c);
  qsort(c, n, sizeof *c, cmp_double);
  return c;
}

double kope_median(const double *v, size_t n)
{
  double *c, m;

  if (n == 0 || !(c = sorted_copy(v, n)))
    return 0.0;
  m = n % 2 ? c[n / 2] : 0.5 * (c[n / 2 - 1] + c[n / 2]);
  free(c);
  return m;
}

/* P(Binom(n, 1/2) <= k) */
static double binom_cdf_half(size_t n, size_t k)
{
  double sum = 0.0, logc = 0.0;
  size_t i;

  for (i = 0; i <= k && i <= n; i++) {
    if (i > 0)
      logc += log((double)(n - i + 1)) - log((double)i);
    sum += exp(logc - (double)n * log(2.0));
  }
  return sum;
}

void kope_median_ci(const double *v, size_t n, double *lo, double *hi)
{
  double *c;
  size_t j = 0;

  *lo = *hi = 0.0;
  if (n == 0 || !(c = sorted_copy(v, n)))
    return;
  /* j is 1-based: P(X < j) = P(X <= j-1) <= 0.025 */
  while (j + 1 <= n / 2 && binom_cdf_half(n, j) <= 0.025)
    j++;
  if (j == 0)
    j = 1;
  *lo = c[j - 1];
  *hi = c[n - j];
  free(c);
}

double kope_geomean(const double *v, size_t n)
{
  double s = 0.0;
  size_t i, k = 0;

  for (i = 0; i < n; i++)
    if (v[i] > 0 && isfinite(v[i])) {
      s += log(v[i]);
      k++;
    }
  return k ? exp(s / (double)k) : 0.0;
}

double kope_sign_test_p(int n, int k)
{
  double p = 0.0;
  int i;

  if (k <= 0)
    return 1.0;
  for (i = k; i <= n; i++)
    p += exp(lgamma(n + 1.0) - lgamma(i + 1.0) - lgamma(n - i + 1.0) - n * log(2.0));
  return p > 1.0 ? 1.0 : p;
}
