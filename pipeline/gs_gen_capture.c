/* gs_gen_capture.c: the generator's capture layouts (gs_gen.h): COLMAP sparse/0/ in binary and
 * text with a points3D cloud, and transforms.json, written for the views gs_gen.c rendered. The
 * file formats are the ones gs_scene_colmap.c and gs_scene_transforms.c read. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gs_gen.h"
#include "gs_gen_int.h"
#include "gs_scene.h"
#include "sw_fs.h"

/* A world-to-camera rotation as a unit quaternion (w, x, y, z), COLMAP's convention. */
static void rot_to_quat(const float *m, double q[4]) {
  double r00 = m[0], r01 = m[1], r02 = m[2], r10 = m[4], r11 = m[5], r12 = m[6], r20 = m[8],
         r21 = m[9], r22 = m[10];
  double tr = r00 + r11 + r22;
  if (tr > 0) {
    double k = 0.5 / sqrt(tr + 1.0);
    q[0] = 0.25 / k, q[1] = (r21 - r12) * k, q[2] = (r02 - r20) * k, q[3] = (r10 - r01) * k;
  } else if (r00 > r11 && r00 > r22) {
    double k = 2.0 * sqrt(1.0 + r00 - r11 - r22);
    q[0] = (r21 - r12) / k, q[1] = 0.25 * k, q[2] = (r01 + r10) / k, q[3] = (r02 + r20) / k;
  } else if (r11 > r22) {
    double k = 2.0 * sqrt(1.0 + r11 - r00 - r22);
    q[0] = (r02 - r20) / k, q[1] = (r01 + r10) / k, q[2] = 0.25 * k, q[3] = (r12 + r21) / k;
  } else {
    double k = 2.0 * sqrt(1.0 + r22 - r00 - r11);
    q[0] = (r10 - r01) / k, q[1] = (r02 + r20) / k, q[2] = (r12 + r21) / k, q[3] = 0.25 * k;
  }
}

/* Surface points seen by the training views: the hits of a coarse grid of pinhole rays per view,
 * with their shaded colours (a stand-in for a structure-from-motion cloud). */
static int sample_points(const struct gs_gen_world *s, const struct gs_gen_opts *o, float **pts,
                         uint8_t **cols, uint32_t *n_out) {
  const uint32_t grid = 12;
  size_t cap = (size_t)o->train_views * grid * grid;
  float *p = malloc(cap * 3 * sizeof(float) + 1);
  uint8_t *c = malloc(cap * 3 + 1);
  if (!p || !c) {
    free(p);
    free(c);
    return -1;
  }
  uint32_t n = 0;
  struct gs_gen_opts pin = *o;
  pin.lens = GS_GEN_LENS_PINHOLE;
  struct gs_gen_lens l;
  gs_gen_lens_of(&pin, &l);
  for (uint32_t v = 0; v < o->train_views; v++) {
    float c2w[16], org[3], d[3], rgb[3];
    gs_gen_view_c2w(o, 0, v, c2w);
    for (uint32_t gy = 0; gy < grid; gy++)
      for (uint32_t gx = 0; gx < grid; gx++) {
        float u = ((float)gx + 0.5f) * (float)o->resolution / (float)grid;
        float w = ((float)gy + 0.5f) * (float)o->resolution / (float)grid;
        gs_gen_lens_ray(c2w, &l, u, w, org, d);
        float hit[3];
        if (!gs_gen_world_hit(s, org, d, hit, rgb)) continue;
        for (int k = 0; k < 3; k++) {
          p[3 * n + k] = hit[k];
          c[3 * n + k] = (uint8_t)(rgb[k] * 255.0f + 0.5f);
        }
        n++;
      }
  }
  *pts = p;
  *cols = c;
  *n_out = n;
  return 0;
}

/* Little-endian appends for the COLMAP binary files. */
struct obuf {
  unsigned char *p;
  size_t n, cap;
  int oom;
};

