/* sw_sched_int.h: what the scheduler's source files share (not a public interface): the
 * in-memory mirror of active sweeps, workers and leases, and the helpers each layer offers the
 * one above it (sw_sched.h says who may call whom). The store is the truth; memory holds only
 * what the hot paths (next, renew, tick) need and is rebuilt from the store by sw_sched_new. */
#ifndef SW_SCHED_INT_H
#define SW_SCHED_INT_H

#include <stdint.h>

#include <jansson.h>

#include "sw_sched.h"
#include "sw_spec.h"

/* An active (running) sweep: its spec as common/ loads it, and what the hot paths read. */
struct sweep_mem {
  int64_t id;
  int is_grid;
  int priority;
  uint64_t served;      /* fairness clock: value of sched->serve_clock when last served */
  struct sw_spec *spec; /* owned: loaded from the stored YAML (sw_spec_load_string) */
  char runner[16];      /* "exec" or "builtin": workers that list capabilities must offer it */
  /* what every lease of the sweep carries, as Assign wants it (owned) */
  char *trainer_json, *scene_json, *contamination_json;
  int finishing; /* set when a transaction marked the sweep finished; see reap() in sw_sched.c */
};

struct worker_mem {
  char *id;
  char *key;           /* the ZAP User-Id it is bound to; NULL when none (insecure) */
  json_t *labels;      /* object, owned, never NULL */
  json_t *fingerprint; /* object, owned, never NULL */
  /* Index of the first worker on the same machine (fingerprint hostname, else the worker id):
   * spread counts pairs per machine, so two GPUs of one host count as one. */
  int machine;
  int online;
  int64_t lease_id; /* 0 when idle */
  int64_t last_seen;
};

struct lease_mem {
  int64_t id;
  uint64_t epoch;
  int worker; /* index into sched->workers */
  int64_t pair_id;
  int64_t sweep_id;
  int64_t deadline;
};

struct sw_sched {
  sw_store_t *store;
  struct sw_sched_opts opts;
  struct sweep_mem *sweeps;
  int n_sweeps, cap_sweeps;
  struct worker_mem *workers;
  int n_workers, cap_workers;
  int *worker_index; /* open-addressing hash of worker ids -> index, -1 empty */
  int index_cap;
  struct lease_mem *leases;
  int n_leases, cap_leases;
  uint64_t serve_clock;
  uint64_t store_failures_seen; /* the store's failure count at the last tick */
  int64_t store_failed_at;      /* the tick that first saw the latest failure */
};

/* ---- layer 3, sw_sched_mem.c: the sweep mirror and lease rows; calls only the store. ---- */
/* Grows *arr (elements of elem bytes, capacity *cap) to hold need: 0, or -1 out of memory. */
int sched_grow(void **arr, int *cap, int need, size_t elem);
struct sweep_mem *sched_sweep(sw_sched_t *s, int64_t sweep_id);
/* Puts a running sweep in memory from its spec (ownership of *spec passes to the scheduler, and
 * *spec is set to NULL, on success and on failure alike). */
int sched_sweep_add(sw_sched_t *s, int64_t sweep_id, struct sw_spec **spec, int priority,
                    struct sw_err *err);
void sched_sweep_drop(sw_sched_t *s, int64_t sweep_id);
void sched_sweep_free(struct sweep_mem *sw);
/* Closes an active lease in the store with state 'done', 'expired' or 'cancelled'. */
int sched_lease_close_db(sw_sched_t *s, int64_t lease_id, const char *state, int64_t now,
                         struct sw_err *err);

/* ---- layer 2, sw_sched_submit.c: a spec into its series rows; calls only layer 3. ---- */
/* Order of pair idx under the sweep's order rule: "off-on" or "on-off". */
const char *sched_pair_order(const struct sweep_mem *sw, int idx);
/* Inserts one gate pair (runs from the spec's resolved arms) with the given order. */
int sched_insert_gate_pair(sw_sched_t *s, int64_t sweep_id, int64_t gate_id, int idx,
                           const char *order, int replaces, int64_t now, struct sw_err *err);
/* Inserts what a new sweep runs: its gate and first pairs, or its grid points (the spec's own
 * expansion, sw_spec_grid_expand) with one single-run pair each. Inside the caller's
 * transaction; sw is in memory already. */
int sched_series_insert(sw_sched_t *s, const struct sweep_mem *sw, const char *name, int64_t now,
                        struct sw_err *err);

/* ---- layer 1, sw_sched_gate.c: after a result; calls layers 2 and 3. Every function runs
 * inside the caller's transaction. ---- */
#define SW_FLAG_REASON_MAX 512 /* one attempt's flag reason, NUL included */
/* Classifies a finished run from its exit status, result and windows; why (cap bytes) gets the
 * reason in words when the run is not OK, else "". */
enum sw_attempt_status sched_classify(const struct sweep_mem *sw, const struct sw_run_result *r,
                                      int result_ok, char *why, size_t cap);
/* Called after a result was stored: when every run of the pair's current attempt has a result,
 * closes the lease, marks the pair done (or re-queues / fails it), adds a replacement pair for
 * a contaminated one, and lets the gate decide. */
int sched_pair_check(sw_sched_t *s, int64_t pair_id, int64_t now, int *lease_closed,
                     struct sw_err *err);
/* Re-queues a pair as attempt + 1 (or fails it as poison at the cap), marking the finished
 * arms of the old attempt abandoned (keep_failed: failed arms keep their status). */
int sched_pair_requeue(sw_sched_t *s, int64_t pair_id, int64_t now, const char *why,
                       struct sw_err *err);
/* Marks the sweep finished in the store when nothing of it is left to run, and flags it
 * (finishing) so that sw_sched.c drops it from memory once the transaction committed. */
int sched_sweep_check(sw_sched_t *s, int64_t sweep_id, int64_t now, struct sw_err *err);

#endif
