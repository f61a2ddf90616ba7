/* test_ref_scene.h: tiny deterministic scenes and cameras shared by the gs_ref test suites
 * (test_ref.c, test_ref_grad.c, test_gpu_fwd.c, test_gpu_bwd.c); implemented in test_ref_scene.c.
 */
#ifndef TEST_REF_SCENE_H
#define TEST_REF_SCENE_H

#include <stdint.h>

#include "gs_types.h"

/* splitmix64: a small seeded generator, so every test scene is the same on every machine. */
struct tr_rng {
  uint64_t s;
};
double tr_uniform(struct tr_rng *r);                     /* [0, 1) */
double tr_range(struct tr_rng *r, double lo, double hi); /* [lo, hi) */
double tr_normal(struct tr_rng *r);                      /* standard normal (Box-Muller) */

/* A w x h pinhole camera with focal f at `eye`, looking at the origin with world z up (OpenCV
 * axes, as gs_types.h defines). */
void tr_camera(struct gs_camera *cam, uint32_t w, uint32_t h, float f, const float eye[3]);
/* A camera at distance `dist` from the origin at azimuth / elevation (radians). */
void tr_orbit_camera(struct gs_camera *cam, uint32_t w, uint32_t h, float f, float dist, float azim,
                     float elev);

/* Fills an allocated model (m->count splats) with a random scene: means in [-spread, spread]^3,
 * anisotropic scales exp(U(ln smin, ln smax)), random unit-ish (not normalised) quaternions,
 * opacity logits in [olo, ohi], SH dc ~ 0.5 N(0,1), SH rest ~ 0.2 N(0,1). */
void tr_fill_scene(struct gs_model *m, uint64_t seed, float spread, float smin, float smax,
                   float olo, float ohi);

/* Moves splats first .. first + count - 1 to just in front of `cam` (depth 0.6 and up), off to
 * the sides beyond the EWA Jacobian's field-of-view clamp (x/z or y/z at 1.6 x the half field of
 * view, the limit being 1.3 x), sized so that their footprint still reaches into the image: they
 * exercise the clamped projection and its backward. */
void tr_place_beyond_clamp(struct gs_model *m, const struct gs_camera *cam, uint32_t first,
                           uint32_t count);

#endif
