/* sw_spool.h: the worker's spool of finished runs awaiting acknowledgement.
 *
 * Delivery of results is at-least-once (DESIGN.md section 4): each finished run is written to
 * the spool (atomically: temporary file, fsync, rename) before it is sent, resent after every
 * reconnect (and periodically while connected) until the coordinator's Ack arrives, and deleted
 * then. A worker restarted with the
 * same spool directory resends what it had not delivered.
 *
 * On disk: one file per run attempt, named r<RUN>-a<ATTEMPT>-l<LEASE>.msg, holding the encoded
 * RunFinished frame exactly as sent. */
#ifndef SW_SPOOL_H
#define SW_SPOOL_H

#include <stddef.h>
#include <stdint.h>

#include "sw_err.h"

typedef struct sw_spool sw_spool_t;

/* Opens (creating) the spool directory dir (borrowed, copied). */
int sw_spool_open(const char *dir, sw_spool_t **out, struct sw_err *err);
void sw_spool_close(sw_spool_t **self_p);

/* Stores one frame for (run, attempt, lease), replacing an older copy. Returns 0 or SW_EIO. */
int sw_spool_put(sw_spool_t *self, uint64_t run_id, uint32_t attempt, uint64_t lease_id,
                 const void *frame, size_t len, struct sw_err *err);
/* Removes the entry of (run, attempt) (any lease). Returns how many files were removed. */
int sw_spool_remove(sw_spool_t *self, uint64_t run_id, uint32_t attempt);
/* Removes every entry of lease_id (its lease was cancelled as stale). Returns the count. */
int sw_spool_remove_lease(sw_spool_t *self, uint64_t lease_id);
/* Calls cb for every stored frame, oldest name order. A file that cannot be read is skipped.
 * Returns the number of entries visited. */
int sw_spool_foreach(sw_spool_t *self,
                     void (*cb)(void *ctx, uint64_t run_id, uint32_t attempt, uint64_t lease_id,
                                const void *frame, size_t len),
                     void *ctx);
/* Number of entries now. */
int sw_spool_count(sw_spool_t *self);

#endif
