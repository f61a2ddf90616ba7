/* test_ref.c: Check suite for the C reference's forward pass, binning, SSIM / PSNR metrics,
 * Adam and the learning-rate schedule (gs_ref, gs_metrics). Gradients are checked in
 * test_ref_grad.c. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gs_metrics.h"
#include "gs_ref.h"
#include "test_ref_scene.h"

#define SH_C0 0.28209479177387814
#define SH_C1 0.4886025119029199

/* A camera at the origin looking down +z (identity view matrix). */
static void axis_camera(struct gs_camera *cam, uint32_t w, uint32_t h, float f) {
  memset(cam, 0, sizeof *cam);
  cam->width = w;
  cam->height = h;
  cam->fx = cam->fy = f;
  cam->cx = 0.5f * (float)w;
  cam->cy = 0.5f * (float)h;
  for (int k = 0; k < 4; k++) cam->viewmat[5 * k] = 1.0f;
}

/* One splat at `pos` with scales, quaternion, opacity logit and a degree-0 colour. */
static void set_splat(struct gs_model *m, uint32_t i, const float pos[3], const float scale[3],
                      const float quat[4], float logit, const float rgb[3]) {
  for (int k = 0; k < 3; k++) {
    m->means[3 * i + k] = pos[k];
    m->log_scales[3 * i + k] = logf(scale[k]);
    m->sh[GS_SH_COEFFS * 3 * i + k] = (float)((rgb[k] - 0.5) / SH_C0);
  }
  memcpy(m->quats + 4 * i, quat, 4 * sizeof(float));
  m->opacity[i] = logit;
}

/* ---- Forward: known values ---------------------------------------------------------------- */

