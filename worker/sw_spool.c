/* sw_spool.c: spool directory of encoded RunFinished frames. */
#include "sw_spool.h"

#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sw_fs.h"

struct sw_spool {
  char dir[4096];
};

int sw_spool_open(const char *dir, sw_spool_t **out, struct sw_err *err) {
  *out = NULL;
  int rc = sw_fs_mkdir_p(dir, err);
  if (rc) return rc;
  sw_spool_t *s = calloc(1, sizeof *s);
  if (!s) return sw_err_set(err, SW_ENOMEM, "spool: out of memory");
  snprintf(s->dir, sizeof s->dir, "%s", dir);
  *out = s;
  return 0;
}

void sw_spool_close(sw_spool_t **self_p) {
  if (!self_p || !*self_p) return;
  free(*self_p);
  *self_p = NULL;
}

static int parse_name(const char *name, uint64_t *run, uint32_t *attempt, uint64_t *lease) {
  unsigned long long r, l;
  unsigned a;
  int used = 0;
  if (sscanf(name, "r%llu-a%u-l%llu.msg%n", &r, &a, &l, &used) != 3 || name[used] != '\0')
    return -1;
  *run = r;
  *attempt = a;
  *lease = l;
  return 0;
}

int sw_spool_put(sw_spool_t *self, uint64_t run_id, uint32_t attempt, uint64_t lease_id,
                 const void *frame, size_t len, struct sw_err *err) {
  char path[4200];
  snprintf(path, sizeof path, "%s/r%" PRIu64 "-a%u-l%" PRIu64 ".msg", self->dir, run_id, attempt,
           lease_id);
  return sw_fs_write_atomic(path, frame, len, err);
}

/* Removes entries matching (run, attempt) when by_lease is 0, or lease when it is 1. */
static int remove_where(sw_spool_t *self, int by_lease, uint64_t run_id, uint32_t attempt,
                        uint64_t lease_id) {
  DIR *d = opendir(self->dir);
  if (!d) return 0;
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    uint64_t r, l;
    uint32_t a;
    if (parse_name(e->d_name, &r, &a, &l)) continue;
    if (by_lease ? l == lease_id : (r == run_id && a == attempt)) {
      char path[4400];
      snprintf(path, sizeof path, "%s/%s", self->dir, e->d_name);
      if (unlink(path) == 0) n++;
    }
  }
  closedir(d);
  return n;
}

int sw_spool_remove(sw_spool_t *self, uint64_t run_id, uint32_t attempt) {
  return remove_where(self, 0, run_id, attempt, 0);
}

int sw_spool_remove_lease(sw_spool_t *self, uint64_t lease_id) {
  return remove_where(self, 1, 0, 0, lease_id);
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

int sw_spool_foreach(sw_spool_t *self,
                     void (*cb)(void *ctx, uint64_t run_id, uint32_t attempt, uint64_t lease_id,
                                const void *frame, size_t len),
                     void *ctx) {
  DIR *d = opendir(self->dir);
  if (!d) return 0;
  char **names = NULL;
  size_t n = 0, cap = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    uint64_t r, l;
    uint32_t a;
    if (parse_name(e->d_name, &r, &a, &l)) continue;
    if (n == cap) {
      cap = cap ? cap * 2 : 16;
      char **nn = realloc(names, cap * sizeof *nn);
      if (!nn) break;
      names = nn;
    }
    names[n] = strdup(e->d_name);
    if (names[n]) n++;
  }
  closedir(d);
  if (n) qsort(names, n, sizeof *names, cmp_str);
  int visited = 0;
  for (size_t i = 0; i < n; i++) {
    uint64_t r = 0, l = 0;
    uint32_t a = 0;
    parse_name(names[i], &r, &a, &l);
    char path[4400];
    snprintf(path, sizeof path, "%s/%s", self->dir, names[i]);
    char *data = NULL;
    size_t len = 0;
    if (sw_fs_read_all(path, &data, &len, NULL) == 0) {
      if (cb) cb(ctx, r, a, l, data, len);
      visited++;
      free(data);
    }
    free(names[i]);
  }
  free(names);
  return visited;
}

int sw_spool_count(sw_spool_t *self) { return sw_spool_foreach(self, NULL, NULL); }
