/* gs_cmd_render.c: `splat-train render`: renders a PLY model into the views of a scene (the test
 * split by default), writes one PNG per view and prints per-view and mean PSNR and SSIM against
 * the ground truth (gs_metrics), plus OUT/metrics.json with the same figures.
 *
 * Renderers: `gpu` (the default) is the Vulkan forward pass (gs_fwd); `ref` is the C
 * reference (gs_ref), exact but slow, for checking and for machines without a Vulkan device.
 * --alpha-max renders with the alpha clamp a model was trained with (the trainer's `alpha_max`). */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gs_cmd.h"
#include "gs_fwd.h"
#include "gs_metrics.h"
#include "gs_model.h"
#include "gs_ply.h"
#include "gs_png.h"
#include "gs_ref.h"
#include "gs_scene.h"
#include "gs_vk.h"
#include "sw_clock.h"
#include "sw_fs.h"

struct render_args {
  const char *ply, *scene, *out;
  int test_split; /* 1: test views, 0: train views */
  enum gs_background background;
  uint32_t resolution_scale;
  int use_ref;
  int sh_degree;   /* -1: the degree the PLY carries */
  float alpha_max; /* the alpha clamp (GS_ALPHA_MAX unless --alpha-max) */
};

static void usage(FILE *f) {
  fprintf(f,
          "usage: splat-train render --ply FILE --scene DIR --out DIR [--split test|train]\n"
          "         [--background white|black] [--resolution-scale N] [--renderer gpu|ref]\n"
          "         [--sh-degree D] [--alpha-max A]\n"
          "  Renders the model into every view of the split, writes OUT/<split>/<view>.png and\n"
          "  OUT/metrics.json, prints PSNR and SSIM per view and their means. --alpha-max is the\n"
          "  alpha clamp (default 0.99; give the value the model was trained with, the trainer's\n"
          "  alpha_max key).\n");
}

static int parse_args(int argc, char **argv, struct render_args *a) {
  memset(a, 0, sizeof *a);
  a->test_split = 1;
  a->sh_degree = -1;
  a->alpha_max = GS_ALPHA_MAX;
  for (int i = 1; i < argc; i++) {
    const char *k = argv[i];
    if (!strcmp(k, "-h") || !strcmp(k, "--help")) {
      usage(stdout);
      return 1;
    }
    if (i + 1 >= argc) {
      fprintf(stderr, "splat-train render: '%s' needs a value (or is unknown)\n", k);
      return -1;
    }
    const char *v = argv[++i];
    if (!strcmp(k, "--ply"))
      a->ply = v;
    else if (!strcmp(k, "--scene"))
      a->scene = v;
    else if (!strcmp(k, "--out"))
      a->out = v;
    else if (!strcmp(k, "--split") && (!strcmp(v, "test") || !strcmp(v, "train")))
      a->test_split = !strcmp(v, "test");
    else if (!strcmp(k, "--background") && (!strcmp(v, "white") || !strcmp(v, "black")))
      a->background = !strcmp(v, "white") ? GS_BG_WHITE : GS_BG_BLACK;
    else if (!strcmp(k, "--renderer") && (!strcmp(v, "gpu") || !strcmp(v, "ref"))) {
      a->use_ref = !strcmp(v, "ref");
    } else if (!strcmp(k, "--alpha-max")) {
      char *end = NULL;
      errno = 0;
      double x = strtod(v, &end);
      if (errno || !end || *end || end == v || !(x > 0.0) ||
          gs_alpha_max_resolve((float)x) == 0.0f) {
        fprintf(stderr, "splat-train render: --alpha-max wants a number in [%g, %g], got '%s'\n",
                (double)GS_ALPHA_MAX_LO, (double)GS_ALPHA_MAX_HI, v);
        return -1;
      }
      a->alpha_max = (float)x;
    } else if (!strcmp(k, "--resolution-scale") || !strcmp(k, "--sh-degree")) {
      char *end = NULL;
      errno = 0;
      long n = strtol(v, &end, 10);
      int deg = !strcmp(k, "--sh-degree");
      if (errno || !end || *end || n < (deg ? 0 : 1) || n > (deg ? 3 : 64)) {
        fprintf(stderr, "splat-train render: %s wants an integer in %s, got '%s'\n", k,
                deg ? "0..3" : "1..64", v);
        return -1;
      }
      if (deg)
        a->sh_degree = (int)n;
      else
        a->resolution_scale = (uint32_t)n;
    } else {
      fprintf(stderr, "splat-train render: unknown option or bad value: %s %s\n", k, v);
      return -1;
    }
  }
  if (!a->ply || !a->scene || !a->out) {
    fprintf(stderr, "splat-train render: --ply, --scene and --out are required\n");
    return -1;
  }
  return 0;
}

