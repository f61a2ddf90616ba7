/* test_scene_formats.c: Check suite for the scene formats beyond NeRF-synthetic: the generator's
 * COLMAP (binary, text) and transforms.json scenes load with the generator's own poses and lens
 * (off-centre principal point, radial distortion), points3D comes with colours, per-frame
 * intrinsics win over global ones, JPEG decodes with its EXIF orientation applied, undistortion
 * maps a distorted rendering back onto the pinhole one, and files that are not regular are
 * refused. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gs_gen.h"
#include "gs_image.h"
#include "gs_png.h"
#include "gs_scene.h"
#include "gs_scene_int.h"
#include "sw_fs.h"

static char tmpdir[64];

static void setup(void) {
  snprintf(tmpdir, sizeof tmpdir, "/tmp/gs_test_fmtXXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void teardown(void) { sw_fs_rm_rf(tmpdir, NULL); }

static void write_text(const char *path, const char *text) {
  struct sw_err err = {0};
  ck_assert_msg(sw_fs_write_atomic(path, text, strlen(text), &err) == 0, "%s", err.msg);
}

static struct gs_gen_opts gen_opts(enum gs_gen_layout layout, enum gs_gen_lens_kind lens) {
  struct gs_gen_opts o = {.kind = GS_GEN_SHAPES,
                          .train_views = 9,
                          .test_views = 0,
                          .resolution = 48,
                          .seed = 3,
                          .threads = 2,
                          .layout = layout,
                          .lens = lens};
  return o;
}

/* Each capture layout loads with the generator's poses (the same as its NeRF layout's) and its
 * lens, in the same held-out split. */
START_TEST(capture_layouts_carry_the_generator_cameras) {
  static const enum gs_gen_layout layouts[3] = {GS_GEN_LAYOUT_COLMAP_BIN, GS_GEN_LAYOUT_COLMAP_TXT,
                                                GS_GEN_LAYOUT_TRANSFORMS};
  static const char *formats[3] = {"COLMAP binary", "COLMAP text", "transforms.json"};
  struct sw_err err = {0};
  char ref_dir[128];
  snprintf(ref_dir, sizeof ref_dir, "%s/nerf", tmpdir);
  struct gs_gen_opts ro = gen_opts(GS_GEN_LAYOUT_NERF, GS_GEN_LENS_PINHOLE);
  ck_assert_msg(gs_gen_scene(ref_dir, &ro, &err) == 0, "%s", err.msg);
  struct gs_scene *ref = NULL;
  ck_assert_msg(gs_scene_load(ref_dir, NULL, &ref, &err) == 0, "%s", err.msg);
  struct gs_scene_opts off = {.normalize = GS_NORMALIZE_OFF};
  struct gs_gen_lens lens;
  struct gs_gen_opts o = gen_opts(layouts[_i], GS_GEN_LENS_DISTORTED);
  gs_gen_lens_of(&o, &lens);
  ck_assert_float_ne(lens.cx, 24.0f);
  char dir[128];
  snprintf(dir, sizeof dir, "%s/cap%d", tmpdir, _i);
  ck_assert_msg(gs_gen_scene(dir, &o, &err) == 0, "%s", err.msg);
  struct gs_scene *sc = NULL;
  ck_assert_msg(gs_scene_load(dir, &off, &sc, &err) == 0, "%s", err.msg);
  ck_assert_str_eq(sc->format, formats[_i]);
  ck_assert_uint_eq(sc->n_train, ref->n_train);
  ck_assert_uint_eq(sc->n_test, ref->n_test);
  ck_assert_int_eq(sc->held_out, 1);
  for (uint32_t v = 0; v < sc->n_train; v++) {
    const struct gs_camera *a = &sc->train[v].cam, *b = &ref->train[v].cam;
    for (int k = 0; k < 16; k++) ck_assert_float_eq_tol(a->viewmat[k], b->viewmat[k], 2e-5f);
    for (int k = 0; k < 3; k++) ck_assert_float_eq_tol(a->campos[k], b->campos[k], 2e-5f);
    ck_assert_float_eq_tol(a->fx, lens.f, 1e-3f);
    ck_assert_float_eq_tol(a->cx, lens.cx, 1e-3f);
    ck_assert_float_eq_tol(a->cy, lens.cy, 1e-3f);
  }
  if (layouts[_i] != GS_GEN_LAYOUT_TRANSFORMS) {
    ck_assert_uint_gt(sc->n_points, 50);
    uint32_t coloured = 0;
    for (uint32_t i = 0; i < sc->n_points; i++)
      coloured += sc->colors[3 * i] != sc->colors[3 * i + 1] || sc->colors[3 * i] != 255;
    ck_assert_uint_gt(coloured, sc->n_points / 2);
  }
  gs_scene_destroy(&sc);
  gs_scene_destroy(&ref);
}
END_TEST

