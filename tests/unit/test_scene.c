/* test_scene.c: Check suite for the NeRF-synthetic loader (gs_scene): camera conversion, clear
 * errors for missing files, bad JSON, truncated and corrupt PNGs; background compositing, 16-bit
 * images, downscale, the held-out split; archives (a "../" entry, an absolute path and a link are
 * refused; a zipped scene loads like its folder); and the real Lego training split, when present
 * beside the repository, loads and renders a PLY against its views through the C reference. */
#include <archive.h>
#include <archive_entry.h>
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gs_gen.h"
#include "gs_metrics.h"
#include "gs_model.h"
#include "gs_ply.h"
#include "gs_png.h"
#include "gs_ref.h"
#include "gs_scene.h"
#include "sw_fs.h"

static char tmpdir[64];

static void setup(void) {
  snprintf(tmpdir, sizeof tmpdir, "/tmp/gs_test_sceneXXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void teardown(void) { sw_fs_rm_rf(tmpdir, NULL); }

static void write_text(const char *path, const char *text) {
  ck_assert_int_eq(sw_fs_write_atomic(path, text, strlen(text), NULL), 0);
}

/* A transforms json with n frames all named by `fmt` (a printf format taking the index). */
static void write_transforms(const char *dir, const char *file, uint32_t n, const char *fmt) {
  char *text = malloc(256 + (size_t)n * 256);
  int off = sprintf(text, "{\"camera_angle_x\": 0.6911112070083618, \"frames\": [");
  for (uint32_t i = 0; i < n; i++) {
    char name[64];
    snprintf(name, sizeof name, fmt, i);
    off += sprintf(text + off,
                   "%s{\"file_path\": \"%s\", \"transform_matrix\": "
                   "[[1,0,0,%u],[0,1,0,0],[0,0,1,4],[0,0,0,1]]}",
                   i ? "," : "", name, i);
  }
  sprintf(text + off, "]}\n");
  char path[256];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  write_text(path, text);
  free(text);
}

static void expect_load_error(const char *dir, int code, const char *word1, const char *word2) {
  struct gs_scene *sc = (struct gs_scene *)1;
  struct sw_err err = {0};
  ck_assert_int_eq(gs_scene_load(dir, NULL, &sc, &err), code);
  ck_assert_ptr_null(sc);
  ck_assert_msg(strstr(err.msg, word1) != NULL, "message '%s' lacks '%s'", err.msg, word1);
  ck_assert_msg(!word2 || strstr(err.msg, word2) != NULL, "message '%s' lacks '%s'", err.msg,
                word2);
}

START_TEST(camera_conversion) {
  /* An OpenGL camera at (0, 0, 4) looking down -z at the origin, y up. */
  float c2w[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 4, 0, 0, 0, 1};
  struct gs_camera cam = {.width = 100, .height = 80, .fx = 50, .fy = 50, .cx = 50, .cy = 40};
  ck_assert_int_eq(gs_camera_from_c2w_gl(c2w, &cam, NULL), 0);
  ck_assert_float_eq(cam.campos[2], 4.0f);
  float u, v, d;
  ck_assert_int_eq(gs_camera_project(&cam, (const float[3]){0, 0, 0}, &u, &v, &d), 0);
  ck_assert_float_eq(d, 4.0f);
  ck_assert_float_eq(u, 50.0f);
  ck_assert_float_eq(v, 40.0f);
  /* World +x is image right; world +y (up in OpenGL) is image up, i.e. smaller v. */
  ck_assert_int_eq(gs_camera_project(&cam, (const float[3]){1, 0, 0}, &u, &v, &d), 0);
  ck_assert_float_eq(u, 62.5f);
  ck_assert_int_eq(gs_camera_project(&cam, (const float[3]){0, 1, 0}, &u, &v, &d), 0);
  ck_assert_float_eq(v, 27.5f);
  /* Behind the camera: culled. */
  ck_assert_int_eq(gs_camera_project(&cam, (const float[3]){0, 0, 5}, &u, &v, &d), -1);
  float singular[16] = {0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 1};
  struct sw_err err = {0};
  ck_assert_int_eq(gs_camera_from_c2w_gl(singular, &cam, &err), SW_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "singular"));
}
END_TEST

START_TEST(missing_things) {
  char dir[128];
  snprintf(dir, sizeof dir, "%s/nowhere", tmpdir);
  expect_load_error(dir, SW_ENOTFOUND, dir, NULL);
  expect_load_error(tmpdir, SW_ENOTFOUND, "transforms_train.json", "COLMAP"); /* lists formats */
  /* A frame whose image is missing: the error names the image. */
  write_transforms(tmpdir, "transforms_train.json", 2, "./train/r_%u");
  expect_load_error(tmpdir, SW_ENOTFOUND, "train/r_0.png", NULL);
}
END_TEST

START_TEST(bad_json) {
  expect_load_error(GS_FIXTURES_DIR "/bad_json", SW_EINVAL,
                    GS_FIXTURES_DIR "/bad_json/transforms_train.json:4:", "bad JSON");
  expect_load_error(GS_FIXTURES_DIR "/no_angle", SW_EINVAL, "no_angle/transforms_train.json",
                    "camera_angle_x");
  char path[160];
  snprintf(path, sizeof path, "%s/transforms_train.json", tmpdir);
  write_text(path, "{\"camera_angle_x\": 0.5, \"frames\": [{\"file_path\": \"a\", "
                   "\"transform_matrix\": [[1,0,0],[0,1,0],[0,0,1]]}]}");
  expect_load_error(tmpdir, SW_EINVAL, "frame 0", "4x4");
  write_text(path, "{\"camera_angle_x\": 0.5, \"frames\": [{\"file_path\": \"../../etc/x\", "
                   "\"transform_matrix\": [[1,0,0,0],[0,1,0,0],[0,0,1,0],[0,0,0,1]]}]}");
  expect_load_error(tmpdir, SW_EINVAL, "leaves the scene directory", NULL);
  /* A file_path too long to hold is refused: cut short it could name another file. */
  char *text = malloc(6000);
  ck_assert_ptr_nonnull(text);
  int off = snprintf(text, 6000, "{\"camera_angle_x\": 0.5, \"frames\": [{\"file_path\": \"");
  for (int i = 0; i < 4100; i++) text[off++] = 'a';
  snprintf(text + off, 6000 - off,
           "\", \"transform_matrix\": [[1,0,0,0],[0,1,0,0],[0,0,1,0],"
           "[0,0,0,1]]}]}");
  write_text(path, text);
  free(text);
  expect_load_error(tmpdir, SW_EINVAL, "frame 0", "longer than");
}
END_TEST

static void copy_file(const char *from, const char *to) {
  char *d = NULL;
  size_t len = 0;
  ck_assert_int_eq(sw_fs_read_all(from, &d, &len, NULL), 0);
  ck_assert_int_eq(sw_fs_write_atomic(to, d, len, NULL), 0);
  free(d);
}

START_TEST(truncated_and_corrupt_images) {
  static const char *bad[2] = {"truncated", "corrupt"};
  for (int b = 0; b < 2; b++) {
    char src[256], dst[256], sub[160];
    snprintf(sub, sizeof sub, "%s/%s", tmpdir, bad[b]);
    ck_assert_int_eq(sw_fs_mkdir_p(sub, NULL), 0);
    write_transforms(sub, "transforms_train.json", 2, "img");
    snprintf(src, sizeof src, "%s/%s.png", GS_FIXTURES_DIR, bad[b]);
    snprintf(dst, sizeof dst, "%s/img.png", sub);
    copy_file(src, dst);
    expect_load_error(sub, SW_EINVAL, dst, bad[b]);
  }
}
END_TEST

/* A 2x2 RGBA image: red at half alpha, green opaque, blue transparent, grey at 1/4 alpha. */
static const uint8_t px2x2[16] = {255, 0, 0, 128, 0, 255, 0, 255, 0, 0, 255, 0, 100, 100, 100, 64};

START_TEST(background_compositing) {
  char png[160];
  snprintf(png, sizeof png, "%s/img_0.png", tmpdir);
  ck_assert_int_eq(gs_png_write8(png, px2x2, 2, 2, 4, NULL), 0);
  /* Two frames: with the held-out rule frame 0 is the test view and frame 1 trains. */
  char png1[160];
  snprintf(png1, sizeof png1, "%s/img_1.png", tmpdir);
  copy_file(png, png1);
  write_transforms(tmpdir, "transforms_train.json", 2, "img_%u");
  for (int bg = 0; bg < 2; bg++) {
    struct gs_scene_opts o = {.background = bg ? GS_BG_BLACK : GS_BG_WHITE};
    struct gs_scene *sc = NULL;
    ck_assert_int_eq(gs_scene_load(tmpdir, &o, &sc, NULL), 0);
    ck_assert_uint_eq(sc->n_test, 1);
    ck_assert_uint_eq(sc->n_train, 1);
    const float *rgb = sc->test[0].rgb;
    float b = bg ? 0.0f : 1.0f;
    for (int p = 0; p < 4; p++) {
      float a = px2x2[4 * p + 3] / 255.0f;
      for (int c = 0; c < 3; c++) {
        float expect = px2x2[4 * p + c] / 255.0f * a + b * (1.0f - a);
        ck_assert_msg(fabsf(rgb[3 * p + c] - expect) < 1e-6f, "bg %d pixel %d channel %d: %g vs %g",
                      bg, p, c, rgb[3 * p + c], expect);
      }
    }
    /* Fully transparent pixel is exactly the background. */
    ck_assert_float_eq(rgb[3 * 2 + 0], b);
    ck_assert_float_eq(rgb[3 * 1 + 1], 1.0f); /* opaque green */
    gs_scene_destroy(&sc);
  }
}
END_TEST

START_TEST(single_frame_without_test_split_is_refused) {
  char png[160];
  snprintf(png, sizeof png, "%s/img_0.png", tmpdir);
  ck_assert_int_eq(gs_png_write8(png, px2x2, 2, 2, 4, NULL), 0);
  write_transforms(tmpdir, "transforms_train.json", 1, "img_%u");
  expect_load_error(tmpdir, SW_EINVAL, "leave none for training", NULL);
}
END_TEST

START_TEST(sixteen_bit_downscale_and_intrinsics) {
  uint16_t px[4 * 4 * 4];
  for (int i = 0; i < 16; i++) {
    px[4 * i + 0] = (uint16_t)(i * 4000);
    px[4 * i + 1] = 65535;
    px[4 * i + 2] = 0;
    px[4 * i + 3] = 65535;
  }
  for (int i = 0; i < 2; i++) {
    char png[160];
    snprintf(png, sizeof png, "%s/img_%d.png", tmpdir, i);
    ck_assert_int_eq(gs_png_write16(png, px, 4, 4, 4, NULL), 0);
  }
  write_transforms(tmpdir, "transforms_train.json", 2, "img_%u");
  struct gs_scene_opts o = {.resolution_scale = 2};
  struct gs_scene *sc = NULL;
  struct sw_err err = {0};
  ck_assert_msg(gs_scene_load(tmpdir, &o, &sc, &err) == 0, "%s", err.msg);
  ck_assert_uint_eq(sc->width, 2);
  const struct gs_camera *cam = &sc->test[0].cam;
  float fx_full = (float)(0.5 * 4 / tan(0.5 * 0.6911112070083618));
  ck_assert(fabsf(cam->fx - 0.5f * fx_full) < 1e-5f);
  ck_assert_float_eq(cam->fy, cam->fx);
  ck_assert_float_eq(cam->cx, 1.0f);
  /* Output pixel (1, 0) averages input (2,0), (3,0), (2,1), (3,1): indices 2, 3, 6, 7. */
  float expect = (2 + 3 + 6 + 7) * 4000 / 65535.0f / 4.0f;
  ck_assert(fabsf(sc->test[0].rgb[3 * 1 + 0] - expect) < 1e-5f);
  ck_assert_float_eq(sc->test[0].rgb[3 * 1 + 1], 1.0f);
  gs_scene_destroy(&sc);
}
END_TEST

START_TEST(held_out_every_eighth_and_test_split_file) {
  char png[160];
  snprintf(png, sizeof png, "%s/img.png", tmpdir);
  ck_assert_int_eq(gs_png_write8(png, px2x2, 2, 2, 4, NULL), 0);
  write_transforms(tmpdir, "transforms_train.json", 17, "img");
  struct gs_scene *sc = NULL;
  struct sw_err err = {0};
  ck_assert_msg(gs_scene_load(tmpdir, NULL, &sc, &err) == 0, "%s", err.msg);
  ck_assert_int_eq(sc->held_out, 1);
  ck_assert_uint_eq(sc->n_test, 3);
  ck_assert_uint_eq(sc->n_train, 14);
  /* The camera x position is the frame index: test views are frames 0, 8, 16. */
  ck_assert_float_eq(sc->test[1].cam.campos[0], 8.0f);
  ck_assert_float_eq(sc->test[2].cam.campos[0], 16.0f);
  ck_assert_float_eq(sc->train[7].cam.campos[0], 9.0f);
  gs_scene_destroy(&sc);
  /* With transforms_test.json every training frame trains. */
  write_transforms(tmpdir, "transforms_test.json", 2, "img");
  ck_assert_int_eq(gs_scene_load(tmpdir, NULL, &sc, NULL), 0);
  ck_assert_int_eq(sc->held_out, 0);
  ck_assert_uint_eq(sc->n_train, 17);
  ck_assert_uint_eq(sc->n_test, 2);
  gs_scene_destroy(&sc);
}
END_TEST

/* ---- archives ---- */

enum { ENT_FILE, ENT_DIR, ENT_SYMLINK };

static void add_entry(struct archive *a, const char *name, int kind, const char *data) {
  struct archive_entry *e = archive_entry_new();
  archive_entry_set_pathname(e, name);
  archive_entry_set_filetype(e, kind == ENT_DIR       ? AE_IFDIR
                                : kind == ENT_SYMLINK ? AE_IFLNK
                                                      : AE_IFREG);
  archive_entry_set_perm(e, 0644);
  if (kind == ENT_SYMLINK) archive_entry_set_symlink(e, data);
  size_t len = kind == ENT_FILE ? strlen(data) : 0;
  archive_entry_set_size(e, (la_int64_t)len);
  ck_assert_int_eq(archive_write_header(a, e), ARCHIVE_OK);
  if (len) ck_assert_int_eq(archive_write_data(a, data, len), (la_ssize_t)len);
  archive_entry_free(e);
}

static struct archive *new_tgz(const char *path) {
  struct archive *a = archive_write_new();
  archive_write_add_filter_gzip(a);
  archive_write_set_format_pax_restricted(a);
  ck_assert_int_eq(archive_write_open_filename(a, path), ARCHIVE_OK);
  return a;
}

START_TEST(archive_traversal_refused) {
  static const char *names[3] = {"scene/../../evil.txt", "/tmp/evil_abs.txt", "scene/link"};
  static const char *why[3] = {"'..'", "absolute path", "symbolic link"};
  for (int k = 0; k < 3; k++) {
    char tgz[160], dest[160], evil[200];
    snprintf(tgz, sizeof tgz, "%s/bad%d.tar.gz", tmpdir, k);
    snprintf(dest, sizeof dest, "%s/out%d", tmpdir, k);
    struct archive *a = new_tgz(tgz);
    add_entry(a, "scene/transforms_train.json", ENT_FILE, "{}");
    add_entry(a, names[k], k == 2 ? ENT_SYMLINK : ENT_FILE, k == 2 ? "/etc/passwd" : "pwned");
    archive_write_free(a);
    struct sw_err err = {0};
    ck_assert_int_eq(gs_scene_unpack(tgz, dest, &err), SW_EINVAL);
    ck_assert_msg(strstr(err.msg, why[k]) && strstr(err.msg, tgz), "message '%s'", err.msg);
    /* Nothing was written: not even the harmless first entry. */
    ck_assert_int_eq(sw_fs_exists(dest), 0);
    snprintf(evil, sizeof evil, "%s/evil.txt", tmpdir);
    ck_assert_int_eq(sw_fs_exists(evil), 0);
    /* Through the loader too. */
    struct gs_scene_opts o = {.unpack_dir = dest};
    struct gs_scene *sc = NULL;
    sw_err_clear(&err);
    ck_assert_int_eq(gs_scene_load(tgz, &o, &sc, &err), SW_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, why[k]));
  }
  ck_assert_int_eq(sw_fs_exists("/tmp/evil_abs.txt"), 0);
}
END_TEST

