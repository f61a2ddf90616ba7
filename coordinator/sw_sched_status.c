/* sw_sched_status.c: the scheduler's progress view (sw_sched_status_json) and sweep completion
 * query, read from the store and the in-memory worker registry. */
#include <stdio.h>
#include <string.h>

#include "sw_sched_int.h"

/* Pair counts by status for one gate or sweep (sql takes its id as ?1). */
static json_t *pair_counts(sw_sched_t *s, const char *sql, int64_t id, struct sw_err *err) {
  sqlite3_stmt *st;
  if (sw_store_stmt(s->store, sql, &st, err)) return NULL;
  sqlite3_bind_int64(st, 1, id);
  json_t *o = json_pack("{s:i,s:i,s:i,s:i,s:i,s:i}", "pending", 0, "leased", 0, "done", 0, "failed",
                        0, "abandoned", 0, "total", 0);
  int rc, total = 0;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    int n = sqlite3_column_int(st, 1);
    json_object_set_new(o, (const char *)sqlite3_column_text(st, 0), json_integer(n));
    total += n;
  }
  sqlite3_reset(st);
  json_object_set_new(o, "total", json_integer(total));
  if (rc != SQLITE_DONE) {
    sw_store_fail(s->store, err, "counting pairs");
    json_decref(o);
    return NULL;
  }
  return o;
}

/* The verdict as it forms, from a gate's latest verdict JSON (a look, a progress view or the
 * final verdict): the engine's verdict at these pairs, the paired effect and its interval (%),
 * the lab rule's delta and threshold, the guard, and the sequential decision. null before the
 * first completed pair. */
static json_t *forming(const char *verdict_json) {
  json_t *v = verdict_json ? json_loads(verdict_json, 0, NULL) : NULL;
  if (!json_is_object(v)) {
    json_decref(v);
    return json_null();
  }
  json_t *o = json_object();
  const char *keys[][3] = {{"verdict", NULL, "verdict"},
                           {"delta", NULL, "delta"},
                           {"threshold", NULL, "threshold"},
                           {"effect_pct", "paired", "effect_pct"},
                           {"interval_pct", "paired", "t_interval_pct"},
                           {"guard_pass", "guard", "pass"},
                           {"decision", "sequential", "decision"}};
  for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
    json_t *from = keys[k][1] ? json_object_get(v, keys[k][1]) : v;
    json_t *x = json_object_get(from, keys[k][2]);
    json_object_set(o, keys[k][0], x ? x : json_null());
  }
  json_t *counts = json_object_get(v, "counts");
  json_t *used = json_object_get(counts, "used");
  json_object_set(o, "used", used ? used : json_null());
  json_decref(v);
  return o;
}

