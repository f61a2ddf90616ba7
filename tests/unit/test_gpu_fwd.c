/* test_gpu_fwd.c: Check suite for the GPU forward pass (gs_fwd) against the C reference (gs_ref)
 * on the default Vulkan device (lavapipe in CI): scenes of a few hundred overlapping Gaussians
 * seen by several cameras, with image sizes that are not multiples of the tile size and splats
 * crossing the image edges. Projected splats, pair counts, sorted pairs, tile ranges, colours,
 * final T and last contributors are compared; the variants that must be bit-exact (sigma skip,
 * ballot scatter, full sort, transient arena, arena growth, per-kernel submission) are compared
 * with the baseline bit for bit. The alpha clamp (alpha_max) is checked at gsplat's 0.999 against
 * the reference built with the same clamp. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gs_fwd.h"
#include "gs_ref.h"
#include "test_ref_scene.h"
#include "gs_shared.h"
#include "gs_types.h"
#include "gs_vk.h"
#include "runs_ref.h"

static gs_vk_t *vk;

static void setup(void) {
  struct sw_err err = {0};
  struct gs_vk_opts opts = {.pipeline_cache = ""};
  if (gs_vk_open(&vk, &opts, &err)) ck_abort_msg("opening the device: %s", err.msg);
}

static void teardown(void) { gs_vk_close(&vk); }

/* ---- scene ---- */

static uint64_t rng_state;
static double urand(void) {
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return (double)(z >> 11) / 9007199254740992.0;
}
static double nrand(void) {
  double u = urand(), v = urand();
  return sqrt(-2.0 * log(u + 1e-300)) * cos(6.283185307179586 * v);
}

struct scene {
  struct gs_model m;
  float *store;
};

/* n Gaussians in [-1, 1]^3 with sizes from tiny to a good part of the view, random rotations,
 * opacities from faint to nearly opaque and random SH to degree 3. */
static void make_scene(struct scene *s, uint32_t n, uint64_t seed) {
  rng_state = seed;
  s->store = calloc((size_t)n * 59, sizeof(float));
  ck_assert_ptr_nonnull(s->store);
  s->m = (struct gs_model){.count = n, .capacity = n};
  s->m.means = s->store;
  s->m.log_scales = s->m.means + 3 * n;
  s->m.quats = s->m.log_scales + 3 * n;
  s->m.opacity = s->m.quats + 4 * n;
  s->m.sh = s->m.opacity + n;
  for (uint32_t i = 0; i < n; i++) {
    for (int k = 0; k < 3; k++) {
      s->m.means[3 * i + k] = (float)(2 * urand() - 1);
      s->m.log_scales[3 * i + k] = (float)(log(0.02) + 2.2 * urand());
    }
    double q[4], qn = 0;
    for (int k = 0; k < 4; k++) {
      q[k] = nrand();
      qn += q[k] * q[k];
    }
    for (int k = 0; k < 4; k++) s->m.quats[4 * i + k] = (float)(q[k] / sqrt(qn));
    s->m.opacity[i] = (float)(4 * urand() - 1.5);
    for (int k = 0; k < 48; k++) s->m.sh[48 * i + k] = (float)((k < 3 ? 0.8 : 0.25) * nrand());
  }
}

/* A pinhole camera at `pos` looking at the origin, z up, OpenCV axes. */
static void look_at(struct gs_camera *c, uint32_t w, uint32_t h, float f, const double pos[3]) {
  memset(c, 0, sizeof *c);
  c->width = w;
  c->height = h;
  c->fx = c->fy = f;
  c->cx = 0.5f * (float)w;
  c->cy = 0.5f * (float)h;
  double fw[3] = {-pos[0], -pos[1], -pos[2]}, up[3] = {0, 0, 1};
  double fn = sqrt(fw[0] * fw[0] + fw[1] * fw[1] + fw[2] * fw[2]);
  for (int k = 0; k < 3; k++) fw[k] /= fn;
  double r[3] = {fw[1] * up[2] - fw[2] * up[1], fw[2] * up[0] - fw[0] * up[2],
                 fw[0] * up[1] - fw[1] * up[0]};
  double rn = sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2]);
  for (int k = 0; k < 3; k++) r[k] /= rn;
  double d[3] = {fw[1] * r[2] - fw[2] * r[1], fw[2] * r[0] - fw[0] * r[2],
                 fw[0] * r[1] - fw[1] * r[0]};
  const double *rows[3] = {r, d, fw};
  for (int i = 0; i < 3; i++) {
    double t = 0;
    for (int k = 0; k < 3; k++) {
      c->viewmat[4 * i + k] = (float)rows[i][k];
      t -= rows[i][k] * pos[k];
    }
    c->viewmat[4 * i + 3] = (float)t;
  }
  c->viewmat[15] = 1.0f;
  for (int k = 0; k < 3; k++) c->campos[k] = (float)pos[k];
}

static void cameras(struct gs_camera cams[4]) {
  const double p[4][3] = {{4, 0, 1}, {0, -3.2, 1.5}, {-2.5, 2.5, -1}, {1.2, 1.0, 2.4}};
  const uint32_t w[4] = {100, 77, 129, 64}, h[4] = {75, 90, 64, 33};
  const float f[4] = {110, 90, 140, 70};
  for (int i = 0; i < 4; i++) look_at(&cams[i], w[i], h[i], f[i], p[i]);
}

/* ---- GPU frame read back ---- */

struct gpu_frame {
  uint32_t w, h, n, pairs, tiles;
  struct gs_splat2d *splats;
  uint32_t *touched, *keys, *vals, *ranges, *last;
  float *rgb, *t;
};

static void gpu_frame_free(struct gpu_frame *g) {
  free(g->splats);
  free(g->touched);
  free(g->keys);
  free(g->vals);
  free(g->ranges);
  free(g->last);
  free(g->rgb);
  free(g->t);
  memset(g, 0, sizeof *g);
}

static void render(const struct gs_fwd_opts *opts, const struct gs_model *m,
                   const struct gs_camera *cam, uint32_t sh_degree, const float bg[3],
                   int per_kernel, struct gpu_frame *g) {
  struct sw_err err = {0};
  gs_fwd_t *f;
  ck_assert_msg(gs_fwd_new(vk, opts, &f, &err) == 0, "%s", err.msg);
  struct gs_fwd_input in = {.cam = *cam, .sh_degree = sh_degree};
  memcpy(in.background, bg, sizeof in.background);
  ck_assert_msg(gs_fwd_model_upload(vk, m, &in.model, &err) == 0, "%s", err.msg);
  ck_assert_msg(gs_fwd_run(f, NULL, &in, per_kernel, &err) == 0, "%s", err.msg);
  const struct gs_fwd_bufs *b = gs_fwd_bufs(f);
  memset(g, 0, sizeof *g);
  g->w = cam->width;
  g->h = cam->height;
  g->n = m->count;
  g->tiles = b->tiles_x * b->tiles_y;
  g->pairs = ((const uint32_t *)b->counters->map)[GS_CTR_PAIRS];
  size_t px = (size_t)g->w * g->h;
  g->rgb = malloc(12 * px);
  g->t = malloc(4 * px);
  g->last = malloc(4 * px);
  ck_assert_msg(gs_fwd_read_image(f, g->rgb, g->t, g->last, &err) == 0, "%s", err.msg);
  g->splats = malloc(sizeof *g->splats * (g->n ? g->n : 1));
  g->touched = malloc(4 * (g->n ? g->n : 1));
  g->ranges = malloc(8 * g->tiles);
  ck_assert_int_eq(gs_vk_buf_download(b->splats, 0, g->splats, sizeof *g->splats * g->n, &err), 0);
  ck_assert_int_eq(gs_vk_buf_download(b->tiles_touched, 0, g->touched, 4ull * g->n, &err), 0);
  ck_assert_int_eq(gs_vk_buf_download(b->ranges, 0, g->ranges, 8ull * g->tiles, &err), 0);
  if (!opts || !opts->transient) {
    g->keys = malloc(8ull * (g->pairs ? g->pairs : 1));
    g->vals = malloc(4ull * (g->pairs ? g->pairs : 1));
    ck_assert_int_eq(gs_vk_buf_download(b->keys, 0, g->keys, 8ull * g->pairs, &err), 0);
    ck_assert_int_eq(gs_vk_buf_download(b->values, 0, g->vals, 4ull * g->pairs, &err), 0);
  }
  gs_fwd_model_release(&in.model);
  gs_fwd_destroy(&f);
}

