/* gs_model.h: the Gaussian model's memory (allocate, grow, free a struct gs_model from
 * gs_types.h), its random initialisation, the deterministic seeded random number generator the
 * pipeline uses everywhere a seed must reproduce a run, and the scene extent used to scale the
 * position learning rate.
 *
 * Ownership: a model from gs_model_new() owns its arrays; gs_model_destroy() frees them. All arrays
 * always have room for `capacity` splats; `count` <= capacity are live. Growing keeps the live
 * contents; the arrays may move. */
#ifndef GS_MODEL_H
#define GS_MODEL_H

#include <stdint.h>

#include "gs_types.h"
#include "sw_err.h"

/* Floats per splat in each array (see struct gs_model). */
#define GS_MODEL_MEANS_PER 3
#define GS_MODEL_SCALES_PER 3
#define GS_MODEL_QUATS_PER 4
#define GS_MODEL_SH_PER (GS_SH_COEFFS * 3)
/* SH degree-0 basis constant of the 3DGS reference: colour = GS_SH_C0 * dc + 0.5. */
#define GS_SH_C0 0.28209479177387814f

/* ---- random numbers ----
 * xoshiro256** seeded through splitmix64 (Blackman and Vigna): small, fast, statistically good and
 * the same sequence on every platform, so a seed reproduces a run bit for bit on every machine. */
struct gs_rng {
  uint64_t s[4];
};
void gs_rng_seed(struct gs_rng *rng, uint64_t seed);
uint64_t gs_rng_next(struct gs_rng *rng);
/* Uniform in [0, 1) with 24 random bits (exactly representable as float). */
float gs_rng_uniform(struct gs_rng *rng);
/* Uniform double in [0, 1) with 53 random bits. */
double gs_rng_uniform_d(struct gs_rng *rng);
/* Standard normal (Box-Muller, double precision inside). */
float gs_rng_normal(struct gs_rng *rng);
/* Uniform integer in [0, n); n > 0 (rejection sampling, no modulo bias). */
uint32_t gs_rng_below(struct gs_rng *rng, uint32_t n);

/* ---- memory ---- */
/* A model with room for `capacity` splats (at least 1) and count 0; arrays zeroed. *out owned by
 * the caller (gs_model_destroy). Returns 0 or SW_ENOMEM / SW_EINVAL. */
int gs_model_new(uint32_t capacity, struct gs_model **out, struct sw_err *err);
/* Frees the model and its arrays and sets *model to NULL; accepts NULL and *model == NULL. */
void gs_model_destroy(struct gs_model **model);
/* Grows capacity to at least `capacity` (never shrinks), keeping the live splats; the new tail is
 * zeroed. Grows geometrically (x1.5) so repeated densification does not reallocate every step.
 * On failure the model is unchanged. Returns 0 or SW_ENOMEM. */
int gs_model_reserve(struct gs_model *model, uint32_t capacity, struct sw_err *err);
/* Deep copy into a new model with the same count (capacity = max(count, 1)). */
int gs_model_clone(const struct gs_model *src, struct gs_model **out, struct sw_err *err);
/* Copies splat `from` of src to slot `to` of dst (all parameter groups); dst must have capacity. */
void gs_model_copy_splat(struct gs_model *dst, uint32_t to, const struct gs_model *src,
                         uint32_t from);

/* ---- initialisation ---- */
struct gs_init_opts {
  uint32_t count;   /* number of splats (the 3DGS synthetic recipe uses 100000) */
  float box_min[3]; /* means uniform in this box */
  float box_max[3];
  float rgb[3];     /* base colour; SH dc = (rgb - 0.5) / GS_SH_C0 */
  float rgb_jitter; /* each splat's colour uniform in rgb +- jitter (0: all equal) */
  float opacity;    /* initial opacity (0 means the default 0.1); stored as logit */
  uint64_t seed;
};
/* Fills opts with the defaults: 100000 splats, the NeRF-synthetic box [-1.3, 1.3]^3 used by the
 * 3DGS reference for random init, grey 0.5 colour with 0.5 jitter (random colours as the 3DGS
 * synthetic init), opacity 0.1, seed 42. */
void gs_init_opts_default(struct gs_init_opts *opts);
/* Replaces the model's splats by opts->count random ones (growing capacity as needed): means
 * uniform in the box; SH dc from the colour, SH rest 0; identity quaternions; opacity
 * logit(opts->opacity); log-scales = log(sqrt(mean squared distance to the 3 nearest neighbours)),
 * as in the 3DGS reference (isotropic; found with a uniform grid, so 100k points take well under a
 * second), clamped below at 1e-7 squared distance. Deterministic for a given seed. */
int gs_model_init_random(struct gs_model *model, const struct gs_init_opts *opts,
                         struct sw_err *err);
/* Replaces the model's splats by one per point of a point cloud (COLMAP points3D): means at the
 * points, SH dc from the 8-bit colours ((c / 255 - 0.5) / GS_SH_C0), SH rest 0, identity
 * quaternions, opacity logit(opacity) (0 = 0.1), log-scales by the 3-nearest-neighbour rule below,
 * as the 3DGS reference and gsplat initialise real scenes. SW_EINVAL when n == 0. */
int gs_model_init_points(struct gs_model *model, const float *points, const uint8_t *colors,
                         uint32_t n, float opacity, struct sw_err *err);
/* The log-scale rule above on its own, for models whose means were set by the caller (e.g. a point
 * cloud): writes isotropic log-scales for splats [0, count). */
int gs_model_init_scales_knn(struct gs_model *model, struct sw_err *err);

/* ---- scene extent ----
 * The 3DGS "cameras extent": 1.1 x the largest distance from the centroid of the camera centres to
 * any camera centre. Multiplies the position learning rate and scales densification thresholds.
 * center_out (may be NULL) gets the centroid. Returns 0 for n == 0. */
float gs_cameras_extent(const struct gs_camera *cams, uint32_t n, float center_out[3]);

/* Logit and sigmoid used for opacities (logit of p clamped to [1e-6, 1 - 1e-6]). */
float gs_logit(float p);
float gs_sigmoid(float x);

#endif
