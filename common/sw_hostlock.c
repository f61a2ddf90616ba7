/* sw_hostlock.c: the host-wide measurement lock, an flock on a shared file. */
#include "sw_hostlock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

struct sw_hostlock {
  int fd;
  int held;
  char path[4096];
  char holder[256];
};

int sw_hostlock_open(const char *path, const char *holder, sw_hostlock_t **out,
                     struct sw_err *err) {
  *out = NULL;
  sw_hostlock_t *l = calloc(1, sizeof *l);
  if (!l) return sw_err_set(err, SW_ENOMEM, "host lock: out of memory");
  snprintf(l->path, sizeof l->path, "%s", path);
  snprintf(l->holder, sizeof l->holder, "%d %s\n", (int)getpid(), holder ? holder : "");
  /* O_NOFOLLOW: a link planted at a shared /tmp path must not make us write elsewhere. */
  mode_t old = umask(0);
  l->fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0666);
  umask(old);
  if (l->fd < 0) {
    int e = errno;
    free(l);
    return sw_err_set(err, SW_EIO, "host lock %s: %s", path, strerror(e));
  }
  *out = l;
  return 0;
}

void sw_hostlock_close(sw_hostlock_t **self_p) {
  if (!self_p || !*self_p) return;
  sw_hostlock_release(*self_p);
  close((*self_p)->fd);
  free(*self_p);
  *self_p = NULL;
}

int sw_hostlock_try(sw_hostlock_t *self, char *who, size_t who_cap, struct sw_err *err) {
  if (who_cap) who[0] = '\0';
  if (self->held) return 1;
  if (flock(self->fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK || errno == EINTR) {
      if (who_cap) {
        ssize_t n = pread(self->fd, who, who_cap - 1, 0);
        who[n > 0 ? n : 0] = '\0';
        who[strcspn(who, "\n")] = '\0';
      }
      return 0;
    }
    return sw_err_set(err, SW_EIO, "host lock %s: %s", self->path, strerror(errno));
  }
  self->held = 1;
  /* Who holds it, for the others' log lines; a failed write only loses that detail. */
  if (ftruncate(self->fd, 0) == 0) {
    ssize_t w = pwrite(self->fd, self->holder, strlen(self->holder), 0);
    (void)w;
  }
  return 1;
}

void sw_hostlock_release(sw_hostlock_t *self) {
  if (!self || !self->held) return;
  flock(self->fd, LOCK_UN);
  self->held = 0;
}

int sw_hostlock_held(const sw_hostlock_t *self) { return self && self->held; }
