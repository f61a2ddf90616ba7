/* sw_report.c: reports of sweeps from the store alone: the JSON of DESIGN.md section 10 built
 * from stored rows and the gate engine's stored gate objects, and its renderings as text,
 * Markdown and a self-contained HTML page with Chart.js charts (docs/report.md). */
#include "sw_report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sw_html.h"
#include "sw_json.h"
#include "sw_pareto.h"
#include "sw_spec.h"

int sw_report_format_parse(const char *name, enum sw_report_format *out, struct sw_err *err) {
  static const struct {
    const char *name;
    enum sw_report_format f;
  } F[] = {{"text", SW_REPORT_TEXT},
           {"md", SW_REPORT_MD},
           {"markdown", SW_REPORT_MD},
           {"json", SW_REPORT_JSON},
           {"html", SW_REPORT_HTML}};
  for (size_t i = 0; name && i < sizeof F / sizeof F[0]; i++)
    if (strcmp(name, F[i].name) == 0) {
      *out = F[i].f;
      return 0;
    }
  return sw_err_set(err, SW_EINVAL, "unknown report format '%s' (text, md, json or html)",
                    name ? name : "");
}

/* ---- building the JSON ---------------------------------------------------------------------- */

static json_t *col_json_str(sqlite3_stmt *st, int i) {
  return sqlite3_column_type(st, i) == SQLITE_NULL ? json_null()
                                                   : json_string(sw_store_col_text(st, i));
}

/* Summary of an attempt's load windows: sample counts and the numbers the contamination rule
 * looks at, for each phase. */
static int window_summary(sw_store_t *s, int64_t attempt_id, json_t *run, struct sw_err *err) {
  static const char *const SQL =
      "SELECT phase, COUNT(*), AVG(load1), MAX(load1), AVG(cpu_other), MAX(cpu_other), "
      "COUNT(gpu_util), AVG(gpu_util), MAX(gpu_util) FROM windows WHERE attempt_id = ?1 GROUP BY "
      "phase";
  json_t *w = json_pack("{s:{s:i},s:{s:i}}", "pre", "n", 0, "during", "n", 0);
  json_object_set_new(run, "window", w);
  sqlite3_stmt *st;
  int rc = sw_store_stmt(s, SQL, &st, err);
  if (rc) return rc;
  sqlite3_bind_int64(st, 1, attempt_id);
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    json_t *o = json_object();
    json_object_set_new(o, "n", json_integer(sqlite3_column_int(st, 1)));
    json_object_set_new(o, "load1_mean", sw_store_col_num(st, 2));
    json_object_set_new(o, "load1_max", sw_store_col_num(st, 3));
    json_object_set_new(o, "cpu_other_mean", sw_store_col_num(st, 4));
    json_object_set_new(o, "cpu_other_max", sw_store_col_num(st, 5));
    /* GPU utilisation only where the worker sampled a GPU (NVML); absent otherwise. */
    if (sqlite3_column_int(st, 6) > 0) {
      json_object_set_new(o, "gpu_util_mean", sw_store_col_num(st, 7));
      json_object_set_new(o, "gpu_util_max", sw_store_col_num(st, 8));
    }
    json_object_set_new(w, sw_store_col_text(st, 0), o);
  }
  sqlite3_reset(st);
  return rc == SQLITE_DONE ? 0 : sw_store_fail(s, err, "reading windows");
}

static int kernels_of(sw_store_t *s, int64_t attempt_id, json_t *run, struct sw_err *err) {
  static const char *const SQL =
      "SELECT name, calls, gpu_ms, share FROM kernels WHERE attempt_id = ?1 ORDER BY rowid";
  json_t *k = json_array();
  json_object_set_new(run, "kernels", k);
  sqlite3_stmt *st;
  int rc = sw_store_stmt(s, SQL, &st, err);
  if (rc) return rc;
  sqlite3_bind_int64(st, 1, attempt_id);
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(sw_store_col_text(st, 0)));
    json_object_set_new(o, "calls", sw_store_col_num(st, 1));
    json_object_set_new(o, "gpu_ms", sw_store_col_num(st, 2));
    json_object_set_new(o, "share", sw_store_col_num(st, 3));
    json_array_append_new(k, o);
  }
  sqlite3_reset(st);
  return rc == SQLITE_DONE ? 0 : sw_store_fail(s, err, "reading kernels");
}

/* The checkpoints the trainer recorded (iteration, train_s reached, test-view PSNR, splats):
 * the report's PSNR-versus-training-time chart. */
static int checkpoints_of(sw_store_t *s, int64_t attempt_id, json_t *run, struct sw_err *err) {
  static const char *const SQL = "SELECT iter, train_s, psnr_db, splats FROM checkpoints WHERE "
                                 "attempt_id = ?1 ORDER BY iter";
  json_t *k = json_array();
  json_object_set_new(run, "checkpoints", k);
  sqlite3_stmt *st;
  int rc = sw_store_stmt(s, SQL, &st, err);
  if (rc) return rc;
  sqlite3_bind_int64(st, 1, attempt_id);
  while ((rc = sqlite3_step(st)) == SQLITE_ROW)
    json_array_append_new(k, json_pack("{s:o,s:o,s:o,s:o}", "iter", sw_store_col_num(st, 0),
                                       "train_s", sw_store_col_num(st, 1), "psnr_db",
                                       sw_store_col_num(st, 2), "splats", sw_store_col_num(st, 3)));
  sqlite3_reset(st);
  return rc == SQLITE_DONE ? 0 : sw_store_fail(s, err, "reading checkpoints");
}

/* The runs of a pair at its current attempt, keyed by arm ("off"/"on", or "run" for grids),
 * each with metrics, status, attempt, contamination flag and window summary. */
