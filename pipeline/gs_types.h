/* gs_types.h: host-side data types shared by every part of the training pipeline (scene loading,
 * the C reference, the Vulkan path, the trainer), and the forward-pass contract that the C
 * reference (gs_ref) and the GPU kernels (shaders/) both implement, so that tests can compare
 * them number for number.
 *
 * Conventions (the forward contract):
 *  - Camera: world-to-camera `viewmat` (row-major 4x4) in OpenCV axes: x right, y down, z forward.
 *    NeRF-synthetic camera-to-world matrices (OpenGL axes) are converted on load: flip the y and z
 *    camera axes, then invert.
 *  - Pixel (px, py) has its centre at (px + 0.5, py + 0.5); a camera point (x, y, z) projects to
 *    (fx * x / z + cx, fy * y / z + cy). Gaussians with z <= GS_NEAR_Z are culled.
 *  - Projection: EWA, cov2d = J W Sigma W^T J^T + 0.3 I (the dilation; opacity not compensated),
 *    with J taken at x/z, y/z clamped to the field of view widened by 30% of its half-width per
 *    side; conic = inverse(cov2d). Box: with o the opacity and e = min(3.33, sqrt(2 ln(255 o))),
 *    half-sizes ceil(e sqrt(cov_xx)) and ceil(e sqrt(cov_yy)) (exactly where alpha can reach
 *    1/255); culled when o < 1/255, det <= 0 or the box touches no tile; radius = the larger
 *    half-size. Colour = SH (to the active degree) evaluated in the direction (mean - campos),
 *    + 0.5, clamped at 0 from below.
 *  - Tiles are GS_TILE x GS_TILE pixels, row-major tile ids. Sort key: (tile_id << 32) | depth bits
 *    (IEEE bits of the positive view-space z), stable.
 *  - Rasterize per pixel, front to back: d = mean2d - pixel_centre;
 *    sigma = 0.5 (conic.a d.x^2 + conic.c d.y^2) + conic.b d.x d.y; skip sigma < 0;
 *    alpha = min(alpha_max, opacity * exp(-sigma)) with alpha_max 0.99 by default (the
 *    `alpha_max` key; gsplat uses 0.999); skip alpha < 1/255; if T * (1 - alpha) < 1e-4 stop
 *    before this splat; else C += colour * alpha * T, T *= 1 - alpha, last = index within the tile
 *    range + 1. Output colour = C + T * background; final_T = T; last_contributor = last
 *    (0 = none).
 *  - Opacity is stored as a logit (sigmoid applied when projecting), scales as logs, rotations as
 *    unit-normalised quaternions (w, x, y, z), SH as [splat][coefficient 0..15][rgb] with the
 *    standard real SH basis constants of the 3DGS reference. */
#ifndef GS_TYPES_H
#define GS_TYPES_H

#include <stdint.h>

#define GS_TILE 16
#define GS_SH_COEFFS 16 /* degree 3 */
#define GS_NEAR_Z 0.01f
#define GS_ALPHA_MIN (1.0f / 255.0f)
#define GS_ALPHA_MAX 0.99f /* default alpha clamp */
/* The range an alpha clamp may be set to. Below 1, so that 1 - alpha stays a usable divisor
 * of the backward's T / (1 - alpha); the sigma skip (gs_shared.h) holds for any clamp because
 * alpha <= opacity exp(-sigma) <= exp(-sigma) whatever the clamp. */
#define GS_ALPHA_MAX_LO 0.9f
#define GS_ALPHA_MAX_HI 0.9999f
#define GS_T_MIN 1e-4f
#define GS_DILATION 0.3f

/* The Gaussian model, structure of arrays, host memory. `count` live splats of `capacity`. */
struct gs_model {
  uint32_t count;
  uint32_t capacity;
  float *means;      /* 3 per splat */
  float *log_scales; /* 3 per splat */
  float *quats;      /* 4 per splat, w x y z */
  float *opacity;    /* 1 per splat, logit */
  float *sh;         /* 48 per splat: [coef 0..15][r g b] */
};

/* A pinhole camera (see conventions above). */
struct gs_camera {
  uint32_t width, height;
  float fx, fy, cx, cy;
  float viewmat[16]; /* world -> camera, row-major */
  float campos[3];   /* camera centre in world coordinates */
};

/* One view of a scene: camera plus ground-truth image (RGB float in [0,1], background composited
 * as the scene's loader decided), row-major, 3 floats per pixel. */
struct gs_view {
  struct gs_camera cam;
  float *rgb;
  char name[128];
};

/* Which pixels the SSIM map of the loss averages over (the trainer's `ssim_padding`): SAME, every
 * pixel of the zero-padded map (the 3DGS reference's conv2d with padding 5); VALID, only pixels
 * whose 11x11 window lies inside the image, the (w - 10) x (h - 10) interior (gsplat's fused-ssim
 * padding="valid"), the other pixels contributing neither to the mean nor to the gradient. */
enum gs_ssim_padding { GS_SSIM_SAME = 0, GS_SSIM_VALID = 1 };
#define GS_SSIM_HALF 5 /* half width of the SSIM window: the border VALID leaves out */

/* The alpha clamp an options struct asks for: 0 (a zeroed struct) selects GS_ALPHA_MAX. Returns
 * the clamp to use, or 0 when a non-zero request lies outside [GS_ALPHA_MAX_LO, GS_ALPHA_MAX_HI]
 * (or is not a number). */
static inline float gs_alpha_max_resolve(float requested) {
  if (requested == 0.0f) return GS_ALPHA_MAX;
  return requested >= GS_ALPHA_MAX_LO && requested <= GS_ALPHA_MAX_HI ? requested : 0.0f;
}

#endif
