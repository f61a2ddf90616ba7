/* gs_scene.c: the scene loader's common part (see gs_scene.h): the format detection, the safe
 * file reading every format uses, images (decode, undistort, downscale) on a few threads, the
 * normalisation, the scene hash, archives, and camera conversion. The formats' description files
 * are read by gs_scene_nerf.c, gs_scene_transforms.c and gs_scene_colmap.c (gs_scene_int.h). */
#include "gs_scene.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gs_image.h"
#include "gs_model.h"
#include "gs_scene_int.h"
#include "sw_fs.h"

#define PATH_MAX_LEN GS_SCENE_PATH_MAX

#define SUPPORTED                                                                                  \
  "supported: NeRF-synthetic (transforms_train.json [+ transforms_test.json]), instant-ngp / "     \
  "nerfstudio (transforms.json), COLMAP (sparse/0/{cameras,images,points3D}.bin or .txt + "        \
  "images/); convert other captures with COLMAP or nerfstudio's ns-process-data, see "             \
  "docs/scenes.md"

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

/* ---- safe reading ---- */

int gs_scene_path_unsafe(const char *path) {
  if (path[0] == '/' || path[0] == '\\') return 1;
  const char *p = path;
  while (*p) {
    size_t len = strcspn(p, "/\\");
    if (len == 2 && p[0] == '.' && p[1] == '.') return 1;
    p += len;
    if (*p) p++;
  }
  return 0;
}

int gs_scene_exists(const char *dir, const char *rel) {
  char path[PATH_MAX_LEN * 2];
  snprintf(path, sizeof path, "%s/%s", dir, rel);
  struct stat st;
  return stat(path, &st) == 0;
}

static const char *type_name(mode_t m) {
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISSOCK(m)) return "a socket";
  if (S_ISDIR(m)) return "a directory";
  return "not a plain file";
}

int gs_scene_read_file(const char *dir, const char *rel, size_t cap, char **data_out,
                       size_t *len_out, struct sw_err *err) {
  *data_out = NULL;
  char path[PATH_MAX_LEN * 2];
  if (snprintf(path, sizeof path, "%s/%s", dir, rel) >= (int)sizeof path)
    return sw_err_set(err, SW_EINVAL, "%s/%s: path too long", dir, rel);
  char root[PATH_MAX], real[PATH_MAX];
  if (!realpath(dir, root)) return sw_err_set(err, SW_ENOTFOUND, "%s: %s", dir, strerror(errno));
  if (!realpath(path, real)) {
    int e = errno;
    return sw_err_set(err, e == ENOENT ? SW_ENOTFOUND : SW_EIO, "%s: %s", path,
                      e == ENOENT ? "no such file" : strerror(e));
  }
  size_t rl = strlen(root);
  if (strncmp(real, root, rl) || (real[rl] != '/' && rl > 1))
    return sw_err_set(err, SW_EINVAL, "%s: refused: resolves to %s, outside the scene folder", path,
                      real);
  /* O_NONBLOCK: opening a FIFO must not wait for a writer; the type is checked on the open
   * descriptor, so what is read is what was checked. */
  int fd = open(real, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    int e = errno;
    return sw_err_set(err, e == ENOENT ? SW_ENOTFOUND : SW_EIO, "%s: %s", path, strerror(e));
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int e = errno;
    close(fd);
    return sw_err_set(err, SW_EIO, "%s: %s", path, strerror(e));
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    return sw_err_set(err, SW_EINVAL, "%s: refused: %s, not a regular file", path,
                      type_name(st.st_mode));
  }
  if ((uint64_t)st.st_size > cap) {
    close(fd);
    return sw_err_set(err, SW_EINVAL,
                      "%s: refused: %lld bytes, more than the %zu this loader "
                      "reads",
                      path, (long long)st.st_size, cap);
  }
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  size_t n = (size_t)st.st_size;
  char *buf = malloc(n + 1);
  if (!buf) {
    close(fd);
    return sw_err_set(err, SW_ENOMEM, "%s: out of memory for %zu bytes", path, n);
  }
  size_t got = 0;
  while (got < n) {
    ssize_t r = read(fd, buf + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      int e = errno;
      close(fd);
      free(buf);
      return sw_err_set(err, SW_EIO, "%s: %s", path, strerror(e));
    }
    if (r == 0) break; /* shrank while read: use what is there */
    got += (size_t)r;
  }
  close(fd);
  buf[got] = '\0';
  *data_out = buf;
  *len_out = got;
  return 0;
}

