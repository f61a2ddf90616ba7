/* gs_ref.h: the C reference implementation of the training pipeline, the oracle every GPU test is
 * checked against: forward (project, bin + stable sort, rasterize), loss (L1 + D-SSIM) forward and
 * backward, rasterize and projection backward, the densifier's 2D gradient norm, and Adam with
 * the position learning-rate schedule.
 *
 * The math is written once over a `real` type and compiled twice (gs_ref_tmpl.c): the float API
 * (plain names, struct gs_model / gs_camera) does what a GPU computing in float does, operation
 * for operation; the double API (suffix _d, struct gs_ref_model_d / gs_ref_camera_d) is the same
 * code in double, for finite-difference gradient checks.
 *
 * Forward contract: pipeline/gs_types.h. Choices the contract leaves open, which the GPU must
 * follow to compare number for number:
 *  - Projection: t = R mean + T (viewmat rows). EWA Jacobian J = [[fx/z, 0, -fx x'/z^2],
 *    [0, fy/z, -fy y'/z^2]] with x' = z clamp(x/z, -(cx/fx + 0.3 W/(2 fx)), (W - cx)/fx +
 *    0.3 W/(2 fx)) and y' likewise (gsplat's and the Inria code's field-of-view clamp; outside it
 *    J has no x, resp. y, derivative). cov2d = J R Sigma R^T J^T + 0.3 I stored as (xx, xy, yy);
 *    det = xx*yy - xy*xy; conic = (yy/det, -xy/det, xx/det) = (a, b, c).
 *    Box: o = sigmoid(logit); culled when o < 1/255; e = min(3.33, sqrt(2 ln(o / (1/255))));
 *    rx = ceil(e sqrt(xx)), ry = ceil(e sqrt(yy)); radius = max(rx, ry).
 *  - Tile rectangle (x1, y1 exclusive), with m = mean2d and rx, ry as float:
 *    x0 = clamp(floor((m.x - rx) / 16), 0, tiles_x), x1 = clamp(floor((m.x + rx) / 16) + 1, 0,
 *    tiles_x), same for y with ry. tiles_touched = (x1 - x0) * (y1 - y0); 0 means culled
 *    (radius 0).
 *  - Pairs are emitted per splat in index order, tiles row-major inside its rectangle; the sort is
 *    stable on the 64-bit key (tile << 32 | float bits of depth), so ties keep splat order.
 *  - SH: direction = normalize(mean - campos), the 3DGS basis constants, coefficients above the
 *    active degree ignored; rgb = max(sh + 0.5, 0) per channel.
 *  - Rasterize: as in gs_types.h; last_contributor is (position in the tile's range) + 1.
 *  - Backward, alpha = min(alpha_max, o G): where o G >= alpha_max the clamp is active and
 *    alpha's gradient to o and to sigma is zero (the true derivative). A channel clamped at 0
 *    passes no gradient. alpha_max is an option (struct gs_ref_opts), 0.99 by default.
 *  - Gradient of the conic is with respect to (a, b, c) in
 *    sigma = 0.5 (a dx^2 + c dy^2) + b dx dy, with d = mean2d - pixel centre.
 *  - SSIM: the window and constants of gs_metrics.h (11x11 Gaussian, sigma 1.5, normalised to
 *    sum 1; C1 = 0.01^2, C2 = 0.03^2), per channel, zero padding ("same" size, as the 3DGS
 *    reference's conv2d with padding 5); mean of the SSIM map over every pixel and channel
 *    (GS_SSIM_SAME), or only over the pixels whose window lies inside the image (GS_SSIM_VALID,
 *    gs_types.h; images of at least 11x11).
 *    Loss L = (1 - lambda) L1 + lambda (1 - SSIM) with L1 the mean absolute difference over
 *    every pixel and channel (whatever the SSIM padding); d|x|/dx at 0 is 0.
 *  - Densifier 2D gradient norm (gsplat, absgrad off, one camera per step):
 *    sqrt((g.x * 0.5 * width)^2 + (g.y * 0.5 * height)^2) with g = dL/dmean2d in pixels.
 *
 *  - The double path uses the contract's float constants (0.3 dilation, 1/255, the alpha clamp,
 *    1e-4, near z) converted to double, so that both precisions take the same branches.
 *  - Culled splats (behind the near plane, zero quaternion, opacity < 1/255, det <= 0, non-finite
 *    or absurd box >= 2^24, no tile touched) are all-zero in frame->splats and get zero gradients.
 *
 * Images are row-major RGB, 3 values per pixel. All functions accept err == NULL. */