/* The renderer behind one interface: the GPU forward pass or the C reference. */
struct renderer {
  int use_ref;
  float alpha_max;
  gs_vk_t *vk;
  gs_fwd_t *fwd;
  struct gs_fwd_model model; /* the PLY's model, uploaded once */
  int uploaded;
};

/* Opens the device (GPU) and uploads the model once for all views. */
static int renderer_open(struct renderer *r, int use_ref, float alpha_max, const struct gs_model *m,
                         struct sw_err *err) {
  memset(r, 0, sizeof *r);
  r->use_ref = use_ref;
  r->alpha_max = alpha_max;
  if (!use_ref) {
    int rc = gs_vk_open(&r->vk, NULL, err);
    struct gs_fwd_opts fo = {.alpha_max = alpha_max};
    if (!rc) rc = gs_fwd_new(r->vk, &fo, &r->fwd, err);
    if (!rc) rc = gs_fwd_model_upload(r->vk, m, &r->model, err);
    if (!rc) r->uploaded = 1;
    if (!rc) printf("render: device %s (%s)\n", gs_vk_info(r->vk)->name, gs_vk_info(r->vk)->driver);
    return rc;
  }
  return 0;
}

static void renderer_close(struct renderer *r) {
  if (r->uploaded) gs_fwd_model_release(&r->model);
  gs_fwd_destroy(&r->fwd);
  gs_vk_close(&r->vk);
}

/* Renders m into rgb (3 floats per pixel of cam). */
static int render_one(struct renderer *r, const struct gs_model *m, const struct gs_camera *cam,
                      uint32_t sh_degree, const float bg[3], float *rgb, struct sw_err *err) {
  if (!r->use_ref) {
    struct gs_fwd_input in = {.model = r->model,
                              .cam = *cam,
                              .sh_degree = sh_degree,
                              .background = {bg[0], bg[1], bg[2]}};
    int rc = gs_fwd_run(r->fwd, NULL, &in, 0, err);
    if (!rc) rc = gs_fwd_read_image(r->fwd, rgb, NULL, NULL, err);
    return rc;
  }
  struct gs_ref_opts o = {
      .sh_degree = sh_degree, .background = {bg[0], bg[1], bg[2]}, .alpha_max = r->alpha_max};
  struct gs_ref_frame *f = NULL;
  int rc = gs_ref_forward(m, cam, &o, &f, err);
  if (rc) return rc;
  memcpy(rgb, f->rgb, (size_t)cam->width * cam->height * 3 * sizeof(float));
  gs_ref_frame_destroy(&f);
  return 0;
}

/* "train/r_8.png" -> "r_8.png": output files are named after the view's image. */
static const char *base_name(const char *name) {
  const char *s = strrchr(name, '/');
  return s ? s + 1 : name;
}

