/* test_gate_stats.c: the gate engine's statistics checked against R.
 * tests/fixtures/gate/golden.json was written by golden.R beside it (R's t.test and wilcox.test,
 * DerSimonian-Laird written out in R and by metafor, rpact's group-sequential boundaries); every
 * number must agree to 1e-6 (relative for the p-values, absolute otherwise), the boundaries too.
 * The boundaries are also checked against the published Lan-DeMets O'Brien-Fleming table. */
#include <check.h>
#include <math.h>
#include <stdlib.h>

#include <jansson.h>

#include "sw_stats.h"

#ifndef SW_GATE_FIXTURES
#error "SW_GATE_FIXTURES must name tests/fixtures/gate"
#endif

static json_t *golden;

static void load_golden(void) {
  json_error_t e;
  golden = json_load_file(SW_GATE_FIXTURES "/golden.json", 0, &e);
  if (!golden) fprintf(stderr, "golden.json: %d: %s\n", e.line, e.text);
}

static void unload_golden(void) { json_decref(golden); }

static size_t vec(const json_t *arr, double *x, size_t cap) {
  size_t n = json_array_size(arr);
  ck_assert_uint_le(n, cap);
  for (size_t i = 0; i < n; i++) x[i] = json_number_value(json_array_get(arr, i));
  return n;
}

static double g(const json_t *o, const char *k) {
  json_t *v = json_object_get(o, k);
  ck_assert_msg(json_is_number(v), "golden key %s missing", k);
  return json_number_value(v);
}