#ifndef GS_REF_H
#define GS_REF_H

#include <stddef.h>
#include <stdint.h>

#include "gs_types.h"
#include "sw_err.h"

/* ---- Options and per-splat data ------------------------------------------------------------- */

struct gs_ref_opts {
  uint32_t sh_degree;  /* active SH degree 0..3 */
  float background[3]; /* composited where T remains */
  float alpha_max;     /* the alpha clamp: 0 = GS_ALPHA_MAX (0.99); else within
                          [GS_ALPHA_MAX_LO, GS_ALPHA_MAX_HI] (gsplat: 0.999) */
};

/* One projected splat (the forward intermediates the GPU's project stage produces). */
struct gs_ref_splat {
  float mean2d[2];  /* pixels */
  float cov2d[3];   /* xx, xy, yy, dilation included */
  float conic[3];   /* a, b, c: inverse of cov2d */
  float depth;      /* view-space z */
  float rgb[3];     /* clamped colour */
  float opacity;    /* sigmoid of the logit */
  int32_t radius;   /* pixels; 0 = culled */
  uint32_t rect[4]; /* tile x0, y0, x1, y1 (x1, y1 exclusive) */
  uint32_t tiles_touched;
  uint8_t clamped[3]; /* channel was clamped at 0: no colour gradient */
};

/* Per-splat gradients produced by rasterize backward (sums over pixels). */
struct gs_ref_splat_grad {
  float mean2d[2];
  float conic[3];
  float rgb[3];
  float opacity; /* with respect to the post-sigmoid opacity */
};

/* Everything one forward pass produces, kept for backward and for comparing GPU buffers. */
struct gs_ref_frame {
  uint32_t width, height, tiles_x, tiles_y;
  uint32_t count; /* splats */
  uint32_t sh_degree;
  float background[3];
  float alpha_max;             /* the alpha clamp in use (resolved from the options) */
  struct gs_ref_splat *splats; /* count */
  uint32_t n_pairs;
  uint64_t *keys;   /* n_pairs, sorted: tile << 32 | depth bits */
  uint32_t *ids;    /* n_pairs, splat index of each sorted pair */
  uint32_t *ranges; /* 2 per tile: [start, end) into keys/ids */
  float *rgb;       /* 3 per pixel */
  float *final_t;   /* per pixel */
  uint32_t *last;   /* per pixel: last contributor, 0 = none */
};

/* ---- Float API ---------------------------------------------------------------------------------
 */

/* Allocates a frame for `count` splats and the camera's image size; splats zeroed, no pairs yet.
 * Returns 0, SW_EINVAL (bad size, sh_degree > 3, alpha_max out of range) or SW_ENOMEM. */
int gs_ref_frame_new(uint32_t count, const struct gs_camera *cam, const struct gs_ref_opts *opts,
                     struct gs_ref_frame **out, struct sw_err *err);
void gs_ref_frame_destroy(struct gs_ref_frame **frame);

/* Stage 1: projects every splat of m (m->count == frame->count) into frame->splats. */
int gs_ref_project(const struct gs_model *m, const struct gs_camera *cam,
                   struct gs_ref_frame *frame, struct sw_err *err);
/* Stage 2: emits (tile, depth) keys for the projected splats, sorts them stably, and fills
 * ranges. Replaces any previous pairs. */
int gs_ref_bin(struct gs_ref_frame *frame, struct sw_err *err);
/* Stage 3: rasterizes the binned splats into rgb, final_t, last. */
void gs_ref_rasterize(struct gs_ref_frame *frame);
/* All three stages: a new frame the caller destroys. */
int gs_ref_forward(const struct gs_model *m, const struct gs_camera *cam,
                   const struct gs_ref_opts *opts, struct gs_ref_frame **out, struct sw_err *err);