/* ---- comparisons ---- */

static void close_to(float a, float b, float tol, const char *what, uint32_t i) {
  if (!(fabsf(a - b) <= tol * fmaxf(1.0f, fabsf(b))))
    ck_abort_msg("%s[%u]: GPU %.9g, reference %.9g", what, i, a, b);
}

static void compare_with_ref(const struct gpu_frame *g, const struct gs_ref_frame *r) {
  ck_assert_uint_eq(g->n, r->count);
  uint32_t visible = 0;
  for (uint32_t i = 0; i < g->n; i++) {
    const struct gs_splat2d *s = &g->splats[i];
    const struct gs_ref_splat *q = &r->splats[i];
    ck_assert_msg(g->touched[i] == q->tiles_touched,
                  "splat %u touches %u tiles on the GPU, %u "
                  "in the reference",
                  i, g->touched[i], q->tiles_touched);
    if (!q->tiles_touched) continue;
    visible++;
    ck_assert_uint_eq(s->radius, (uint32_t)q->radius);
    ck_assert_uint_eq(s->rect[0], q->rect[0] | q->rect[1] << 16);
    ck_assert_uint_eq(s->rect[1], q->rect[2] | q->rect[3] << 16);
    for (int k = 0; k < 2; k++) close_to(s->mean2d[k], q->mean2d[k], 1e-5f, "mean2d", i);
    for (int k = 0; k < 3; k++) close_to(s->conic[k], q->conic[k], 1e-4f, "conic", i);
    for (int k = 0; k < 3; k++) close_to(s->cov2d[k], q->cov2d[k], 1e-4f, "cov2d", i);
    for (int k = 0; k < 3; k++) close_to(s->rgb[k], q->rgb[k], 1e-5f, "rgb", i);
    close_to(s->opacity, q->opacity, 1e-6f, "opacity", i);
    close_to(s->depth, q->depth, 1e-6f, "depth", i);
  }
  ck_assert_msg(visible > 50, "only %u splats visible: the scene does not test much", visible);
  ck_assert_uint_eq(g->pairs, r->n_pairs);
  /* Depths may differ in the last bit, which can swap two splats of equal tile and nearly equal
   * depth; the tile part of every key and the tile ranges must match exactly. */
  uint32_t swapped = 0;
  for (uint32_t k = 0; g->keys && k < g->pairs; k++) {
    ck_assert_uint_eq(g->keys[2 * k + 1], (uint32_t)(r->keys[k] >> 32));
    if (g->vals[k] != r->ids[k]) swapped++;
  }
  ck_assert_msg(swapped <= g->pairs / 100, "%u of %u sorted pairs differ", swapped, g->pairs);
  ck_assert_int_eq(memcmp(g->ranges, r->ranges, 8ull * g->tiles), 0);
  size_t px = (size_t)g->w * g->h;
  uint32_t covered = 0;
  for (size_t p = 0; p < px; p++) {
    for (int c = 0; c < 3; c++)
      if (!(fabsf(g->rgb[3 * p + c] - r->rgb[3 * p + c]) <= 1e-4f))
        ck_abort_msg("pixel %zu (%zu, %zu) channel %d: GPU %.7f, reference %.7f", p, p % g->w,
                     p / g->w, c, g->rgb[3 * p + c], r->rgb[3 * p + c]);
    if (!(fabsf(g->t[p] - r->final_t[p]) <= 1e-4f))
      ck_abort_msg("pixel %zu final T: GPU %.7f, reference %.7f", p, g->t[p], r->final_t[p]);
    ck_assert_msg(g->last[p] == r->last[p],
                  "pixel %zu (%zu, %zu) last contributor: GPU %u, "
                  "reference %u",
                  p, p % g->w, p / g->w, g->last[p], r->last[p]);
    covered += r->last[p] > 0;
  }
  ck_assert_msg(covered > px / 4, "only %u of %zu pixels covered", covered, px);
}

static void assert_same(const struct gpu_frame *a, const struct gpu_frame *b, const char *what) {
  size_t px = (size_t)a->w * a->h;
  ck_assert_uint_eq(a->pairs, b->pairs);
  ck_assert_msg(!memcmp(a->rgb, b->rgb, 12 * px), "%s: colours differ", what);
  ck_assert_msg(!memcmp(a->t, b->t, 4 * px), "%s: final T differs", what);
  ck_assert_msg(!memcmp(a->last, b->last, 4 * px), "%s: last contributor differs", what);
  ck_assert_msg(!memcmp(a->ranges, b->ranges, 8ull * a->tiles), "%s: ranges differ", what);
  if (a->keys && b->keys) {
    ck_assert_msg(!memcmp(a->keys, b->keys, 8ull * a->pairs), "%s: keys differ", what);
    ck_assert_msg(!memcmp(a->vals, b->vals, 4ull * a->pairs), "%s: values differ", what);
  }
}

/* ---- tests ---- */

START_TEST(constants_match_the_contract) {
  ck_assert(GS_K_NEAR_Z == GS_NEAR_Z);
  ck_assert(GS_K_DILATION == GS_DILATION);
  ck_assert(GS_K_ALPHA_MIN == GS_ALPHA_MIN);
  ck_assert(GS_K_ALPHA_MAX == GS_ALPHA_MAX);
  ck_assert(GS_K_T_MIN == GS_T_MIN);
  ck_assert_int_eq(GS_TILE_PX, GS_TILE);
  ck_assert_int_eq(GS_SH_COEFFS_N, GS_SH_COEFFS);
  /* The sigma skip is exact for every clamp: alpha <= opacity exp(-sigma) <= exp(-5.55). */
  ck_assert(expf(-GS_SIGMA_SKIP) < GS_ALPHA_MIN);
  ck_assert(GS_ALPHA_MAX_HI * expf(-GS_SIGMA_SKIP) < GS_ALPHA_MIN);
  ck_assert(gs_alpha_max_resolve(0.0f) == GS_ALPHA_MAX);
  ck_assert(gs_alpha_max_resolve(0.999f) == 0.999f);
  ck_assert(gs_alpha_max_resolve(GS_ALPHA_MAX_LO) == GS_ALPHA_MAX_LO);
  ck_assert(gs_alpha_max_resolve(GS_ALPHA_MAX_HI) == GS_ALPHA_MAX_HI);
  ck_assert(gs_alpha_max_resolve(1.0f) == 0.0f);
  ck_assert(gs_alpha_max_resolve(0.5f) == 0.0f);
  ck_assert(gs_alpha_max_resolve(NAN) == 0.0f);
}
END_TEST

