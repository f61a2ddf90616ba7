/* test_ref_grad.c: gradient checks of the C reference (gs_ref): every backward stage against
 * central finite differences of the double-precision forward, on tiny scenes (8 splats, 24x24
 * images, so splats straddle the tile border at 16, several cameras):
 *  - loss backward (L1 + D-SSIM) w.r.t. the image, with the zero-padded SSIM map and with
 *    gsplat's padding valid;
 *  - rasterize backward w.r.t. each splat's mean2d, conic, colour and opacity;
 *  - projection backward w.r.t. the 3D parameters, through a random linear functional of the
 *    projected splats;
 *  - the whole forward + loss w.r.t. every parameter group (means, log-scales, quaternions,
 *    opacity logits, SH at every degree, with masking above the active degree);
 *  - the same with splats beyond the EWA Jacobian's field-of-view clamp;
 *  - the float path against the double path, and sanity checks that a wrong gradient fails.
 * Opaque scenes are checked with the default alpha clamp 0.99 and with gsplat's 0.999.
 * Errors are measured per group as ||g_fd - g|| / ||g_fd||; the tolerance is 1e-3. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gs_ref.h"
#include "test_ref_scene.h"

#define N_SPLATS 8
#define IMG 24
#define FOCAL 40.0f
#define TOL 1e-3
#define N_CAMS 3

/* Relative error norm of an analytic gradient against finite differences. A group whose both
 * norms vanish compares as 0 (it is checked separately where that matters). */
static double rel_err(const double *fd, const double *an, size_t n) {
  double num = 0.0, den = 0.0;
  for (size_t k = 0; k < n; k++) {
    num += (fd[k] - an[k]) * (fd[k] - an[k]);
    den += fd[k] * fd[k];
  }
  if (den == 0.0) return num == 0.0 ? 0.0 : INFINITY;
  return sqrt(num / den);
}

static double norm(const double *v, size_t n) {
  double s = 0.0;
  for (size_t k = 0; k < n; k++) s += v[k] * v[k];
  return sqrt(s);
}

/* ---- Fixture: a tiny scene in double, cameras, a random target image ---------------------- */

struct fixture {
  struct gs_model mf; /* float original */
  struct gs_ref_model_d *m;
  struct gs_camera camf[N_CAMS];
  struct gs_ref_camera_d cam[N_CAMS];
  struct gs_ref_opts opts;
  double target[IMG * IMG * 3];
  double lambda;
};

/* Translucent scenes (opacity 0.38..0.73) keep every pixel far from the thresholds; opaque ones
 * (0.97..0.9999, packed closer) reach the alpha clamp (0.99, or alpha_max when not 0) and the
 * T < 1e-4 early stop, so the gradients are also checked where those branches are taken. */
static void fixture_init_clamp(struct fixture *fx, uint64_t seed, uint32_t sh_degree, int opaque,
                               float alpha_max) {
  memset(fx, 0, sizeof *fx);
  ck_assert_int_eq(gs_ref_model_alloc(&fx->mf, N_SPLATS, NULL), 0);
  if (opaque && alpha_max > GS_ALPHA_MAX)
    /* o G reaches 0.999 only within ~0.045 standard deviations of a splat's centre: larger and
     * more opaque splats (0.9991..0.999994), so that pixel centres land there. */
    tr_fill_scene(&fx->mf, seed, 0.3f, 0.9f, 1.6f, 7.0f, 12.0f);
  else if (opaque)
    tr_fill_scene(&fx->mf, seed, 0.3f, 0.2f, 0.4f, 3.5f, 9.0f);
  else
    tr_fill_scene(&fx->mf, seed, 0.6f, 0.15f, 0.35f, -0.5f, 1.0f);
  ck_assert_int_eq(gs_ref_model_to_d(&fx->mf, &fx->m, NULL), 0);
  for (int c = 0; c < N_CAMS; c++) {
    tr_orbit_camera(&fx->camf[c], IMG, IMG, FOCAL, 4.0f, 0.4f + 2.1f * (float)c,
                    0.3f - 0.25f * (float)c);
    gs_ref_camera_to_d(&fx->camf[c], &fx->cam[c]);
  }
  fx->opts.sh_degree = sh_degree;
  fx->opts.alpha_max = alpha_max;
  fx->opts.background[0] = 1.0f;
  fx->opts.background[1] = 0.2f;
  fx->opts.background[2] = 0.0f;
  struct tr_rng r = {seed * 7 + 3};
  for (size_t k = 0; k < IMG * IMG * 3; k++) fx->target[k] = tr_uniform(&r);
  fx->lambda = 0.2;
}