static int pair_runs(sw_store_t *s, int64_t pair_id, int attempt, int is_grid, json_t *pair,
                     struct sw_err *err) {
  static const char *const SQL =
      "SELECT r.id, r.arm, r.config_sha256, a.id, a.status, a.exit_status, a.worker_id, "
      "a.result_json, a.error_text, a.trainer_sha256, a.shaders_sha256, a.scene_sha256, "
      "r.config_json, a.flag_reason, a.gpu_busy_frac FROM runs r LEFT JOIN attempts a ON a.run_id "
      "= r.id AND a.attempt = ?2 "
      "WHERE r.pair_id = ?1 ORDER BY r.position";
  sqlite3_stmt *st;
  int rc = sw_store_stmt(s, SQL, &st, err);
  if (rc) return rc;
  sqlite3_bind_int64(st, 1, pair_id);
  sqlite3_bind_int(st, 2, attempt);
  /* Collect first: the window and kernel queries run per attempt afterwards. */
  json_t *runs = json_array();
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    json_t *run = json_object();
    json_object_set_new(run, "run_id", json_integer(sqlite3_column_int64(st, 0)));
    json_object_set_new(run, "arm", json_string(sw_store_col_text(st, 1)));
    json_object_set_new(run, "attempt", json_integer(attempt));
    json_object_set_new(run, "config_sha256", json_string(sw_store_col_text(st, 2)));
    json_t *cfg = json_loads(sw_store_col_text(st, 12), 0, NULL);
    json_object_set_new(run, "config", cfg ? cfg : json_object());
    int has = sqlite3_column_type(st, 3) != SQLITE_NULL;
    const char *status = has ? sw_store_col_text(st, 4) : "pending";
    json_object_set_new(run, "status", json_string(status));
    json_object_set_new(
        run, "contaminated",
        json_boolean(strcmp(status, "contaminated") == 0 || strcmp(status, "invalid") == 0));
    json_t *metrics = NULL;
    if (has) {
      json_object_set_new(run, "attempt_id", json_integer(sqlite3_column_int64(st, 3)));
      json_object_set_new(run, "exit_status", json_integer(sqlite3_column_int(st, 5)));
      json_object_set_new(run, "worker", col_json_str(st, 6));
      json_t *res = sqlite3_column_type(st, 7) == SQLITE_NULL
                        ? NULL
                        : json_loads(sw_store_col_text(st, 7), 0, NULL);
      json_t *m = json_object_get(res, "metrics");
      if (json_is_object(m)) metrics = json_incref(m);
      json_decref(res);
      if (sqlite3_column_type(st, 8) != SQLITE_NULL)
        json_object_set_new(run, "error", json_string(sw_store_col_text(st, 8)));
      json_object_set_new(run, "trainer_sha256", col_json_str(st, 9));
      json_object_set_new(run, "shaders_sha256", col_json_str(st, 10));
      json_object_set_new(run, "scene_sha256", col_json_str(st, 11));
      json_object_set_new(run, "flag_reason", col_json_str(st, 13));
      json_object_set_new(run, "gpu_busy_frac", sw_store_col_num(st, 14));
    }
    json_object_set_new(run, "metrics", metrics ? metrics : json_object());
    json_array_append_new(runs, run);
  }
  sqlite3_reset(st);
  if (rc != SQLITE_DONE) {
    json_decref(runs);
    return sw_store_fail(s, err, "reading runs");
  }
  size_t i;
  json_t *run;
  rc = 0;
  json_array_foreach(runs, i, run) {
    const json_t *aid = json_object_get(run, "attempt_id");
    if (aid) {
      if ((rc = window_summary(s, json_integer_value(aid), run, err))) break;
      if ((rc = kernels_of(s, json_integer_value(aid), run, err))) break;
      if ((rc = checkpoints_of(s, json_integer_value(aid), run, err))) break;
      json_object_del(run, "attempt_id");
    }
    const char *arm = json_string_value(json_object_get(run, "arm"));
    json_object_set(pair, is_grid ? "run" : arm, run);
  }
  json_decref(runs);
  return rc;
}

/* Earlier attempts of a pair (abandoned or failed), so a reader sees what was re-run. */
static int earlier_attempts(sw_store_t *s, int64_t pair_id, int attempt, json_t *pair,
                            struct sw_err *err) {
  static const char *const SQL =
      "SELECT a.attempt, r.arm, a.status, a.worker_id, a.exit_status FROM attempts a JOIN runs r "
      "ON r.id = a.run_id WHERE r.pair_id = ?1 AND a.attempt < ?2 ORDER BY a.attempt, r.position";
  sqlite3_stmt *st;
  int rc = sw_store_stmt(s, SQL, &st, err);
  if (rc) return rc;
  sqlite3_bind_int64(st, 1, pair_id);
  sqlite3_bind_int(st, 2, attempt);
  json_t *arr = json_array();
  while ((rc = sqlite3_step(st)) == SQLITE_ROW)
    json_array_append_new(
        arr, json_pack("{s:i,s:s,s:s,s:o,s:i}", "attempt", sqlite3_column_int(st, 0), "arm",
                       sw_store_col_text(st, 1), "status", sw_store_col_text(st, 2), "worker",
                       col_json_str(st, 3), "exit_status", sqlite3_column_int(st, 4)));
  sqlite3_reset(st);
  json_object_set_new(pair, "earlier_attempts", arr);
  return rc == SQLITE_DONE ? 0 : sw_store_fail(s, err, "reading earlier attempts");
}