/* Pixels of a reference frame where some splat in front of the walk's end has o G in
 * [0.99, alpha_max) (a clamp of 0.99 would cut it) and where o G >= alpha_max (clamped). */
static void clamp_events(const struct gs_ref_frame *r, uint32_t *between, uint32_t *clamped) {
  *between = *clamped = 0;
  for (uint32_t py = 0; py < r->height; py++)
    for (uint32_t px = 0; px < r->width; px++) {
      uint32_t tile = (py / GS_TILE) * r->tiles_x + px / GS_TILE;
      uint32_t start = r->ranges[2 * tile], last = r->last[(size_t)py * r->width + px];
      int b = 0, c = 0;
      for (uint32_t k = start; k < start + last; k++) {
        const struct gs_ref_splat *s = &r->splats[r->ids[k]];
        float dx = s->mean2d[0] - ((float)px + 0.5f), dy = s->mean2d[1] - ((float)py + 0.5f);
        float sigma =
            0.5f * (s->conic[0] * dx * dx + s->conic[2] * dy * dy) + s->conic[1] * dx * dy;
        float a = s->opacity * expf(-sigma);
        if (sigma < 0.0f) continue;
        b |= a >= GS_ALPHA_MAX && a < r->alpha_max;
        c |= a >= r->alpha_max;
      }
      *between += (uint32_t)b;
      *clamped += (uint32_t)c;
    }
}

/* gsplat's clamp, 0.999, on opaque splats (opacities 0.99945..0.99999, so that o G lands on
 * both sides of 0.99 and of 0.999 near their centres): the GPU matches the reference built with
 * the same clamp, the sigma skip stays bit-exact, and the render differs from the default clamp's
 * (the constant is applied). _i 0, 1: cameras at 0.999; 2: the lowest clamp, 0.9, where most of
 * an opaque splat is clamped. */
START_TEST(alpha_max_matches_reference) {
  struct scene s;
  make_scene(&s, 300, 91);
  float amax = _i < 2 ? 0.999f : GS_ALPHA_MAX_LO;
  for (uint32_t i = 0; i < s.m.count; i++) s.m.opacity[i] += _i < 2 ? 9.0f : 3.0f;
  struct gs_camera cams[4];
  cameras(cams);
  const struct gs_camera *cam = &cams[_i % 2];
  struct gs_ref_opts ro = {.sh_degree = 3, .background = {1, 1, 1}, .alpha_max = amax};
  struct sw_err err = {0};
  struct gs_ref_frame *r;
  ck_assert_msg(gs_ref_forward(&s.m, cam, &ro, &r, &err) == 0, "%s", err.msg);
  ck_assert(r->alpha_max == amax);
  uint32_t between, clamped;
  clamp_events(r, &between, &clamped);
  printf("alpha_max %g, camera %d: %u pixels with 0.99 <= o G < alpha_max, %u clamped\n",
         (double)amax, _i % 2, between, clamped);
  ck_assert_uint_gt(clamped, 0);
  if (amax > GS_ALPHA_MAX) ck_assert_uint_gt(between, 0);
  struct gs_fwd_opts o = {.alpha_max = amax}, os = {.alpha_max = amax, .sigma_skip = 1};
  struct gpu_frame g, gs, d;
  render(&o, &s.m, cam, 3, ro.background, 0, &g);
  compare_with_ref(&g, r);
  render(&os, &s.m, cam, 3, ro.background, 0, &gs);
  assert_same(&g, &gs, "sigma_skip with the clamp");
  render(NULL, &s.m, cam, 3, ro.background, 0, &d);
  size_t px = (size_t)g.w * g.h, differ = 0;
  for (size_t p = 0; p < px; p++) differ += g.t[p] != d.t[p];
  ck_assert_msg(differ > 0, "no pixel differs from the 0.99 render (of %zu)", px);
  gpu_frame_free(&g);
  gpu_frame_free(&gs);
  gpu_frame_free(&d);
  gs_ref_frame_destroy(&r);
  free(s.store);
}
END_TEST

START_TEST(alpha_max_out_of_range_is_refused) {
  const float bad[] = {0.5f, 0.89f, 1.0f, 1.5f, -0.99f, NAN};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    struct sw_err err = {0};
    struct gs_fwd_opts o = {.alpha_max = bad[i]};
    gs_fwd_t *f = (gs_fwd_t *)&err; /* must be reset to NULL */
    ck_assert_int_eq(gs_fwd_new(vk, &o, &f, &err), SW_EINVAL);
    ck_assert_ptr_null(f);
    ck_assert_msg(strstr(err.msg, "alpha_max") != NULL, "%s", err.msg);
    struct gs_camera cams[4];
    cameras(cams);
    struct gs_ref_opts ro = {.alpha_max = bad[i]};
    struct gs_ref_frame *r = NULL;
    sw_err_clear(&err);
    ck_assert_int_eq(gs_ref_frame_new(1, &cams[0], &ro, &r, &err), SW_EINVAL);
    ck_assert_ptr_null(r);
    ck_assert_msg(strstr(err.msg, "alpha_max") != NULL, "%s", err.msg);
  }
}
END_TEST

START_TEST(forward_matches_reference) {
  /* _i % 4: camera index; SH degree and background vary with it. _i / 4: fwd_step branch,
   * select, group, group8. */
  struct scene s;
  make_scene(&s, 300, 77);
  struct gs_camera cams[4];
  cameras(cams);
  const struct gs_camera *cam = &cams[_i % 4];
  struct gs_fwd_opts fo = {.step = _i / 4};
  tr_place_beyond_clamp(&s.m, cam, 0, 8); /* the field-of-view clamp of the EWA Jacobian */
  struct gs_ref_opts ro = {.sh_degree = (uint32_t)(3 - _i % 4)};
  float bg[3] = {_i & 1 ? 1.0f : 0.0f, _i & 1 ? 1.0f : 0.0f, _i & 1 ? 1.0f : 0.2f};
  memcpy(ro.background, bg, sizeof bg);
  struct sw_err err = {0};
  struct gs_ref_frame *r;
  ck_assert_msg(gs_ref_forward(&s.m, cam, &ro, &r, &err) == 0, "%s", err.msg);
  uint32_t near_side = 0;
  for (uint32_t i = 0; i < 8; i++) near_side += r->splats[i].radius > 0;
  ck_assert_msg(near_side >= 4, "only %u of the clamped splats reach the image", near_side);
  struct gpu_frame g;
  render(&fo, &s.m, cam, ro.sh_degree, bg, 0, &g);
  compare_with_ref(&g, r);
  gpu_frame_free(&g);
  gs_ref_frame_destroy(&r);
  free(s.store);
}
END_TEST

/* The principal point off the centre, to each side: the GPU forward matches the reference, and
 * the image is not the centred camera's (the reference honours cx, cy: the same scene renders
 * shifted). */