START_TEST(single_splat_known_values) {
  struct gs_model m;
  ck_assert_int_eq(gs_ref_model_alloc(&m, 2, NULL), 0);
  const float pos[3] = {0, 0, 5}, iso[3] = {0.2f, 0.2f, 0.2f}, ident[4] = {2, 0, 0, 0};
  const float rgb[3] = {0.8f, 0.3f, 0.5f};
  set_splat(&m, 0, pos, iso, ident, 0.0f, rgb);
  /* Splat 1: rotated 90 degrees about z, long along its x axis -> long along image y. */
  const float pos1[3] = {0.8f, 0, 5}, aniso[3] = {0.4f, 0.2f, 0.2f};
  const float rotz[4] = {0.70710678f, 0, 0, 0.70710678f};
  set_splat(&m, 1, pos1, aniso, rotz, 1.0f, rgb);
  struct gs_camera cam;
  axis_camera(&cam, 48, 32, 50.0f);
  struct gs_ref_opts opts = {.sh_degree = 0, .background = {0.1f, 0.2f, 0.9f}};
  struct gs_ref_frame *f;
  struct sw_err err = {0};
  ck_assert_int_eq(gs_ref_forward(&m, &cam, &opts, &f, &err), 0);
  ck_assert_uint_eq(f->tiles_x, 3);
  ck_assert_uint_eq(f->tiles_y, 2);

  /* Splat 0: cov2d = (fx s / z)^2 + 0.3 = 4.3 on the diagonal. */
  const struct gs_ref_splat *s = &f->splats[0];
  ck_assert_float_eq_tol(s->mean2d[0], 24.0f, 1e-5f);
  ck_assert_float_eq_tol(s->mean2d[1], 16.0f, 1e-5f);
  ck_assert_float_eq_tol(s->cov2d[0], 4.3f, 1e-5f);
  ck_assert_float_eq_tol(s->cov2d[1], 0.0f, 1e-6f);
  ck_assert_float_eq_tol(s->conic[0], 1.0f / 4.3f, 1e-6f);
  ck_assert_float_eq_tol(s->conic[2], 1.0f / 4.3f, 1e-6f);
  ck_assert_float_eq_tol(s->depth, 5.0f, 1e-6f);
  /* Opacity 0.5: the box reaches e = sqrt(2 ln(127.5)) = 3.114 deviations; ceil(3.114 sqrt(4.3)).
   */
  ck_assert_int_eq(s->radius, 7);
  /* x in [17, 31] -> tiles 1..1; y in [9, 23] -> tiles 0..1. */
  ck_assert_uint_eq(s->rect[0], 1);
  ck_assert_uint_eq(s->rect[2], 2);
  ck_assert_uint_eq(s->rect[1], 0);
  ck_assert_uint_eq(s->rect[3], 2);
  ck_assert_uint_eq(s->tiles_touched, 2);
  ck_assert_float_eq_tol(s->opacity, 0.5f, 1e-7f);
  for (int c = 0; c < 3; c++) ck_assert_float_eq_tol(s->rgb[c], rgb[c], 1e-6f);

  /* Splat 1: the rotation swaps the axes: yy = (50 0.4 / 5)^2 + 0.3 = 16.3; off axis at
   * x / z = 0.16, J's -fx x / z^2 = -1.6 term adds 1.6^2 0.2^2 = 0.1024 to xx = 4.3. */
  const struct gs_ref_splat *s1 = &f->splats[1];
  ck_assert_float_eq_tol(s1->mean2d[0], 32.0f, 1e-5f);
  ck_assert_float_eq_tol(s1->cov2d[0], 4.4024f, 1e-4f);
  ck_assert_float_eq_tol(s1->cov2d[2], 16.3f, 1e-4f);
  ck_assert_float_eq_tol(s1->cov2d[1], 0.0f, 1e-5f);
  /* Opacity sigmoid(1) = 0.731: e = sqrt(2 ln(186.4)) = 3.234; the larger axis gives
   * ceil(3.234 sqrt(16.3)) = ceil(13.06). */
  ck_assert_int_eq(s1->radius, 14);

  /* Pixel (23, 15) (centre 23.5, 15.5): only splat 0 reaches it with measurable alpha? Splat 1
   * is 8.5 px away along x where its variance is 4.3: sigma = 8.4, alpha < 1/255. */
  double a0 = 0.5 * exp(-0.5 * (0.25 + 0.25) / 4.3);
  size_t p = 15 * 48 + 23;
  for (int c = 0; c < 3; c++)
    ck_assert_float_eq_tol(f->rgb[3 * p + c], (float)(rgb[c] * a0 + (1 - a0) * opts.background[c]),
                           2e-6f);
  ck_assert_float_eq_tol(f->final_t[p], (float)(1 - a0), 1e-6f);
  ck_assert_uint_eq(f->last[p], 1);
  /* A corner pixel sees nothing: background, T = 1, no contributor. */
  ck_assert_float_eq(f->final_t[0], 1.0f);
  ck_assert_uint_eq(f->last[0], 0);
  for (int c = 0; c < 3; c++) ck_assert_float_eq(f->rgb[c], opts.background[c]);
  gs_ref_frame_destroy(&f);
  ck_assert_ptr_null(f);

  /* Degree 1, direction +z: colour = C0 sh0 + C1 sh2 + 0.5 (the z-basis coefficient). */
  m.sh[3 * 2 + 0] = 0.25f;
  opts.sh_degree = 1;
  ck_assert_int_eq(gs_ref_forward(&m, &cam, &opts, &f, &err), 0);
  ck_assert_float_eq_tol(f->splats[0].rgb[0], (float)(0.8 + SH_C1 * 0.25), 1e-6f);
  ck_assert_float_eq_tol(f->splats[0].rgb[1], 0.3f, 1e-6f);
  gs_ref_frame_destroy(&f);
  /* A strongly negative colour clamps at 0 and is flagged (no gradient flows through it). */
  m.sh[1] = -3.0f;
  ck_assert_int_eq(gs_ref_forward(&m, &cam, &opts, &f, &err), 0);
  ck_assert_float_eq(f->splats[0].rgb[1], 0.0f);
  ck_assert_uint_eq(f->splats[0].clamped[1], 1);
  ck_assert_uint_eq(f->splats[0].clamped[0], 0);
  gs_ref_frame_destroy(&f);
  gs_ref_model_free(&m);
}
END_TEST

START_TEST(alpha_clamp_and_culling) {
  struct gs_model m;
  ck_assert_int_eq(gs_ref_model_alloc(&m, 4, NULL), 0);
  const float iso[3] = {0.2f, 0.2f, 0.2f}, q[4] = {1, 0, 0, 0}, rgb[3] = {1, 0, 0};
  /* Splat 0: in view, opacity sigmoid(12) ~ 1: alpha clamps at 0.99 near its centre. */
  const float p0[3] = {0, 0, 5}, behind[3] = {0, 0, -1}, near[3] = {0, 0, 0.005f},
              off[3] = {100, 0, 5}, big[3] = {1, 1, 1};
  /* cov2d = (50 / 5)^2 + 0.3 = 100.3: 0.5 px off centre, G = 0.9975. */
  set_splat(&m, 0, p0, big, q, 12.0f, rgb);
  set_splat(&m, 1, behind, iso, q, 0.0f, rgb);
  set_splat(&m, 2, near, iso, q, 0.0f, rgb);
  set_splat(&m, 3, off, iso, q, 0.0f, rgb);
  struct gs_camera cam;
  axis_camera(&cam, 32, 32, 50.0f);
  struct gs_ref_opts opts = {.sh_degree = 0, .background = {0, 0, 1}};
  struct gs_ref_frame *f;
  ck_assert_int_eq(gs_ref_forward(&m, &cam, &opts, &f, NULL), 0);
  for (uint32_t i = 1; i < 4; i++) {
    ck_assert_int_eq(f->splats[i].radius, 0);
    ck_assert_uint_eq(f->splats[i].tiles_touched, 0);
    ck_assert_float_eq(f->splats[i].opacity, 0.0f);
  }
  ck_assert_uint_eq(f->n_pairs, f->splats[0].tiles_touched);
  /* Pixel (15, 15), centre 0.5 px from the mean in x and y: o G > 0.99, so alpha = 0.99. */
  size_t p = 15 * 32 + 15;
  ck_assert_float_eq_tol(f->final_t[p], 0.01f, 1e-7f);
  ck_assert_float_eq_tol(f->rgb[3 * p], 0.99f, 1e-6f);
  ck_assert_float_eq_tol(f->rgb[3 * p + 2], 0.01f, 1e-7f);
  gs_ref_frame_destroy(&f);
  gs_ref_model_free(&m);
}
END_TEST