/* Zips a generated scene folder under a top folder "lego/" and loads it from the archive. */
START_TEST(zipped_scene_loads_like_its_folder) {
  struct gs_gen_opts g = {.kind = GS_GEN_SHAPES,
                          .train_views = 3,
                          .test_views = 1,
                          .resolution = 16,
                          .seed = 2,
                          .threads = 1};
  char dir[160];
  snprintf(dir, sizeof dir, "%s/gen", tmpdir);
  ck_assert_int_eq(gs_gen_scene(dir, &g, NULL), 0);
  char zip[160];
  snprintf(zip, sizeof zip, "%s/scene.zip", tmpdir);
  struct archive *a = archive_write_new();
  archive_write_set_format_zip(a);
  ck_assert_int_eq(archive_write_open_filename(a, zip), ARCHIVE_OK);
  add_entry(a, "lego/", ENT_DIR, NULL);
  add_entry(a, "lego/train/", ENT_DIR, NULL);
  add_entry(a, "lego/test/", ENT_DIR, NULL);
  static const char *files[] = {"transforms_train.json", "transforms_test.json", "train/r_0.png",
                                "train/r_1.png",         "train/r_2.png",        "test/r_0.png"};
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
    char path[256], name[128];
    snprintf(path, sizeof path, "%s/%s", dir, files[i]);
    snprintf(name, sizeof name, "lego/%s", files[i]);
    char *d = NULL;
    size_t len = 0;
    ck_assert_int_eq(sw_fs_read_all(path, &d, &len, NULL), 0);
    struct archive_entry *e = archive_entry_new();
    archive_entry_set_pathname(e, name);
    archive_entry_set_filetype(e, AE_IFREG);
    archive_entry_set_perm(e, 0644);
    archive_entry_set_size(e, (la_int64_t)len);
    ck_assert_int_eq(archive_write_header(a, e), ARCHIVE_OK);
    ck_assert_int_eq(archive_write_data(a, d, len), (la_ssize_t)len);
    archive_entry_free(e);
    free(d);
  }
  archive_write_free(a);
  char dest[160];
  snprintf(dest, sizeof dest, "%s/unz", tmpdir);
  struct gs_scene_opts o = {.unpack_dir = dest};
  struct gs_scene *from_zip = NULL, *from_dir = NULL;
  struct sw_err err = {0};
  ck_assert_msg(gs_scene_load(zip, &o, &from_zip, &err) == 0, "%s", err.msg);
  ck_assert_int_eq(gs_scene_load(dir, NULL, &from_dir, NULL), 0);
  ck_assert_str_eq(from_zip->sha256, from_dir->sha256);
  ck_assert_uint_eq(from_zip->n_train, 3);
  ck_assert_int_eq(
      memcmp(from_zip->test[0].rgb, from_dir->test[0].rgb, 16 * 16 * 3 * sizeof(float)), 0);
  ck_assert_ptr_nonnull(strstr(from_zip->path, "/unz/lego"));
  gs_scene_destroy(&from_zip);
  gs_scene_destroy(&from_dir);
}
END_TEST

