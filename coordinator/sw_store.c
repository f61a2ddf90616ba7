/* sw_store.c: SQLite connection, schema migrations, statement cache, transactions, events and
 * idempotent storage of run attempts with their windows, kernels and checkpoints. */
#include "sw_store.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "sw_clock.h"

/* Numbered migrations: MIGRATIONS[i] brings a database from version i to version i + 1.
 * Never edit a released entry; append a new one and bump SW_STORE_SCHEMA_VERSION. */
static const char *const MIGRATIONS[] = {
    /* v1: the base schema. */
    "CREATE TABLE sweeps ("
    "  id INTEGER PRIMARY KEY,"
    "  name TEXT NOT NULL,"
    "  kind TEXT NOT NULL CHECK (kind IN ('gate','grid')),"
    "  spec_yaml TEXT NOT NULL,"
    "  spec_json TEXT NOT NULL,"
    "  spec_sha256 TEXT NOT NULL,"
    "  status TEXT NOT NULL DEFAULT 'running'"
    "    CHECK (status IN ('running','done','failed','cancelled')),"
    "  created_ms INTEGER NOT NULL,"
    "  finished_ms INTEGER);"
    "CREATE TABLE gates ("
    "  id INTEGER PRIMARY KEY,"
    "  sweep_id INTEGER NOT NULL REFERENCES sweeps(id) ON DELETE CASCADE,"
    "  name TEXT NOT NULL,"
    "  metric TEXT NOT NULL,"
    "  status TEXT NOT NULL DEFAULT 'running'"
    "    CHECK (status IN ('running','done','failed','cancelled')),"
    "  verdict TEXT CHECK (verdict IN ('adopt','reject','inconclusive')),"
    "  verdict_json TEXT,"
    "  n_target INTEGER NOT NULL,"
    "  n_max INTEGER NOT NULL,"
    "  looks INTEGER NOT NULL DEFAULT 0,"
    "  finished_ms INTEGER,"
    "  UNIQUE (sweep_id, name));"
    "CREATE TABLE grid_points ("
    "  id INTEGER PRIMARY KEY,"
    "  sweep_id INTEGER NOT NULL REFERENCES sweeps(id) ON DELETE CASCADE,"
    "  idx INTEGER NOT NULL,"
    "  label TEXT NOT NULL,"
    "  params_json TEXT NOT NULL,"
    "  repeat INTEGER NOT NULL,"
    "  UNIQUE (sweep_id, idx));"
    "CREATE TABLE workers ("
    "  id TEXT PRIMARY KEY,"
    "  fingerprint_json TEXT,"
    "  labels_json TEXT,"
    "  first_seen_ms INTEGER NOT NULL,"
    "  last_seen_ms INTEGER NOT NULL,"
    "  state TEXT NOT NULL DEFAULT 'online' CHECK (state IN ('online','offline')));"
    "CREATE TABLE pairs ("
    "  id INTEGER PRIMARY KEY,"
    "  sweep_id INTEGER NOT NULL REFERENCES sweeps(id) ON DELETE CASCADE,"
    "  gate_id INTEGER REFERENCES gates(id) ON DELETE CASCADE,"
    "  point_id INTEGER REFERENCES grid_points(id) ON DELETE CASCADE,"
    "  idx INTEGER NOT NULL,"
    "  ord TEXT NOT NULL CHECK (ord IN ('off-on','on-off','single')),"
    "  status TEXT NOT NULL DEFAULT 'pending'"
    "    CHECK (status IN ('pending','leased','done','failed','abandoned')),"
    "  attempt INTEGER NOT NULL DEFAULT 1,"
    "  worker_id TEXT REFERENCES workers(id),"
    "  replaces INTEGER,"
    "  is_replacement INTEGER NOT NULL DEFAULT 0,"
    "  created_ms INTEGER NOT NULL,"
    "  finished_ms INTEGER,"
    "  UNIQUE (sweep_id, gate_id, idx));"
    "CREATE TABLE runs ("
    "  id INTEGER PRIMARY KEY,"
    "  pair_id INTEGER NOT NULL REFERENCES pairs(id) ON DELETE CASCADE,"
    "  arm TEXT NOT NULL,"
    "  position INTEGER NOT NULL,"
    "  config_json TEXT NOT NULL,"
    "  config_sha256 TEXT NOT NULL,"
    "  UNIQUE (pair_id, position));"
    "CREATE TABLE leases ("
    "  id INTEGER PRIMARY KEY,"
    "  epoch INTEGER NOT NULL,"
    "  worker_id TEXT NOT NULL REFERENCES workers(id),"
    "  pair_id INTEGER NOT NULL REFERENCES pairs(id) ON DELETE CASCADE,"
    "  issued_ms INTEGER NOT NULL,"
    "  deadline_ms INTEGER NOT NULL,"
    "  state TEXT NOT NULL DEFAULT 'active'"
    "    CHECK (state IN ('active','done','expired','cancelled')),"
    "  closed_ms INTEGER);"
    "CREATE TABLE attempts ("
    "  id INTEGER PRIMARY KEY,"
    "  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    "  attempt INTEGER NOT NULL,"
    "  lease_id INTEGER REFERENCES leases(id),"
    "  worker_id TEXT REFERENCES workers(id),"
    "  status TEXT NOT NULL"
    "    CHECK (status IN ('ok','failed','abandoned','contaminated','invalid')),"
    "  exit_status INTEGER NOT NULL,"
    "  started_ms INTEGER,"
    "  finished_ms INTEGER,"
    "  result_json TEXT,"
    "  error_text TEXT,"
    "  train_s REAL, wall_s REAL, psnr_db REAL, ssim REAL, iterations INTEGER,"
    "  splats_final INTEGER, splats_mean REAL,"
    "  trainer_sha256 TEXT, shaders_sha256 TEXT, scene_sha256 TEXT, config_sha256 TEXT,"
    "  UNIQUE (run_id, attempt));"
    "CREATE TABLE windows ("
    "  id INTEGER PRIMARY KEY,"
    "  attempt_id INTEGER NOT NULL REFERENCES attempts(id) ON DELETE CASCADE,"
    "  phase TEXT NOT NULL CHECK (phase IN ('pre','during')),"
    "  t_ms INTEGER NOT NULL,"
    "  load1 REAL, cpu_other REAL, cpu_total REAL, mem_avail REAL);"
    "CREATE TABLE kernels ("
    "  attempt_id INTEGER NOT NULL REFERENCES attempts(id) ON DELETE CASCADE,"
    "  name TEXT NOT NULL,"
    "  calls INTEGER, gpu_ms REAL, share REAL);"
    "CREATE TABLE checkpoints ("
    "  attempt_id INTEGER NOT NULL REFERENCES attempts(id) ON DELETE CASCADE,"
    "  iter INTEGER NOT NULL,"
    "  train_s REAL, psnr_db REAL, splats INTEGER);"
    "CREATE TABLE events ("
    "  id INTEGER PRIMARY KEY,"
    "  t_ms INTEGER NOT NULL,"
    "  sweep_id INTEGER,"
    "  kind TEXT NOT NULL,"
    "  text TEXT NOT NULL);"
    "CREATE INDEX pairs_by_gate ON pairs (gate_id, idx);"
    "CREATE INDEX runs_by_pair ON runs (pair_id, position);"
    "CREATE INDEX windows_by_attempt ON windows (attempt_id);",

    /* v2: sweep priority and the GPU busy fraction as a fast column; indexes for the scheduler's
     * hot queries (pending pairs per sweep, a gate's pairs per worker, active leases) and for
     * per-attempt child rows. */
    "ALTER TABLE sweeps ADD COLUMN priority INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE attempts ADD COLUMN gpu_busy_frac REAL;"
    "CREATE INDEX pairs_pending ON pairs (sweep_id, status, gate_id, idx);"
    "CREATE INDEX pairs_by_gate_worker ON pairs (gate_id, worker_id);"
    "CREATE INDEX leases_active ON leases (state, deadline_ms);"
    "CREATE INDEX kernels_by_attempt ON kernels (attempt_id);"
    "CREATE INDEX checkpoints_by_attempt ON checkpoints (attempt_id);"
    "CREATE INDEX events_by_sweep ON events (sweep_id, t_ms);"
    "CREATE INDEX sweeps_by_status ON sweeps (status);",

    /* v3: honest windows. Samples say who was busy (trainer, splatsweep itself, others) and what
     * the trainer's GPU did; an attempt keeps why it was flagged and the worker's environment
     * (trainer, shaders, driver) before and after it ran, and when the trainer ran by the worker's
     * wall clock (so runs of workers on one host can be shown not to overlap). */
    "ALTER TABLE windows ADD COLUMN cpu_trainer REAL;"
    "ALTER TABLE windows ADD COLUMN cpu_self REAL;"
    "ALTER TABLE windows ADD COLUMN gpu_util REAL;"
    "ALTER TABLE windows ADD COLUMN gpu_sm_mhz REAL;"
    "ALTER TABLE windows ADD COLUMN gpu_temp_c REAL;"
    "ALTER TABLE windows ADD COLUMN gpu_power_w REAL;"
    "ALTER TABLE windows ADD COLUMN gpu_throttle INTEGER;"
    "ALTER TABLE windows ADD COLUMN gpu_foreign INTEGER;"
    "ALTER TABLE attempts ADD COLUMN flag_reason TEXT;"
    "ALTER TABLE attempts ADD COLUMN env_before TEXT;"
    "ALTER TABLE attempts ADD COLUMN env_after TEXT;"
    "ALTER TABLE attempts ADD COLUMN run_start_wall_ms INTEGER;"
    "ALTER TABLE attempts ADD COLUMN run_end_wall_ms INTEGER;",

    /* v4: identity. A worker id is bound to the key (ZAP User-Id) of its first session, and the
     * binding outlives both the coordinator and the worker's place in its memory. */
    "ALTER TABLE workers ADD COLUMN key TEXT;",

    /* v5: the artifact store. One row per file a run's RunFinished named: expected until the
     * worker's upload matched its size and sha256 (stored), refused (over the spec's size limit,
     * final.ply not wanted) or deleted by the spec's retention rule. Files live beside the
     * database under artifacts/ (docs/store.md). */
    "CREATE TABLE artifacts ("
    "  id INTEGER PRIMARY KEY,"
    "  attempt_id INTEGER NOT NULL REFERENCES attempts(id) ON DELETE CASCADE,"
    "  name TEXT NOT NULL,"
    "  size INTEGER NOT NULL,"
    "  sha256 TEXT NOT NULL,"
    "  state TEXT NOT NULL DEFAULT 'expected'"
    "    CHECK (state IN ('expected','stored','refused','deleted')),"
    "  reason TEXT,"
    "  stored_wall_ms INTEGER,"
    "  UNIQUE (attempt_id, name));"
    "CREATE INDEX artifacts_by_state ON artifacts (state, stored_wall_ms);",
};