/* ---- Binning and sorting ------------------------------------------------------------------ */

START_TEST(binning_sorted_stable_complete) {
  struct gs_model m;
  const uint32_t n = 60;
  ck_assert_int_eq(gs_ref_model_alloc(&m, n, NULL), 0);
  tr_fill_scene(&m, 77, 1.0f, 0.05f, 0.4f, -1.0f, 2.0f);
  /* Splats 10 and 11 share a mean (equal depth, equal keys): the stable sort keeps 10 first. */
  memcpy(m.means + 33, m.means + 30, 3 * sizeof(float));
  struct gs_camera cam;
  tr_orbit_camera(&cam, 50, 37, 45.0f, 4.0f, 0.3f, 0.2f);
  struct gs_ref_opts opts = {.sh_degree = 3, .background = {1, 1, 1}};
  struct gs_ref_frame *f;
  ck_assert_int_eq(gs_ref_forward(&m, &cam, &opts, &f, NULL), 0);
  ck_assert_uint_eq(f->tiles_x, 4);
  ck_assert_uint_eq(f->tiles_y, 3);
  uint64_t total = 0;
  uint32_t multi = 0;
  for (uint32_t i = 0; i < n; i++) {
    total += f->splats[i].tiles_touched;
    multi += f->splats[i].tiles_touched > 1;
  }
  ck_assert_uint_eq(f->n_pairs, total);
  ck_assert_uint_gt(multi, 5); /* many splats straddle tile borders */
  ck_assert_uint_gt(f->splats[10].tiles_touched, 0);
  int seen_tie = 0;
  for (uint32_t k = 0; k < f->n_pairs; k++) {
    uint32_t tile = (uint32_t)(f->keys[k] >> 32), id = f->ids[k];
    float depth;
    uint32_t bits = (uint32_t)f->keys[k];
    memcpy(&depth, &bits, sizeof depth);
    ck_assert_float_eq(depth, f->splats[id].depth);
    /* The pair's tile lies in its splat's rectangle, and inside the tile's range. */
    const uint32_t *r = f->splats[id].rect;
    ck_assert(tile % f->tiles_x >= r[0] && tile % f->tiles_x < r[2]);
    ck_assert(tile / f->tiles_x >= r[1] && tile / f->tiles_x < r[3]);
    ck_assert(k >= f->ranges[2 * tile] && k < f->ranges[2 * tile + 1]);
    if (k > 0) {
      ck_assert(f->keys[k - 1] <= f->keys[k]);
      if (f->keys[k - 1] == f->keys[k]) {
        ck_assert_uint_lt(f->ids[k - 1], id);
        seen_tie = 1;
      }
    }
  }
  ck_assert(seen_tie);
  /* Every (splat, tile) of every rectangle is present exactly once: the counts per tile add up. */
  uint32_t covered = 0;
  for (uint32_t t = 0; t < f->tiles_x * f->tiles_y; t++)
    covered += f->ranges[2 * t + 1] - f->ranges[2 * t];
  ck_assert_uint_eq(covered, f->n_pairs);
  gs_ref_frame_destroy(&f);
  gs_ref_model_free(&m);
}
END_TEST

/* ---- Rasterize against an independent per-pixel compositor -------------------------------- */

struct bf_item {
  uint32_t depth_bits, id;
};

static int bf_cmp(const void *pa, const void *pb) {
  const struct bf_item *a = pa, *b = pb;
  if (a->depth_bits != b->depth_bits) return a->depth_bits < b->depth_bits ? -1 : 1;
  return a->id < b->id ? -1 : a->id > b->id;
}