/* ---- descriptions ---- */

void gs_scene_desc_free(struct gs_scene_desc *d) {
  free(d->frames);
  free(d->points);
  free(d->colors);
  memset(d, 0, sizeof *d);
}

struct gs_scene_frame *gs_scene_desc_add(struct gs_scene_desc *d, uint32_t n, struct sw_err *err) {
  struct gs_scene_frame *f = realloc(d->frames, ((size_t)d->n + n) * sizeof *f);
  if (!f) {
    sw_err_set(err, SW_ENOMEM, "out of memory for %u frames", d->n + n);
    return NULL;
  }
  d->frames = f;
  memset(f + d->n, 0, (size_t)n * sizeof *f);
  f += d->n;
  d->n += n;
  return f;
}

int gs_scene_frame_from_c2w_gl(const float c2w[16], struct gs_scene_frame *f, struct sw_err *err) {
  struct gs_camera c;
  int rc = gs_camera_from_c2w_gl(c2w, &c, err);
  if (rc) return rc;
  memcpy(f->viewmat, c.viewmat, sizeof f->viewmat);
  memcpy(f->campos, c.campos, sizeof f->campos);
  return 0;
}

/* ---- detection ---- */

enum fmt { FMT_NONE = 0, FMT_NERF, FMT_TRANSFORMS, FMT_COLMAP_BIN, FMT_COLMAP_TXT };

/* Which format the folder holds, by its description files; *sparse gets the COLMAP model folder.
 * NeRF-synthetic wins over a transforms.json beside it (its split files are more specific). */
static enum fmt detect(const char *dir, char *sparse, size_t cap) {
  if (gs_scene_exists(dir, "transforms_train.json")) return FMT_NERF;
  if (gs_scene_exists(dir, "transforms.json")) return FMT_TRANSFORMS;
  static const char *models[] = {"sparse/0", "sparse"};
  for (int i = 0; i < 2; i++) {
    char probe[128];
    for (int bin = 1; bin >= 0; bin--) {
      snprintf(probe, sizeof probe, "%s/cameras.%s", models[i], bin ? "bin" : "txt");
      if (gs_scene_exists(dir, probe)) {
        if (sparse) snprintf(sparse, cap, "%s", models[i]);
        return bin ? FMT_COLMAP_BIN : FMT_COLMAP_TXT;
      }
    }
  }
  return FMT_NONE;
}

