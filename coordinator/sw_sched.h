/* sw_sched.h: the scheduler of sweeps, pairs and leases (DESIGN.md sections 4-5).
 *
 * Pure logic over the store (sw_store.h) with explicit `now` arguments in milliseconds (any
 * monotonic origin; the coordinator passes sw_clock_mono_ms()), so tests drive it with fake time
 * and fake workers. It never does I/O other than through the store and never blocks.
 *
 * The coordinator's poll loop calls:
 *   hello / gone    when a worker session starts / is declared offline (liveness),
 *   next            when an idle worker sends Ready: 1 and a lease to send as Assign, or 0,
 *   renew           on every heartbeat carrying a lease (deadline = now + lease_ttl),
 *   result          on RunFinished: 0 = committed (send Ack), SW_ESTATE = stale (send Cancel),
 *   lease_done      on LeaseDone,
 *   tick            every heartbeat interval: expires leases past their deadline,
 *   cancel, submit, status_json  for the control endpoint.
 *
 * Rules implemented here: a pair's runs go to one worker back to back under one lease, one lease
 * per worker; orders counterbalanced (alternate off-on, on-off, ...; fixed off-on; random seeded);
 * eligibility from placement.match (globs on labels and fingerprint keys) and placement.pin;
 * spread by machine (a worker whose machine, the fingerprint's hostname or else the worker id,
 * already ran more pairs of a gate than an idle eligible worker's machine leaves the next pair to
 * that worker; workers sharing a host count as one machine); fairness (sweeps served round-robin,
 * least recently served first, then by priority); an expired lease re-queues the whole pair as
 * attempt + 1 and keeps the finished arms as abandoned; attempts per pair capped (poison pair ->
 * failed); contamination rules applied to the window samples with one replacement pair per affected
 * pair; the gate engine decides after each completed pair (sequential looks when pairs.sequential
 * is true, extending to pairs.max).
 *
 * The spec is common/'s (struct sw_spec, loaded by sw_spec_load_string from the submitted YAML,
 * and again from the stored YAML after a restart): its limits, defaults, grid expansion, point
 * labels, resolved run configs and placement rule are the loader's, never checked or written
 * a second time here.
 *
 * Layers (calls run down only; a lower file never calls a higher one):
 *   sw_sched.c         entry points: this header's functions (workers, next, renew, result,
 *                      lease_done, tick, cancel, submit, lifecycle); opens every transaction
 *   sw_sched_status.c  entry points of the progress view (status_json, sweep_finished)
 *   sw_sched_gate.c    a result's consequences: classification, pair completion, re-queue,
 *                      replacement, the gate decision (the gate engine writes the verdict and
 *                      its reasons), sweep completion
 *   sw_sched_submit.c  a spec into its series rows: gate, pairs and runs, grid points
 *   sw_sched_mem.c     the in-memory mirror of running sweeps, lease rows
 * sw_sched_int.h declares each layer's functions under its name. A result's path reads top to
 * bottom: sw_sched_result (sw_sched.c) stores the attempt after sched_classify, then
 * sched_pair_check (sw_sched_gate.c) closes the lease, completes or re-queues the pair, adds a
 * replacement (sw_sched_submit.c) and runs the gate decision, which stores the engine's verdict,
 * and marks the sweep finished; sw_sched_result commits. */
#ifndef SW_SCHED_H
#define SW_SCHED_H

#include <stdint.h>

#include <jansson.h>

#include "sw_err.h"
#include "sw_store.h"

typedef struct sw_sched sw_sched_t;

struct sw_sched_opts {
  int64_t lease_ttl_ms; /* a lease not renewed for this long expires; 0 = 60000 */
  int max_attempts;     /* attempts per pair before it is failed as poison; 0 = 3 */
  /* An offline worker without a lease leaves memory after this long (it stays in the store, its
   * key binding too, and comes back with its next Hello); 0 = SW_SCHED_WORKER_EXPIRE_MS. */
  int64_t worker_expire_ms;
  /* At most this many offline workers without a lease stay in memory: beyond it the longest
   * offline leave at the next tick, expired or not (a flood of ids costs bounded memory);
   * 0 = SW_SCHED_WORKERS_OFFLINE_MAX. */
  int workers_offline_max;
};
#define SW_SCHED_WORKER_EXPIRE_MS (10 * 60 * 1000)
#define SW_SCHED_WORKERS_OFFLINE_MAX 1000
/* Workers listed per status reply unless the request asks for another page size. */
#define SW_SCHED_STATUS_WORKERS 200
#define SW_SCHED_STATUS_WORKERS_MAX 1000
void sw_sched_opts_default(struct sw_sched_opts *opts);

