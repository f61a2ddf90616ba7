/* test_ply.c: Check suite for gs_ply: exact round trip (bit-exact values, byte-identical
 * re-write), the standard 3DGS header, reading other property orders / lower SH degrees / ascii /
 * big-endian doubles, and clear errors for wrong headers and truncated data. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gs_model.h"
#include "gs_ply.h"
#include "sw_fs.h"

static char tmpdir[64];

static void setup(void) {
  snprintf(tmpdir, sizeof tmpdir, "/tmp/gs_test_plyXXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void teardown(void) { sw_fs_rm_rf(tmpdir, NULL); }

/* A model whose every value is random, including awkward floats (denormal, negative zero, huge). */
static struct gs_model *random_model(uint32_t n, uint64_t seed) {
  struct gs_model *m = NULL;
  ck_assert_int_eq(gs_model_new(n, &m, NULL), 0);
  m->count = n;
  struct gs_rng rng;
  gs_rng_seed(&rng, seed);
  float *arrays[5] = {m->means, m->log_scales, m->quats, m->opacity, m->sh};
  size_t per[5] = {3, 3, 4, 1, 48};
  for (int a = 0; a < 5; a++)
    for (size_t i = 0; i < n * per[a]; i++) arrays[a][i] = 10.0f * gs_rng_normal(&rng);
  m->means[0] = 1e-42f;
  m->means[1] = -0.0f;
  m->sh[5] = 3.0e38f;
  return m;
}

static void assert_models_bit_equal(const struct gs_model *a, const struct gs_model *b) {
  ck_assert_uint_eq(a->count, b->count);
  size_t n = a->count;
  ck_assert_int_eq(memcmp(a->means, b->means, n * 3 * sizeof(float)), 0);
  ck_assert_int_eq(memcmp(a->log_scales, b->log_scales, n * 3 * sizeof(float)), 0);
  ck_assert_int_eq(memcmp(a->quats, b->quats, n * 4 * sizeof(float)), 0);
  ck_assert_int_eq(memcmp(a->opacity, b->opacity, n * sizeof(float)), 0);
  ck_assert_int_eq(memcmp(a->sh, b->sh, n * 48 * sizeof(float)), 0);
}

START_TEST(round_trip_exact) {
  struct gs_model *m = random_model(257, 7);
  char p1[128], p2[128];
  snprintf(p1, sizeof p1, "%s/a.ply", tmpdir);
  snprintf(p2, sizeof p2, "%s/b.ply", tmpdir);
  struct sw_err err = {0};
  ck_assert_int_eq(gs_ply_write(p1, m, &err), 0);
  struct gs_model *r = NULL;
  int degree = -1;
  ck_assert_int_eq(gs_ply_read(p1, &r, &degree, &err), 0);
  ck_assert_int_eq(degree, 3);
  assert_models_bit_equal(m, r);
  ck_assert_int_eq(gs_ply_write(p2, r, &err), 0);
  char *d1 = NULL, *d2 = NULL;
  size_t l1 = 0, l2 = 0;
  ck_assert_int_eq(sw_fs_read_all(p1, &d1, &l1, &err), 0);
  ck_assert_int_eq(sw_fs_read_all(p2, &d2, &l2, &err), 0);
  ck_assert_uint_eq(l1, l2);
  ck_assert_int_eq(memcmp(d1, d2, l1), 0);
  free(d1);
  free(d2);
  gs_model_destroy(&m);
  gs_model_destroy(&r);
}
END_TEST

START_TEST(empty_model_round_trips) {
  struct gs_model *m = NULL;
  ck_assert_int_eq(gs_model_new(1, &m, NULL), 0);
  char p[128];
  snprintf(p, sizeof p, "%s/e.ply", tmpdir);
  ck_assert_int_eq(gs_ply_write(p, m, NULL), 0);
  struct gs_model *r = NULL;
  ck_assert_int_eq(gs_ply_read(p, &r, NULL, NULL), 0);
  ck_assert_uint_eq(r->count, 0);
  gs_model_destroy(&m);
  gs_model_destroy(&r);
}
END_TEST

