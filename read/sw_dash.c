/* sw_dash.c: the live dashboard's JSON (store + the coordinator's status snapshot) and its page
 * (sw_dash.h). */
#include "sw_dash.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sw_clock.h"
#include "sw_html.h"

extern const char sw_asset_dashboard[]; /* read/web/dashboard.js, embedded at build time */
extern const size_t sw_asset_dashboard_len;

#define DASH_SWEEPS 50 /* the newest sweeps listed */

/* One row of numbers from sql bound to id (?1); 0 or SW_EDB. */
static int row_of(sw_store_t *s, const char *sql, int64_t id, sqlite3_stmt **out,
                  struct sw_err *err) {
  int rc = sw_store_stmt(s, sql, out, err);
  if (rc) return rc;
  sqlite3_bind_int64(*out, 1, id);
  rc = sqlite3_step(*out);
  if (rc != SQLITE_ROW) {
    sqlite3_reset(*out);
    return sw_store_fail(s, err, "reading the dashboard");
  }
  return 0;
}

/* Runs of a sweep: planned, finished at their pair's current attempt, still to run; and the
 * mean duration of its finished runs (lease to result, the quiet wait included). */
static int sweep_runs(sw_store_t *s, json_t *sw, int64_t id, struct sw_err *err) {
  static const char *const SQL =
      "SELECT COUNT(*), SUM(a.id IS NOT NULL), SUM(a.id IS NULL AND p.status IN "
      "('pending','leased')), AVG(CASE WHEN a.finished_ms > a.started_ms THEN a.finished_ms - "
      "a.started_ms END) FROM runs r JOIN pairs p ON p.id = r.pair_id LEFT JOIN attempts a ON "
      "a.run_id = r.id AND a.attempt = p.attempt WHERE p.sweep_id = ?1";
  sqlite3_stmt *st;
  int rc = row_of(s, SQL, id, &st, err);
  if (rc) return rc;
  int64_t total = sqlite3_column_int64(st, 0), done = sqlite3_column_int64(st, 1),
          left = sqlite3_column_int64(st, 2);
  double mean_ms = sqlite3_column_type(st, 3) == SQLITE_NULL ? NAN : sqlite3_column_double(st, 3);
  sqlite3_reset(st);
  json_object_set_new(sw, "runs",
                      json_pack("{s:I,s:I,s:I,s:i}", "total", (json_int_t)total, "done",
                                (json_int_t)done, "left", (json_int_t)left, "running", 0));
  json_object_set_new(sw, "progress", json_real(total ? (double)done / (double)total : 0));
  json_object_set_new(sw, "mean_run_s", isnan(mean_ms) ? json_null() : json_real(mean_ms / 1000));
  return 0;
}

/* The sweep's gates with the verdict of their latest look (the engine's stored object: final
 * once the gate is done, the view of the pairs so far while it runs). */