static void fixture_init(struct fixture *fx, uint64_t seed, uint32_t sh_degree, int opaque) {
  fixture_init_clamp(fx, seed, sh_degree, opaque, 0.0f);
}

static void fixture_fini(struct fixture *fx) {
  gs_ref_model_free(&fx->mf);
  gs_ref_model_d_destroy(&fx->m);
}

static double full_loss(struct fixture *fx, int c) {
  struct gs_ref_frame_d *f;
  ck_assert_int_eq(gs_ref_forward_d(fx->m, &fx->cam[c], &fx->opts, &f, NULL), 0);
  double loss;
  ck_assert_int_eq(gs_ref_loss_d(f->rgb, fx->target, IMG, IMG, fx->lambda, &loss, NULL, NULL), 0);
  gs_ref_frame_destroy_d(&f);
  return loss;
}

/* Parameter groups of a double model: pointer and length. */
enum { G_MEANS, G_SCALES, G_QUATS, G_OPACITY, G_SH, G_COUNT };
static const char *group_name[G_COUNT] = {"means", "log_scales", "quats", "opacity", "sh"};

static double *group(struct gs_ref_model_d *m, int g, size_t *len) {
  size_t n = m->count;
  switch (g) {
  case G_MEANS: *len = 3 * n; return m->means;
  case G_SCALES: *len = 3 * n; return m->log_scales;
  case G_QUATS: *len = 4 * n; return m->quats;
  case G_OPACITY: *len = n; return m->opacity;
  default: *len = (size_t)GS_SH_COEFFS * 3 * n; return m->sh;
  }
}

/* Analytic gradient of the full loss for camera c, through all stages. */
static void full_grad(struct fixture *fx, int c, struct gs_ref_model_d *grad) {
  struct gs_ref_frame_d *f;
  ck_assert_int_eq(gs_ref_forward_d(fx->m, &fx->cam[c], &fx->opts, &f, NULL), 0);
  double loss, *dl = malloc(sizeof(double) * IMG * IMG * 3);
  struct gs_ref_splat_grad_d *sg = calloc(N_SPLATS, sizeof *sg);
  ck_assert_ptr_nonnull(dl);
  ck_assert_ptr_nonnull(sg);
  ck_assert_int_eq(gs_ref_loss_d(f->rgb, fx->target, IMG, IMG, fx->lambda, &loss, dl, NULL), 0);
  ck_assert_int_eq(gs_ref_rasterize_backward_d(f, dl, sg, NULL), 0);
  ck_assert_int_eq(gs_ref_project_backward_d(fx->m, &fx->cam[c], f, sg, grad, NULL), 0);
  free(dl);
  free(sg);
  gs_ref_frame_destroy_d(&f);
}

/* Central differences of the full loss over one parameter group. */
static void full_fd(struct fixture *fx, int c, int g, double h, double *out) {
  size_t len;
  double *p = group(fx->m, g, &len);
  for (size_t k = 0; k < len; k++) {
    double save = p[k];
    p[k] = save + h;
    double lp = full_loss(fx, c);
    p[k] = save - h;
    double lm = full_loss(fx, c);
    p[k] = save;
    out[k] = (lp - lm) / (2.0 * h);
  }
}

/* What a frame exercises: splats on more than one tile, pixels where alpha is clamped (at the
 * frame's alpha_max),
 * pixels whose walk stopped at T < 1e-4 (a later splat would have passed the alpha test). */
struct events {
  int visible, straddling, clamped, stopped;
  int between; /* 0.99 <= o G < alpha_max: alpha a 0.99 clamp would have cut */
};

