/* gs_scene_colmap.c: COLMAP sparse models (DIR/sparse/0/ or DIR/sparse/, with the images in
 * DIR/images/), binary or text, as COLMAP's own reader and writer define them:
 *   cameras.bin   u64 n; n x {i32 camera_id, i32 model_id, u64 width, u64 height, f64 params[]}
 *   images.bin    u64 n; n x {i32 image_id, f64 qw qx qy qz, f64 tx ty tz, i32 camera_id,
 *                 name NUL-terminated, u64 n2d, n2d x {f64 x, f64 y, i64 point3d_id}}
 *   points3D.bin  u64 n; n x {u64 id, f64 x y z, u8 r g b, f64 error, u64 track_len,
 *                 track_len x {i32 image_id, i32 point2d_idx}}
 *   (little-endian); the .txt files hold the same fields one record per line ("#" comments;
 *   images.txt has a second line per image with its 2D points, possibly empty).
 * The pose is world-to-camera in OpenCV axes, x_cam = R(q) x + t, so it is our viewmat as it is;
 * COLMAP's pixel centres are at i + 0.5 like ours. Camera models (params in COLMAP's order):
 *   SIMPLE_PINHOLE f cx cy; PINHOLE fx fy cx cy; SIMPLE_RADIAL f cx cy k; RADIAL f cx cy k1 k2;
 *   OPENCV fx fy cx cy k1 k2 p1 p2. Others are refused by name. Images are sorted by name, so the
 * held-out split (every 8th) is the Mip-NeRF 360 one. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gs_scene_int.h"

static const struct {
  const char *name;
  int nparams;
  int supported;
} models[] = {{"SIMPLE_PINHOLE", 3, 1},
              {"PINHOLE", 4, 1},
              {"SIMPLE_RADIAL", 4, 1},
              {"RADIAL", 5, 1},
              {"OPENCV", 8, 1},
              {"OPENCV_FISHEYE", 8, 0},
              {"FULL_OPENCV", 12, 0},
              {"FOV", 5, 0},
              {"SIMPLE_RADIAL_FISHEYE", 4, 0},
              {"RADIAL_FISHEYE", 5, 0},
              {"THIN_PRISM_FISHEYE", 12, 0},
              {"RAD_TAN_THIN_PRISM_FISHEYE", 16, 0}};
#define N_MODELS ((int)(sizeof models / sizeof models[0]))
#define SUPPORTED_MODELS "SIMPLE_PINHOLE, PINHOLE, SIMPLE_RADIAL, RADIAL, OPENCV"

struct cam {
  int32_t id;
  struct gs_intrinsics in;
};

struct img {
  int32_t camera_id;
  double q[4], t[3];
  char name[1024];
};

struct model {
  struct cam *cams;
  uint32_t n_cams;
  struct img *imgs;
  uint32_t n_imgs;
};

/* Fills intrinsics from COLMAP's params of a supported model. */
static void set_params(int model, const double *p, struct gs_intrinsics *in) {
  switch (model) {
  case 0: in->fx = in->fy = p[0], in->cx = p[1], in->cy = p[2]; break;
  case 1: in->fx = p[0], in->fy = p[1], in->cx = p[2], in->cy = p[3]; break;
  case 2: in->fx = in->fy = p[0], in->cx = p[1], in->cy = p[2], in->k[0] = p[3]; break;
  case 3:
    in->fx = in->fy = p[0], in->cx = p[1], in->cy = p[2], in->k[0] = p[3], in->k[1] = p[4];
    break;
  case 4:
    in->fx = p[0], in->fy = p[1], in->cx = p[2], in->cy = p[3];
    in->k[0] = p[4], in->k[1] = p[5], in->p[0] = p[6], in->p[1] = p[7];
    break;
  default: break;
  }
}