/* For each pixel: the splats whose tile rectangle holds the pixel's tile, sorted front to back,
 * composited by the contract's rules. Returns how many pixels stopped at the T threshold. */
static int brute_force_compare(const struct gs_ref_frame_d *f) {
  int stopped = 0;
  struct bf_item *items = malloc(f->count * sizeof *items);
  for (uint32_t py = 0; py < f->height; py++)
    for (uint32_t px = 0; px < f->width; px++) {
      uint32_t tx = px / GS_TILE, ty = py / GS_TILE, n = 0;
      for (uint32_t i = 0; i < f->count; i++) {
        const struct gs_ref_splat_d *s = &f->splats[i];
        if (s->radius > 0 && tx >= s->rect[0] && tx < s->rect[2] && ty >= s->rect[1] &&
            ty < s->rect[3]) {
          float d = (float)s->depth;
          memcpy(&items[n].depth_bits, &d, 4);
          items[n++].id = i;
        }
      }
      qsort(items, n, sizeof *items, bf_cmp);
      double t = 1.0, col[3] = {0, 0, 0};
      uint32_t last = 0;
      for (uint32_t k = 0; k < n; k++) {
        const struct gs_ref_splat_d *s = &f->splats[items[k].id];
        double dx = s->mean2d[0] - (px + 0.5), dy = s->mean2d[1] - (py + 0.5);
        double sigma =
            0.5 * (s->conic[0] * dx * dx + s->conic[2] * dy * dy) + s->conic[1] * dx * dy;
        if (sigma < 0) continue;
        /* The thresholds are the contract's float constants, in both precisions. */
        double alpha = fmin(GS_ALPHA_MAX, s->opacity * exp(-sigma));
        if (alpha < GS_ALPHA_MIN) continue;
        if (t * (1 - alpha) < GS_T_MIN) {
          stopped++;
          break;
        }
        for (int c = 0; c < 3; c++) col[c] += s->rgb[c] * alpha * t;
        t *= 1 - alpha;
        last = k + 1;
      }
      size_t p = (size_t)py * f->width + px;
      for (int c = 0; c < 3; c++)
        ck_assert_double_eq_tol(f->rgb[3 * p + c], col[c] + t * f->background[c], 1e-12);
      ck_assert_double_eq_tol(f->final_t[p], t, 1e-12);
      ck_assert_uint_eq(f->last[p], last);
    }
  free(items);
  return stopped;
}

START_TEST(rasterize_matches_brute_force) {
  struct gs_model m;
  const uint32_t n = 40;
  ck_assert_int_eq(gs_ref_model_alloc(&m, n, NULL), 0);
  /* Opaque splats (logits up to 5) stacked deep enough that some pixels hit T < 1e-4. */
  tr_fill_scene(&m, 5, 0.5f, 0.1f, 0.5f, 0.0f, 5.0f);
  struct gs_ref_model_d *md;
  ck_assert_int_eq(gs_ref_model_to_d(&m, &md, NULL), 0);
  int stopped = 0;
  for (int c = 0; c < 3; c++) {
    struct gs_camera cam;
    tr_orbit_camera(&cam, 40, 33, 40.0f, 4.0f, 1.1f * (float)c, 0.2f);
    struct gs_ref_camera_d camd;
    gs_ref_camera_to_d(&cam, &camd);
    struct gs_ref_opts opts = {.sh_degree = (uint32_t)c + 1, .background = {0.3f, 0.6f, 0.9f}};
    struct gs_ref_frame_d *fd;
    ck_assert_int_eq(gs_ref_forward_d(md, &camd, &opts, &fd, NULL), 0);
    stopped += brute_force_compare(fd);

    /* The float path agrees with the double path to float precision. */
    struct gs_ref_frame *ff;
    ck_assert_int_eq(gs_ref_forward(&m, &cam, &opts, &ff, NULL), 0);
    ck_assert_uint_eq(ff->n_pairs, fd->n_pairs);
    double maxdiff = 0.0;
    for (size_t k = 0; k < (size_t)ff->width * ff->height * 3; k++)
      maxdiff = fmax(maxdiff, fabs(ff->rgb[k] - fd->rgb[k]));
    printf("float vs double forward cam %d: max |rgb diff| %.3g over %u pairs\n", c, maxdiff,
           ff->n_pairs);
    ck_assert_double_lt(maxdiff, 1e-5);
    for (uint32_t i = 0; i < n; i++) {
      ck_assert_int_eq(ff->splats[i].radius, fd->splats[i].radius);
      ck_assert_double_eq_tol(ff->splats[i].mean2d[0], fd->splats[i].mean2d[0], 1e-4);
      ck_assert_double_eq_tol(ff->splats[i].conic[1], fd->splats[i].conic[1], 1e-6);
    }
    gs_ref_frame_destroy(&ff);
    gs_ref_frame_destroy_d(&fd);
  }
  ck_assert_int_gt(stopped, 0); /* the early stop was exercised */
  gs_ref_model_d_destroy(&md);
  gs_ref_model_free(&m);
}
END_TEST

