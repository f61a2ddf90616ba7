/* test_model.c: Check suite for gs_model: the seeded generator (deterministic, in range, sane
 * moments), allocation and growth keeping the live splats, random initialisation (box, colour,
 * identity rotations, opacity logit) with kNN log-scales checked against brute force, and the
 * cameras extent. */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gs_model.h"

START_TEST(rng_deterministic_and_sane) {
  struct gs_rng a, b, c;
  gs_rng_seed(&a, 42);
  gs_rng_seed(&b, 42);
  gs_rng_seed(&c, 43);
  int differs = 0;
  for (int i = 0; i < 100; i++) {
    uint64_t x = gs_rng_next(&a), y = gs_rng_next(&b), z = gs_rng_next(&c);
    ck_assert(x == y);
    differs += x != z;
  }
  ck_assert_int_eq(differs, 100);
  double sum = 0, sum2 = 0, nsum = 0, nsum2 = 0;
  uint32_t hist[10] = {0};
  const int n = 200000;
  for (int i = 0; i < n; i++) {
    float u = gs_rng_uniform(&a);
    ck_assert(u >= 0.0f && u < 1.0f);
    sum += u;
    sum2 += (double)u * u;
    float g = gs_rng_normal(&a);
    ck_assert(isfinite(g));
    nsum += g;
    nsum2 += (double)g * g;
    uint32_t k = gs_rng_below(&a, 10);
    ck_assert_uint_lt(k, 10);
    hist[k]++;
  }
  ck_assert(fabs(sum / n - 0.5) < 0.005);
  ck_assert(fabs(sum2 / n - sum / n * sum / n - 1.0 / 12) < 0.002);
  ck_assert(fabs(nsum / n) < 0.01);
  ck_assert(fabs(nsum2 / n - 1.0) < 0.02);
  for (int k = 0; k < 10; k++) ck_assert(fabs(hist[k] / (double)n - 0.1) < 0.005);
  ck_assert_uint_eq(gs_rng_below(&a, 1), 0);
}
END_TEST

START_TEST(reserve_keeps_live_splats) {
  struct gs_model *m = NULL;
  ck_assert_int_eq(gs_model_new(4, &m, NULL), 0);
  ck_assert_uint_eq(m->capacity, 4);
  m->count = 3;
  for (int i = 0; i < 3; i++) {
    m->means[3 * i] = (float)i;
    m->sh[48 * i + 47] = (float)(10 + i);
    m->opacity[i] = (float)(20 + i);
  }
  ck_assert_int_eq(gs_model_reserve(m, 5, NULL), 0);
  ck_assert_uint_ge(m->capacity, 6); /* geometric: at least 1.5x */
  ck_assert_uint_eq(m->count, 3);
  for (int i = 0; i < 3; i++) {
    ck_assert_float_eq(m->means[3 * i], (float)i);
    ck_assert_float_eq(m->sh[48 * i + 47], (float)(10 + i));
    ck_assert_float_eq(m->opacity[i], (float)(20 + i));
  }
  ck_assert_float_eq(m->sh[48 * 5 + 3], 0.0f); /* new tail zeroed */
  uint32_t cap = m->capacity;
  ck_assert_int_eq(gs_model_reserve(m, 2, NULL), 0); /* never shrinks */
  ck_assert_uint_eq(m->capacity, cap);
  struct gs_model *c = NULL;
  ck_assert_int_eq(gs_model_clone(m, &c, NULL), 0);
  ck_assert_uint_eq(c->count, 3);
  ck_assert_float_eq(c->sh[48 * 2 + 47], 12.0f);
  gs_model_copy_splat(c, 0, m, 2);
  ck_assert_float_eq(c->means[0], 2.0f);
  ck_assert_float_eq(c->opacity[0], 22.0f);
  gs_model_destroy(&m);
  gs_model_destroy(&c);
  ck_assert_ptr_null(m);
  gs_model_destroy(NULL);
}
END_TEST

/* Brute-force mean squared distance to the 3 nearest other points. */
static float brute_knn3(const float *p, uint32_t n, uint32_t i) {
  float best[3] = {FLT_MAX, FLT_MAX, FLT_MAX};
  for (uint32_t j = 0; j < n; j++) {
    if (j == i) continue;
    float d2 = 0;
    for (int k = 0; k < 3; k++) d2 += (p[3 * j + k] - p[3 * i + k]) * (p[3 * j + k] - p[3 * i + k]);
    if (d2 < best[2]) {
      best[2] = d2;
      for (int a = 2; a > 0 && best[a] < best[a - 1]; a--) {
        float t = best[a];
        best[a] = best[a - 1];
        best[a - 1] = t;
      }
    }
  }
  return (best[0] + best[1] + best[2]) / 3.0f;
}

