/* sw_stats.c: t test, Wilcoxon signed-rank, median and Hodges-Lehmann, bootstrap, DerSimonian-Laird
 * and group-sequential boundaries for the gate engine. Conventions follow R (stats::t.test,
 * stats::wilcox.test) so that the golden fixtures made by tests/fixtures/gate/golden.R check them
 * number for number. */
#include "sw_stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

static int all_finite(const double *x, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!isfinite(x[i])) return 0;
  return 1;
}

int sw_stats_t_test(const double *x, size_t n, double mu0, double conf, struct sw_stats_t *out,
                    struct sw_err *err) {
  if (!x || !out || n < 2)
    return sw_err_set(err, SW_EINVAL, "t test: needs at least 2 values (got %zu)", n);
  if (!all_finite(x, n) || !isfinite(mu0))
    return sw_err_set(err, SW_EINVAL, "t test: non-finite value in the data");
  if (!(conf > 0.0 && conf < 1.0))
    return sw_err_set(err, SW_EINVAL, "t test: confidence level %g is not in (0, 1)", conf);
  out->mean = gsl_stats_mean(x, 1, n);
  out->sd = gsl_stats_sd_m(x, 1, n, out->mean);
  out->se = out->sd / sqrt((double)n);
  out->df = (double)(n - 1);
  double diff = out->mean - mu0;
  if (out->se > 0.0) {
    out->t = diff / out->se;
    out->p = 2.0 * gsl_cdf_tdist_Q(fabs(out->t), out->df);
  } else if (diff != 0.0) {
    /* Identical non-null values: the evidence is as strong as the data can make it. */
    out->t = diff > 0 ? INFINITY : -INFINITY;
    out->p = 0.0;
  } else {
    out->t = NAN;
    out->p = 1.0;
  }
  if (out->p > 1.0) out->p = 1.0;
  double q = gsl_cdf_tdist_Pinv(1.0 - (1.0 - conf) / 2.0, out->df);
  out->lo = out->mean - q * out->se;
  out->hi = out->mean + q * out->se;
  return 0;
}

struct absidx {
  double a;
  size_t i;
};

static int cmp_absidx(const void *pa, const void *pb) {
  const struct absidx *a = pa, *b = pb;
  return (a->a > b->a) - (a->a < b->a);
}

/* The exact null distribution of the signed-rank statistic V for m values: cnt[s] is the number
 * of subsets of {1..m} with rank sum s, s = 0..m(m+1)/2, 2^m in all (exact in doubles for
 * m < 54). Caller frees; NULL on out of memory. */
static double *signrank_counts(size_t m) {
  size_t maxs = m * (m + 1) / 2;
  double *cnt = calloc(maxs + 1, sizeof *cnt);
  if (!cnt) return NULL;
  cnt[0] = 1.0;
  size_t top = 0;
  for (size_t k = 1; k <= m; k++) {
    top += k;
    for (size_t s = top; s >= k; s--) cnt[s] += cnt[s - k];
  }
  return cnt;
}