/* ---- the real Lego training split ---- */

static int have_lego(void) {
  char p[512];
  snprintf(p, sizeof p, "%s/transforms_train.json", GS_LEGO_DIR);
  if (sw_fs_exists(p)) return 1;
  printf("NOTICE: %s not found; skipping the real-Lego checks\n", GS_LEGO_DIR);
  return 0;
}

START_TEST(lego_loads) {
  if (!have_lego()) return;
  /* Full resolution for the 13 test views (cameras of all 100). */
  struct gs_scene_opts o = {.skip = GS_SCENE_SKIP_TRAIN_IMAGES};
  struct gs_scene *sc = NULL;
  struct sw_err err = {0};
  ck_assert_msg(gs_scene_load(GS_LEGO_DIR, &o, &sc, &err) == 0, "%s", err.msg);
  ck_assert_int_eq(sc->held_out, 1);
  ck_assert_uint_eq(sc->n_train + sc->n_test, 100);
  ck_assert_uint_eq(sc->n_test, 13);
  ck_assert_uint_eq(sc->n_train, 87);
  ck_assert_uint_eq(sc->width, 800);
  ck_assert_uint_eq(sc->height, 800);
  ck_assert_ptr_null(sc->train[0].rgb);
  ck_assert_ptr_nonnull(sc->test[12].rgb);
  ck_assert(fabsf(sc->test[0].cam.fx - 1111.111f) < 0.01f);
  ck_assert_uint_eq(strlen(sc->sha256), 64);
  /* Lego cameras sit about 4 units from the origin, which projects near the image centre. */
  for (uint32_t i = 0; i < sc->n_test; i++) {
    float u, v, d;
    ck_assert_int_eq(gs_camera_project(&sc->test[i].cam, (const float[3]){0, 0, 0}, &u, &v, &d), 0);
    ck_assert(d > 3.5f && d < 4.5f);
    ck_assert(fabsf(u - 400) < 40 && fabsf(v - 400) < 40);
  }
  /* White background: the image corner is white, the centre is not. */
  const float *rgb = sc->test[0].rgb;
  ck_assert_float_eq(rgb[0], 1.0f);
  ck_assert(sc->extent > 3.0f && sc->extent < 6.0f);
  gs_scene_destroy(&sc);
}
END_TEST

