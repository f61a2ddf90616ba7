/* gs_train_shared.h: push-constant layouts and buffer conventions of the training kernels (loss,
 * SSIM, rasterize backward, projection backward, Adam), shared by the host (pipeline/gs_train*.c)
 * and GLSL like gs_shared.h: only 32-bit scalars, so std430 and C agree. The forward buffers and
 * struct gs_pc_project / gs_pc_raster come from gs_shared.h.
 *
 * Buffers of the backward pass:
 *   dl_drgb: float[3 * w * h]            dL/d(rendered RGB), written by the loss kernels
 *   ssim_h:  float[15 * w * h]           per pixel, per channel c: 5 horizontally blurred moments
 *                                        (x, y, x^2, y^2, x y) at [15 p + 5 c + q]
 *   ssim_p:  float[9 * w * h]            per pixel, per channel: dL/d(mu_x, E[x^2], E[xy]) at
 *                                        [9 p + 3 c + q]; ssim_q the same after the horizontal blur
 *   loss_part: float[2 * groups]         per workgroup: sum |x - y| and sum of the SSIM map (over
 *                                        the map's pixels: all, or the interior with padding valid)
 *   grad2d:  float[GS_G2D * n]           per splat, summed over pixels: dL/d(mean2d.xy, conic.abc,
 *                                        rgb, opacity) at the GS_G2D_* offsets
 *   grad2d_fx: uint[2 * GS_G2D * n]      deterministic mode: the same sums in 64-bit fixed point
 *                                        (lo, hi words), resolved into grad2d by grad2d_resolve
 *   grads:   the model layout (means 3n, log_scales 3n, quats 4n, opacity n, sh 48n)
 *   moments: one buffer, Adam (m, v) interleaved per parameter float, group g from mom_off[g]
 *   counters: the forward's (gs_shared.h): a frame whose pairs overflowed the arena is recorded
 *            again, so project_bwd and adam do nothing when counters[PAIRS] > counters[CAPACITY]
 *   plan:    uint[new n] (old index | GS_PLAN_OPACITY | kind << 30) and float[3 * new n]
 *            offsets (children) or the new opacity logit at [3 k] (GS_PLAN_OPACITY): densify_gather
 *   dens:    float[3 * n]                 densification statistics per splat: sum of the 2D
 *                                        gradient norm, visible count, max screen radius */
#ifndef GS_TRAIN_SHARED_H
#define GS_TRAIN_SHARED_H

#include "gs_shared.h"

#define GS_G2D 9

/* A densification plan entry (pipeline/gs_train_densify.h): the old index in the low 29 bits,
 * GS_PLAN_OPACITY when the new splat's opacity logit is the plan's off[3 k] (a clone and the
 * parent it shares its opacity with, clone_opacity = share), the kind in the top two bits. */
#define GS_PLAN_INDEX_MASK 0x1fffffffu
#define GS_PLAN_OPACITY 0x20000000u
#define GS_PLAN_KIND_SHIFT 30
#define GS_G2D_MEAN 0
#define GS_G2D_CONIC 2
#define GS_G2D_RGB 5
#define GS_G2D_OPACITY 8

#ifdef GS_GLSL
/* The alpha bounds of gs_types.h (GS_ALPHA_MIN, GS_ALPHA_MAX) as GLSL constants; the clamp is
 * the default of the rasterize backward's GS_SPEC_BWD_ALPHA_MAX. */
#define GS_ALPHA_MIN_F (1.0 / 255.0)
#define GS_ALPHA_MAX_F 0.99
#define GS_NEAR_Z_F 0.01 /* GS_NEAR_Z */
#endif

/* Workgroup of the image kernels: 16 x 16 pixels. */
#define GS_IMG_WG 16
/* Workgroup of project_bwd (its SH staging in shared memory is 128 x 49 floats). */
#define GS_PB_WG 128

/* Specialization constants of the training kernels (constant_id). */
#define GS_SPEC_SSIM_WALK 0 /* ssim/loss kernels: 0 scalar, 1 float4, 2 float4 + shared recip */
#define GS_SPEC_SSIM_VALID                                                                         \
  1 /* loss_ssim: 1 = the SSIM map only where the window is inside the                             \
       image (padding valid), 0 = every pixel (zero padding) */
#define GS_SPEC_SSIM_PLANAR                                                                        \
  2 /* ssim/loss kernels: 1 = the moment and derivative maps one plane per                         \
       quantity (coalesced), 0 = interleaved per pixel */
