/* sw_store.h: the coordinator's SQLite store (DESIGN.md section 11; tables in docs/store.md).
 *
 * One database file in WAL mode with a busy timeout and foreign keys on. The schema is versioned
 * with `PRAGMA user_version` and brought forward by numbered migrations when the file is opened,
 * so a database written by an older coordinator keeps working. Every SQLite failure becomes
 * SW_EDB with the statement and sqlite3_errmsg in the error text.
 *
 * The store owns the connection and a cache of prepared statements; the scheduler (sw_sched.h)
 * and the reports (sw_report.h) write their own queries through sw_store_stmt(), so each module
 * keeps its SQL next to its logic while statements are still prepared only once.
 *
 * Lifecycle: a successful sw_store_open() must be paired with sw_store_close(). One store is used
 * by one thread at a time (the coordinator's poll loop); other processes (a `splatsweep report
 * --db`) may read the same file concurrently thanks to WAL. */
#ifndef SW_STORE_H
#define SW_STORE_H

#include <stdint.h>

#include <jansson.h>
#include <sqlite3.h>

#include "sw_err.h"

/* The database every command and daemon uses when no --db names another, relative to the
 * working directory: results/ is the git-ignored home of databases and reports. */
#define SW_STORE_DEFAULT_PATH "results/splatsweep.db"

/* The schema version this build writes; see docs/store.md for what each version added. */
#define SW_STORE_SCHEMA_VERSION 5

typedef struct sw_store sw_store_t;

struct sw_store_opts {
  int busy_timeout_ms;  /* how long a locked database is retried; 0 = 5000 */
  int synchronous_full; /* 1 = fsync every commit (default via NULL opts), 0 = WAL NORMAL */
  int target_version;   /* 0 = SW_STORE_SCHEMA_VERSION; lower only for migration tests/tools */
  int read_only;        /* open without write access (reports); no migration is attempted */
};

/* The connection's health, for `status` and for the scheduler (no lease expires while writes
 * fail: sw_sched_tick). failing: the last write attempt failed and no commit succeeded since.
 * Times are wall-clock ms (0 = never). */
struct sw_store_health {
  uint64_t failures; /* failed statements/transactions since open */
  int failing;       /* failed since the last successful commit */
  int64_t failing_since_ms;
  int64_t last_fail_ms;
  int64_t last_ok_ms; /* last successful commit */
  char last_error[256];
};

/* Default options: 5 s busy timeout, synchronous FULL, latest schema, read-write. */
void sw_store_opts_default(struct sw_store_opts *opts);

/* Opens (creating if needed) the database at path and migrates it forward to the target
 * version. opts may be NULL (defaults). A database newer than this build is refused (SW_EDB).
 * On success *out owns the connection. Returns 0, SW_EDB, SW_EIO or SW_ENOMEM. */
int sw_store_open(const char *path, const struct sw_store_opts *opts, sw_store_t **out,
                  struct sw_err *err);
/* Finalises cached statements and closes the connection; NULL-safe, nulls *store. */
void sw_store_close(sw_store_t **store);

/* The schema version recorded in the file (PRAGMA user_version). */
int sw_store_version(sw_store_t *store, int *version, struct sw_err *err);
/* The health record (store may be NULL: all zero). */
void sw_store_health(const sw_store_t *store, struct sw_store_health *out);
int sw_store_failing(const sw_store_t *store);
/* The underlying connection, borrowed (valid until sw_store_close). */
sqlite3 *sw_store_db(sw_store_t *store);
/* Path the store was opened with (borrowed). */
const char *sw_store_path(sw_store_t *store);

/* A prepared statement for sql from the store's cache (prepared on first use), reset and with
 * its bindings cleared, ready to bind. sql must have static storage (a string literal or a
 * static const array): the cache is keyed by its address, which makes a lookup a pointer hash. The
 * statement stays owned by the store: never finalize it. Returns 0 or SW_EDB. */
int sw_store_stmt(sw_store_t *store, const char *sql, sqlite3_stmt **stmt, struct sw_err *err);

/* Readers of a stepped row, for every reader of the store: column i's text, "" when NULL
 * (borrowed until the next step or reset); column i as a JSON number, null when NULL, an integer
 * column staying an integer (a new reference). */
const char *sw_store_col_text(sqlite3_stmt *st, int i);
json_t *sw_store_col_num(sqlite3_stmt *st, int i);

/* Converts a failed SQLite call into SW_EDB with "what: errmsg" in err; returns SW_EDB. */
int sw_store_fail(sw_store_t *store, struct sw_err *err, const char *what);