/* Creates a scheduler over an open store (borrowed; must outlive the scheduler). Reloads active
 * sweeps and leases from the store, so a restarted coordinator resumes: leases found active get
 * a fresh deadline of now + lease_ttl. opts may be NULL. */
int sw_sched_new(sw_store_t *store, const struct sw_sched_opts *opts, int64_t now, sw_sched_t **out,
                 struct sw_err *err);
void sw_sched_destroy(sw_sched_t **sched);

/* Submits a sweep from its spec's text (YAML or JSON; borrowed, kept verbatim in the store).
 * The spec loader (sw_spec_load_string) checks it, with source as FILE in its messages (NULL or
 * "" = "spec"); the store keeps the text and the normalised JSON (sw_spec_to_json) for the
 * readers. name is an optional display name (NULL = the spec's name). A gate's runs are the
 * spec's resolved arms (sw_spec_resolve_arm), a grid's its points (sw_spec_grid_expand,
 * sw_spec_resolve_point), each point its own single-run "pair". Everything is written in one
 * transaction. Returns 0 and *sweep_id, SW_EINVAL (the loader's FILE:LINE:COLUMN message),
 * SW_ENOMEM or SW_EDB. */
int sw_sched_submit(sw_sched_t *sched, const char *spec_yaml, const char *source, const char *name,
                    int64_t now, int64_t *sweep_id, struct sw_err *err);

/* A worker session started (or restarted). fingerprint_json: a JSON object text (may be NULL);
 * labels_json: a JSON object of label -> value text (may be NULL). A lease it still holds stays
 * valid (a short outage costs nothing). */
int sw_sched_worker_hello(sw_sched_t *sched, const char *worker_id, const char *fingerprint_json,
                          const char *labels_json, int64_t now, struct sw_err *err);
/* The worker was declared offline. Its lease keeps running until its own deadline. */
int sw_sched_worker_gone(sw_sched_t *sched, const char *worker_id, int64_t now, struct sw_err *err);

/* The key (ZAP User-Id) worker_id is bound to. Returns 1 with the key copied into buf (len
 * bytes, truncated never: a longer key is SW_EINVAL), 0 when the id has no binding (never seen,
 * or only in insecure mode), or a negative code. Memory first, then the store, so a binding
 * survives a coordinator restart and the worker's expiry from memory. */
int sw_sched_worker_key(sw_sched_t *sched, const char *worker_id, char *buf, size_t len,
                        struct sw_err *err);

/* Binds worker_id (known: call after sw_sched_worker_hello) to key when it has no binding yet;
 * an existing binding is never replaced (0 either way; compare with sw_sched_worker_key). */
int sw_sched_worker_bind(sw_sched_t *sched, const char *worker_id, const char *key,
                         struct sw_err *err);

/* How many workers the scheduler holds in memory (online, holding a lease, or offline for less
 * than worker_expire_ms, at most workers_offline_max of those). */
int sw_sched_workers_in_memory(const sw_sched_t *sched);

#define SW_SCHED_MAX_RUNS 2

/* One run of a lease, in the order the worker runs them. Strings owned by the lease. */
struct sw_lease_run {
  int64_t run_id;
  char arm[64];      /* "off" / "on", or the grid point's label (cut to 63 bytes) */
  char *config_json; /* fully resolved trainer config, a JSON object */
};

/* What an Assign carries. Filled by sw_sched_next; release with sw_lease_clear. */
struct sw_lease {
  int64_t lease_id;
  uint64_t epoch; /* the pair's attempt number the lease was issued for */
  int64_t deadline_ms;
  int64_t sweep_id, gate_id, pair_id; /* gate_id 0 for grid runs */
  int pair_index;
  int attempt;
  char order[8]; /* "off-on", "on-off" or "single" */
  int n_runs;
  struct sw_lease_run runs[SW_SCHED_MAX_RUNS];
  char *trainer_json;       /* the spec's trainer object */
  char *scene_json;         /* the spec's scene object, "{}" when the spec has none */
  char *contamination_json; /* the spec's contamination object */
};
void sw_lease_clear(struct sw_lease *lease);

