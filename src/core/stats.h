/*
 * Small statistics for timing: medians, a distribution-free confidence
 * interval for the median (order statistics of the binomial), geometric
 * means.
 */
#ifndef KOPE_CORE_STATS_H
#define KOPE_CORE_STATS_H

#include <stddef.h>

/* Median of n values (copied, input untouched). 0 when n == 0. */
double kope_median(const double *v, size_t n);
/* ~95% confidence interval for the median: [lo, hi] are order statistics
 * x(j) and x(n-j+1) with the largest j such that P(Binom(n, 1/2) < j) is
 * at most 2.5%. For n < 6 the interval is the full range. */
void kope_median_ci(const double *v, size_t n, double *lo, double *hi);
/* Geometric mean of the positive values; 0 if there are none. */
double kope_geomean(const double *v, size_t n);
/* One-sided sign test: P(X >= k) for X ~ Binomial(n, 1/2). */
double kope_sign_test_p(int n, int k);

#endif
