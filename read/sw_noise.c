/* sw_noise.c: per-machine noise from the store's finished gates (sw_noise.h). */
#include "sw_noise.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "sw_gate.h"
#include "sw_json.h"

struct machine {
  char *name;
  struct sw_gate_noise_obs obs[SW_NOISE_GATES];
  int n; /* newest last; only the last SW_NOISE_GATES kept */
};

static struct machine *machine_of(struct machine **ms, int *n, int *cap, const char *name) {
  for (int i = 0; i < *n; i++)
    if (!strcmp((*ms)[i].name, name)) return &(*ms)[i];
  if (*n == *cap) {
    int nc = *cap ? *cap * 2 : 8;
    struct machine *g = realloc(*ms, (size_t)nc * sizeof *g);
    if (!g) return NULL;
    *ms = g;
    *cap = nc;
  }
  struct machine *m = &(*ms)[*n];
  memset(m, 0, sizeof *m);
  if (!(m->name = strdup(name))) return NULL;
  (*n)++;
  return m;
}

static void add_obs(struct machine *m, double cv, int df) {
  if (m->n == SW_NOISE_GATES) {
    memmove(m->obs, m->obs + 1, (SW_NOISE_GATES - 1) * sizeof *m->obs);
    m->n--;
  }
  m->obs[m->n++] = (struct sw_gate_noise_obs){cv, df};
}

json_t *sw_noise_json(sw_store_t *store, const char *metric, struct sw_err *err) {
  /* The off runs of finished gates on the metric, with their machine, grouped by gate and
   * machine in the order the gates finished; the metric columns answer the usual metrics. */
  static const char *const SQL =
      "SELECT g.id, COALESCE(json_extract(w.fingerprint_json, '$.machine_id'), a.worker_id), "
      "CASE ?1 WHEN 'train_s' THEN a.train_s WHEN 'wall_s' THEN a.wall_s WHEN 'psnr_db' THEN "
      "a.psnr_db ELSE json_extract(a.result_json, '$.metrics.' || ?1) END "
      "FROM gates g JOIN pairs p ON p.gate_id = g.id JOIN runs r ON r.pair_id = p.id AND r.arm = "
      "'off' JOIN attempts a ON a.run_id = r.id AND a.attempt = p.attempt AND a.status = 'ok' "
      "LEFT JOIN workers w ON w.id = a.worker_id WHERE g.status = 'done' AND g.metric = ?1 "
      "ORDER BY g.finished_ms, g.id, 2";
  sqlite3_stmt *st;
  int rc = sw_store_stmt(store, SQL, &st, err);
  if (rc) return NULL;
  sqlite3_bind_text(st, 1, metric, -1, SQLITE_TRANSIENT);
  struct machine *ms = NULL;
  int n_ms = 0, cap = 0;
  int64_t gate = -1;
  char cur[256] = "";
  double sum = 0, sum2 = 0;
  int k = 0;
  int oom = 0;
  for (;;) {
    rc = sqlite3_step(st);
    int row = rc == SQLITE_ROW;
    int64_t g = row ? sqlite3_column_int64(st, 0) : -2;
    const char *name =
        row && sqlite3_column_text(st, 1) ? (const char *)sqlite3_column_text(st, 1) : "";
    if (!row || g != gate || strcmp(name, cur) != 0) {
      if (k >= 2) { /* close the (gate, machine) group: within-machine CV of its off runs */
        double mean = sum / k, var = (sum2 - k * mean * mean) / (k - 1);
        struct machine *m = machine_of(&ms, &n_ms, &cap, cur);
        if (!m) oom = 1;
        if (m && mean > 0 && var >= 0) add_obs(m, sqrt(var) / mean, k - 1);
      }
      gate = g;
      snprintf(cur, sizeof cur, "%s", name);
      sum = sum2 = 0;
      k = 0;
    }
    if (!row) break;
    if (sqlite3_column_type(st, 2) != SQLITE_NULL) {
      double v = sqlite3_column_double(st, 2);
      if (isfinite(v) && v > 0) {
        sum += v;
        sum2 += v * v;
        k++;
      }
    }
  }
  sqlite3_reset(st);
  json_t *out = NULL;
  if (rc != SQLITE_DONE) {
    sw_store_fail(store, err, "reading the machines' noise");
    goto done;
  }
  if (oom) {
    sw_err_set(err, SW_ENOMEM, "noise: out of memory");
    goto done;
  }
  out = json_pack("{s:s}", "metric", metric);
  json_t *arr = json_array(), *jumped = json_array();
  double ss = 0;
  int n_plan = 0;
  for (int i = 0; i < n_ms; i++) {
    struct sw_gate_noise nz;
    struct sw_err e2 = {0};
    if (sw_gate_noise_assess(ms[i].obs, (size_t)ms[i].n, 0.01, &nz, &e2)) continue;
    json_t *o = json_pack("{s:s,s:i}", "machine", ms[i].name, "gates", nz.n_obs);
    json_object_set_new(o, "cv_recent", sw_json_real_or_null(nz.cv_recent));
    json_object_set_new(o, "cv_history", sw_json_real_or_null(nz.cv_history));
    json_object_set_new(o, "ratio", sw_json_real_or_null(nz.ratio));
    json_object_set_new(o, "p", sw_json_real_or_null(nz.p));
    json_object_set_new(o, "jumped", json_boolean(nz.jumped));
    json_object_set_new(o, "cv_plan", sw_json_real_or_null(nz.cv_plan));
    json_array_append_new(arr, o);
    if (nz.jumped) json_array_append_new(jumped, json_string(ms[i].name));
    if (isfinite(nz.cv_plan)) {
      ss += nz.cv_plan * nz.cv_plan;
      n_plan++;
    }
  }
  json_object_set_new(out, "machines", arr);
  json_object_set_new(out, "jumped", jumped);
  json_object_set_new(out, "cv_plan", n_plan ? json_real(sqrt(ss / n_plan)) : json_null());
done:
  for (int i = 0; i < n_ms; i++) free(ms[i].name);
  free(ms);
  return out;
}