static int sweep_gates(sw_store_t *s, json_t *sw, int64_t id, struct sw_err *err) {
  static const char *const SQL =
      "SELECT g.name, g.status, g.verdict, g.verdict_json, g.n_target, g.n_max, g.looks, "
      "(SELECT COUNT(*) FROM pairs p WHERE p.gate_id = g.id AND p.status = 'done') FROM gates g "
      "WHERE g.sweep_id = ?1 ORDER BY g.id";
  sqlite3_stmt *st;
  int rc = sw_store_stmt(s, SQL, &st, err);
  if (rc) return rc;
  sqlite3_bind_int64(st, 1, id);
  json_t *gates = json_array();
  json_object_set_new(sw, "gates", gates);
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    json_t *v = sqlite3_column_type(st, 3) == SQLITE_NULL
                    ? NULL
                    : json_loads(sw_store_col_text(st, 3), 0, NULL);
    json_t *g = json_object();
    json_object_set_new(g, "name", json_string(sw_store_col_text(st, 0)));
    json_object_set_new(g, "status", json_string(sw_store_col_text(st, 1)));
    json_object_set_new(g, "final", json_boolean(sqlite3_column_type(st, 2) != SQLITE_NULL));
    const json_t *verdict = json_object_get(v, "verdict");
    json_object_set_new(g, "verdict",
                        json_is_string(verdict) ? json_incref((json_t *)verdict) : json_null());
    json_object_set_new(g, "delta", json_incref(json_object_get(v, "delta")));
    json_object_set_new(g, "threshold", json_incref(json_object_get(v, "threshold")));
    json_object_set_new(
        g, "interval_pct",
        json_incref(json_object_get(json_object_get(v, "paired"), "t_interval_pct")));
    json_object_set_new(g, "sequential", json_incref(json_object_get(v, "sequential")));
    const json_t *reasons = json_object_get(v, "reasons");
    json_object_set_new(g, "reason", json_incref(json_array_get(reasons, 0)));
    json_object_set_new(g, "n", json_integer(sqlite3_column_int(st, 4)));
    json_object_set_new(g, "max", json_integer(sqlite3_column_int(st, 5)));
    json_object_set_new(g, "looks", json_integer(sqlite3_column_int(st, 6)));
    json_object_set_new(g, "pairs_done", json_integer(sqlite3_column_int(st, 7)));
    /* json_incref(NULL) is NULL: keys the verdict lacks are set to null explicitly. */
    const char *k[] = {"delta", "threshold", "interval_pct", "sequential", "reason"};
    for (size_t i = 0; i < sizeof k / sizeof *k; i++)
      if (!json_object_get(g, k[i])) json_object_set_new(g, k[i], json_null());
    json_decref(v);
    json_array_append_new(gates, g);
  }
  sqlite3_reset(st);
  return rc == SQLITE_DONE ? 0 : sw_store_fail(s, err, "reading gates");
}

static json_t *find_by_id(const json_t *arr, const char *id) {
  size_t i;
  json_t *o;
  json_array_foreach(arr, i, o) {
    const char *x = json_string_value(json_object_get(o, "id"));
    if (x && strcmp(x, id) == 0) return o;
  }
  return NULL;
}

/* A worker's current run (from the live session): its sweep and iteration budget. */
static int current_run(sw_store_t *s, json_t *w, int64_t run_id, struct sw_err *err) {
  static const char *const SQL = "SELECT p.sweep_id, r.config_json, r.arm FROM runs r JOIN pairs "
                                 "p ON p.id = r.pair_id WHERE r.id = ?1";
  sqlite3_stmt *st;
  int rc = sw_store_stmt(s, SQL, &st, err);
  if (rc) return rc;
  sqlite3_bind_int64(st, 1, run_id);
  rc = sqlite3_step(st);
  if (rc == SQLITE_ROW) {
    json_object_set_new(w, "sweep", json_integer(sqlite3_column_int64(st, 0)));
    json_object_set_new(w, "arm", json_string(sw_store_col_text(st, 2)));
    json_t *cfg = json_loads(sw_store_col_text(st, 1), 0, NULL);
    const json_t *it = json_object_get(cfg, "iterations");
    if (json_is_integer(it) && json_integer_value(it) > 0) {
      json_object_set(w, "iterations", (json_t *)it);
      double iter = json_number_value(json_object_get(w, "iter"));
      double p = iter / (double)json_integer_value(it);
      json_object_set_new(w, "progress", json_real(p > 1 ? 1 : p));
    }
    json_decref(cfg);
  }
  sqlite3_reset(st);
  return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : sw_store_fail(s, err, "reading a run");
}

/* The window of the worker's last finished run: what the contamination rule looked at. */
static int last_window(sw_store_t *s, json_t *w, const char *worker, struct sw_err *err) {
  static const char *const SQL =
      "SELECT a.id, a.status, a.flag_reason, a.finished_ms, (SELECT MAX(cpu_other) FROM windows "
      "x WHERE x.attempt_id = a.id AND x.phase = 'during'), (SELECT AVG(cpu_other) FROM windows "
      "x WHERE x.attempt_id = a.id AND x.phase = 'during'), (SELECT MAX(load1) FROM windows x "
      "WHERE x.attempt_id = a.id AND x.phase = 'pre'), (SELECT MAX(gpu_util) FROM windows x "
      "WHERE x.attempt_id = a.id AND x.phase = 'during') FROM attempts a WHERE a.worker_id = ?1 "
      "AND a.finished_ms IS NOT NULL ORDER BY a.finished_ms DESC LIMIT 1";
  sqlite3_stmt *st;
  int rc = sw_store_stmt(s, SQL, &st, err);
  if (rc) return rc;
  sqlite3_bind_text(st, 1, worker, -1, SQLITE_TRANSIENT);
  rc = sqlite3_step(st);
  if (rc == SQLITE_ROW) {
    json_t *lw = json_pack(
        "{s:s,s:o,s:o,s:o,s:o,s:o,s:o}", "status", sw_store_col_text(st, 1), "flag_reason",
        sqlite3_column_type(st, 2) == SQLITE_NULL ? json_null()
                                                  : json_string(sw_store_col_text(st, 2)),
        "finished_ms", sw_store_col_num(st, 3), "cpu_other_max", sw_store_col_num(st, 4),
        "cpu_other_mean", sw_store_col_num(st, 5), "load1_pre_max", sw_store_col_num(st, 6),
        "gpu_util_max", sw_store_col_num(st, 7));
    json_object_set_new(w, "last_window", lw);
  } else {
    json_object_set_new(w, "last_window", json_null());
  }
  sqlite3_reset(st);
  return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : sw_store_fail(s, err, "reading windows");
}

