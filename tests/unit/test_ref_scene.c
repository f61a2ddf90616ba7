/* test_ref_scene.c: tiny deterministic scenes and cameras for the gs_ref test suites. */
#include "test_ref_scene.h"

#include <math.h>
#include <string.h>

double tr_uniform(struct tr_rng *r) {
  uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return (double)(z >> 11) * (1.0 / 9007199254740992.0);
}

double tr_range(struct tr_rng *r, double lo, double hi) { return lo + (hi - lo) * tr_uniform(r); }

double tr_normal(struct tr_rng *r) {
  double u1 = tr_uniform(r), u2 = tr_uniform(r);
  if (u1 < 1e-300) u1 = 1e-300;
  return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

static void normalize3(float v[3]) {
  float n = sqrtf(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
  for (int k = 0; k < 3; k++) v[k] /= n;
}

static void cross3(const float a[3], const float b[3], float out[3]) {
  out[0] = a[1] * b[2] - a[2] * b[1];
  out[1] = a[2] * b[0] - a[0] * b[2];
  out[2] = a[0] * b[1] - a[1] * b[0];
}

void tr_camera(struct gs_camera *cam, uint32_t w, uint32_t h, float f, const float eye[3]) {
  memset(cam, 0, sizeof *cam);
  cam->width = w;
  cam->height = h;
  cam->fx = cam->fy = f;
  cam->cx = 0.5f * (float)w;
  cam->cy = 0.5f * (float)h;
  float fwd[3] = {-eye[0], -eye[1], -eye[2]}, up[3] = {0, 0, 1}, right[3], down[3];
  normalize3(fwd);
  cross3(fwd, up, right);
  normalize3(right);
  cross3(fwd, right, down);
  const float *rows[3] = {right, down, fwd};
  for (int r = 0; r < 3; r++) {
    float t = 0.0f;
    for (int k = 0; k < 3; k++) {
      cam->viewmat[4 * r + k] = rows[r][k];
      t -= rows[r][k] * eye[k];
    }
    cam->viewmat[4 * r + 3] = t;
  }
  cam->viewmat[15] = 1.0f;
  memcpy(cam->campos, eye, 3 * sizeof(float));
}

void tr_orbit_camera(struct gs_camera *cam, uint32_t w, uint32_t h, float f, float dist, float azim,
                     float elev) {
  float eye[3] = {dist * cosf(elev) * cosf(azim), dist * cosf(elev) * sinf(azim),
                  dist * sinf(elev)};
  tr_camera(cam, w, h, f, eye);
}

void tr_fill_scene(struct gs_model *m, uint64_t seed, float spread, float smin, float smax,
                   float olo, float ohi) {
  struct tr_rng r = {seed};
  for (uint32_t i = 0; i < m->count; i++) {
    for (int k = 0; k < 3; k++) {
      m->means[3 * i + k] = (float)tr_range(&r, -spread, spread);
      m->log_scales[3 * i + k] = (float)tr_range(&r, log(smin), log(smax));
    }
    for (int k = 0; k < 4; k++) m->quats[4 * i + k] = (float)tr_normal(&r);
    m->opacity[i] = (float)tr_range(&r, olo, ohi);
    for (int k = 0; k < GS_SH_COEFFS * 3; k++)
      m->sh[GS_SH_COEFFS * 3 * i + k] = (float)((k < 3 ? 0.5 : 0.2) * tr_normal(&r));
  }
}

void tr_place_beyond_clamp(struct gs_model *m, const struct gs_camera *cam, uint32_t first,
                           uint32_t count) {
  double hx = 0.5 * cam->width / cam->fx, hy = 0.5 * cam->height / cam->fy;
  const float *v = cam->viewmat;
  for (uint32_t j = 0; j < count && first + j < m->count; j++) {
    uint32_t i = first + j;
    double z = 0.6 + 0.1 * j, side = (j & 1) ? -1.0 : 1.0;
    double u = (j & 2) ? 0.3 * hx * side : 1.6 * hx * side; /* x/z */
    double w = (j & 2) ? 1.6 * hy * side : 0.3 * hy * side; /* y/z */
    double t[3] = {u * z, w * z, z};
    for (int k = 0; k < 3; k++) {
      double p = 0.0;
      for (int r = 0; r < 3; r++) p += v[4 * r + k] * (t[r] - v[4 * r + 3]);
      m->means[3 * i + k] = (float)p;
      m->log_scales[3 * i + k] = (float)log(0.35 * z * hx * (1.0 + 0.2 * k));
    }
  }
}