static int read_desc(const char *dir, const struct gs_scene_opts *o, uint32_t scale,
                     struct gs_scene_desc *d, struct sw_err *err) {
  memset(d, 0, sizeof *d);
  char sparse[64] = "";
  switch (detect(dir, sparse, sizeof sparse)) {
  case FMT_NERF: return gs_scene_read_nerf(dir, d, err);
  case FMT_TRANSFORMS: return gs_scene_read_transforms(dir, o, d, err);
  case FMT_COLMAP_BIN: return gs_scene_read_colmap(dir, sparse, 1, scale, d, err);
  case FMT_COLMAP_TXT: return gs_scene_read_colmap(dir, sparse, 0, scale, d, err);
  default: break;
  }
  return sw_err_set(err, SW_ENOTFOUND, "%s: no scene found (%s)", dir, SUPPORTED);
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
  if (gs_scene_path_unsafe(name)) return "'..' path component";
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
  archive_write_disk_set_options(w,
                                 ARCHIVE_EXTRACT_SECURE_NODOTDOT | ARCHIVE_EXTRACT_SECURE_SYMLINKS);
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
 * holding the scene: the root or its single top folder, whatever the format. */
static enum fmt detect(const char *dir, char *sparse, size_t cap);
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
  if (detect(dest, NULL, 0) != FMT_NONE) {
    snprintf(dir, cap, "%s", dest);
    return 0;
  }
  /* Look one level down for a single folder with the scene. */
  char found[PATH_MAX_LEN] = "";
  int n = 0;
  DIR *dh = opendir(dest);
  if (!dh) return sw_err_set(err, SW_EIO, "%s: %s", dest, strerror(errno));
  struct dirent *de;
  while ((de = readdir(dh))) {
    if (de->d_name[0] == '.') continue;
    char sub[PATH_MAX_LEN];
    if (snprintf(sub, sizeof sub, "%s/%s", dest, de->d_name) >= (int)sizeof sub) continue;
    struct stat st;
    if (lstat(sub, &st) || !S_ISDIR(st.st_mode)) continue;
    if (detect(sub, NULL, 0) != FMT_NONE) {
      snprintf(found, sizeof found, "%s", sub);
      n++;
    }
  }
  closedir(dh);
  if (n != 1)
    return sw_err_set(err, SW_EINVAL,
                      "%s: archive holds %s scene at its root or in one top "
                      "folder (%s)",
                      archive_path, n ? "more than one" : "no", SUPPORTED);
  snprintf(dir, cap, "%s", found);
  return 0;
}

/* ---- hashing ---- */

static int hash_file(struct sw_sha256 *h, const char *dir, const char *rel, size_t cap,
                     struct sw_err *err) {
  char *data = NULL;
  size_t len = 0;
  int rc = gs_scene_read_file(dir, rel, cap, &data, &len, err);
  if (rc) return rc;
  sw_sha256_update(h, rel, strlen(rel) + 1);
  sw_sha256_update(h, data, len);
  free(data);
  return 0;
}

static int hash_desc(const char *dir, const struct gs_scene_desc *d, char hex[SW_SHA256_HEX_LEN],
                     struct sw_err *err) {
  struct sw_sha256 h;
  sw_sha256_init(&h);
  for (uint32_t i = 0; i < d->n_meta; i++) {
    int rc = hash_file(&h, dir, d->meta[i], GS_SCENE_META_MAX, err);
    if (rc) return rc;
  }
  for (uint32_t i = 0; i < d->n; i++) {
    int rc = hash_file(&h, dir, d->frames[i].file, GS_SCENE_IMAGE_MAX, err);
    if (rc) return rc;
  }
  sw_sha256_final(&h, hex);
  return 0;
}

int gs_scene_hash(const char *dir, char hex[SW_SHA256_HEX_LEN], struct sw_err *err) {
  struct gs_scene_desc d;
  int rc = read_desc(dir, NULL, 1, &d, err);
  if (!rc) rc = hash_desc(dir, &d, hex, err);
  gs_scene_desc_free(&d);
  return rc;
}

/* ---- images ---- */

static void views_free(struct gs_view *v, uint32_t n) {
  if (!v) return;
  for (uint32_t i = 0; i < n; i++) free(v[i].rgb);
  free(v);
}

void gs_scene_destroy(struct gs_scene **scene) {
  if (!scene || !*scene) return;
  views_free((*scene)->train, (*scene)->n_train);
  views_free((*scene)->test, (*scene)->n_test);
  free((*scene)->points);
  free((*scene)->colors);
  free(*scene);
  *scene = NULL;
}

/* The intrinsics of a frame for an image of w x h as stored: the format's values, scaled when
 * the file is a downscale, the field of view turned into focal lengths. */
