/* gs_scene_int.h: what the scene formats share inside the loader (not part of the gs_scene.h
 * API). Each format (gs_scene_nerf.c: NeRF-synthetic, gs_scene_transforms.c: instant-ngp /
 * nerfstudio transforms.json, gs_scene_colmap.c: COLMAP sparse models) reads its description
 * files into a struct gs_scene_desc: one frame per image with its pose, intrinsics and split;
 * gs_scene.c then reads every image the same way (gs_image.h), undistorts, downscales and builds
 * the struct gs_scene.
 *
 * Reading rules every format follows: description files are read with gs_scene_read_file (regular
 * files inside the scene folder only, size-capped, never blocking on a FIFO), and every error names
 * the file, the format, and the line:column (text) or byte offset (binary) where it applies. */
#ifndef GS_SCENE_INT_H
#define GS_SCENE_INT_H

#include <stddef.h>
#include <stdint.h>

#include "gs_scene.h"
#include "sw_err.h"

#define GS_SCENE_PATH_MAX 4096
/* Size caps: a description file (JSON, COLMAP text or binary) and one image file. Generous for
 * real captures (a 10-million-point points3D.bin is ~0.6 GB with tracks), small enough that a
 * file that is not what it claims cannot exhaust memory. */
#define GS_SCENE_META_MAX ((size_t)2 << 30)
#define GS_SCENE_IMAGE_MAX ((size_t)512 << 20)

/* A camera's intrinsics as the format gives them, in pixels of the image as stored (w, h), with
 * the lens distortion of the OpenCV / COLMAP / nerfstudio model (see gs_scene_undistort):
 *   r2 = x^2 + y^2, radial = 1 + k1 r2 + k2 r2^2 + k3 r2^3 + k4 r2^4,
 *   x_d = x radial + 2 p1 x y + p2 (r2 + 2 x^2),  y_d = y radial + p1 (r2 + 2 y^2) + 2 p2 x y
 * for normalised pinhole coordinates (x, y) = ((u - cx) / fx, (v - cy) / fy). fx == 0 means "from
 * the field of view once the image size is known": fx = 0.5 w / tan(0.5 angle_x), fy from angle_y
 * when > 0 else fx, principal point at the centre unless cx, cy are >= 0. w == 0: from the image.
 */
struct gs_intrinsics {
  uint32_t w, h;
  double fx, fy, cx, cy; /* cx, cy < 0: the image centre */
  double angle_x, angle_y;
  double k[4], p[2];
};

enum gs_frame_split { GS_FRAME_AUTO = 0, GS_FRAME_TRAIN = 1, GS_FRAME_TEST = 2 };

struct gs_scene_frame {
  char file[GS_SCENE_PATH_MAX]; /* relative to the scene folder */
  float viewmat[16];            /* world -> camera, OpenCV axes (gs_types.h) */
  float campos[3];
  struct gs_intrinsics in;
  int prescaled; /* 1: the file is a downscale (images_N/): scale in to its size */
  enum gs_frame_split split;
};

struct gs_scene_desc {
  const char *format; /* "NeRF-synthetic", "transforms.json", "COLMAP binary", ... */
  char meta[4][64];   /* description files, relative; hashed first, in order */
  uint32_t n_meta;
  struct gs_scene_frame *frames;
  uint32_t n;
  int has_aabb;
  float aabb[6];   /* min xyz, max xyz */
  float *points;   /* COLMAP points3D: 3 floats each */
  uint8_t *colors; /* 3 bytes each */
  uint32_t n_points;
  char warning[1024]; /* one line for the user, or empty */
};

void gs_scene_desc_free(struct gs_scene_desc *d);
/* Appends n zeroed frames; returns the first, or NULL (SW_ENOMEM set) . */
struct gs_scene_frame *gs_scene_desc_add(struct gs_scene_desc *d, uint32_t n, struct sw_err *err);

/* The formats. dir has no trailing slash; scale is the requested integer downscale (COLMAP uses
 * images_<scale>/ when present). Each returns 0 or an error naming its file. */
int gs_scene_read_nerf(const char *dir, struct gs_scene_desc *d, struct sw_err *err);
int gs_scene_read_transforms(const char *dir, const struct gs_scene_opts *o,
                             struct gs_scene_desc *d, struct sw_err *err);
int gs_scene_read_colmap(const char *dir, const char *sparse, int binary, uint32_t scale,
                         struct gs_scene_desc *d, struct sw_err *err);

/* Reads dir/rel whole into *data (NUL-terminated; caller frees) with the loader's rules: the path
 * must resolve, symlinks included, to a regular file inside dir (else SW_EINVAL "leaves the scene
 * folder" / "not a regular file (FIFO)"), of at most cap bytes (else SW_EINVAL); it is opened with
 * O_NONBLOCK, so a FIFO is refused without waiting for a writer. SW_ENOTFOUND when missing. */
int gs_scene_read_file(const char *dir, const char *rel, size_t cap, char **data, size_t *len,
                       struct sw_err *err);
/* 1 when dir/rel exists (any type; a dangling link counts as absent). */
int gs_scene_exists(const char *dir, const char *rel);
/* 1 when a relative path has a ".." component or is absolute. */
int gs_scene_path_unsafe(const char *rel);
/* Converts a camera-to-world matrix in OpenGL axes (row-major) into the frame's viewmat and
 * campos. */
int gs_scene_frame_from_c2w_gl(const float c2w[16], struct gs_scene_frame *f, struct sw_err *err);

/* Undistorts an RGB image (w x h, 3 floats per pixel) taken with intrinsics `in` into a pinhole
 * image of the same size and the same fx, fy, cx, cy (see gs_scene_undistort.c for the
 * derivation). *out owned by the caller. */
int gs_scene_undistort(const float *rgb, uint32_t w, uint32_t h, const struct gs_intrinsics *in,
                       float **out, struct sw_err *err);
/* 1 when the intrinsics carry any non-zero distortion coefficient. */
int gs_intrinsics_distorted(const struct gs_intrinsics *in);
/* Applies the distortion model to normalised coordinates (x, y). */
void gs_intrinsics_distort(const struct gs_intrinsics *in, double x, double y, double *xd,
                           double *yd);

#endif