START_TEST(bad_input_is_refused) {
  struct gs_model m;
  ck_assert_int_eq(gs_ref_model_alloc(&m, 3, NULL), 0);
  struct gs_camera cam;
  axis_camera(&cam, 16, 16, 20.0f);
  struct gs_ref_opts opts = {.sh_degree = 4};
  static struct gs_ref_frame dummy;
  struct gs_ref_frame *f = &dummy; /* must be reset to NULL on failure */
  struct sw_err err = {0};
  ck_assert_int_eq(gs_ref_forward(&m, &cam, &opts, &f, &err), SW_EINVAL);
  ck_assert_ptr_null(f);
  ck_assert_ptr_nonnull(strstr(err.msg, "SH degree 4"));
  opts.sh_degree = 0;
  ck_assert_int_eq(gs_ref_frame_new(2, &cam, &opts, &f, NULL), 0);
  sw_err_clear(&err);
  ck_assert_int_eq(gs_ref_project(&m, &cam, f, &err), SW_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "3 splats"));
  gs_ref_frame_destroy(&f);
  gs_ref_frame_destroy(&f); /* NULL is fine */
  cam.width = 0;
  ck_assert_int_eq(gs_ref_forward(&m, &cam, &opts, &f, NULL), SW_EINVAL);
  float img[3] = {0}, dl[3];
  double loss;
  ck_assert_int_eq(gs_ref_loss(img, img, 1, 1, 1.5f, &loss, dl, NULL), SW_EINVAL);
  ck_assert_int_eq(gs_ref_loss(img, NULL, 1, 1, 0.2f, &loss, dl, NULL), SW_EINVAL);
  gs_ref_model_free(&m);
}
END_TEST

/* ---- SSIM and PSNR ------------------------------------------------------------------------ */

/* Weight sum of the normalised 1D window at position x of n when zero-padded. */
static double window_mass(int x, int n) {
  double sum = 0.0, in = 0.0;
  for (int k = -5; k <= 5; k++) {
    double e = exp(-(double)(k * k) / (2.0 * 1.5 * 1.5));
    sum += e;
    if (x + k >= 0 && x + k < n) in += e;
  }
  return in / sum;
}

START_TEST(ssim_identical_and_constant_images) {
  const uint32_t w = 19, h = 14;
  size_t n = (size_t)w * h * 3;
  float *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
  struct tr_rng r = {3};
  for (size_t k = 0; k < n; k++) a[k] = (float)tr_uniform(&r);
  double s;
  ck_assert_int_eq(gs_ref_ssim(a, a, w, h, &s, NULL, NULL), 0);
  ck_assert_double_eq_tol(s, 1.0, 1e-6);
  ck_assert_int_eq(gs_metrics_ssim(a, a, w, h, &s, NULL), 0);
  ck_assert_double_eq_tol(s, 1.0, 1e-12);

  /* Constant images u and v: with zero padding each pixel sees window mass W = Wx Wy, so
   * mu = u W, sigma_u^2 = u^2 W (1 - W), sigma_uv = u v W (1 - W): a closed form per pixel. */
  const double u = 0.7, v = 0.4, c1 = 1e-4, c2 = 9e-4;
  for (size_t k = 0; k < n; k++) {
    a[k] = (float)u;
    b[k] = (float)v;
  }
  double expect = 0.0;
  for (uint32_t y = 0; y < h; y++)
    for (uint32_t x = 0; x < w; x++) {
      double wm = window_mass((int)x, (int)w) * window_mass((int)y, (int)h);
      double m1 = u * wm, m2 = v * wm, var = wm * (1 - wm);
      expect += ((2 * m1 * m2 + c1) * (2 * u * v * var + c2)) /
                ((m1 * m1 + m2 * m2 + c1) * ((u * u + v * v) * var + c2));
    }
  expect /= (double)(w * h);
  ck_assert_int_eq(gs_metrics_ssim(a, b, w, h, &s, NULL), 0);
  printf("ssim of constants %.2f / %.2f: %.9f (closed form %.9f)\n", u, v, s, expect);
  ck_assert_double_eq_tol(s, expect, 1e-6);
  /* Interior pixels alone would give (2uv + C1) / (u^2 + v^2 + C1) = 0.86166; borders differ. */
  ck_assert_double_lt(fabs(s - (2 * u * v + c1) / (u * u + v * v + c1)), 0.2);
  free(a);
  free(b);
}
END_TEST