int sw_stats_wilcoxon(const double *x, size_t n, struct sw_stats_wilcoxon *out,
                      struct sw_err *err) {
  if (!x || !out) return sw_err_set(err, SW_EINVAL, "wilcoxon: no data");
  if (!all_finite(x, n))
    return sw_err_set(err, SW_EINVAL, "wilcoxon: non-finite value in the data");
  memset(out, 0, sizeof *out);
  out->p = 1.0;
  struct absidx *a = malloc((n ? n : 1) * sizeof *a);
  double *rank = malloc((n ? n : 1) * sizeof *rank);
  if (!a || !rank) {
    free(a);
    free(rank);
    return sw_err_set(err, SW_ENOMEM, "wilcoxon: out of memory");
  }
  size_t m = 0;
  int zeros = 0;
  for (size_t i = 0; i < n; i++) {
    if (x[i] == 0.0) {
      zeros = 1; /* R drops zero differences and then refuses the exact p-value */
      continue;
    }
    a[m].a = fabs(x[i]);
    a[m].i = i;
    m++;
  }
  out->n = (int)m;
  if (m == 0) {
    free(a);
    free(rank);
    return 0;
  }
  qsort(a, m, sizeof *a, cmp_absidx);
  /* Average ranks over runs of equal |x| (R's rank(ties.method = "average")). */
  int ties = 0;
  double tie_term = 0.0; /* sum of (t^3 - t) over tie groups */
  for (size_t s = 0; s < m;) {
    size_t e = s + 1;
    while (e < m && a[e].a == a[s].a) e++;
    double r = (double)(s + 1 + e) / 2.0;
    for (size_t j = s; j < e; j++) rank[j] = r;
    double t = (double)(e - s);
    if (e - s > 1) {
      ties = 1;
      tie_term += t * t * t - t;
    }
    s = e;
  }
  double v = 0.0;
  for (size_t j = 0; j < m; j++)
    if (x[a[j].i] > 0.0) v += rank[j];
  out->v = v;
  free(a);
  free(rank);

  double nn = (double)m;
  if (m < 50 && !ties && !zeros) {
    /* Exact null distribution of V: counts of subsets of {1..m} by rank sum, 2^m in all. Counts
     * stay below 2^50 for m < 50, so doubles hold them exactly. */
    size_t maxs = m * (m + 1) / 2;
    double *cnt = signrank_counts(m);
    if (!cnt) return sw_err_set(err, SW_ENOMEM, "wilcoxon: out of memory");
    double total = ldexp(1.0, (int)m);
    double lower = 0.0; /* P(V <= q) */
    double pone;
    if (v > nn * (nn + 1.0) / 4.0) {
      /* P(V >= v) = 1 - P(V <= v - 1), summed from the top to avoid cancellation. */
      double upper = 0.0;
      for (size_t s = (size_t)v; s <= maxs; s++) upper += cnt[s];
      pone = upper / total;
    } else {
      for (size_t s = 0; s <= (size_t)v; s++) lower += cnt[s];
      pone = lower / total;
    }
    free(cnt);
    out->p = fmin(1.0, 2.0 * pone);
    out->exact = 1;
    return 0;
  }
  double z = v - nn * (nn + 1.0) / 4.0;
  double sigma = sqrt(nn * (nn + 1.0) * (2.0 * nn + 1.0) / 24.0 - tie_term / 48.0);
  double corr = z > 0 ? 0.5 : (z < 0 ? -0.5 : 0.0);
  if (sigma > 0.0) {
    z = (z - corr) / sigma;
    out->p = 2.0 * fmin(gsl_cdf_ugaussian_P(z), gsl_cdf_ugaussian_Q(z));
  }
  out->p = fmin(1.0, out->p);
  out->exact = 0;
  return 0;
}

int sw_stats_median(const double *x, size_t n, double *median, struct sw_err *err) {
  if (!x || !median || n < 1) return sw_err_set(err, SW_EINVAL, "median: needs at least 1 value");
  if (!all_finite(x, n)) return sw_err_set(err, SW_EINVAL, "median: non-finite value in the data");
  double *s = malloc(n * sizeof *s);
  if (!s) return sw_err_set(err, SW_ENOMEM, "median: out of memory");
  memcpy(s, x, n * sizeof *s);
  gsl_sort(s, 1, n);
  *median = gsl_stats_median_from_sorted_data(s, 1, n);
  free(s);
  return 0;
}

int sw_stats_hodges_lehmann(const double *x, size_t n, double conf, struct sw_stats_hl *out,
                            struct sw_err *err) {
  if (!x || !out) return sw_err_set(err, SW_EINVAL, "hodges-lehmann: no data");
  if (!all_finite(x, n))
    return sw_err_set(err, SW_EINVAL, "hodges-lehmann: non-finite value in the data");
  if (!(conf > 0.0 && conf < 1.0))
    return sw_err_set(err, SW_EINVAL, "hodges-lehmann: confidence level %g is not in (0, 1)", conf);
  if (n > SW_STATS_HL_MAX)
    return sw_err_set(err, SW_EINVAL, "hodges-lehmann: %zu values, at most %d", n, SW_STATS_HL_MAX);
  memset(out, 0, sizeof *out);
  double *v = malloc((n ? n : 1) * sizeof *v);
  if (!v) return sw_err_set(err, SW_ENOMEM, "hodges-lehmann: out of memory");
  size_t m = 0;
  for (size_t i = 0; i < n; i++)
    if (x[i] != 0.0) v[m++] = x[i];
  out->n = (int)m;
  if (m == 0) {
    free(v);
    return sw_err_set(err, SW_EINVAL, "hodges-lehmann: every value is zero");
  }
  size_t nw = m * (m + 1) / 2;
  double *w = malloc(nw * sizeof *w);
  double *cnt = signrank_counts(m);
  if (!w || !cnt) {
    free(v);
    free(w);
    free(cnt);
    return sw_err_set(err, SW_ENOMEM, "hodges-lehmann: out of memory");
  }
  size_t k = 0;
  for (size_t i = 0; i < m; i++)
    for (size_t j = i; j < m; j++) w[k++] = (v[i] + v[j]) / 2.0;
  gsl_sort(w, 1, nw);
  out->est = gsl_stats_median_from_sorted_data(w, 1, nw);
  /* Ties among |x| make the level approximate (R leaves the exact branch then). */
  gsl_sort(v, 1, m);
  int ties = 0;
  for (size_t i = 0; i < m; i++)
    for (size_t j = i + 1; j < m; j++) ties |= fabs(v[i]) == fabs(v[j]);
  out->exact = m < 50 && !ties;
  /* qu = qsignrank(a / 2, m): the smallest q with P(V <= q) >= a / 2; at least 1. */
  double total = ldexp(1.0, (int)m), half = (1.0 - conf) / 2.0, cum = 0.0;
  size_t qu = 0;
  for (; qu <= nw; qu++) {
    cum += cnt[qu] / total;
    if (cum >= half * (1.0 - 1e-12)) break;
  }
  if (qu == 0) qu = 1;
  double below = 0.0; /* psignrank(qu - 1, m) */
  for (size_t s = 0; s + 1 <= qu; s++) below += cnt[s] / total;
  out->lo = w[qu - 1];
  out->hi = w[nw - qu];
  out->conf = 1.0 - 2.0 * below;
  free(v);
  free(w);
  free(cnt);
  return 0;
}

