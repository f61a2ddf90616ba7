/* test_gen.c: Check suite for the scene generator: its scenes load back through the NeRF-
 * synthetic loader with the generator's own cameras (a point on a generator ray projects back to
 * the pixel the ray came from), both kinds render content with a transparent background, output
 * is deterministic, and a scene without a test split gets the held-out split. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gs_gen.h"
#include "gs_model.h"
#include "gs_png.h"
#include "gs_scene.h"
#include "sw_fs.h"

static char tmpdir[64];

static void setup(void) {
  snprintf(tmpdir, sizeof tmpdir, "/tmp/gs_test_genXXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void teardown(void) { sw_fs_rm_rf(tmpdir, NULL); }

static struct gs_gen_opts opts(enum gs_gen_kind kind, uint32_t tr, uint32_t te, uint32_t res) {
  struct gs_gen_opts o = {.kind = kind,
                          .train_views = tr,
                          .test_views = te,
                          .resolution = res,
                          .seed = 5,
                          .threads = 2};
  return o;
}

START_TEST(generated_scene_loads_with_generator_cameras) {
  struct gs_gen_opts o = opts(GS_GEN_BRICKS, 20, 4, 64);
  char dir[128];
  snprintf(dir, sizeof dir, "%s/bricks", tmpdir);
  struct sw_err err = {0};
  ck_assert_msg(gs_gen_scene(dir, &o, &err) == 0, "%s", err.msg);
  struct gs_scene *sc = NULL;
  ck_assert_msg(gs_scene_load(dir, NULL, &sc, &err) == 0, "%s", err.msg);
  ck_assert_uint_eq(sc->n_train, 20);
  ck_assert_uint_eq(sc->n_test, 4);
  ck_assert_int_eq(sc->held_out, 0);
  ck_assert_uint_eq(sc->width, 64);
  ck_assert_uint_eq(sc->height, 64);
  ck_assert_int_eq(sc->has_aabb, 1);
  ck_assert_float_eq(sc->aabb_max[2], 1.2f);
  ck_assert_uint_eq(strlen(sc->sha256), 64);
  /* Cameras on the radius-4.5 sphere: extent = 1.1 x max distance from their centroid. */
  ck_assert(sc->extent > 1.0f && sc->extent < 1.1f * 9.0f);
  for (int t = 0; t < 2; t++) {
    uint32_t n = t ? sc->n_test : sc->n_train;
    for (uint32_t i = 0; i < n; i++) {
      const struct gs_view *v = t ? &sc->test[i] : &sc->train[i];
      float c2w[16];
      gs_gen_view_c2w(&o, t, i, c2w);
      for (int k = 0; k < 3; k++) ck_assert_float_eq(v->cam.campos[k], c2w[4 * k + 3]);
      /* Points along generator rays through several pixels project back onto those pixels. */
      static const float px[4][2] = {{0.5f, 0.5f}, {31.5f, 17.25f}, {63.9f, 40.0f}, {12.0f, 63.0f}};
      for (int p = 0; p < 4; p++) {
        float org[3], dir3[3];
        gs_gen_pixel_ray(c2w, 64, px[p][0], px[p][1], org, dir3);
        for (float s = 1.0f; s < 7.0f; s += 2.5f) {
          float q[3] = {org[0] + s * dir3[0], org[1] + s * dir3[1], org[2] + s * dir3[2]};
          float u, w, depth;
          ck_assert_int_eq(gs_camera_project(&v->cam, q, &u, &w, &depth), 0);
          ck_assert_msg(fabsf(u - px[p][0]) < 2e-3f && fabsf(w - px[p][1]) < 2e-3f,
                        "view %u: ray through (%g, %g) projects to (%g, %g)", i, px[p][0], px[p][1],
                        u, w);
          ck_assert(depth > 0);
        }
      }
      /* The scene centre is in front of every camera, near the image centre. */
      float centre[3] = {0, 0, 0}, u, w, depth;
      ck_assert_int_eq(gs_camera_project(&v->cam, centre, &u, &w, &depth), 0);
      ck_assert(fabsf(u - 32.0f) < 0.01f && fabsf(w - 32.0f) < 0.01f);
      ck_assert(fabsf(depth - 4.5f) < 1e-3f);
    }
  }
  gs_scene_destroy(&sc);
  ck_assert_ptr_null(sc);
}
END_TEST

/* Fraction of pixels with alpha > 0 in one generated PNG. */
static double coverage(const char *path, float *corner_alpha) {
  float *rgba = NULL;
  uint32_t w, h;
  ck_assert_int_eq(gs_png_read_rgba(path, &rgba, &w, &h, NULL, NULL), 0);
  size_t hits = 0;
  for (size_t i = 0; i < (size_t)w * h; i++) hits += rgba[4 * i + 3] > 0;
  *corner_alpha = rgba[3];
  free(rgba);
  return (double)hits / ((double)w * h);
}