/* Direct 2D-window SSIM (no separable passes), an independent implementation, averaged over the
 * pixels at least `border` from every edge (0: all; 5: the windows inside the image). */
static double ssim_direct(const double *a, const double *b, int w, int h, int border) {
  double g[11], sum = 0.0, total = 0.0;
  for (int k = 0; k < 11; k++) sum += g[k] = exp(-(double)((k - 5) * (k - 5)) / 4.5);
  for (int k = 0; k < 11; k++) g[k] /= sum;
  for (int ch = 0; ch < 3; ch++)
    for (int y = border; y < h - border; y++)
      for (int x = border; x < w - border; x++) {
        double m1 = 0, m2 = 0, e11 = 0, e22 = 0, e12 = 0;
        for (int j = -5; j <= 5; j++)
          for (int i = -5; i <= 5; i++) {
            int xx = x + i, yy = y + j;
            if (xx < 0 || yy < 0 || xx >= w || yy >= h) continue;
            double wt = g[i + 5] * g[j + 5], p = a[3 * (yy * w + xx) + ch],
                   q = b[3 * (yy * w + xx) + ch];
            m1 += wt * p;
            m2 += wt * q;
            e11 += wt * p * p;
            e22 += wt * q * q;
            e12 += wt * p * q;
          }
        double s11 = e11 - m1 * m1, s22 = e22 - m2 * m2, s12 = e12 - m1 * m2;
        total += ((2 * m1 * m2 + 1e-4) * (2 * s12 + 9e-4)) /
                 ((m1 * m1 + m2 * m2 + 1e-4) * (s11 + s22 + 9e-4));
      }
  return total / (3.0 * (w - 2 * border) * (h - 2 * border));
}

START_TEST(ssim_matches_direct_window) {
  const int w = 23, h = 13;
  size_t n = (size_t)w * h * 3;
  double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
  struct tr_rng r = {8};
  for (size_t k = 0; k < n; k++) {
    b[k] = tr_uniform(&r);
    a[k] = 0.5 * b[k] + 0.5 * tr_uniform(&r);
  }
  double s, sba;
  ck_assert_int_eq(gs_ref_ssim_d(a, b, w, h, &s, NULL, NULL), 0);
  ck_assert_int_eq(gs_ref_ssim_d(b, a, w, h, &sba, NULL, NULL), 0);
  double direct = ssim_direct(a, b, w, h, 0);
  printf("ssim random pair: %.12f, direct window %.12f\n", s, direct);
  ck_assert_double_eq_tol(s, direct, 1e-12);
  ck_assert_double_eq_tol(s, sba, 1e-12); /* symmetric */
  ck_assert_double_lt(s, 0.9);
  ck_assert_double_gt(s, 0.1);
  free(a);
  free(b);
}
END_TEST

/* gsplat's padding valid: the mean over the 13x3 pixels whose window is inside a 23x13 image,
 * against the direct window; it differs from the zero-padded mean. Images under 11x11 have no
 * such pixel and are refused. */
START_TEST(ssim_valid_matches_direct_window) {
  const int w = 23, h = 13;
  size_t n = (size_t)w * h * 3;
  double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
  struct tr_rng r = {9};
  for (size_t k = 0; k < n; k++) {
    b[k] = tr_uniform(&r);
    a[k] = 0.5 * b[k] + 0.5 * tr_uniform(&r);
  }
  double s, same;
  ck_assert_int_eq(gs_ref_ssim_padded_d(a, b, w, h, GS_SSIM_VALID, &s, NULL, NULL), 0);
  ck_assert_int_eq(gs_ref_ssim_d(a, b, w, h, &same, NULL, NULL), 0);
  double direct = ssim_direct(a, b, w, h, GS_SSIM_HALF);
  printf("ssim valid: %.12f, direct window %.12f, same padding %.12f\n", s, direct, same);
  ck_assert_double_eq_tol(s, direct, 1e-12);
  ck_assert_double_gt(fabs(s - same), 1e-3);
  float af[3 * 11 * 11] = {0}, bf[3 * 11 * 11] = {0};
  struct sw_err err = {0};
  ck_assert_int_eq(gs_ref_ssim_padded(af, bf, 11, 11, GS_SSIM_VALID, &s, NULL, &err), 0);
  ck_assert_double_eq_tol(s, 1.0, 1e-6); /* one pixel, identical images */
  ck_assert_int_eq(gs_ref_ssim_padded(af, bf, 10, 11, GS_SSIM_VALID, &s, NULL, &err), SW_EINVAL);
  ck_assert_msg(strstr(err.msg, "11x11") != NULL, "%s", err.msg);
  ck_assert_int_eq(gs_ref_ssim_padded(af, bf, 11, 11, 2, &s, NULL, NULL), SW_EINVAL);
  free(a);
  free(b);
}
END_TEST