static void count_events(const struct gs_ref_frame_d *f, struct events *ev) {
  for (uint32_t i = 0; i < f->count; i++) {
    ev->visible += f->splats[i].radius > 0;
    ev->straddling += f->splats[i].tiles_touched > 1;
  }
  for (uint32_t py = 0; py < f->height; py++)
    for (uint32_t px = 0; px < f->width; px++) {
      uint32_t tile = (py / GS_TILE) * f->tiles_x + px / GS_TILE;
      uint32_t start = f->ranges[2 * tile], end = f->ranges[2 * tile + 1];
      uint32_t last = f->last[(size_t)py * f->width + px];
      for (uint32_t k = start; k < end; k++) {
        const struct gs_ref_splat_d *s = &f->splats[f->ids[k]];
        double dx = s->mean2d[0] - (px + 0.5), dy = s->mean2d[1] - (py + 0.5);
        double sigma =
            0.5 * (s->conic[0] * dx * dx + s->conic[2] * dy * dy) + s->conic[1] * dx * dy;
        double a = s->opacity * exp(-sigma);
        if (sigma < 0 || a < GS_ALPHA_MIN) continue;
        if (k - start >= last) {
          ev->stopped++;
          break;
        }
        ev->clamped += a >= f->alpha_max;
        ev->between += a >= GS_ALPHA_MAX && a < f->alpha_max;
      }
    }
}

static void frame_events(struct fixture *fx, int c, struct events *ev) {
  struct gs_ref_frame_d *f;
  ck_assert_int_eq(gs_ref_forward_d(fx->m, &fx->cam[c], &fx->opts, &f, NULL), 0);
  count_events(f, ev);
  gs_ref_frame_destroy_d(&f);
}

/* Asserts the scene exercised what it is meant to; prints the counts. */
static void check_events(const char *what, const struct events *ev, int opaque, double alpha_max) {
  printf("%s: %d visible, %d straddling tiles, %d clamped, %d in [0.99, alpha_max), %d stopped "
         "pixels\n",
         what, ev->visible, ev->straddling, ev->clamped, ev->between, ev->stopped);
  ck_assert_int_ge(ev->visible, N_CAMS * N_SPLATS / 2);
  ck_assert_int_gt(ev->straddling, 0);
  if (opaque) {
    ck_assert_int_gt(ev->clamped, 0);
    ck_assert_int_gt(ev->stopped, 0);
    if (alpha_max > GS_ALPHA_MAX) ck_assert_int_gt(ev->between, 0);
  }
}

/* ---- Loss backward ------------------------------------------------------------------------ */

/* _i 0: the zero-padded map at 20x17 (not a multiple of the window; borders matter); 1: padding
 * valid at 24x20 (a 14x10 map; border pixels still get gradient through interior windows). */