/* Pairs of a gate (gate_id > 0) or the single-run "pairs" of a grid (sweep's points). */
static int pairs_of(sw_store_t *s, int64_t gate_id, int64_t sweep_id, json_t *arr,
                    struct sw_err *err) {
  static const char *const SQL_GATE =
      "SELECT p.id, p.idx, p.worker_id, p.ord, p.status, p.attempt, p.is_replacement, p.replaces, "
      "NULL, NULL, NULL FROM pairs p WHERE p.gate_id = ?1 ORDER BY p.idx";
  static const char *const SQL_GRID =
      "SELECT p.id, p.idx, p.worker_id, p.ord, p.status, p.attempt, p.is_replacement, p.replaces, "
      "g.label, g.params_json, g.repeat FROM pairs p JOIN grid_points g ON g.id = p.point_id "
      "WHERE p.sweep_id = ?1 AND p.gate_id IS NULL ORDER BY p.idx";
  int is_grid = gate_id == 0;
  sqlite3_stmt *st;
  int rc = sw_store_stmt(s, is_grid ? SQL_GRID : SQL_GATE, &st, err);
  if (rc) return rc;
  sqlite3_bind_int64(st, 1, is_grid ? sweep_id : gate_id);
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    json_t *p = json_object();
    json_object_set_new(p, "pair_id", json_integer(sqlite3_column_int64(st, 0)));
    json_object_set_new(p, "index", json_integer(sqlite3_column_int(st, 1)));
    json_object_set_new(p, "worker", col_json_str(st, 2));
    json_object_set_new(p, "order", json_string(sw_store_col_text(st, 3)));
    json_object_set_new(p, "status", json_string(sw_store_col_text(st, 4)));
    json_object_set_new(p, "attempt", json_integer(sqlite3_column_int(st, 5)));
    json_object_set_new(p, "is_replacement", json_boolean(sqlite3_column_int(st, 6)));
    json_object_set_new(p, "replaces", sw_store_col_num(st, 7));
    if (is_grid) {
      json_object_set_new(p, "label", json_string(sw_store_col_text(st, 8)));
      json_t *params = json_loads(sw_store_col_text(st, 9), 0, NULL);
      json_object_set_new(p, "params", params ? params : json_object());
      json_object_set_new(p, "repeat", json_integer(sqlite3_column_int(st, 10)));
    }
    json_array_append_new(arr, p);
  }
  sqlite3_reset(st);
  if (rc != SQLITE_DONE) return sw_store_fail(s, err, "reading pairs");
  size_t i;
  json_t *p;
  json_array_foreach(arr, i, p) {
    int64_t pid = json_integer_value(json_object_get(p, "pair_id"));
    int attempt = (int)json_integer_value(json_object_get(p, "attempt"));
    if ((rc = pair_runs(s, pid, attempt, is_grid, p, err))) return rc;
    if ((rc = earlier_attempts(s, pid, attempt, p, err))) return rc;
    json_object_del(p, "pair_id");
  }
  return 0;
}

/* Each pair's own change in the gate metric, 100 x (on - off) / off (null without both
 * values): the dots of the report's per-pair delta chart, drawn against the engine's paired
 * interval and the lab threshold. */
static void pair_deltas(json_t *gate) {
  const char *metric = json_string_value(json_object_get(gate, "metric"));
  size_t i;
  json_t *p;
  json_array_foreach(json_object_get(gate, "pairs"), i, p) {
    const json_t *a = json_object_get(json_object_get(json_object_get(p, "off"), "metrics"),
                                      metric ? metric : "");
    const json_t *b =
        json_object_get(json_object_get(json_object_get(p, "on"), "metrics"), metric ? metric : "");
    double off = json_number_value(a), on = json_number_value(b);
    json_object_set_new(p, "delta_pct",
                        json_is_number(a) && json_is_number(b) && off != 0
                            ? json_real(100 * (on - off) / off)
                            : json_null());
  }
}

/* The contamination limits the scheduler judged this sweep's windows by (the spec's values
 * over the defaults, sw_spec_contamination_from_json: the one reading of them). */
static json_t *contamination_limits(const json_t *spec) {
  struct sw_spec_contamination c;
  sw_spec_contamination_from_json(json_object_get(spec, "contamination"), &c);
  return json_pack("{s:f,s:f,s:f,s:f,s:b}", "load1_max", c.load1_max, "cpu_other_max",
                   c.cpu_other_max, "cpu_other_mean_max", c.cpu_other_mean_max, "over_max_s",
                   c.over_max_s, "gpu_foreign", c.gpu_foreign);
}

static int gates_of(sw_store_t *s, int64_t sweep_id, const json_t *spec, json_t *arr,
                    struct sw_err *err) {
  static const char *const SQL =
      "SELECT id, name, metric, status, verdict, verdict_json, n_target, n_max, looks FROM gates "
      "WHERE sweep_id = ?1 ORDER BY id";
  sqlite3_stmt *st;
  int rc = sw_store_stmt(s, SQL, &st, err);
  if (rc) return rc;
  sqlite3_bind_int64(st, 1, sweep_id);
  json_t *ids = json_array();
  const json_t *guard = json_object_get(json_object_get(spec, "gate"), "guard");
  const json_t *gm = json_object_get(guard, "metric");
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    /* The gate object is the gate engine's own JSON; the store adds the pairs. */
    json_t *g = sqlite3_column_type(st, 5) == SQLITE_NULL
                    ? NULL
                    : json_loads(sw_store_col_text(st, 5), 0, NULL);
    if (!json_is_object(g)) {
      json_decref(g);
      g = json_pack("{s:s,s:s,s:[s],s:n,s:n,s:n}", "name", sw_store_col_text(st, 1), "verdict",
                    "inconclusive", "reasons", "not judged yet: the gate is still running", "delta",
                    "threshold", "guard");
    }
    if (!json_object_get(g, "name"))
      json_object_set_new(g, "name", json_string(sw_store_col_text(st, 1)));
    json_object_set_new(g, "status", json_string(sw_store_col_text(st, 3)));
    json_object_set_new(g, "final", json_boolean(sqlite3_column_type(st, 4) != SQLITE_NULL));
    json_object_set_new(g, "metric", json_string(sw_store_col_text(st, 2)));
    json_object_set_new(g, "guard_metric",
                        json_string(json_is_string(gm) ? json_string_value(gm) : "psnr_db"));
    json_object_set_new(g, "n", json_integer(sqlite3_column_int(st, 6)));
    json_object_set_new(g, "max", json_integer(sqlite3_column_int(st, 7)));
    json_object_set_new(g, "looks", json_integer(sqlite3_column_int(st, 8)));
    json_array_append_new(arr, g);
    json_array_append_new(ids, json_integer(sqlite3_column_int64(st, 0)));
  }
  sqlite3_reset(st);
  if (rc != SQLITE_DONE) {
    json_decref(ids);
    return sw_store_fail(s, err, "reading gates");
  }
  rc = 0;
  for (size_t i = 0; i < json_array_size(ids) && !rc; i++) {
    json_t *pairs = json_array();
    json_object_set_new(json_array_get(arr, i), "pairs", pairs);
    rc = pairs_of(s, json_integer_value(json_array_get(ids, i)), sweep_id, pairs, err);
    if (!rc) pair_deltas(json_array_get(arr, i));
  }
  json_decref(ids);
  return rc;
}

