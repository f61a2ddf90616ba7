/* sw_coord.h: the coordinator daemon (DESIGN.md sections 3-5): one zmq_poll loop over the
 * worker ROUTER and the control ROUTER, the registry of worker sessions with heartbeats and
 * liveness, and the scheduler (sw_sched.h) driven from that loop with short store transactions.
 *
 * Worker endpoint: Hello -> Welcome; Ready -> Assign now, or later when work appears (the worker
 * waits in a queue, first come first served); RunFinished -> Ack after the store committed, or
 * Cancel(lease) when stale; Heartbeat renews the lease (Cancel when stale); LeaseDone closes it.
 * A message from a peer without a live session gets Reject(unknown): say Hello again.
 * Control endpoint: Submit, Status, Report, Cancel requests each answered with one reply.
 * Every frame is decoded by the codec; a frame that fails is dropped and counted, an unknown
 * protocol version is answered with Reject(protocol). Counters appear in status JSON under
 * "coordinator".
 *
 * Security: with keys, both endpoints are CURVE servers and a ZAP handler thread (started before
 * either socket binds) admits only the public keys found in KEYS/authorized/. Without keys the
 * coordinator refuses to start unless insecure is set (fail closed). The ZAP reply's User-Id is
 * the key's allow-list file name; a worker id is bound to the key of its first Hello for the
 * coordinator's lifetime: a Hello with that id and another key is refused (Reject incompatible)
 * and a non-Hello frame whose key is not its session's is dropped; both are counted
 * ("refused_identity", "dropped_identity") and logged. The worker ROUTER has no handover: a
 * connection presenting a live peer's routing id is ignored, workers use a fresh routing id per
 * socket, and a Hello for a worker id whose session is live from another connection is refused
 * (CURVE: except with the same key); a session silent past liveness is replaced, its lease
 * staying with the worker id. See docs/security.md. */
#ifndef SW_COORD_H
#define SW_COORD_H

#include <signal.h>
#include <stdint.h>

#include <jansson.h>

#include "sw_err.h"

typedef struct sw_coord sw_coord_t;

/* How long one statement of the daemon waits on a locked database before failing (retried). */
#define SW_COORD_BUSY_MS 200
/* The endpoints bound when sw_coord_opts names none: every interface. */
#define SW_COORD_BIND_WORK "tcp://*:7710"
#define SW_COORD_BIND_CONTROL "tcp://*:7711"

struct sw_coord_opts {
  const char *bind_work;             /* NULL: SW_COORD_BIND_WORK */
  const char *bind_control;          /* NULL: SW_COORD_BIND_CONTROL */
  const char *db_path;               /* NULL: SW_STORE_DEFAULT_PATH (its folder is made on
                                      * first use); else its folder must exist */
  const char *keys_dir;              /* public.key, secret.key, authorized/; NULL = none */
  int insecure;                      /* plain TCP; required when keys_dir is NULL */
  int heartbeat_ms;                  /* default 1000 */
  int liveness;                      /* default 5 */
  int64_t lease_ttl_ms;              /* default 60000 */
  int max_attempts;                  /* default 3 */
  const volatile sig_atomic_t *stop; /* non-zero ends sw_coord_run; may be NULL */
  /* Optional: called on the poll loop's thread once per heartbeat interval with the status JSON
   * (sw_coord_status_json of every sweep, compact text, borrowed for the call). The live
   * dashboard (sw_http_publish) keeps a copy, so its thread never asks the loop anything and
   * the loop never waits for it. The callback must not block. */
  void (*on_status)(void *arg, const char *status_json);
  void *on_status_arg;
  /* The dashboard's address as the recipients of notifications reach it (e.g.
   * http://coord.lab:7780); webhook payloads link to BASE/sweep/ID. NULL: no link. */
  const char *dashboard_url;
  /* The artifact store's URL as workers reach it (sw_artifact.h); NULL: no uploads. The upload
   * key is read from beside the database. */
  const char *artifact_url;
};

/* Opens the store and the scheduler, starts the ZAP handler (secure mode), binds both endpoints.
 * zmq_ctx is owned by the caller and must outlive the coordinator. Returns 0, SW_EINVAL (no keys
 * and not insecure, bad key files, empty allow-list), SW_ENET (bind failed), SW_EDB. */
int sw_coord_new(void *zmq_ctx, const struct sw_coord_opts *opts, sw_coord_t **out,
                 struct sw_err *err);
/* Closes sockets (linger 0), stops the ZAP thread, closes the store. NULL-safe. */
void sw_coord_destroy(sw_coord_t **self_p);

/* One turn of the loop: waits up to timeout_ms for frames, handles them, and runs the timers
 * (heartbeats, liveness, lease expiry, waiting workers). Returns 0 or a fatal code. */
int sw_coord_poll(sw_coord_t *self, int timeout_ms, struct sw_err *err);
/* Polls until *opts->stop. */
int sw_coord_run(sw_coord_t *self, struct sw_err *err);

/* In-process submit (local mode): the same path as a Submit request. yaml is the spec's text,
 * file_name used in error positions. Returns 0 and *sweep_id, or SW_EINVAL (bad spec; message
 * FILE:LINE:COLUMN) / SW_EDB. */
int sw_coord_submit(sw_coord_t *self, const char *yaml, const char *file_name, int64_t *sweep_id,
                    struct sw_err *err);
/* 1 when the sweep is finished, 0 while it runs, negative on error. */
int sw_coord_sweep_finished(sw_coord_t *self, int64_t sweep_id, struct sw_err *err);
/* Status JSON: the scheduler's view plus "coordinator" (counters, sessions, Ready->Assign
 * latency percentiles, resident memory). New reference or NULL. */
json_t *sw_coord_status_json(sw_coord_t *self, int64_t sweep_id, int64_t workers_offset,
                             int workers_limit, struct sw_err *err);
/* Number of live worker sessions. */
int sw_coord_sessions(const sw_coord_t *self);

#endif