static int resolve_intrinsics(const struct gs_scene_frame *f, const char *path, uint32_t w,
                              uint32_t h, struct gs_intrinsics *in, struct sw_err *err) {
  *in = f->in;
  if (in->w == 0 || in->h == 0) {
    in->w = w;
    in->h = h;
  } else if (in->w != w || in->h != h) {
    if (!f->prescaled)
      return sw_err_set(err, SW_EINVAL, "%s: image is %ux%u, its camera says %ux%u", path, w, h,
                        in->w, in->h);
    double sx = (double)w / in->w, sy = (double)h / in->h;
    in->fx *= sx, in->cx *= sx, in->fy *= sy, in->cy *= sy;
    in->w = w;
    in->h = h;
  }
  if (in->fx <= 0) {
    if (!(in->angle_x > 0))
      return sw_err_set(err, SW_EINVAL, "%s: no focal length or field of view for this image",
                        path);
    in->fx = 0.5 * w / tan(0.5 * in->angle_x);
    in->fy = in->angle_y > 0 ? 0.5 * h / tan(0.5 * in->angle_y) : in->fx;
  }
  if (in->fy <= 0) in->fy = in->fx;
  if (in->cx < 0) in->cx = 0.5 * w;
  if (in->cy < 0) in->cy = 0.5 * h;
  if (!isfinite(in->fx) || !isfinite(in->fy) || !isfinite(in->cx) || !isfinite(in->cy))
    return sw_err_set(err, SW_EINVAL, "%s: focal length or principal point is not finite", path);
  return 0;
}

/* Composites straight-alpha RGBA onto the background and box-averages by `scale`. */
static int composite(const char *path, const float *rgba, uint32_t w, uint32_t h,
                     enum gs_background bg, uint32_t scale, float **rgb_out, struct sw_err *err) {
  uint32_t ow = w / scale, oh = h / scale;
  float *rgb = malloc((size_t)ow * oh * 3 * sizeof(float) + 1);
  if (!rgb) return sw_err_set(err, SW_ENOMEM, "%s: out of memory", path);
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
  *rgb_out = rgb;
  return 0;
}

/* Box-averages an RGB image by `scale` (after undistortion). */
static int downscale_rgb(const char *path, float *rgb, uint32_t w, uint32_t h, uint32_t scale,
                         float **out, struct sw_err *err) {
  uint32_t ow = w / scale, oh = h / scale;
  float *o = malloc((size_t)ow * oh * 3 * sizeof(float) + 1);
  if (!o) return sw_err_set(err, SW_ENOMEM, "%s: out of memory", path);
  float inv = 1.0f / (float)(scale * scale);
  for (uint32_t y = 0; y < oh; y++)
    for (uint32_t x = 0; x < ow; x++)
      for (int c = 0; c < 3; c++) {
        float acc = 0;
        for (uint32_t dy = 0; dy < scale; dy++)
          for (uint32_t dx = 0; dx < scale; dx++)
            acc += rgb[3 * ((size_t)(y * scale + dy) * w + (x * scale + dx)) + c];
        o[3 * ((size_t)y * ow + x) + c] = acc * inv;
      }
  *out = o;
  return 0;
}

/* Fills one view: camera from the frame, image unless skipped. Distorted images are undistorted
 * at their stored resolution, then downscaled. */
