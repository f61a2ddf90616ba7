/* gs_ref.c: the C reference of the training pipeline (API and conventions in gs_ref.h). The
 * forward, loss and backward math lives once in gs_ref_tmpl.c and is instantiated here in float
 * and in double; this file adds what needs one precision only: model helpers, the densifier's
 * gradient norm, the combined backward, and the Adam reference with its learning-rate schedule. */
#include "gs_ref.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gs_metrics.h"

/* Real SH basis constants of the 3DGS reference (degrees 0..3). */
#define SH_C0 0.28209479177387814
#define SH_C1 0.4886025119029199
#define SH_C2_0 1.0925484305920792
#define SH_C2_1 (-1.0925484305920792)
#define SH_C2_2 0.31539156525252005
#define SH_C2_3 (-1.0925484305920792)
#define SH_C2_4 0.5462742152960396
#define SH_C3_0 (-0.5900435899266435)
#define SH_C3_1 2.890611442640554
#define SH_C3_2 (-0.4570457994644658)
#define SH_C3_3 0.3731763325901154
#define SH_C3_4 (-0.4570457994644658)
#define SH_C3_5 1.445305721320277
#define SH_C3_6 (-0.5900435899266435)

/* SSIM: the window and the stabilising constants are the metric's (gs_metrics.h), so that the
 * differentiable SSIM of the loss and the evaluation score share one definition. */
#define SSIM_WIN GS_METRICS_SSIM_WINDOW
#define SSIM_C1 GS_METRICS_SSIM_C1
#define SSIM_C2 GS_METRICS_SSIM_C2

/* A (splat, tile) pair before sorting; seq is the emission order, the tie-breaker that makes
 * qsort stable. */
struct ref_pair {
  uint64_t key;
  uint32_t id;
  uint32_t seq;
};

static int ref_pair_cmp(const void *pa, const void *pb) {
  const struct ref_pair *a = pa, *b = pb;
  if (a->key != b->key) return a->key < b->key ? -1 : 1;
  return a->seq < b->seq ? -1 : a->seq > b->seq ? 1 : 0;
}

/* ---- float instantiation ---- */
#define REAL float
#define K(x) ((float)(x))
#define EXP expf
#define SQRT sqrtf
#define LOG logf
#define CEIL ceilf
#define FLOOR floorf
#define FABS fabsf
#define FN(name) name
#define SFN(name) name##_f
#define SSIM_BLUR gs_metrics_ssim_blurf
#define MODEL struct gs_model
#define CAMERA struct gs_camera
#define SPLAT struct gs_ref_splat
#define SGRAD struct gs_ref_splat_grad
#define FRAME struct gs_ref_frame
#include "gs_ref_tmpl.c"

/* ---- double instantiation ---- */
#define REAL double
#define K(x) ((double)(x))
#define EXP exp
#define SQRT sqrt
#define LOG log
#define CEIL ceil
#define FLOOR floor
#define FABS fabs
#define FN(name) name##_d
#define SFN(name) name##_d
#define SSIM_BLUR gs_metrics_ssim_blur
#define MODEL struct gs_ref_model_d
#define CAMERA struct gs_ref_camera_d
#define SPLAT struct gs_ref_splat_d
#define SGRAD struct gs_ref_splat_grad_d
#define FRAME struct gs_ref_frame_d
#include "gs_ref_tmpl.c"

/* ---- Backward (float, both stages) ---------------------------------------------------------- */

float gs_ref_grad2d_norm(const struct gs_ref_splat_grad *g, uint32_t width, uint32_t height) {
  float gx = g->mean2d[0] * 0.5f * (float)width;
  float gy = g->mean2d[1] * 0.5f * (float)height;
  return sqrtf(gx * gx + gy * gy);
}

int gs_ref_backward(const struct gs_model *m, const struct gs_camera *cam,
                    const struct gs_ref_frame *frame, const float *dl_drgb, struct gs_model *grad,
                    float *grad2d, struct sw_err *err) {
  if (!frame) return sw_err_set(err, SW_EINVAL, "gs_ref_backward: frame is required");
  struct gs_ref_splat_grad *sg = calloc(frame->count ? frame->count : 1, sizeof *sg);
  if (!sg)
    return sw_err_set(err, SW_ENOMEM, "gs_ref_backward: out of memory for %u splats", frame->count);
  int rc = gs_ref_rasterize_backward(frame, dl_drgb, sg, err);
  if (rc == 0) rc = gs_ref_project_backward(m, cam, frame, sg, grad, err);
  if (rc == 0 && grad2d)
    for (uint32_t i = 0; i < frame->count; i++)
      grad2d[i] = frame->splats[i].radius > 0
                      ? gs_ref_grad2d_norm(&sg[i], frame->width, frame->height)
                      : 0.0f;
  free(sg);
  return rc;
}

/* ---- Models --------------------------------------------------------------------------------- */

int gs_ref_model_alloc(struct gs_model *m, uint32_t n, struct sw_err *err) {
  memset(m, 0, sizeof *m);
  size_t cap = n ? n : 1;
  m->means = calloc(3 * cap, sizeof(float));
  m->log_scales = calloc(3 * cap, sizeof(float));
  m->quats = calloc(4 * cap, sizeof(float));
  m->opacity = calloc(cap, sizeof(float));
  m->sh = calloc((size_t)GS_SH_COEFFS * 3 * cap, sizeof(float));
  if (!m->means || !m->log_scales || !m->quats || !m->opacity || !m->sh) {
    gs_ref_model_free(m);
    return sw_err_set(err, SW_ENOMEM, "gs_ref: out of memory for a model of %u splats", n);
  }
  m->count = m->capacity = n;
  return 0;
}