static int check_cam(const char *path, const char *where, const struct gs_intrinsics *in,
                     struct sw_err *err) {
  if (!(in->fx > 0) || !(in->fy > 0) || !isfinite(in->cx) || !isfinite(in->cy) ||
      !isfinite(in->fx) || !isfinite(in->fy))
    return sw_err_set(err, SW_EINVAL,
                      "%s: %s: focal length must be positive and the principal "
                      "point finite",
                      path, where);
  for (int i = 0; i < 4; i++)
    if (!isfinite(in->k[i]))
      return sw_err_set(err, SW_EINVAL, "%s: %s: distortion not finite", path, where);
  if (in->w == 0 || in->h == 0 || in->w > 65536 || in->h > 65536)
    return sw_err_set(err, SW_EINVAL, "%s: %s: image size %ux%u out of range 1..65536", path, where,
                      in->w, in->h);
  return 0;
}

/* ---- binary ---- */

struct rd {
  const unsigned char *p;
  size_t len, off;
  const char *path;
  struct sw_err *err;
};

/* Takes n bytes; on a short file sets a "truncated" error naming the byte offset and the field. */
static const unsigned char *take(struct rd *r, size_t n, const char *what) {
  if (r->len - r->off < n) {
    sw_err_set(r->err, SW_EINVAL, "%s: truncated at byte %zu of %zu (reading %s)", r->path, r->off,
               r->len, what);
    return NULL;
  }
  const unsigned char *p = r->p + r->off;
  r->off += n;
  return p;
}

static int u64(struct rd *r, uint64_t *v, const char *what) {
  const unsigned char *p = take(r, 8, what);
  if (!p) return SW_EINVAL;
  *v = 0;
  for (int i = 7; i >= 0; i--) *v = (*v << 8) | p[i];
  return 0;
}

static int i32(struct rd *r, int32_t *v, const char *what) {
  const unsigned char *p = take(r, 4, what);
  if (!p) return SW_EINVAL;
  uint32_t u = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
  memcpy(v, &u, 4);
  return 0;
}

static int f64(struct rd *r, double *v, const char *what) {
  uint64_t u;
  if (u64(r, &u, what)) return SW_EINVAL;
  memcpy(v, &u, 8);
  return 0;
}

/* A count that the rest of the file could hold at min_bytes each (so a damaged count does not
 * allocate). */
static int count(struct rd *r, size_t min_bytes, uint64_t *n, const char *what) {
  if (u64(r, n, what)) return SW_EINVAL;
  if (*n > (r->len - r->off) / min_bytes)
    return sw_err_set(r->err, SW_EINVAL,
                      "%s: truncated: %s %llu needs more than the %zu bytes "
                      "left at byte %zu",
                      r->path, what, (unsigned long long)*n, r->len - r->off, r->off);
  return 0;
}

static int load(const char *dir, const char *rel, struct rd *r, char **data, const char *path,
                struct sw_err *err) {
  size_t len = 0;
  int rc = gs_scene_read_file(dir, rel, GS_SCENE_META_MAX, data, &len, err);
  if (rc) return rc;
  *r = (struct rd){(const unsigned char *)*data, len, 0, path, err};
  return 0;
}

static int model_named(int id, const char *path, const char *where, struct sw_err *err) {
  if (id < 0 || id >= N_MODELS)
    return sw_err_set(err, SW_EINVAL,
                      "%s: %s: unknown camera model id %d (supported: " SUPPORTED_MODELS ")", path,
                      where, id);
  if (!models[id].supported)
    return sw_err_set(err, SW_EINVAL,
                      "%s: %s: camera model %s is not supported (supported: " SUPPORTED_MODELS
                      "; undistort with COLMAP's image_undistorter first)",
                      path, where, models[id].name);
  return 0;
}