/* Loss L = (1 - lambda) L1 + lambda (1 - SSIM) of img against target (w x h RGB), SSIM with
 * zero padding (GS_SSIM_SAME). *loss gets the value (accumulated in double); dl_dimg (3 w h, may
 * be NULL) gets dL/dimg. */
int gs_ref_loss(const float *img, const float *target, uint32_t w, uint32_t h, float lambda,
                double *loss, float *dl_dimg, struct sw_err *err);
/* The same with the SSIM padding given (enum gs_ssim_padding); GS_SSIM_VALID needs w, h >= 11
 * (SW_EINVAL otherwise). */
int gs_ref_loss_padded(const float *img, const float *target, uint32_t w, uint32_t h, float lambda,
                       int padding, double *loss, float *dl_dimg, struct sw_err *err);
/* SSIM of a against b (see above, GS_SSIM_SAME) and, when dssim_da != NULL, dSSIM/da. */
int gs_ref_ssim(const float *a, const float *b, uint32_t w, uint32_t h, double *ssim,
                float *dssim_da, struct sw_err *err);
/* The same with the padding given. */
int gs_ref_ssim_padded(const float *a, const float *b, uint32_t w, uint32_t h, int padding,
                       double *ssim, float *dssim_da, struct sw_err *err);

/* Backward stage 1: per-splat gradients (out: frame->count entries, overwritten) from dL/dimage
 * (3 per pixel), walking each pixel back to front from its last contributor. */
int gs_ref_rasterize_backward(const struct gs_ref_frame *frame, const float *dl_drgb,
                              struct gs_ref_splat_grad *out, struct sw_err *err);
/* Backward stage 2: gradients of the model parameters (grad: same layout as m, capacity >=
 * m->count, overwritten, grad->count set) from the per-splat gradients. Culled splats and SH
 * coefficients above the active degree get zero. Opacity gradient is w.r.t. the logit. */
int gs_ref_project_backward(const struct gs_model *m, const struct gs_camera *cam,
                            const struct gs_ref_frame *frame, const struct gs_ref_splat_grad *sg,
                            struct gs_model *grad, struct sw_err *err);
/* Both backward stages; grad2d (frame->count floats, may be NULL) gets each splat's densifier
 * 2D gradient norm (0 for culled splats). */
int gs_ref_backward(const struct gs_model *m, const struct gs_camera *cam,
                    const struct gs_ref_frame *frame, const float *dl_drgb, struct gs_model *grad,
                    float *grad2d, struct sw_err *err);
/* The densifier's 2D gradient norm of one splat (see the convention above). */
float gs_ref_grad2d_norm(const struct gs_ref_splat_grad *g, uint32_t width, uint32_t height);

/* Allocates / frees the arrays of a struct gs_model with count == capacity == n, zeroed. Used for
 * gradient and Adam-moment buffers in tests (the trainer's model lives in gs_model.h). */
int gs_ref_model_alloc(struct gs_model *m, uint32_t n, struct sw_err *err);
void gs_ref_model_free(struct gs_model *m);

/* ---- Adam ------------------------------------------------------------------------------------ */

/* Learning rates per parameter group. */
struct gs_ref_lr {
  float means, log_scales, quats, opacity, sh_dc, sh_rest;
};

/* Adam hyper-parameters (defaults: beta1 0.9, beta2 0.999, eps 1e-15). */
struct gs_ref_adam {
  float beta1, beta2, eps;
};

/* One Adam step (PyTorch form, bias-corrected, step counted from 1) over n floats:
 *   m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2;
 *   p -= (lr / (1 - b1^step)) * m / (sqrt(v) / sqrt(1 - b2^step) + eps). */
void gs_ref_adam_step(float *p, const float *g, float *m, float *v, size_t n, float lr,
                      const struct gs_ref_adam *hp, uint32_t step);
/* One Adam step over every parameter group of a model (m1, m2: first and second moments, same
 * layout; sh_dc is coefficient 0 of each splat, sh_rest coefficients 1..15). */
void gs_ref_adam_model(struct gs_model *params, const struct gs_model *grad, struct gs_model *m1,
                       struct gs_model *m2, const struct gs_ref_lr *lr,
                       const struct gs_ref_adam *hp, uint32_t step);
