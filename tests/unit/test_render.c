/* test_render.c: `splat-train render` end to end, through its entry point gs_cmd_render(): a
 * generated scene and a PLY written by gs_ply are rendered with the GPU forward pass and with the
 * C reference; both write a PNG per view and metrics.json, and their figures agree. The real Lego
 * training split (when present beside the repository) renders on the GPU against its 13
 * held-out views. Bad inputs exit 2 with a message. The real binary runs `splat-train scene` then
 * `splat-train render` as a user would. */
#include <check.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gs_cmd.h"
#include "gs_gen.h"
#include "gs_model.h"
#include "gs_ply.h"
#include "gs_png.h"
#include "sw_fs.h"

static char tmpdir[64];

static void setup(void) {
  snprintf(tmpdir, sizeof tmpdir, "/tmp/gs_test_renderXXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void teardown(void) { sw_fs_rm_rf(tmpdir, NULL); }

static int run_render(const char *ply, const char *scene, const char *out, const char *renderer,
                      const char *extra) {
  char *argv[16];
  int argc = 0;
  argv[argc++] = "render";
  argv[argc++] = "--ply";
  argv[argc++] = (char *)ply;
  argv[argc++] = "--scene";
  argv[argc++] = (char *)scene;
  argv[argc++] = "--out";
  argv[argc++] = (char *)out;
  argv[argc++] = "--renderer";
  argv[argc++] = (char *)renderer;
  if (extra) {
    argv[argc++] = "--resolution-scale";
    argv[argc++] = (char *)extra;
  }
  argv[argc] = NULL;
  fflush(stdout);
  return gs_cmd_render(argc, argv);
}

static void write_random_ply(const char *path, uint32_t n, const float lo[3], const float hi[3]) {
  struct gs_model *m = NULL;
  ck_assert_int_eq(gs_model_new(1, &m, NULL), 0);
  struct gs_init_opts o;
  gs_init_opts_default(&o);
  o.count = n;
  o.seed = 11;
  for (int k = 0; k < 3; k++) {
    o.box_min[k] = lo[k];
    o.box_max[k] = hi[k];
  }
  ck_assert_int_eq(gs_model_init_random(m, &o, NULL), 0);
  ck_assert_int_eq(gs_ply_write(path, m, NULL), 0);
  gs_model_destroy(&m);
}

static json_t *load_metrics(const char *out) {
  char path[256];
  snprintf(path, sizeof path, "%s/metrics.json", out);
  json_error_t je;
  json_t *j = json_load_file(path, 0, &je);
  ck_assert_msg(j != NULL, "%s: %s", path, je.text);
  return j;
}

START_TEST(gpu_and_reference_agree_on_a_generated_scene) {
  char scene[128], ply[128], out_gpu[128], out_ref[128];
  snprintf(scene, sizeof scene, "%s/scene", tmpdir);
  snprintf(ply, sizeof ply, "%s/model.ply", tmpdir);
  snprintf(out_gpu, sizeof out_gpu, "%s/gpu", tmpdir);
  snprintf(out_ref, sizeof out_ref, "%s/ref", tmpdir);
  struct gs_gen_opts g = {.kind = GS_GEN_BRICKS,
                          .train_views = 8,
                          .test_views = 3,
                          .resolution = 64,
                          .seed = 3,
                          .threads = 1};
  ck_assert_int_eq(gs_gen_scene(scene, &g, NULL), 0);
  write_random_ply(ply, 2000, (const float[3]){-1.2f, -1.2f, -1.2f},
                   (const float[3]){1.2f, 1.2f, 1.2f});
  ck_assert_int_eq(run_render(ply, scene, out_ref, "ref", NULL), 0);
  ck_assert_int_eq(run_render(ply, scene, out_gpu, "gpu", NULL), 0);
  json_t *jr = load_metrics(out_ref), *jg = load_metrics(out_gpu);
  ck_assert_int_eq(json_is_false(json_object_get(jr, "held_out_split")), 1);
  json_t *vr = json_object_get(jr, "views"), *vg = json_object_get(jg, "views");
  ck_assert_uint_eq(json_array_size(vr), 3);
  ck_assert_uint_eq(json_array_size(vg), 3);
  for (size_t i = 0; i < 3; i++) {
    double pr = json_number_value(json_object_get(json_array_get(vr, i), "psnr_db"));
    double pg = json_number_value(json_object_get(json_array_get(vg, i), "psnr_db"));
    /* A random cloud against a scene: low PSNR, and the same from both renderers. */
    ck_assert_msg(pr > 3.0 && pr < 25.0, "view %zu: psnr %g", i, pr);
    ck_assert_msg(fabs(pr - pg) < 1e-3, "view %zu: ref %g dB, gpu %g dB", i, pr, pg);
    double sr = json_number_value(json_object_get(json_array_get(vr, i), "ssim"));
    double sg = json_number_value(json_object_get(json_array_get(vg, i), "ssim"));
    ck_assert(fabs(sr - sg) < 1e-4);
  }
  /* PNGs per view, named after the view's image. */
  char png[256];
  snprintf(png, sizeof png, "%s/test/r_2.png", out_gpu);
  float *rgba = NULL;
  uint32_t w, h;
  ck_assert_int_eq(gs_png_read_rgba(png, &rgba, &w, &h, NULL, NULL), 0);
  ck_assert_uint_eq(w, 64);
  free(rgba);
  json_decref(jr);
  json_decref(jg);
}
END_TEST

START_TEST(bad_inputs_exit_2) {
  char scene[128], out[128], ply[128];
  snprintf(scene, sizeof scene, "%s/scene", tmpdir);
  snprintf(out, sizeof out, "%s/out", tmpdir);
  snprintf(ply, sizeof ply, "%s/nope.ply", tmpdir);
  struct gs_gen_opts g = {.kind = GS_GEN_SHAPES,
                          .train_views = 2,
                          .test_views = 1,
                          .resolution = 16,
                          .seed = 3,
                          .threads = 1};
  ck_assert_int_eq(gs_gen_scene(scene, &g, NULL), 0);
  ck_assert_int_eq(run_render(ply, scene, out, "ref", NULL), GS_EXIT_USAGE);
  ck_assert_int_eq(run_render(GS_FIXTURES_DIR "/bad_header.ply", scene, out, "ref", NULL),
                   GS_EXIT_USAGE);
  ck_assert_int_eq(run_render(GS_FIXTURES_DIR "/bad_header.ply", "/nonexistent", out, "ref", NULL),
                   GS_EXIT_USAGE);
  char *argv[] = {"render", "--ply", ply, NULL};
  ck_assert_int_eq(gs_cmd_render(3, argv), GS_EXIT_USAGE);
  ck_assert_int_eq(sw_fs_exists(out), 0);
}
END_TEST

START_TEST(lego_renders_on_the_gpu) {
  char probe[512];
  snprintf(probe, sizeof probe, "%s/transforms_train.json", GS_LEGO_DIR);
  if (!sw_fs_exists(probe)) {
    printf("NOTICE: %s not found; skipping the real-Lego render\n", GS_LEGO_DIR);
    return;
  }
  char ply[128], out[128];
  snprintf(ply, sizeof ply, "%s/lego.ply", tmpdir);
  snprintf(out, sizeof out, "%s/lego", tmpdir);
  write_random_ply(ply, 3000, (const float[3]){-1.3f, -1.3f, -1.3f},
                   (const float[3]){1.3f, 1.3f, 1.3f});
  ck_assert_int_eq(run_render(ply, GS_LEGO_DIR, out, "gpu", "8"), 0);
  json_t *j = load_metrics(out);
  ck_assert_int_eq(json_is_true(json_object_get(j, "held_out_split")), 1);
  ck_assert_uint_eq(json_array_size(json_object_get(j, "views")), 13);
  ck_assert_int_eq(json_integer_value(json_object_get(j, "width")), 100);
  double psnr = json_number_value(json_object_get(j, "psnr_db"));
  ck_assert(psnr > 3.0 && psnr < 25.0);
  ck_assert_str_eq(
      json_string_value(json_object_get(json_array_get(json_object_get(j, "views"), 1), "view")),
      "train/r_8.png");
  json_decref(j);
}
END_TEST

/* Runs the real splat-train binary with argv; returns its exit status (or -1). */
static int run_process(char *const argv[]) {
  fflush(stdout);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    execv(argv[0], argv);
    _exit(127);
  }
  int st = 0;
  ck_assert_int_eq(waitpid(pid, &st, 0), pid);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The commands as a user runs them: `splat-train scene` then `splat-train render`. */
START_TEST(cli_scene_then_render) {
  char scene[128], ply[128], out[128];
  snprintf(scene, sizeof scene, "%s/cli_scene", tmpdir);
  snprintf(ply, sizeof ply, "%s/cli.ply", tmpdir);
  snprintf(out, sizeof out, "%s/cli_out", tmpdir);
  char *gen[] = {GS_SPLAT_TRAIN,
                 "scene",
                 "--kind",
                 "shapes",
                 "--out",
                 scene,
                 "--train-views",
                 "6",
                 "--test-views",
                 "2",
                 "--resolution",
                 "48",
                 "--seed",
                 "9",
                 NULL};
  ck_assert_int_eq(run_process(gen), 0);
  char *bad_kind[] = {GS_SPLAT_TRAIN, "scene", "--kind", "castle", "--out", scene, NULL};
  ck_assert_int_eq(run_process(bad_kind), GS_EXIT_USAGE);
  write_random_ply(ply, 1500, (const float[3]){-1.2f, -1.2f, -1.2f},
                   (const float[3]){1.2f, 1.2f, 1.2f});
  char *render[] = {GS_SPLAT_TRAIN, "render", "--ply",        ply,     "--scene", scene,
                    "--out",        out,      "--background", "black", NULL};
  ck_assert_int_eq(run_process(render), 0);
  json_t *j = load_metrics(out);
  ck_assert_uint_eq(json_array_size(json_object_get(j, "views")), 2);
  ck_assert_str_eq(json_string_value(json_object_get(j, "background")), "black");
  ck_assert_str_eq(json_string_value(json_object_get(j, "renderer")), "gpu");
  json_decref(j);
  char png[256];
  snprintf(png, sizeof png, "%s/test/r_1.png", out);
  ck_assert_int_eq(sw_fs_exists(png), 1);
}
END_TEST

int main(void) {
  Suite *s = suite_create("splat-train render");
  TCase *tc = tcase_create("render");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, gpu_and_reference_agree_on_a_generated_scene);
  tcase_add_test(tc, bad_inputs_exit_2);
  tcase_add_test(tc, lego_renders_on_the_gpu);
  tcase_add_test(tc, cli_scene_then_render);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
