/* gs_scene.c: the NeRF-synthetic scene loader, camera conversion, scene hash and archive
 * unpacking (see gs_scene.h for the layout and conventions). */
#include "gs_scene.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <limits.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gs_model.h"
#include "gs_png.h"
#include "sw_fs.h"

#define PATH_MAX_LEN 4096

/* ---- cameras ---- */

int gs_camera_from_c2w_gl(const float c2w[16], struct gs_camera *cam, struct sw_err *err) {
  /* OpenGL camera axes (x right, y up, looking down -z) -> OpenCV (x right, y down, +z forward):
   * negate the y and z columns of the rotation, then invert the rigid transform. */
  double r[3][3], t[3];
  for (int i = 0; i < 3; i++) {
    r[i][0] = c2w[4 * i + 0];
    r[i][1] = -c2w[4 * i + 1];
    r[i][2] = -c2w[4 * i + 2];
    t[i] = c2w[4 * i + 3];
  }
  /* General 3x3 inverse (not just the transpose) so a slightly non-orthonormal matrix stays a
   * correct inverse of what the file says. */
  double det = r[0][0] * (r[1][1] * r[2][2] - r[1][2] * r[2][1]) -
               r[0][1] * (r[1][0] * r[2][2] - r[1][2] * r[2][0]) +
               r[0][2] * (r[1][0] * r[2][1] - r[1][1] * r[2][0]);
  if (!isfinite(det) || fabs(det) < 1e-12)
    return sw_err_set(err, SW_EINVAL, "camera-to-world rotation is singular (det %g)", det);
  double inv[3][3];
  inv[0][0] = (r[1][1] * r[2][2] - r[1][2] * r[2][1]) / det;
  inv[0][1] = (r[0][2] * r[2][1] - r[0][1] * r[2][2]) / det;
  inv[0][2] = (r[0][1] * r[1][2] - r[0][2] * r[1][1]) / det;
  inv[1][0] = (r[1][2] * r[2][0] - r[1][0] * r[2][2]) / det;
  inv[1][1] = (r[0][0] * r[2][2] - r[0][2] * r[2][0]) / det;
  inv[1][2] = (r[0][2] * r[1][0] - r[0][0] * r[1][2]) / det;
  inv[2][0] = (r[1][0] * r[2][1] - r[1][1] * r[2][0]) / det;
  inv[2][1] = (r[0][1] * r[2][0] - r[0][0] * r[2][1]) / det;
  inv[2][2] = (r[0][0] * r[1][1] - r[0][1] * r[1][0]) / det;
  for (int i = 0; i < 3; i++) {
    double ti = 0;
    for (int j = 0; j < 3; j++) {
      cam->viewmat[4 * i + j] = (float)inv[i][j];
      ti -= inv[i][j] * t[j];
    }
    cam->viewmat[4 * i + 3] = (float)ti;
    cam->campos[i] = (float)t[i];
  }
  cam->viewmat[12] = cam->viewmat[13] = cam->viewmat[14] = 0.0f;
  cam->viewmat[15] = 1.0f;
  return 0;
}

int gs_camera_project(const struct gs_camera *cam, const float p[3], float *u, float *v,
                      float *depth) {
  const float *m = cam->viewmat;
  float x = m[0] * p[0] + m[1] * p[1] + m[2] * p[2] + m[3];
  float y = m[4] * p[0] + m[5] * p[1] + m[6] * p[2] + m[7];
  float z = m[8] * p[0] + m[9] * p[1] + m[10] * p[2] + m[11];
  if (depth) *depth = z;
  if (z <= GS_NEAR_Z) return -1;
  *u = cam->fx * x / z + cam->cx;
  *v = cam->fy * y / z + cam->cy;
  return 0;
}

/* ---- transforms json ---- */

struct frame {
  char file[PATH_MAX_LEN]; /* path relative to the scene directory */
  float c2w[16];
};

struct split {
  int present;
  double angle_x, angle_y; /* angle_y <= 0: not given */
  struct frame *frames;
  uint32_t n;
  int has_aabb;
  float aabb[6];
};