/* The share of pixels where a loaded view and the pinhole reference view, shifted by the principal
 * points' offset (dx, dy whole pixels), differ by more than 0.2 in a channel: misaligned content
 * (edges, texture). The blur of bilinear resampling reaches some edge pixels too (1.7% here),
 * misalignment reaches three times as many. */
static double shifted_diff(const float *a, const float *ref, uint32_t res, int dx, int dy) {
  uint32_t bad = 0, cnt = 0;
  for (uint32_t y = 0; y < res; y++)
    for (uint32_t x = 0; x < res; x++) {
      int rx = (int)x - dx, ry = (int)y - dy;
      if (rx < 0 || ry < 0 || rx >= (int)res || ry >= (int)res) continue;
      float worst = 0;
      for (int c = 0; c < 3; c++)
        worst = fmaxf(worst, fabsf(a[3 * (y * res + x) + c] -
                                   ref[3 * ((uint32_t)ry * res + (uint32_t)rx) + c]));
      bad += worst > 0.2f;
      cnt++;
    }
  return (double)bad / cnt;
}

/* A strongly distorted capture, undistorted at load, shows what the pinhole camera shows (up to
 * resampling); without undistortion it would not: the distortion is applied, not ignored. */
START_TEST(undistorted_capture_matches_the_pinhole_view) {
  const uint32_t res = 100; /* the principal point offsets are whole pixels: 6 and -4 */
  struct sw_err err = {0};
  char ref_dir[128], dir[128], raw_dir[128];
  snprintf(ref_dir, sizeof ref_dir, "%s/pin", tmpdir);
  snprintf(dir, sizeof dir, "%s/dist", tmpdir);
  snprintf(raw_dir, sizeof raw_dir, "%s/raw", tmpdir);
  struct gs_gen_opts ro = gen_opts(GS_GEN_LAYOUT_NERF, GS_GEN_LENS_PINHOLE);
  ro.resolution = res;
  ro.train_views = 3;
  ck_assert_msg(gs_gen_scene(ref_dir, &ro, &err) == 0, "%s", err.msg);
  struct gs_gen_opts o = gen_opts(GS_GEN_LAYOUT_COLMAP_TXT, GS_GEN_LENS_DISTORTED);
  o.resolution = res;
  o.train_views = 3;
  o.k1 = -0.3f;
  o.k2 = 0.05f;
  ck_assert_msg(gs_gen_scene(dir, &o, &err) == 0, "%s", err.msg);
  /* The same files with the distortion terms removed from cameras.txt: what ignoring it gives. */
  ck_assert_msg(gs_gen_scene(raw_dir, &o, &err) == 0, "%s", err.msg);
  struct gs_gen_lens lens;
  gs_gen_lens_of(&o, &lens);
  char path[256], line[256];
  snprintf(path, sizeof path, "%s/sparse/0/cameras.txt", raw_dir);
  snprintf(line, sizeof line, "1 PINHOLE %u %u %.9g %.9g %.9g %.9g\n", res, res, (double)lens.f,
           (double)lens.f, (double)lens.cx, (double)lens.cy);
  write_text(path, line);
  struct gs_scene_opts off = {.normalize = GS_NORMALIZE_OFF};
  struct gs_scene *ref = NULL, *sc = NULL, *raw = NULL;
  ck_assert_msg(gs_scene_load(ref_dir, NULL, &ref, &err) == 0, "%s", err.msg);
  ck_assert_msg(gs_scene_load(dir, &off, &sc, &err) == 0, "%s", err.msg);
  ck_assert_msg(gs_scene_load(raw_dir, &off, &raw, &err) == 0, "%s", err.msg);
  int dx = (int)lroundf(lens.cx - 0.5f * res), dy = (int)lroundf(lens.cy - 0.5f * res);
  ck_assert_float_eq_tol(lens.cx - 0.5f * res, (float)dx, 1e-4f);
  ck_assert_float_eq_tol(lens.cy - 0.5f * res, (float)dy, 1e-4f);
  for (uint32_t v = 0; v < 2; v++) {
    double undist = shifted_diff(sc->train[v].rgb, ref->train[v].rgb, res, dx, dy);
    double ignored = shifted_diff(raw->train[v].rgb, ref->train[v].rgb, res, dx, dy);
    ck_assert_msg(undist < 0.5 * ignored && undist < 0.03,
                  "view %u: %g of the undistorted pixels differ from the pinhole view, %g of the "
                  "distorted ones",
                  v, undist, ignored);
  }
  gs_scene_destroy(&ref);
  gs_scene_destroy(&sc);
  gs_scene_destroy(&raw);
}
END_TEST