static void put(struct obuf *b, const void *src, size_t n) {
  if (b->oom) return;
  if (b->n + n > b->cap) {
    size_t cap = b->cap ? 2 * b->cap : 4096;
    while (cap < b->n + n) cap *= 2;
    unsigned char *q = realloc(b->p, cap);
    if (!q) {
      b->oom = 1;
      return;
    }
    b->p = q;
    b->cap = cap;
  }
  memcpy(b->p + b->n, src, n); /* x86-64 and aarch64: little-endian like the format */
  b->n += n;
}
static void put_u64(struct obuf *b, uint64_t v) { put(b, &v, 8); }
static void put_i32(struct obuf *b, int32_t v) { put(b, &v, 4); }
static void put_f64(struct obuf *b, double v) { put(b, &v, 8); }

static int write_buf(const char *dir, const char *name, struct obuf *b, struct sw_err *err) {
  char path[4200];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  int rc = b->oom ? sw_err_set(err, SW_ENOMEM, "scene generator: out of memory for %s", path)
                  : sw_fs_write_atomic(path, b->p, b->n, err);
  free(b->p);
  memset(b, 0, sizeof *b);
  return rc;
}

/* sparse/0/{cameras,images,points3D}.{bin,txt}: one camera (RADIAL when distorted, else PINHOLE)
 * shared by every view. */
int gs_gen_write_colmap(const char *out_dir, const struct gs_gen_opts *o,
                        const struct gs_gen_world *s, int binary, struct sw_err *err) {
  char dir[4200];
  snprintf(dir, sizeof dir, "%s/sparse/0", out_dir);
  int rc = sw_fs_mkdir_p(dir, err);
  if (rc) return rc;
  struct gs_gen_lens l;
  gs_gen_lens_of(o, &l);
  int radial = o->lens == GS_GEN_LENS_DISTORTED;
  float *pts = NULL;
  uint8_t *cols = NULL;
  uint32_t np = 0;
  if (sample_points(s, o, &pts, &cols, &np))
    return sw_err_set(err, SW_ENOMEM, "scene generator: out of memory for the point cloud");
  struct obuf b = {0};
  char line[1400];
  static const char images_hdr[] = "# IMAGE_ID QW QX QY QZ TX TY TZ CAMERA_ID NAME / POINTS2D[]\n";
  static const char points_hdr[] = "# POINT3D_ID X Y Z R G B ERROR TRACK[]\n";
  if (binary) {
    put_u64(&b, 1);
    put_i32(&b, 1);
    put_i32(&b, radial ? 3 : 1);
    put_u64(&b, o->resolution);
    put_u64(&b, o->resolution);
    if (radial) {
      double p[5] = {l.f, l.cx, l.cy, l.k1, l.k2};
      for (int k = 0; k < 5; k++) put_f64(&b, p[k]);
    } else {
      double p[4] = {l.f, l.f, l.cx, l.cy};
      for (int k = 0; k < 4; k++) put_f64(&b, p[k]);
    }
  } else {
    const char *hdr = "# Camera list with one line of data per camera:\n"
                      "#   CAMERA_ID, MODEL, WIDTH, HEIGHT, PARAMS[]\n";
    put(&b, hdr, strlen(hdr));
    int n =
        radial ? snprintf(line, sizeof line, "1 RADIAL %u %u %.9g %.9g %.9g %.9g %.9g\n",
                          o->resolution, o->resolution, (double)l.f, (double)l.cx, (double)l.cy,
                          (double)l.k1, (double)l.k2)
               : snprintf(line, sizeof line, "1 PINHOLE %u %u %.9g %.9g %.9g %.9g\n", o->resolution,
                          o->resolution, (double)l.f, (double)l.f, (double)l.cx, (double)l.cy);
    put(&b, line, (size_t)n);
  }
  rc = write_buf(dir, binary ? "cameras.bin" : "cameras.txt", &b, err);
  if (binary)
    put_u64(&b, o->train_views);
  else
    put(&b, images_hdr, strlen(images_hdr));
  for (uint32_t v = 0; v < o->train_views && !rc; v++) {
    float c2w[16];
    gs_gen_view_c2w(o, 0, v, c2w);
    struct gs_camera cam;
    rc = gs_camera_from_c2w_gl(c2w, &cam, err);
    double q[4];
    rot_to_quat(cam.viewmat, q);
    char name[64];
    snprintf(name, sizeof name, GS_GEN_IMAGE_NAME, v);
    if (binary) {
      put_i32(&b, (int32_t)v + 1);
      for (int k = 0; k < 4; k++) put_f64(&b, q[k]);
      for (int k = 0; k < 3; k++) put_f64(&b, cam.viewmat[4 * k + 3]);
      put_i32(&b, 1);
      put(&b, name, strlen(name) + 1);
      put_u64(&b, 0);
    } else {
      int n = snprintf(line, sizeof line, "%u %.17g %.17g %.17g %.17g %.9g %.9g %.9g 1 %s\n\n",
                       v + 1, q[0], q[1], q[2], q[3], (double)cam.viewmat[3],
                       (double)cam.viewmat[7], (double)cam.viewmat[11], name);
      put(&b, line, (size_t)n);
    }
  }
  if (!rc) rc = write_buf(dir, binary ? "images.bin" : "images.txt", &b, err);
  if (binary)
    put_u64(&b, np);
  else
    put(&b, points_hdr, strlen(points_hdr));
  for (uint32_t i = 0; i < np && !rc; i++) {
    const float *p = pts + 3 * (size_t)i;
    const uint8_t *c = cols + 3 * (size_t)i;
    if (binary) {
      put_u64(&b, i + 1);
      for (int k = 0; k < 3; k++) put_f64(&b, p[k]);
      put(&b, c, 3);
      put_f64(&b, 0.5);
      put_u64(&b, 0);
    } else {
      int n = snprintf(line, sizeof line, "%u %.9g %.9g %.9g %u %u %u 0.5\n", i + 1, (double)p[0],
                       (double)p[1], (double)p[2], c[0], c[1], c[2]);
      put(&b, line, (size_t)n);
    }
  }
  if (!rc) rc = write_buf(dir, binary ? "points3D.bin" : "points3D.txt", &b, err);
  free(b.p);
  free(pts);
  free(cols);
  return rc;
}