/* The sweep's history in words (submit, re-queues, replacements, extensions, verdicts). */
static int events_of(sw_store_t *s, int64_t sweep_id, json_t *sweep, struct sw_err *err) {
  static const char *const SQL =
      "SELECT t_ms, kind, text FROM events WHERE sweep_id = ?1 ORDER BY t_ms, id";
  sqlite3_stmt *st;
  int rc = sw_store_stmt(s, SQL, &st, err);
  if (rc) return rc;
  sqlite3_bind_int64(st, 1, sweep_id);
  json_t *arr = json_array();
  json_object_set_new(sweep, "events", arr);
  while ((rc = sqlite3_step(st)) == SQLITE_ROW)
    json_array_append_new(
        arr, json_pack("{s:I,s:s,s:s}", "t_ms", (json_int_t)sqlite3_column_int64(st, 0), "kind",
                       sw_store_col_text(st, 1), "text", sw_store_col_text(st, 2)));
  sqlite3_reset(st);
  return rc == SQLITE_DONE ? 0 : sw_store_fail(s, err, "reading events");
}

json_t *sw_report_json(sw_store_t *s, int64_t sweep_id, struct sw_err *err) {
  static const char *const SQL =
      "SELECT id, name, kind, status, priority, created_ms, finished_ms, spec_sha256, spec_json "
      "FROM sweeps WHERE ?1 = 0 OR id = ?1 ORDER BY id";
  sqlite3_stmt *st;
  if (sw_store_stmt(s, SQL, &st, err)) return NULL;
  sqlite3_bind_int64(st, 1, sweep_id);
  json_t *root = json_object(), *sweeps = json_array(), *specs = json_array();
  json_object_set_new(root, "sweeps", sweeps);
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    json_t *o = json_object();
    json_object_set_new(o, "id", json_integer(sqlite3_column_int64(st, 0)));
    json_object_set_new(o, "name", json_string(sw_store_col_text(st, 1)));
    json_object_set_new(o, "kind", json_string(sw_store_col_text(st, 2)));
    json_object_set_new(o, "status", json_string(sw_store_col_text(st, 3)));
    json_object_set_new(o, "priority", json_integer(sqlite3_column_int(st, 4)));
    json_object_set_new(o, "created_ms", json_integer(sqlite3_column_int64(st, 5)));
    json_object_set_new(o, "finished_ms", sw_store_col_num(st, 6));
    json_object_set_new(o, "spec_sha256", json_string(sw_store_col_text(st, 7)));
    json_t *spec = json_loads(sw_store_col_text(st, 8), 0, NULL);
    json_array_append_new(specs, spec ? spec : json_object());
    json_array_append_new(sweeps, o);
  }
  sqlite3_reset(st);
  if (rc != SQLITE_DONE) {
    sw_store_fail(s, err, "reading sweeps");
    goto fail;
  }
  if (sweep_id && json_array_size(sweeps) == 0) {
    sw_err_set(err, SW_ENOTFOUND, "no sweep %lld in %s", (long long)sweep_id, sw_store_path(s));
    goto fail;
  }
  size_t i;
  json_t *o;
  json_array_foreach(sweeps, i, o) {
    int64_t id = json_integer_value(json_object_get(o, "id"));
    int grid = strcmp(json_string_value(json_object_get(o, "kind")), "grid") == 0;
    json_t *arr = json_array();
    json_object_set_new(o, grid ? "points" : "gates", arr);
    json_object_set_new(o, "contamination", contamination_limits(json_array_get(specs, i)));
    if (grid) {
      if (pairs_of(s, 0, id, arr, err)) goto fail;
      /* The grid's Pareto data (sw_pareto.h owns the front): the report's front chart. */
      struct sw_pareto_opts po = {.sweep_id = id};
      struct sw_err perr = {0};
      json_t *pareto = sw_pareto_json(s, &po, &perr);
      if (!pareto && perr.code == SW_EDB) {
        *err = perr;
        goto fail;
      }
      json_object_set_new(o, "pareto", pareto ? pareto : json_null());
    } else if (gates_of(s, id, json_array_get(specs, i), arr, err)) {
      goto fail;
    }
    if (events_of(s, id, o, err)) goto fail;
    json_t *arts = sw_report_artifacts_json(s, id, err);
    if (!arts) goto fail;
    json_object_set_new(o, "artifacts", arts);
  }
  json_decref(specs);
  return root;
fail:
  json_decref(specs);
  json_decref(root);
  return NULL;
}