START_TEST(psnr_known_values) {
  const uint32_t w = 8, h = 5;
  size_t n = (size_t)w * h * 3;
  float a[8 * 5 * 3], b[8 * 5 * 3];
  for (size_t k = 0; k < n; k++) {
    a[k] = 0.5f;
    b[k] = 0.6f;
  }
  double p;
  ck_assert_int_eq(gs_metrics_psnr(a, b, w, h, &p, NULL), 0);
  ck_assert_double_eq_tol(p, 20.0, 1e-5); /* MSE 0.01 */
  for (size_t k = 0; k < n; k++) b[k] = k % 2 ? 0.51f : 0.49f;
  ck_assert_int_eq(gs_metrics_psnr(a, b, w, h, &p, NULL), 0);
  ck_assert_double_eq_tol(p, 40.0, 1e-4); /* MSE 1e-4 */
  ck_assert_int_eq(gs_metrics_psnr(a, a, w, h, &p, NULL), 0);
  ck_assert(isinf(p) && p > 0);
  /* Both sides are clamped to [0, 1] first: 1.5 scores as 1.0. */
  for (size_t k = 0; k < n; k++) {
    a[k] = 1.5f;
    b[k] = 1.0f;
  }
  ck_assert_int_eq(gs_metrics_psnr(a, b, w, h, &p, NULL), 0);
  ck_assert(isinf(p));
  a[7] = NAN;
  struct sw_err err = {0};
  ck_assert_int_eq(gs_metrics_psnr(a, b, w, h, &p, &err), SW_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "NaN at pixel 2"));
  ck_assert_int_eq(gs_metrics_ssim(a, b, 0, h, &p, NULL), SW_EINVAL);
}
END_TEST

/* The evaluation SSIM (gs_metrics, what result.json reports) and the reference's differentiable
 * SSIM (gs_ref, the oracle of the GPU loss) are one definition: on inputs already in [0, 1] they
 * give the same bits in double, from a 1-pixel-wide image up. */
START_TEST(metrics_ssim_is_the_reference_ssim) {
  static const uint32_t size[3][2] = {{23, 17}, {11, 11}, {1, 5}};
  struct tr_rng r = {12};
  for (int c = 0; c < 3; c++) {
    uint32_t w = size[c][0], h = size[c][1];
    size_t n = (size_t)w * h * 3;
    float *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    double *ad = malloc(n * sizeof *ad), *bd = malloc(n * sizeof *bd);
    for (size_t k = 0; k < n; k++) {
      b[k] = (float)tr_uniform(&r);
      a[k] = 0.5f * b[k] + 0.5f * (float)tr_uniform(&r);
      ad[k] = a[k];
      bd[k] = b[k];
    }
    double sm, sr;
    ck_assert_int_eq(gs_metrics_ssim(a, b, w, h, &sm, NULL), 0);
    ck_assert_int_eq(gs_ref_ssim_d(ad, bd, w, h, &sr, NULL, NULL), 0);
    ck_assert_msg(sm == sr, "%ux%u: metric %.17g, reference %.17g", w, h, sm, sr);
    free(a);
    free(b);
    free(ad);
    free(bd);
  }
}
END_TEST

/* ---- Adam and the learning-rate schedule -------------------------------------------------- */

