/* gs_scene_transforms.c: instant-ngp / nerfstudio scenes: one transforms.json whose frames carry
 * camera-to-world matrices in OpenGL axes (as NeRF-synthetic) and whose intrinsics are given at the
 * top level, per frame, or both (a frame's key wins):
 *   fl_x, fl_y        focal lengths in pixels (fl_y defaults to fl_x)
 *   camera_angle_x/y  fields of view in radians, used when fl_x is absent
 *   cx, cy            principal point in pixels (default: the image centre)
 *   w, h              image size the intrinsics refer to (default: the image's)
 *   k1 k2 k3 k4 p1 p2 OpenCV distortion (gs_scene_int.h), undistorted at load
 *   camera_model      "OPENCV" (default) or "PINHOLE"; "OPENCV_FISHEYE", "EQUIRECTANGULAR" and
 *                     any other model are refused by name
 *   aabb_scale        instant-ngp's scene box: with its default scale 0.33 and offset 0.5 (the
 *                     "scale" and "offset" keys when given), the box of side aabb_scale centred
 *                     on (0.5, 0.5, 0.5) in instant-ngp's units, mapped back to the file's units,
 *                     bounds random initialisation.
 * Frames whose image is missing (instant-ngp's fox lists 67 frames for 50 images) are skipped and
 * named in one warning, or refused with opts->missing_frames_error. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gs_scene_int.h"
#include "gs_scene_json.h"

static const char *dist_keys[6] = {"k1", "k2", "k3", "k4", "p1", "p2"};

/* Reads the intrinsics keys of obj (top level or one frame) over *in; *model the camera model. */
static int read_intrinsics(json_t *obj, const char *path, const char *where,
                           struct gs_intrinsics *in, const char **model, struct sw_err *err) {
  struct {
    const char *key;
    double *dst;
  } num[] = {{"fl_x", &in->fx},
             {"fl_y", &in->fy},
             {"cx", &in->cx},
             {"cy", &in->cy},
             {"camera_angle_x", &in->angle_x},
             {"camera_angle_y", &in->angle_y}};
  for (size_t i = 0; i < sizeof num / sizeof num[0]; i++) {
    json_t *v = json_object_get(obj, num[i].key);
    if (!v) continue;
    if (!json_is_number(v) || !isfinite(json_number_value(v)) || !(json_number_value(v) > 0))
      return sw_err_set(err, SW_EINVAL,
                        "%s (transforms.json): %s: \"%s\" must be a positive "
                        "number",
                        path, where, num[i].key);
    *num[i].dst = json_number_value(v);
  }
  if (json_object_get(obj, "fl_x") && !json_object_get(obj, "fl_y")) in->fy = in->fx;
  const char *wh[2] = {"w", "h"};
  uint32_t *whd[2] = {&in->w, &in->h};
  for (int i = 0; i < 2; i++) {
    json_t *v = json_object_get(obj, wh[i]);
    if (!v) continue;
    double x = json_number_value(v);
    if (!json_is_number(v) || !(x >= 1 && x <= 65536) || x != floor(x))
      return sw_err_set(err, SW_EINVAL,
                        "%s (transforms.json): %s: \"%s\" must be a whole number "
                        "of pixels in 1..65536",
                        path, where, wh[i]);
    *whd[i] = (uint32_t)x;
  }
  for (int i = 0; i < 6; i++) {
    json_t *v = json_object_get(obj, dist_keys[i]);
    if (!v) continue;
    if (!json_is_number(v) || !isfinite(json_number_value(v)))
      return sw_err_set(err, SW_EINVAL, "%s (transforms.json): %s: \"%s\" must be a number", path,
                        where, dist_keys[i]);
    if (i < 4)
      in->k[i] = json_number_value(v);
    else
      in->p[i - 4] = json_number_value(v);
  }
  json_t *m = json_object_get(obj, "camera_model");
  if (m) {
    if (!json_is_string(m))
      return sw_err_set(err, SW_EINVAL,
                        "%s (transforms.json): %s: \"camera_model\" must be a "
                        "string",
                        path, where);
    *model = json_string_value(m);
  }
  return 0;
}

static int check_model(const char *model, const struct gs_intrinsics *in, const char *path,
                       const char *where, struct sw_err *err) {
  if (!model || !strcmp(model, "OPENCV")) return 0;
  if (!strcmp(model, "PINHOLE") || !strcmp(model, "SIMPLE_PINHOLE")) {
    if (gs_intrinsics_distorted(in))
      return sw_err_set(err, SW_EINVAL,
                        "%s (transforms.json): %s: camera_model %s with non-zero "
                        "distortion coefficients",
                        path, where, model);
    return 0;
  }
  return sw_err_set(err, SW_EINVAL,
                    "%s (transforms.json): %s: camera_model \"%s\" is not "
                    "supported (OPENCV and PINHOLE are; undistort fisheye or equirectangular "
                    "captures first, e.g. with COLMAP's image_undistorter)",
                    path, where, model);
}

