/* sw_sched_submit.c: turning a submitted spec into sweeps, gates, grid points, pairs and runs
 * (DESIGN.md sections 5 and 9), in one transaction. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sw_sched_int.h"
#include "sw_sha256.h"

json_t *sched_config_merge(const json_t *base, const json_t *overlay) {
  json_t *out = json_is_object(base) ? json_deep_copy(base) : json_object();
  if (!out) return NULL;
  if (json_is_object(overlay) && json_object_update(out, (json_t *)overlay)) {
    json_decref(out);
    return NULL;
  }
  return out;
}

int sched_insert_run(sw_sched_t *s, int64_t pair_id, const char *arm, int position,
                     const json_t *config, struct sw_err *err) {
  static const char *const SQL = "INSERT INTO runs (pair_id, arm, position, config_json, "
                                 "config_sha256) VALUES (?1, ?2, ?3, ?4, ?5)";
  char *text = json_dumps(config, JSON_COMPACT);
  /* The hash is over the key-sorted form so that two specs listing the same keys in another
   * order give the same config identity. */
  char *canon = json_dumps(config, JSON_COMPACT | JSON_SORT_KEYS);
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
  const json_t *base = json_object_get(sw->spec, "base");
  const json_t *arms = json_object_get(sw->spec, "arms");
  int on_first = strcmp(order, "on-off") == 0;
  const char *names[2] = {on_first ? "on" : "off", on_first ? "off" : "on"};
  for (int pos = 0; pos < 2 && !rc; pos++) {
    json_t *cfg = sched_config_merge(base, json_object_get(arms, names[pos]));
    if (!cfg) return sw_err_set(err, SW_ENOMEM, "building run config: out of memory");
    rc = sched_insert_run(s, pair_id, names[pos], pos, cfg, err);
    json_decref(cfg);
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
  if (strcmp(sw->order, "fixed") == 0) return "off-on";
  if (strcmp(sw->order, "random") == 0)
    return (mix64(sw->order_seed ^ mix64((uint64_t)idx)) & 1) ? "on-off" : "off-on";
  return (idx % 2 == 0) ? "off-on" : "on-off";
}

/* Reads an integer member with a default; SW_EINVAL when present but not an integer in range. */
static int get_int(const json_t *obj, const char *key, long long def, long long lo, long long hi,
                   long long *out, struct sw_err *err) {
  const json_t *v = obj ? json_object_get(obj, key) : NULL;
  if (!v || json_is_null(v)) {
    *out = def;
    return 0;
  }
  if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi)
    return sw_err_set(err, SW_EINVAL, "spec: %s must be an integer in [%lld, %lld]", key, lo, hi);
  *out = json_integer_value(v);
  return 0;
}

static int get_metric_name(const json_t *gate, const char *key, const char *def, char *out,
                           size_t len, struct sw_err *err) {
  const json_t *v = gate ? json_object_get(gate, key) : NULL;
  const char *name = v && json_is_string(v) ? json_string_value(v) : def;
  if (!name[0] || strlen(name) >= len)
    return sw_err_set(err, SW_EINVAL, "spec: gate %s must be a metric name", key);
  /* The name becomes part of a JSON path in queries: keep it to identifier characters. */
  for (const char *p = name; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
          *p == '_'))
      return sw_err_set(err, SW_EINVAL, "spec: gate %s '%s' is not a metric name", key, name);
  snprintf(out, len, "%s", name);
  return 0;
}

static int submit_gate(sw_sched_t *s, int64_t sweep_id, const json_t *spec, const char *name,
                       int64_t now, struct sw_err *err) {
  const json_t *arms = json_object_get(spec, "arms");
  if (!json_is_object(json_object_get(arms, "off")) || !json_is_object(json_object_get(arms, "on")))
    return sw_err_set(err, SW_EINVAL, "spec: a gate needs arms.off and arms.on objects");
  const json_t *pairs = json_object_get(spec, "pairs");
  long long n, max;
  int rc = get_int(pairs, "n", 5, 1, 10000, &n, err);
  if (!rc) rc = get_int(pairs, "max", n, n, 10000, &max, err);
  if (rc) return rc;
  char metric[64];
  if ((rc = get_metric_name(json_object_get(spec, "gate"), "metric", "train_s", metric,
                            sizeof metric, err)))
    return rc;
  static const char *const SQL = "INSERT INTO gates (sweep_id, name, metric, n_target, n_max) "
                                 "VALUES (?1, ?2, ?3, ?4, ?5)";
  sqlite3_stmt *st;
  if ((rc = sw_store_stmt(s->store, SQL, &st, err))) return rc;
  sqlite3_bind_int64(st, 1, sweep_id);
  sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 3, metric, -1, SQLITE_STATIC);
  sqlite3_bind_int64(st, 4, n);
  sqlite3_bind_int64(st, 5, max);
  rc = sqlite3_step(st);
  sqlite3_reset(st);
  if (rc != SQLITE_DONE) return sw_store_fail(s->store, err, "inserting gate");
  int64_t gate_id = sqlite3_last_insert_rowid(sw_store_db(s->store));
  struct sweep_mem *sw = sched_sweep(s, sweep_id);
  for (int i = 0; i < n; i++) {
    if ((rc = sched_insert_gate_pair(s, sweep_id, gate_id, i, sched_pair_order(sw, i), -1, now,
                                     err)))
      return rc;
  }
  return 0;
}