void gs_ref_model_free(struct gs_model *m) {
  if (!m) return;
  free(m->means);
  free(m->log_scales);
  free(m->quats);
  free(m->opacity);
  free(m->sh);
  memset(m, 0, sizeof *m);
}

int gs_ref_model_d_new(uint32_t n, struct gs_ref_model_d **out, struct sw_err *err) {
  *out = NULL;
  struct gs_ref_model_d *m = calloc(1, sizeof *m);
  size_t cap = n ? n : 1;
  if (m) {
    m->means = calloc(3 * cap, sizeof(double));
    m->log_scales = calloc(3 * cap, sizeof(double));
    m->quats = calloc(4 * cap, sizeof(double));
    m->opacity = calloc(cap, sizeof(double));
    m->sh = calloc((size_t)GS_SH_COEFFS * 3 * cap, sizeof(double));
  }
  if (!m || !m->means || !m->log_scales || !m->quats || !m->opacity || !m->sh) {
    gs_ref_model_d_destroy(&m);
    return sw_err_set(err, SW_ENOMEM, "gs_ref: out of memory for a double model of %u splats", n);
  }
  m->count = n;
  *out = m;
  return 0;
}

void gs_ref_model_d_destroy(struct gs_ref_model_d **mp) {
  if (!mp || !*mp) return;
  struct gs_ref_model_d *m = *mp;
  free(m->means);
  free(m->log_scales);
  free(m->quats);
  free(m->opacity);
  free(m->sh);
  free(m);
  *mp = NULL;
}

int gs_ref_model_to_d(const struct gs_model *src, struct gs_ref_model_d **out, struct sw_err *err) {
  int rc = gs_ref_model_d_new(src->count, out, err);
  if (rc != 0) return rc;
  struct gs_ref_model_d *d = *out;
  size_t n = src->count;
  for (size_t k = 0; k < 3 * n; k++) {
    d->means[k] = src->means[k];
    d->log_scales[k] = src->log_scales[k];
  }
  for (size_t k = 0; k < 4 * n; k++) d->quats[k] = src->quats[k];
  for (size_t k = 0; k < n; k++) d->opacity[k] = src->opacity[k];
  for (size_t k = 0; k < (size_t)GS_SH_COEFFS * 3 * n; k++) d->sh[k] = src->sh[k];
  return 0;
}

void gs_ref_camera_to_d(const struct gs_camera *src, struct gs_ref_camera_d *dst) {
  dst->width = src->width;
  dst->height = src->height;
  dst->fx = src->fx;
  dst->fy = src->fy;
  dst->cx = src->cx;
  dst->cy = src->cy;
  for (int k = 0; k < 16; k++) dst->viewmat[k] = src->viewmat[k];
  for (int k = 0; k < 3; k++) dst->campos[k] = src->campos[k];
}

/* ---- Adam ----------------------------------------------------------------------------------- */

void gs_ref_adam_step(float *p, const float *g, float *m, float *v, size_t n, float lr,
                      const struct gs_ref_adam *hp, uint32_t step) {
  float b1 = hp->beta1, b2 = hp->beta2;
  float bias1 = 1.0f - powf(b1, (float)step);
  float bias2 = 1.0f - powf(b2, (float)step);
  float step_size = lr / bias1;
  float bias2_sqrt = sqrtf(bias2);
  for (size_t k = 0; k < n; k++) {
    m[k] = b1 * m[k] + (1.0f - b1) * g[k];
    v[k] = b2 * v[k] + (1.0f - b2) * g[k] * g[k];
    float denom = sqrtf(v[k]) / bias2_sqrt + hp->eps;
    p[k] -= step_size * m[k] / denom;
  }
}

void gs_ref_adam_model(struct gs_model *params, const struct gs_model *grad, struct gs_model *m1,
                       struct gs_model *m2, const struct gs_ref_lr *lr,
                       const struct gs_ref_adam *hp, uint32_t step) {
  size_t n = params->count;
  gs_ref_adam_step(params->means, grad->means, m1->means, m2->means, 3 * n, lr->means, hp, step);
  gs_ref_adam_step(params->log_scales, grad->log_scales, m1->log_scales, m2->log_scales, 3 * n,
                   lr->log_scales, hp, step);
  gs_ref_adam_step(params->quats, grad->quats, m1->quats, m2->quats, 4 * n, lr->quats, hp, step);
  gs_ref_adam_step(params->opacity, grad->opacity, m1->opacity, m2->opacity, n, lr->opacity, hp,
                   step);
  /* SH: coefficient 0 (3 floats) at the dc rate, coefficients 1..15 (45 floats) at the rest
   * rate; each splat's 48 floats are contiguous. */
  const size_t stride = (size_t)GS_SH_COEFFS * 3;
  for (size_t i = 0; i < n; i++) {
    size_t o = i * stride;
    gs_ref_adam_step(params->sh + o, grad->sh + o, m1->sh + o, m2->sh + o, 3, lr->sh_dc, hp, step);
    gs_ref_adam_step(params->sh + o + 3, grad->sh + o + 3, m1->sh + o + 3, m2->sh + o + 3,
                     stride - 3, lr->sh_rest, hp, step);
  }
}

double gs_ref_position_lr(uint32_t step, uint32_t max_steps, double extent) {
  double init = 1.6e-4 * extent, final = 1.6e-6 * extent;
  if (max_steps == 0) return init;
  double t = step >= max_steps ? 1.0 : (double)step / (double)max_steps;
  return init * pow(final / init, t);
}