/* The header is the standard 3DGS one, and f_rest is channel-major in the body. */
START_TEST(standard_layout) {
  struct gs_model *m = random_model(2, 3);
  char p[128];
  snprintf(p, sizeof p, "%s/s.ply", tmpdir);
  ck_assert_int_eq(gs_ply_write(p, m, NULL), 0);
  char *d = NULL;
  size_t len = 0;
  ck_assert_int_eq(sw_fs_read_all(p, &d, &len, NULL), 0);
  char expect[8192];
  int off = snprintf(expect, sizeof expect,
                     "ply\nformat binary_little_endian 1.0\nelement vertex 2\n"
                     "property float x\nproperty float y\nproperty float z\n"
                     "property float nx\nproperty float ny\nproperty float nz\n"
                     "property float f_dc_0\nproperty float f_dc_1\nproperty float f_dc_2\n");
  for (int k = 0; k < 45; k++)
    off += snprintf(expect + off, sizeof expect - off, "property float f_rest_%d\n", k);
  off += snprintf(expect + off, sizeof expect - off,
                  "property float opacity\nproperty float scale_0\nproperty float scale_1\n"
                  "property float scale_2\nproperty float rot_0\nproperty float rot_1\n"
                  "property float rot_2\nproperty float rot_3\nend_header\n");
  ck_assert_uint_eq(len, (size_t)off + 2 * 62 * 4);
  ck_assert_int_eq(memcmp(d, expect, (size_t)off), 0);
  /* Splat 1, f_rest_16 = channel G (1), coefficient 2 => sh[2 * 3 + 1]. */
  float v;
  memcpy(&v, d + off + 62 * 4 + (9 + 16) * 4, 4);
  ck_assert_float_eq(v, m->sh[48 + 2 * 3 + 1]);
  /* rot_0 is w. */
  memcpy(&v, d + off + 62 * 4 + 58 * 4, 4);
  ck_assert_float_eq(v, m->quats[4]);
  free(d);
  gs_model_destroy(&m);
}
END_TEST

static void write_text(const char *path, const char *text) {
  ck_assert_int_eq(sw_fs_write_atomic(path, text, strlen(text), NULL), 0);
}

/* Properties in another order, ascii, SH degree 1 (9 f_rest), extra properties and elements. */
START_TEST(reads_other_orders_and_degrees) {
  char p[128];
  snprintf(p, sizeof p, "%s/o.ply", tmpdir);
  char text[4096];
  int off = snprintf(text, sizeof text,
                     "ply\nformat ascii 1.0\ncomment made by hand\nelement camera 1\n"
                     "property float fov\nelement vertex 2\nproperty float rot_3\n"
                     "property float rot_2\nproperty float rot_1\nproperty float rot_0\n"
                     "property uchar red\nproperty float opacity\n");
  for (int k = 8; k >= 0; k--)
    off += snprintf(text + off, sizeof text - off, "property float f_rest_%d\n", k);
  off += snprintf(text + off, sizeof text - off,
                  "property double scale_2\nproperty float scale_1\nproperty float scale_0\n"
                  "property float f_dc_2\nproperty float f_dc_1\nproperty float f_dc_0\n"
                  "property float z\nproperty float y\nproperty float x\n"
                  "element face 1\nproperty list uchar int vertex_indices\nend_header\n"
                  "0.7\n");
  for (int i = 0; i < 2; i++) {
    /* rot3..0, red, opacity, f_rest 8..0, scale2..0, dc2..0, z y x: value = 100 i + slot */
    off += snprintf(text + off, sizeof text - off, "%d %d %d %d 255 %d", 100 * i + 4, 100 * i + 3,
                    100 * i + 2, 100 * i + 1, 100 * i + 5);
    for (int k = 8; k >= 0; k--)
      off += snprintf(text + off, sizeof text - off, " %d", 100 * i + 10 + k);
    off += snprintf(text + off, sizeof text - off, " %d %d %d %d %d %d %d %d %d\n", 100 * i + 23,
                    100 * i + 22, 100 * i + 21, 100 * i + 33, 100 * i + 32, 100 * i + 31,
                    100 * i + 43, 100 * i + 42, 100 * i + 41);
  }
  snprintf(text + off, sizeof text - off, "3 0 1 0\n");
  write_text(p, text);
  struct gs_model *m = NULL;
  int degree = -1;
  struct sw_err err = {0};
  ck_assert_msg(gs_ply_read(p, &m, &degree, &err) == 0, "%s", err.msg);
  ck_assert_int_eq(degree, 1);
  ck_assert_uint_eq(m->count, 2);
  for (int i = 0; i < 2; i++) {
    float b = 100.0f * i;
    ck_assert_float_eq(m->means[3 * i + 0], b + 41);
    ck_assert_float_eq(m->means[3 * i + 2], b + 43);
    ck_assert_float_eq(m->quats[4 * i + 0], b + 1); /* rot_0 = w */
    ck_assert_float_eq(m->quats[4 * i + 3], b + 4);
    ck_assert_float_eq(m->opacity[i], b + 5);
    ck_assert_float_eq(m->log_scales[3 * i + 2], b + 23);
    const float *sh = m->sh + 48 * i;
    ck_assert_float_eq(sh[0], b + 31); /* dc R */
    ck_assert_float_eq(sh[2], b + 33); /* dc B */
    /* Degree 1: 3 coefficients per channel, channel-major: f_rest_{c*3 + j-1}. */
    for (int c = 0; c < 3; c++)
      for (int j = 1; j <= 3; j++) ck_assert_float_eq(sh[3 * j + c], b + 10 + c * 3 + (j - 1));
    for (int j = 4; j < 16; j++)
      for (int c = 0; c < 3; c++) ck_assert_float_eq(sh[3 * j + c], 0.0f);
  }
  gs_model_destroy(&m);
}
END_TEST

