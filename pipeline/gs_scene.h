/* gs_scene.h: scenes in the NeRF-synthetic layout: the loader (transforms_{train,test}.json read
 * with jansson, RGBA PNG images through gs_png, composited onto a white or black background,
 * optional integer downscale), the held-out test split for scenes without transforms_test.json,
 * the scene's sha256, and archives (.zip, .tar.gz, .tgz, .tar) unpacked through libarchive.
 *
 * The layout (as in Mildenhall et al.'s NeRF synthetic data):
 *   DIR/transforms_train.json  {"camera_angle_x": fovx_radians, ["camera_angle_y": ...,]
 *                               ["w": W, "h": H,]
 *                               "frames": [{"file_path": "./train/r_0", "transform_matrix":
 *                                           [[4 floats] x 4] (camera-to-world, OpenGL axes)}, ...]}
 *   DIR/transforms_test.json   same (optional)
 *   DIR/train/r_0.png ...      RGBA (8- or 16-bit); ".png" is appended when file_path has no
 *                              extension.
 * Optional key written by our generator and read when present: "aabb": [[xmin,ymin,zmin],
 * [xmax,ymax,zmax]], the scene's content bounds (used for random initialisation).
 *
 * Cameras follow gs_types.h: fx = 0.5 W / tan(0.5 camera_angle_x), fy from camera_angle_y when
 * given else fx, principal point at the image centre; viewmat = inverse(c2w with its y and z axes
 * negated). Downscale by an integer factor s: W' = W / s, H' = H / s (floor), pixels box-averaged
 * after compositing, focal lengths divided by s. */
#ifndef GS_SCENE_H
#define GS_SCENE_H

#include <stdint.h>

#include "gs_types.h"
#include "sw_err.h"
#include "sw_sha256.h"

enum gs_background { GS_BG_WHITE = 0, GS_BG_BLACK = 1 };

/* Which images to decode; cameras are always loaded. Skipping saves memory and time when only
 * one split is needed (rendering needs the test split only). */
enum gs_scene_skip { GS_SCENE_SKIP_NONE = 0, GS_SCENE_SKIP_TRAIN_IMAGES = 1,
                     GS_SCENE_SKIP_TEST_IMAGES = 2 };

/* Zero-initialised options are the defaults: white background, full resolution, all images,
 * archives unpacked under $TMPDIR (or /tmp). */
struct gs_scene_opts {
  enum gs_background background;
  uint32_t resolution_scale; /* integer downscale factor; 0 or 1 = full resolution */
  unsigned skip;             /* enum gs_scene_skip flags */
  const char *unpack_dir;    /* where an archive path is unpacked; NULL = $TMPDIR/gs-scene-<sha> */
  uint32_t holdout_every;    /* held-out split: every Nth training view is a test view; 0 = 8 */
};

struct gs_scene {
  char path[4096];                  /* the directory the scene was read from */
  char sha256[SW_SHA256_HEX_LEN];   /* over the json files and every image, see gs_scene_hash */
  uint32_t width, height;           /* of every view after downscale (all views share them) */
  uint32_t n_train, n_test;
  struct gs_view *train;            /* n_train views; rgb NULL when skipped */
  struct gs_view *test;             /* n_test views; rgb NULL when skipped */
  int held_out;                     /* 1 when the test split was held out of transforms_train */
  enum gs_background background;
  float extent;                     /* gs_cameras_extent of the training cameras */
  float center[3];                  /* centroid of the training camera centres */
  float aabb_min[3], aabb_max[3];   /* content bounds: "aabb" when given, else [-1.3, 1.3]^3 */
  int has_aabb;                     /* 1 when the bounds came from the scene's "aabb" key */
};

/* Loads a scene from a directory or an archive file (.zip, .tar.gz, .tgz, .tar: unpacked first,
 * see gs_scene_unpack; the scene may sit in the archive's root or in its single top folder).
 * opts may be NULL (defaults). *out owned by the caller. Errors name the file and what is wrong:
 * SW_ENOTFOUND (missing directory, json or image), SW_EINVAL (bad JSON, missing keys, wrong
 * shapes, corrupt or truncated PNG, images of different sizes), SW_EIO, SW_ENOMEM. */
int gs_scene_load(const char *path, const struct gs_scene_opts *opts, struct gs_scene **out,
                  struct sw_err *err);
/* Frees the scene and its images and sets *scene to NULL; accepts NULL. */
void gs_scene_destroy(struct gs_scene **scene);

/* Converts a NeRF-synthetic camera-to-world matrix (row-major 4x4, OpenGL axes) into the viewmat
 * and campos of gs_types.h. Returns SW_EINVAL when the rotation part is singular. */
int gs_camera_from_c2w_gl(const float c2w[16], struct gs_camera *cam, struct sw_err *err);
/* Projects a world point with the conventions of gs_types.h: returns 0 and pixel coordinates
 * (continuous; pixel (i, j) spans [i, i+1) x [j, j+1)) and camera depth, or -1 when z <= near. */
int gs_camera_project(const struct gs_camera *cam, const float p[3], float *u, float *v,
                      float *depth);

/* The scene hash: sha256 over, in order, transforms_train.json, transforms_test.json (when
 * present) and every image the frames name, each contributing its path relative to dir, a NUL and
 * its bytes, so a renamed or changed file changes the hash. Uses the same file list as the loader. */
int gs_scene_hash(const char *dir, char hex[SW_SHA256_HEX_LEN], struct sw_err *err);

/* Unpacks an archive into dest_dir (created). Refuses, before writing anything, any entry with an
 * absolute path, a ".." component, a link (hard or symbolic), or a device/fifo, naming the entry:
 * SW_EINVAL. */
int gs_scene_unpack(const char *archive, const char *dest_dir, struct sw_err *err);

#endif