/* Position learning rate at `step` of `max_steps`: exponential decay from 1.6e-4 x extent to
 * 1.6e-6 x extent, lr = init * (final / init)^(min(step, max_steps) / max_steps). */
double gs_ref_position_lr(uint32_t step, uint32_t max_steps, double extent);

/* ---- Double API (finite differences) ----------------------------------------------------------
 */

struct gs_ref_model_d {
  uint32_t count;
  double *means, *log_scales, *quats, *opacity, *sh;
};

struct gs_ref_camera_d {
  uint32_t width, height;
  double fx, fy, cx, cy;
  double viewmat[16];
  double campos[3];
};

struct gs_ref_splat_d {
  double mean2d[2], cov2d[3], conic[3], depth, rgb[3], opacity;
  int32_t radius;
  uint32_t rect[4];
  uint32_t tiles_touched;
  uint8_t clamped[3];
};

struct gs_ref_splat_grad_d {
  double mean2d[2], conic[3], rgb[3], opacity;
};

struct gs_ref_frame_d {
  uint32_t width, height, tiles_x, tiles_y;
  uint32_t count;
  uint32_t sh_degree;
  double background[3];
  double alpha_max; /* the float clamp of the options, converted */
  struct gs_ref_splat_d *splats;
  uint32_t n_pairs;
  uint64_t *keys;
  uint32_t *ids;
  uint32_t *ranges;
  double *rgb;
  double *final_t;
  uint32_t *last;
};

/* Double model: allocate zeroed / free / convert from float. */
int gs_ref_model_d_new(uint32_t n, struct gs_ref_model_d **out, struct sw_err *err);
void gs_ref_model_d_destroy(struct gs_ref_model_d **m);
int gs_ref_model_to_d(const struct gs_model *src, struct gs_ref_model_d **out, struct sw_err *err);
void gs_ref_camera_to_d(const struct gs_camera *src, struct gs_ref_camera_d *dst);

int gs_ref_frame_new_d(uint32_t count, const struct gs_ref_camera_d *cam,
                       const struct gs_ref_opts *opts, struct gs_ref_frame_d **out,
                       struct sw_err *err);
void gs_ref_frame_destroy_d(struct gs_ref_frame_d **frame);
int gs_ref_project_d(const struct gs_ref_model_d *m, const struct gs_ref_camera_d *cam,
                     struct gs_ref_frame_d *frame, struct sw_err *err);
int gs_ref_bin_d(struct gs_ref_frame_d *frame, struct sw_err *err);
void gs_ref_rasterize_d(struct gs_ref_frame_d *frame);
int gs_ref_forward_d(const struct gs_ref_model_d *m, const struct gs_ref_camera_d *cam,
                     const struct gs_ref_opts *opts, struct gs_ref_frame_d **out,
                     struct sw_err *err);
int gs_ref_loss_d(const double *img, const double *target, uint32_t w, uint32_t h, double lambda,
                  double *loss, double *dl_dimg, struct sw_err *err);
int gs_ref_loss_padded_d(const double *img, const double *target, uint32_t w, uint32_t h,
                         double lambda, int padding, double *loss, double *dl_dimg,
                         struct sw_err *err);
int gs_ref_ssim_d(const double *a, const double *b, uint32_t w, uint32_t h, double *ssim,
                  double *dssim_da, struct sw_err *err);
int gs_ref_ssim_padded_d(const double *a, const double *b, uint32_t w, uint32_t h, int padding,
                         double *ssim, double *dssim_da, struct sw_err *err);
int gs_ref_rasterize_backward_d(const struct gs_ref_frame_d *frame, const double *dl_drgb,
                                struct gs_ref_splat_grad_d *out, struct sw_err *err);
/* grad: a double model of m->count splats (overwritten). */
int gs_ref_project_backward_d(const struct gs_ref_model_d *m, const struct gs_ref_camera_d *cam,
                              const struct gs_ref_frame_d *frame,
                              const struct gs_ref_splat_grad_d *sg, struct gs_ref_model_d *grad,
                              struct sw_err *err);

#endif