static void split_free(struct split *s) {
  free(s->frames);
  memset(s, 0, sizeof *s);
}

/* Joins the frame's file_path (without a leading "./") with ".png" when it has no extension. */
/* Returns -1 when the path does not fit: a cut path could name another file. */
static int frame_file(const char *fp, char *out, size_t cap) {
  while (fp[0] == '.' && fp[1] == '/') fp += 2;
  const char *slash = strrchr(fp, '/');
  const char *dot = strrchr(slash ? slash : fp, '.');
  int n = snprintf(out, cap, "%s%s", fp, dot ? "" : ".png");
  return n < 0 || (size_t)n >= cap ? -1 : 0;
}

/* 1 when a relative path has a ".." component (it could leave the scene directory). */
static int has_dotdot(const char *path) {
  const char *p = path;
  while (*p) {
    size_t len = strcspn(p, "/\\");
    if (len == 2 && p[0] == '.' && p[1] == '.') return 1;
    p += len;
    if (*p) p++;
  }
  return 0;
}

static int read_split(const char *dir, const char *file, int required, struct split *s,
                      struct sw_err *err) {
  memset(s, 0, sizeof *s);
  char path[PATH_MAX_LEN];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  if (!sw_fs_exists(path)) {
    if (!required) return 0;
    return sw_err_set(err, SW_ENOTFOUND, "%s: no such file (not a NeRF-synthetic scene?)", path);
  }
  json_error_t je;
  json_t *root = json_load_file(path, 0, &je);
  if (!root)
    return sw_err_set(err, SW_EINVAL, "%s:%d:%d: bad JSON: %s", path, je.line, je.column, je.text);
  int rc = 0;
  json_t *ax = json_object_get(root, "camera_angle_x");
  if (!json_is_object(root) || !json_is_number(ax) || !(json_number_value(ax) > 0) ||
      !(json_number_value(ax) < M_PI)) {
    rc = sw_err_set(err, SW_EINVAL, "%s: needs \"camera_angle_x\", a number in (0, pi)", path);
    goto done;
  }
  s->angle_x = json_number_value(ax);
  json_t *ay = json_object_get(root, "camera_angle_y");
  if (ay && !(json_is_number(ay) && json_number_value(ay) > 0 && json_number_value(ay) < M_PI)) {
    rc = sw_err_set(err, SW_EINVAL, "%s: \"camera_angle_y\" must be a number in (0, pi)", path);
    goto done;
  }
  s->angle_y = ay ? json_number_value(ay) : 0.0;
  json_t *aabb = json_object_get(root, "aabb");
  if (aabb) {
    int ok = json_is_array(aabb) && json_array_size(aabb) == 2;
    for (int i = 0; ok && i < 2; i++) {
      json_t *row = json_array_get(aabb, i);
      ok = json_is_array(row) && json_array_size(row) == 3;
      for (int k = 0; ok && k < 3; k++) {
        ok = json_is_number(json_array_get(row, k));
        if (ok) s->aabb[3 * i + k] = (float)json_number_value(json_array_get(row, k));
      }
    }
    for (int k = 0; ok && k < 3; k++) ok = s->aabb[k] < s->aabb[3 + k];
    if (!ok) {
      rc = sw_err_set(err, SW_EINVAL, "%s: \"aabb\" must be [[xmin,ymin,zmin],[xmax,ymax,zmax]]",
                      path);
      goto done;
    }
    s->has_aabb = 1;
  }
  json_t *frames = json_object_get(root, "frames");
  if (!json_is_array(frames) || json_array_size(frames) == 0) {
    rc = sw_err_set(err, SW_EINVAL, "%s: needs a non-empty \"frames\" array", path);
    goto done;
  }
  size_t n = json_array_size(frames);
  s->frames = calloc(n, sizeof *s->frames);
  if (!s->frames) {
    rc = sw_err_set(err, SW_ENOMEM, "%s: out of memory for %zu frames", path, n);
    goto done;
  }
  for (size_t i = 0; i < n; i++) {
    json_t *f = json_array_get(frames, i);
    json_t *fp = json_object_get(f, "file_path");
    json_t *tm = json_object_get(f, "transform_matrix");
    if (!json_is_string(fp) || json_string_length(fp) == 0) {
      rc = sw_err_set(err, SW_EINVAL, "%s: frame %zu has no \"file_path\" string", path, i);
      goto done;
    }
    const char *fps = json_string_value(fp);
    if (fps[0] == '/' || has_dotdot(fps)) {
      rc = sw_err_set(err, SW_EINVAL, "%s: frame %zu: file_path '%s' leaves the scene directory",
                      path, i, fps);
      goto done;
    }
    if (frame_file(fps, s->frames[i].file, sizeof s->frames[i].file)) {
      rc = sw_err_set(err, SW_EINVAL, "%s: frame %zu: file_path is longer than %zu bytes", path, i,
                      sizeof s->frames[i].file - 5);
      goto done;
    }
    int ok = json_is_array(tm) && json_array_size(tm) == 4;
    for (int r = 0; ok && r < 4; r++) {
      json_t *row = json_array_get(tm, r);
      ok = json_is_array(row) && json_array_size(row) == 4;
      for (int c = 0; ok && c < 4; c++) {
        json_t *v = json_array_get(row, c);
        ok = json_is_number(v) && isfinite(json_number_value(v));
        if (ok) s->frames[i].c2w[4 * r + c] = (float)json_number_value(v);
      }
    }
    if (!ok) {
      rc = sw_err_set(err, SW_EINVAL, "%s: frame %zu: \"transform_matrix\" must be 4x4 numbers",
                      path, i);
      goto done;
    }
  }
  s->n = (uint32_t)n;
  s->present = 1;
done:
  json_decref(root);
  if (rc) split_free(s);
  return rc;
}

