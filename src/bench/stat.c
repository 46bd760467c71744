/*
 * Small statistics of the benchmark: the CANN-Bench-style per-case score,
 * geometric means with a percentile bootstrap interval, and the number of
 * evaluations a curve needs to reach a fraction of its final value.
 */
#include <math.h>
#include <stdlib.h>
#include "bench/bench_int.h"

double kope_bench_case_score(double t_cand, double t_base, double t_hw)
{
  double num, den;

  if (!(t_cand > 0) || !(t_base > 0))
    return 0.0;
  if (!(t_hw > 0))
    t_hw = 0.0;
  if (t_cand < t_hw)
    t_cand = t_hw;
  if (t_base < t_hw)
    t_base = t_hw;
  num = t_base - t_hw;
  den = (t_cand - t_hw) + num;
  if (den <= 0)
    return 0.5;   /* both at the roofline: parity */
  return num / den;
}

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;

  return x < y ? -1 : x > y;
}

static double mean_log(const double *lv, size_t n, const size_t *idx)
{
  double s = 0;
  size_t i;

  for (i = 0; i < n; i++)
    s += lv[idx ? idx[i] : i];
  return s / (double)n;
}

double kope_bench_geomean_ci(const double *v, size_t n, int nboot, uint64_t seed,
                             double *lo, double *hi)
{
  double *lv = malloc((n ? n : 1) * sizeof *lv), *bs = NULL, g = 0;
  size_t *idx = malloc((n ? n : 1) * sizeof *idx), m = 0, i;
  int b;

  *lo = *hi = 0;
  if (!lv || !idx)
    goto out;   /* out of memory: 0, as for no value (no status to carry it) */
  for (i = 0; i < n; i++)
    if (v[i] > 0 && isfinite(v[i]))
      lv[m++] = log(v[i]);
  if (m == 0)
    goto out;
  g = exp(mean_log(lv, m, NULL));
  *lo = *hi = g;
  if (m < 2 || nboot < 10)
    goto out;
  if (!(bs = malloc((size_t)nboot * sizeof *bs)))
    goto out;   /* out of memory: no interval, lo = hi = the geomean */
  for (b = 0; b < nboot; b++) {
    for (i = 0; i < m; i++)
      idx[i] = (size_t)(kope_bench_rand(&seed) % m);
    bs[b] = mean_log(lv, m, idx);
  }
  qsort(bs, (size_t)nboot, sizeof *bs, cmp_double);
  *lo = exp(bs[(size_t)(0.025 * nboot)]);
  *hi = exp(bs[(size_t)(0.975 * nboot) < (size_t)nboot ? (size_t)(0.975 * nboot) : (size_t)nboot - 1]);
out:
  free(bs);
  free(idx);
  free(lv);
  return g;
}

int kope_bench_evals_to_reach(const double *curve, size_t n, double frac)
{
  size_t k;

  if (n == 0 || !(curve[n - 1] > 0))
    return -1;
  for (k = 0; k < n; k++)
    if (curve[k] >= frac * curve[n - 1])
      return (int)k;
  return (int)(n - 1);
}
