/* sw_upload.h: the worker's artifact uploads (docs/protocol.md "Artifacts").
 *
 * When a run ends, sw_upload_stage hard-links (or copies) the run's result.json, trainer.log,
 * final.ply (when the Assign wants it) and the PNGs of renders/ into UPLOADS/r<RUN>-a<ATTEMPT>/,
 * writes a manifest (the store's URL, the run's token, each file's size and sha256) and returns the
 * list that RunFinished carries. Staging happens before the run directory is removed, so nothing
 * depends on the run directory afterwards.
 *
 * The uploads themselves happen in a thread of their own (libcurl), and only for entries the
 * coordinator has acknowledged (sw_upload_acked: the result is stored, so the store expects the
 * files). The result's delivery never waits for an upload, and an upload never touches the
 * result spool: a failed upload costs at most that file. Each file is PUT with its token; 2xx
 * removes it; 401, 404, 409, 413 and 422 (refused for good) remove it with a warning; anything
 * else (network, 5xx) is retried with backoff (2 s doubling, 8 tries per entry), after which
 * the entry is given up. Nothing is sent while the worker measures or waits to (sw_upload_hold),
 * nor while another worker of the host holds the measurement lock. An entry never acknowledged is
 * removed after a day. Entries survive a worker restart (the next one carries on).
 *
 * Lifecycle: sw_upload_start / sw_upload_stop; stage and acked are called from the poll loop. */
#ifndef SW_UPLOAD_H
#define SW_UPLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sw_err.h"
#include "sw_msg.h"

typedef struct sw_upload sw_upload_t;

/* Starts the upload thread over the folder dir (created). host_lock: the host measurement lock's
 * file (sw_hostlock.h), or NULL for a worker that shares the host (--shared-host): the thread
 * uploads only while it can take that lock itself, so no worker of the host measures meanwhile.
 * holder names the thread in the lock file. Returns 0, SW_EIO, SW_ENOMEM. */
int sw_upload_start(const char *dir, const char *host_lock, const char *holder, sw_upload_t **out,
                    struct sw_err *err);
/* Stops the thread (a transfer in flight is aborted; the entry stays for the next start). */
void sw_upload_stop(sw_upload_t **self_p);

/* Stages the artifacts of run_dir (see above). Files larger than max_bytes are left out with a
 * log line. *out (malloc'd, caller frees) and *n_out list what was staged; n_out 0 when nothing
 * was. Returns 0 or SW_EIO / SW_ENOMEM (nothing staged: the result goes without artifacts). */
int sw_upload_stage(sw_upload_t *self, const char *run_dir, uint64_t run_id, uint32_t attempt,
                    const char *url, const char *token, uint64_t max_bytes, bool want_ply,
                    struct sw_msg_artifact **out, size_t *n_out, struct sw_err *err);

/* The result of (run, attempt) is stored: its entry may upload now. No-op without an entry. */
void sw_upload_acked(sw_upload_t *self, uint64_t run_id, uint32_t attempt);

/* hold 1: the worker is measuring (quiet wait, trainer run): no upload may load the machine, so
 * a transfer in flight is cut (and retried later, not counted as a try) and none starts until
 * hold 0. Called from the poll loop whenever the phase changes. */
void sw_upload_hold(sw_upload_t *self, int hold);

/* Files uploaded and entries given up since start (for logs and tests). */
void sw_upload_counts(sw_upload_t *self, uint64_t *uploaded, uint64_t *given_up);

#endif