START_TEST(loss_backward_matches_fd) {
  const int padding = _i ? GS_SSIM_VALID : GS_SSIM_SAME;
  const uint32_t w = _i ? 24 : 20, h = _i ? 20 : 17;
  size_t n = (size_t)w * h * 3;
  double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *g = malloc(n * sizeof *g),
         *fd = malloc(n * sizeof *fd);
  struct tr_rng r = {11};
  for (size_t k = 0; k < n; k++) {
    b[k] = tr_uniform(&r);
    /* A correlated image, so SSIM is far from 0 and its gradient is not drowned by L1's. */
    a[k] = 0.7 * b[k] + 0.3 * tr_uniform(&r);
  }
  const double lambdas[3] = {0.0, 0.2, 1.0};
  for (int li = 0; li < 3; li++) {
    double loss;
    ck_assert_int_eq(gs_ref_loss_padded_d(a, b, w, h, lambdas[li], padding, &loss, g, NULL), 0);
    const double step = 1e-6;
    for (size_t k = 0; k < n; k++) {
      double save = a[k], lp, lm;
      a[k] = save + step;
      gs_ref_loss_padded_d(a, b, w, h, lambdas[li], padding, &lp, NULL, NULL);
      a[k] = save - step;
      gs_ref_loss_padded_d(a, b, w, h, lambdas[li], padding, &lm, NULL, NULL);
      a[k] = save;
      fd[k] = (lp - lm) / (2.0 * step);
    }
    double e = rel_err(fd, g, n);
    printf("loss backward %s lambda %.1f: rel err %.3g (|g| %.3g)\n", _i ? "valid" : "same",
           lambdas[li], e, norm(g, n));
    ck_assert_double_lt(e, TOL);
    ck_assert_double_gt(norm(g, n), 1e-6);
  }
  /* The float instantiation gives the same gradient to float precision. */
  float *af = malloc(n * sizeof *af), *bf = malloc(n * sizeof *bf), *gf = malloc(n * sizeof *gf);
  for (size_t k = 0; k < n; k++) {
    af[k] = (float)a[k];
    bf[k] = (float)b[k];
    a[k] = af[k];
    b[k] = bf[k];
  }
  double lf, ld;
  ck_assert_int_eq(gs_ref_loss_padded(af, bf, w, h, 0.2f, padding, &lf, gf, NULL), 0);
  ck_assert_int_eq(gs_ref_loss_padded_d(a, b, w, h, 0.2, padding, &ld, g, NULL), 0);
  for (size_t k = 0; k < n; k++) fd[k] = gf[k];
  ck_assert_double_lt(fabs(lf - ld), 1e-6);
  ck_assert_double_lt(rel_err(g, fd, n), 1e-5);
  free(af);
  free(bf);
  free(gf);
  free(a);
  free(b);
  free(g);
  free(fd);
}
END_TEST

/* ---- Rasterize backward ------------------------------------------------------------------- */

/* Loss of a frame re-rasterized from its (perturbed) projected splats, keeping the pair lists:
 * the rasterizer's own inputs. */
static double raster_loss(struct fixture *fx, struct gs_ref_frame_d *f) {
  gs_ref_rasterize_d(f);
  double loss;
  ck_assert_int_eq(gs_ref_loss_d(f->rgb, fx->target, IMG, IMG, fx->lambda, &loss, NULL, NULL), 0);
  return loss;
}

/* _i: 0 translucent, 1 opaque, 2 opaque with gsplat's clamp 0.999. */
START_TEST(rasterize_backward_matches_fd) {
  struct fixture fx;
  fixture_init_clamp(&fx, 5, 3, _i > 0, _i == 2 ? 0.999f : 0.0f);
  struct events ev = {0};
  for (int c = 0; c < N_CAMS; c++) {
    struct gs_ref_frame_d *f;
    ck_assert_int_eq(gs_ref_forward_d(fx.m, &fx.cam[c], &fx.opts, &f, NULL), 0);
    count_events(f, &ev);
    double loss, dl[IMG * IMG * 3];
    ck_assert_int_eq(gs_ref_loss_d(f->rgb, fx.target, IMG, IMG, fx.lambda, &loss, dl, NULL), 0);
    struct gs_ref_splat_grad_d sg[N_SPLATS];
    ck_assert_int_eq(gs_ref_rasterize_backward_d(f, dl, sg, NULL), 0);
    /* Fields in the order of struct gs_ref_splat_grad_d: mean2d 2, conic 3, rgb 3, opacity 1. */
    const char *names[4] = {"mean2d", "conic", "rgb", "opacity"};
    const int dims[4] = {2, 3, 3, 1};
    for (int fi = 0; fi < 4; fi++) {
      double an[N_SPLATS * 3], fd[N_SPLATS * 3];
      size_t len = 0;
      for (uint32_t i = 0; i < N_SPLATS; i++) {
        if (f->splats[i].radius == 0) continue;
        struct gs_ref_splat_d *s = &f->splats[i];
        double *p = fi == 0 ? s->mean2d : fi == 1 ? s->conic : fi == 2 ? s->rgb : &s->opacity;
        const double *ga = fi == 0   ? sg[i].mean2d
                           : fi == 1 ? sg[i].conic
                           : fi == 2 ? sg[i].rgb
                                     : &sg[i].opacity;
        /* Conic entries are ~1e-2..1e-1 per pixel^2: a relative step keeps the perturbation
         * small against each one. */
        for (int d = 0; d < dims[fi]; d++) {
          double step = fi == 1 ? 1e-6 * fabs(p[d]) + 1e-9 : 1e-6;
          double save = p[d];
          p[d] = save + step;
          double lp = raster_loss(&fx, f);
          p[d] = save - step;
          double lm = raster_loss(&fx, f);
          p[d] = save;
          fd[len] = (lp - lm) / (2.0 * step);
          an[len] = ga[d];
          len++;
        }
      }
      double e = rel_err(fd, an, len);
      printf("rasterize backward %s cam %d %-8s: rel err %.3g (|g| %.3g, %zu values)\n",
             _i == 2 ? "opaque 0.999"
             : _i    ? "opaque"
                     : "translucent",
             c, names[fi], e, norm(an, len), len);
      ck_assert_double_lt(e, TOL);
      ck_assert_double_gt(norm(an, len), 1e-8);
    }
    gs_ref_frame_destroy_d(&f);
  }
  check_events(_i == 2 ? "rasterize scene, opaque, alpha_max 0.999"
               : _i    ? "rasterize scene, opaque"
                       : "rasterize scene",
               &ev, _i > 0, gs_alpha_max_resolve(fx.opts.alpha_max));
  fixture_fini(&fx);
}
END_TEST