/* Appends "key=value" for the grid point's label. */
static void label_append(char *label, size_t len, const char *key, const json_t *v) {
  char val[96];
  if (json_is_string(v))
    snprintf(val, sizeof val, "%s", json_string_value(v));
  else {
    char *d = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    snprintf(val, sizeof val, "%s", d ? d : "?");
    free(d);
  }
  size_t used = strlen(label);
  snprintf(label + used, len - used, "%s%s=%s", used ? "," : "", key, val);
}

static int submit_grid(sw_sched_t *s, int64_t sweep_id, const json_t *spec, int64_t now,
                       struct sw_err *err) {
  /* A grid without parameters runs the base config `repeats` times (an audit). */
  const json_t *params = json_object_get(spec, "parameters");
  if (params && !json_is_null(params) && !json_is_object(params))
    return sw_err_set(err, SW_EINVAL, "spec: grid parameters must be a mapping");
  long long repeats = 1;
  int rc = get_int(spec, "repeats", 1, 1, 1000, &repeats, err);
  if (rc) return rc;
  size_t nk = json_is_object(params) ? json_object_size(params) : 0;
  const char **keys = calloc(nk + 1, sizeof *keys);
  const json_t **vals = calloc(nk + 1, sizeof *vals);
  size_t *digit = calloc(nk + 1, sizeof *digit);
  if (!keys || !vals || !digit) {
    rc = sw_err_set(err, SW_ENOMEM, "expanding grid: out of memory");
    goto out;
  }
  size_t i = 0, combos = 1;
  const char *k;
  const json_t *v;
  if (nk) json_object_foreach((json_t *)params, k, v) {
      if (!json_is_array(v) || json_array_size(v) == 0) {
        rc = sw_err_set(err, SW_EINVAL, "spec: parameters.%s must be a non-empty list", k);
        goto out;
      }
      keys[i] = k;
      vals[i] = v;
      combos *= json_array_size(v);
      if (combos * (size_t)repeats > 100000) {
        rc = sw_err_set(err, SW_EINVAL, "spec: grid expands to more than 100000 runs");
        goto out;
      }
      i++;
    }
  const json_t *base = json_object_get(spec, "base");
  const json_t *cps = json_object_get(spec, "checkpoints");
  static const char *const SQL_POINT = "INSERT INTO grid_points (sweep_id, idx, label, "
                                       "params_json, repeat) VALUES (?1, ?2, ?3, ?4, ?5)";
  int idx = 0;
  /* Repeats outermost: every point once before any point twice, so slow drift of a machine
   * spreads over all points instead of biasing the last ones. Last key varies fastest. */
  for (long long r = 0; r < repeats; r++) {
    memset(digit, 0, nk * sizeof *digit);
    for (size_t c = 0; c < combos; c++, idx++) {
      json_t *point = json_object();
      char label[512] = "";
      for (size_t j = 0; j < nk; j++) {
        json_t *val = json_array_get(vals[j], digit[j]);
        json_object_set(point, keys[j], val);
        label_append(label, sizeof label, keys[j], val);
      }
      if (nk == 0) snprintf(label, sizeof label, "base");
      json_t *cfg = sched_config_merge(base, point);
      if (cfg && json_is_array(cps) && !json_object_get(cfg, "checkpoints"))
        json_object_set(cfg, "checkpoints", (json_t *)cps);
      char *ptext = json_dumps(point, JSON_COMPACT);
      sqlite3_stmt *st;
      if (!cfg || !ptext) rc = sw_err_set(err, SW_ENOMEM, "expanding grid: out of memory");
      if (!rc) rc = sw_store_stmt(s->store, SQL_POINT, &st, err);
      if (!rc) {
        sqlite3_bind_int64(st, 1, sweep_id);
        sqlite3_bind_int(st, 2, idx);
        sqlite3_bind_text(st, 3, label, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 4, ptext, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 5, r);
        if (sqlite3_step(st) != SQLITE_DONE) rc = sw_store_fail(s->store, err, "inserting point");
        sqlite3_reset(st);
      }
      int64_t point_id = sqlite3_last_insert_rowid(sw_store_db(s->store)), pair_id = 0;
      if (!rc) rc = insert_pair(s, sweep_id, 0, point_id, idx, "single", -1, now, &pair_id, err);
      if (!rc) rc = sched_insert_run(s, pair_id, label, 0, cfg, err);
      json_decref(cfg);
      json_decref(point);
      free(ptext);
      if (rc) goto out;
      for (size_t j = nk; j-- > 0;) { /* odometer: advance the last key first */
        if (++digit[j] < json_array_size(vals[j])) break;
        digit[j] = 0;
      }
    }
  }
out:
  free(keys);
  free(vals);
  free(digit);
  return rc;
}

