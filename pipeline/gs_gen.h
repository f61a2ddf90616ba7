/* gs_gen.h: the scene generator. Ray-traces an analytic scene into the NeRF-synthetic layout
 * (transforms_train.json, transforms_test.json, train/r_*.png, test/r_*.png: RGBA, 8-bit, alpha 0
 * on the background), so every machine has a realistic scene without a download.
 *
 * Kinds:
 *   bricks  Lego-like studded bricks in several colours, stacked on a base plate; studs are
 *           cylinders; surfaces carry a subtle texture; diffuse + ambient shading with a shadow.
 *   shapes  spheres, boxes, a torus and cylinders with checker and stripe textures.
 * Content fits the box [-1.2, 1.2]^3 (written as "aabb"); z is up. Cameras sit on a sphere of
 * radius 4.5 around the origin (upper hemisphere and a little below, like the Lego views) looking
 * at the centre, camera_angle_x 0.6911 rad (the Lego value). Pixels on an object boundary average
 * a 2x2 grid of rays (anti-aliased edges and alpha), others take their centre ray.
 * Deterministic: the same options give the same bytes, whatever the thread count. */
#ifndef GS_GEN_H
#define GS_GEN_H

#include <stdint.h>

#include "sw_err.h"

enum gs_gen_kind { GS_GEN_BRICKS = 0, GS_GEN_SHAPES = 1 };

struct gs_gen_opts {
  enum gs_gen_kind kind;
  uint32_t train_views; /* >= 1 */
  uint32_t test_views;  /* >= 0 (0: no transforms_test.json, the loader holds out views) */
  uint32_t resolution;  /* square images, 8 .. 4096 */
  uint64_t seed;        /* object layout, colours and camera positions */
  int threads;          /* rendering threads; 0 = number of online CPUs */
};

/* Parses "bricks" / "shapes"; SW_EINVAL naming the accepted kinds otherwise. */
int gs_gen_kind_parse(const char *name, enum gs_gen_kind *kind, struct sw_err *err);
const char *gs_gen_kind_name(enum gs_gen_kind kind);

/* Writes the scene into out_dir (created; existing files of the same names replaced). */
int gs_gen_scene(const char *out_dir, const struct gs_gen_opts *opts, struct sw_err *err);

/* The camera-to-world matrix (row-major 4x4, OpenGL axes, as written to the json) of view `index`
 * of a split (test = 0 for train, 1 for test), and the ray the generator traces through the
 * continuous pixel position (u, v) of that view: origin and unit direction in world space. Exposed
 * so that tests can check that the loader's camera projects generator rays back to their pixels. */
void gs_gen_view_c2w(const struct gs_gen_opts *opts, int test, uint32_t index, float c2w[16]);
void gs_gen_pixel_ray(const float c2w[16], uint32_t resolution, float u, float v, float origin[3],
                      float dir[3]);
/* camera_angle_x written for every generated scene. */
#define GS_GEN_FOV_X 0.6911112070083618f

#endif