START_TEST(off_centre_principal_point_matches_reference) {
  struct scene s;
  make_scene(&s, 300, 78);
  struct gs_camera cams[4];
  cameras(cams);
  struct gs_camera cam = cams[_i];
  const float pp[4][2] = {{0.3f, 0.6f}, {0.72f, 0.35f}, {0.45f, 0.8f}, {0.61f, 0.42f}};
  cam.cx = pp[_i][0] * (float)cam.width;
  cam.cy = pp[_i][1] * (float)cam.height;
  tr_place_beyond_clamp(&s.m, &cam, 0, 8); /* the clamp is asymmetric off centre */
  struct gs_ref_opts ro = {.sh_degree = 3};
  float bg[3] = {0.1f, 0.2f, 0.3f};
  memcpy(ro.background, bg, sizeof bg);
  struct sw_err err = {0};
  struct gs_ref_frame *r, *centred;
  ck_assert_msg(gs_ref_forward(&s.m, &cam, &ro, &r, &err) == 0, "%s", err.msg);
  ck_assert_msg(gs_ref_forward(&s.m, &cams[_i], &ro, &centred, &err) == 0, "%s", err.msg);
  double diff = 0;
  for (size_t k = 0; k < (size_t)cam.width * cam.height * 3; k++)
    diff += fabs(r->rgb[k] - centred->rgb[k]);
  ck_assert_msg(diff > 1.0, "off-centre render equals the centred one (diff %g)", diff);
  struct gpu_frame g;
  render(NULL, &s.m, &cam, ro.sh_degree, bg, 0, &g);
  compare_with_ref(&g, r);
  gpu_frame_free(&g);
  gs_ref_frame_destroy(&r);
  gs_ref_frame_destroy(&centred);
  free(s.store);
}
END_TEST

START_TEST(variants_are_bit_exact) {
  struct scene s;
  make_scene(&s, 400, 5);
  struct gs_camera cams[4];
  cameras(cams);
  float bg[3] = {1, 1, 1};
  struct gpu_frame base, v;
  render(NULL, &s.m, &cams[0], 3, bg, 0, &base);
  const struct {
    struct gs_fwd_opts o;
    int per_kernel;
    const char *name;
  } variants[] = {
      {{.sigma_skip = 1}, 0, "sigma_skip"},
      {{.radix_ballot = 1}, 0, "radix_scatter ballot"},
      {{.radix_full = 1}, 0, "radix_passes full"},
      {{.transient = 1}, 0, "binning transient"},
      {{.initial_pairs_per_splat = 1}, 0, "arena growth"},
      {{.radix_ballot = 1, .sigma_skip = 1}, 1, "per_kernel"},
      {{.bucket = 8}, 0, "runs of 8 for the per-splat backward"},
      {{.bucket = 32, .sigma_skip = 1}, 1, "runs of 32, per_kernel"},
      {{.step = 1}, 0, "fwd_step select"},
      {{.step = 1, .sigma_skip = 1}, 0, "fwd_step select, sigma_skip"},
      {{.step = 1, .bucket = 32, .sigma_skip = 1}, 1, "fwd_step select, runs of 32"},
      {{.step = 1, .bucket = 8}, 0, "fwd_step select, runs of 8"},
      {{.cull_rows = 1}, 0, "fwd_cull rows"},
      {{.cull_rows = 1, .sigma_skip = 1}, 0, "fwd_cull rows, sigma_skip"},
      {{.cull_rows = 1, .bucket = 32, .sigma_skip = 1}, 1, "fwd_cull rows, runs of 32"},
      {{.cull_rows = 1, .bucket = 8}, 0, "fwd_cull rows, runs of 8"},
      {{.cull_rows = 1, .step = 1, .bucket = 4}, 0, "fwd_cull rows, fwd_step select"},
      {{.step = 2}, 0, "fwd_step group"},
      {{.step = 2, .bucket = 32, .sigma_skip = 1}, 1, "fwd_step group, runs of 32"},
      {{.step = 2, .bucket = 2}, 0, "fwd_step group, runs of 2"},
      {{.step = 3, .bucket = 8, .sigma_skip = 1}, 0, "fwd_step group8, runs of 8"},
      {{.step = 2, .cull_rows = 1, .bucket = 32}, 0, "fwd_step group, fwd_cull rows"},
      {{.step = 2, .cull_rows = 1, .bucket = 4, .sigma_skip = 1},
       0,
       "fwd_step group, fwd_cull rows, runs of 4"},
      {{.step = 3, .cull_rows = 1, .bucket = 32, .sigma_skip = 1},
       1,
       "fwd_step group8, fwd_cull rows, runs of 32"},
      {{.step = 3, .cull_rows = 1, .bucket = 1}, 0, "fwd_step group8, fwd_cull rows, runs of 1"},
      {{.prefetch = 1}, 0, "fwd_stage prefetch"},
      {{.prefetch = 1, .bucket = 32, .sigma_skip = 1}, 1, "fwd_stage prefetch, runs of 32"},
      {{.prefetch = 1, .cull_rows = 1, .step = 2, .bucket = 8},
       0,
       "fwd_stage prefetch, fwd_cull rows, fwd_step group"},
      {{.prefetch = 1, .step = 3, .bucket = 32}, 0, "fwd_stage prefetch, fwd_step group8"},
      {{.dense_first = 1}, 0, "fwd_order dense_first"},
      {{.dense_first = 1, .bucket = 32, .sigma_skip = 1}, 1, "fwd_order dense_first, runs of 32"},
      {{.dense_first = 1, .prefetch = 1, .cull_rows = 1, .step = 2, .bucket = 8},
       0,
       "fwd_order dense_first, fwd_stage prefetch, fwd_cull rows, fwd_step group"},
      {{.sh_vec4 = 1}, 0, "project_sh vec4"},
      {{.sh_vec4 = 1, .cull_rows = 1, .bucket = 32}, 1, "project_sh vec4, fwd_cull rows"},
  };
  for (size_t i = 0; i < sizeof variants / sizeof variants[0]; i++) {
    render(&variants[i].o, &s.m, &cams[0], 3, bg, variants[i].per_kernel, &v);
    assert_same(&base, &v, variants[i].name);
    gpu_frame_free(&v);
  }
  gpu_frame_free(&base);
  /* project_sh: vec4 below SH degree 3 reads only the active coefficients' vec4s. */
  for (uint32_t deg = 0; deg < 3; deg++) {
    struct gs_fwd_opts vec4 = {.sh_vec4 = 1};
    render(NULL, &s.m, &cams[1], deg, bg, 0, &base);
    render(&vec4, &s.m, &cams[1], deg, bg, 0, &v);
    assert_same(&base, &v, "project_sh vec4, lower SH degree");
    gpu_frame_free(&v);
    gpu_frame_free(&base);
  }
  free(s.store);
}
END_TEST

/* tile_cull: ellipse (tile_cull.glsl) leaves out the tiles of a splat's box its ellipse does not
 * reach and nothing else: on a scene with needles (a quarter of the splats 200 times longer than
 * wide; in loops 4-7 2,500 times, a 2D covariance whose conic cancels to a 1e-5 determinant
 * relative to its terms, where the margin for the rasteriser's rounding matters) and the usual
 * anisotropic splats, from four cameras, with and without the per-splat
 * backward's runs, the image and final T are bit-equal to `box`, every pixel's last contributor is
 * the same splat, every pair is one of box's, fewer pairs in all, and no pixel centre of a tile
 * left out reaches alpha 1/255 from that splat (computed here in double). */