static void put_be(unsigned char *dst, const void *src, size_t n) {
  const unsigned char *s = src;
  for (size_t i = 0; i < n; i++) dst[i] = s[n - 1 - i];
}

START_TEST(reads_big_endian_doubles_degree0) {
  char p[128];
  snprintf(p, sizeof p, "%s/be.ply", tmpdir);
  static const char *names[] = {"x",      "y",       "z",       "f_dc_0",  "f_dc_1",
                                "f_dc_2", "opacity", "scale_0", "scale_1", "scale_2",
                                "rot_0",  "rot_1",   "rot_2",   "rot_3"};
  char head[2048];
  int off = snprintf(head, sizeof head, "ply\nformat binary_big_endian 1.0\nelement vertex 1\n");
  for (int k = 0; k < 14; k++)
    off += snprintf(head + off, sizeof head - off, "property double %s\n", names[k]);
  off += snprintf(head + off, sizeof head - off, "end_header\n");
  unsigned char buf[4096];
  memcpy(buf, head, (size_t)off);
  for (int k = 0; k < 14; k++) {
    double v = 0.25 * k - 1.0;
    put_be(buf + off + 8 * k, &v, 8);
  }
  ck_assert_int_eq(sw_fs_write_atomic(p, buf, (size_t)off + 14 * 8, NULL), 0);
  struct gs_model *m = NULL;
  int degree = -1;
  struct sw_err err = {0};
  ck_assert_msg(gs_ply_read(p, &m, &degree, &err) == 0, "%s", err.msg);
  ck_assert_int_eq(degree, 0);
  ck_assert_float_eq(m->means[1], -0.75f);
  ck_assert_float_eq(m->sh[2], 0.25f);
  ck_assert_float_eq(m->opacity[0], 0.5f);
  ck_assert_float_eq(m->quats[3], 2.25f);
  gs_model_destroy(&m);
}
END_TEST

static void expect_error(const char *path, int code, const char *word) {
  struct sw_err err = {0};
  struct gs_model *m = (struct gs_model *)1;
  ck_assert_int_eq(gs_ply_read(path, &m, NULL, &err), code);
  ck_assert_ptr_null(m);
  ck_assert_msg(strstr(err.msg, path) != NULL, "message '%s' lacks the path", err.msg);
  ck_assert_msg(strstr(err.msg, word) != NULL, "message '%s' lacks '%s'", err.msg, word);
}

START_TEST(wrong_headers) {
  expect_error(GS_FIXTURES_DIR "/bad_header.ply", SW_EINVAL, "lacks property 'f_dc_0'");
  expect_error(GS_FIXTURES_DIR "/not_a_ply.ply", SW_EINVAL, "not a PLY");
  expect_error(GS_FIXTURES_DIR "/bad_format.ply", SW_EINVAL, "unknown PLY format");
  expect_error(GS_FIXTURES_DIR "/missing.ply", SW_ENOTFOUND, "No such");
}
END_TEST