/* Picks work for an idle worker. Returns 1 and fills *out when a lease was made, 0 when nothing
 * suits this worker now, or a negative code. A worker that asks while it still holds a lease gets
 * that lease again (its runs without a stored result, a fresh deadline): only LeaseDone gives a
 * lease up, so a reconnect or a coordinator restart never costs a pair an attempt.
 * Unknown workers get SW_ENOTFOUND (the coordinator calls hello first). */
int sw_sched_next(sw_sched_t *sched, const char *worker_id, int64_t now, struct sw_lease *out,
                  struct sw_err *err);

/* Renews a lease (heartbeat): 0, or SW_ESTATE when the lease is not active, the epoch differs
 * or worker_id is not its holder (the coordinator then tells the worker to abort). */
int sw_sched_renew(sw_sched_t *sched, int64_t lease_id, uint64_t epoch, const char *worker_id,
                   int64_t now, struct sw_err *err);

/* A finished run, as RunFinished carries it. Strings and arrays borrowed. */
struct sw_run_result {
  int64_t lease_id;
  uint64_t epoch;
  const char *worker_id;
  int64_t run_id;
  int attempt;
  int exit_status;
  const char *result_json; /* result.json text; NULL or unparsable counts as a failed run */
  const char *error_text;  /* may be NULL */
  const struct sw_window_sample *pre;
  int n_pre;
  const struct sw_window_sample *during;
  int n_during;
  int quiet;              /* 1: the machine was quiet for settle_s before the run started */
  const char *env_before; /* the worker's environment JSON before / after the run; may be NULL */
  const char *env_after;
  int64_t run_start_wall_ms, run_end_wall_ms; /* the trainer's start and end, worker's wall clock */
};

/* Stores a result and, when it completes its pair, runs the contamination check, the
 * replacement rule and the gate decision, all in one transaction. Returns 0 once committed
 * (also when that (run, attempt) was already stored: a duplicate delivery is acknowledged
 * again), SW_ESTATE when stale (lease not active, wrong epoch or worker, run not in the lease),
 * SW_ENOTFOUND for an unknown run, SW_EDB on a store failure (do not acknowledge). */
int sw_sched_result(sw_sched_t *sched, const struct sw_run_result *res, int64_t now,
                    struct sw_err *err);

/* The worker finished a lease. Runs without a stored result make the pair re-queue as
 * attempt + 1 (or fail when the cap is reached). Returns 0 or SW_ESTATE (not the holder). */
int sw_sched_lease_done(sw_sched_t *sched, int64_t lease_id, uint64_t epoch, const char *worker_id,
                        int64_t now, struct sw_err *err);

/* Expires leases past their deadline (*n_expired, may be NULL, gets how many) and drops from
 * memory the workers offline without a lease for longer than worker_expire_ms. After a store
 * failure (sw_store_health) nothing expires for one lease TTL: a worker whose results cannot be
 * stored keeps its lease through an outage of any length. */
int sw_sched_tick(sw_sched_t *sched, int64_t now, int *n_expired, struct sw_err *err);

/* Cancels a sweep: pending pairs abandoned, its active leases closed. lease_ids_out (may be
 * NULL) receives up to max_ids lease ids that the coordinator should Cancel at their workers;
 * *n_ids their count. SW_ENOTFOUND for an unknown sweep. */
int sw_sched_cancel(sw_sched_t *sched, int64_t sweep_id, int64_t now, int64_t *lease_ids_out,
                    int max_ids, int *n_ids, struct sw_err *err);

/* The worker holding lease_id, or NULL (borrowed, valid until the next scheduler call). */
const char *sw_sched_lease_worker(sw_sched_t *sched, int64_t lease_id);

/* Progress: {"sweeps":[{id,name,kind,status,priority,gates:[{name,status,verdict,pairs:{done,
 * leased,pending,failed,total}}],runs:{...}}], "workers":[{id,state,lease,labels,last_seen_ms}],
 * "workers_page":{offset,limit,total}, "leases_active":n}. sweep_id 0 = all sweeps. Workers (in
 * memory) are listed from workers_offset, at most workers_limit of them (0 =
 * SW_SCHED_STATUS_WORKERS, capped at SW_SCHED_STATUS_WORKERS_MAX), so a reply stays small
 * however large the fleet. New reference, NULL on failure (err set). */
json_t *sw_sched_status_json(sw_sched_t *sched, int64_t sweep_id, int64_t workers_offset,
                             int workers_limit, struct sw_err *err);

/* 1 when the sweep has finished (done, failed or cancelled), 0 when still running. */
int sw_sched_sweep_finished(sw_sched_t *sched, int64_t sweep_id, struct sw_err *err);

#endif