START_TEST(tile_cull_ellipse_is_bit_exact) {
  struct scene s;
  make_scene(&s, 600, 17 + (uint64_t)_i);
  for (uint32_t i = 0; i < s.m.count; i += 4) {
    s.m.log_scales[3 * i] = logf(_i < 4 ? 0.4f : 5.0f);
    s.m.log_scales[3 * i + 1] = s.m.log_scales[3 * i + 2] = logf(0.002f);
    s.m.opacity[i] = 3.0f;
  }
  struct gs_camera cams[4];
  cameras(cams);
  const struct gs_camera *cam = &cams[_i % 4];
  float bg[3] = {1, 1, 1};
  struct gs_fwd_opts box = {.sigma_skip = 1}, ell = {.sigma_skip = 1, .tile_cull = 1},
                     ell_runs = {.tile_cull = 1, .bucket = 8},
                     ell_rows = {.tile_cull = 1, .bucket = 32, .cull_rows = 1};
  struct gpu_frame b, e, er, ec;
  render(&box, &s.m, cam, 3, bg, 0, &b);
  render(&ell, &s.m, cam, 3, bg, 0, &e);
  render(&ell_runs, &s.m, cam, 3, bg, 1, &er);
  /* fwd_cull: rows steps a band of rows only through the splats whose box reaches it: with the
   * needles' near-singular conics too, the same image (variants_are_bit_exact has the rest). */
  render(&ell_rows, &s.m, cam, 3, bg, 0, &ec);
  size_t px = (size_t)b.w * b.h;
  uint32_t tiles_x = (b.w + GS_TILE - 1) / GS_TILE;
  const struct gpu_frame *fs[3] = {&e, &er, &ec};
  for (int v = 0; v < 3; v++) {
    const struct gpu_frame *g = fs[v];
    ck_assert_msg(!memcmp(b.rgb, g->rgb, 12 * px), "colours differ (%d)", v);
    ck_assert_msg(!memcmp(b.t, g->t, 4 * px), "final T differs (%d)", v);
    ck_assert_msg(g->pairs < b.pairs, "ellipse %u pairs, box %u", g->pairs, b.pairs);
    for (size_t p = 0; p < px; p++) {
      uint32_t tile = (uint32_t)((p / b.w) / GS_TILE * tiles_x + (p % b.w) / GS_TILE);
      ck_assert_uint_eq(b.last[p] > 0, g->last[p] > 0);
      if (!b.last[p]) continue;
      uint32_t ib = b.vals[b.ranges[2 * tile] + b.last[p] - 1];
      uint32_t ig = g->vals[g->ranges[2 * tile] + g->last[p] - 1];
      ck_assert_msg(ib == ig, "pixel %zu: last contributor %u (box) vs %u (ellipse)", p, ib, ig);
    }
  }
  /* Pairs as (splat, tile) flags. */
  uint8_t *in_b = calloc((size_t)b.n * b.tiles, 1), *in_e = calloc((size_t)b.n * b.tiles, 1);
  ck_assert_ptr_nonnull(in_b);
  ck_assert_ptr_nonnull(in_e);
  for (uint32_t k = 0; k < b.pairs; k++) in_b[(size_t)b.vals[k] * b.tiles + b.keys[2 * k + 1]] = 1;
  for (uint32_t k = 0; k < e.pairs; k++) {
    size_t at = (size_t)e.vals[k] * b.tiles + e.keys[2 * k + 1];
    ck_assert_msg(in_b[at], "pair (splat %u, tile %u) is not one of box's", e.vals[k],
                  e.keys[2 * k + 1]);
    in_e[at] = 1;
  }
  uint32_t dropped = 0;
  for (uint32_t i = 0; i < b.n; i++) {
    ck_assert_uint_le(e.touched[i], b.touched[i]);
    const struct gs_splat2d *q = &e.splats[i];
    for (uint32_t t = 0; t < b.tiles; t++) {
      if (!in_b[(size_t)i * b.tiles + t] || in_e[(size_t)i * b.tiles + t]) continue;
      dropped++;
      uint32_t tx = t % tiles_x, ty = t / tiles_x;
      for (uint32_t y = ty * GS_TILE; y < (ty + 1) * GS_TILE && y < b.h; y++)
        for (uint32_t x = tx * GS_TILE; x < (tx + 1) * GS_TILE && x < b.w; x++) {
          double dx = q->mean2d[0] - (x + 0.5), dy = q->mean2d[1] - (y + 0.5);
          double sig =
              0.5 * (q->conic[0] * dx * dx + q->conic[2] * dy * dy) + q->conic[1] * dx * dy;
          double alpha = q->opacity * exp(-sig);
          ck_assert_msg(alpha < 0.999 / 255.0,
                        "splat %u, tile %u left out, but pixel (%u, %u) has alpha %.6g", i, t, x, y,
                        alpha);
        }
    }
  }
  ck_assert_uint_eq(dropped, b.pairs - e.pairs);
  printf("tile_cull camera %d: %u pairs (box) -> %u (ellipse)\n", _i, b.pairs, e.pairs);
  free(in_b);
  free(in_e);
  gpu_frame_free(&b);
  gpu_frame_free(&e);
  gpu_frame_free(&er);
  gpu_frame_free(&ec);
  free(s.store);
}
END_TEST

/* sort: depth_first sorts the splats by depth (4 passes over them) and their pairs by tile id
 * alone (2 passes), where `pairs` sorts the (tile, depth) keys: the same sorted splat indices,
 * tile ranges and image, bit for bit, from four cameras, with ties of depth (every fifth splat is
 * a copy of the one before, so its depth is equal to the bit: both keep index order), with
 * ellipse culling, the per-splat backward's runs, per-kernel submissions, the transient arena and
 * arena growth (radix_passes: full as well). The keys hold the same tile ids, in the low word. */
