/* gs_scene_json.h: JSON helpers the two transforms formats (NeRF-synthetic and transforms.json)
 * share inside the loader. */
#ifndef GS_SCENE_JSON_H
#define GS_SCENE_JSON_H

#include <jansson.h>

#include "gs_scene_int.h"

/* Loads dir/file (gs_scene_read_file rules) as a JSON object; errors name file:line:column. */
int gs_scene_json_load(const char *dir, const char *file, json_t **root, struct sw_err *err);
/* The optional "aabb" key. */
int gs_scene_json_aabb(json_t *root, const char *path, int *has, float aabb[6], struct sw_err *err);
/* A frame's file_path (checked to stay inside the folder, ".png" appended without an extension)
 * and transform_matrix (camera-to-world, OpenGL axes) into fr. */
int gs_scene_json_pose(json_t *frame, const char *path, size_t index, struct gs_scene_frame *fr,
                       struct sw_err *err);
/* file_path without a leading "./", ".png" appended when it has no extension; -1 when too long. */
int gs_scene_json_frame_file(const char *fp, char *out, size_t cap);

#endif