static int cameras_bin(const char *dir, const char *rel, const char *path, struct model *m,
                       struct sw_err *err) {
  char *data = NULL;
  struct rd r;
  int rc = load(dir, rel, &r, &data, path, err);
  if (rc) return rc;
  uint64_t n;
  rc = count(&r, 24, &n, "the camera count");
  if (!rc && !(m->cams = calloc(n ? n : 1, sizeof *m->cams)))
    rc = sw_err_set(err, SW_ENOMEM, "oom");
  for (uint64_t i = 0; i < n && !rc; i++) {
    struct cam *c = &m->cams[i];
    int32_t model;
    uint64_t w, h;
    char where[48];
    snprintf(where, sizeof where, "camera %llu (byte %zu)", (unsigned long long)i, r.off);
    rc = i32(&r, &c->id, "a camera id");
    if (!rc) rc = i32(&r, &model, "a camera model");
    if (!rc) rc = model_named(model, path, where, err);
    if (!rc) rc = u64(&r, &w, "a camera width");
    if (!rc) rc = u64(&r, &h, "a camera height");
    double p[16];
    for (int k = 0; !rc && k < models[model].nparams; k++) rc = f64(&r, &p[k], "camera params");
    if (rc) break;
    c->in.w = w > 65536 ? 0 : (uint32_t)w;
    c->in.h = h > 65536 ? 0 : (uint32_t)h;
    set_params(model, p, &c->in);
    rc = check_cam(path, where, &c->in, err);
    m->n_cams++;
  }
  free(data);
  return rc;
}

static int images_bin(const char *dir, const char *rel, const char *path, struct model *m,
                      struct sw_err *err) {
  char *data = NULL;
  struct rd r;
  int rc = load(dir, rel, &r, &data, path, err);
  if (rc) return rc;
  uint64_t n;
  rc = count(&r, 73, &n, "the image count");
  if (!rc && !(m->imgs = calloc(n ? n : 1, sizeof *m->imgs)))
    rc = sw_err_set(err, SW_ENOMEM, "oom");
  for (uint64_t i = 0; i < n && !rc; i++) {
    struct img *im = &m->imgs[i];
    int32_t id;
    rc = i32(&r, &id, "an image id");
    for (int k = 0; k < 4 && !rc; k++) rc = f64(&r, &im->q[k], "a rotation");
    for (int k = 0; k < 3 && !rc; k++) rc = f64(&r, &im->t[k], "a translation");
    if (!rc) rc = i32(&r, &im->camera_id, "a camera id");
    if (rc) break;
    const unsigned char *s = r.p + r.off, *nul = memchr(s, 0, r.len - r.off);
    if (!nul) {
      rc = sw_err_set(err, SW_EINVAL, "%s: truncated at byte %zu (reading the name of image %llu)",
                      path, r.off, (unsigned long long)i);
      break;
    }
    size_t nl = (size_t)(nul - s);
    if (nl == 0 || nl >= sizeof im->name) {
      rc = sw_err_set(err, SW_EINVAL,
                      "%s: image %llu at byte %zu: name is empty or longer than %zu "
                      "bytes",
                      path, (unsigned long long)i, r.off, sizeof im->name - 1);
      break;
    }
    memcpy(im->name, s, nl);
    r.off += nl + 1;
    uint64_t n2d;
    rc = count(&r, 24, &n2d, "a 2D point count");
    if (!rc && !take(&r, 24 * n2d, "2D points")) rc = SW_EINVAL;
    m->n_imgs++;
  }
  free(data);
  return rc;
}