json_t *sw_report_artifacts_json(sw_store_t *store, int64_t sweep_id, struct sw_err *err) {
  static const char *const SQL =
      "SELECT a.run_id, a.attempt, r.arm, p.idx, a.worker_id, ar.name, ar.size, ar.sha256, "
      "ar.state, ar.reason FROM artifacts ar JOIN attempts a ON a.id = ar.attempt_id JOIN runs r "
      "ON r.id = a.run_id JOIN pairs p ON p.id = r.pair_id WHERE p.sweep_id = ?1 ORDER BY "
      "a.run_id, a.attempt, ar.name";
  sqlite3_stmt *st;
  if (sw_store_stmt(store, SQL, &st, err)) return NULL;
  sqlite3_bind_int64(st, 1, sweep_id);
  json_t *arr = json_array();
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    const char *name = (const char *)sqlite3_column_text(st, 5);
    const char *state = (const char *)sqlite3_column_text(st, 8);
    json_t *o = json_pack(
        "{s:I,s:i,s:s,s:i,s:s?,s:s,s:I,s:s,s:s}", "run", (json_int_t)sqlite3_column_int64(st, 0),
        "attempt", sqlite3_column_int(st, 1), "arm", (const char *)sqlite3_column_text(st, 2),
        "pair", sqlite3_column_int(st, 3), "worker", (const char *)sqlite3_column_text(st, 4),
        "name", name, "size", (json_int_t)sqlite3_column_int64(st, 6), "sha256",
        (const char *)sqlite3_column_text(st, 7), "state", state);
    json_object_set_new(o, "reason",
                        sqlite3_column_type(st, 9) == SQLITE_NULL
                            ? json_null()
                            : json_string((const char *)sqlite3_column_text(st, 9)));
    if (!strcmp(state, "stored")) {
      char url[300];
      snprintf(url, sizeof url, "/artifact/%lld/%d/%s", (long long)sqlite3_column_int64(st, 0),
               sqlite3_column_int(st, 1), name);
      json_object_set_new(o, "url", json_string(url));
    } else {
      json_object_set_new(o, "url", json_null());
    }
    json_array_append_new(arr, o);
  }
  sqlite3_reset(st);
  if (rc != SQLITE_DONE) {
    sw_store_fail(store, err, "listing artifacts");
    json_decref(arr);
    return NULL;
  }
  return arr;
}

/* ---- text and Markdown -------------------------------------------------------------------- */

static void fmt_num(char *buf, size_t len, double v, int digits) {
  if (isnan(v))
    snprintf(buf, len, "-");
  else
    snprintf(buf, len, "%.*f", digits, v);
}

static double run_metric(const json_t *run, const char *metric) {
  return sw_json_num(json_object_get(run, "metrics"), metric);
}

/* One-word flags of a run: contaminated / invalid / failed ... */
static const char *run_flag(const json_t *run) {
  const char *st = sw_json_str(json_object_get(run, "status"), "pending");
  return strcmp(st, "ok") == 0 ? "" : st;
}

/* " model size (ARM)" when the gate engine's model-size check flagged that run of the pair with
 * store index idx (its verdict JSON's model_size.flagged, docs/gate-rules.md section 3), else "".
 */
static const char *size_flag(const json_t *g, json_int_t idx, const char *arm) {
  size_t k;
  const json_t *f;
  json_array_foreach(json_object_get(json_object_get(g, "model_size"), "flagged"), k, f) {
    const json_t *pi = json_object_get(f, "pair_index");
    if (json_is_integer(pi) && json_integer_value(pi) == idx &&
        strcmp(sw_json_str(json_object_get(f, "arm"), ""), arm) == 0)
      return strcmp(arm, "on") == 0 ? " model size (on)" : " model size (off)";
  }
  return "";
}