/* Per-frame intrinsics win over global ones; a missing image is one warning; a fisheye model is
 * refused by name. */
START_TEST(transforms_per_frame_intrinsics) {
  char dir[128], path[256];
  snprintf(dir, sizeof dir, "%s/tf", tmpdir);
  snprintf(path, sizeof path, "%s/images", dir);
  ck_assert_int_eq(sw_fs_mkdir_p(path, NULL), 0);
  uint8_t px[20 * 10 * 4];
  memset(px, 200, sizeof px);
  for (int i = 0; i < 3; i++) {
    snprintf(path, sizeof path, "%s/images/f%d.png", dir, i);
    ck_assert_int_eq(gs_png_write8(path, px, 20, 10, 4, NULL), 0);
  }
  snprintf(path, sizeof path, "%s/transforms.json", dir);
  write_text(path, "{\"fl_x\": 30, \"cx\": 9, \"cy\": 4, \"frames\": ["
                   "{\"file_path\": \"images/f0.png\", \"transform_matrix\": "
                   "[[1,0,0,0],[0,1,0,0],[0,0,1,4],[0,0,0,1]]},"
                   "{\"file_path\": \"images/f1.png\", \"fl_x\": 40, \"fl_y\": 41, \"cx\": 11, "
                   "\"transform_matrix\": [[1,0,0,1],[0,1,0,0],[0,0,1,4],[0,0,0,1]]},"
                   "{\"file_path\": \"images/gone.png\", \"transform_matrix\": "
                   "[[1,0,0,1],[0,1,0,0],[0,0,1,4],[0,0,0,1]]},"
                   "{\"file_path\": \"images/f2.png\", \"transform_matrix\": "
                   "[[1,0,0,2],[0,1,0,0],[0,0,1,4],[0,0,0,1]]}]}");
  struct gs_scene_opts o = {.holdout_every = 100, .normalize = GS_NORMALIZE_OFF};
  struct gs_scene *sc = NULL;
  struct sw_err err = {0};
  ck_assert_msg(gs_scene_load(dir, &o, &sc, &err) == 0, "%s", err.msg);
  ck_assert_uint_eq(sc->n_train + sc->n_test, 3);
  ck_assert_msg(strstr(sc->warning, "1 of 4 frames skipped") && strstr(sc->warning, "gone.png"),
                "%s", sc->warning);
  const struct gs_camera *c0 = &sc->test[0].cam, *c1 = &sc->train[0].cam;
  ck_assert_float_eq(c0->fx, 30.0f);
  ck_assert_float_eq(c0->fy, 30.0f);
  ck_assert_float_eq(c0->cx, 9.0f);
  ck_assert_float_eq(c1->fx, 40.0f);
  ck_assert_float_eq(c1->fy, 41.0f);
  ck_assert_float_eq(c1->cx, 11.0f);
  ck_assert_float_eq(c1->cy, 4.0f);
  gs_scene_destroy(&sc);
  o.missing_frames_error = 1;
  sw_err_clear(&err); /* the first error of an sw_err wins: clear it between cases */
  ck_assert_int_eq(gs_scene_load(dir, &o, &sc, &err), SW_ENOTFOUND);
  ck_assert_msg(strstr(err.msg, "gone.png: no such file"), "%s", err.msg);
  write_text(path, "{\"fl_x\": 30, \"camera_model\": \"OPENCV_FISHEYE\", \"frames\": ["
                   "{\"file_path\": \"images/f0.png\", \"transform_matrix\": "
                   "[[1,0,0,0],[0,1,0,0],[0,0,1,4],[0,0,0,1]]}]}");
  sw_err_clear(&err);
  ck_assert_int_eq(gs_scene_load(dir, &o, &sc, &err), SW_EINVAL);
  ck_assert_msg(strstr(err.msg, "OPENCV_FISHEYE") && strstr(err.msg, "transforms.json"), "%s",
                err.msg);
}
END_TEST