#define GS_SPEC_BWD_SIGMA_SKIP 0 /* rasterize_bwd */
#define GS_SPEC_BWD_WARP_SKIP 1  /* rasterize_bwd: skip a subgroup when no lane contributes */
#define GS_SPEC_BWD_SPREAD 2     /* rasterize_bwd: atomics from several lanes */
#define GS_SPEC_BWD_SHARED_ACC 3 /* rasterize_bwd: per-batch sums in shared memory */
#define GS_SPEC_BWD_ALPHA_MAX 4  /* rasterize_bwd: the alpha clamp (float), as the forward's */
#define GS_SPEC_BWD_BUCKET 5     /* rasterize_bwd_splat: splats per run (the subgroup size) */
#define GS_SPEC_BWD_SPLAT_WG 6   /* rasterize_bwd_splat: workgroup size, GS_BUCKET_GROUP runs */
/* rasterize_bwd_splat: 1 = a run walks only the pixels still compositing at its first splat
 * inside its splats' union box (`bwd_run_pixels: active`), else every pixel of its rows */
#define GS_SPEC_BWD_COMPACT 7
/* rasterize_bwd_splat: 1 = a lane computes every step of the walk with a skipped pixel's alpha
 * masked to zero (`bwd_step: select`), 0 = it branches past it, 2 = select's step with fewer
 * instructions, the same sums up to rounding (`lean`) */
#define GS_SPEC_BWD_STEP 8
/* rasterize_bwd_splat: 1 = a run's walk ends once every lane is past the last pixel of its box
 * (`bwd_drain: trim`), 0 = after every lane has seen every pixel */
#define GS_SPEC_BWD_DRAIN 9
/* rasterize_bwd_splat: 1 = lane 0 takes the runs' stored states from bucket_state, loaded a
 * block ahead and shuffled (`bwd_state: global`), 0 = from a copy in shared memory */
#define GS_SPEC_BWD_STATE 10
/* rasterize_bwd_splat: runs a subgroup walks back to back (`bwd_chain`: 1, 2 or 4; the workgroup
 * is GS_BUCKET_GROUP / CHAIN subgroups) */
#define GS_SPEC_BWD_CHAIN 11
#define GS_SPEC_ADAM_VISIBLE 0 /* adam: only splats with tiles_touched > 0 */

/* rasterize_bwd_splat: gs_pc_raster's fields, then the group list's length. */
struct gs_pc_raster_splat {
  GS_U32 width, height, tiles_x, tiles_y;
  float background[3];
  float fx_scale; /* deterministic build: as gs_pc_raster's */
  GS_U32 max_groups;
  GS_U32 pad[3];
};

/* loss_l1, ssim_h, loss_ssim, ssim_bwd_h, ssim_bwd_v */
struct gs_pc_loss {
  GS_U32 width, height;
  float lambda;         /* weight of D-SSIM */
  float inv_count;      /* 1 / (3 w h): the L1 mean */
  float ssim_inv_count; /* 1 / (3 x pixels of the SSIM map): w h, or (w - 10)(h - 10) (valid) */
  GS_U32 pad[3];
};

/* adam: one thread per parameter float over the concatenation of the groups. The moments of
 * all groups share one buffer: group g's (m, v) pairs start at float mom_off[g]. */
struct gs_pc_adam {
  GS_U32 n; /* splats */
  GS_U32 mom_off[5];
  GS_U32 pad[2];
  float step_size[6]; /* lr / (1 - beta1^t) per group: means, scales, quats, opacity, dc, rest */
  float beta1, beta2, eps;
  float sqrt_bc2; /* sqrt(1 - beta2^t) */
};

/* project_bwd: the forward's projection constants (as struct gs_pc_project) plus densification
 * bookkeeping. */
struct gs_pc_project_bwd {
  float viewmat[12]; /* rows 0..2 of the world-to-camera matrix */
  float fx, fy, cx, cy;
  float campos[3];
  GS_U32 n;
  GS_U32 width, height, tiles_x, tiles_y;
  GS_U32 sh_degree;
  GS_U32 accumulate;  /* 1: add the 2D gradient norm / visibility / radius to dens */
  GS_U32 count_radii; /* 1: count a view only where gsplat's radii > 0 (see project_bwd.comp) */
  GS_U32 pad;
};

/* grad2d_resolve: the deterministic rasterize backward's fixed-point sums of n splats back to
 * float grad2d (see grad2d_resolve.comp). */
struct gs_pc_resolve {
  GS_U32 n;
  float fx_scale; /* as the rasterize backward's gs_pc_raster.fx_scale */
  GS_U32 pad[2];
};

/* densify_gather: new splats from a plan (see densify_gather.comp). */
struct gs_pc_densify {
  GS_U32 n_new;
  GS_U32 old_off[5]; /* moment offsets (floats) of each group in the old moments buffer */
  GS_U32 new_off[5];
  GS_U32 reset;      /* 1: cap opacities at opacity_cap and zero their moments */
  float opacity_cap; /* logit(0.01) */
  float ln16;        /* log(1.6): split children's scales are divided by 1.6 */
};

#endif