_Static_assert(sizeof MIGRATIONS / sizeof MIGRATIONS[0] == SW_STORE_SCHEMA_VERSION,
               "one migration per schema version");

#define STMT_CACHE_SIZE 128 /* power of two; far more than the distinct statements we use */

struct stmt_slot {
  const char *sql; /* the caller's string: statements are string literals, so pointers repeat */
  sqlite3_stmt *stmt;
};

struct sw_store {
  sqlite3 *db;
  int sync_full;
  int relaxed; /* the open transaction was begun with sw_store_begin_relaxed */
  char *path;
  struct stmt_slot cache[STMT_CACHE_SIZE];
  int n_cached;
  struct sw_store_health health;
};

/* Every failure path of the store comes through here (sw_store_fail, sw_store_exec): the health
 * record is what `status` shows and what stops lease expiry while writes fail. */
static void health_fail(sw_store_t *store, const char *msg) {
  if (!store) return;
  struct sw_store_health *h = &store->health;
  int64_t now = sw_clock_wall_ms();
  h->failures++;
  if (!h->failing) h->failing_since_ms = now;
  h->failing = 1;
  h->last_fail_ms = now;
  snprintf(h->last_error, sizeof h->last_error, "%s", msg);
}

void sw_store_health(const sw_store_t *store, struct sw_store_health *out) {
  memset(out, 0, sizeof *out);
  if (store) *out = store->health;
}