/* A JPEG stored sideways with EXIF orientation 6 (rotate 90 degrees clockwise to display) decodes
 * upright: a 6x4 stored image becomes 4x6 with the stored top-left corner at the top right. */
START_TEST(jpeg_exif_orientation) {
  uint8_t rgb[6 * 4 * 3];
  for (int y = 0; y < 4; y++)
    for (int x = 0; x < 6; x++) {
      uint8_t *p = rgb + 3 * (y * 6 + x);
      int red = x < 3 && y < 2; /* the stored top-left block */
      p[0] = red ? 250 : 10, p[1] = 10, p[2] = red ? 10 : 240;
    }
  char path[128];
  snprintf(path, sizeof path, "%s/r.jpg", tmpdir);
  struct sw_err err = {0};
  for (int orient = 0; orient <= 6; orient += 6) {
    ck_assert_msg(gs_image_write_jpeg(path, rgb, 6, 4, 100, orient, &err) == 0, "%s", err.msg);
    char *data = NULL;
    size_t len = 0;
    ck_assert_int_eq(sw_fs_read_all(path, &data, &len, NULL), 0);
    ck_assert_int_eq(gs_image_jpeg_orientation(data, len), orient ? orient : 1);
    float *px = NULL;
    uint32_t w, h;
    ck_assert_msg(gs_image_decode(path, data, len, &px, &w, &h, &err) == 0, "%s", err.msg);
    uint32_t sw, sh;
    ck_assert_int_eq(gs_image_decode_size(path, data, len, &sw, &sh, NULL), 0);
    ck_assert_uint_eq(sw, w);
    ck_assert_uint_eq(sh, h);
    if (orient == 0) {
      ck_assert_uint_eq(w, 6);
      ck_assert_uint_eq(h, 4);
      ck_assert_float_gt(px[0], 0.7f); /* top-left red */
    } else {
      ck_assert_uint_eq(w, 4);
      ck_assert_uint_eq(h, 6);
      ck_assert_float_gt(px[4 * 3], 0.7f);               /* top-right red */
      ck_assert_float_lt(px[0], 0.3f);                   /* top-left blue */
      ck_assert_float_gt(px[4 * (5 * 4 + 3) + 2], 0.7f); /* bottom-right blue */
    }
    ck_assert_float_eq(px[3], 1.0f);
    free(px);
    /* Truncated: refused, not patched over. */
    sw_err_clear(&err);
    ck_assert_int_eq(gs_image_decode(path, data, len / 2, &px, &w, &h, &err), SW_EINVAL);
    ck_assert_msg(strstr(err.msg, "JPEG") && strstr(err.msg, "r.jpg"), "%s", err.msg);
    free(data);
  }
  sw_err_clear(&err);
  ck_assert_int_eq(gs_image_decode(path, "GIF89a....", 10, &(float *){NULL}, &(uint32_t){0},
                                   &(uint32_t){0}, &err),
                   SW_EINVAL);
  ck_assert_msg(strstr(err.msg, "neither a PNG nor a JPEG"), "%s", err.msg);
}
END_TEST

/* Undistortion samples the captured image where the lens sent each pinhole ray: a pattern
 * distorted by the forward model comes back. */
