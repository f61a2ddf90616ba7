/* sw_fs.h: small file-system helpers with errors that name the path. */
#ifndef SW_FS_H
#define SW_FS_H

#include <stddef.h>

#include "sw_err.h"

/* Reads a whole file into a NUL-terminated buffer the caller frees; *len_out gets the size
 * (may be NULL). Returns 0, SW_ENOTFOUND, SW_EIO or SW_ENOMEM. */
int sw_fs_read_all(const char *path, char **data_out, size_t *len_out, struct sw_err *err);
/* Writes len bytes to path atomically: a temporary file in the same directory, fsync, rename.
 * A full disk or any short write leaves the old file untouched and returns SW_EIO. */
int sw_fs_write_atomic(const char *path, const void *data, size_t len, struct sw_err *err);
/* A secret kept in a file only its owner may read (mode 0600): when path does not exist it is
 * created holding the len bytes of fresh, atomically (written under a temporary name, then
 * linked to path, which fails when another process made it first: every process that starts at
 * once ends with the same secret, and none ever reads a half-written one); then the file, as it
 * now is, is read into *data_out (NUL-terminated, freed by the caller; *len_out its size). Its
 * folder is made when missing. Returns 0, SW_EIO or SW_ENOMEM; checking the content is the
 * caller's. */
int sw_fs_secret(const char *path, const void *fresh, size_t len, char **data_out, size_t *len_out,
                 struct sw_err *err);
/* mkdir -p with mode 0755. */
int sw_fs_mkdir_p(const char *path, struct sw_err *err);
/* rm -rf of a directory tree (used for scratch run directories). Missing path is not an error. */
int sw_fs_rm_rf(const char *path, struct sw_err *err);
/* 1 when path exists, else 0. */
int sw_fs_exists(const char *path);
/* The running executable's absolute path, links resolved, into buf (cap bytes): /proc/self/exe
 * on Linux, dyld's _NSGetExecutablePath + realpath on macOS (which has no /proc). Returns 0 or
 * SW_EIO. */
int sw_fs_self_exe(char *buf, size_t cap, struct sw_err *err);

enum sw_fs_find { SW_FS_FIND_EXEC = 0, SW_FS_FIND_DIR = 1 };
/* Looks name up in the folders of a colon-separated list (PATH, SW_DATASETS) and writes the
 * first match, "FOLDER/name", into out (cap bytes). SW_FS_FIND_EXEC wants an executable regular
 * file and takes an empty folder as ".", as execvp does; SW_FS_FIND_DIR wants a directory and
 * skips empty folders. list may be NULL. Returns 1 when found, else 0. */
int sw_fs_find_in(const char *list, const char *name, enum sw_fs_find kind, char *out, size_t cap);

#endif