int sw_store_failing(const sw_store_t *store) { return store && store->health.failing; }

void sw_store_opts_default(struct sw_store_opts *opts) {
  memset(opts, 0, sizeof *opts);
  opts->busy_timeout_ms = 5000;
  opts->synchronous_full = 1;
  opts->target_version = SW_STORE_SCHEMA_VERSION;
}

int sw_store_fail(sw_store_t *store, struct sw_err *err, const char *what) {
  const char *msg = store && store->db ? sqlite3_errmsg(store->db) : "no database";
  int rc = sw_err_set(err, SW_EDB, "sqlite: %s: %s", what, msg);
  health_fail(store, err ? err->msg : msg);
  return rc;
}

int sw_store_exec(sw_store_t *store, const char *sql, struct sw_err *err) {
  char *emsg = NULL;
  if (sqlite3_exec(store->db, sql, NULL, NULL, &emsg) != SQLITE_OK) {
    int rc = sw_err_set(err, SW_EDB, "sqlite: %.120s: %s", sql, emsg ? emsg : "failed");
    sqlite3_free(emsg);
    health_fail(store, err ? err->msg : sql);
    return rc;
  }
  return 0;
}

int sw_store_version(sw_store_t *store, int *version, struct sw_err *err) {
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(store->db, "PRAGMA user_version", -1, &st, NULL) != SQLITE_OK)
    return sw_store_fail(store, err, "PRAGMA user_version");
  int rc = sqlite3_step(st);
  if (rc != SQLITE_ROW) {
    sqlite3_finalize(st);
    return sw_store_fail(store, err, "PRAGMA user_version");
  }
  *version = sqlite3_column_int(st, 0);
  sqlite3_finalize(st);
  return 0;
}