int sw_stats_bootstrap_mean(const double *x, size_t n, int reps, uint64_t seed, double conf,
                            double *lo, double *hi, struct sw_err *err) {
  if (!x || n < 1 || reps < 10 || !lo || !hi)
    return sw_err_set(err, SW_EINVAL, "bootstrap: needs data and at least 10 resamples");
  if (!(conf > 0.0 && conf < 1.0))
    return sw_err_set(err, SW_EINVAL, "bootstrap: confidence level %g is not in (0, 1)", conf);
  if (!all_finite(x, n))
    return sw_err_set(err, SW_EINVAL, "bootstrap: non-finite value in the data");
  double *means = malloc((size_t)reps * sizeof *means);
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  if (!means || !rng) {
    free(means);
    if (rng) gsl_rng_free(rng);
    return sw_err_set(err, SW_ENOMEM, "bootstrap: out of memory");
  }
  gsl_rng_set(rng, (unsigned long)seed);
  for (int b = 0; b < reps; b++) {
    double s = 0.0;
    for (size_t j = 0; j < n; j++) s += x[gsl_rng_uniform_int(rng, n)];
    means[b] = s / (double)n;
  }
  gsl_sort(means, 1, (size_t)reps);
  double tail = (1.0 - conf) / 2.0;
  *lo = gsl_stats_quantile_from_sorted_data(means, 1, (size_t)reps, tail);
  *hi = gsl_stats_quantile_from_sorted_data(means, 1, (size_t)reps, 1.0 - tail);
  free(means);
  gsl_rng_free(rng);
  return 0;
}

int sw_stats_dersimonian_laird(const double *y, const double *v, size_t k, double conf,
                               struct sw_stats_dl *out, struct sw_err *err) {
  if (!y || !v || !out || k < 2)
    return sw_err_set(err, SW_EINVAL, "random-effects pool: needs at least 2 studies (got %zu)", k);
  if (!(conf > 0.0 && conf < 1.0))
    return sw_err_set(err, SW_EINVAL, "random-effects pool: confidence level %g out of (0, 1)",
                      conf);
  double sw = 0.0, sw2 = 0.0, swy = 0.0;
  for (size_t i = 0; i < k; i++) {
    if (!isfinite(y[i]) || !isfinite(v[i]) || !(v[i] > 0.0))
      return sw_err_set(err, SW_EINVAL,
                        "random-effects pool: study %zu has effect %g, variance %g (needs > 0)", i,
                        y[i], v[i]);
    double w = 1.0 / v[i];
    sw += w;
    sw2 += w * w;
    swy += w * y[i];
  }
  double ybar = swy / sw;
  double q = 0.0;
  for (size_t i = 0; i < k; i++) q += (y[i] - ybar) * (y[i] - ybar) / v[i];
  double df = (double)(k - 1);
  double c = sw - sw2 / sw;
  double tau2 = c > 0.0 ? fmax(0.0, (q - df) / c) : 0.0;
  double sws = 0.0, swsy = 0.0;
  for (size_t i = 0; i < k; i++) {
    double w = 1.0 / (v[i] + tau2);
    sws += w;
    swsy += w * y[i];
  }
  out->k = (int)k;
  out->mu = swsy / sws;
  out->se = sqrt(1.0 / sws);
  double z = gsl_cdf_ugaussian_Pinv(1.0 - (1.0 - conf) / 2.0);
  out->lo = out->mu - z * out->se;
  out->hi = out->mu + z * out->se;
  out->q = q;
  out->tau2 = tau2;
  out->i2 = q > 0.0 ? fmax(0.0, (q - df) / q) : 0.0;
  return 0;
}