static int points_bin(const char *dir, const char *rel, const char *path, struct gs_scene_desc *d,
                      struct sw_err *err) {
  char *data = NULL;
  struct rd r;
  int rc = load(dir, rel, &r, &data, path, err);
  if (rc) return rc;
  uint64_t n;
  rc = count(&r, 51, &n, "the point count");
  if (!rc && n > UINT32_MAX)
    rc = sw_err_set(err, SW_EINVAL, "%s: %llu points", path, (unsigned long long)n);
  if (!rc) {
    d->points = malloc(3 * sizeof(float) * (n ? n : 1));
    d->colors = malloc(3 * (n ? n : 1));
    if (!d->points || !d->colors) rc = sw_err_set(err, SW_ENOMEM, "%s: out of memory", path);
  }
  for (uint64_t i = 0; i < n && !rc; i++) {
    uint64_t id, tl;
    double x[3], e;
    rc = u64(&r, &id, "a point id");
    for (int k = 0; k < 3 && !rc; k++) rc = f64(&r, &x[k], "a point position");
    const unsigned char *c = rc ? NULL : take(&r, 3, "a point colour");
    if (!c) rc = SW_EINVAL;
    if (!rc) rc = f64(&r, &e, "a point error");
    if (!rc) rc = count(&r, 8, &tl, "a track length");
    if (!rc && !take(&r, 8 * tl, "a track")) rc = SW_EINVAL;
    if (rc) break;
    if (!isfinite(x[0]) || !isfinite(x[1]) || !isfinite(x[2])) {
      rc = sw_err_set(err, SW_EINVAL, "%s: point %llu is not finite", path, (unsigned long long)id);
      break;
    }
    for (int k = 0; k < 3; k++) {
      d->points[3 * d->n_points + k] = (float)x[k];
      d->colors[3 * d->n_points + k] = c[k];
    }
    d->n_points++;
  }
  free(data);
  return rc;
}

/* ---- text ---- */

struct tx {
  char *line; /* the current line (NUL-terminated in place) */
  char *pos;  /* parse position within it */
  char *next; /* start of the next line */
  int lineno;
  const char *path;
  struct sw_err *err;
};

/* Advances to the next line; returns 0 at the end of the text. skip_blank: comment and blank
 * lines are skipped (a POINTS2D line may be blank and is not skipped). */
static int next_line(struct tx *t, int skip_blank) {
  while (t->next && *t->next) {
    t->line = t->next;
    char *nl = strchr(t->line, '\n');
    if (nl) {
      *nl = '\0';
      t->next = nl + 1;
    } else {
      t->next = NULL;
    }
    size_t l = strlen(t->line);
    if (l && t->line[l - 1] == '\r') t->line[l - 1] = '\0';
    t->lineno++;
    t->pos = t->line;
    const char *s = t->line + strspn(t->line, " \t");
    if (!skip_blank || (*s && *s != '#')) return 1;
  }
  return 0;
}

static int tx_fail(struct tx *t, const char *what) {
  return sw_err_set(t->err, SW_EINVAL, "%s:%d:%d: expected %s", t->path, t->lineno,
                    (int)(t->pos - t->line) + 1, what);
}

static int tx_double(struct tx *t, double *v, const char *what) {
  t->pos += strspn(t->pos, " \t");
  char *end;
  errno = 0;
  *v = strtod(t->pos, &end);
  if (end == t->pos || errno || !isfinite(*v) || (*end && *end != ' ' && *end != '\t'))
    return tx_fail(t, what);
  t->pos = end;
  return 0;
}

static int tx_long(struct tx *t, long long *v, const char *what) {
  t->pos += strspn(t->pos, " \t");
  char *end;
  errno = 0;
  *v = strtoll(t->pos, &end, 10);
  if (end == t->pos || errno || (*end && *end != ' ' && *end != '\t')) return tx_fail(t, what);
  t->pos = end;
  return 0;
}

static int tx_word(struct tx *t, char *out, size_t cap, const char *what) {
  t->pos += strspn(t->pos, " \t");
  size_t n = strcspn(t->pos, " \t");
  if (n == 0 || n >= cap) return tx_fail(t, what);
  memcpy(out, t->pos, n);
  out[n] = '\0';
  t->pos += n;
  return 0;
}

static int tx_open(const char *dir, const char *rel, const char *path, struct tx *t, char **data,
                   struct sw_err *err) {
  size_t len = 0;
  int rc = gs_scene_read_file(dir, rel, GS_SCENE_META_MAX, data, &len, err);
  if (rc) return rc;
  if (memchr(*data, 0, len))
    return sw_err_set(err, SW_EINVAL, "%s: binary data in a text file", path);
  *t = (struct tx){.next = *data, .path = path, .err = err};
  return 0;
}