/* instant-ngp's aabb_scale as a box in the file's units (see the header comment). */
static int ngp_box(json_t *root, const char *path, struct gs_scene_desc *d, struct sw_err *err) {
  json_t *as = json_object_get(root, "aabb_scale");
  if (!as) return 0;
  double a = json_number_value(as);
  if (!json_is_number(as) || !(a > 0) || !isfinite(a))
    return sw_err_set(err, SW_EINVAL,
                      "%s (transforms.json): \"aabb_scale\" must be a positive "
                      "number",
                      path);
  double scale = 0.33, off[3] = {0.5, 0.5, 0.5};
  json_t *s = json_object_get(root, "scale"), *o = json_object_get(root, "offset");
  if (json_is_number(s) && json_number_value(s) > 0) scale = json_number_value(s);
  if (json_is_array(o) && json_array_size(o) == 3)
    for (int k = 0; k < 3; k++)
      if (json_is_number(json_array_get(o, k))) off[k] = json_number_value(json_array_get(o, k));
  /* instant-ngp maps a file point p to p' = scale p + offset (after an axis cycle, which a box
   * centred on the offset's diagonal does not see when the offset is uniform); its box is
   * [0.5 - a/2, 0.5 + a/2]^3. */
  for (int k = 0; k < 3; k++) {
    d->aabb[k] = (float)((0.5 - 0.5 * a - off[k]) / scale);
    d->aabb[3 + k] = (float)((0.5 + 0.5 * a - off[k]) / scale);
  }
  d->has_aabb = 1;
  return 0;
}

int gs_scene_read_transforms(const char *dir, const struct gs_scene_opts *o,
                             struct gs_scene_desc *d, struct sw_err *err) {
  d->format = "transforms.json";
  char path[GS_SCENE_PATH_MAX + 64];
  snprintf(path, sizeof path, "%s/transforms.json", dir);
  json_t *root = NULL;
  int rc = gs_scene_json_load(dir, "transforms.json", &root, err);
  if (rc) return rc;
  struct gs_intrinsics g = {.cx = -1, .cy = -1};
  const char *gmodel = NULL;
  char missing[600] = "";
  size_t missing_len = 0;
  uint32_t n_missing = 0, n_shown = 0;
  rc = read_intrinsics(root, path, "top level", &g, &gmodel, err);
  if (!rc) rc = gs_scene_json_aabb(root, path, &d->has_aabb, d->aabb, err);
  if (!rc && !d->has_aabb) rc = ngp_box(root, path, d, err);
  json_t *frames = json_object_get(root, "frames");
  if (!rc && (!json_is_array(frames) || json_array_size(frames) == 0))
    rc = sw_err_set(err, SW_EINVAL, "%s (transforms.json): needs a non-empty \"frames\" array",
                    path);
  if (rc) goto done;
  size_t n = json_array_size(frames);
  for (size_t i = 0; i < n && !rc; i++) {
    json_t *f = json_array_get(frames, i);
    char where[32];
    snprintf(where, sizeof where, "frame %zu", i);
    if (!json_is_object(f)) {
      rc = sw_err_set(err, SW_EINVAL, "%s (transforms.json): %s is not an object", path, where);
      break;
    }
    struct gs_scene_frame fr = {0};
    rc = gs_scene_json_pose(f, path, i, &fr, err);
    if (rc) break;
    fr.in = g;
    const char *model = gmodel;
    rc = read_intrinsics(f, path, where, &fr.in, &model, err);
    if (!rc) rc = check_model(model, &fr.in, path, where, err);
    if (!rc && fr.in.fx <= 0 && !(fr.in.angle_x > 0))
      rc = sw_err_set(err, SW_EINVAL,
                      "%s (transforms.json): %s: no focal length (\"fl_x\" or "
                      "\"camera_angle_x\", at the top level or in the frame)",
                      path, where);
    if (!rc && (fr.in.w == 0) != (fr.in.h == 0))
      rc = sw_err_set(err, SW_EINVAL, "%s (transforms.json): %s: \"w\" and \"h\" go together", path,
                      where);
    if (rc) break;
    if (!gs_scene_exists(dir, fr.file)) {
      if (o && o->missing_frames_error) {
        rc = sw_err_set(err, SW_ENOTFOUND, "%s (transforms.json): %s: image %s/%s: no such file",
                        path, where, dir, fr.file);
        break;
      }
      /* Named in one warning; a long list is cut, with the count kept. */
      size_t add = strlen(fr.file) + 2;
      if (missing_len + add < sizeof missing) {
        snprintf(missing + missing_len, sizeof missing - missing_len, "%s%s", n_missing ? ", " : "",
                 fr.file);
        missing_len += add - (n_missing ? 0 : 2);
        n_shown++;
      }
      n_missing++;
      continue;
    }
    struct gs_scene_frame *slot = gs_scene_desc_add(d, 1, err);
    if (!slot) {
      rc = SW_ENOMEM;
      break;
    }
    *slot = fr;
  }
  if (!rc && d->n == 0)
    rc = sw_err_set(err, SW_ENOTFOUND,
                    "%s (transforms.json): none of the %zu frames has its image "
                    "(missing: %s)",
                    path, n, missing);
  if (!rc && n_missing) {
    snprintf(d->warning, sizeof d->warning,
             "%s (transforms.json): %u of %zu frames skipped, their images are missing: %s%s "
             "(--set missing_frames=error refuses such a scene)",
             path, n_missing, n, missing, n_shown < n_missing ? ", ..." : "");
  }
  if (!rc) snprintf(d->meta[d->n_meta++], sizeof d->meta[0], "transforms.json");
done:
  json_decref(root);
  return rc;
}