double sw_stats_obf_spend(double t, double alpha) {
  if (!(t > 0.0)) return 0.0;
  if (t >= 1.0) return alpha;
  /* Each side spends alpha/2 by Lan and DeMets' function 2 - 2 Phi(z_{1 - a/2} / sqrt(t)) with
   * a = alpha / 2, the convention of their tables, ldbounds and gsDesign; both sides together: */
  double z = gsl_cdf_ugaussian_Pinv(1.0 - alpha / 4.0);
  return 4.0 * gsl_cdf_ugaussian_Q(z / sqrt(t));
}

/* Grid resolution of the continuation density: 2 * GS_HALF + 1 Simpson points per look. */
#define GS_HALF 200
#define GS_POINTS (2 * GS_HALF + 1)

/* Probability of leaving (-c sqrt(t1), c sqrt(t1)) at the next look, given the continuation
 * density f on grid u with Simpson weights w and an increment of variance dt. */
static double cross_prob(const double *u, const double *wf, double c, double t1, double dt) {
  double b = c * sqrt(t1), sd = sqrt(dt), p = 0.0;
  for (int j = 0; j < GS_POINTS; j++)
    p += wf[j] * (gsl_cdf_ugaussian_Q((b - u[j]) / sd) + gsl_cdf_ugaussian_P((-b - u[j]) / sd));
  return p;
}

int sw_stats_gs_bounds(const double *t, size_t k, double alpha, double *bound, struct sw_err *err) {
  if (!t || !bound || k < 1 || k > 64)
    return sw_err_set(err, SW_EINVAL, "sequential boundaries: 1 to 64 looks (got %zu)", k);
  if (!(alpha > 0.0 && alpha < 1.0))
    return sw_err_set(err, SW_EINVAL, "sequential boundaries: alpha %g is not in (0, 1)", alpha);
  for (size_t i = 0; i < k; i++)
    if (!(t[i] > 0.0 && t[i] <= 1.0) || (i > 0 && !(t[i] > t[i - 1])))
      return sw_err_set(err, SW_EINVAL,
                        "sequential boundaries: information fractions must increase in (0, 1]");
  /* u: grid on the score scale S = Z sqrt(t); wf: Simpson weight times continuation density. */
  double u[GS_POINTS], wf[GS_POINTS], nf[GS_POINTS];
  bound[0] = gsl_cdf_ugaussian_Qinv(sw_stats_obf_spend(t[0], alpha) / 2.0);
  double prev_spent = sw_stats_obf_spend(t[0], alpha);
  for (size_t look = 0; look + 1 < k; look++) {
    double a = bound[look] * sqrt(t[look]);
    double h = a / GS_HALF;
    for (int j = 0; j < GS_POINTS; j++) {
      u[j] = -a + h * j;
      double sw = (j == 0 || j == GS_POINTS - 1) ? 1.0 : (j % 2 ? 4.0 : 2.0);
      double dens;
      if (look == 0) {
        dens = gsl_ran_gaussian_pdf(u[j], sqrt(t[0]));
      } else {
        dens = nf[j];
      }
      wf[j] = sw * h / 3.0 * dens;
    }
    double t1 = t[look + 1], dt = t1 - t[look];
    double spent = sw_stats_obf_spend(t1, alpha);
    double target = spent - prev_spent;
    prev_spent = spent;
    /* Crossing probability falls as the bound rises: bisect. */
    double lo = 0.0, hi = 40.0;
    for (int it = 0; it < 200 && hi - lo > 1e-10; it++) {
      double mid = 0.5 * (lo + hi);
      if (cross_prob(u, wf, mid, t1, dt) > target)
        lo = mid;
      else
        hi = mid;
    }
    bound[look + 1] = 0.5 * (lo + hi);
    if (look + 2 < k) {
      /* Continuation density at the new look, on the new grid. */
      double a1 = bound[look + 1] * sqrt(t1), h1 = a1 / GS_HALF, sd = sqrt(dt);
      for (int i = 0; i < GS_POINTS; i++) {
        double s = -a1 + h1 * i, f = 0.0;
        for (int j = 0; j < GS_POINTS; j++) f += wf[j] * gsl_ran_gaussian_pdf(s - u[j], sd);
        nf[i] = f;
      }
    }
  }
  return 0;
}
