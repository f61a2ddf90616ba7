/* fault_vfs.h: an SQLite VFS for tests that forwards everything to the default VFS and fails
 * the writes of a commit on demand, as a full disk or a failing disk would: with fault_vfs_arm
 * set, every write to a database's WAL or journal file fails with the armed code (SQLITE_FULL,
 * SQLITE_IOERR_WRITE), and with FAULT_VFS_FSYNC every sync fails (SQLITE_IOERR_FSYNC). Installed
 * as the default VFS (fault_vfs_install) before the store opens, so the code under test is the
 * production code unchanged. */
#ifndef FAULT_VFS_H
#define FAULT_VFS_H

#include <sqlite3.h>
#include <string.h>

enum fault_vfs_kind { FAULT_VFS_NONE = 0, FAULT_VFS_WRITE, FAULT_VFS_FSYNC };

static struct {
  sqlite3_vfs vfs;
  sqlite3_vfs *real;
  enum fault_vfs_kind kind;
  int code; /* the SQLite code the failing call returns */
  int hits; /* calls failed since arming */
} g_fault;

struct fault_file {
  sqlite3_file base;
  int is_log; /* a WAL or rollback journal: where a commit's writes go first */
  sqlite3_file *real;
};

static inline sqlite3_file *fault_real(sqlite3_file *f) { return ((struct fault_file *)f)->real; }

static int fault_close(sqlite3_file *f) { return fault_real(f)->pMethods->xClose(fault_real(f)); }
static int fault_read(sqlite3_file *f, void *b, int n, sqlite3_int64 o) {
  return fault_real(f)->pMethods->xRead(fault_real(f), b, n, o);
}
static int fault_write(sqlite3_file *f, const void *b, int n, sqlite3_int64 o) {
  if (g_fault.kind == FAULT_VFS_WRITE && ((struct fault_file *)f)->is_log) {
    g_fault.hits++;
    return g_fault.code;
  }
  return fault_real(f)->pMethods->xWrite(fault_real(f), b, n, o);
}
static int fault_truncate(sqlite3_file *f, sqlite3_int64 n) {
  return fault_real(f)->pMethods->xTruncate(fault_real(f), n);
}
static int fault_sync(sqlite3_file *f, int flags) {
  if (g_fault.kind == FAULT_VFS_FSYNC) {
    g_fault.hits++;
    return g_fault.code;
  }
  return fault_real(f)->pMethods->xSync(fault_real(f), flags);
}
static int fault_size(sqlite3_file *f, sqlite3_int64 *n) {
  return fault_real(f)->pMethods->xFileSize(fault_real(f), n);
}
static int fault_lock(sqlite3_file *f, int l) {
  return fault_real(f)->pMethods->xLock(fault_real(f), l);
}
static int fault_unlock(sqlite3_file *f, int l) {
  return fault_real(f)->pMethods->xUnlock(fault_real(f), l);
}
static int fault_check_lock(sqlite3_file *f, int *r) {
  return fault_real(f)->pMethods->xCheckReservedLock(fault_real(f), r);
}
static int fault_fcntl(sqlite3_file *f, int op, void *arg) {
  return fault_real(f)->pMethods->xFileControl(fault_real(f), op, arg);
}
static int fault_sector(sqlite3_file *f) {
  return fault_real(f)->pMethods->xSectorSize(fault_real(f));
}
static int fault_devchar(sqlite3_file *f) {
  return fault_real(f)->pMethods->xDeviceCharacteristics(fault_real(f));
}
static int fault_shm_map(sqlite3_file *f, int pg, int sz, int ext, void volatile **p) {
  return fault_real(f)->pMethods->xShmMap(fault_real(f), pg, sz, ext, p);
}
static int fault_shm_lock(sqlite3_file *f, int off, int n, int flags) {
  return fault_real(f)->pMethods->xShmLock(fault_real(f), off, n, flags);
}
static void fault_shm_barrier(sqlite3_file *f) {
  fault_real(f)->pMethods->xShmBarrier(fault_real(f));
}
static int fault_shm_unmap(sqlite3_file *f, int del) {
  return fault_real(f)->pMethods->xShmUnmap(fault_real(f), del);
}
static int fault_fetch(sqlite3_file *f, sqlite3_int64 o, int n, void **p) {
  return fault_real(f)->pMethods->xFetch(fault_real(f), o, n, p);
}
static int fault_unfetch(sqlite3_file *f, sqlite3_int64 o, void *p) {
  return fault_real(f)->pMethods->xUnfetch(fault_real(f), o, p);
}