static int load_view(const struct gs_scene *sc, const struct gs_scene_frame *f, int skip_image,
                     uint32_t scale, struct gs_view *v, struct sw_err *err) {
  char path[PATH_MAX_LEN * 2];
  snprintf(path, sizeof path, "%s/%s", sc->path, f->file);
  char *data = NULL;
  size_t len = 0;
  int rc = gs_scene_read_file(sc->path, f->file, GS_SCENE_IMAGE_MAX, &data, &len, err);
  if (rc) return rc;
  uint32_t w = 0, h = 0;
  float *rgba = NULL;
  if (skip_image)
    rc = gs_image_decode_size(path, data, len, &w, &h, err);
  else
    rc = gs_image_decode(path, data, len, &rgba, &w, &h, err);
  free(data);
  if (rc) return rc;
  struct gs_intrinsics in;
  rc = resolve_intrinsics(f, path, w, h, &in, err);
  uint32_t s = f->prescaled ? 1 : scale;
  if (!rc && (w / s == 0 || h / s == 0))
    rc = sw_err_set(err, SW_EINVAL, "%s: %ux%u image is smaller than the downscale factor %u", path,
                    w, h, s);
  float *rgb = NULL;
  int distorted = gs_intrinsics_distorted(&in);
  if (!rc && rgba) rc = composite(path, rgba, w, h, sc->background, distorted ? 1 : s, &rgb, err);
  free(rgba);
  if (!rc && rgb && distorted) {
    float *u = NULL;
    rc = gs_scene_undistort(rgb, w, h, &in, &u, err);
    free(rgb);
    rgb = u;
    if (!rc && s > 1) {
      rc = downscale_rgb(path, u, w, h, s, &rgb, err);
      free(u);
    }
  }
  if (rc) {
    free(rgb);
    return rc;
  }
  v->rgb = rgb;
  snprintf(v->name, sizeof v->name, "%s", f->file);
  memcpy(v->cam.viewmat, f->viewmat, sizeof v->cam.viewmat);
  memcpy(v->cam.campos, f->campos, sizeof v->cam.campos);
  v->cam.width = w / s;
  v->cam.height = h / s;
  v->cam.fx = (float)(in.fx / s);
  v->cam.fy = (float)(in.fy / s);
  v->cam.cx = (float)(in.cx / s);
  v->cam.cy = (float)(in.cy / s);
  /* A value beyond float range (a pose or focal length of 1e300) becomes inf here. */
  int finite = isfinite(v->cam.fx) && isfinite(v->cam.fy) && isfinite(v->cam.cx) &&
               isfinite(v->cam.cy) && v->cam.fx > 0 && v->cam.fy > 0;
  for (int k = 0; k < 16; k++) finite = finite && isfinite(v->cam.viewmat[k]);
  for (int k = 0; k < 3; k++) finite = finite && isfinite(v->cam.campos[k]);
  if (!finite) {
    free(v->rgb);
    v->rgb = NULL;
    return sw_err_set(err, SW_EINVAL,
                      "%s: camera pose or intrinsics out of range (not finite "
                      "in single precision)",
                      path);
  }
  return 0;
}

/* Image decoding dominates loading, so views load on a few threads. Each task keeps its own error
 * and the first failing view in frame order is reported, so the message does not depend on thread
 * timing. The stop flag is polled before each view. */
struct load_task {
  const struct gs_scene_frame *f;
  int skip;
  struct gs_view *v;
  int rc;
  struct sw_err err;
};

struct load_pool {
  const struct gs_scene *sc;
  struct load_task *tasks;
  uint32_t n, next, scale;
  int failed;
  volatile sig_atomic_t *stop;
  pthread_mutex_t lock;
};

static void *load_worker(void *arg) {
  struct load_pool *p = arg;
  for (;;) {
    pthread_mutex_lock(&p->lock);
    uint32_t i = p->next++;
    int stop = p->failed || i >= p->n || (p->stop && *p->stop);
    pthread_mutex_unlock(&p->lock);
    if (stop) break;
    struct load_task *t = &p->tasks[i];
    t->rc = load_view(p->sc, t->f, t->skip, p->scale, t->v, &t->err);
    if (t->rc) {
      pthread_mutex_lock(&p->lock);
      p->failed = 1;
      pthread_mutex_unlock(&p->lock);
    }
  }
  return NULL;
}

static int load_views(const struct gs_scene *sc, struct load_task *tasks, uint32_t n,
                      uint32_t scale, volatile sig_atomic_t *stop, struct sw_err *err) {
  if (n == 0) return 0;
  struct load_pool p = {.sc = sc, .tasks = tasks, .n = n, .next = 0, .scale = scale, .stop = stop};
  pthread_mutex_init(&p.lock, NULL);
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  uint32_t nt = cpus < 1 ? 1 : cpus > 8 ? 8 : (uint32_t)cpus;
  if (nt > n) nt = n;
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
  if (stop && *stop) return GS_SCENE_STOPPED;
  return 0;
}