/* Applies migrations from the file's version up to target, each in its own transaction together
 * with the user_version bump, so a crash mid-way leaves a consistent older version. */
static int migrate(sw_store_t *store, int target, struct sw_err *err) {
  int version = 0;
  int rc = sw_store_version(store, &version, err);
  if (rc) return rc;
  if (version > SW_STORE_SCHEMA_VERSION)
    return sw_err_set(err, SW_EDB,
                      "%s: database schema version %d is newer than this build (%d); upgrade "
                      "splatsweep",
                      store->path, version, SW_STORE_SCHEMA_VERSION);
  while (version < target) {
    if ((rc = sw_store_begin(store, err))) return rc;
    char bump[64];
    snprintf(bump, sizeof bump, "PRAGMA user_version = %d", version + 1);
    if ((rc = sw_store_exec(store, MIGRATIONS[version], err)) ||
        (rc = sw_store_exec(store, bump, err)) || (rc = sw_store_commit(store, err))) {
      sw_store_rollback(store);
      sw_err_prefix(err, "%s: migrating schema to version %d", store->path, version + 1);
      return rc;
    }
    version++;
  }
  return 0;
}

int sw_store_open(const char *path, const struct sw_store_opts *opts_in, sw_store_t **out,
                  struct sw_err *err) {
  *out = NULL;
  struct sw_store_opts opts;
  if (opts_in)
    opts = *opts_in;
  else
    sw_store_opts_default(&opts);
  if (opts.busy_timeout_ms <= 0) opts.busy_timeout_ms = 5000;
  if (opts.target_version <= 0 || opts.target_version > SW_STORE_SCHEMA_VERSION)
    opts.target_version = SW_STORE_SCHEMA_VERSION;

  sw_store_t *s = calloc(1, sizeof *s);
  if (!s || !(s->path = strdup(path))) {
    free(s);
    return sw_err_set(err, SW_ENOMEM, "opening store %s: out of memory", path);
  }
  int flags = opts.read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  flags |= SQLITE_OPEN_NOMUTEX;
  if (sqlite3_open_v2(path, &s->db, flags, NULL) != SQLITE_OK) {
    int rc = sw_err_set(err, SW_EDB, "opening database %s: %s", path,
                        s->db ? sqlite3_errmsg(s->db) : "out of memory");
    sw_store_close(&s);
    return rc;
  }
  sqlite3_extended_result_codes(s->db, 1);
  s->sync_full = opts.synchronous_full;
  sqlite3_busy_timeout(s->db, opts.busy_timeout_ms);
  char pragmas[256];
  /* 16 MiB of page cache: the hot tables of a busy coordinator stay in memory. */
  snprintf(pragmas, sizeof pragmas,
           "PRAGMA foreign_keys = ON; PRAGMA synchronous = %s; PRAGMA cache_size = -16384;",
           opts.synchronous_full ? "FULL" : "NORMAL");
  int rc = sw_store_exec(s, pragmas, err);
  if (!rc && !opts.read_only) {
    /* journal_mode returns a row; exec ignores it. WAL lets reports read while we write. */
    rc = sw_store_exec(s, "PRAGMA journal_mode = WAL;", err);
    if (!rc) rc = migrate(s, opts.target_version, err);
  } else if (!rc) {
    int version = 0;
    rc = sw_store_version(s, &version, err);
    if (!rc && version != SW_STORE_SCHEMA_VERSION)
      rc = sw_err_set(err, SW_EDB,
                      "%s: schema version %d, this build reads %d (open it read-write once to "
                      "migrate)",
                      path, version, SW_STORE_SCHEMA_VERSION);
  }
  if (rc) {
    sw_err_prefix(err, "opening store %s", path);
    sw_store_close(&s);
    return rc;
  }
  *out = s;
  return 0;
}