#define NEAR(a, b, tol)                                                                            \
  ck_assert_msg(fabs((a) - (b)) <= (tol), "%s = %.12g, R says %.12g", #a, (double)(a), (double)(b))
#define NEAR_REL(a, b, tol)                                                                        \
  ck_assert_msg(fabs((a) - (b)) <= (tol)*fmax(1e-300, fabs(b)) || fabs((a) - (b)) <= 1e-12,        \
                "%s = %.12g, R says %.12g", #a, (double)(a), (double)(b))

START_TEST(t_test_matches_r) {
  ck_assert_ptr_nonnull(golden);
  json_t *cases = json_object_get(golden, "t_test");
  ck_assert_uint_ge(json_array_size(cases), 10);
  size_t i;
  json_t *c;
  json_array_foreach(cases, i, c) {
    double x[64];
    size_t n = vec(json_object_get(c, "x"), x, 64);
    struct sw_stats_t r;
    ck_assert_int_eq(sw_stats_t_test(x, n, 0.0, g(c, "conf"), &r, NULL), 0);
    NEAR(r.mean, g(c, "mean"), 1e-9);
    NEAR_REL(r.t, g(c, "t"), 1e-6);
    NEAR(r.df, g(c, "df"), 1e-12);
    NEAR_REL(r.p, g(c, "p"), 1e-6);
    NEAR_REL(r.lo, g(c, "lo"), 1e-6);
    NEAR_REL(r.hi, g(c, "hi"), 1e-6);
  }
}
END_TEST

START_TEST(wilcoxon_matches_r) {
  ck_assert_ptr_nonnull(golden);
  json_t *cases = json_object_get(golden, "wilcoxon");
  ck_assert_uint_ge(json_array_size(cases), 8);
  size_t i;
  json_t *c;
  int exact = 0, approx = 0;
  json_array_foreach(cases, i, c) {
    double x[128];
    size_t n = vec(json_object_get(c, "x"), x, 128);
    struct sw_stats_wilcoxon w;
    ck_assert_int_eq(sw_stats_wilcoxon(x, n, &w, NULL), 0);
    NEAR(w.v, g(c, "v"), 1e-9);
    NEAR_REL(w.p, g(c, "p"), 1e-6);
    exact += w.exact;
    approx += !w.exact;
  }
  /* The fixtures cover both paths: exact (small, no ties) and R's normal approximation. */
  ck_assert_int_ge(exact, 4);
  ck_assert_int_ge(approx, 3);
}
END_TEST

START_TEST(dersimonian_laird_matches_r) {
  ck_assert_ptr_nonnull(golden);
  json_t *cases = json_object_get(golden, "dersimonian_laird");
  ck_assert_uint_ge(json_array_size(cases), 3);
  size_t i;
  json_t *c;
  int heterogeneous = 0;
  json_array_foreach(cases, i, c) {
    double y[64], v[64];
    size_t k = vec(json_object_get(c, "y"), y, 64);
    ck_assert_uint_eq(vec(json_object_get(c, "v"), v, 64), k);
    struct sw_stats_dl d;
    ck_assert_int_eq(sw_stats_dersimonian_laird(y, v, k, 0.95, &d, NULL), 0);
    NEAR(d.mu, g(c, "mu"), 1e-6);
    NEAR(d.se, g(c, "se"), 1e-6);
    NEAR(d.lo, g(c, "lo"), 1e-6);
    NEAR(d.hi, g(c, "hi"), 1e-6);
    NEAR_REL(d.q, g(c, "q"), 1e-6);
    NEAR(d.tau2, g(c, "tau2"), 1e-6);
    NEAR(d.i2, g(c, "i2"), 1e-6);
    heterogeneous += d.tau2 > 0.0;
  }
  ck_assert_int_ge(heterogeneous, 1);
}
END_TEST

START_TEST(dersimonian_laird_matches_metafor) {
  ck_assert_ptr_nonnull(golden);
  json_t *cases = json_object_get(golden, "metafor_dl");
  ck_assert_uint_ge(json_array_size(cases), 3);
  size_t i;
  json_t *c;
  json_array_foreach(cases, i, c) {
    double y[64], v[64];
    size_t k = vec(json_object_get(c, "y"), y, 64);
    vec(json_object_get(c, "v"), v, 64);
    struct sw_stats_dl d;
    ck_assert_int_eq(sw_stats_dersimonian_laird(y, v, k, 0.95, &d, NULL), 0);
    NEAR(d.mu, g(c, "mu"), 1e-6);
    NEAR(d.se, g(c, "se"), 1e-6);
    NEAR(d.lo, g(c, "lo"), 1e-6);
    NEAR(d.hi, g(c, "hi"), 1e-6);
    NEAR_REL(d.q, g(c, "q"), 1e-6);
    NEAR(d.tau2, g(c, "tau2"), 1e-6);
    NEAR(d.i2, g(c, "i2"), 1e-6);
  }
}
END_TEST

START_TEST(gs_bounds_match_rpact) {
  /* rpact's two-sided "asOF" designs at the information fractions of the gate's looks. Both
   * sides integrate numerically; they agree to ~1e-8 on the z scale. rpact reports the spent
   * alpha rounded near 1e-8, hence the looser spent tolerance. */
  ck_assert_ptr_nonnull(golden);
  json_t *cases = json_object_get(golden, "gs_bounds");
  ck_assert_uint_ge(json_array_size(cases), 4);
  size_t i;
  json_t *c;
  json_array_foreach(cases, i, c) {
    double t[64], want[64], spent[64], b[64];
    size_t k = vec(json_object_get(c, "t"), t, 64);
    vec(json_object_get(c, "bound"), want, 64);
    vec(json_object_get(c, "spent"), spent, 64);
    ck_assert_int_eq(sw_stats_gs_bounds(t, k, g(c, "alpha"), b, NULL), 0);
    for (size_t j = 0; j < k; j++) {
      NEAR(b[j], want[j], 1e-6);
      NEAR(sw_stats_obf_spend(t[j], g(c, "alpha")), spent[j], 1e-7);
    }
  }
}
END_TEST

START_TEST(wilcoxon_exact_small_values) {
  /* n = 3, all negative: V = 0, P(V <= 0) = 1/8, two-sided 0.25 (R gives the same). */
  double x[] = {-0.02, -0.03, -0.01};
  struct sw_stats_wilcoxon w;
  ck_assert_int_eq(sw_stats_wilcoxon(x, 3, &w, NULL), 0);
  ck_assert_int_eq(w.exact, 1);
  NEAR(w.v, 0.0, 0.0);
  NEAR(w.p, 0.25, 1e-15);
  /* Only zeros: nothing to rank, p = 1. */
  double z[] = {0.0, 0.0};
  ck_assert_int_eq(sw_stats_wilcoxon(z, 2, &w, NULL), 0);
  ck_assert_int_eq(w.n, 0);
  NEAR(w.p, 1.0, 0.0);
}
END_TEST

/* The Hodges-Lehmann estimate and R's exact signed-rank interval (wilcox.test(x, conf.int =
 * TRUE)), worked by hand from the sorted Walsh averages and the signed-rank counts. n = 5: the 15
 * averages of {1.2, -0.4, 2.5, 3.1, 0.7} have median 1.35; P(V <= 0) = 1/32 >= 0.025, so
 * qu = max(1, 0) = 1 and the interval is [min, max] = [-0.4, 3.1] at level 1 - 2/32 = 0.9375
 * (the highest n = 5 attains). n = 8: qsignrank(0.025, 8) = 4, P(V <= 3) = 5/256, so the 4th
 * smallest and largest of the 36 averages at level 1 - 10/256 (the textbook 96.1%). n = 10: the
 * 9th, level 1 - 50/1024 = 95.1%. */
START_TEST(hodges_lehmann_exact_interval) {
  struct sw_stats_hl h;
  double a[] = {1.2, -0.4, 2.5, 3.1, 0.7};
  ck_assert_int_eq(sw_stats_hodges_lehmann(a, 5, 0.95, &h, NULL), 0);
  NEAR(h.est, 1.35, 1e-12);
  NEAR(h.lo, -0.4, 1e-12);
  NEAR(h.hi, 3.1, 1e-12);
  NEAR(h.conf, 0.9375, 1e-12);
  ck_assert_int_eq(h.exact, 1);
  double b[] = {-2.1, -1.7, -3.0, -0.2, -2.6, -1.1, -2.2, 0.4};
  ck_assert_int_eq(sw_stats_hodges_lehmann(b, 8, 0.95, &h, NULL), 0);
  NEAR(h.est, -1.625, 1e-12);
  NEAR(h.lo, -2.6, 1e-12);
  NEAR(h.hi, -0.35, 1e-12);
  NEAR(h.conf, 1.0 - 10.0 / 256.0, 1e-12);
  double c[] = {0.8, 1.9, -0.6, 2.4, 1.1, 0.3, 1.6, 2.9, -0.2, 1.4};
  ck_assert_int_eq(sw_stats_hodges_lehmann(c, 10, 0.95, &h, NULL), 0);
  NEAR(h.est, 1.15, 1e-12);
  NEAR(h.lo, 0.3, 1e-12);
  NEAR(h.hi, 2.0, 1e-12);
  NEAR(h.conf, 1.0 - 50.0 / 1024.0, 1e-12);
  /* n = 3 attains 0.75 at most (R: "requested conf.level not achievable"). */
  double d[] = {0.3, -0.1, 0.5};
  ck_assert_int_eq(sw_stats_hodges_lehmann(d, 3, 0.95, &h, NULL), 0);
  NEAR(h.est, 0.25, 1e-12);
  NEAR(h.conf, 0.75, 1e-12);
  /* Ties among |x|: the order statistics stay, the level is no longer exact. */
  double t[] = {0.5, -0.5, 1.0, 2.0};
  ck_assert_int_eq(sw_stats_hodges_lehmann(t, 4, 0.95, &h, NULL), 0);
  ck_assert_int_eq(h.exact, 0);
  /* Zeros are dropped as R drops them; nothing left is an error. */
  double z[] = {0.0, 0.0};
  ck_assert_int_eq(sw_stats_hodges_lehmann(z, 2, 0.95, &h, NULL), SW_EINVAL);
  double m;
  ck_assert_int_eq(sw_stats_median(a, 5, &m, NULL), 0);
  NEAR(m, 1.2, 0.0);
  ck_assert(a[0] == 1.2 && a[4] == 0.7); /* the input is not reordered */
  ck_assert_int_eq(sw_stats_median(c, 10, &m, NULL), 0);
  NEAR(m, 1.25, 1e-15);
  ck_assert_int_eq(sw_stats_median(c, 0, &m, NULL), SW_EINVAL);
}
END_TEST

START_TEST(obf_boundaries_match_published_table) {
  /* Lan-DeMets O'Brien-Fleming spending, 5 equally spaced looks, two-sided alpha 0.05: the
   * boundaries tabulated by Jennison & Turnbull and reproduced by gsDesign / ldbounds. */
  double t[5] = {0.2, 0.4, 0.6, 0.8, 1.0}, b[5];
  const double want[5] = {4.8769, 3.3569, 2.6803, 2.2898, 2.0310};
  ck_assert_int_eq(sw_stats_gs_bounds(t, 5, 0.05, b, NULL), 0);
  for (int j = 0; j < 5; j++) NEAR(b[j], want[j], 2e-3);
  /* One look spends everything: the fixed-sample boundary. */
  double one = 1.0, b1;
  ck_assert_int_eq(sw_stats_gs_bounds(&one, 1, 0.05, &b1, NULL), 0);
  NEAR(b1, 1.959963984540054, 1e-9);
  NEAR(sw_stats_obf_spend(1.0, 0.05), 0.05, 0.0);
  NEAR(sw_stats_obf_spend(0.0, 0.05), 0.0, 0.0);
}
END_TEST

START_TEST(bootstrap_is_seeded_and_sane) {
  double x[] = {-0.15, -0.16, -0.14, -0.155, -0.148, -0.152};
  double lo1, hi1, lo2, hi2, lo3, hi3;
  ck_assert_int_eq(sw_stats_bootstrap_mean(x, 6, 2000, 7, 0.95, &lo1, &hi1, NULL), 0);
  ck_assert_int_eq(sw_stats_bootstrap_mean(x, 6, 2000, 7, 0.95, &lo2, &hi2, NULL), 0);
  ck_assert_int_eq(sw_stats_bootstrap_mean(x, 6, 2000, 8, 0.95, &lo3, &hi3, NULL), 0);
  ck_assert(lo1 == lo2 && hi1 == hi2); /* same seed, same interval */
  ck_assert(lo1 != lo3 || hi1 != hi3); /* another seed, other resamples */
  double mean = -0.1508333333333333;
  ck_assert(lo1 < mean && mean < hi1);
  ck_assert(lo1 >= -0.16 && hi1 <= -0.14); /* resampled means stay inside the data's range */
}
END_TEST

START_TEST(errors_are_reported_not_crashed) {
  struct sw_err e = {0};
  double x[] = {1.0, NAN};
  struct sw_stats_t r;
  ck_assert_int_eq(sw_stats_t_test(x, 1, 0.0, 0.95, &r, &e), SW_EINVAL);
  ck_assert_str_eq(e.msg, "t test: needs at least 2 values (got 1)");
  sw_err_clear(&e);
  ck_assert_int_eq(sw_stats_t_test(x, 2, 0.0, 0.95, &r, &e), SW_EINVAL);
  double y[] = {0.1}, v[] = {0.0};
  struct sw_stats_dl d;
  ck_assert_int_eq(sw_stats_dersimonian_laird(y, v, 1, 0.95, &d, NULL), SW_EINVAL);
  double t[2] = {0.5, 0.4}, b[2];
  ck_assert_int_eq(sw_stats_gs_bounds(t, 2, 0.05, b, NULL), SW_EINVAL);
  /* Constant data: zero sd, the t test says so instead of dividing by zero. */
  double c[] = {0.01, 0.01, 0.01};
  ck_assert_int_eq(sw_stats_t_test(c, 3, 0.0, 0.95, &r, NULL), 0);
  ck_assert(isinf(r.t) && r.p == 0.0);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("gate_stats");
  TCase *tc = tcase_create("golden");
  tcase_add_unchecked_fixture(tc, load_golden, unload_golden);
  tcase_add_test(tc, t_test_matches_r);
  tcase_add_test(tc, wilcoxon_matches_r);
  tcase_add_test(tc, dersimonian_laird_matches_r);
  tcase_add_test(tc, dersimonian_laird_matches_metafor);
  tcase_add_test(tc, gs_bounds_match_rpact);
  tcase_add_test(tc, wilcoxon_exact_small_values);
  tcase_add_test(tc, hodges_lehmann_exact_interval);
  tcase_add_test(tc, obf_boundaries_match_published_table);
  tcase_add_test(tc, bootstrap_is_seeded_and_sane);
  tcase_add_test(tc, errors_are_reported_not_crashed);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