static int grow(void **arr, uint32_t n, size_t size, struct sw_err *err) {
  if (n & (n - 1)) return 0; /* capacity doubles at powers of two */
  void *p = realloc(*arr, (size_t)(n ? 2 * n : 1) * size);
  if (!p) return sw_err_set(err, SW_ENOMEM, "out of memory");
  *arr = p;
  return 0;
}

static int cameras_txt(const char *dir, const char *rel, const char *path, struct model *m,
                       struct sw_err *err) {
  char *data = NULL;
  struct tx t;
  int rc = tx_open(dir, rel, path, &t, &data, err);
  while (!rc && next_line(&t, 1)) {
    if ((rc = grow((void **)&m->cams, m->n_cams, sizeof *m->cams, err))) break;
    struct cam *c = &m->cams[m->n_cams];
    memset(c, 0, sizeof *c);
    long long id, w, h;
    char name[64];
    rc = tx_long(&t, &id, "a camera id");
    char *model_at = t.pos;
    if (!rc) rc = tx_word(&t, name, sizeof name, "a camera model name");
    int model = -1;
    for (int k = 0; !rc && k < N_MODELS; k++)
      if (!strcmp(name, models[k].name)) model = k;
    if (!rc && model < 0) {
      t.pos = model_at + strspn(model_at, " \t");
      rc = sw_err_set(err, SW_EINVAL,
                      "%s:%d:%d: unknown camera model %s (supported: " SUPPORTED_MODELS ")", path,
                      t.lineno, (int)(t.pos - t.line) + 1, name);
    }
    if (!rc && !models[model].supported) {
      t.pos = model_at + strspn(model_at, " \t");
      rc = sw_err_set(err, SW_EINVAL,
                      "%s:%d:%d: camera model %s is not supported (supported: " SUPPORTED_MODELS
                      "; undistort with COLMAP's image_undistorter first)",
                      path, t.lineno, (int)(t.pos - t.line) + 1, name);
    }
    if (!rc) rc = tx_long(&t, &w, "a width");
    if (!rc) rc = tx_long(&t, &h, "a height");
    double p[16];
    for (int k = 0; !rc && k < models[model].nparams; k++)
      rc = tx_double(&t, &p[k], "a camera parameter");
    if (rc) break;
    t.pos += strspn(t.pos, " \t");
    if (*t.pos) {
      rc = sw_err_set(err, SW_EINVAL, "%s:%d:%d: %s takes %d parameters; unexpected '%.20s'", path,
                      t.lineno, (int)(t.pos - t.line) + 1, name, models[model].nparams, t.pos);
      break;
    }
    c->id = (int32_t)id;
    c->in.w = w > 0 && w <= 65536 ? (uint32_t)w : 0;
    c->in.h = h > 0 && h <= 65536 ? (uint32_t)h : 0;
    set_params(model, p, &c->in);
    char where[32];
    snprintf(where, sizeof where, "line %d", t.lineno);
    rc = check_cam(path, where, &c->in, err);
    m->n_cams++;
  }
  free(data);
  return rc;
}

static int images_txt(const char *dir, const char *rel, const char *path, struct model *m,
                      struct sw_err *err) {
  char *data = NULL;
  struct tx t;
  int rc = tx_open(dir, rel, path, &t, &data, err);
  while (!rc && next_line(&t, 1)) {
    if ((rc = grow((void **)&m->imgs, m->n_imgs, sizeof *m->imgs, err))) break;
    struct img *im = &m->imgs[m->n_imgs];
    memset(im, 0, sizeof *im);
    long long id, cid;
    rc = tx_long(&t, &id, "an image id");
    for (int k = 0; k < 4 && !rc; k++) rc = tx_double(&t, &im->q[k], "a rotation QW QX QY QZ");
    for (int k = 0; k < 3 && !rc; k++) rc = tx_double(&t, &im->t[k], "a translation TX TY TZ");
    if (!rc) rc = tx_long(&t, &cid, "a camera id");
    if (rc) break;
    /* The name is the rest of the line (it may hold spaces). */
    t.pos += strspn(t.pos, " \t");
    size_t nl = strlen(t.pos);
    while (nl && (t.pos[nl - 1] == ' ' || t.pos[nl - 1] == '\t')) nl--;
    if (nl == 0 || nl >= sizeof im->name) {
      rc = tx_fail(&t, "an image name");
      break;
    }
    memcpy(im->name, t.pos, nl);
    im->camera_id = (int32_t)cid;
    m->n_imgs++;
    next_line(&t, 0); /* its POINTS2D line, not needed */
  }
  free(data);
  return rc;
}