static void print_gate(FILE *out, const json_t *g, int md) {
  const char *verdict = sw_json_str(json_object_get(g, "verdict"), "inconclusive");
  const char *metric = sw_json_str(json_object_get(g, "metric"), "train_s"),
             *gm = sw_json_str(json_object_get(g, "guard_metric"), "psnr_db");
  char d[32], t[32];
  fmt_num(d, sizeof d, 100 * sw_json_num(g, "delta"), 2);
  fmt_num(t, sizeof t, 100 * sw_json_num(g, "threshold"), 2);
  if (md)
    fprintf(out, "### Gate `%s`: **%s**%s\n\n", sw_json_str(json_object_get(g, "name"), "?"),
            verdict, json_is_true(json_object_get(g, "final")) ? "" : " (not final)");
  else
    fprintf(out, "  gate %s: %s%s (%s)\n", sw_json_str(json_object_get(g, "name"), "?"), verdict,
            json_is_true(json_object_get(g, "final")) ? "" : " (not final)",
            sw_json_str(json_object_get(g, "status"), ""));
  const json_t *inc = json_object_get(g, "incomplete");
  if (json_is_object(inc))
    fprintf(out,
            md ? "**Incomplete: %lld of %lld planned pairs usable.**\n\n"
               : "    incomplete: %lld of %lld planned pairs usable\n",
            (long long)sw_json_num(inc, "usable"), (long long)sw_json_num(inc, "planned"));
  const json_t *guard = json_object_get(g, "guard");
  char go[32], gn[32];
  fmt_num(go, sizeof go, sw_json_num(guard, "off_mean"), 3);
  fmt_num(gn, sizeof gn, sw_json_num(guard, "on_mean"), 3);
  const char *gpass = !json_is_object(guard) || !json_is_true(json_object_get(guard, "evaluated"))
                          ? "not evaluated"
                      : json_is_true(json_object_get(guard, "pass")) ? "pass"
                                                                     : "FAIL";
  if (md)
    fprintf(out, "- %s delta **%s%%**, threshold %s%%\n- guard %s: off %s, on %s (%s)\n", metric, d,
            t, gm, go, gn, gpass);
  else
    fprintf(out, "    %s delta %s%%  threshold %s%%  guard %s: off %s on %s (%s)\n", metric, d, t,
            gm, go, gn, gpass);
  size_t i;
  const json_t *r;
  if (!md) fprintf(out, "    reasons:\n");
  json_array_foreach(json_object_get(g, "reasons"), i, r)
      fprintf(out, md ? "- %s\n" : "      - %s\n", json_string_value(r));
  json_array_foreach(json_object_get(g, "warnings"), i, r)
      fprintf(out, md ? "- warning: %s\n" : "      ! %s\n", json_string_value(r));
  const json_t *pairs = json_object_get(g, "pairs");
  if (md)
    fprintf(out,
            "\n| pair | worker | order | off %s | on %s | off %s | on %s | status | flags |\n"
            "| ---: | --- | --- | ---: | ---: | ---: | ---: | --- | --- |\n",
            metric, metric, gm, gm);
  else
    fprintf(out, "    %-5s %-14s %-7s %12s %12s %10s %10s  %-9s %s\n", "pair", "worker", "order",
            "off", "on", "off guard", "on guard", "status", "flags");
  const json_t *p;
  json_array_foreach(pairs, i, p) {
    const json_t *off = json_object_get(p, "off"), *on = json_object_get(p, "on");
    char a[32], b[32], c[32], e[32], idx[32], flags[96];
    fmt_num(a, sizeof a, run_metric(off, metric), 3);
    fmt_num(b, sizeof b, run_metric(on, metric), 3);
    fmt_num(c, sizeof c, run_metric(off, gm), 3);
    fmt_num(e, sizeof e, run_metric(on, gm), 3);
    snprintf(idx, sizeof idx, "%lld", (long long)json_integer_value(json_object_get(p, "index")));
    flags[0] = 0;
    if (json_is_true(json_object_get(p, "is_replacement")))
      snprintf(flags, sizeof flags, "replaces %lld ",
               (long long)json_integer_value(json_object_get(p, "replaces")));
    size_t used = strlen(flags);
    snprintf(flags + used, sizeof flags - used, "%s%s%s%s", run_flag(off),
             *run_flag(off) ? "(off) " : "", run_flag(on), *run_flag(on) ? "(on)" : "");
    used = strlen(flags);
    json_int_t pi = json_integer_value(json_object_get(p, "index"));
    snprintf(flags + used, sizeof flags - used, "%s%s", size_flag(g, pi, "off"),
             size_flag(g, pi, "on"));
    used = strlen(flags);
    if (json_array_size(json_object_get(p, "earlier_attempts")))
      snprintf(flags + used, sizeof flags - used, " attempt %lld",
               (long long)json_integer_value(json_object_get(p, "attempt")));
    if (md)
      fprintf(out, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", idx,
              sw_json_str(json_object_get(p, "worker"), "-"),
              sw_json_str(json_object_get(p, "order"), ""), a, b, c, e,
              sw_json_str(json_object_get(p, "status"), ""), flags);
    else
      fprintf(out, "    %-5s %-14s %-7s %12s %12s %10s %10s  %-9s %s\n", idx,
              sw_json_str(json_object_get(p, "worker"), "-"),
              sw_json_str(json_object_get(p, "order"), ""), a, b, c, e,
              sw_json_str(json_object_get(p, "status"), ""), flags);
  }
  fputs("\n", out);
}

static void print_points(FILE *out, const json_t *points, int md) {
  if (md)
    fputs("| # | point | repeat | worker | status | train_s | wall_s | psnr_db | iterations |\n"
          "| ---: | --- | ---: | --- | --- | ---: | ---: | ---: | ---: |\n",
          out);
  else
    fprintf(out, "  %-4s %-40s %-3s %-14s %-9s %10s %10s %8s %8s\n", "#", "point", "rep", "worker",
            "status", "train_s", "wall_s", "psnr_db", "iters");
  size_t i;
  const json_t *p;
  json_array_foreach(points, i, p) {
    const json_t *run = json_object_get(p, "run");
    char a[32], b[32], c[32], d[32];
    fmt_num(a, sizeof a, run_metric(run, "train_s"), 3);
    fmt_num(b, sizeof b, run_metric(run, "wall_s"), 3);
    fmt_num(c, sizeof c, run_metric(run, "psnr_db"), 3);
    fmt_num(d, sizeof d, run_metric(run, "iterations"), 0);
    long long idx = (long long)json_integer_value(json_object_get(p, "index"));
    long long rep = (long long)json_integer_value(json_object_get(p, "repeat"));
    const char *status =
        sw_json_str(json_object_get(run, "status"), sw_json_str(json_object_get(p, "status"), ""));
    if (md)
      fprintf(out, "| %lld | `%s` | %lld | %s | %s | %s | %s | %s | %s |\n", idx,
              sw_json_str(json_object_get(p, "label"), ""), rep,
              sw_json_str(json_object_get(p, "worker"), "-"), status, a, b, c, d);
    else
      fprintf(out, "  %-4lld %-40s %-3lld %-14s %-9s %10s %10s %8s %8s\n", idx,
              sw_json_str(json_object_get(p, "label"), ""), rep,
              sw_json_str(json_object_get(p, "worker"), "-"), status, a, b, c, d);
  }
  fputs("\n", out);
}

/* The runs' artifacts in one line: how many are stored (and their bytes), how many are not, and
 * where the list is (the dashboard serves each file with its sha256). */