json_t *sw_sched_status_json(sw_sched_t *s, int64_t sweep_id, int64_t workers_offset,
                             int workers_limit, struct sw_err *err) {
  static const char *const SQL_SWEEPS =
      "SELECT id, name, kind, status, priority, created_ms, finished_ms FROM sweeps WHERE "
      "(?1 = 0 AND (status = 'running' OR id > (SELECT COALESCE(MAX(id), 0) - 20 FROM sweeps))) "
      "OR id = ?1 ORDER BY id";
  static const char *const SQL_GATES =
      "SELECT id, name, status, verdict, n_target, n_max, looks, verdict_json FROM gates WHERE "
      "sweep_id = ?1 ORDER BY id";
  static const char *const SQL_GATE_PAIRS =
      "SELECT status, COUNT(*) FROM pairs WHERE gate_id = ?1 GROUP BY status";
  static const char *const SQL_SWEEP_PAIRS =
      "SELECT status, COUNT(*) FROM pairs WHERE sweep_id = ?1 GROUP BY status";
  json_t *root = json_object(), *sweeps = json_array(), *workers = json_array();
  json_object_set_new(root, "sweeps", sweeps);
  json_object_set_new(root, "workers", workers);
  sqlite3_stmt *st;
  if (sw_store_stmt(s->store, SQL_SWEEPS, &st, err)) goto fail;
  sqlite3_bind_int64(st, 1, sweep_id);
  int rc;
  /* Collected first, since the per-sweep queries reuse the cache's statements. */
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    json_t *o = json_pack(
        "{s:I,s:s,s:s,s:s,s:i,s:I}", "id", (json_int_t)sqlite3_column_int64(st, 0), "name",
        (const char *)sqlite3_column_text(st, 1), "kind", (const char *)sqlite3_column_text(st, 2),
        "status", (const char *)sqlite3_column_text(st, 3), "priority", sqlite3_column_int(st, 4),
        "created_ms", (json_int_t)sqlite3_column_int64(st, 5));
    if (sqlite3_column_type(st, 6) != SQLITE_NULL)
      json_object_set_new(o, "finished_ms", json_integer(sqlite3_column_int64(st, 6)));
    json_array_append_new(sweeps, o);
  }
  sqlite3_reset(st);
  if (rc != SQLITE_DONE) {
    sw_store_fail(s->store, err, "listing sweeps");
    goto fail;
  }
  if (sweep_id && json_array_size(sweeps) == 0) {
    sw_err_set(err, SW_ENOTFOUND, "no sweep %lld", (long long)sweep_id);
    goto fail;
  }
  size_t i;
  json_t *sw;
  json_array_foreach(sweeps, i, sw) {
    int64_t id = json_integer_value(json_object_get(sw, "id"));
    json_t *pc = pair_counts(s, SQL_SWEEP_PAIRS, id, err);
    if (!pc) goto fail;
    json_object_set_new(sw, "pairs", pc);
    json_t *gates = json_array();
    json_object_set_new(sw, "gates", gates);
    if (sw_store_stmt(s->store, SQL_GATES, &st, err)) goto fail;
    sqlite3_bind_int64(st, 1, id);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
      json_t *g = json_pack("{s:I,s:s,s:s,s:i,s:i}", "id", (json_int_t)sqlite3_column_int64(st, 0),
                            "name", (const char *)sqlite3_column_text(st, 1), "status",
                            (const char *)sqlite3_column_text(st, 2), "n",
                            sqlite3_column_int(st, 4), "max", sqlite3_column_int(st, 5));
      json_object_set_new(g, "verdict",
                          sqlite3_column_type(st, 3) == SQLITE_NULL
                              ? json_null()
                              : json_string((const char *)sqlite3_column_text(st, 3)));
      json_object_set_new(g, "looks", json_integer(sqlite3_column_int(st, 6)));
      json_object_set_new(g, "forming", forming((const char *)sqlite3_column_text(st, 7)));
      json_array_append_new(gates, g);
    }
    sqlite3_reset(st);
    if (rc != SQLITE_DONE) {
      sw_store_fail(s->store, err, "listing gates");
      goto fail;
    }
    size_t j;
    json_t *g;
    json_array_foreach(gates, j, g) {
      json_t *gc =
          pair_counts(s, SQL_GATE_PAIRS, json_integer_value(json_object_get(g, "id")), err);
      if (!gc) goto fail;
      json_object_set_new(g, "pairs", gc);
    }
  }
  if (workers_limit <= 0) workers_limit = SW_SCHED_STATUS_WORKERS;
  if (workers_limit > SW_SCHED_STATUS_WORKERS_MAX) workers_limit = SW_SCHED_STATUS_WORKERS_MAX;
  if (workers_offset < 0) workers_offset = 0;
  json_object_set_new(root, "workers_page",
                      json_pack("{s:I,s:i,s:i}", "offset", (json_int_t)workers_offset, "limit",
                                workers_limit, "total", s->n_workers));
  for (int64_t w = workers_offset; w < s->n_workers && w < workers_offset + workers_limit; w++) {
    const struct worker_mem *wm = &s->workers[w];
    json_t *o = json_pack("{s:s,s:s,s:I,s:O}", "id", wm->id, "state",
                          wm->online ? (wm->lease_id ? "busy" : "idle") : "offline", "last_seen_ms",
                          (json_int_t)wm->last_seen, "labels", wm->labels);
    json_object_set_new(o, "lease", wm->lease_id ? json_integer(wm->lease_id) : json_null());
    json_array_append_new(workers, o);
  }
  json_object_set_new(root, "leases_active", json_integer(s->n_leases));
  return root;
fail:
  json_decref(root);
  return NULL;
}

int sw_sched_sweep_finished(sw_sched_t *s, int64_t sweep_id, struct sw_err *err) {
  static const char *const SQL = "SELECT status FROM sweeps WHERE id = ?1";
  sqlite3_stmt *st;
  int rc = sw_store_stmt(s->store, SQL, &st, err);
  if (rc) return rc;
  sqlite3_bind_int64(st, 1, sweep_id);
  rc = sqlite3_step(st);
  int finished =
      rc == SQLITE_ROW && strcmp((const char *)sqlite3_column_text(st, 0), "running") != 0;
  sqlite3_reset(st);
  if (rc == SQLITE_DONE) return sw_err_set(err, SW_ENOTFOUND, "no sweep %lld", (long long)sweep_id);
  if (rc != SQLITE_ROW) return sw_store_fail(s->store, err, "reading sweep status");
  return finished;
}
