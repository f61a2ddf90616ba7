/* gs_scene_nerf.c: the NeRF-synthetic format (transforms_train.json + optional
 * transforms_test.json, see gs_scene.h), and the frame parsing it shares with transforms.json. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gs_scene_int.h"
#include "gs_scene_json.h"

int gs_scene_json_frame_file(const char *fp, char *out, size_t cap) {
  while (fp[0] == '.' && fp[1] == '/') fp += 2;
  const char *slash = strrchr(fp, '/');
  const char *dot = strrchr(slash ? slash : fp, '.');
  int n = snprintf(out, cap, "%s%s", fp, dot ? "" : ".png");
  return n < 0 || (size_t)n >= cap ? -1 : 0;
}

int gs_scene_json_load(const char *dir, const char *file, json_t **root, struct sw_err *err) {
  *root = NULL;
  char *text = NULL;
  size_t len = 0;
  int rc = gs_scene_read_file(dir, file, GS_SCENE_META_MAX, &text, &len, err);
  if (rc) return rc;
  json_error_t je;
  *root = json_loadb(text, len, 0, &je);
  free(text);
  if (!*root)
    return sw_err_set(err, SW_EINVAL, "%s/%s:%d:%d: bad JSON: %s", dir, file, je.line, je.column,
                      je.text);
  if (!json_is_object(*root)) {
    json_decref(*root);
    *root = NULL;
    return sw_err_set(err, SW_EINVAL, "%s/%s: not a JSON object", dir, file);
  }
  return 0;
}

int gs_scene_json_aabb(json_t *root, const char *path, int *has, float aabb[6],
                       struct sw_err *err) {
  json_t *a = json_object_get(root, "aabb");
  if (!a) return 0;
  int ok = json_is_array(a) && json_array_size(a) == 2;
  for (int i = 0; ok && i < 2; i++) {
    json_t *row = json_array_get(a, i);
    ok = json_is_array(row) && json_array_size(row) == 3;
    for (int k = 0; ok && k < 3; k++) {
      ok = json_is_number(json_array_get(row, k));
      if (ok) aabb[3 * i + k] = (float)json_number_value(json_array_get(row, k));
    }
  }
  for (int k = 0; ok && k < 3; k++) ok = aabb[k] < aabb[3 + k];
  if (!ok)
    return sw_err_set(err, SW_EINVAL, "%s: \"aabb\" must be [[xmin,ymin,zmin],[xmax,ymax,zmax]]",
                      path);
  *has = 1;
  return 0;
}

int gs_scene_json_pose(json_t *f, const char *path, size_t i, struct gs_scene_frame *fr,
                       struct sw_err *err) {
  json_t *fp = json_object_get(f, "file_path");
  json_t *tm = json_object_get(f, "transform_matrix");
  if (!json_is_string(fp) || json_string_length(fp) == 0)
    return sw_err_set(err, SW_EINVAL, "%s: frame %zu has no \"file_path\" string", path, i);
  const char *fps = json_string_value(fp);
  if (gs_scene_path_unsafe(fps))
    return sw_err_set(err, SW_EINVAL, "%s: frame %zu: file_path '%s' leaves the scene directory",
                      path, i, fps);
  if (gs_scene_json_frame_file(fps, fr->file, sizeof fr->file))
    return sw_err_set(err, SW_EINVAL, "%s: frame %zu: file_path is longer than %zu bytes", path, i,
                      sizeof fr->file - 5);
  float c2w[16];
  int ok = json_is_array(tm) && json_array_size(tm) == 4;
  for (int r = 0; ok && r < 4; r++) {
    json_t *row = json_array_get(tm, r);
    ok = json_is_array(row) && json_array_size(row) == 4;
    for (int c = 0; ok && c < 4; c++) {
      json_t *v = json_array_get(row, c);
      ok = json_is_number(v) && isfinite(json_number_value(v));
      if (ok) c2w[4 * r + c] = (float)json_number_value(v);
    }
  }
  if (!ok)
    return sw_err_set(err, SW_EINVAL, "%s: frame %zu: \"transform_matrix\" must be 4x4 numbers",
                      path, i);
  int rc = gs_scene_frame_from_c2w_gl(c2w, fr, err);
  if (rc) sw_err_prefix(err, "%s: frame %zu", path, i);
  return rc;
}

/* Reads one split file; a missing optional file leaves nothing added. */
static int read_split(const char *dir, const char *file, int required, enum gs_frame_split split,
                      struct gs_scene_desc *d, struct sw_err *err) {
  char path[GS_SCENE_PATH_MAX + 64];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  if (!gs_scene_exists(dir, file)) {
    if (!required) return 0;
    return sw_err_set(err, SW_ENOTFOUND, "%s (NeRF-synthetic): no such file", path);
  }
  json_t *root = NULL;
  int rc = gs_scene_json_load(dir, file, &root, err);
  if (rc) return rc;
  json_t *ax = json_object_get(root, "camera_angle_x");
  json_t *ay = json_object_get(root, "camera_angle_y");
  json_t *frames = json_object_get(root, "frames");
  if (!json_is_number(ax) || !(json_number_value(ax) > 0) || !(json_number_value(ax) < M_PI)) {
    rc = sw_err_set(err, SW_EINVAL, "%s (NeRF-synthetic): needs \"camera_angle_x\" in (0, pi)",
                    path);
    goto done;
  }
  if (ay &&
      (!json_is_number(ay) || !(json_number_value(ay) > 0) || !(json_number_value(ay) < M_PI))) {
    rc = sw_err_set(err, SW_EINVAL, "%s (NeRF-synthetic): \"camera_angle_y\" must be in (0, pi)",
                    path);
    goto done;
  }
  if (split == GS_FRAME_AUTO) {
    rc = gs_scene_json_aabb(root, path, &d->has_aabb, d->aabb, err);
    if (rc) goto done;
  }
  if (!json_is_array(frames) || json_array_size(frames) == 0) {
    rc =
        sw_err_set(err, SW_EINVAL, "%s (NeRF-synthetic): needs a non-empty \"frames\" array", path);
    goto done;
  }
  size_t n = json_array_size(frames);
  struct gs_scene_frame *fr = gs_scene_desc_add(d, (uint32_t)n, err);
  if (!fr) {
    rc = SW_ENOMEM;
    goto done;
  }
  for (size_t i = 0; i < n && !rc; i++) {
    rc = gs_scene_json_pose(json_array_get(frames, i), path, i, &fr[i], err);
    fr[i].in.angle_x = json_number_value(ax);
    fr[i].in.angle_y = ay ? json_number_value(ay) : 0.0;
    fr[i].in.cx = fr[i].in.cy = -1.0;
    fr[i].split = split;
  }
  if (!rc) snprintf(d->meta[d->n_meta++], sizeof d->meta[0], "%s", file);
done:
  json_decref(root);
  return rc;
}

int gs_scene_read_nerf(const char *dir, struct gs_scene_desc *d, struct sw_err *err) {
  d->format = "NeRF-synthetic";
  int rc = read_split(dir, "transforms_train.json", 1, GS_FRAME_AUTO, d, err);
  if (!rc) {
    uint32_t n_train = d->n;
    rc = read_split(dir, "transforms_test.json", 0, GS_FRAME_TEST, d, err);
    /* With a test file, the training file's frames are all training frames. */
    if (!rc && d->n > n_train)
      for (uint32_t i = 0; i < n_train; i++) d->frames[i].split = GS_FRAME_TRAIN;
  }
  return rc;
}