void sw_store_close(sw_store_t **store) {
  if (!store || !*store) return;
  sw_store_t *s = *store;
  for (int i = 0; i < STMT_CACHE_SIZE; i++)
    if (s->cache[i].stmt) sqlite3_finalize(s->cache[i].stmt);
  if (s->db) sqlite3_close_v2(s->db);
  free(s->path);
  free(s);
  *store = NULL;
}

sqlite3 *sw_store_db(sw_store_t *store) { return store->db; }
const char *sw_store_path(sw_store_t *store) { return store->path; }

static unsigned hash_ptr(const char *p) {
  uintptr_t v = (uintptr_t)p;
  v ^= v >> 17;
  v *= 0x9E3779B1u;
  return (unsigned)(v ^ (v >> 13));
}

const char *sw_store_col_text(sqlite3_stmt *st, int i) {
  const unsigned char *t = sqlite3_column_text(st, i);
  return t ? (const char *)t : "";
}

json_t *sw_store_col_num(sqlite3_stmt *st, int i) {
  switch (sqlite3_column_type(st, i)) {
  case SQLITE_NULL: return json_null();
  case SQLITE_INTEGER: return json_integer(sqlite3_column_int64(st, i));
  default: return json_real(sqlite3_column_double(st, i));
  }
}

int sw_store_stmt(sw_store_t *store, const char *sql, sqlite3_stmt **stmt, struct sw_err *err) {
  unsigned h = hash_ptr(sql) & (STMT_CACHE_SIZE - 1);
  for (unsigned i = 0; i < STMT_CACHE_SIZE; i++) {
    struct stmt_slot *slot = &store->cache[(h + i) & (STMT_CACHE_SIZE - 1)];
    if (slot->sql == sql) {
      sqlite3_reset(slot->stmt);
      sqlite3_clear_bindings(slot->stmt);
      *stmt = slot->stmt;
      return 0;
    }
    if (!slot->sql) {
      sqlite3_stmt *st = NULL;
      if (sqlite3_prepare_v3(store->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &st, NULL) !=
          SQLITE_OK) {
        return sw_err_set(err, SW_EDB, "sqlite: preparing %.160s: %s", sql,
                          sqlite3_errmsg(store->db));
      }
      /* Keep the table at most half full so probes stay short. */
      if (store->n_cached >= STMT_CACHE_SIZE / 2) {
        *stmt = NULL;
        sqlite3_finalize(st);
        return sw_err_set(err, SW_EDB, "statement cache full (%d statements)", store->n_cached);
      }
      slot->sql = sql;
      slot->stmt = st;
      store->n_cached++;
      *stmt = st;
      return 0;
    }
  }
  return sw_err_set(err, SW_EDB, "statement cache full");
}

int sw_store_begin(sw_store_t *store, struct sw_err *err) {
  return sw_store_exec(store, "BEGIN IMMEDIATE", err);
}

int sw_store_begin_relaxed(sw_store_t *store, struct sw_err *err) {
  /* The safety level cannot change inside a transaction: lower it before BEGIN, restore it
   * when the transaction ends (commit or rollback). */
  if (store->sync_full) {
    int rc = sw_store_exec(store, "PRAGMA synchronous = NORMAL", err);
    if (rc) return rc;
    store->relaxed = 1;
  }
  int rc = sw_store_begin(store, err);
  if (rc) sw_store_rollback(store);
  return rc;
}

/* Back to synchronous FULL after a relaxed transaction. */
static void unrelax(sw_store_t *store) {
  if (!store->relaxed) return;
  store->relaxed = 0;
  sqlite3_exec(store->db, "PRAGMA synchronous = FULL", NULL, NULL, NULL);
}

