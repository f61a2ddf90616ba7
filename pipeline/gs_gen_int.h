/* gs_gen_int.h: what the scene generator's two files share: the traced scene, opaque to the
 * capture writers, and the writers of the capture layouts (gs_gen_capture.c). */
#ifndef GS_GEN_INT_H
#define GS_GEN_INT_H

#include <jansson.h>

#include "gs_gen.h"
#include "sw_err.h"

struct gs_gen_world;

/* Traces the ray (o, unit d): 1 and the hit point and its shaded colour, or 0 on a miss. */
int gs_gen_world_hit(const struct gs_gen_world *w, const float o[3], const float d[3], float p[3],
                     float rgb[3]);

/* OUT/sparse/0/{cameras,images,points3D}.{bin,txt}: one camera (RADIAL with the distorted lens,
 * else PINHOLE) shared by every view, the views' poses, and surface points seen by the views
 * (the hits of a 12 x 12 grid of pinhole rays per view) with their colours. */
int gs_gen_write_colmap(const char *out_dir, const struct gs_gen_opts *o,
                        const struct gs_gen_world *w, int binary, struct sw_err *err);
/* Appends the transforms.json frame of view (test, index), {"file_path": file_path,
 * "transform_matrix": its camera-to-world rows}, to the JSON array frames (both layouts). */
void gs_gen_frame_append(json_t *frames, const struct gs_gen_opts *o, int test, uint32_t index,
                         const char *file_path);
/* OUT/transforms.json, intrinsics at the top level (instant-ngp / nerfstudio form). */
int gs_gen_write_transforms(const char *out_dir, const struct gs_gen_opts *o, struct sw_err *err);

#endif