/* Workers: the store's list, with the live snapshot's state, session and run where there is
 * one. Counts the live runs per sweep into sweeps[].runs.running. */
static int workers_of(sw_store_t *s, const json_t *live, json_t *root, struct sw_err *err) {
  static const char *const SQL = "SELECT id, state, last_seen_ms, (SELECT COUNT(*) FROM pairs p "
                                 "WHERE p.worker_id = w.id AND p.status = 'done') FROM workers w "
                                 "ORDER BY id";
  const json_t *lw = json_object_get(live, "workers");
  const json_t *sessions = json_object_get(json_object_get(live, "coordinator"), "sessions");
  json_t *workers = json_array();
  json_object_set_new(root, "workers", workers);
  sqlite3_stmt *st;
  int rc = sw_store_stmt(s, SQL, &st, err);
  if (rc) return rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    const char *id = sw_store_col_text(st, 0);
    const json_t *wl = find_by_id(lw, id), *ss = find_by_id(sessions, id);
    const char *state = json_string_value(json_object_get(wl, "state"));
    json_t *w = json_object();
    json_object_set_new(w, "id", json_string(id));
    /* Live: busy, idle or offline from the scheduler; without a snapshot the store's. */
    json_object_set_new(w, "state", json_string(state ? state : sw_store_col_text(st, 1)));
    json_object_set_new(w, "last_seen_ms", json_integer(sqlite3_column_int64(st, 2)));
    json_object_set_new(w, "pairs_done", json_integer(sqlite3_column_int(st, 3)));
    json_object_set_new(w, "lease", json_incref(json_object_get(wl, "lease")));
    if (!json_object_get(w, "lease")) json_object_set_new(w, "lease", json_null());
    int64_t run = json_integer_value(json_object_get(ss, "run"));
    if (ss && run > 0 && json_integer_value(json_object_get(ss, "lease")) > 0) {
      json_object_set_new(w, "run", json_integer(run));
      json_object_set(w, "iter", json_object_get(ss, "iter"));
      json_object_set(w, "train_s", json_object_get(ss, "train_s"));
      json_object_set_new(w, "iterations", json_null());
      json_object_set_new(w, "progress", json_null());
    } else {
      json_object_set_new(w, "run", json_null());
    }
    if (ss) {
      json_object_set(w, "silent_ms", json_object_get(ss, "silent_ms"));
      json_object_set(w, "runs_finished", json_object_get(ss, "runs_finished"));
    }
    json_array_append_new(workers, w);
  }
  sqlite3_reset(st);
  if (rc != SQLITE_DONE) return sw_store_fail(s, err, "reading workers");
  size_t i;
  json_t *w;
  json_array_foreach(workers, i, w) {
    const json_t *run = json_object_get(w, "run");
    if (json_is_integer(run) && (rc = current_run(s, w, json_integer_value(run), err))) return rc;
    if ((rc = last_window(s, w, json_string_value(json_object_get(w, "id")), err))) return rc;
  }
  return 0;
}

/* Expected time left: the runs still to do times the sweep's mean run duration, spread over
 * the workers running its runs now (at least one). Null until a run has finished, and for a
 * sweep that no longer runs. A sequential gate may add pairs: the estimate covers the pairs
 * planned now. */