/* ---- hashing ---- */

static int hash_files(const char *dir, const struct split *tr, const struct split *te,
                      char hex[SW_SHA256_HEX_LEN], struct sw_err *err) {
  struct sw_sha256 h;
  sw_sha256_init(&h);
  char path[PATH_MAX_LEN + 64];
  const char *json[2] = {"transforms_train.json", "transforms_test.json"};
  const struct split *sp[2] = {tr, te};
  for (int k = 0; k < 2; k++) {
    if (!sp[k]->present) continue;
    snprintf(path, sizeof path, "%s/%s", dir, json[k]);
    sw_sha256_update(&h, json[k], strlen(json[k]) + 1);
    int rc = sw_sha256_update_file(&h, path, err);
    if (rc) return rc;
  }
  for (int k = 0; k < 2; k++)
    for (uint32_t i = 0; i < sp[k]->n; i++) {
      const char *f = sp[k]->frames[i].file;
      snprintf(path, sizeof path, "%s/%s", dir, f);
      sw_sha256_update(&h, f, strlen(f) + 1);
      int rc = sw_sha256_update_file(&h, path, err);
      if (rc) return rc;
    }
  sw_sha256_final(&h, hex);
  return 0;
}

int gs_scene_hash(const char *dir, char hex[SW_SHA256_HEX_LEN], struct sw_err *err) {
  struct split tr, te;
  int rc = read_split(dir, "transforms_train.json", 1, &tr, err);
  if (rc) return rc;
  rc = read_split(dir, "transforms_test.json", 0, &te, err);
  if (!rc) rc = hash_files(dir, &tr, &te, hex, err);
  split_free(&tr);
  split_free(&te);
  return rc;
}

/* ---- images ---- */