/* Runs one or more statements with no results (DDL, PRAGMA). Returns 0 or SW_EDB. */
int sw_store_exec(sw_store_t *store, const char *sql, struct sw_err *err);

/* Transactions: BEGIN IMMEDIATE (takes the write lock up front so a busy database fails at the
 * start, not half way), COMMIT, ROLLBACK. sw_store_commit returns only after the commit is
 * durable under the chosen synchronous mode; on failure the transaction is rolled back. */
int sw_store_begin(sw_store_t *store, struct sw_err *err);
int sw_store_commit(sw_store_t *store, struct sw_err *err);
void sw_store_rollback(sw_store_t *store);
/* BEGIN IMMEDIATE for a transaction whose COMMIT need not wait for the disk (WAL NORMAL for
 * this transaction only): safe against a crash of the coordinator, not against a power cut. For
 * records whose loss is harmless (a lease: lost, its results are refused as stale and the pair
 * runs again), never for a result that is about to be acknowledged. sw_store_commit and
 * sw_store_rollback restore synchronous FULL. Same as sw_store_begin on a NORMAL store. */
int sw_store_begin_relaxed(sw_store_t *store, struct sw_err *err);

/* Appends an event (kind: short word such as "submit", "lease", "expire", "verdict"; text: one
 * line) to the events table. sweep_id 0 = not tied to a sweep. */
int sw_store_event(sw_store_t *store, int64_t now_ms, int64_t sweep_id, const char *kind,
                   const char *text, struct sw_err *err);

/* One load-sampler record (the worker's window around a run). */
struct sw_window_sample {
  int64_t t_ms;       /* offset from the run's start (negative for the pre-run window) */
  double load1;       /* 1-minute load average */
  double cpu_other;   /* cores busy outside the trainer's process tree */
  double cpu_total;   /* cores busy in total */
  double mem_avail;   /* available memory, bytes */
  double cpu_trainer; /* cores busy in the trainer's process tree */
  double cpu_self;    /* cores busy in splatsweep's own processes */
  int has_gpu;        /* the gpu_* figures were sampled (else stored as NULL) */
  double gpu_util, gpu_sm_mhz, gpu_temp_c, gpu_power_w;
  uint64_t gpu_throttle;
  int gpu_foreign; /* processes on the trainer's GPU that are not ours; -1 cannot tell */
};

/* Status of one attempt of one run. */
enum sw_attempt_status {
  SW_ATTEMPT_OK = 0,
  SW_ATTEMPT_FAILED = 1,       /* non-zero exit or unusable result */
  SW_ATTEMPT_ABANDONED = 2,    /* its pair's lease expired; never used for a verdict */
  SW_ATTEMPT_CONTAMINATED = 3, /* window shows load; its pair gets one replacement */
  SW_ATTEMPT_INVALID = 4       /* no window samples though the spec requires them */
};
const char *sw_attempt_status_name(enum sw_attempt_status s);

/* Everything one finished run attempt carries into the store. Strings are borrowed. */
struct sw_attempt_rec {
  int64_t run_id;
  int attempt;
  int64_t lease_id;
  const char *worker_id;
  enum sw_attempt_status status;
  int exit_status;
  int64_t started_ms, finished_ms;
  const char *result_json; /* the trainer's result.json text, may be NULL */
  const json_t *result;    /* result_json already parsed (optional: parsed here when NULL) */
  /* 1: result_json broke docs/result.schema.json; it is kept as text for the record, but none
   * of its metrics, kernels, checkpoints or hashes is stored where a verdict could read it. */
  int result_untrusted;
  const char *error_text; /* may be NULL */
  const struct sw_window_sample *pre;
  int n_pre;
  const struct sw_window_sample *during;
  int n_during;
  const char *flag_reason; /* why the attempt is contaminated / invalid; NULL otherwise */
  const char *env_before;  /* the worker's environment JSON before / after the run; may be NULL */
  const char *env_after;
  int64_t run_start_wall_ms, run_end_wall_ms; /* the worker's wall clock; 0 unknown */
};

/* Stores an attempt with its windows, and (parsed from result_json, unless result_untrusted) its
 * metric columns, kernels, checkpoints and fingerprint hashes. Idempotent by (run_id, attempt):
 * when that attempt is already stored, nothing is written and *duplicate is set to 1. Must run
 * inside a transaction (sw_store_begin); the caller commits. Returns 0, SW_EDB or SW_ENOMEM. */
int sw_store_put_attempt(sw_store_t *store, const struct sw_attempt_rec *rec, int *duplicate,
                         struct sw_err *err);

#endif