/* ---- Projection backward ------------------------------------------------------------------ */

/* A fixed random linear functional of the projected splats: F = sum_i w_i . (mean2d, conic,
 * rgb, opacity), over the splats visible in the unperturbed projection. */
struct functional {
  struct gs_ref_splat_grad_d w[N_SPLATS];
  int visible[N_SPLATS];
};

static double functional_eval(const struct functional *fn, const struct gs_ref_frame_d *f) {
  double v = 0.0;
  for (uint32_t i = 0; i < f->count; i++) {
    if (!fn->visible[i]) continue;
    const struct gs_ref_splat_d *s = &f->splats[i];
    const struct gs_ref_splat_grad_d *w = &fn->w[i];
    v += w->mean2d[0] * s->mean2d[0] + w->mean2d[1] * s->mean2d[1];
    for (int k = 0; k < 3; k++) v += w->conic[k] * s->conic[k] + w->rgb[k] * s->rgb[k];
    v += w->opacity * s->opacity;
  }
  return v;
}

static double project_functional(struct fixture *fx, int c, const struct functional *fn) {
  struct gs_ref_frame_d *f;
  ck_assert_int_eq(gs_ref_frame_new_d(N_SPLATS, &fx->cam[c], &fx->opts, &f, NULL), 0);
  ck_assert_int_eq(gs_ref_project_d(fx->m, &fx->cam[c], f, NULL), 0);
  double v = functional_eval(fn, f);
  gs_ref_frame_destroy_d(&f);
  return v;
}

START_TEST(project_backward_matches_fd) {
  struct fixture fx;
  fixture_init(&fx, 9, 3, 0);
  struct gs_ref_model_d *grad;
  ck_assert_int_eq(gs_ref_model_d_new(N_SPLATS, &grad, NULL), 0);
  size_t maxlen = (size_t)GS_SH_COEFFS * 3 * N_SPLATS;
  double *fd = malloc(maxlen * sizeof *fd);
  for (int c = 0; c < N_CAMS; c++) {
    struct gs_ref_frame_d *f;
    ck_assert_int_eq(gs_ref_forward_d(fx.m, &fx.cam[c], &fx.opts, &f, NULL), 0);
    struct functional fn;
    struct tr_rng r = {100 + (uint64_t)c};
    memset(&fn, 0, sizeof fn);
    for (uint32_t i = 0; i < N_SPLATS; i++) {
      fn.visible[i] = f->splats[i].radius > 0;
      double *w = (double *)&fn.w[i];
      for (size_t k = 0; k < sizeof fn.w[i] / sizeof(double); k++) w[k] = tr_normal(&r);
    }
    ck_assert_int_eq(gs_ref_project_backward_d(fx.m, &fx.cam[c], f, fn.w, grad, NULL), 0);
    for (int g = 0; g < G_COUNT; g++) {
      size_t len;
      double *an = group(grad, g, &len);
      double *p = group(fx.m, g, &len);
      for (size_t k = 0; k < len; k++) {
        double save = p[k], step = 1e-6;
        p[k] = save + step;
        double vp = project_functional(&fx, c, &fn);
        p[k] = save - step;
        double vm = project_functional(&fx, c, &fn);
        p[k] = save;
        fd[k] = (vp - vm) / (2.0 * step);
      }
      double e = rel_err(fd, an, len);
      printf("project backward cam %d %-10s: rel err %.3g (|g| %.3g)\n", c, group_name[g], e,
             norm(an, len));
      ck_assert_double_lt(e, TOL);
      ck_assert_double_gt(norm(an, len), 1e-6);
    }
    gs_ref_frame_destroy_d(&f);
  }
  free(fd);
  gs_ref_model_d_destroy(&grad);
  fixture_fini(&fx);
}
END_TEST