START_TEST(sort_depth_first_is_bit_exact) {
  struct scene s;
  make_scene(&s, 500, 29 + (uint64_t)_i);
  for (uint32_t i = 1; i < s.m.count; i += 5) {
    memcpy(&s.m.means[3 * i], &s.m.means[3 * (i - 1)], 12);
    memcpy(&s.m.quats[4 * i], &s.m.quats[4 * (i - 1)], 16);
    s.m.log_scales[3 * i] = s.m.log_scales[3 * (i - 1)] - 0.5f; /* smaller, not hidden */
  }
  struct gs_camera cams[4];
  cameras(cams);
  const struct gs_camera *cam = &cams[_i % 4];
  float bg[3] = {0, 0, 0};
  const struct {
    struct gs_fwd_opts o;
    int per_kernel;
    const char *name;
  } v[] = {
      {{.sigma_skip = 1, .tile_cull = 1, .radix_ballot = 1}, 0, "defaults"},
      {{.sigma_skip = 1, .radix_ballot = 1}, 1, "box, per_kernel"},
      {{.tile_cull = 1, .bucket = 8}, 0, "runs of 8"},
      {{.tile_cull = 1, .transient = 1, .initial_pairs_per_splat = 1}, 0, "transient, growth"},
      {{.tile_cull = 1, .radix_full = 1}, 0, "radix_passes full"},
  };
  for (size_t k = 0; k < sizeof v / sizeof v[0]; k++) {
    struct gs_fwd_opts df = v[k].o;
    df.depth_first = 1;
    struct gpu_frame a, b;
    render(&v[k].o, &s.m, cam, 3, bg, v[k].per_kernel, &a);
    render(&df, &s.m, cam, 3, bg, v[k].per_kernel, &b);
    size_t px = (size_t)a.w * a.h;
    ck_assert_uint_eq(a.pairs, b.pairs);
    ck_assert_msg(a.pairs > 4 * a.tiles, "%s: only %u pairs", v[k].name, a.pairs);
    ck_assert_msg(!memcmp(a.rgb, b.rgb, 12 * px), "%s: colours differ", v[k].name);
    ck_assert_msg(!memcmp(a.t, b.t, 4 * px), "%s: final T differs", v[k].name);
    ck_assert_msg(!memcmp(a.last, b.last, 4 * px), "%s: last contributor differs", v[k].name);
    ck_assert_msg(!memcmp(a.ranges, b.ranges, 8ull * a.tiles), "%s: ranges differ", v[k].name);
    ck_assert_msg(!memcmp(a.touched, b.touched, 4ull * a.n), "%s: tile counts differ", v[k].name);
    if (a.vals && b.vals) {
      for (uint32_t q = 0; q < a.pairs; q++) {
        ck_assert_msg(a.vals[q] == b.vals[q],
                      "%s: sorted pair %u: splat %u (pairs), %u (depth_first)", v[k].name, q,
                      a.vals[q], b.vals[q]);
        ck_assert_uint_eq(a.keys[2 * q + 1], b.keys[2 * q]);
        ck_assert_uint_eq(b.keys[2 * q + 1], 0);
      }
    }
    gpu_frame_free(&a);
    gpu_frame_free(&b);
  }
  free(s.store);
}
END_TEST

/* The per-splat backward's runs (rasterize_bwd: splat): the GPU forward's group list, each
 * tile's largest last contributor and every run's compositing state a pixel still uses equal the
 * host's (runs_ref.h) from the reference frame, for runs of 1, 8 and 32 splats (the forward takes
 * any power of two up to 32; the backward the device's subgroup size), with every fwd_step and
 * with fwd_cull: rows. */
START_TEST(runs_match_reference) {
  const uint32_t buckets[3] = {1, 8, 32};
  /* _i / 3: branch, select, branch with fwd_cull rows, group with rows, group8 (both with
   * fwd_stage prefetch; group8 with fwd_order dense_first) */
  const uint32_t steps[5] = {0, 1, 0, 2, 3};
  uint32_t bucket = buckets[_i % 3];
  struct scene s;
  make_scene(&s, 500, 91);
  struct gs_camera cams[4];
  cameras(cams);
  const struct gs_camera *cam = &cams[0];
  struct gs_ref_opts ro = {.sh_degree = 3};
  float bg[3] = {1, 1, 1};
  memcpy(ro.background, bg, sizeof bg);
  struct sw_err err = {0};
  struct gs_ref_frame *r;
  ck_assert_msg(gs_ref_forward(&s.m, cam, &ro, &r, &err) == 0, "%s", err.msg);
  struct ref_runs ref;
  ref_runs_make(r, bucket, &ref);
  gs_fwd_t *f;
  struct gs_fwd_opts o = {.bucket = bucket,
                          .sigma_skip = 1,
                          .step = steps[_i / 3],
                          .cull_rows = _i / 3 == 2 || _i / 3 == 3,
                          .prefetch = _i / 3 >= 3,
                          .dense_first = _i / 3 == 4};
  ck_assert_msg(gs_fwd_new(vk, &o, &f, &err) == 0, "%s", err.msg);
  struct gs_fwd_input in = {.cam = *cam, .sh_degree = 3};
  memcpy(in.background, bg, sizeof in.background);
  ck_assert_msg(gs_fwd_model_upload(vk, &s.m, &in.model, &err) == 0, "%s", err.msg);
  ck_assert_msg(gs_fwd_run(f, NULL, &in, 0, &err) == 0, "%s", err.msg);
  const struct gs_fwd_bufs *b = gs_fwd_bufs(f);
  ck_assert_uint_eq(b->tiles_x * b->tiles_y, ref.tiles);
  ck_assert_uint_ge(b->max_groups, ref.n_groups);
  uint32_t meta[GS_BMETA_WORDS], *base = malloc(4 * ref.tiles), *maxlast = malloc(4 * ref.tiles);
  ck_assert_int_eq(gs_vk_buf_download(b->bucket_meta, 0, meta, sizeof meta, &err), 0);
  ck_assert_int_eq(gs_vk_buf_download(b->tile_base, 0, base, 4ull * ref.tiles, &err), 0);
  ck_assert_int_eq(gs_vk_buf_download(b->tile_maxlast, 0, maxlast, 4ull * ref.tiles, &err), 0);
  ck_assert_uint_eq(meta[GS_BMETA_GROUPS], ref.n_groups);
  ck_assert_uint_eq(meta[GS_BMETA_ARGS + 2], 1);
  ck_assert_uint_ge((uint64_t)meta[GS_BMETA_ARGS] * meta[GS_BMETA_ARGS + 1], ref.n_groups);
  uint32_t *groups = malloc(8ull * ref.n_groups);
  size_t nstate = 4ull * GS_RASTER_WG * GS_BUCKET_GROUP * ref.n_groups;
  float *state = malloc(4 * nstate);
  ck_assert_int_eq(gs_vk_buf_download(b->groups, 0, groups, 8ull * ref.n_groups, &err), 0);
  ck_assert_int_eq(gs_vk_buf_download(b->state, 0, state, 4 * nstate, &err), 0);
  /* Every group entry names its tile's run at tile_base + first / bucket. */
  for (uint32_t g = 0; g < ref.n_groups; g++) {
    uint32_t t = groups[2 * g], first = groups[2 * g + 1];
    ck_assert_uint_lt(t, ref.tiles);
    ck_assert_uint_eq(base[t] + first / bucket, g * GS_BUCKET_GROUP);
  }
  uint32_t compared = 0, runs_seen = 0;
  for (uint32_t t = 0; t < ref.tiles; t++) {
    ck_assert_msg(maxlast[t] == ref.tile_maxlast[t], "tile %u: max last %u, reference %u", t,
                  maxlast[t], ref.tile_maxlast[t]);
    ck_assert_uint_eq(base[t] == ~0u, ref.tile_base[t] == ~0u);
    if (ref.tile_base[t] == ~0u) continue;
    uint32_t n = r->ranges[2 * t + 1] - r->ranges[2 * t];
    for (uint32_t m = 0; m * bucket < n; m++) {
      runs_seen++;
      for (uint32_t i = 0; i < GS_RASTER_WG; i++) {
        uint32_t px = (t % r->tiles_x) * GS_TILE + i % GS_TILE;
        uint32_t py = (t / r->tiles_x) * GS_TILE + i / GS_TILE;
        if (px >= r->width || py >= r->height) continue;
        if (m * bucket >= r->last[(size_t)py * r->width + px]) continue; /* never read */
        const float *gs = state + 4 * ((size_t)(base[t] + m) * GS_RASTER_WG + i);
        const float *rs = ref.state + 4 * ((size_t)(ref.tile_base[t] + m) * GS_RASTER_WG + i);
        for (int k = 0; k < 4; k++) close_to(gs[k], rs[k], 1e-5f, "run state", m);
        compared++;
      }
    }
  }
  printf("runs of %u: %u groups, %u runs, %u pixel states compared\n", bucket, ref.n_groups,
         runs_seen, compared);
  ck_assert_uint_gt(compared, 1000);
  free(groups);
  free(state);
  free(base);
  free(maxlast);
  ref_runs_free(&ref);
  gs_fwd_model_release(&in.model);
  gs_fwd_destroy(&f);
  gs_ref_frame_destroy(&r);
  free(s.store);
}
END_TEST