/* Composites straight-alpha RGBA onto the background and box-averages by `scale`. */
static int load_image(const char *path, enum gs_background bg, uint32_t scale, uint32_t *w_out,
                      uint32_t *h_out, float **rgb_out, struct sw_err *err) {
  float *rgba = NULL;
  uint32_t w, h;
  int rc = gs_png_read_rgba(path, &rgba, &w, &h, NULL, err);
  if (rc) return rc;
  uint32_t ow = w / scale, oh = h / scale;
  if (ow == 0 || oh == 0) {
    free(rgba);
    return sw_err_set(err, SW_EINVAL, "%s: %ux%u image is smaller than the downscale factor %u",
                      path, w, h, scale);
  }
  float *rgb = malloc((size_t)ow * oh * 3 * sizeof(float));
  if (!rgb) {
    free(rgba);
    return sw_err_set(err, SW_ENOMEM, "%s: out of memory", path);
  }
  float b = bg == GS_BG_WHITE ? 1.0f : 0.0f;
  float inv = 1.0f / (float)(scale * scale);
  for (uint32_t y = 0; y < oh; y++)
    for (uint32_t x = 0; x < ow; x++) {
      float acc[3] = {0, 0, 0};
      for (uint32_t dy = 0; dy < scale; dy++)
        for (uint32_t dx = 0; dx < scale; dx++) {
          const float *p = rgba + 4 * ((size_t)(y * scale + dy) * w + (x * scale + dx));
          for (int c = 0; c < 3; c++) acc[c] += p[c] * p[3] + b * (1.0f - p[3]);
        }
      float *o = rgb + 3 * ((size_t)y * ow + x);
      for (int c = 0; c < 3; c++) o[c] = scale == 1 ? acc[c] : acc[c] * inv;
    }
  free(rgba);
  *w_out = ow;
  *h_out = oh;
  *rgb_out = rgb;
  return 0;
}

static void views_free(struct gs_view *v, uint32_t n) {
  if (!v) return;
  for (uint32_t i = 0; i < n; i++) free(v[i].rgb);
  free(v);
}

void gs_scene_destroy(struct gs_scene **scene) {
  if (!scene || !*scene) return;
  views_free((*scene)->train, (*scene)->n_train);
  views_free((*scene)->test, (*scene)->n_test);
  free(*scene);
  *scene = NULL;
}

/* Fills one view: camera from the frame, image unless skipped. The scene's size is set by the
 * first view that determines it; every later one must match. */
static int load_view(struct gs_scene *sc, const struct split *sp, const struct frame *f,
                     int skip_image, uint32_t scale, struct gs_view *v, struct sw_err *err) {
  char path[PATH_MAX_LEN + 64];
  snprintf(path, sizeof path, "%s/%s", sc->path, f->file);
  uint32_t w, h;
  int rc;
  if (skip_image) {
    if (sc->width == 0) {
      rc = gs_png_read_size(path, &w, &h, err);
      if (rc) return rc;
      w /= scale;
      h /= scale;
      if (!w || !h)
        return sw_err_set(err, SW_EINVAL, "%s: image smaller than the downscale factor %u", path,
                          scale);
    } else {
      if (!sw_fs_exists(path)) return sw_err_set(err, SW_ENOTFOUND, "%s: no such file", path);
      w = sc->width;
      h = sc->height;
    }
  } else {
    rc = load_image(path, sc->background, scale, &w, &h, &v->rgb, err);
    if (rc) return rc;
  }
  if (sc->width == 0) {
    sc->width = w;
    sc->height = h;
  } else if (w != sc->width || h != sc->height) {
    return sw_err_set(err, SW_EINVAL, "%s: image is %ux%u after downscale, other views are %ux%u",
                      path, w, h, sc->width, sc->height);
  }
  snprintf(v->name, sizeof v->name, "%s", f->file);
  rc = gs_camera_from_c2w_gl(f->c2w, &v->cam, err);
  if (rc) {
    sw_err_prefix(err, "%s: %s", sc->path, f->file);
    return rc;
  }
  v->cam.width = w;
  v->cam.height = h;
  v->cam.fx = (float)(0.5 * w / tan(0.5 * sp->angle_x));
  v->cam.fy = sp->angle_y > 0 ? (float)(0.5 * h / tan(0.5 * sp->angle_y)) : v->cam.fx;
  v->cam.cx = 0.5f * (float)w;
  v->cam.cy = 0.5f * (float)h;
  return 0;
}

