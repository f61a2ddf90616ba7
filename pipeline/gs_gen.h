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

/* Layouts (docs/scenes.md): the NeRF-synthetic one above, or the same views as a real capture
 * would give them, all in images/ named GS_GEN_IMAGE_NAME (so that name order is view order and
 * the loader's every-8th held-out split picks the same views as in the NeRF layout with no test
 * split): COLMAP sparse/0/ in binary or text (cameras, images, and a points3D cloud of surface
 * points with their colours), or an instant-ngp / nerfstudio transforms.json. These layouts
 * take test_views 0. */
enum gs_gen_layout {
  GS_GEN_LAYOUT_NERF = 0,
  GS_GEN_LAYOUT_COLMAP_BIN = 1,
  GS_GEN_LAYOUT_COLMAP_TXT = 2,
  GS_GEN_LAYOUT_TRANSFORMS = 3
};
#define GS_GEN_IMAGE_NAME "img_%05u.png"

/* Lenses: pinhole with the principal point at the centre, or a known off-centre principal point
 * (cx = (0.5 + GS_GEN_CX_SHIFT) R, cy = (0.5 + GS_GEN_CY_SHIFT) R) and radial distortion
 * (COLMAP RADIAL: k1 = GS_GEN_K1, k2 = GS_GEN_K2; a barrel lens), focal length as the pinhole. */
enum gs_gen_lens_kind { GS_GEN_LENS_PINHOLE = 0, GS_GEN_LENS_DISTORTED = 1 };
#define GS_GEN_CX_SHIFT 0.06f
#define GS_GEN_CY_SHIFT (-0.04f)
#define GS_GEN_K1 (-0.05f)
#define GS_GEN_K2 0.01f

struct gs_gen_lens {
  float f, cx, cy, k1, k2;
};

struct gs_gen_opts {
  enum gs_gen_kind kind;
  uint32_t train_views; /* >= 1 */
  uint32_t test_views;  /* >= 0 (0: no transforms_test.json, the loader holds out views) */
  uint32_t resolution;  /* square images, 8 .. 4096 */
  uint64_t seed;        /* object layout, colours and camera positions */
  int threads;          /* rendering threads; 0 = number of online CPUs */
  enum gs_gen_layout layout;
  enum gs_gen_lens_kind lens; /* the NeRF layout takes the pinhole lens only */
  float k1, k2;               /* the distorted lens's radial terms; both 0 = GS_GEN_K1, K2 */
};

/* Parses "nerf" / "colmap-bin" / "colmap-txt" / "transforms", and "pinhole" / "distorted". */
int gs_gen_layout_parse(const char *name, enum gs_gen_layout *layout, struct sw_err *err);
int gs_gen_lens_parse(const char *name, enum gs_gen_lens_kind *lens, struct sw_err *err);
/* The lens of a scene with these options, and the ray through continuous pixel (u, v). */
void gs_gen_lens_of(const struct gs_gen_opts *opts, struct gs_gen_lens *lens);
void gs_gen_lens_ray(const float c2w[16], const struct gs_gen_lens *lens, float u, float v,
                     float origin[3], float dir[3]);

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