/* The bucket tile_order.comp puts a tile of n pairs in: its bit length and next two bits, larger
 * for more pairs. */
static uint32_t order_key(uint32_t n) {
  if (n < 4) return n;
  uint32_t msb = 31;
  while (!(n >> msb)) msb--;
  return 4 * msb + ((n >> (msb - 2)) & 3);
}

/* fwd_order: dense_first on a frame of more tiles than the order kernel's workgroup has
 * invocations (600x400: 38 x 25 = 950 tiles, so each invocation takes several): every tile once,
 * densest buckets first, and the same image, final T and last contributors as row by row, both
 * writing runs of 32 (runs_match_reference checks the runs' states with dense_first). */
START_TEST(dense_first_orders_every_tile) {
  struct scene s;
  make_scene(&s, 3000, 17);
  struct gs_camera cam;
  const double pos[3] = {3.0, -1.5, 1.2};
  look_at(&cam, 600, 400, 520, pos);
  float bg[3] = {1, 1, 1};
  struct gpu_frame base, v;
  struct gs_fwd_opts o = {.bucket = 32}, od = {.bucket = 32, .dense_first = 1};
  render(&o, &s.m, &cam, 3, bg, 0, &base);
  render(&od, &s.m, &cam, 3, bg, 0, &v);
  assert_same(&base, &v, "fwd_order dense_first, 950 tiles");
  gpu_frame_free(&base);
  gpu_frame_free(&v);
  /* The order itself, from a forward kept alive. */
  struct sw_err err = {0};
  gs_fwd_t *f;
  ck_assert_msg(gs_fwd_new(vk, &od, &f, &err) == 0, "%s", err.msg);
  struct gs_fwd_input in = {.cam = cam, .sh_degree = 3};
  memcpy(in.background, bg, sizeof in.background);
  ck_assert_msg(gs_fwd_model_upload(vk, &s.m, &in.model, &err) == 0, "%s", err.msg);
  ck_assert_msg(gs_fwd_run(f, NULL, &in, 0, &err) == 0, "%s", err.msg);
  const struct gs_fwd_bufs *b = gs_fwd_bufs(f);
  uint32_t tiles = b->tiles_x * b->tiles_y;
  ck_assert_uint_eq(tiles, 950);
  uint32_t *order = malloc(4ull * tiles), *ranges = malloc(8ull * tiles);
  unsigned char *seen = calloc(tiles, 1);
  ck_assert_int_eq(gs_vk_buf_download(b->tile_order, 0, order, 4ull * tiles, &err), 0);
  ck_assert_int_eq(gs_vk_buf_download(b->ranges, 0, ranges, 8ull * tiles, &err), 0);
  uint32_t keys_seen = 0, prev = UINT32_MAX;
  for (uint32_t w = 0; w < tiles; w++) {
    uint32_t t = order[w];
    ck_assert_msg(t < tiles, "slot %u holds tile %u of %u", w, t, tiles);
    ck_assert_msg(!seen[t], "tile %u twice (slot %u)", t, w);
    seen[t] = 1;
    uint32_t n = ranges[2 * t + 1] > ranges[2 * t] ? ranges[2 * t + 1] - ranges[2 * t] : 0;
    uint32_t k = order_key(n);
    ck_assert_msg(k <= prev, "slot %u: tile %u (%u pairs) after a sparser bucket", w, t, n);
    keys_seen += k != prev;
    prev = k;
  }
  ck_assert_msg(keys_seen >= 4, "only %u buckets: the frame does not test the order", keys_seen);
  free(order);
  free(ranges);
  free(seen);
  gs_fwd_model_release(&in.model);
  gs_fwd_destroy(&f);
  free(s.store);
}
END_TEST

START_TEST(runs_of_other_lengths_are_refused) {
  const uint32_t bad[3] = {3, 64, 12};
  for (int i = 0; i < 3; i++) {
    struct sw_err err = {0};
    gs_fwd_t *f = NULL;
    struct gs_fwd_opts o = {.bucket = bad[i]};
    ck_assert_int_eq(gs_fwd_new(vk, &o, &f, &err), SW_EINVAL);
    ck_assert_ptr_null(f);
    ck_assert_msg(strstr(err.msg, "power of two"), "%s", err.msg);
  }
  /* and a step the forward does not have */
  struct sw_err err = {0};
  gs_fwd_t *f = NULL;
  struct gs_fwd_opts o = {.step = 4};
  ck_assert_int_eq(gs_fwd_new(vk, &o, &f, &err), SW_EINVAL);
  ck_assert_ptr_null(f);
  ck_assert_msg(strstr(err.msg, "fwd_step 4"), "%s", err.msg);
}
END_TEST

START_TEST(f16_accumulator_stays_close) {
  struct scene s;
  make_scene(&s, 300, 8);
  struct gs_camera cams[4];
  cameras(cams);
  float bg[3] = {0, 0, 0};
  struct gpu_frame a, b;
  struct gs_fwd_opts o = {.accum_f16 = 1};
  render(NULL, &s.m, &cams[1], 3, bg, 0, &a);
  render(&o, &s.m, &cams[1], 3, bg, 0, &b);
  size_t px = (size_t)a.w * a.h, differ = 0;
  for (size_t p = 0; p < 3 * px; p++) {
    ck_assert_msg(fabsf(a.rgb[p] - b.rgb[p]) < 2e-2f, "f16 accumulation off by %g",
                  fabsf(a.rgb[p] - b.rgb[p]));
    differ += a.rgb[p] != b.rgb[p];
  }
  ck_assert_msg(differ > 0, "the f16 variant changed nothing: is the constant applied?");
  ck_assert(!memcmp(a.last, b.last, 4 * px)); /* T is still accumulated in f32 */
  struct gs_fwd_opts o2 = {.accum_f16 = 1, .step = 1};
  struct gpu_frame c;
  render(&o2, &s.m, &cams[1], 3, bg, 0, &c);
  assert_same(&b, &c, "fwd_accum f16 with fwd_step select");
  gpu_frame_free(&c);
  o2.step = 3; /* group8: the rounding after every composited splat, as the others */
  render(&o2, &s.m, &cams[1], 3, bg, 0, &c);
  assert_same(&b, &c, "fwd_accum f16 with fwd_step group8");
  gpu_frame_free(&c);
  gpu_frame_free(&a);
  gpu_frame_free(&b);
  free(s.store);
}
END_TEST