START_TEST(truncated_data) {
  struct gs_model *m = random_model(10, 1);
  char p[128];
  snprintf(p, sizeof p, "%s/t.ply", tmpdir);
  ck_assert_int_eq(gs_ply_write(p, m, NULL), 0);
  char *d = NULL;
  size_t len = 0;
  ck_assert_int_eq(sw_fs_read_all(p, &d, &len, NULL), 0);
  ck_assert_int_eq(sw_fs_write_atomic(p, d, len - 100, NULL), 0);
  expect_error(p, SW_EINVAL, "truncated");
  /* Header cut before end_header. */
  ck_assert_int_eq(sw_fs_write_atomic(p, d, 200, NULL), 0);
  expect_error(p, SW_EINVAL, "end_header");
  free(d);
  gs_model_destroy(&m);
}
END_TEST

START_TEST(count_beyond_file_refused_before_allocating) {
  char p[128];
  snprintf(p, sizeof p, "%s/huge.ply", tmpdir);
  write_text(p, "ply\nformat binary_little_endian 1.0\nelement vertex 4000000000\n"
                "property float x\nproperty float y\nproperty float z\nproperty float f_dc_0\n"
                "property float f_dc_1\nproperty float f_dc_2\nproperty float opacity\n"
                "property float scale_0\nproperty float scale_1\nproperty float scale_2\n"
                "property float rot_0\nproperty float rot_1\nproperty float rot_2\n"
                "property float rot_3\nend_header\n");
  expect_error(p, SW_EINVAL, "truncated");
}
END_TEST

/* A list element before the vertex element in an ascii file: the list's length, not the value of
 * its last item, says how many tokens to skip (a length of 3 whose first item is 0 used to stop
 * the skip early and shift every vertex). */
START_TEST(ascii_list_before_vertex) {
  char p[128];
  snprintf(p, sizeof p, "%s/l.ply", tmpdir);
  write_text(p, "ply\nformat ascii 1.0\nelement face 2\nproperty list uchar int idx\n"
                "element vertex 1\nproperty float x\nproperty float y\nproperty float z\n"
                "property float f_dc_0\nproperty float f_dc_1\nproperty float f_dc_2\n"
                "property float opacity\nproperty float scale_0\nproperty float scale_1\n"
                "property float scale_2\nproperty float rot_0\nproperty float rot_1\n"
                "property float rot_2\nproperty float rot_3\nend_header\n"
                "3 0 1 2\n2 9 9\n1 2 3 4 5 6 7 8 9 10 11 12 13 14\n");
  struct gs_model *m = NULL;
  struct sw_err err = {0};
  ck_assert_msg(gs_ply_read(p, &m, NULL, &err) == 0, "%s", err.msg);
  ck_assert_uint_eq(m->count, 1);
  ck_assert_float_eq(m->means[0], 1.0f);
  ck_assert_float_eq(m->means[2], 3.0f);
  ck_assert_float_eq(m->opacity[0], 7.0f);
  ck_assert_float_eq(m->quats[3], 14.0f);
  gs_model_destroy(&m);
  /* A negative list length is an error, not a conversion of -1 to a size. */
  write_text(p, "ply\nformat ascii 1.0\nelement face 1\nproperty list uchar int idx\n"
                "element vertex 1\nproperty float x\nproperty float y\nproperty float z\n"
                "property float f_dc_0\nproperty float f_dc_1\nproperty float f_dc_2\n"
                "property float opacity\nproperty float scale_0\nproperty float scale_1\n"
                "property float scale_2\nproperty float rot_0\nproperty float rot_1\n"
                "property float rot_2\nproperty float rot_3\nend_header\n"
                "-1\n1 2 3 4 5 6 7 8 9 10 11 12 13 14\n");
  expect_error(p, SW_EINVAL, "list length");
}
END_TEST

int main(void) {
  Suite *s = suite_create("gs_ply");
  TCase *tc = tcase_create("ply");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, round_trip_exact);
  tcase_add_test(tc, empty_model_round_trips);
  tcase_add_test(tc, standard_layout);
  tcase_add_test(tc, reads_other_orders_and_degrees);
  tcase_add_test(tc, reads_big_endian_doubles_degree0);
  tcase_add_test(tc, wrong_headers);
  tcase_add_test(tc, truncated_data);
  tcase_add_test(tc, count_beyond_file_refused_before_allocating);
  tcase_add_test(tc, ascii_list_before_vertex);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
