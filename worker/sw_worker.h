/* sw_worker.h: the worker daemon's session with the coordinator (DESIGN.md section 4).
 *
 * One DEALER socket whose routing id is the worker id plus a fresh nonce per socket (the
 * coordinator binds the worker id to the first session's key and refuses a second live session
 * with that id: docs/security.md), one zmq_poll loop that also watches the trainer's stdout,
 * and this conversation:
 *
 *   connect -> Hello -> Welcome (heartbeat, liveness, lease ttl) -> resend the spool -> Ready
 *   Assign -> per run: prepare scene (child process) -> quiet wait (sampler) -> RunStarted ->
 *             Progress* -> RunFinished (spooled first; resent after every Welcome and every 15
 *             heartbeat intervals until its Ack) -> ... -> LeaseDone -> Ready
 *   Heartbeat both ways every interval, carrying the lease id and epoch (renews the lease).
 *   Silence from the coordinator for `liveness` intervals: reconnect (new socket, Hello again);
 *   the trainer keeps running. Silence longer than the lease ttl: the trainer is killed and the
 *   lease given up, because the coordinator has re-queued its pair by then.
 *   Cancel(lease) / Reject(stale lease): stop the trainer (SIGTERM, then SIGKILL), drop the
 *   lease and its spooled results. Reject(unknown session): Hello again.
 *
 * The loop returns when *stop becomes non-zero (SIGTERM/SIGINT in the daemon): the trainer is
 * stopped, the spool stays on disk for the next start. */
#ifndef SW_WORKER_H
#define SW_WORKER_H

#include <signal.h>
#include <stdint.h>

#include "sw_err.h"
#include "sw_msg.h"

struct sw_worker_opts {
  const char *endpoint;     /* coordinator worker endpoint, e.g. tcp://host:7710 */
  const char *worker_id;    /* unique in the fleet; default: HOST-MACHINEID8 (docs/cli.md) */
  struct sw_msg_kv *labels; /* borrowed */
  size_t n_labels;
  const char *keys_dir;    /* CurveZMQ: public.key, secret.key, coordinator.pub; NULL = none */
  int insecure;            /* 1 = plain TCP (keys_dir ignored); 0 requires keys_dir */
  const char *work_dir;    /* runs/, spool/, scenes/ live here */
  const char *splat_train; /* builtin runner's trainer; NULL when not found */
  int heartbeat_ms;        /* before Welcome (then the coordinator's value); 0 = 1000 */
  int64_t grace_ms;        /* SIGTERM -> SIGKILL; 0 = 5000 */
  int keep_runs;           /* keep run directories after delivery (debugging) */
  const char *host_lock;   /* the host measurement lock file; NULL: $SW_HOST_LOCK, else
                            * /tmp/splatsweep-measure.lock */
  int shared_host;         /* 1: this worker owns a separate device and accepts sharing the host
                            * with other workers' runs (no host lock; docs/operations.md) */
  const volatile sig_atomic_t *stop; /* non-zero ends the loop; may be NULL */
};

/* Runs the worker until *stop. zmq_ctx: a ZeroMQ context owned by the caller. Returns 0 on a
 * requested stop, SW_EINVAL for bad options or keys, SW_EPROTO when the coordinator rejects our
 * protocol version, SW_ENET for socket failures. */
int sw_worker_run(void *zmq_ctx, const struct sw_worker_opts *opts, struct sw_err *err);

#endif