/* Image decoding dominates loading (Lego: 100 PNGs of 800x800), so views load on a few threads.
 * The first view loads alone and fixes the scene's size; the others only compare against it.
 * Each task keeps its own error and the first failing view in frame order is reported, so the
 * message does not depend on thread timing. */
struct load_task {
  const struct split *sp;
  const struct frame *f;
  int skip;
  struct gs_view *v;
  int rc;
  struct sw_err err;
};

struct load_pool {
  struct gs_scene *sc;
  struct load_task *tasks;
  uint32_t n, next, scale;
  int failed;
  pthread_mutex_t lock;
};

static void *load_worker(void *arg) {
  struct load_pool *p = arg;
  for (;;) {
    pthread_mutex_lock(&p->lock);
    uint32_t i = p->next++;
    int stop = p->failed || i >= p->n;
    pthread_mutex_unlock(&p->lock);
    if (stop) break;
    struct load_task *t = &p->tasks[i];
    t->rc = load_view(p->sc, t->sp, t->f, t->skip, p->scale, t->v, &t->err);
    if (t->rc) {
      pthread_mutex_lock(&p->lock);
      p->failed = 1;
      pthread_mutex_unlock(&p->lock);
    }
  }
  return NULL;
}

static int load_views(struct gs_scene *sc, struct load_task *tasks, uint32_t n, uint32_t scale,
                      struct sw_err *err) {
  if (n == 0) return 0;
  tasks[0].rc = load_view(sc, tasks[0].sp, tasks[0].f, tasks[0].skip, scale, tasks[0].v,
                          &tasks[0].err);
  if (tasks[0].rc) return sw_err_set(err, tasks[0].rc, "%s", tasks[0].err.msg);
  struct load_pool p = {.sc = sc, .tasks = tasks, .n = n, .next = 1, .scale = scale};
  pthread_mutex_init(&p.lock, NULL);
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  uint32_t nt = cpus < 1 ? 1 : cpus > 8 ? 8 : (uint32_t)cpus;
  if (nt > n - 1) nt = n - 1;
  pthread_t th[8];
  uint32_t started = 0;
  for (uint32_t i = 1; i < nt; i++) {
    if (pthread_create(&th[started], NULL, load_worker, &p)) break;
    started++;
  }
  load_worker(&p); /* this thread works too */
  for (uint32_t i = 0; i < started; i++) pthread_join(th[i], NULL);
  pthread_mutex_destroy(&p.lock);
  for (uint32_t i = 0; i < n; i++)
    if (tasks[i].rc) return sw_err_set(err, tasks[i].rc, "%s", tasks[i].err.msg);
  return 0;
}

/* ---- archives ---- */

static int is_archive(const char *path) {
  static const char *ext[] = {".zip", ".tar.gz", ".tgz", ".tar", ".tar.xz", ".tar.bz2"};
  size_t n = strlen(path);
  for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++) {
    size_t e = strlen(ext[i]);
    if (n > e && !strcasecmp(path + n - e, ext[i])) return 1;
  }
  return 0;
}

/* Why an entry may not be unpacked, or NULL when it is a plain file or directory inside dest. */
static const char *entry_refusal(struct archive_entry *e) {
  const char *name = archive_entry_pathname(e);
  if (!name || !*name) return "empty name";
  if (name[0] == '/' || name[0] == '\\') return "absolute path";
  if (name[0] && name[1] == ':') return "drive path";
  if (has_dotdot(name)) return "'..' path component";
  if (archive_entry_hardlink(e)) return "hard link";
  mode_t type = archive_entry_filetype(e);
  if (type == AE_IFLNK) return "symbolic link";
  if (type != AE_IFREG && type != AE_IFDIR) return "special file";
  return NULL;
}