void gs_gen_frame_append(json_t *frames, const struct gs_gen_opts *o, int test, uint32_t index,
                         const char *file_path) {
  float c2w[16];
  gs_gen_view_c2w(o, test, index, c2w);
  json_t *m = json_array();
  for (int r = 0; r < 4; r++)
    json_array_append_new(m, json_pack("[ffff]", (double)c2w[4 * r], (double)c2w[4 * r + 1],
                                       (double)c2w[4 * r + 2], (double)c2w[4 * r + 3]));
  json_array_append_new(frames,
                        json_pack("{s:s, s:o}", "file_path", file_path, "transform_matrix", m));
}

/* transforms.json in the instant-ngp / nerfstudio form, intrinsics at the top level. */
int gs_gen_write_transforms(const char *out_dir, const struct gs_gen_opts *o, struct sw_err *err) {
  struct gs_gen_lens l;
  gs_gen_lens_of(o, &l);
  json_t *root =
      json_pack("{s:s, s:f, s:f, s:f, s:f, s:i, s:i, s:f, s:f, s:f, s:f}", "camera_model", "OPENCV",
                "fl_x", (double)l.f, "fl_y", (double)l.f, "cx", (double)l.cx, "cy", (double)l.cy,
                "w", (int)o->resolution, "h", (int)o->resolution, "k1", (double)l.k1, "k2",
                (double)l.k2, "p1", 0.0, "p2", 0.0);
  json_t *frames = json_array();
  for (uint32_t i = 0; root && frames && i < o->train_views; i++) {
    char fp[64];
    snprintf(fp, sizeof fp, "images/" GS_GEN_IMAGE_NAME, i);
    gs_gen_frame_append(frames, o, 0, i, fp);
  }
  json_object_set_new(root, "frames", frames);
  char *text = root ? json_dumps(root, JSON_INDENT(2) | JSON_REAL_PRECISION(9)) : NULL;
  json_decref(root);
  if (!text) return sw_err_set(err, SW_ENOMEM, "scene generator: out of memory for the json");
  char path[4200];
  snprintf(path, sizeof path, "%s/transforms.json", out_dir);
  int rc = sw_fs_write_atomic(path, text, strlen(text), err);
  free(text);
  return rc;
}