int gs_cmd_render(int argc, char **argv) {
  struct render_args a;
  int pr = parse_args(argc, argv, &a);
  if (pr) {
    if (pr < 0) usage(stderr);
    return pr > 0 ? GS_EXIT_OK : GS_EXIT_USAGE;
  }
  struct sw_err err = {0};
  struct gs_scene *sc = NULL;
  struct gs_model *m = NULL;
  struct renderer rd;
  float *rgb = NULL;
  json_t *views_json = json_array();
  int exit_code = GS_EXIT_OK;
  int rd_open = 0;

  struct gs_scene_opts so = {.background = a.background,
                             .resolution_scale = a.resolution_scale,
                             .skip = a.test_split ? GS_SCENE_SKIP_TRAIN_IMAGES
                                                  : GS_SCENE_SKIP_TEST_IMAGES};
  int degree = 3;
  if (gs_scene_load(a.scene, &so, &sc, &err) || gs_ply_read(a.ply, &m, &degree, &err)) {
    fprintf(stderr, "splat-train render: %s\n", err.msg);
    exit_code = GS_EXIT_USAGE;
    goto done;
  }
  uint32_t sh_degree = a.sh_degree >= 0 ? (uint32_t)a.sh_degree : (uint32_t)degree;
  const char *split = a.test_split ? "test" : "train";
  uint32_t n = a.test_split ? sc->n_test : sc->n_train;
  const struct gs_view *views = a.test_split ? sc->test : sc->train;
  if (n == 0) {
    fprintf(stderr, "splat-train render: scene %s has no %s views\n", sc->path, split);
    exit_code = GS_EXIT_USAGE;
    goto done;
  }
  char dir[4200];
  snprintf(dir, sizeof dir, "%s/%s", a.out, split);
  if (sw_fs_mkdir_p(dir, &err)) {
    fprintf(stderr, "splat-train render: %s\n", err.msg);
    exit_code = GS_EXIT_USAGE;
    goto done;
  }
  if (renderer_open(&rd, a.use_ref, a.alpha_max, m, &err)) {
    fprintf(stderr, "splat-train render: %s\n", err.msg);
    exit_code = GS_EXIT_DEVICE;
    rd_open = 1; /* partly opened: close what was made */
    goto done;
  }
  rd_open = 1;
  rgb = malloc((size_t)sc->width * sc->height * 3 * sizeof(float)); /* the largest view */
  if (!rgb) {
    fprintf(stderr, "splat-train render: out of memory\n");
    exit_code = GS_EXIT_USAGE;
    goto done;
  }
  float bg[3];
  for (int k = 0; k < 3; k++) bg[k] = a.background == GS_BG_WHITE ? 1.0f : 0.0f;
  printf("render: %u splats (SH degree %u), scene %s, %u %s views %ux%u%s, renderer %s\n", m->count,
         sh_degree, sc->path, n, split, sc->width, sc->height,
         a.test_split && sc->held_out ? " (held out: every 8th training view)" : "",
         a.use_ref ? "ref (C reference)" : "gpu");
  double psnr_sum = 0, ssim_sum = 0, ms_sum = 0;
  for (uint32_t i = 0; i < n; i++) {
    int64_t t0 = sw_clock_mono_ns();
    if (render_one(&rd, m, &views[i].cam, sh_degree, bg, rgb, &err)) {
      fprintf(stderr, "splat-train render: view %s: %s\n", views[i].name, err.msg);
      exit_code = a.use_ref ? GS_EXIT_USAGE : GS_EXIT_DEVICE;
      goto done;
    }
    double ms = (double)(sw_clock_mono_ns() - t0) * 1e-6;
    double psnr = 0, ssim = 0;
    char png[4400];
    snprintf(png, sizeof png, "%s/%s", dir, base_name(views[i].name));
    uint32_t w = views[i].cam.width, h = views[i].cam.height; /* views may differ in size */
    if (gs_metrics_psnr(rgb, views[i].rgb, w, h, &psnr, &err) ||
        gs_metrics_ssim(rgb, views[i].rgb, w, h, &ssim, &err) ||
        gs_png_write_float(png, rgb, w, h, 3, &err)) {
      fprintf(stderr, "splat-train render: view %s: %s\n", views[i].name, err.msg);
      exit_code = err.code == SW_EINVAL ? GS_EXIT_DIVERGED : GS_EXIT_USAGE;
      goto done;
    }
    printf("  %-24s psnr %7.3f dB  ssim %.4f  %8.1f ms\n", views[i].name, psnr, ssim, ms);
    psnr_sum += psnr;
    ssim_sum += ssim;
    ms_sum += ms;
    json_array_append_new(views_json,
                          json_pack("{s:s, s:f, s:f, s:f}", "view", views[i].name, "psnr_db",
                                    isfinite(psnr) ? psnr : 999.0, "ssim", ssim, "render_ms", ms));
  }
  printf("mean over %u %s views: psnr %.3f dB  ssim %.4f  render %.1f ms/view\n", n, split,
         psnr_sum / n, ssim_sum / n, ms_sum / n);
  json_t *root =
      json_pack("{s:s, s:s, s:s, s:s, s:b, s:i, s:i, s:s, s:s, s:i, s:f, s:f, s:o}", "ply", a.ply,
                "scene", sc->path, "scene_sha256", sc->sha256, "split", split, "held_out_split",
                a.test_split && sc->held_out, "width", (int)sc->width, "height", (int)sc->height,
                "background", a.background == GS_BG_WHITE ? "white" : "black", "renderer",
                a.use_ref ? "ref" : "gpu", "splats", (int)m->count, "psnr_db", psnr_sum / n, "ssim",
                ssim_sum / n, "views", views_json);
  views_json = NULL;
  char *text = root ? json_dumps(root, JSON_INDENT(2) | JSON_REAL_PRECISION(10)) : NULL;
  json_decref(root);
  char path[4300];
  snprintf(path, sizeof path, "%s/metrics.json", a.out);
  if (!text || sw_fs_write_atomic(path, text, strlen(text), &err)) {
    fprintf(stderr, "splat-train render: %s\n", text ? err.msg : "cannot format metrics.json");
    exit_code = GS_EXIT_USAGE;
  }
  free(text);
done:
  json_decref(views_json);
  if (rd_open) renderer_close(&rd);
  free(rgb);
  gs_model_destroy(&m);
  gs_scene_destroy(&sc);
  return exit_code;
}
