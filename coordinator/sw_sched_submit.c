/* sw_sched_submit.c: a loaded spec (common/sw_spec.h) into the rows of its series (DESIGN.md
 * sections 5 and 9): a gate and its first pairs, or the grid's points (the spec's own expansion)
 * with one single-run pair each; and the gate pairs added later (replacements, sequential
 * extension). Inside the caller's transaction. It calls down only, into sw_sched_mem.c and the
 * store; run configs are the spec's resolved arms and points, so what runs is what `check`
 * and `local` see. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sw_sched_int.h"
#include "sw_sha256.h"

static int insert_run(sw_sched_t *s, int64_t pair_id, const char *arm, int position,
                      const struct sw_spec_config *config, struct sw_err *err) {
  static const char *const SQL = "INSERT INTO runs (pair_id, arm, position, config_json, "
                                 "config_sha256) VALUES (?1, ?2, ?3, ?4, ?5)";
  json_t *cfg = sw_spec_config_to_json(config);
  char *text = cfg ? json_dumps(cfg, JSON_COMPACT) : NULL;
  /* The hash is over the key-sorted form so that two specs listing the same keys in another
   * order give the same config identity. */
  char *canon = cfg ? json_dumps(cfg, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
  json_decref(cfg);
  if (!text || !canon) {
    free(text);
    free(canon);
    return sw_err_set(err, SW_ENOMEM, "serialising run config: out of memory");
  }
  char hex[SW_SHA256_HEX_LEN];
  sw_sha256_buf(canon, strlen(canon), hex);
  free(canon);
  sqlite3_stmt *st;
  int rc = sw_store_stmt(s->store, SQL, &st, err);
  if (!rc) {
    sqlite3_bind_int64(st, 1, pair_id);
    sqlite3_bind_text(st, 2, arm, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 3, position);
    sqlite3_bind_text(st, 4, text, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 5, hex, -1, SQLITE_STATIC);
    if (sqlite3_step(st) != SQLITE_DONE) rc = sw_store_fail(s->store, err, "inserting run");
    sqlite3_reset(st);
  }
  free(text);
  return rc;
}

static int insert_pair(sw_sched_t *s, int64_t sweep_id, int64_t gate_id, int64_t point_id, int idx,
                       const char *order, int replaces, int64_t now, int64_t *pair_id,
                       struct sw_err *err) {
  static const char *const SQL =
      "INSERT INTO pairs (sweep_id, gate_id, point_id, idx, ord, replaces, is_replacement, "
      "created_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)";
  sqlite3_stmt *st;
  int rc = sw_store_stmt(s->store, SQL, &st, err);
  if (rc) return rc;
  sqlite3_bind_int64(st, 1, sweep_id);
  if (gate_id > 0)
    sqlite3_bind_int64(st, 2, gate_id);
  else
    sqlite3_bind_null(st, 2);
  if (point_id > 0)
    sqlite3_bind_int64(st, 3, point_id);
  else
    sqlite3_bind_null(st, 3);
  sqlite3_bind_int(st, 4, idx);
  sqlite3_bind_text(st, 5, order, -1, SQLITE_STATIC);
  if (replaces >= 0)
    sqlite3_bind_int(st, 6, replaces);
  else
    sqlite3_bind_null(st, 6);
  sqlite3_bind_int(st, 7, replaces >= 0);
  sqlite3_bind_int64(st, 8, now);
  rc = sqlite3_step(st);
  sqlite3_reset(st);
  if (rc != SQLITE_DONE) return sw_store_fail(s->store, err, "inserting pair");
  *pair_id = sqlite3_last_insert_rowid(sw_store_db(s->store));
  return 0;
}

int sched_insert_gate_pair(sw_sched_t *s, int64_t sweep_id, int64_t gate_id, int idx,
                           const char *order, int replaces, int64_t now, struct sw_err *err) {
  struct sweep_mem *sw = sched_sweep(s, sweep_id);
  if (!sw) return sw_err_set(err, SW_ESTATE, "sweep %lld is not active", (long long)sweep_id);
  int64_t pair_id = 0;
  int rc = insert_pair(s, sweep_id, gate_id, 0, idx, order, replaces, now, &pair_id, err);
  if (rc) return rc;
  int on_first = strcmp(order, "on-off") == 0;
  const char *names[2] = {on_first ? "on" : "off", on_first ? "off" : "on"};
  for (int pos = 0; pos < 2 && !rc; pos++) {
    struct sw_spec_config cfg;
    if ((rc = sw_spec_resolve_arm(sw->spec, names[pos], &cfg, err))) break;
    rc = insert_run(s, pair_id, names[pos], pos, &cfg, err);
    sw_spec_config_clear(&cfg);
  }
  return rc;
}