static void print_artifacts(FILE *out, const json_t *sw, int md) {
  const json_t *arts = json_object_get(sw, "artifacts");
  if (json_array_size(arts) == 0) return;
  size_t i, stored = 0, other = 0;
  double bytes = 0;
  const json_t *a;
  json_array_foreach(arts, i, a) {
    if (!strcmp(sw_json_str(json_object_get(a, "state"), ""), "stored")) {
      stored++;
      bytes += sw_json_num(a, "size");
    } else {
      other++;
    }
  }
  fprintf(out,
          "%sartifacts: %zu stored (%.1f MiB), %zu not stored (pending, refused or deleted); "
          "each at /artifact/RUN/ATTEMPT/NAME of the dashboard, listed at /api/artifacts/%lld%s\n",
          md ? "\n" : "  ", stored, bytes / 1048576.0, other, (long long)sw_json_num(sw, "id"),
          md ? "\n" : "");
}

static void render_text(FILE *out, const json_t *root, int md) {
  size_t i;
  const json_t *sw;
  if (md) fputs("# splatsweep report\n\n", out);
  if (json_array_size(json_object_get(root, "sweeps")) == 0) fputs("no sweeps\n", out);
  json_array_foreach(json_object_get(root, "sweeps"), i, sw) {
    if (md)
      fprintf(out, "## Sweep %lld `%s` (%s, %s)\n\n", (long long)sw_json_num(sw, "id"),
              sw_json_str(json_object_get(sw, "name"), ""),
              sw_json_str(json_object_get(sw, "kind"), ""),
              sw_json_str(json_object_get(sw, "status"), ""));
    else
      fprintf(out, "sweep %lld %s (%s, %s)\n", (long long)sw_json_num(sw, "id"),
              sw_json_str(json_object_get(sw, "name"), ""),
              sw_json_str(json_object_get(sw, "kind"), ""),
              sw_json_str(json_object_get(sw, "status"), ""));
    size_t j;
    const json_t *g;
    json_array_foreach(json_object_get(sw, "gates"), j, g) print_gate(out, g, md);
    if (json_object_get(sw, "points")) print_points(out, json_object_get(sw, "points"), md);
    print_artifacts(out, sw, md);
  }
}

/* ---- HTML ----------------------------------------------------------------------------------- */

/* The page: per sweep a heading, per gate the verdict, reasons and warnings, a row of charts
 * (drawn in the browser by sw_charts.js from the embedded report JSON, each with a caption) and
 * the pair table; per grid the charts and the point table. The frame (style, Chart.js) is
 * sw_html's, shared with the Pareto page and the dashboard. */