int sw_store_commit(sw_store_t *store, struct sw_err *err) {
  int rc = sw_store_exec(store, "COMMIT", err);
  if (rc) {
    sw_store_rollback(store);
  } else {
    store->health.failing = 0;
    store->health.last_ok_ms = sw_clock_wall_ms();
  }
  unrelax(store);
  return rc;
}

void sw_store_rollback(sw_store_t *store) {
  if (!sqlite3_get_autocommit(store->db)) sqlite3_exec(store->db, "ROLLBACK", NULL, NULL, NULL);
  unrelax(store);
}

int sw_store_event(sw_store_t *store, int64_t now_ms, int64_t sweep_id, const char *kind,
                   const char *text, struct sw_err *err) {
  static const char *const SQL =
      "INSERT INTO events (t_ms, sweep_id, kind, text) VALUES (?1, ?2, ?3, ?4)";
  sqlite3_stmt *st;
  int rc = sw_store_stmt(store, SQL, &st, err);
  if (rc) return rc;
  sqlite3_bind_int64(st, 1, now_ms);
  if (sweep_id > 0)
    sqlite3_bind_int64(st, 2, sweep_id);
  else
    sqlite3_bind_null(st, 2);
  sqlite3_bind_text(st, 3, kind, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 4, text ? text : "", -1, SQLITE_STATIC);
  rc = sqlite3_step(st);
  sqlite3_reset(st);
  if (rc != SQLITE_DONE) return sw_store_fail(store, err, "inserting event");
  return 0;
}

const char *sw_attempt_status_name(enum sw_attempt_status s) {
  switch (s) {
  case SW_ATTEMPT_OK: return "ok";
  case SW_ATTEMPT_FAILED: return "failed";
  case SW_ATTEMPT_ABANDONED: return "abandoned";
  case SW_ATTEMPT_CONTAMINATED: return "contaminated";
  case SW_ATTEMPT_INVALID: return "invalid";
  }
  return "failed";
}

/* Binds a numeric metric from the result's "metrics" object, or NULL when absent / not a
 * number (the column stays empty rather than holding a made-up zero). */
static void bind_metric(sqlite3_stmt *st, int idx, const json_t *metrics, const char *key) {
  const json_t *v = metrics ? json_object_get(metrics, key) : NULL;
  if (v && json_is_number(v))
    sqlite3_bind_double(st, idx, json_number_value(v));
  else
    sqlite3_bind_null(st, idx);
}

static void bind_str_at(sqlite3_stmt *st, int idx, const json_t *obj, const char *key) {
  const json_t *v = obj ? json_object_get(obj, key) : NULL;
  if (v && json_is_string(v))
    sqlite3_bind_text(st, idx, json_string_value(v), -1, SQLITE_TRANSIENT);
  else
    sqlite3_bind_null(st, idx);
}

static int put_windows(sw_store_t *store, int64_t attempt_id, const char *phase,
                       const struct sw_window_sample *w, int n, struct sw_err *err) {
  static const char *const SQL =
      "INSERT INTO windows (attempt_id, phase, t_ms, load1, cpu_other, cpu_total, mem_avail, "
      "cpu_trainer, cpu_self, gpu_util, gpu_sm_mhz, gpu_temp_c, gpu_power_w, gpu_throttle, "
      "gpu_foreign) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)";
  for (int i = 0; i < n; i++) {
    sqlite3_stmt *st;
    int rc = sw_store_stmt(store, SQL, &st, err);
    if (rc) return rc;
    sqlite3_bind_int64(st, 1, attempt_id);
    sqlite3_bind_text(st, 2, phase, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 3, w[i].t_ms);
    sqlite3_bind_double(st, 4, w[i].load1);
    sqlite3_bind_double(st, 5, w[i].cpu_other);
    sqlite3_bind_double(st, 6, w[i].cpu_total);
    sqlite3_bind_double(st, 7, w[i].mem_avail);
    sqlite3_bind_double(st, 8, w[i].cpu_trainer);
    sqlite3_bind_double(st, 9, w[i].cpu_self);
    if (w[i].has_gpu) {
      sqlite3_bind_double(st, 10, w[i].gpu_util);
      sqlite3_bind_double(st, 11, w[i].gpu_sm_mhz);
      sqlite3_bind_double(st, 12, w[i].gpu_temp_c);
      sqlite3_bind_double(st, 13, w[i].gpu_power_w);
      sqlite3_bind_int64(st, 14, (sqlite3_int64)w[i].gpu_throttle);
      sqlite3_bind_int(st, 15, w[i].gpu_foreign);
    } else {
      for (int k = 10; k <= 15; k++) sqlite3_bind_null(st, k);
    }
    rc = sqlite3_step(st);
    sqlite3_reset(st);
    if (rc != SQLITE_DONE) return sw_store_fail(store, err, "inserting window sample");
  }
  return 0;
}