static struct archive *open_archive(const char *path, struct sw_err *err) {
  struct archive *a = archive_read_new();
  if (!a) {
    sw_err_set(err, SW_ENOMEM, "%s: out of memory for libarchive", path);
    return NULL;
  }
  archive_read_support_filter_all(a);
  archive_read_support_format_all(a);
  if (archive_read_open_filename(a, path, 1 << 16) != ARCHIVE_OK) {
    int missing = archive_errno(a) == ENOENT;
    sw_err_set(err, missing ? SW_ENOTFOUND : SW_EINVAL, "%s: cannot open archive: %s", path,
               archive_error_string(a));
    archive_read_free(a);
    return NULL;
  }
  return a;
}

int gs_scene_unpack(const char *archive_path, const char *dest_dir, struct sw_err *err) {
  /* Pass 1: check every entry, so that a bad archive writes nothing at all. */
  struct archive *a = open_archive(archive_path, err);
  if (!a) return err ? err->code : SW_EINVAL;
  struct archive_entry *e;
  int r, rc = 0, entries = 0;
  while ((r = archive_read_next_header(a, &e)) == ARCHIVE_OK) {
    const char *why = entry_refusal(e);
    if (why) {
      rc = sw_err_set(err, SW_EINVAL, "%s: refusing entry '%s': %s", archive_path,
                      archive_entry_pathname(e) ? archive_entry_pathname(e) : "", why);
      break;
    }
    entries++;
  }
  if (!rc && r != ARCHIVE_EOF)
    rc = sw_err_set(err, SW_EINVAL, "%s: corrupt archive: %s", archive_path,
                    archive_error_string(a));
  archive_read_free(a);
  if (rc) return rc;
  if (entries == 0) return sw_err_set(err, SW_EINVAL, "%s: empty archive", archive_path);

  rc = sw_fs_mkdir_p(dest_dir, err);
  if (rc) return rc;
  /* A canonical destination (no "..", no links) so libarchive's own checks apply to the entry
   * part of each path only. */
  char root[PATH_MAX_LEN];
  if (!realpath(dest_dir, root))
    return sw_err_set(err, SW_EIO, "%s: %s", dest_dir, strerror(errno));
  a = open_archive(archive_path, err);
  if (!a) return err ? err->code : SW_EINVAL;
  struct archive *w = archive_write_disk_new();
  if (!w) {
    archive_read_free(a);
    return sw_err_set(err, SW_ENOMEM, "out of memory for libarchive");
  }
  /* Defence in depth: libarchive's own checks on top of ours. */
  archive_write_disk_set_options(w, ARCHIVE_EXTRACT_SECURE_NODOTDOT |
                                        ARCHIVE_EXTRACT_SECURE_SYMLINKS);
  char target[PATH_MAX_LEN * 2];
  while ((r = archive_read_next_header(a, &e)) == ARCHIVE_OK) {
    const char *why = entry_refusal(e);
    if (why) { /* the file changed between the passes */
      rc = sw_err_set(err, SW_EINVAL, "%s: refusing entry '%s': %s", archive_path,
                      archive_entry_pathname(e), why);
      break;
    }
    snprintf(target, sizeof target, "%s/%s", root, archive_entry_pathname(e));
    archive_entry_set_pathname(e, target);
    archive_entry_set_perm(e, archive_entry_filetype(e) == AE_IFDIR ? 0755 : 0644);
    if (archive_write_header(w, e) != ARCHIVE_OK) {
      rc = sw_err_set(err, SW_EIO, "%s: cannot write '%s': %s", archive_path, target,
                      archive_error_string(w));
      break;
    }
    const void *buf;
    size_t size;
    la_int64_t offset;
    while ((r = archive_read_data_block(a, &buf, &size, &offset)) == ARCHIVE_OK)
      if (archive_write_data_block(w, buf, size, offset) != ARCHIVE_OK) {
        rc = sw_err_set(err, SW_EIO, "%s: writing '%s': %s", archive_path, target,
                        archive_error_string(w));
        break;
      }
    if (!rc && r != ARCHIVE_EOF)
      rc = sw_err_set(err, SW_EINVAL, "%s: corrupt or truncated entry '%s': %s", archive_path,
                      target, archive_error_string(a));
    if (rc) break;
    if (archive_write_finish_entry(w) != ARCHIVE_OK) {
      rc = sw_err_set(err, SW_EIO, "%s: finishing '%s': %s", archive_path, target,
                      archive_error_string(w));
      break;
    }
  }
  if (!rc && r != ARCHIVE_EOF && r != ARCHIVE_OK)
    rc = sw_err_set(err, SW_EINVAL, "%s: corrupt archive: %s", archive_path,
                    archive_error_string(a));
  archive_write_free(w);
  archive_read_free(a);
  return rc;
}