static int render_html(FILE *out, const json_t *root, struct sw_err *err) {
  sw_html_begin(out, "splatsweep report");
  fputs("<h1>splatsweep report</h1>\n", out);
  size_t i;
  const json_t *sw;
  json_array_foreach(json_object_get(root, "sweeps"), i, sw) {
    long long id = (long long)sw_json_num(sw, "id");
    fprintf(out, "<h2>Sweep %lld: ", id);
    sw_html_escape(out, sw_json_str(json_object_get(sw, "name"), ""));
    fprintf(out, " (%s, %s)</h2>\n", sw_json_str(json_object_get(sw, "kind"), ""),
            sw_json_str(json_object_get(sw, "status"), ""));
    size_t j;
    const json_t *g;
    json_array_foreach(json_object_get(sw, "gates"), j, g) {
      const char *v = sw_json_str(json_object_get(g, "verdict"), "inconclusive");
      fputs("<h3>Gate ", out);
      sw_html_escape(out, sw_json_str(json_object_get(g, "name"), ""));
      fprintf(out, ": <span class=\"%s\">%s</span>%s</h3>\n<ul>\n", v, v,
              json_is_true(json_object_get(g, "final")) ? "" : " (not final)");
      size_t k;
      const json_t *r;
      json_array_foreach(json_object_get(g, "reasons"), k, r) {
        fputs("<li>", out);
        sw_html_escape(out, json_string_value(r));
        fputs("</li>\n", out);
      }
      json_array_foreach(json_object_get(g, "warnings"), k, r) {
        fputs("<li class=\"warn\">", out);
        sw_html_escape(out, json_string_value(r));
        fputs("</li>\n", out);
      }
      const char *metric = sw_json_str(json_object_get(g, "metric"), "train_s"),
                 *gm = sw_json_str(json_object_get(g, "guard_metric"), "psnr_db");
      fprintf(out,
              "</ul>\n<div class=\"charts\" id=\"charts-%lld-%zu\"></div>\n<table><tr>"
              "<th>pair</th><th class=\"l\">worker</th><th class=\"l\">order</th><th>off %s</th>"
              "<th>on %s</th><th>delta %%</th><th>off %s</th><th>on %s</th>"
              "<th class=\"l\">status</th><th class=\"l\">flags</th></tr>\n",
              id, j, metric, metric, gm, gm);
      const json_t *p;
      json_array_foreach(json_object_get(g, "pairs"), k, p) {
        const json_t *off = json_object_get(p, "off"), *on = json_object_get(p, "on");
        char a[32], b[32], c[32], e[32], d[32];
        fmt_num(a, sizeof a, run_metric(off, metric), 3);
        fmt_num(b, sizeof b, run_metric(on, metric), 3);
        fmt_num(c, sizeof c, run_metric(off, gm), 3);
        fmt_num(e, sizeof e, run_metric(on, gm), 3);
        fmt_num(d, sizeof d, sw_json_num(p, "delta_pct"), 2);
        fprintf(out, "<tr><td>%lld</td><td class=\"l\">",
                (long long)json_integer_value(json_object_get(p, "index")));
        sw_html_escape(out, sw_json_str(json_object_get(p, "worker"), "-"));
        fprintf(out,
                "</td><td class=\"l\">%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td>"
                "<td>%s</td><td class=\"l\">%s</td><td class=\"l\">%s %s%s%s%s</td></tr>\n",
                sw_json_str(json_object_get(p, "order"), ""), a, b, d, c, e,
                sw_json_str(json_object_get(p, "status"), ""), run_flag(off), run_flag(on),
                json_is_true(json_object_get(p, "is_replacement")) ? " replacement" : "",
                size_flag(g, json_integer_value(json_object_get(p, "index")), "off"),
                size_flag(g, json_integer_value(json_object_get(p, "index")), "on"));
      }
      fputs("</table>\n", out);
    }
    const json_t *points = json_object_get(sw, "points");
    if (points) {
      fprintf(out,
              "<div class=\"charts\" id=\"charts-%lld-grid\"></div>\n<table><tr><th>#</th>"
              "<th class=\"l\">point</th><th>repeat</th><th class=\"l\">worker</th>"
              "<th class=\"l\">status</th><th>train_s</th><th>wall_s</th><th>psnr_db</th></tr>\n",
              id);
      const json_t *p;
      json_array_foreach(points, j, p) {
        const json_t *run = json_object_get(p, "run");
        char a[32], b[32], c[32];
        fmt_num(a, sizeof a, run_metric(run, "train_s"), 3);
        fmt_num(b, sizeof b, run_metric(run, "wall_s"), 3);
        fmt_num(c, sizeof c, run_metric(run, "psnr_db"), 3);
        fprintf(out, "<tr><td>%lld</td><td class=\"l\">",
                (long long)json_integer_value(json_object_get(p, "index")));
        sw_html_escape(out, sw_json_str(json_object_get(p, "label"), ""));
        fprintf(out, "</td><td>%lld</td><td class=\"l\">",
                (long long)json_integer_value(json_object_get(p, "repeat")));
        sw_html_escape(out, sw_json_str(json_object_get(p, "worker"), "-"));
        fprintf(out, "</td><td class=\"l\">%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n",
                sw_json_str(json_object_get(run, "status"),
                            sw_json_str(json_object_get(p, "status"), "")),
                a, b, c);
      }
      fputs("</table>\n", out);
    }
    const json_t *arts = json_object_get(sw, "artifacts");
    if (json_array_size(arts) > 0) {
      fputs("<h3>Artifacts</h3>\n<p class=\"muted\">Served by the coordinator's dashboard, each "
            "with its sha256 (the links work on the dashboard).</p>\n<table><tr><th>run</th>"
            "<th>attempt</th><th class=\"l\">arm</th><th>pair</th><th class=\"l\">name</th>"
            "<th>bytes</th><th class=\"l\">sha256</th><th class=\"l\">state</th></tr>\n",
            out);
      const json_t *a;
      json_array_foreach(arts, j, a) {
        fprintf(out, "<tr><td>%lld</td><td>%lld</td><td class=\"l\">",
                (long long)sw_json_num(a, "run"), (long long)sw_json_num(a, "attempt"));
        sw_html_escape(out, sw_json_str(json_object_get(a, "arm"), ""));
        fprintf(out, "</td><td>%lld</td><td class=\"l\">", (long long)sw_json_num(a, "pair"));
        const char *url = sw_json_str(json_object_get(a, "url"), NULL);
        if (url) {
          fputs("<a href=\"", out);
          sw_html_escape(out, url);
          fputs("\">", out);
        }
        sw_html_escape(out, sw_json_str(json_object_get(a, "name"), ""));
        if (url) fputs("</a>", out);
        fprintf(out, "</td><td>%lld</td><td class=\"l\">", (long long)sw_json_num(a, "size"));
        sw_html_escape(out, sw_json_str(json_object_get(a, "sha256"), ""));
        fputs("</td><td class=\"l\">", out);
        sw_html_escape(out, sw_json_str(json_object_get(a, "state"), ""));
        if (json_is_string(json_object_get(a, "reason"))) {
          fputs(": ", out);
          sw_html_escape(out, sw_json_str(json_object_get(a, "reason"), ""));
        }
        fputs("</td></tr>\n", out);
      }
      fputs("</table>\n", out);
    }
  }
  fputs("<p class=\"muted\">Charts drawn by Chart.js ", out);
  fputs(sw_html_chartjs_version(), out);
  fputs(" (MIT licence), embedded in splatsweep.</p>\n", out);
  int rc = sw_html_data(out, "report-data", root, err);
  if (rc) return rc;
  sw_html_inline(out, "swCharts.report(JSON.parse(document.getElementById('report-data')."
                      "textContent));");
  sw_html_end(out);
  return 0;
}

int sw_report_render(sw_store_t *store, int64_t sweep_id, enum sw_report_format format, FILE *out,
                     struct sw_err *err) {
  json_t *root = sw_report_json(store, sweep_id, err);
  if (!root) return err && err->code ? err->code : SW_EDB;
  int rc = 0;
  switch (format) {
  case SW_REPORT_JSON:
    if (json_dumpf(root, out, JSON_INDENT(2)) != 0) rc = SW_EIO;
    fputc('\n', out);
    break;
  case SW_REPORT_TEXT: render_text(out, root, 0); break;
  case SW_REPORT_MD: render_text(out, root, 1); break;
  case SW_REPORT_HTML: rc = render_html(out, root, err); break;
  default: rc = sw_err_set(err, SW_EINVAL, "unknown report format %d", (int)format);
  }
  json_decref(root);
  if (!rc && (fflush(out) != 0 || ferror(out))) rc = SW_EIO;
  if (rc == SW_EIO) sw_err_set(err, SW_EIO, "writing the report failed");
  return rc;
}

int sw_report_render_string(sw_store_t *store, int64_t sweep_id, enum sw_report_format format,
                            char **text_out, struct sw_err *err) {
  *text_out = NULL;
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) return sw_err_set(err, SW_ENOMEM, "report: out of memory");
  int rc = sw_report_render(store, sweep_id, format, f, err);
  if (fclose(f) != 0 && !rc) rc = sw_err_set(err, SW_ENOMEM, "report: out of memory");
  if (rc) {
    free(buf);
    return rc;
  }
  *text_out = buf;
  return 0;
}