static int put_kernels(sw_store_t *store, int64_t attempt_id, const json_t *kernels,
                       struct sw_err *err) {
  static const char *const SQL =
      "INSERT INTO kernels (attempt_id, name, calls, gpu_ms, share) VALUES (?1, ?2, ?3, ?4, ?5)";
  size_t i;
  const json_t *k;
  json_array_foreach(kernels, i, k) {
    const json_t *name = json_object_get(k, "name");
    if (!json_is_string(name)) continue; /* a nameless entry carries nothing we can report */
    sqlite3_stmt *st;
    int rc = sw_store_stmt(store, SQL, &st, err);
    if (rc) return rc;
    sqlite3_bind_int64(st, 1, attempt_id);
    sqlite3_bind_text(st, 2, json_string_value(name), -1, SQLITE_TRANSIENT);
    bind_metric(st, 3, k, "calls");
    bind_metric(st, 4, k, "gpu_ms");
    bind_metric(st, 5, k, "share");
    rc = sqlite3_step(st);
    sqlite3_reset(st);
    if (rc != SQLITE_DONE) return sw_store_fail(store, err, "inserting kernel row");
  }
  return 0;
}

static int put_checkpoints(sw_store_t *store, int64_t attempt_id, const json_t *cps,
                           struct sw_err *err) {
  static const char *const SQL = "INSERT INTO checkpoints (attempt_id, iter, train_s, psnr_db, "
                                 "splats) VALUES (?1, ?2, ?3, ?4, ?5)";
  size_t i;
  const json_t *c;
  json_array_foreach(cps, i, c) {
    const json_t *iter = json_object_get(c, "iter");
    if (!json_is_number(iter)) continue;
    /* The result comes from a worker (or an external trainer): a real iteration number must be a
     * whole number in range before it is converted, as NaN or 1e300 cast to int64 is undefined. */
    double it = json_number_value(iter);
    if (!(it >= 0.0 && it <= 9007199254740992.0 && it == floor(it))) continue;
    sqlite3_stmt *st;
    int rc = sw_store_stmt(store, SQL, &st, err);
    if (rc) return rc;
    sqlite3_bind_int64(st, 1, attempt_id);
    sqlite3_bind_int64(st, 2, json_is_integer(iter) ? json_integer_value(iter) : (int64_t)it);
    bind_metric(st, 3, c, "train_s");
    bind_metric(st, 4, c, "psnr_db");
    bind_metric(st, 5, c, "splats");
    rc = sqlite3_step(st);
    sqlite3_reset(st);
    if (rc != SQLITE_DONE) return sw_store_fail(store, err, "inserting checkpoint row");
  }
  return 0;
}