/* ---- Whole forward + loss ----------------------------------------------------------------- */

/* Checks every parameter group of the whole pipeline at one SH degree. */
static void check_full(uint64_t seed, uint32_t degree, int opaque, float alpha_max) {
  struct fixture fx;
  fixture_init_clamp(&fx, seed, degree, opaque, alpha_max);
  struct events ev = {0};
  struct gs_ref_model_d *grad;
  ck_assert_int_eq(gs_ref_model_d_new(N_SPLATS, &grad, NULL), 0);
  double *fd = malloc((size_t)GS_SH_COEFFS * 3 * N_SPLATS * sizeof *fd);
  uint32_t active = (degree + 1) * (degree + 1);
  for (int c = 0; c < N_CAMS; c++) {
    frame_events(&fx, c, &ev);
    full_grad(&fx, c, grad);
    for (int g = 0; g < G_COUNT; g++) {
      size_t len;
      double *an = group(grad, g, &len);
      full_fd(&fx, c, g, 1e-6, fd);
      double e = rel_err(fd, an, len);
      printf("full backward %s (alpha_max %g) deg %u cam %d %-10s: rel err %.3g (|g| %.3g)\n",
             opaque ? "opaque" : "translucent", (double)gs_alpha_max_resolve(fx.opts.alpha_max),
             degree, c, group_name[g], e, norm(an, len));
      ck_assert_double_lt(e, TOL);
      ck_assert_double_gt(norm(an, len), 1e-7);
      if (g != G_SH) continue;
      /* Coefficients above the active degree: exactly zero gradient, and no effect at all. */
      for (uint32_t i = 0; i < N_SPLATS; i++)
        for (uint32_t k = active; k < GS_SH_COEFFS; k++)
          for (int ch = 0; ch < 3; ch++) {
            size_t idx = ((size_t)i * GS_SH_COEFFS + k) * 3 + (size_t)ch;
            ck_assert_double_eq(an[idx], 0.0);
            ck_assert_double_eq(fd[idx], 0.0);
          }
    }
  }
  check_events(opaque ? "full backward scene, opaque" : "full backward scene", &ev, opaque,
               gs_alpha_max_resolve(alpha_max));
  free(fd);
  gs_ref_model_d_destroy(&grad);
  fixture_fini(&fx);
}

/* Iterations 0..3: translucent scene at SH degree 0..3; 4: opaque scene at degree 3; 5: an
 * opaque scene of larger splats with gsplat's alpha clamp 0.999 (the seed of the rasterize
 * check, whose pixel centres reach the clamp). */
START_TEST(full_backward_matches_fd) {
  if (_i < 4)
    check_full(21, (uint32_t)_i, 0, 0.0f);
  else
    check_full(_i == 5 ? 5 : 23, 3, 1, _i == 5 ? 0.999f : 0.0f);
}
END_TEST