int sw_sched_submit(sw_sched_t *s, const json_t *spec, const char *spec_yaml, const char *name,
                    int64_t now, int64_t *sweep_id, struct sw_err *err) {
  *sweep_id = 0;
  if (!json_is_object(spec)) return sw_err_set(err, SW_EINVAL, "spec: not a JSON object");
  const json_t *jname = json_object_get(spec, "name");
  if (!name) name = json_is_string(jname) ? json_string_value(jname) : NULL;
  if (!name || !name[0]) return sw_err_set(err, SW_EINVAL, "spec: missing name");
  const json_t *jkind = json_object_get(spec, "kind");
  const char *kind = json_is_string(jkind) ? json_string_value(jkind) : "gate";
  if (strcmp(kind, "gate") != 0 && strcmp(kind, "grid") != 0)
    return sw_err_set(err, SW_EINVAL, "spec: kind must be gate or grid, not '%s'", kind);
  long long priority = 0;
  int rc = get_int(spec, "priority", 0, -1000000, 1000000, &priority, err);
  if (rc) return rc;
  char *spec_text = json_dumps(spec, JSON_COMPACT);
  if (!spec_text) return sw_err_set(err, SW_ENOMEM, "serialising spec: out of memory");
  char hex[SW_SHA256_HEX_LEN];
  const char *yaml = spec_yaml ? spec_yaml : "";
  /* The identity of a spec is its submitted text when there is one, else its JSON form. */
  if (spec_yaml)
    sw_sha256_buf(yaml, strlen(yaml), hex);
  else
    sw_sha256_buf(spec_text, strlen(spec_text), hex);

  if ((rc = sw_store_begin(s->store, err))) {
    free(spec_text);
    return rc;
  }
  static const char *const SQL =
      "INSERT INTO sweeps (name, kind, spec_yaml, spec_json, spec_sha256, priority, created_ms) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)";
  sqlite3_stmt *st;
  int64_t id = 0;
  if (!(rc = sw_store_stmt(s->store, SQL, &st, err))) {
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, kind, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, yaml, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, spec_text, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 5, hex, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 6, priority);
    sqlite3_bind_int64(st, 7, now);
    if (sqlite3_step(st) != SQLITE_DONE) rc = sw_store_fail(s->store, err, "inserting sweep");
    sqlite3_reset(st);
    id = sqlite3_last_insert_rowid(sw_store_db(s->store));
  }
  if (!rc) rc = sched_sweep_load(s, id, spec_text, (int)priority, err);
  if (!rc)
    rc = strcmp(kind, "grid") == 0 ? submit_grid(s, id, spec, now, err)
                                   : submit_gate(s, id, spec, name, now, err);
  if (!rc) {
    char text[300];
    snprintf(text, sizeof text, "%s sweep '%s' submitted", kind, name);
    rc = sw_store_event(s->store, now, id, "submit", text, err);
  }
  if (!rc) rc = sw_store_commit(s->store, err);
  free(spec_text);
  if (rc) {
    sw_store_rollback(s->store);
    if (id) sched_sweep_drop(s, id);
    return rc;
  }
  *sweep_id = id;
  return 0;
}

int sw_sched_submit_text(sw_sched_t *s, const char *spec_json_text, const char *spec_yaml,
                         const char *name, int64_t now, int64_t *sweep_id, struct sw_err *err) {
  json_error_t jerr;
  json_t *spec = json_loads(spec_json_text, 0, &jerr);
  if (!spec)
    return sw_err_set(err, SW_EINVAL, "spec JSON:%d:%d: %s", jerr.line, jerr.column, jerr.text);
  int rc = sw_sched_submit(s, spec, spec_yaml, name, now, sweep_id, err);
  json_decref(spec);
  return rc;
}