int sw_store_put_attempt(sw_store_t *store, const struct sw_attempt_rec *rec, int *duplicate,
                         struct sw_err *err) {
  static const char *const SQL_FIND = "SELECT id FROM attempts WHERE run_id = ?1 AND attempt = ?2";
  static const char *const SQL_INSERT =
      "INSERT INTO attempts (run_id, attempt, lease_id, worker_id, status, exit_status, "
      "started_ms, finished_ms, result_json, error_text, train_s, wall_s, psnr_db, ssim, "
      "iterations, splats_final, splats_mean, gpu_busy_frac, trainer_sha256, shaders_sha256, "
      "scene_sha256, config_sha256, flag_reason, env_before, env_after, run_start_wall_ms, "
      "run_end_wall_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, "
      "?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27)";
  *duplicate = 0;
  if (sqlite3_get_autocommit(store->db))
    return sw_err_set(err, SW_ESTATE, "sw_store_put_attempt called outside a transaction");
  sqlite3_stmt *st;
  int rc = sw_store_stmt(store, SQL_FIND, &st, err);
  if (rc) return rc;
  sqlite3_bind_int64(st, 1, rec->run_id);
  sqlite3_bind_int(st, 2, rec->attempt);
  rc = sqlite3_step(st);
  sqlite3_reset(st);
  if (rc == SQLITE_ROW) {
    *duplicate = 1;
    return 0;
  }
  if (rc != SQLITE_DONE) return sw_store_fail(store, err, "looking up attempt");

  json_t *owned = NULL;
  if (!rec->result && rec->result_json && !rec->result_untrusted)
    owned = json_loads(rec->result_json, 0, NULL);
  const json_t *result = rec->result_untrusted ? NULL : rec->result ? rec->result : owned;
  const json_t *metrics = result ? json_object_get(result, "metrics") : NULL;
  const json_t *trainer = result ? json_object_get(result, "trainer") : NULL;
  const json_t *scene = result ? json_object_get(result, "scene") : NULL;

  if ((rc = sw_store_stmt(store, SQL_INSERT, &st, err))) goto out;
  sqlite3_bind_int64(st, 1, rec->run_id);
  sqlite3_bind_int(st, 2, rec->attempt);
  if (rec->lease_id > 0)
    sqlite3_bind_int64(st, 3, rec->lease_id);
  else
    sqlite3_bind_null(st, 3);
  sqlite3_bind_text(st, 4, rec->worker_id, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 5, sw_attempt_status_name(rec->status), -1, SQLITE_STATIC);
  sqlite3_bind_int(st, 6, rec->exit_status);
  sqlite3_bind_int64(st, 7, rec->started_ms);
  sqlite3_bind_int64(st, 8, rec->finished_ms);
  if (rec->result_json)
    sqlite3_bind_text(st, 9, rec->result_json, -1, SQLITE_STATIC);
  else
    sqlite3_bind_null(st, 9);
  if (rec->error_text)
    sqlite3_bind_text(st, 10, rec->error_text, -1, SQLITE_STATIC);
  else
    sqlite3_bind_null(st, 10);
  bind_metric(st, 11, metrics, "train_s");
  bind_metric(st, 12, metrics, "wall_s");
  bind_metric(st, 13, metrics, "psnr_db");
  bind_metric(st, 14, metrics, "ssim");
  bind_metric(st, 15, metrics, "iterations");
  bind_metric(st, 16, metrics, "splats_final");
  bind_metric(st, 17, metrics, "splats_mean");
  bind_metric(st, 18, metrics, "gpu_busy_frac");
  bind_str_at(st, 19, trainer, "binary_sha256");
  bind_str_at(st, 20, trainer, "shaders_sha256");
  bind_str_at(st, 21, scene, "sha256");
  bind_str_at(st, 22, result, "config_sha256");
  const char *texts[3] = {rec->flag_reason, rec->env_before, rec->env_after};
  for (int k = 0; k < 3; k++) {
    if (texts[k])
      sqlite3_bind_text(st, 23 + k, texts[k], -1, SQLITE_STATIC);
    else
      sqlite3_bind_null(st, 23 + k);
  }
  const int64_t walls[2] = {rec->run_start_wall_ms, rec->run_end_wall_ms};
  for (int k = 0; k < 2; k++) {
    if (walls[k] > 0)
      sqlite3_bind_int64(st, 26 + k, walls[k]);
    else
      sqlite3_bind_null(st, 26 + k);
  }
  rc = sqlite3_step(st);
  sqlite3_reset(st);
  if (rc != SQLITE_DONE) {
    rc = sw_store_fail(store, err, "inserting attempt");
    goto out;
  }
  int64_t attempt_id = sqlite3_last_insert_rowid(store->db);
  if ((rc = put_windows(store, attempt_id, "pre", rec->pre, rec->n_pre, err))) goto out;
  if ((rc = put_windows(store, attempt_id, "during", rec->during, rec->n_during, err))) goto out;
  if (result) {
    const json_t *k = json_object_get(result, "kernels");
    if (json_is_array(k) && (rc = put_kernels(store, attempt_id, k, err))) goto out;
    const json_t *c = json_object_get(result, "checkpoints");
    if (json_is_array(c) && (rc = put_checkpoints(store, attempt_id, c, err))) goto out;
  }
  rc = 0;
out:
  json_decref(owned);
  return rc;
}
