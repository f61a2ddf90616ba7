/* gs_scene.h: scenes on disk, read into views (camera + ground-truth image): the loader, which
 * detects the format from the folder, the held-out test split, the scene's sha256, and archives
 * (.zip, .tar.gz, .tgz, .tar) unpacked through libarchive. docs/scenes.md is the user's guide.
 *
 * Formats (detected in this order; every error names the format and the file):
 *  - NeRF-synthetic (Mildenhall et al.): DIR/transforms_train.json [+ transforms_test.json]
 *      {"camera_angle_x": fovx, ["camera_angle_y": ...,] "frames": [{"file_path": "./train/r_0",
 *       "transform_matrix": 4x4 camera-to-world, OpenGL axes}, ...]}; ".png" is appended when
 *      file_path has no extension. Optional "aabb": [[xmin,ymin,zmin],[xmax,ymax,zmax]] (written by
 *      our generator): content bounds for random initialisation.
 *  - instant-ngp / nerfstudio: DIR/transforms.json, the same frames with intrinsics given globally
 *    or per frame: fl_x, fl_y, cx, cy, w, h (or camera_angle_x/y), distortion k1 k2 k3 k4 p1 p2,
 *    camera_model (OPENCV or PINHOLE; fisheye and equirectangular refused), aabb_scale.
 *    Frames whose image is missing are skipped and named in one warning (scene->warning), or
 *    refused with opts.missing_frames_error.
 *  - COLMAP: DIR/sparse/0/ (or DIR/sparse/) cameras, images and points3D as .bin or .txt, images
 *    in DIR/images/ (DIR/images_N/ used for a downscale N of 2, 4 or 8 when present). Camera models
 *    SIMPLE_PINHOLE, PINHOLE, SIMPLE_RADIAL, RADIAL, OPENCV; other models refused by name.
 * Images are PNG or JPEG, told apart by content (gs_image.h), JPEG EXIF orientation applied; views
 * may differ in size. Distorted cameras are undistorted once at load into pinhole images with the
 * same fx, fy, cx, cy (gs_scene_undistort.c has the derivation).
 *
 * Cameras follow gs_types.h: viewmat world -> camera in OpenCV axes (a c2w in OpenGL axes has its
 * y and z axes negated, then is inverted; COLMAP poses are used as they are); the principal point
 * is the format's (the image centre for NeRF-synthetic). Downscale by an integer factor s:
 * W' = W / s, H' = H / s (floor), pixels box-averaged after compositing, fx, fy, cx, cy divided
 * by s. Files are read only when they are regular files inside the scene folder (no FIFOs,
 * devices or symlinks leading out), each size-capped. */
#ifndef GS_SCENE_H
#define GS_SCENE_H

#include <signal.h>
#include <stdint.h>

#include "gs_types.h"
#include "sw_err.h"
#include "sw_sha256.h"

enum gs_background { GS_BG_WHITE = 0, GS_BG_BLACK = 1 };

/* Which images to decode; cameras are always loaded. Skipping saves memory and time when only
 * one split is needed (rendering needs the test split only). */
enum gs_scene_skip {
  GS_SCENE_SKIP_NONE = 0,
  GS_SCENE_SKIP_TRAIN_IMAGES = 1,
  GS_SCENE_SKIP_TEST_IMAGES = 2
};

/* Zero-initialised options are the defaults: white background, full resolution, all images,
 * archives unpacked under $TMPDIR (or /tmp). */
struct gs_scene_opts {
  enum gs_background background;
  uint32_t resolution_scale; /* integer downscale factor; 0 or 1 = full resolution */
  unsigned skip;             /* enum gs_scene_skip flags */
  const char *unpack_dir;    /* where an archive path is unpacked; NULL = $TMPDIR/gs-scene-<sha> */
  uint32_t holdout_every;    /* held-out split: every Nth training view is a test view; 0 = 8 */
  int normalize;             /* enum gs_scene_normalize */
  int missing_frames_error;  /* transforms.json: a frame without its image is an error */
  volatile sig_atomic_t *stop; /* polled between images: GS_SCENE_STOPPED; NULL = never */
};

/* Scene normalisation (gs_scene_load): AUTO normalises real captures (transforms.json, COLMAP)
 * and leaves NeRF-synthetic scenes as they are. Normalised, the world is moved and scaled so that
 * the training cameras' centroid is the origin and the farthest one is at distance 1. */
enum gs_scene_normalize { GS_NORMALIZE_AUTO = 0, GS_NORMALIZE_ON = 1, GS_NORMALIZE_OFF = 2 };

/* Positive return of gs_scene_load: the stop flag was raised while loading. */
#define GS_SCENE_STOPPED 1

struct gs_scene {
  char path[4096];                /* the directory the scene was read from */
  char sha256[SW_SHA256_HEX_LEN]; /* over the json files and every image, see gs_scene_hash */
  char format[32];                /* "NeRF-synthetic", "transforms.json", "COLMAP binary", ... */
  char warning[1024];             /* one line for the user (missing frames), or empty */
  uint32_t width, height;         /* the largest view's, after downscale; each view's camera
                                   * has its own size */
  uint32_t n_train, n_test;
  struct gs_view *train; /* n_train views; rgb NULL when skipped */
  struct gs_view *test;  /* n_test views; rgb NULL when skipped */
  int held_out;          /* 1 when the test split was held out of transforms_train */
  enum gs_background background;
  float extent;                   /* gs_cameras_extent of the training cameras */
  float center[3];                /* centroid of the training camera centres */
  float aabb_min[3], aabb_max[3]; /* content bounds: the scene's ("aabb", aabb_scale) when given,
                                   * else [-1.3, 1.3]^3 (NeRF-synthetic) or center +- extent */
  int has_aabb;                   /* 1 when the bounds came from the scene */
  float *points;                  /* COLMAP points3D (3 floats each, normalised with the scene) */
  uint8_t *colors;                /* their colours, 3 bytes each */
  uint32_t n_points;
  float norm_center[3], norm_scale; /* normalisation applied: x' = scale (x - center) */
};

/* Loads a scene from a directory or an archive file (.zip, .tar.gz, .tgz, .tar: unpacked first,
 * see gs_scene_unpack; the scene may sit in the archive's root or in its single top folder).
 * opts may be NULL (defaults). *out owned by the caller. Errors name the file and what is wrong:
 * SW_ENOTFOUND (missing directory, description file or image; a folder of no known format, the
 * message listing the formats), SW_EINVAL (bad JSON or COLMAP data, missing keys, unsupported
 * camera model, corrupt or truncated image, a file that is not regular or too large), SW_EIO,
 * SW_ENOMEM; GS_SCENE_STOPPED when opts->stop was raised. */
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

/* The scene hash: sha256 over, in order, the format's description files (NeRF-synthetic:
 * transforms_train.json, transforms_test.json when present) and every image the frames name, each
 * contributing its path relative to dir, a NUL and its bytes, so a renamed or changed file changes
 * the hash. Uses the same file list as the loader. */
int gs_scene_hash(const char *dir, char hex[SW_SHA256_HEX_LEN], struct sw_err *err);

/* Unpacks an archive into dest_dir (created). Refuses, before writing anything, any entry with an
 * absolute path, a ".." component, a link (hard or symbolic), or a device/fifo, naming the entry:
 * SW_EINVAL. */
int gs_scene_unpack(const char *archive, const char *dest_dir, struct sw_err *err);

#endif