START_TEST(adam_matches_double_and_group_rates) {
  enum { N = 50, STEPS = 12 };
  float p[N], m[N] = {0}, v[N] = {0};
  double pd[N], md[N] = {0}, vd[N] = {0};
  struct tr_rng r = {4};
  for (int k = 0; k < N; k++) pd[k] = p[k] = (float)tr_normal(&r);
  const struct gs_ref_adam hp = {0.9f, 0.999f, 1e-15f};
  const float lr = 0.01f;
  for (uint32_t step = 1; step <= STEPS; step++) {
    float g[N];
    for (int k = 0; k < N; k++) g[k] = (float)tr_normal(&r);
    float before = p[0];
    gs_ref_adam_step(p, g, m, v, N, lr, &hp, step);
    if (step == 1) /* first step: m / sqrt(v) is sign(g) after bias correction */
      ck_assert_float_eq_tol(before - p[0], g[0] > 0 ? lr : -lr, 1e-6f);
    for (int k = 0; k < N; k++) {
      md[k] = 0.9 * md[k] + 0.1 * g[k];
      vd[k] = 0.999 * vd[k] + 0.001 * (double)g[k] * g[k];
      double mh = md[k] / (1 - pow(0.9, step)), vh = vd[k] / (1 - pow(0.999, step));
      pd[k] -= lr * mh / (sqrt(vh) + 1e-15);
    }
  }
  for (int k = 0; k < N; k++) ck_assert_double_eq_tol(p[k], pd[k], 1e-5);

  /* Whole model: every group moves by its own rate on the first step (g != 0 everywhere). */
  struct gs_model prm, grad, m1, m2;
  ck_assert_int_eq(gs_ref_model_alloc(&prm, 3, NULL), 0);
  ck_assert_int_eq(gs_ref_model_alloc(&grad, 3, NULL), 0);
  ck_assert_int_eq(gs_ref_model_alloc(&m1, 3, NULL), 0);
  ck_assert_int_eq(gs_ref_model_alloc(&m2, 3, NULL), 0);
  tr_fill_scene(&grad, 12, 1.0f, 0.1f, 1.0f, -1.0f, 1.0f);
  for (int k = 0; k < 3 * GS_SH_COEFFS * 3; k++)
    if (grad.sh[k] == 0.0f) grad.sh[k] = 1.0f;
  const struct gs_ref_lr lrs = {1e-1f, 1e-2f, 1e-3f, 1e-4f, 1e-5f, 1e-6f};
  gs_ref_adam_model(&prm, &grad, &m1, &m2, &lrs, &hp, 1);
  ck_assert_float_eq_tol(fabsf(prm.means[4]), lrs.means, lrs.means * 1e-5f);
  ck_assert_float_eq_tol(fabsf(prm.log_scales[5]), lrs.log_scales, lrs.log_scales * 1e-5f);
  ck_assert_float_eq_tol(fabsf(prm.quats[11]), lrs.quats, lrs.quats * 1e-5f);
  ck_assert_float_eq_tol(fabsf(prm.opacity[2]), lrs.opacity, lrs.opacity * 1e-5f);
  size_t s1 = GS_SH_COEFFS * 3; /* splat 1 */
  ck_assert_float_eq_tol(fabsf(prm.sh[s1 + 2]), lrs.sh_dc, lrs.sh_dc * 1e-5f);
  ck_assert_float_eq_tol(fabsf(prm.sh[s1 + 3]), lrs.sh_rest, lrs.sh_rest * 1e-5f);
  ck_assert_float_eq_tol(fabsf(prm.sh[s1 + 47]), lrs.sh_rest, lrs.sh_rest * 1e-5f);
  gs_ref_model_free(&prm);
  gs_ref_model_free(&grad);
  gs_ref_model_free(&m1);
  gs_ref_model_free(&m2);
}
END_TEST

START_TEST(position_lr_schedule) {
  const double ext = 2.5;
  ck_assert_double_eq_tol(gs_ref_position_lr(0, 30000, ext), 1.6e-4 * ext, 1e-15);
  ck_assert_double_eq_tol(gs_ref_position_lr(15000, 30000, ext), 1.6e-5 * ext, 1e-15);
  ck_assert_double_eq_tol(gs_ref_position_lr(30000, 30000, ext), 1.6e-6 * ext, 1e-15);
  ck_assert_double_eq_tol(gs_ref_position_lr(40000, 30000, ext), 1.6e-6 * ext, 1e-15);
  /* Exponential: equal ratios over equal steps. */
  double a = gs_ref_position_lr(1000, 7000, 1.0), b = gs_ref_position_lr(2000, 7000, 1.0),
         c = gs_ref_position_lr(3000, 7000, 1.0);
  ck_assert_double_eq_tol(b / a, c / b, 1e-12);
  ck_assert_double_lt(b, a);
}
END_TEST

int main(void) {
  Suite *s = suite_create("ref");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, single_splat_known_values);
  tcase_add_test(tc, alpha_clamp_and_culling);
  tcase_add_test(tc, binning_sorted_stable_complete);
  tcase_add_test(tc, rasterize_matches_brute_force);
  tcase_add_test(tc, bad_input_is_refused);
  tcase_add_test(tc, ssim_identical_and_constant_images);
  tcase_add_test(tc, ssim_matches_direct_window);
  tcase_add_test(tc, ssim_valid_matches_direct_window);
  tcase_add_test(tc, psnr_known_values);
  tcase_add_test(tc, metrics_ssim_is_the_reference_ssim);
  tcase_add_test(tc, adam_matches_double_and_group_rates);
  tcase_add_test(tc, position_lr_schedule);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