static int points_txt(const char *dir, const char *rel, const char *path, struct gs_scene_desc *d,
                      struct sw_err *err) {
  char *data = NULL;
  struct tx t;
  int rc = tx_open(dir, rel, path, &t, &data, err);
  while (!rc && next_line(&t, 1)) {
    if ((rc = grow((void **)&d->points, d->n_points, 3 * sizeof(float), err))) break;
    if ((rc = grow((void **)&d->colors, d->n_points, 3, err))) break;
    long long id, c[3];
    double x[3], e;
    rc = tx_long(&t, &id, "a point id");
    for (int k = 0; k < 3 && !rc; k++) rc = tx_double(&t, &x[k], "a position X Y Z");
    for (int k = 0; k < 3 && !rc; k++) {
      rc = tx_long(&t, &c[k], "a colour R G B");
      if (!rc && (c[k] < 0 || c[k] > 255)) rc = tx_fail(&t, "a colour in 0..255");
    }
    if (!rc) rc = tx_double(&t, &e, "an error");
    if (rc) break;
    for (int k = 0; k < 3; k++) {
      d->points[3 * d->n_points + k] = (float)x[k];
      d->colors[3 * d->n_points + k] = (uint8_t)c[k];
    }
    d->n_points++;
  }
  free(data);
  return rc;
}

/* ---- the scene ---- */

static int by_name(const void *a, const void *b) {
  return strcmp(((const struct img *)a)->name, ((const struct img *)b)->name);
}

/* Rotation of a unit quaternion (w, x, y, z), normalised first. */
static void quat_to_r(const double q0[4], double r[3][3]) {
  double n = sqrt(q0[0] * q0[0] + q0[1] * q0[1] + q0[2] * q0[2] + q0[3] * q0[3]);
  double w = q0[0] / n, x = q0[1] / n, y = q0[2] / n, z = q0[3] / n;
  r[0][0] = 1 - 2 * (y * y + z * z), r[0][1] = 2 * (x * y - w * z), r[0][2] = 2 * (x * z + w * y);
  r[1][0] = 2 * (x * y + w * z), r[1][1] = 1 - 2 * (x * x + z * z), r[1][2] = 2 * (y * z - w * x);
  r[2][0] = 2 * (x * z - w * y), r[2][1] = 2 * (y * z + w * x), r[2][2] = 1 - 2 * (x * x + y * y);
}