/* Unpacks an archive scene (once; a marker file records a finished unpack) and finds the folder
 * holding transforms_train.json: the root or its single top folder. */
static int resolve_archive(const char *archive_path, const struct gs_scene_opts *o, char *dir,
                           size_t cap, struct sw_err *err) {
  char dest[PATH_MAX_LEN];
  if (o->unpack_dir) {
    snprintf(dest, sizeof dest, "%s", o->unpack_dir);
  } else {
    char hex[SW_SHA256_HEX_LEN];
    int rc = sw_sha256_file(archive_path, hex, err);
    if (rc) return rc;
    const char *tmp = getenv("TMPDIR");
    snprintf(dest, sizeof dest, "%s/gs-scene-%.16s", tmp && *tmp ? tmp : "/tmp", hex);
  }
  char marker[PATH_MAX_LEN + 32];
  snprintf(marker, sizeof marker, "%s/.gs-unpacked", dest);
  if (o->unpack_dir || !sw_fs_exists(marker)) {
    int rc = gs_scene_unpack(archive_path, dest, err);
    if (rc) return rc;
    rc = sw_fs_write_atomic(marker, "", 0, err);
    if (rc) return rc;
  }
  char probe[PATH_MAX_LEN + 64];
  snprintf(probe, sizeof probe, "%s/transforms_train.json", dest);
  if (sw_fs_exists(probe)) {
    snprintf(dir, cap, "%s", dest);
    return 0;
  }
  /* Look one level down for a single folder with the scene. */
  char found[PATH_MAX_LEN] = "";
  int n = 0;
  struct archive *rd = open_archive(archive_path, err);
  if (!rd) return err ? err->code : SW_EINVAL;
  struct archive_entry *e;
  while (archive_read_next_header(rd, &e) == ARCHIVE_OK) {
    const char *name = archive_entry_pathname(e);
    const char *slash = strchr(name, '/');
    if (slash && !strcmp(slash + 1, "transforms_train.json") && strchr(slash + 1, '/') == NULL) {
      snprintf(found, sizeof found, "%s/%.*s", dest, (int)(slash - name), name);
      n++;
    }
  }
  archive_read_free(rd);
  if (n != 1)
    return sw_err_set(err, SW_EINVAL, "%s: archive holds %s transforms_train.json at its root "
                      "or in one top folder", archive_path, n ? "more than one" : "no");
  snprintf(dir, cap, "%s", found);
  return 0;
}

/* ---- loader ---- */