START_TEST(random_init_matches_the_recipe) {
  struct gs_model *m = NULL;
  ck_assert_int_eq(gs_model_new(1, &m, NULL), 0);
  struct gs_init_opts o;
  gs_init_opts_default(&o);
  ck_assert_uint_eq(o.count, 100000);
  o.count = 3000;
  o.box_min[2] = 0.0f; /* a flat box: anisotropic extent for the grid */
  o.box_max[2] = 0.2f;
  o.rgb[0] = 0.8f;
  o.rgb_jitter = 0.0f;
  ck_assert_int_eq(gs_model_init_random(m, &o, NULL), 0);
  ck_assert_uint_eq(m->count, 3000);
  for (uint32_t i = 0; i < m->count; i++) {
    for (int k = 0; k < 3; k++) {
      ck_assert(m->means[3 * i + k] >= o.box_min[k] && m->means[3 * i + k] <= o.box_max[k]);
      ck_assert_float_eq(m->quats[4 * i + k + 1], 0.0f);
    }
    ck_assert_float_eq(m->quats[4 * i], 1.0f);
    ck_assert(fabsf(gs_sigmoid(m->opacity[i]) - 0.1f) < 1e-6f);
    ck_assert(fabsf(GS_SH_C0 * m->sh[48 * i] + 0.5f - 0.8f) < 1e-6f);
    ck_assert_float_eq(m->sh[48 * i + 3], 0.0f);
    float expect = logf(sqrtf(fmaxf(brute_knn3(m->means, m->count, i), 1e-7f)));
    ck_assert_msg(fabsf(m->log_scales[3 * i] - expect) < 1e-5f, "splat %u: %g vs %g", i,
                  m->log_scales[3 * i], expect);
    ck_assert_float_eq(m->log_scales[3 * i + 1], m->log_scales[3 * i]);
  }
  /* Same seed, same model. */
  struct gs_model *m2 = NULL;
  ck_assert_int_eq(gs_model_new(1, &m2, NULL), 0);
  ck_assert_int_eq(gs_model_init_random(m2, &o, NULL), 0);
  ck_assert_int_eq(memcmp(m->means, m2->means, 3000 * 3 * sizeof(float)), 0);
  ck_assert_int_eq(memcmp(m->log_scales, m2->log_scales, 3000 * 3 * sizeof(float)), 0);
  gs_model_destroy(&m);
  gs_model_destroy(&m2);
}
END_TEST

START_TEST(bad_box_refused) {
  struct gs_model *m = NULL;
  ck_assert_int_eq(gs_model_new(1, &m, NULL), 0);
  struct gs_init_opts o;
  gs_init_opts_default(&o);
  o.box_max[1] = -2.0f;
  struct sw_err err = {0};
  ck_assert_int_eq(gs_model_init_random(m, &o, &err), SW_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "axis 1"));
  gs_model_destroy(&m);
}
END_TEST

START_TEST(cameras_extent) {
  struct gs_camera cams[4];
  memset(cams, 0, sizeof cams);
  float pos[4][3] = {{4, 0, 0}, {-4, 0, 0}, {0, 4, 0}, {0, -4, 0}};
  for (int i = 0; i < 4; i++) memcpy(cams[i].campos, pos[i], sizeof pos[i]);
  float c[3];
  ck_assert(fabsf(gs_cameras_extent(cams, 4, c) - 4.4f) < 1e-5f);
  ck_assert_float_eq(c[0], 0.0f);
  ck_assert_float_eq(gs_cameras_extent(cams, 0, NULL), 0.0f);
}
END_TEST

int main(void) {
  Suite *s = suite_create("gs_model");
  TCase *tc = tcase_create("model");
  tcase_add_test(tc, rng_deterministic_and_sane);
  tcase_add_test(tc, reserve_keeps_live_splats);
  tcase_add_test(tc, random_init_matches_the_recipe);
  tcase_add_test(tc, bad_box_refused);
  tcase_add_test(tc, cameras_extent);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
