/* sw_stats.h: the statistics the gate engine is built from: the one-sample t test and interval,
 * the Wilcoxon signed-rank test (exact null distribution for small n, R's normal approximation
 * otherwise), the median and the Hodges-Lehmann estimate with its exact signed-rank interval,
 * a seeded bootstrap percentile interval of the mean, the DerSimonian-Laird random-effects pool,
 * and Lan-DeMets O'Brien-Fleming group-sequential boundaries.
 *
 * Distributions, quantiles, sorting and the random generator come from GSL. Every function is pure
 * (no global state, deterministic for a given seed) and checked against R in tests/fixtures/gate/.
 * Functions return 0 or a negative SW_E* code; they never abort on data. */
#ifndef SW_STATS_H
#define SW_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "sw_err.h"

struct sw_stats_t {
  double mean, sd, se; /* sample mean, sd (n - 1), standard error */
  double df, t, p;     /* t statistic against mu0 and its two-sided p */
  double lo, hi;       /* interval of the mean at level conf */
};

/* R's t.test(x, mu = mu0, conf.level = conf). Needs n >= 2 and finite data; a zero sd gives
 * t = +-inf (p = 0) or NaN (p = 1) when the mean equals mu0, and a zero-width interval. */
int sw_stats_t_test(const double *x, size_t n, double mu0, double conf, struct sw_stats_t *out,
                    struct sw_err *err);

struct sw_stats_wilcoxon {
  int n;     /* non-zero differences used */
  double v;  /* sum of ranks of positive differences (R's V) */
  double p;  /* two-sided p */
  int exact; /* 1: exact null distribution (n < 50, no ties, no zeros), 0: normal approximation */
};

/* R's wilcox.test(x, mu = 0, exact = NULL, correct = TRUE), two-sided. Zeros are dropped as R
 * does; with nothing left, v = 0 and p = 1. Allocates O(n^2) scratch; SW_ENOMEM on failure. */
int sw_stats_wilcoxon(const double *x, size_t n, struct sw_stats_wilcoxon *out, struct sw_err *err);

/* The median of x[0..n-1] (n >= 1; the mean of the middle two for even n). x is not changed;
 * O(n) scratch; SW_ENOMEM on failure. */
int sw_stats_median(const double *x, size_t n, double *median, struct sw_err *err);

/* The most values the Hodges-Lehmann estimate accepts (its Walsh averages grow as n^2/2). */
#define SW_STATS_HL_MAX 200

struct sw_stats_hl {
  int n;         /* non-zero values used (zeros are dropped, as R does) */
  double est;    /* Hodges-Lehmann estimate: the median of the n (n + 1) / 2 Walsh averages */
  double lo, hi; /* the signed-rank interval: order statistics of the Walsh averages */
  double conf;   /* its attained level 1 - 2 psignrank(qu - 1, n): discrete, so near the level
                  * asked, or the highest attainable when n is small (n = 3: 0.75, where R warns
                  * "requested conf.level not achievable") */
  int exact;     /* 1: no ties and n < 50, so the level is exact (R's exact branch) */
};

/* R's wilcox.test(x, conf.int = TRUE, conf.level = conf)$estimate and $conf.int in its exact
 * branch: the Walsh averages (x_i + x_j) / 2, i <= j, sorted; qu = qsignrank((1 - conf) / 2, n)
 * (1 when that is 0); the interval is [w_qu, w_{n(n+1)/2 - qu + 1}] and its level
 * 1 - 2 psignrank(qu - 1, n). With ties or n >= 50 R switches to a normal approximation found by
 * root search; this function keeps the order statistics and says exact = 0. n >= 1 non-zero
 * values, at most SW_STATS_HL_MAX. */
int sw_stats_hodges_lehmann(const double *x, size_t n, double conf, struct sw_stats_hl *out,
                            struct sw_err *err);

/* Percentile bootstrap interval of the mean at level conf: reps resamples drawn with GSL's
 * MT19937 seeded with seed. Needs n >= 1 and reps >= 10. */
int sw_stats_bootstrap_mean(const double *x, size_t n, int reps, uint64_t seed, double conf,
                            double *lo, double *hi, struct sw_err *err);

struct sw_stats_dl {
  int k;              /* studies (machines) pooled */
  double mu, se;      /* random-effects estimate and its standard error */
  double lo, hi;      /* normal interval at level conf */
  double q, tau2, i2; /* Cochran's Q, DerSimonian-Laird tau^2, I^2 (fraction, 0..1) */
};

/* DerSimonian-Laird random-effects pool of effects y[i] with within variances v[i] > 0.
 * Needs k >= 2. I^2 = max(0, (Q - (k - 1)) / Q), 0 when Q = 0. */
int sw_stats_dersimonian_laird(const double *y, const double *v, size_t k, double conf,
                               struct sw_stats_dl *out, struct sw_err *err);

/* Lan-DeMets O'Brien-Fleming-type spending, two-sided alpha split evenly between the sides, each
 * side spending a(t) = 2 - 2 Phi(z_{1 - a/2} / sqrt(t)) of a = alpha / 2 (the convention of the
 * published tables, R's ldbounds and gsDesign). Returns both sides' total: 0 at t = 0, alpha at
 * t = 1. */
double sw_stats_obf_spend(double t, double alpha);

/* Two-sided symmetric group-sequential boundaries on the z scale for looks at increasing
 * information fractions t[0..k-1] (0 < t <= 1), spending alpha by sw_stats_obf_spend: the
 * probability under the null of first crossing +-bound[j] at look j equals
 * alpha(t[j]) - alpha(t[j-1]). Computed by recursive numerical integration of the Brownian
 * motion's continuation density (Armitage-McPherson-Rowe). k <= 64. */
int sw_stats_gs_bounds(const double *t, size_t k, double alpha, double *bound, struct sw_err *err);

#endif
