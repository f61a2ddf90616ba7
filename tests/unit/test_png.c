/* test_png.c: Check suite for gs_png: exact 8- and 16-bit round trips, and clear errors for a
 * missing, truncated, corrupt or non-PNG file. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gs_png.h"
#include "sw_fs.h"

#ifndef GS_FIXTURES_DIR
#error "GS_FIXTURES_DIR must name tests/fixtures/pipeline"
#endif

static char tmpdir[64];

static void setup(void) {
  snprintf(tmpdir, sizeof tmpdir, "/tmp/gs_test_pngXXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void teardown(void) { sw_fs_rm_rf(tmpdir, NULL); }

START_TEST(round_trip_8bit_rgba) {
  const uint32_t w = 7, h = 5;
  uint8_t px[7 * 5 * 4];
  for (size_t i = 0; i < sizeof px; i++) px[i] = (uint8_t)(i * 37 + 11);
  char path[128];
  snprintf(path, sizeof path, "%s/a.png", tmpdir);
  struct sw_err err = {0};
  ck_assert_int_eq(gs_png_write8(path, px, w, h, 4, &err), 0);
  float *rgba = NULL;
  uint32_t rw = 0, rh = 0;
  int depth = 0;
  ck_assert_int_eq(gs_png_read_rgba(path, &rgba, &rw, &rh, &depth, &err), 0);
  ck_assert_uint_eq(rw, w);
  ck_assert_uint_eq(rh, h);
  ck_assert_int_eq(depth, 8);
  for (size_t i = 0; i < sizeof px; i++) ck_assert_float_eq(rgba[i], px[i] / 255.0f);
  free(rgba);
  uint32_t sw = 0, sh = 0;
  ck_assert_int_eq(gs_png_read_size(path, &sw, &sh, &err), 0);
  ck_assert_uint_eq(sw, w);
  ck_assert_uint_eq(sh, h);
}
END_TEST

START_TEST(round_trip_16bit_rgb_gets_opaque_alpha) {
  const uint32_t w = 4, h = 3;
  uint16_t px[4 * 3 * 3];
  for (size_t i = 0; i < sizeof px / sizeof px[0]; i++) px[i] = (uint16_t)(i * 5413 + 7);
  char path[128];
  snprintf(path, sizeof path, "%s/b.png", tmpdir);
  struct sw_err err = {0};
  ck_assert_int_eq(gs_png_write16(path, px, w, h, 3, &err), 0);
  float *rgba = NULL;
  uint32_t rw, rh;
  int depth = 0;
  ck_assert_int_eq(gs_png_read_rgba(path, &rgba, &rw, &rh, &depth, &err), 0);
  ck_assert_int_eq(depth, 16);
  for (size_t p = 0; p < w * h; p++) {
    for (int c = 0; c < 3; c++) ck_assert_float_eq(rgba[4 * p + c], px[3 * p + c] / 65535.0f);
    ck_assert_float_eq(rgba[4 * p + 3], 1.0f);
  }
  free(rgba);
}
END_TEST

START_TEST(float_writer_clamps_and_rounds) {
  float px[4 * 3] = {-0.5f, 0.0f, 0.2f, 1.0f, 1.7f, 0.5f, 0.999f, 0.001f, 0.3f, 0.6f, 0.9f, 0.1f};
  char path[128];
  snprintf(path, sizeof path, "%s/c.png", tmpdir);
  struct sw_err err = {0};
  ck_assert_int_eq(gs_png_write_float(path, px, 2, 2, 3, &err), 0);
  float *rgba = NULL;
  uint32_t w, h;
  ck_assert_int_eq(gs_png_read_rgba(path, &rgba, &w, &h, NULL, &err), 0);
  ck_assert_float_eq(rgba[0], 0.0f);
  ck_assert_float_eq(rgba[2], 51.0f / 255.0f);
  ck_assert_float_eq(rgba[3], 1.0f); /* RGB input: opaque */
  ck_assert_float_eq(rgba[4], 1.0f);
  ck_assert_float_eq(rgba[5], 1.0f);            /* 1.7 clamped */
  ck_assert_float_eq(rgba[6], 128.0f / 255.0f); /* 0.5 * 255 + 0.5 rounds to 128 */
  ck_assert_float_eq(rgba[8], 255.0f / 255.0f); /* 0.999 rounds up */
  free(rgba);
}
END_TEST