START_TEST(both_kinds_have_content_and_transparent_background) {
  for (int k = 0; k < 2; k++) {
    struct gs_gen_opts o = opts((enum gs_gen_kind)k, 3, 1, 48);
    char dir[128], png[160];
    snprintf(dir, sizeof dir, "%s/%s", tmpdir, gs_gen_kind_name(o.kind));
    ck_assert_int_eq(gs_gen_scene(dir, &o, NULL), 0);
    for (int i = 0; i < 3; i++) {
      snprintf(png, sizeof png, "%s/train/r_%d.png", dir, i);
      float corner;
      double cov = coverage(png, &corner);
      /* Objects fill a good part of the view but not all of it; the top-left corner is sky. */
      ck_assert_msg(cov > 0.15 && cov < 0.9, "%s: coverage %g", png, cov);
      ck_assert_float_eq(corner, 0.0f);
    }
  }
}
END_TEST

START_TEST(deterministic_and_seed_dependent) {
  struct gs_gen_opts o = opts(GS_GEN_SHAPES, 4, 2, 32);
  char a[128], b[128], c[128];
  snprintf(a, sizeof a, "%s/a", tmpdir);
  snprintf(b, sizeof b, "%s/b", tmpdir);
  snprintf(c, sizeof c, "%s/c", tmpdir);
  ck_assert_int_eq(gs_gen_scene(a, &o, NULL), 0);
  o.threads = 1; /* the thread count must not change a byte */
  ck_assert_int_eq(gs_gen_scene(b, &o, NULL), 0);
  o.seed = 6;
  ck_assert_int_eq(gs_gen_scene(c, &o, NULL), 0);
  char ha[SW_SHA256_HEX_LEN], hb[SW_SHA256_HEX_LEN], hc[SW_SHA256_HEX_LEN];
  struct sw_err err = {0};
  ck_assert_msg(gs_scene_hash(a, ha, &err) == 0, "%s", err.msg);
  ck_assert_int_eq(gs_scene_hash(b, hb, NULL), 0);
  ck_assert_int_eq(gs_scene_hash(c, hc, NULL), 0);
  ck_assert_str_eq(ha, hb);
  ck_assert_str_ne(ha, hc);
}
END_TEST

START_TEST(no_test_views_gives_held_out_split) {
  struct gs_gen_opts o = opts(GS_GEN_BRICKS, 20, 0, 16);
  char dir[128];
  snprintf(dir, sizeof dir, "%s/ho", tmpdir);
  ck_assert_int_eq(gs_gen_scene(dir, &o, NULL), 0);
  struct gs_scene *sc = NULL;
  struct sw_err err = {0};
  ck_assert_msg(gs_scene_load(dir, NULL, &sc, &err) == 0, "%s", err.msg);
  ck_assert_int_eq(sc->held_out, 1);
  ck_assert_uint_eq(sc->n_test, 3); /* views 0, 8, 16 */
  ck_assert_uint_eq(sc->n_train, 17);
  ck_assert_str_eq(sc->test[0].name, "train/r_0.png");
  ck_assert_str_eq(sc->test[1].name, "train/r_8.png");
  ck_assert_str_eq(sc->test[2].name, "train/r_16.png");
  ck_assert_str_eq(sc->train[0].name, "train/r_1.png");
  ck_assert_str_eq(sc->train[7].name, "train/r_9.png");
  float c2w[16];
  gs_gen_view_c2w(&o, 0, 8, c2w);
  ck_assert_float_eq(sc->test[1].cam.campos[0], c2w[3]);
  gs_scene_destroy(&sc);
}
END_TEST

START_TEST(bad_options_refused) {
  struct sw_err err = {0};
  enum gs_gen_kind k;
  ck_assert_int_eq(gs_gen_kind_parse("castle", &k, &err), SW_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "bricks, shapes"));
  struct gs_gen_opts o = opts(GS_GEN_BRICKS, 0, 1, 64);
  sw_err_clear(&err);
  ck_assert_int_eq(gs_gen_scene(tmpdir, &o, &err), SW_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "train views"));
  o = opts(GS_GEN_BRICKS, 1, 1, 4);
  ck_assert_int_eq(gs_gen_scene(tmpdir, &o, NULL), SW_EINVAL);
}
END_TEST

int main(void) {
  Suite *s = suite_create("gs_gen");
  TCase *tc = tcase_create("gen");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, generated_scene_loads_with_generator_cameras);
  tcase_add_test(tc, both_kinds_have_content_and_transparent_background);
  tcase_add_test(tc, deterministic_and_seed_dependent);
  tcase_add_test(tc, no_test_views_gives_held_out_split);
  tcase_add_test(tc, bad_options_refused);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