/* The EWA Jacobian's field-of-view clamp: splats near camera 0, off to the side beyond the
 * clamp (|x/z| > 1.3 x the half field of view, 0.39 here) but large enough to reach into the
 * image, so their 2D covariance comes from the clamped Jacobian. The whole backward must still
 * match finite differences (no x derivative of J there, half the z derivative). */
START_TEST(fov_clamp_backward_matches_fd) {
  struct fixture fx;
  fixture_init(&fx, 29, 1, 0);
  const double *v = fx.cam[0].viewmat;
  /* Camera-space positions (x/z = +-0.6, y/z = 0.5: clamped in x, y, both) moved to world. */
  /* Distinct depths, so that no finite difference flips the depth order. */
  const double pc[4][3] = {
      {0.6, 0.1, 1.0}, {-0.75, -0.2, 1.25}, {0.1, 0.55, 1.1}, {0.45, -0.45, 0.9}};
  int clamped = 0;
  for (int i = 0; i < 4; i++) {
    for (int k = 0; k < 3; k++) {
      double w = 0.0;
      for (int r = 0; r < 3; r++) w += v[4 * r + k] * (pc[i][r] - v[4 * r + 3]);
      fx.m->means[3 * i + k] = w;
      fx.m->log_scales[3 * i + k] = log(0.18 + 0.03 * k);
    }
    double lim = 1.3 * 0.5 * IMG / FOCAL;
    clamped += fabs(pc[i][0] / pc[i][2]) > lim || fabs(pc[i][1] / pc[i][2]) > lim;
  }
  ck_assert_int_eq(clamped, 4);
  struct gs_ref_frame_d *f;
  ck_assert_int_eq(gs_ref_forward_d(fx.m, &fx.cam[0], &fx.opts, &f, NULL), 0);
  for (int i = 0; i < 4; i++) /* each one reaches into the image */
    ck_assert_int_gt(f->splats[i].radius, 0);
  gs_ref_frame_destroy_d(&f);
  struct gs_ref_model_d *grad;
  ck_assert_int_eq(gs_ref_model_d_new(N_SPLATS, &grad, NULL), 0);
  double *fd = malloc((size_t)GS_SH_COEFFS * 3 * N_SPLATS * sizeof *fd);
  full_grad(&fx, 0, grad);
  for (int g = 0; g < G_COUNT; g++) {
    size_t len;
    double *an = group(grad, g, &len);
    full_fd(&fx, 0, g, 1e-6, fd);
    double e = rel_err(fd, an, len);
    printf("fov clamp %-10s: rel err %.3g (|g| %.3g)\n", group_name[g], e, norm(an, len));
    ck_assert_double_lt(e, TOL);
    /* The clamped splats' own means get gradient (through the 2D mean and J's z term). */
    if (g == G_MEANS)
      for (int i = 0; i < 4; i++) ck_assert_double_gt(norm(an + 3 * i, 3), 1e-9);
  }
  free(fd);
  gs_ref_model_d_destroy(&grad);
  fixture_fini(&fx);
}
END_TEST

/* ---- The tests can fail ------------------------------------------------------------------- */

START_TEST(wrong_gradient_is_caught) {
  struct fixture fx;
  fixture_init(&fx, 21, 3, 0);
  struct gs_ref_model_d *grad;
  ck_assert_int_eq(gs_ref_model_d_new(N_SPLATS, &grad, NULL), 0);
  full_grad(&fx, 0, grad);
  size_t len;
  double fd[3 * N_SPLATS];
  double *an = group(grad, G_MEANS, &len);
  full_fd(&fx, 0, G_MEANS, 1e-6, fd);
  ck_assert_double_lt(rel_err(fd, an, len), TOL);
  /* A gradient off by 0.5 % in scale fails the check... */
  double wrong[3 * N_SPLATS];
  for (size_t k = 0; k < len; k++) wrong[k] = an[k] * 1.005;
  ck_assert_double_gt(rel_err(fd, wrong, len), TOL);
  /* ...and so does one with two components swapped (a transposed Jacobian, say). */
  memcpy(wrong, an, sizeof wrong);
  size_t big = 0;
  for (size_t k = 1; k < len; k++)
    if (fabs(an[k]) > fabs(an[big])) big = k;
  size_t other = big % 3 == 2 ? big - 1 : big + 1;
  wrong[big] = an[other];
  wrong[other] = an[big];
  ck_assert_double_gt(rel_err(fd, wrong, len), TOL);
  gs_ref_model_d_destroy(&grad);
  fixture_fini(&fx);
}
END_TEST