/* Deterministic 64-bit mix (splitmix64), so `order: random` is reproducible from the seed. */
static uint64_t mix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

const char *sched_pair_order(const struct sweep_mem *sw, int idx) {
  const struct sw_spec_pairs *p = &sw->spec->pairs;
  if (p->order == SW_ORDER_FIXED) return "off-on";
  if (p->order == SW_ORDER_RANDOM)
    return (mix64(p->seed ^ mix64((uint64_t)idx)) & 1) ? "on-off" : "off-on";
  return (idx % 2 == 0) ? "off-on" : "on-off";
}

static int submit_gate(sw_sched_t *s, const struct sweep_mem *sw, const char *name, int64_t now,
                       struct sw_err *err) {
  /* pairs.n, pairs.max and the metric were checked by the spec loader, the one owner of those
   * rules (SW_SPEC_PAIRS_MAX, SW_SPEC_METRIC_MAX). */
  const struct sw_spec *spec = sw->spec;
  static const char *const SQL = "INSERT INTO gates (sweep_id, name, metric, n_target, n_max) "
                                 "VALUES (?1, ?2, ?3, ?4, ?5)";
  sqlite3_stmt *st;
  int rc = sw_store_stmt(s->store, SQL, &st, err);
  if (rc) return rc;
  sqlite3_bind_int64(st, 1, sw->id);
  sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 3, spec->gate.metric, -1, SQLITE_STATIC);
  sqlite3_bind_int64(st, 4, spec->pairs.n);
  sqlite3_bind_int64(st, 5, spec->pairs.max);
  rc = sqlite3_step(st);
  sqlite3_reset(st);
  if (rc != SQLITE_DONE) return sw_store_fail(s->store, err, "inserting gate");
  int64_t gate_id = sqlite3_last_insert_rowid(sw_store_db(s->store));
  for (int i = 0; i < (int)spec->pairs.n; i++) {
    if ((rc = sched_insert_gate_pair(s, sw->id, gate_id, i, sched_pair_order(sw, i), -1, now, err)))
      return rc;
  }
  return 0;
}

/* One grid point: its row (label and parameter values), its single-run pair and the run. */
static int insert_point(sw_sched_t *s, const struct sweep_mem *sw, const struct sw_spec_point *pt,
                        int64_t now, struct sw_err *err) {
  static const char *const SQL = "INSERT INTO grid_points (sweep_id, idx, label, params_json, "
                                 "repeat) VALUES (?1, ?2, ?3, ?4, ?5)";
  json_t *params = sw_spec_config_to_json(&pt->values);
  char *ptext = params ? json_dumps(params, JSON_COMPACT) : NULL;
  json_decref(params);
  struct sw_spec_config cfg;
  int rc = ptext ? sw_spec_resolve_point(sw->spec, pt, &cfg, err)
                 : sw_err_set(err, SW_ENOMEM, "expanding grid: out of memory");
  if (rc) {
    free(ptext);
    return rc;
  }
  sqlite3_stmt *st;
  if (!(rc = sw_store_stmt(s->store, SQL, &st, err))) {
    sqlite3_bind_int64(st, 1, sw->id);
    sqlite3_bind_int64(st, 2, (sqlite3_int64)pt->index);
    sqlite3_bind_text(st, 3, pt->label, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, ptext, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 5, pt->repeat);
    if (sqlite3_step(st) != SQLITE_DONE) rc = sw_store_fail(s->store, err, "inserting point");
    sqlite3_reset(st);
  }
  int64_t point_id = sqlite3_last_insert_rowid(sw_store_db(s->store)), pair_id = 0;
  if (!rc)
    rc = insert_pair(s, sw->id, 0, point_id, (int)pt->index, "single", -1, now, &pair_id, err);
  if (!rc) rc = insert_run(s, pair_id, pt->label, 0, &cfg, err);
  sw_spec_config_clear(&cfg);
  free(ptext);
  return rc;
}

static int submit_grid(sw_sched_t *s, const struct sweep_mem *sw, int64_t now, struct sw_err *err) {
  /* The spec's expansion (repeats outermost, last parameter fastest; a grid without parameters
   * runs the base config `repeats` times, an audit), within the loader's limits. */
  struct sw_spec_point *pts = NULL;
  size_t n = 0;
  int rc = sw_spec_grid_expand(sw->spec, &pts, &n, err);
  for (size_t i = 0; i < n && !rc; i++) rc = insert_point(s, sw, &pts[i], now, err);
  sw_spec_points_free(&pts, n);
  return rc;
}

int sched_series_insert(sw_sched_t *s, const struct sweep_mem *sw, const char *name, int64_t now,
                        struct sw_err *err) {
  return sw->is_grid ? submit_grid(s, sw, now, err) : submit_gate(s, sw, name, now, err);
}