int gs_scene_read_colmap(const char *dir, const char *sparse, int binary, uint32_t scale,
                         struct gs_scene_desc *d, struct sw_err *err) {
  d->format = binary ? "COLMAP binary" : "COLMAP text";
  const char *ext = binary ? "bin" : "txt";
  char rel[3][64], path[3][GS_SCENE_PATH_MAX + 96];
  const char *names[3] = {"cameras", "images", "points3D"};
  for (int i = 0; i < 3; i++) {
    snprintf(rel[i], sizeof rel[i], "%s/%s.%s", sparse, names[i], ext);
    snprintf(path[i], sizeof path[i], "%s/%s", dir, rel[i]);
  }
  struct model m = {0};
  int rc = binary ? cameras_bin(dir, rel[0], path[0], &m, err)
                  : cameras_txt(dir, rel[0], path[0], &m, err);
  if (!rc)
    rc = binary ? images_bin(dir, rel[1], path[1], &m, err)
                : images_txt(dir, rel[1], path[1], &m, err);
  if (!rc && gs_scene_exists(dir, rel[2]))
    rc = binary ? points_bin(dir, rel[2], path[2], d, err)
                : points_txt(dir, rel[2], path[2], d, err);
  if (!rc && m.n_imgs == 0) rc = sw_err_set(err, SW_EINVAL, "%s: no images", path[1]);
  if (rc) goto done;
  for (int i = 0; i < 3; i++)
    if (i < 2 || gs_scene_exists(dir, rel[i]))
      snprintf(d->meta[d->n_meta++], sizeof d->meta[0], "%s", rel[i]);
  /* images_N/ holds the images downscaled by N (the Mip-NeRF 360 layout). */
  char image_dir[32] = "images";
  int prescaled = 0;
  if (scale == 2 || scale == 4 || scale == 8) {
    char alt[32];
    snprintf(alt, sizeof alt, "images_%u", scale);
    if (gs_scene_exists(dir, alt)) {
      snprintf(image_dir, sizeof image_dir, "%s", alt);
      prescaled = 1;
    }
  }
  qsort(m.imgs, m.n_imgs, sizeof *m.imgs, by_name);
  struct gs_scene_frame *f = gs_scene_desc_add(d, m.n_imgs, err);
  if (!f) {
    rc = SW_ENOMEM;
    goto done;
  }
  for (uint32_t i = 0; i < m.n_imgs && !rc; i++) {
    const struct img *im = &m.imgs[i];
    const struct cam *c = NULL;
    for (uint32_t k = 0; k < m.n_cams && !c; k++)
      if (m.cams[k].id == im->camera_id) c = &m.cams[k];
    if (!c) {
      rc = sw_err_set(err, SW_EINVAL, "%s: image %s names camera %d, which %s/%s does not hold",
                      path[1], im->name, im->camera_id, dir, rel[0]);
      break;
    }
    if (gs_scene_path_unsafe(im->name)) {
      rc = sw_err_set(err, SW_EINVAL, "%s: image name '%s' leaves the images folder", path[1],
                      im->name);
      break;
    }
    snprintf(f[i].file, sizeof f[i].file, "%s/%s", image_dir, im->name);
    if (!gs_scene_exists(dir, f[i].file)) {
      rc = sw_err_set(err, SW_ENOTFOUND, "%s: image %s/%s: no such file", path[1], dir, f[i].file);
      break;
    }
    double r[3][3], n2 = 0;
    for (int k = 0; k < 4; k++) n2 += im->q[k] * im->q[k];
    if (!isfinite(n2) || !isfinite(im->t[0]) || !isfinite(im->t[1]) || !isfinite(im->t[2])) {
      rc = sw_err_set(err, SW_EINVAL, "%s: image %s: rotation or translation not finite", path[1],
                      im->name);
      break;
    }
    if (!(n2 > 1e-12)) {
      rc = sw_err_set(err, SW_EINVAL, "%s: image %s: zero rotation quaternion", path[1], im->name);
      break;
    }
    quat_to_r(im->q, r);
    for (int a = 0; a < 3; a++) {
      for (int b = 0; b < 3; b++) f[i].viewmat[4 * a + b] = (float)r[a][b];
      f[i].viewmat[4 * a + 3] = (float)im->t[a];
      /* campos = -R^T t */
      f[i].campos[a] = (float)-(r[0][a] * im->t[0] + r[1][a] * im->t[1] + r[2][a] * im->t[2]);
    }
    f[i].viewmat[15] = 1.0f;
    f[i].in = c->in;
    f[i].prescaled = prescaled;
  }
done:
  if (rc && err) sw_err_prefix(err, "%s", d->format); /* "COLMAP text: FILE:LINE:COL: ..." */
  free(m.cams);
  free(m.imgs);
  return rc;
}