/* ---- Float backward equals double backward ------------------------------------------------ */

START_TEST(float_backward_matches_double) {
  struct fixture fx;
  fixture_init(&fx, 33, 3, 1);
  struct gs_ref_model_d *grad;
  ck_assert_int_eq(gs_ref_model_d_new(N_SPLATS, &grad, NULL), 0);
  struct gs_model gf;
  ck_assert_int_eq(gs_ref_model_alloc(&gf, N_SPLATS, NULL), 0);
  float targetf[IMG * IMG * 3], dl[IMG * IMG * 3], g2d[N_SPLATS];
  for (size_t k = 0; k < IMG * IMG * 3; k++) targetf[k] = (float)fx.target[k];
  for (int c = 0; c < N_CAMS; c++) {
    full_grad(&fx, c, grad);
    struct gs_ref_frame *f;
    ck_assert_int_eq(gs_ref_forward(&fx.mf, &fx.camf[c], &fx.opts, &f, NULL), 0);
    double loss;
    ck_assert_int_eq(gs_ref_loss(f->rgb, targetf, IMG, IMG, 0.2f, &loss, dl, NULL), 0);
    ck_assert_int_eq(gs_ref_backward(&fx.mf, &fx.camf[c], f, dl, &gf, g2d, NULL), 0);
    ck_assert_uint_eq(gf.count, N_SPLATS);
    struct gs_ref_model_d *gfd;
    ck_assert_int_eq(gs_ref_model_to_d(&gf, &gfd, NULL), 0);
    for (int g = 0; g < G_COUNT; g++) {
      size_t len;
      double *ad = group(grad, g, &len), *af = group(gfd, g, &len);
      double e = rel_err(ad, af, len);
      printf("float vs double backward cam %d %-10s: rel err %.3g\n", c, group_name[g], e);
      ck_assert_double_lt(e, 1e-4);
    }
    for (uint32_t i = 0; i < N_SPLATS; i++) {
      ck_assert(g2d[i] >= 0.0f);
      if (f->splats[i].radius == 0) ck_assert_float_eq(g2d[i], 0.0f);
    }
    gs_ref_model_d_destroy(&gfd);
    gs_ref_frame_destroy(&f);
  }
  gs_ref_model_free(&gf);
  gs_ref_model_d_destroy(&grad);
  fixture_fini(&fx);
}
END_TEST

/* The densifier's norm: pixel gradient scaled to NDC units as gsplat does. */
START_TEST(grad2d_norm_convention) {
  struct gs_ref_splat_grad g = {.mean2d = {3e-4f, -4e-4f}};
  /* (3e-4 * 0.5 * 800, -4e-4 * 0.5 * 600) = (0.12, -0.12) */
  ck_assert_float_eq_tol(gs_ref_grad2d_norm(&g, 800, 600), sqrtf(2.0f) * 0.12f, 1e-7f);
  g.mean2d[0] = 0.0f;
  g.mean2d[1] = 1e-3f;
  ck_assert_float_eq_tol(gs_ref_grad2d_norm(&g, 64, 64), 0.032f, 1e-8f);
}
END_TEST

int main(void) {
  Suite *s = suite_create("ref_grad");
  TCase *tc = tcase_create("grad");
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, loss_backward_matches_fd, 0, 2);
  tcase_add_loop_test(tc, rasterize_backward_matches_fd, 0, 3);
  tcase_add_test(tc, project_backward_matches_fd);
  tcase_add_loop_test(tc, full_backward_matches_fd, 0, 6);
  tcase_add_test(tc, fov_clamp_backward_matches_fd);
  tcase_add_test(tc, wrong_gradient_is_caught);
  tcase_add_test(tc, float_backward_matches_double);
  tcase_add_test(tc, grad2d_norm_convention);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