START_TEST(undistort_inverts_the_lens) {
  const uint32_t w = 64, h = 48;
  struct gs_intrinsics in = {.w = w,
                             .h = h,
                             .fx = 50,
                             .fy = 52,
                             .cx = 35,
                             .cy = 21,
                             .k = {-0.08, 0.02, 0, 0},
                             .p = {0.002, -0.001}};
  ck_assert_int_eq(gs_intrinsics_distorted(&in), 1);
  float *pin = malloc((size_t)w * h * 3 * 4), *cap = malloc((size_t)w * h * 3 * 4);
  /* A smooth pattern as the pinhole camera sees it, as a function of the ray (x, y). */
#define PATTERN(x, y) (0.5 + 0.4 * sin(6.0 * (x)) * cos(5.0 * (y)))
  for (uint32_t v = 0; v < h; v++)
    for (uint32_t u = 0; u < w; u++) {
      double x = (u + 0.5 - in.cx) / in.fx, y = (v + 0.5 - in.cy) / in.fy;
      for (int c = 0; c < 3; c++) pin[3 * (v * w + u) + c] = (float)PATTERN(x, y);
      /* The captured pixel (u, v) shows the ray whose distortion lands there: invert D by
       * fixed-point iteration for the test only. */
      double xd = x, yd = y, rx = x, ry = y;
      for (int it = 0; it < 50; it++) {
        double ex, ey;
        gs_intrinsics_distort(&in, rx, ry, &ex, &ey);
        rx += xd - ex;
        ry += yd - ey;
      }
      for (int c = 0; c < 3; c++) cap[3 * (v * w + u) + c] = (float)PATTERN(rx, ry);
    }
  float *out = NULL;
  ck_assert_int_eq(gs_scene_undistort(cap, w, h, &in, &out, NULL), 0);
  double e_before = 0, e_after = 0;
  uint32_t n = 0;
  for (uint32_t v = 6; v < h - 6; v++)
    for (uint32_t u = 6; u < w - 6; u++) {
      size_t i = 3 * (v * w + u);
      e_before += fabsf(cap[i] - pin[i]);
      e_after += fabsf(out[i] - pin[i]);
      n++;
    }
  ck_assert_msg(e_after / n < 0.01 && e_after < 0.2 * e_before,
                "undistorted error %g (distorted %g)", e_after / n, e_before / n);
  free(pin);
  free(cap);
  free(out);
}
END_TEST

static void write_png(const char *dir, const char *name, uint32_t w, uint32_t h) {
  uint8_t *px = malloc((size_t)w * h * 4);
  memset(px, 128, (size_t)w * h * 4);
  char path[256];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  ck_assert_int_eq(gs_png_write8(path, px, w, h, 4, NULL), 0);
  free(px);
}

/* COLMAP text with two cameras of different sizes: each view keeps its own size and intrinsics;
 * with resolution_scale 2 and an images_2/ folder, the downscaled files are read and the
 * intrinsics scaled to them. */
START_TEST(colmap_cameras_of_different_sizes) {
  char dir[128], sub[160];
  snprintf(dir, sizeof dir, "%s/mixed", tmpdir);
  const char *subs[3] = {"sparse/0", "images", "images_2"};
  for (int i = 0; i < 3; i++) {
    snprintf(sub, sizeof sub, "%s/%s", dir, subs[i]);
    ck_assert_int_eq(sw_fs_mkdir_p(sub, NULL), 0);
  }
  char path[256];
  snprintf(path, sizeof path, "%s/sparse/0/cameras.txt", dir);
  write_text(path, "# two cameras\n1 PINHOLE 40 20 30 31 19 9\n2 SIMPLE_PINHOLE 24 32 25 12 16\n");
  snprintf(path, sizeof path, "%s/sparse/0/images.txt", dir);
  write_text(path, "1 1 0 0 0 0 0 4 1 a.png\n\n2 1 0 0 0 0.5 0 4 2 b.png\n1 2 -1\n"
                   "3 1 0 0 0 1 0 4 1 c.png\n\n");
  snprintf(sub, sizeof sub, "%s/images", dir);
  write_png(sub, "a.png", 40, 20);
  write_png(sub, "b.png", 24, 32);
  write_png(sub, "c.png", 40, 20);
  snprintf(sub, sizeof sub, "%s/images_2", dir);
  write_png(sub, "a.png", 20, 10);
  write_png(sub, "b.png", 12, 16);
  write_png(sub, "c.png", 20, 10);
  struct gs_scene_opts o = {.holdout_every = 100, .normalize = GS_NORMALIZE_OFF};
  struct gs_scene *sc = NULL;
  struct sw_err err = {0};
  for (uint32_t scale = 1; scale <= 2; scale++) {
    o.resolution_scale = scale;
    ck_assert_msg(gs_scene_load(dir, &o, &sc, &err) == 0, "%s", err.msg);
    ck_assert_str_eq(sc->format, "COLMAP text");
    ck_assert_uint_eq(sc->n_test, 1); /* a.png, the first by name */
    ck_assert_uint_eq(sc->n_train, 2);
    const struct gs_camera *b = &sc->train[0].cam, *c = &sc->train[1].cam;
    ck_assert_str_eq(sc->train[0].name, scale == 1 ? "images/b.png" : "images_2/b.png");
    ck_assert_uint_eq(b->width, 24 / scale);
    ck_assert_uint_eq(b->height, 32 / scale);
    ck_assert_float_eq_tol(b->fx, 25.0f / scale, 1e-5f);
    ck_assert_float_eq_tol(b->cx, 12.0f / scale, 1e-5f);
    ck_assert_float_eq_tol(b->cy, 16.0f / scale, 1e-5f);
    ck_assert_uint_eq(c->width, 40 / scale);
    ck_assert_float_eq_tol(c->fy, 31.0f / scale, 1e-5f);
    ck_assert_float_eq_tol(c->cx, 19.0f / scale, 1e-5f);
    ck_assert_float_eq_tol(b->campos[0], -0.5f, 1e-6f); /* campos = -R^T t */
    ck_assert_uint_eq(sc->width, 40 / scale);
    ck_assert_uint_eq(sc->height, 32 / scale);
    gs_scene_destroy(&sc);
  }
}
END_TEST

