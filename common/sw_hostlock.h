/* sw_hostlock.h: the host-wide measurement lock (DESIGN.md section 5: one measurement at a time
 * per machine). Workers on one host take it around each lease (scene preparation, settle
 * window, both runs of the pair), so no two measurements overlap, whatever user or process
 * tree the workers run in. It is an flock(2) on a file every worker of the host opens (by
 * default /tmp/splatsweep-measure.lock, SW_HOST_LOCK or --host-lock overrides): the kernel
 * drops it when its holder exits or crashes, so a dead holder never blocks the host. The file
 * holds the holder's pid and worker id, for the waiting worker's log line.
 *
 * Taking it never blocks: sw_hostlock_try is called from the worker's poll loop each turn. */
#ifndef SW_HOSTLOCK_H
#define SW_HOSTLOCK_H

#include <stddef.h>

#include "sw_err.h"

typedef struct sw_hostlock sw_hostlock_t;

/* Opens (creating, mode 0666) the lock file at path. Returns 0, or SW_EIO naming the path. */
int sw_hostlock_open(const char *path, const char *holder, sw_hostlock_t **out, struct sw_err *err);
void sw_hostlock_close(sw_hostlock_t **self_p);
/* Tries to take the lock: 1 taken (or already held by us), 0 held by another process (who:
 * its "pid worker-id" text when readable, else ""), or SW_EIO. */
int sw_hostlock_try(sw_hostlock_t *self, char *who, size_t who_cap, struct sw_err *err);
/* Releases it (no-op when not held). */
void sw_hostlock_release(sw_hostlock_t *self);
int sw_hostlock_held(const sw_hostlock_t *self);

#endif