static void sweep_eta(json_t *sw) {
  json_t *runs = json_object_get(sw, "runs");
  const json_t *mean = json_object_get(sw, "mean_run_s");
  const char *status = json_string_value(json_object_get(sw, "status"));
  int64_t left = json_integer_value(json_object_get(runs, "left"));
  int64_t running = json_integer_value(json_object_get(runs, "running"));
  if (!status || strcmp(status, "running") || !json_is_number(mean)) {
    json_object_set_new(sw, "eta_s", json_null());
    return;
  }
  double eta = (double)left * json_number_value(mean) / (double)(running > 0 ? running : 1);
  json_object_set_new(sw, "eta_s", json_real(eta));
}

json_t *sw_dash_json(sw_store_t *s, const json_t *live, int64_t live_age_ms, struct sw_err *err) {
  static const char *const SQL = "SELECT id, name, kind, status, created_ms, finished_ms FROM "
                                 "sweeps ORDER BY id DESC LIMIT ?1";
  json_t *root = json_object(), *sweeps = json_array();
  json_object_set_new(root, "t_ms", json_integer(sw_clock_wall_ms()));
  json_object_set_new(root, "live",
                      live ? json_pack("{s:I}", "age_ms", (json_int_t)live_age_ms) : json_null());
  json_object_set_new(root, "sweeps", sweeps);
  sqlite3_stmt *st;
  int rc = sw_store_stmt(s, SQL, &st, err);
  if (rc) goto fail;
  sqlite3_bind_int(st, 1, DASH_SWEEPS);
  while ((rc = sqlite3_step(st)) == SQLITE_ROW)
    json_array_append_new(
        sweeps,
        json_pack("{s:I,s:s,s:s,s:s,s:I,s:o}", "id", (json_int_t)sqlite3_column_int64(st, 0),
                  "name", sw_store_col_text(st, 1), "kind", sw_store_col_text(st, 2), "status",
                  sw_store_col_text(st, 3), "created_ms", (json_int_t)sqlite3_column_int64(st, 4),
                  "finished_ms", sw_store_col_num(st, 5)));
  sqlite3_reset(st);
  if (rc != SQLITE_DONE) {
    sw_store_fail(s, err, "reading sweeps");
    goto fail;
  }
  size_t i;
  json_t *sw;
  json_array_foreach(sweeps, i, sw) {
    int64_t id = json_integer_value(json_object_get(sw, "id"));
    if (sweep_runs(s, sw, id, err) || sweep_gates(s, sw, id, err)) goto fail;
  }
  if (workers_of(s, live, root, err)) goto fail;
  const json_t *w;
  json_array_foreach(json_object_get(root, "workers"), i, w) {
    int64_t sid = json_integer_value(json_object_get(w, "sweep"));
    size_t j;
    json_array_foreach(sweeps, j, sw) {
      if (json_integer_value(json_object_get(sw, "id")) != sid) continue;
      json_t *runs = json_object_get(sw, "runs");
      json_object_set_new(runs, "running",
                          json_integer(json_integer_value(json_object_get(runs, "running")) + 1));
    }
  }
  json_array_foreach(sweeps, i, sw) sweep_eta(sw);
  return root;
fail:
  json_decref(root);
  return NULL;
}

char *sw_dash_page(void) {
  char *buf = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&buf, &len);
  if (!out) return NULL;
  sw_html_begin(out, "splatsweep dashboard");
  fputs("<h1>splatsweep <span class=\"muted\" id=\"dash-state\"></span></h1>\n"
        "<h2>Sweeps</h2>\n<div id=\"dash-sweeps\"><p class=\"muted\">loading&hellip;</p></div>\n"
        "<h2>Workers</h2>\n<div id=\"dash-workers\"></div>\n"
        "<h2 id=\"dash-charts-title\">Charts</h2>\n<div id=\"dash-charts\"></div>\n"
        "<p class=\"muted\">Read-only. JSON: <a href=\"api/dashboard\">/api/dashboard</a>, "
        "/api/report/ID, /api/pareto/ID, /api/audit/ID (docs/dashboard.md).</p>\n",
        out);
  sw_html_script(out, sw_asset_dashboard, sw_asset_dashboard_len);
  sw_html_end(out);
  if (fclose(out)) {
    free(buf);
    return NULL;
  }
  return buf;
}