/* ---- normalisation ---- */

/* Moves the world so that the training cameras' centroid is the origin and scales it so that the
 * farthest training camera is at distance 1: x' = s (x - c). A camera x_cam = R x + t becomes
 * R x' + s (R c + t) up to the factor s on x_cam, which projection divides out. */
static void normalize(struct gs_scene *sc) {
  double c[3] = {0, 0, 0}, r = 0;
  for (uint32_t i = 0; i < sc->n_train; i++)
    for (int k = 0; k < 3; k++) c[k] += sc->train[i].cam.campos[k] / sc->n_train;
  for (uint32_t i = 0; i < sc->n_train; i++) {
    double d2 = 0;
    for (int k = 0; k < 3; k++) d2 += pow(sc->train[i].cam.campos[k] - c[k], 2);
    if (d2 > r) r = d2;
  }
  r = sqrt(r);
  double s = r > 0 ? 1.0 / r : 1.0;
  struct gs_view *sets[2] = {sc->train, sc->test};
  uint32_t ns[2] = {sc->n_train, sc->n_test};
  for (int k = 0; k < 2; k++)
    for (uint32_t i = 0; i < ns[k]; i++) {
      struct gs_camera *cam = &sets[k][i].cam;
      for (int row = 0; row < 3; row++) {
        double t = cam->viewmat[4 * row + 3];
        for (int j = 0; j < 3; j++) t += cam->viewmat[4 * row + j] * c[j];
        cam->viewmat[4 * row + 3] = (float)(s * t);
        cam->campos[row] = (float)(s * (cam->campos[row] - c[row]));
      }
    }
  for (uint32_t i = 0; i < sc->n_points; i++)
    for (int k = 0; k < 3; k++)
      sc->points[3 * (size_t)i + k] = (float)(s * (sc->points[3 * (size_t)i + k] - c[k]));
  for (int k = 0; k < 3; k++) {
    sc->aabb_min[k] = (float)(s * (sc->aabb_min[k] - c[k]));
    sc->aabb_max[k] = (float)(s * (sc->aabb_max[k] - c[k]));
    sc->norm_center[k] = (float)c[k];
  }
  sc->norm_scale = (float)s;
}

/* ---- loader ---- */

