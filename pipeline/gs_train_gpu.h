/* gs_train_gpu.h: the training kernels on the GPU (internal to gs_train, used by its tests and the
 * iteration benchmark): loss (L1, or L1 + D-SSIM) forward and backward, rasterize backward,
 * projection backward and Adam, each recorded into a caller's command buffer with push
 * descriptors (gs_vk), so that one iteration can be one submission. Buffer layouts:
 * shaders/gs_train_shared.h and shaders/gs_shared.h.
 *
 * Variants are specialization constants fixed when the kernels are built (struct gs_tk_opts), so
 * each A/B arm runs exactly one code path. The rasterize backward uses float atomic add where the
 * device has it (shaderBufferFloat32AtomicAdd), else the compare-and-swap build of the same body;
 * with opts.deterministic it sums in 64-bit fixed point instead (order-independent, so a run
 * repeats bit for bit) and resolves the sums into float grad2d with one more small kernel. */
#ifndef GS_TRAIN_GPU_H
#define GS_TRAIN_GPU_H

#include <stdint.h>
#include <stdio.h>

#include "gs_fwd.h"
#include "gs_model.h"
#include "gs_shared.h"
#include "gs_train_shared.h"
#include "gs_vk.h"

/* Parameter groups, in the order of the model's arrays and of every 5-buffer array below. */
enum gs_pgroup { GS_P_MEANS = 0, GS_P_SCALES, GS_P_QUATS, GS_P_OPACITY, GS_P_SH, GS_P_COUNT };
/* Floats per splat of each group (3, 3, 4, 1, 48: 59 in all). */
extern const uint32_t gs_pgroup_floats[GS_P_COUNT];
/* The host array of group g (enum gs_pgroup) of m: m->means ... m->sh. */
float *gs_pgroup_host(struct gs_model *m, int g);

struct gs_tk_opts {
  int ssim_walk;      /* 0 scalar, 1 float4, 2 float4 + shared reciprocal */
  int ssim_planar;    /* the SSIM maps one plane per quantity (ssim_common.glsl), else
                         interleaved per pixel */
  int sigma_skip;     /* rasterize backward skips sigma >= 5.55 before exp */
  int warp_skip;      /* rasterize backward skips subgroups with no contributing lane */
  int atomic_spread;  /* atomics from several lanes instead of one */
  int adam_visible;   /* Adam only over splats with tiles_touched > 0 */
  int force_cas;      /* use the compare-and-swap build even when float atomics exist (tests) */
  int direct_atomics; /* rasterize backward: subgroup sums straight to global memory, no shared
                         memory stage */
  float alpha_max;    /* the alpha clamp, as the forward's (0: GS_ALPHA_MAX; else within
                         [GS_ALPHA_MAX_LO, GS_ALPHA_MAX_HI], SW_EINVAL otherwise) */
  int ssim_padding;   /* enum gs_ssim_padding (gs_types.h): which pixels the SSIM map covers */
  int deterministic;  /* rasterize backward in fixed point (bit-identical runs); needs
                         gs_tk_reserve before recording it */
  int splat_bwd;      /* rasterize_bwd: splat -> the per-splat backward over the forward's runs
                         (rasterize_bwd_splat.glsl; the forward built with gs_tk_bucket(tk));
                         warp_skip, atomic_spread and direct_atomics do not apply to it */
  int run_pixels;     /* per-splat backward, enum gs_bwd_run_pixels: a run walks the rows its
                         splats reach (0), only the pixels still compositing at its first splat
                         inside its splats' union box (1, active) or inside one of their boxes
                         (2, covered) */
  int step;           /* per-splat backward, enum gs_bwd_step: a skipped pixel is a branch (0)
                         or a masked step of straight-line code (1, select; 2, lean: fewer
                         instructions, the same sums up to rounding; 3, dot: lean carrying
                         dot(C, dL/dpix) instead of C) */
  int drain;          /* per-splat backward, enum gs_bwd_drain: a run's walk ends after its last
                         lane saw every pixel (0) or once each lane is past its box (1, trim) */
  int state;          /* per-splat backward, enum gs_bwd_state: lane 0 takes the runs' stored
                         states from a copy in shared memory (0) or from bucket_state itself, a
                         block of a subgroup's width ahead, by a shuffle (1, global) */
  int chain;          /* per-splat backward: runs a subgroup walks back to back (1, 2 or 4;
                         0 counts as 1; more than 1 needs step select) */
  int fuse_adam;      /* enum gs_project_adam: the projection backward writes the gradients for
                         the Adam stage (0, separate) or applies the Adam step itself
                         (1, fused: gs_tk_record_project_adam; no grads buffers) */
};

/* The forward's runs the per-splat backward reads (struct gs_fwd_bufs, "opts.bucket only"), and
 * the rendered image (background included). */
struct gs_tk_runs {
  struct gs_vk_buf *rgb, *groups, *state, *tile_maxlast, *meta;
  uint32_t max_groups;
};

/* Fills *r from the forward's buffers and returns r, or NULL when the forward has no runs. */
const struct gs_tk_runs *gs_tk_runs_of(const struct gs_fwd_bufs *fb, struct gs_tk_runs *r);