START_TEST(timer_names_every_stage) {
  struct scene s;
  make_scene(&s, 200, 3);
  struct gs_camera cams[4];
  cameras(cams);
  struct sw_err err = {0};
  gs_fwd_t *f;
  gs_vk_timer_t *t;
  ck_assert_int_eq(gs_fwd_new(vk, NULL, &f, &err), 0);
  ck_assert_msg(gs_vk_timer_new(vk, 16, &t, &err) == 0, "%s", err.msg);
  struct gs_fwd_input in = {.cam = cams[2], .sh_degree = 1};
  ck_assert_int_eq(gs_fwd_model_upload(vk, &s.m, &in.model, &err), 0);
  for (int pk = 0; pk < 2; pk++) ck_assert_msg(gs_fwd_run(f, t, &in, pk, &err) == 0, "%s", err.msg);
  const struct gs_vk_stage_stats *st;
  uint32_t n;
  double busy, sum = 0;
  gs_vk_timer_summary(t, &st, &n, &busy);
  ck_assert_uint_eq(n, GS_FWD_STAGES);
  for (uint32_t i = 0; i < n; i++) {
    ck_assert_str_eq(st[i].name, gs_fwd_stage_name((enum gs_fwd_stage)i));
    ck_assert_uint_eq(st[i].calls, 2);
    sum += st[i].share;
  }
  ck_assert(busy > 0);
  ck_assert_double_eq_tol(sum, 1.0, 1e-6); /* stages are serialised by barriers */
  gs_vk_timer_destroy(&t);
  gs_fwd_destroy(&f);
  /* sort: depth_first times its splat sort as a second radix_sort call: the same stage names
   * (the result schema's list), in another order of first appearance. */
  struct gs_fwd_opts df = {.depth_first = 1};
  ck_assert_int_eq(gs_fwd_new(vk, &df, &f, &err), 0);
  ck_assert_msg(gs_vk_timer_new(vk, 16, &t, &err) == 0, "%s", err.msg);
  ck_assert_msg(gs_fwd_run(f, t, &in, 0, &err) == 0, "%s", err.msg);
  gs_vk_timer_summary(t, &st, &n, &busy);
  ck_assert_uint_eq(n, GS_FWD_STAGES);
  for (uint32_t i = 0; i < n; i++) {
    int known = 0;
    for (int k = 0; k < GS_FWD_STAGES; k++)
      known |= !strcmp(st[i].name, gs_fwd_stage_name((enum gs_fwd_stage)k));
    ck_assert_msg(known, "stage '%s' is not one of the forward's", st[i].name);
    ck_assert_uint_eq(st[i].calls, strcmp(st[i].name, "radix_sort") ? 1 : 2);
  }
  gs_fwd_model_release(&in.model);
  gs_vk_timer_destroy(&t);
  gs_fwd_destroy(&f);
  free(s.store);
}
END_TEST

START_TEST(empty_model_renders_background) {
  struct scene s;
  make_scene(&s, 1, 1);
  s.m.count = 0;
  struct gs_camera cams[4];
  cameras(cams);
  float bg[3] = {0.25f, 0.5f, 1.0f};
  struct gpu_frame g;
  render(NULL, &s.m, &cams[3], 0, bg, 0, &g);
  ck_assert_uint_eq(g.pairs, 0);
  for (size_t p = 0; p < (size_t)g.w * g.h; p++) {
    ck_assert(g.rgb[3 * p] == 0.25f && g.rgb[3 * p + 1] == 0.5f && g.rgb[3 * p + 2] == 1.0f);
    ck_assert(g.t[p] == 1.0f && g.last[p] == 0);
  }
  gpu_frame_free(&g);
  free(s.store);
}
END_TEST

START_TEST(device_errors_are_clear) {
  struct sw_err err = {0};
  struct scene s;
  make_scene(&s, 50, 2);
  struct gs_camera cams[4];
  cameras(cams);
  /* An allocation failing somewhere in the forward setup comes back as SW_EDEVICE with context. */
  for (int fail = 1; fail <= 14; fail += 3) {
    char v[16];
    snprintf(v, sizeof v, "%d", fail);
    setenv("GS_VK_FAIL_ALLOC", v, 1);
    gs_vk_t *v2 = NULL;
    struct gs_vk_opts o = {.pipeline_cache = ""};
    sw_err_clear(&err);
    int rc = gs_vk_open(&v2, &o, &err);
    unsetenv("GS_VK_FAIL_ALLOC");
    ck_assert_msg(rc == 0, "%s", err.msg);
    gs_fwd_t *f = NULL;
    struct gs_fwd_input in = {.cam = cams[0], .sh_degree = 0};
    rc = gs_fwd_new(v2, NULL, &f, &err);
    if (!rc) rc = gs_fwd_model_upload(v2, &s.m, &in.model, &err);
    if (!rc) rc = gs_fwd_run(f, NULL, &in, 0, &err);
    ck_assert_msg(rc == SW_EDEVICE, "allocation %d: rc %d (%s)", fail, rc, err.msg);
    ck_assert_msg(strstr(err.msg, "GS_VK_FAIL_ALLOC") != NULL, "%s", err.msg);
    /* Only that one allocation fails: once set up, the same objects render after the error. */
    if (f && in.model.count) {
      sw_err_clear(&err);
      ck_assert_msg(gs_fwd_run(f, NULL, &in, 0, &err) == 0, "after allocation %d: %s", fail,
                    err.msg);
    }
    gs_fwd_model_release(&in.model);
    gs_fwd_destroy(&f);
    gs_vk_close(&v2);
  }
  /* No device matching GS_DEVICE. */
  setenv("GS_DEVICE", "definitely-not-a-gpu", 1);
  gs_vk_t *v3 = NULL;
  sw_err_clear(&err);
  int rc = gs_vk_open(&v3, NULL, &err);
  unsetenv("GS_DEVICE");
  ck_assert_int_eq(rc, SW_ENOTFOUND);
  ck_assert_ptr_null(v3);
  ck_assert_msg(strstr(err.msg, "definitely-not-a-gpu") != NULL, "%s", err.msg);
  free(s.store);
}
END_TEST

int main(void) {
  Suite *s = suite_create("gpu_fwd");
  TCase *tc = tcase_create("lavapipe");
  tcase_set_timeout(tc, 120); /* a CPU device is slow; ctest's CK_DEFAULT_TIMEOUT is larger */
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, constants_match_the_contract);
  tcase_add_loop_test(tc, forward_matches_reference, 0, 16);
  tcase_add_test(tc, variants_are_bit_exact);
  tcase_add_test(tc, dense_first_orders_every_tile);
  tcase_add_loop_test(tc, tile_cull_ellipse_is_bit_exact, 0, 8);
  tcase_add_loop_test(tc, sort_depth_first_is_bit_exact, 0, 4);
  tcase_add_loop_test(tc, runs_match_reference, 0, 15);
  tcase_add_test(tc, runs_of_other_lengths_are_refused);
  tcase_add_loop_test(tc, off_centre_principal_point_matches_reference, 0, 4);
  tcase_add_loop_test(tc, alpha_max_matches_reference, 0, 3);
  tcase_add_test(tc, alpha_max_out_of_range_is_refused);
  tcase_add_test(tc, f16_accumulator_stays_close);
  tcase_add_test(tc, timer_names_every_stage);
  tcase_add_test(tc, empty_model_renders_background);
  tcase_add_test(tc, device_errors_are_clear);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
