/* sw_fs.c: file helpers. */
#include "sw_fs.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef __APPLE__
#include <limits.h>
#include <mach-o/dyld.h>
#endif

int sw_fs_read_all(const char *path, char **data_out, size_t *len_out, struct sw_err *err) {
  *data_out = NULL;
  FILE *f = fopen(path, "rb");
  if (!f)
    return sw_err_set(err, errno == ENOENT ? SW_ENOTFOUND : SW_EIO, "%s: %s", path,
                      strerror(errno));
  size_t cap = 1 << 16, len = 0;
  char *buf = malloc(cap);
  if (!buf) {
    fclose(f);
    return sw_err_set(err, SW_ENOMEM, "%s: out of memory", path);
  }
  for (;;) {
    if (len + 1 >= cap) {
      char *nb = realloc(buf, cap * 2);
      if (!nb) {
        free(buf);
        fclose(f);
        return sw_err_set(err, SW_ENOMEM, "%s: out of memory", path);
      }
      buf = nb;
      cap *= 2;
    }
    size_t n = fread(buf + len, 1, cap - 1 - len, f);
    len += n;
    if (n == 0) break;
  }
  int bad = ferror(f);
  fclose(f);
  if (bad) {
    free(buf);
    return sw_err_set(err, SW_EIO, "%s: read error", path);
  }
  buf[len] = '\0';
  *data_out = buf;
  if (len_out) *len_out = len;
  return 0;
}

int sw_fs_write_atomic(const char *path, const void *data, size_t len, struct sw_err *err) {
  size_t plen = strlen(path);
  char *tmp = malloc(plen + 16);
  if (!tmp) return sw_err_set(err, SW_ENOMEM, "%s: out of memory", path);
  snprintf(tmp, plen + 16, "%s.tmpXXXXXX", path);
  int fd = mkstemp(tmp);
  if (fd < 0) {
    int rc = sw_err_set(err, SW_EIO, "%s: cannot create temporary file: %s", path, strerror(errno));
    free(tmp);
    return rc;
  }
  const char *p = data;
  size_t left = len;
  while (left > 0) {
    ssize_t n = write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      int rc = sw_err_set(err, SW_EIO, "%s: write failed: %s", path, strerror(errno));
      close(fd);
      unlink(tmp);
      free(tmp);
      return rc;
    }
    p += n;
    left -= (size_t)n;
  }
  if (fsync(fd) != 0 || close(fd) != 0) {
    int rc = sw_err_set(err, SW_EIO, "%s: sync failed: %s", path, strerror(errno));
    unlink(tmp);
    free(tmp);
    return rc;
  }
  if (rename(tmp, path) != 0) {
    int rc = sw_err_set(err, SW_EIO, "%s: rename failed: %s", path, strerror(errno));
    unlink(tmp);
    free(tmp);
    return rc;
  }
  chmod(path, 0644);
  free(tmp);
  return 0;
}

int sw_fs_mkdir_p(const char *path, struct sw_err *err) {
  char buf[4096];
  if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
    return sw_err_set(err, SW_EINVAL, "path too long: %s", path);
  for (char *p = buf + 1; *p; p++) {
    if (*p != '/') continue;
    *p = '\0';
    if (mkdir(buf, 0755) != 0 && errno != EEXIST)
      return sw_err_set(err, SW_EIO, "%s: %s", buf, strerror(errno));
    *p = '/';
  }
  if (mkdir(buf, 0755) != 0 && errno != EEXIST)
    return sw_err_set(err, SW_EIO, "%s: %s", buf, strerror(errno));
  return 0;
}

static int rm_one(const char *fpath, const struct stat *sb, int typeflag, struct FTW *ftwbuf) {
  (void)sb;
  (void)typeflag;
  (void)ftwbuf;
  return remove(fpath);
}

int sw_fs_rm_rf(const char *path, struct sw_err *err) {
  struct stat st;
  if (lstat(path, &st) != 0) return 0;
  if (nftw(path, rm_one, 32, FTW_DEPTH | FTW_PHYS) != 0)
    return sw_err_set(err, SW_EIO, "%s: cannot remove: %s", path, strerror(errno));
  return 0;
}

int sw_fs_exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

int sw_fs_self_exe(char *buf, size_t cap, struct sw_err *err) {
  if (!buf || cap < 2) return sw_err_set(err, SW_EINVAL, "sw_fs_self_exe: no buffer");
#ifdef __APPLE__
  char raw[PATH_MAX], full[PATH_MAX];
  uint32_t size = sizeof raw;
  if (_NSGetExecutablePath(raw, &size) != 0 || !realpath(raw, full))
    return sw_err_set(err, SW_EIO, "cannot find the running executable's path");
  if (strlen(full) >= cap)
    return sw_err_set(err, SW_EIO, "executable path longer than %zu bytes: %s", cap - 1, full);
  memcpy(buf, full, strlen(full) + 1);
  return 0;
#else
  ssize_t n = readlink("/proc/self/exe", buf, cap - 1);
  if (n <= 0 || (size_t)n >= cap - 1)
    return sw_err_set(err, SW_EIO, "/proc/self/exe: %s", n < 0 ? strerror(errno) : "path too long");
  buf[n] = '\0';
  return 0;
#endif
}

int sw_fs_find_in(const char *list, const char *name, enum sw_fs_find kind, char *out, size_t cap) {
  while (list && *list) {
    size_t n = strcspn(list, ":");
    if (n || kind == SW_FS_FIND_EXEC) {
      if (n)
        snprintf(out, cap, "%.*s/%s", (int)n, list, name);
      else
        snprintf(out, cap, "./%s", name);
      struct stat st;
      if (stat(out, &st) == 0 &&
          (kind == SW_FS_FIND_DIR ? S_ISDIR(st.st_mode)
                                  : S_ISREG(st.st_mode) && access(out, X_OK) == 0))
        return 1;
    }
    list += n + (list[n] == ':');
  }
  return 0;
}

int sw_fs_secret(const char *path, const void *fresh, size_t len, char **data_out, size_t *len_out,
                 struct sw_err *err) {
  char dir[4096];
  snprintf(dir, sizeof dir, "%s", path);
  char *slash = strrchr(dir, '/');
  if (slash && slash != dir) {
    *slash = '\0';
    int rc = sw_fs_mkdir_p(dir, err);
    if (rc) return rc;
  }
  if (!sw_fs_exists(path)) {
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.new%d", path, (int)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) return sw_err_set(err, SW_EIO, "%s: cannot create: %s", tmp, strerror(errno));
    int ok = write(fd, fresh, len) == (ssize_t)len && fsync(fd) == 0;
    ok = close(fd) == 0 && ok;
    int linked = ok && link(tmp, path) == 0;
    int why = errno;
    unlink(tmp);
    if (!ok) return sw_err_set(err, SW_EIO, "%s: cannot write: %s", tmp, strerror(why));
    if (!linked && why != EEXIST)
      return sw_err_set(err, SW_EIO, "%s: cannot create: %s", path, strerror(why));
  }
  return sw_fs_read_all(path, data_out, len_out, err);
}