/* The run length (splats) the per-splat backward takes on this device: its subgroup size, when
 * that is fixed (min = default), a power of two up to GS_BUCKET_MAX, and relative shuffles and
 * subgroup arithmetic exist; otherwise 0 and *err says why. */
uint32_t gs_tk_splat_bucket(const gs_vk_t *vk, struct sw_err *err);

/* Smallest storage buffer range `rasterize_bwd: auto` takes the per-splat backward with. */
#define GS_AUTO_SPLAT_MIN_RANGE (1ull << 30)

/* `rasterize_bwd: auto` on this device: the per-splat backward's run length (gs_tk_splat_bucket)
 * where the device has what it needs and a storage buffer of at least GS_AUTO_SPLAT_MIN_RANGE,
 * else 0, with a line "note: rasterize_bwd auto takes pixel on DEVICE: why" to note (not NULL). */
uint32_t gs_tk_auto_bucket(const gs_vk_t *vk, FILE *note);

struct gs_tk {
  gs_vk_t *vk;
  struct gs_tk_opts opts;
  int cas;         /* the compare-and-swap build is in use */
  uint32_t bucket; /* opts.splat_bwd: splats per run (gs_tk_splat_bucket), else 0 */
  gs_vk_kernel_t *loss_l1, *ssim_h, *loss_ssim, *ssim_bwd_h, *ssim_bwd_v;
  gs_vk_kernel_t *raster_bwd, *project_bwd, *adam, *densify;
  gs_vk_kernel_t *project_adam;  /* opts.fuse_adam: project_bwd_adam.comp */
  struct gs_vk_buf *adam_consts; /* opts.fuse_adam: its struct gs_pc_adam, written per step */
  gs_vk_kernel_t *resolve;       /* deterministic mode: fixed-point sums -> grad2d */
  struct gs_vk_buf *grad2d_fx;   /* deterministic mode: the fixed-point sums (grow-only) */
};

int gs_tk_new(gs_vk_t *vk, const struct gs_tk_opts *opts, struct gs_tk **out, struct sw_err *err);
void gs_tk_destroy(struct gs_tk **tk);
/* Sizes tk's own scratch for n splats (deterministic mode: the fixed-point sums; otherwise
 * nothing). Grow-only; call outside recording, with no submitted work using tk pending. */
int gs_tk_reserve(struct gs_tk *tk, uint32_t n, struct sw_err *err);

/* Image-sized scratch of the loss: dL/dimage, SSIM moments and derivatives, per-workgroup loss
 * partial sums (host-visible). Grow-only. */
struct gs_tk_img {
  uint32_t w, h, groups_x, groups_y;
  struct gs_vk_buf *dl, *ssim_h, *ssim_p, *ssim_q, *loss_part;
};
int gs_tk_img_reserve(gs_vk_t *vk, struct gs_tk_img *im, uint32_t w, uint32_t h,
                      struct sw_err *err);
void gs_tk_img_free(struct gs_tk_img *im);

/* Stage "loss": L1 (lambda == 0) or L1 + SSIM forward; fills im->dl when lambda == 0, else the
 * SSIM derivatives that gs_tk_record_ssim_bwd turns into im->dl. img and gt: 3 floats per pixel.
 * With ssim_padding valid the image must be at least 11x11 (gs_tk_ssim_fits says). */
void gs_tk_record_loss(struct gs_tk *tk, VkCommandBuffer cmd, struct gs_tk_img *im,
                       struct gs_vk_buf *img, struct gs_vk_buf *gt, float lambda);
/* Stage "ssim_bwd" (nothing when lambda == 0). */
void gs_tk_record_ssim_bwd(struct gs_tk *tk, VkCommandBuffer cmd, struct gs_tk_img *im,
                           struct gs_vk_buf *img, struct gs_vk_buf *gt, float lambda);
/* The loss value of the last completed loss stage, from the partial sums; *l1 and *ssim (may be
 * NULL) get the means (SSIM over the map's pixels, as tk's padding says), read from the partial
 * buffer, which is host-visible and mapped (GS_VK_BUF_HOST). */
int gs_tk_loss_value(const struct gs_tk *tk, struct gs_tk_img *im, float lambda, double *loss,
                     double *l1, double *ssim, struct sw_err *err);
/* The same from a copy of the partial sums (gs_tk_loss_part_size bytes), which
 * gs_tk_record_loss_readback records into dst at offset after the loss stage and a barrier: an
 * iteration in flight behind this one overwrites the partial buffer itself. */
int gs_tk_loss_value_of(const struct gs_tk *tk, const struct gs_tk_img *im, float lambda,
                        const float *part, double *loss, double *l1, double *ssim,
                        struct sw_err *err);
VkDeviceSize gs_tk_loss_part_size(const struct gs_tk_img *im);
void gs_tk_record_loss_readback(VkCommandBuffer cmd, const struct gs_tk_img *im,
                                struct gs_vk_buf *dst, VkDeviceSize offset);
