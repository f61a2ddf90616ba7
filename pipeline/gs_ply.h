/* gs_ply.h: the Gaussian model as a PLY file in the standard 3DGS layout, so that common splat
 * viewers open our files and we open theirs.
 *
 * Format written (binary_little_endian 1.0, one element "vertex", every property float):
 *   x y z  nx ny nz (zeros)  f_dc_0 f_dc_1 f_dc_2  f_rest_0 .. f_rest_44  opacity
 *   scale_0 scale_1 scale_2  rot_0 rot_1 rot_2 rot_3
 * f_dc_k is SH coefficient 0 of channel k; f_rest is channel-major: f_rest_{c*15 + (i-1)} is
 * coefficient i (1..15) of channel c (R, G, B). opacity is the logit, scale_k the log-scale, rot
 * the quaternion with w first (rot_0 = w), exactly as struct gs_model stores them.
 *
 * Read accepts: ascii, binary_little_endian and binary_big_endian; properties in any order, found
 * by name; other properties (normals, extras) ignored; property types float, double and the
 * integer types (converted); fewer f_rest (3 * 0, 3 * 3 or 3 * 8 for SH degrees 0 to 2), missing
 * coefficients set to 0; other elements before or after "vertex" (skipped when their size is
 * known). Errors name the file and the line or the splat index. */
#ifndef GS_PLY_H
#define GS_PLY_H

#include "gs_types.h"
#include "sw_err.h"

/* Writes the model's `count` splats (all SH degree 3) atomically. */
int gs_ply_write(const char *path, const struct gs_model *model, struct sw_err *err);
/* Reads a PLY into a new model (*out owned by the caller, gs_model_destroy). *sh_degree_out (may
 * be NULL) gets the SH degree the file carried (0..3). SW_ENOTFOUND, SW_EINVAL (wrong header,
 * missing property, truncated data, non-finite count), SW_EIO, SW_ENOMEM. */
int gs_ply_read(const char *path, struct gs_model **out, int *sh_degree_out, struct sw_err *err);

#endif