int gs_scene_load(const char *path, const struct gs_scene_opts *opts, struct gs_scene **out,
                  struct sw_err *err) {
  *out = NULL;
  struct gs_scene_opts o = {0};
  if (opts) o = *opts;
  uint32_t scale = o.resolution_scale ? o.resolution_scale : 1;
  uint32_t every = o.holdout_every ? o.holdout_every : 8;
  if (scale > 64)
    return sw_err_set(err, SW_EINVAL, "resolution_scale %u is out of range 1..64", scale);
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
    return sw_err_set(err, SW_EINVAL,
                      "scene %s: neither a directory nor an archive "
                      "(.zip, .tar.gz, .tgz, .tar)",
                      path);
  }
  size_t dl = strlen(dir);
  while (dl > 1 && dir[dl - 1] == '/') dir[--dl] = '\0';

  struct gs_scene_desc d;
  struct gs_scene *sc = NULL;
  struct load_task *tasks = NULL;
  int rc = read_desc(dir, &o, scale, &d, err);
  if (rc) goto done;
  sc = calloc(1, sizeof *sc);
  if (!sc) {
    rc = sw_err_set(err, SW_ENOMEM, "out of memory");
    goto done;
  }
  snprintf(sc->path, sizeof sc->path, "%s", dir);
  snprintf(sc->format, sizeof sc->format, "%s", d.format);
  snprintf(sc->warning, sizeof sc->warning, "%s", d.warning);
  sc->background = o.background;
  sc->norm_scale = 1.0f;

  /* Which frames go where: the format's split when it has one, else every `every`-th frame
   * (in the format's order: file order for transforms, name order for COLMAP) is held out. */
  uint32_t n_given = 0;
  for (uint32_t i = 0; i < d.n; i++) n_given += d.frames[i].split == GS_FRAME_TEST;
  sc->held_out = n_given == 0;
  uint32_t n_test = 0;
  for (uint32_t i = 0, a = 0; i < d.n; i++) {
    struct gs_scene_frame *f = &d.frames[i];
    if (f->split == GS_FRAME_AUTO)
      f->split = sc->held_out && a++ % every == 0 ? GS_FRAME_TEST : GS_FRAME_TRAIN;
    if (f->split == GS_FRAME_TEST) n_test++;
  }
  uint32_t n_train = d.n - n_test;
  if (n_train == 0) {
    rc = sw_err_set(err, SW_EINVAL,
                    "%s (%s): %u frames leave none for training after holding "
                    "out every %uth as a test view",
                    dir, d.format, d.n, every);
    goto done;
  }
  sc->train = calloc(n_train, sizeof *sc->train);
  sc->test = calloc(n_test ? n_test : 1, sizeof *sc->test);
  tasks = calloc(d.n, sizeof *tasks);
  if (!sc->train || !sc->test || !tasks) {
    rc = sw_err_set(err, SW_ENOMEM, "out of memory for %u views", d.n);
    goto done;
  }
  int skip_tr = (o.skip & GS_SCENE_SKIP_TRAIN_IMAGES) != 0;
  int skip_te = (o.skip & GS_SCENE_SKIP_TEST_IMAGES) != 0;
  /* Assign every frame to its view first; the counts cover all views from here on, so that
   * gs_scene_destroy frees whatever was loaded if a later image fails. */
  for (uint32_t i = 0; i < d.n; i++) {
    int to_test = d.frames[i].split == GS_FRAME_TEST;
    tasks[i].f = &d.frames[i];
    tasks[i].skip = to_test ? skip_te : skip_tr;
    tasks[i].v = to_test ? &sc->test[sc->n_test++] : &sc->train[sc->n_train++];
  }
  rc = load_views(sc, tasks, d.n, scale, o.stop, err);
  if (rc) goto done;
  /* Hashed after loading, so a missing or broken image is reported by the loader first. */
  rc = hash_desc(dir, &d, sc->sha256, err);
  if (rc) goto done;
  for (uint32_t i = 0; i < d.n; i++) {
    const struct gs_camera *c = &tasks[i].v->cam;
    if (c->width > sc->width) sc->width = c->width;
    if (c->height > sc->height) sc->height = c->height;
  }
  sc->points = d.points;
  sc->colors = d.colors;
  sc->n_points = d.n_points;
  d.points = NULL;
  d.colors = NULL;
  sc->has_aabb = d.has_aabb;
  for (int k = 0; k < 3; k++) {
    sc->aabb_min[k] = d.has_aabb ? d.aabb[k] : -1.3f;
    sc->aabb_max[k] = d.has_aabb ? d.aabb[3 + k] : 1.3f;
  }
  int norm = o.normalize == GS_NORMALIZE_ON ||
             (o.normalize == GS_NORMALIZE_AUTO && strcmp(d.format, "NeRF-synthetic") != 0);
  if (norm) normalize(sc);
  struct gs_camera *cams = malloc(sc->n_train * sizeof *cams);
  if (!cams) {
    rc = sw_err_set(err, SW_ENOMEM, "out of memory");
    goto done;
  }
  for (uint32_t i = 0; i < sc->n_train; i++) cams[i] = sc->train[i].cam;
  sc->extent = gs_cameras_extent(cams, sc->n_train, sc->center);
  free(cams);
  if (!d.has_aabb && strcmp(d.format, "NeRF-synthetic") != 0)
    for (int k = 0; k < 3; k++) { /* a real capture: the region the cameras span */
      sc->aabb_min[k] = sc->center[k] - sc->extent;
      sc->aabb_max[k] = sc->center[k] + sc->extent;
    }
  *out = sc;
  sc = NULL;
done:
  free(tasks);
  gs_scene_destroy(&sc);
  gs_scene_desc_free(&d);
  return rc;
}