static const sqlite3_io_methods FAULT_IO = {3,
                                            fault_close,
                                            fault_read,
                                            fault_write,
                                            fault_truncate,
                                            fault_sync,
                                            fault_size,
                                            fault_lock,
                                            fault_unlock,
                                            fault_check_lock,
                                            fault_fcntl,
                                            fault_sector,
                                            fault_devchar,
                                            fault_shm_map,
                                            fault_shm_lock,
                                            fault_shm_barrier,
                                            fault_shm_unmap,
                                            fault_fetch,
                                            fault_unfetch};

static int fault_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *f, int flags, int *out) {
  struct fault_file *ff = (struct fault_file *)f;
  memset(ff, 0, sizeof *ff);
  ff->real = (sqlite3_file *)&ff[1];
  int rc = g_fault.real->xOpen(g_fault.real, name, ff->real, flags, out);
  if (rc != SQLITE_OK) {
    ff->real->pMethods = NULL;
    return rc;
  }
  ff->is_log = (flags & (SQLITE_OPEN_WAL | SQLITE_OPEN_MAIN_JOURNAL)) != 0;
  /* Only methods the real file has (a version-1 file has no shared memory or mmap). */
  ff->base.pMethods = ff->real->pMethods ? &FAULT_IO : NULL;
  return rc;
}
static int fault_delete(sqlite3_vfs *v, const char *n, int s) {
  return g_fault.real->xDelete(g_fault.real, n, s);
}
static int fault_access(sqlite3_vfs *v, const char *n, int fl, int *r) {
  return g_fault.real->xAccess(g_fault.real, n, fl, r);
}
static int fault_fullpath(sqlite3_vfs *v, const char *n, int len, char *out) {
  return g_fault.real->xFullPathname(g_fault.real, n, len, out);
}
static void *fault_dlopen(sqlite3_vfs *v, const char *n) {
  return g_fault.real->xDlOpen(g_fault.real, n);
}
static void fault_dlerror(sqlite3_vfs *v, int n, char *m) {
  g_fault.real->xDlError(g_fault.real, n, m);
}
static void (*fault_dlsym(sqlite3_vfs *v, void *h, const char *s))(void) {
  return g_fault.real->xDlSym(g_fault.real, h, s);
}
static void fault_dlclose(sqlite3_vfs *v, void *h) { g_fault.real->xDlClose(g_fault.real, h); }
static int fault_random(sqlite3_vfs *v, int n, char *out) {
  return g_fault.real->xRandomness(g_fault.real, n, out);
}
static int fault_sleep(sqlite3_vfs *v, int us) { return g_fault.real->xSleep(g_fault.real, us); }
static int fault_time(sqlite3_vfs *v, double *t) {
  return g_fault.real->xCurrentTime(g_fault.real, t);
}
static int fault_lasterr(sqlite3_vfs *v, int n, char *m) {
  return g_fault.real->xGetLastError ? g_fault.real->xGetLastError(g_fault.real, n, m) : 0;
}
static int fault_time64(sqlite3_vfs *v, sqlite3_int64 *t) {
  return g_fault.real->xCurrentTimeInt64(g_fault.real, t);
}

/* Registers the fault VFS as the default (once per process); returns SQLITE_OK. */
static inline int fault_vfs_install(void) {
  if (g_fault.real) return SQLITE_OK;
  g_fault.real = sqlite3_vfs_find(NULL);
  if (!g_fault.real || g_fault.real->iVersion < 2) return SQLITE_ERROR;
  sqlite3_vfs *v = &g_fault.vfs;
  v->iVersion = 2;
  v->szOsFile = (int)sizeof(struct fault_file) + g_fault.real->szOsFile;
  v->mxPathname = g_fault.real->mxPathname;
  v->zName = "fault";
  v->xOpen = fault_open;
  v->xDelete = fault_delete;
  v->xAccess = fault_access;
  v->xFullPathname = fault_fullpath;
  v->xDlOpen = fault_dlopen;
  v->xDlError = fault_dlerror;
  v->xDlSym = fault_dlsym;
  v->xDlClose = fault_dlclose;
  v->xRandomness = fault_random;
  v->xSleep = fault_sleep;
  v->xCurrentTime = fault_time;
  v->xGetLastError = fault_lasterr;
  v->xCurrentTimeInt64 = fault_time64;
  return sqlite3_vfs_register(v, 1);
}

/* Arms a fault (FAULT_VFS_NONE disarms) with the code the failing calls return. */
static inline void fault_vfs_arm(enum fault_vfs_kind kind, int code) {
  g_fault.kind = kind;
  g_fault.code = code;
  g_fault.hits = 0;
}

#endif