/* Pixels of tk's SSIM map for a w x h image: w h (same), (w - 10)(h - 10) (valid), 0 when the
 * image is too small for a valid map. */
uint64_t gs_tk_ssim_pixels(const struct gs_tk *tk, uint32_t w, uint32_t h);

/* Stage "rasterize_bwd": zeroes grad2d (GS_G2D floats per splat, n splats) and accumulates the
 * per-splat gradients from dl. Buffers: the forward's tile ranges, sorted values, splats2d,
 * final_t, last; runs: the forward's runs (opts.splat_bwd, else NULL; final_t is then unused).
 * pc->fx_scale is ignored (set here in deterministic mode, where the stage is zero / accumulate
 * in fixed point / resolve into grad2d; gs_tk_reserve(tk, n) must precede). */
void gs_tk_record_raster_bwd(struct gs_tk *tk, VkCommandBuffer cmd, const struct gs_pc_raster *pc,
                             struct gs_vk_buf *ranges, struct gs_vk_buf *values,
                             struct gs_vk_buf *splats, struct gs_vk_buf *final_t,
                             struct gs_vk_buf *last, struct gs_vk_buf *dl, struct gs_vk_buf *grad2d,
                             uint32_t n, const struct gs_tk_runs *runs);
/* Stage "project_bwd": parameter gradients (grads, model layout) from grad2d; adds densification
 * statistics to dens when pc->accumulate. counters: the forward's (does nothing on overflow). */
void gs_tk_record_project_bwd(struct gs_tk *tk, VkCommandBuffer cmd,
                              const struct gs_pc_project_bwd *pc,
                              struct gs_vk_buf *const params[GS_P_COUNT], struct gs_vk_buf *splats,
                              struct gs_vk_buf *grad2d, struct gs_vk_buf *const grads[GS_P_COUNT],
                              struct gs_vk_buf *dens, struct gs_vk_buf *counters);
/* Stage "adam": one step over every parameter float. moments: one buffer laid out as
 * gs_tk_moment_offsets says for `capacity` splats. tiles_touched is read only by the
 * visible-only variant (any buffer of n words); counters as above. */
void gs_tk_record_adam(struct gs_tk *tk, VkCommandBuffer cmd, const struct gs_pc_adam *pc,
                       struct gs_vk_buf *const params[GS_P_COUNT],
                       struct gs_vk_buf *const grads[GS_P_COUNT], struct gs_vk_buf *moments,
                       struct gs_vk_buf *tiles_touched, struct gs_vk_buf *counters);

/* The projection backward's shared memory fused with Adam (project_bwd_adam.comp: 59 floats per
 * splat of a GS_PB_WG workgroup); gs_tk_new refuses opts.fuse_adam on a device with less. */
#define GS_PROJECT_ADAM_SHARED (59u * 4u * GS_PB_WG)

/* Stage "project_adam" (opts.fuse_adam): project_bwd and adam in one kernel, with the same
 * parameters, moments and densification statistics to the bit as gs_tk_record_project_bwd
 * followed by gs_tk_record_adam, and no gradient buffers: each workgroup keeps its splats'
 * gradients in shared memory and applies the step to them. Records an update of tk's Adam
 * constants buffer (from *pa) and a barrier before the dispatch, so it may be recorded in any
 * command buffer that is ordered behind the ones still using them (gs_vk_barrier). */
void gs_tk_record_project_adam(struct gs_tk *tk, VkCommandBuffer cmd,
                               const struct gs_pc_project_bwd *pc, const struct gs_pc_adam *pa,
                               struct gs_vk_buf *const params[GS_P_COUNT], struct gs_vk_buf *splats,
                               struct gs_vk_buf *grad2d, struct gs_vk_buf *moments,
                               struct gs_vk_buf *tiles_touched, struct gs_vk_buf *dens,
                               struct gs_vk_buf *counters);

/* Densification on the GPU: applies a plan (gs_train_densify.h; src: uint per new splat, off: 3
 * floats per new splat) from the old parameter/moment buffers into new ones (distinct buffers). */
void gs_tk_record_densify(struct gs_tk *tk, VkCommandBuffer cmd, const struct gs_pc_densify *pc,
                          struct gs_vk_buf *const old_params[GS_P_COUNT],
                          struct gs_vk_buf *const new_params[GS_P_COUNT],
                          struct gs_vk_buf *old_moments, struct gs_vk_buf *new_moments,
                          struct gs_vk_buf *src, struct gs_vk_buf *off);

/* Float offsets of each group's moments in the shared moments buffer for `capacity` splats;
 * returns the total floats (2 * 59 * capacity). */
uint64_t gs_tk_moment_offsets(uint32_t capacity, uint32_t off[GS_P_COUNT]);

/* Fills an Adam push-constant block for step t (from 1) as gs_ref_adam_step computes it (float),
 * with the moments laid out for `capacity` splats. */
void gs_tk_adam_pc(struct gs_pc_adam *pc, uint32_t n, uint32_t capacity, uint32_t step,
                   const float lr[6], float beta1, float beta2, float eps);

#endif