/* Files that are not regular, or lead outside the scene, are refused without being read. */
START_TEST(only_regular_files_inside) {
  char fifo[128], link[128], big[128];
  snprintf(fifo, sizeof fifo, "%s/pipe", tmpdir);
  snprintf(link, sizeof link, "%s/zero", tmpdir);
  snprintf(big, sizeof big, "%s/big", tmpdir);
  ck_assert_int_eq(mkfifo(fifo, 0600), 0);
  ck_assert_int_eq(symlink("/dev/zero", link), 0);
  write_text(big, "0123456789");
  char *d = NULL;
  size_t len;
  struct sw_err err = {0};
  ck_assert_int_eq(gs_scene_read_file(tmpdir, "pipe", 1 << 20, &d, &len, &err), SW_EINVAL);
  ck_assert_msg(strstr(err.msg, "FIFO") && strstr(err.msg, "pipe"), "%s", err.msg);
  sw_err_clear(&err);
  ck_assert_int_eq(gs_scene_read_file(tmpdir, "zero", 1 << 20, &d, &len, &err), SW_EINVAL);
  ck_assert_msg(strstr(err.msg, "outside the scene folder"), "%s", err.msg);
  sw_err_clear(&err);
  ck_assert_int_eq(gs_scene_read_file(tmpdir, "big", 9, &d, &len, &err), SW_EINVAL);
  ck_assert_msg(strstr(err.msg, "more than the 9"), "%s", err.msg);
  ck_assert_int_eq(gs_scene_read_file(tmpdir, "none", 9, &d, &len, &err), SW_ENOTFOUND);
  ck_assert_int_eq(gs_scene_read_file(tmpdir, "big", 10, &d, &len, &err), 0);
  ck_assert_uint_eq(len, 10);
  free(d);
}
END_TEST

/* A raised stop flag (SIGTERM in splat-train) ends loading before the images: GS_SCENE_STOPPED. */
START_TEST(stop_flag_ends_loading) {
  char dir[128];
  snprintf(dir, sizeof dir, "%s/s", tmpdir);
  struct gs_gen_opts o = gen_opts(GS_GEN_LAYOUT_COLMAP_BIN, GS_GEN_LENS_PINHOLE);
  struct sw_err err = {0};
  ck_assert_msg(gs_gen_scene(dir, &o, &err) == 0, "%s", err.msg);
  volatile sig_atomic_t stop = 1;
  struct gs_scene_opts so = {.stop = &stop};
  struct gs_scene *sc = (struct gs_scene *)1;
  ck_assert_int_eq(gs_scene_load(dir, &so, &sc, &err), GS_SCENE_STOPPED);
  ck_assert_ptr_null(sc);
  stop = 0;
  ck_assert_msg(gs_scene_load(dir, &so, &sc, &err) == 0, "%s", err.msg);
  gs_scene_destroy(&sc);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("gs_scene_formats");
  TCase *tc = tcase_create("formats");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, capture_layouts_carry_the_generator_cameras, 0, 3);
  tcase_add_test(tc, transforms_per_frame_intrinsics);
  tcase_add_test(tc, undistorted_capture_matches_the_pinhole_view);
  tcase_add_test(tc, jpeg_exif_orientation);
  tcase_add_test(tc, undistort_inverts_the_lens);
  tcase_add_test(tc, only_regular_files_inside);
  tcase_add_test(tc, colmap_cameras_of_different_sizes);
  tcase_add_test(tc, stop_flag_ends_loading);
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