START_TEST(lego_renders_a_ply_against_its_views) {
  if (!have_lego()) return;
  /* Every image decoded, downscaled 8x (100x100) to keep the C reference fast. */
  struct gs_scene_opts o = {.resolution_scale = 8};
  struct gs_scene *sc = NULL;
  struct sw_err err = {0};
  ck_assert_msg(gs_scene_load(GS_LEGO_DIR, &o, &sc, &err) == 0, "%s", err.msg);
  ck_assert_uint_eq(sc->width, 100);
  ck_assert_ptr_nonnull(sc->train[86].rgb);
  /* A random model in the scene bounds, through a PLY file and back. */
  struct gs_model *m = NULL;
  ck_assert_int_eq(gs_model_new(1, &m, NULL), 0);
  struct gs_init_opts io;
  gs_init_opts_default(&io);
  io.count = 3000;
  ck_assert_int_eq(gs_model_init_random(m, &io, NULL), 0);
  char ply[160];
  snprintf(ply, sizeof ply, "%s/lego.ply", tmpdir);
  ck_assert_int_eq(gs_ply_write(ply, m, NULL), 0);
  struct gs_model *r = NULL;
  ck_assert_int_eq(gs_ply_read(ply, &r, NULL, NULL), 0);
  struct gs_ref_opts ro = {.sh_degree = 3, .background = {1, 1, 1}};
  double psnr_sum = 0;
  for (uint32_t i = 0; i < sc->n_test; i++) {
    struct gs_ref_frame *fa = NULL, *fb = NULL;
    ck_assert_int_eq(gs_ref_forward(m, &sc->test[i].cam, &ro, &fa, NULL), 0);
    ck_assert_int_eq(gs_ref_forward(r, &sc->test[i].cam, &ro, &fb, NULL), 0);
    /* The PLY's model renders bit for bit like the original. */
    ck_assert_int_eq(memcmp(fa->rgb, fb->rgb, 100 * 100 * 3 * sizeof(float)), 0);
    ck_assert(fa->n_pairs > 0);
    double psnr = 0;
    ck_assert_int_eq(gs_metrics_psnr(fb->rgb, sc->test[i].rgb, 100, 100, &psnr, NULL), 0);
    /* A grey random cloud over a white background: low but finite PSNR. */
    ck_assert(isfinite(psnr) && psnr > 3.0 && psnr < 30.0);
    psnr_sum += psnr;
    gs_ref_frame_destroy(&fa);
    gs_ref_frame_destroy(&fb);
  }
  printf("lego: random 3000-splat model, mean PSNR %.2f dB over %u held-out views at 100x100\n",
         psnr_sum / sc->n_test, sc->n_test);
  gs_model_destroy(&m);
  gs_model_destroy(&r);
  gs_scene_destroy(&sc);
}
END_TEST

int main(void) {
  Suite *s = suite_create("gs_scene");
  TCase *tc = tcase_create("scene");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, camera_conversion);
  tcase_add_test(tc, missing_things);
  tcase_add_test(tc, bad_json);
  tcase_add_test(tc, truncated_and_corrupt_images);
  tcase_add_test(tc, background_compositing);
  tcase_add_test(tc, single_frame_without_test_split_is_refused);
  tcase_add_test(tc, sixteen_bit_downscale_and_intrinsics);
  tcase_add_test(tc, held_out_every_eighth_and_test_split_file);
  tcase_add_test(tc, archive_traversal_refused);
  tcase_add_test(tc, zipped_scene_loads_like_its_folder);
  tcase_add_test(tc, lego_loads);
  tcase_add_test(tc, lego_renders_a_ply_against_its_views);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