int gs_scene_load(const char *path, const struct gs_scene_opts *opts, struct gs_scene **out,
                  struct sw_err *err) {
  *out = NULL;
  struct gs_scene_opts o = {0};
  if (opts) o = *opts;
  uint32_t scale = o.resolution_scale ? o.resolution_scale : 1;
  uint32_t every = o.holdout_every ? o.holdout_every : 8;
  if (scale > 64) return sw_err_set(err, SW_EINVAL, "resolution_scale %u is out of range 1..64",
                                    scale);
  struct stat st;
  if (stat(path, &st) != 0)
    return sw_err_set(err, SW_ENOTFOUND, "scene %s: %s", path, strerror(errno));
  char dir[PATH_MAX_LEN];
  if (S_ISDIR(st.st_mode)) {
    snprintf(dir, sizeof dir, "%s", path);
  } else if (is_archive(path)) {
    int rc = resolve_archive(path, &o, dir, sizeof dir, err);
    if (rc) return rc;
  } else {
    return sw_err_set(err, SW_EINVAL, "scene %s: neither a directory nor an archive "
                      "(.zip, .tar.gz, .tgz, .tar)", path);
  }
  size_t dl = strlen(dir);
  while (dl > 1 && dir[dl - 1] == '/') dir[--dl] = '\0';

  struct split tr = {0}, te = {0};
  struct gs_scene *sc = NULL;
  struct load_task *tasks = NULL;
  int rc = read_split(dir, "transforms_train.json", 1, &tr, err);
  if (!rc) rc = read_split(dir, "transforms_test.json", 0, &te, err);
  if (rc) goto done;
  sc = calloc(1, sizeof *sc);
  if (!sc) {
    rc = sw_err_set(err, SW_ENOMEM, "out of memory");
    goto done;
  }
  snprintf(sc->path, sizeof sc->path, "%s", dir);
  sc->background = o.background;

  /* Which frames go where: the test file when present, else every `every`-th training frame. */
  sc->held_out = !te.present;
  uint32_t n_test = te.present ? te.n : (tr.n + every - 1) / every;
  uint32_t n_train = te.present ? tr.n : tr.n - n_test;
  if (n_train == 0) {
    rc = sw_err_set(err, SW_EINVAL, "%s: %u training frames leave none for training after "
                    "holding out every %uth as a test view", dir, tr.n, every);
    goto done;
  }
  sc->train = calloc(n_train, sizeof *sc->train);
  sc->test = calloc(n_test ? n_test : 1, sizeof *sc->test);
  if (!sc->train || !sc->test) {
    rc = sw_err_set(err, SW_ENOMEM, "out of memory for %u views", n_train + n_test);
    goto done;
  }
  int skip_tr = (o.skip & GS_SCENE_SKIP_TRAIN_IMAGES) != 0;
  int skip_te = (o.skip & GS_SCENE_SKIP_TEST_IMAGES) != 0;
  /* Assign every frame to its view first; the counts cover all views from here on, so that
   * gs_scene_destroy frees whatever was loaded if a later image fails. */
  uint32_t n_tasks = tr.n + (te.present ? te.n : 0);
  tasks = calloc(n_tasks, sizeof *tasks);
  if (!tasks) {
    rc = sw_err_set(err, SW_ENOMEM, "out of memory");
    goto done;
  }
  for (uint32_t i = 0; i < tr.n; i++) {
    int to_test = sc->held_out && i % every == 0;
    struct load_task *t = &tasks[i];
    t->sp = &tr;
    t->f = &tr.frames[i];
    t->skip = to_test ? skip_te : skip_tr;
    t->v = to_test ? &sc->test[sc->n_test++] : &sc->train[sc->n_train++];
  }
  for (uint32_t i = 0; te.present && i < te.n; i++) {
    struct load_task *t = &tasks[tr.n + i];
    t->sp = &te;
    t->f = &te.frames[i];
    t->skip = skip_te;
    t->v = &sc->test[sc->n_test++];
  }
  rc = load_views(sc, tasks, n_tasks, scale, err);
  if (rc) goto done;
  /* Hashed after loading, so a missing or broken image is reported by the loader first. */
  rc = hash_files(dir, &tr, &te, sc->sha256, err);
  if (rc) goto done;
  struct gs_camera *cams = malloc(sc->n_train * sizeof *cams);
  if (!cams) {
    rc = sw_err_set(err, SW_ENOMEM, "out of memory");
    goto done;
  }
  for (uint32_t i = 0; i < sc->n_train; i++) cams[i] = sc->train[i].cam;
  sc->extent = gs_cameras_extent(cams, sc->n_train, sc->center);
  free(cams);
  sc->has_aabb = tr.has_aabb;
  for (int k = 0; k < 3; k++) {
    sc->aabb_min[k] = tr.has_aabb ? tr.aabb[k] : -1.3f;
    sc->aabb_max[k] = tr.has_aabb ? tr.aabb[3 + k] : 1.3f;
  }
  *out = sc;
  sc = NULL;
done:
  free(tasks);
  gs_scene_destroy(&sc);
  split_free(&tr);
  split_free(&te);
  return rc;
}