START_TEST(fixture_decodes) {
  struct sw_err err = {0};
  float *rgba = NULL;
  uint32_t w, h;
  ck_assert_int_eq(gs_png_read_rgba(GS_FIXTURES_DIR "/good16x16.png", &rgba, &w, &h, NULL, &err),
                   0);
  ck_assert_uint_eq(w, 16);
  /* Pixel (3, 5): r = 48, g = 80, b = 128, a = 255. */
  const float *p = rgba + 4 * (5 * 16 + 3);
  ck_assert_float_eq(p[0], 48 / 255.0f);
  ck_assert_float_eq(p[1], 80 / 255.0f);
  ck_assert_float_eq(p[2], 128 / 255.0f);
  ck_assert_float_eq(p[3], 1.0f);
  free(rgba);
}
END_TEST

/* Each broken file yields SW_EINVAL (or SW_ENOTFOUND) with the path and the named problem. */
static void expect_error(const char *path, int code, const char *word) {
  struct sw_err err = {0};
  float *rgba = (float *)1;
  uint32_t w, h;
  ck_assert_int_eq(gs_png_read_rgba(path, &rgba, &w, &h, NULL, &err), code);
  ck_assert_ptr_null(rgba);
  ck_assert_int_eq(err.code, code);
  ck_assert_msg(strstr(err.msg, path) != NULL, "message '%s' lacks the path", err.msg);
  ck_assert_msg(strstr(err.msg, word) != NULL, "message '%s' lacks '%s'", err.msg, word);
}

START_TEST(missing_file) { expect_error(GS_FIXTURES_DIR "/no_such.png", SW_ENOTFOUND, "No such"); }
END_TEST
START_TEST(truncated_file) {
  expect_error(GS_FIXTURES_DIR "/truncated.png", SW_EINVAL, "truncated");
}
END_TEST
START_TEST(corrupt_file) { expect_error(GS_FIXTURES_DIR "/corrupt.png", SW_EINVAL, "corrupt"); }
END_TEST
START_TEST(bad_crc_file) { expect_error(GS_FIXTURES_DIR "/bad_crc.png", SW_EINVAL, "corrupt"); }
END_TEST
START_TEST(not_a_png) { expect_error(GS_FIXTURES_DIR "/not_a_png.png", SW_EINVAL, "not a PNG"); }
END_TEST

START_TEST(writer_rejects_bad_channels) {
  struct sw_err err = {0};
  uint8_t px[4] = {0};
  char path[128];
  snprintf(path, sizeof path, "%s/d.png", tmpdir);
  ck_assert_int_eq(gs_png_write8(path, px, 2, 2, 1, &err), SW_EINVAL);
  ck_assert_int_eq(sw_fs_exists(path), 0);
}
END_TEST

int main(void) {
  Suite *s = suite_create("gs_png");
  TCase *tc = tcase_create("png");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, round_trip_8bit_rgba);
  tcase_add_test(tc, round_trip_16bit_rgb_gets_opaque_alpha);
  tcase_add_test(tc, float_writer_clamps_and_rounds);
  tcase_add_test(tc, fixture_decodes);
  tcase_add_test(tc, missing_file);
  tcase_add_test(tc, truncated_file);
  tcase_add_test(tc, corrupt_file);
  tcase_add_test(tc, bad_crc_file);
  tcase_add_test(tc, not_a_png);
  tcase_add_test(tc, writer_rejects_bad_channels);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
