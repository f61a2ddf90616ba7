/* sw_audit.c: reproducibility audits of sweeps read from the store: identical trainer, shader,
 * scene and per-arm config hashes, load windows on every run, contamination count, one device
 * per machine, one model size per configuration, and the re-measurement of a gate's on arm
 * (definitions in sw_audit.h). */
#include "sw_audit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sw_fs.h"
#include "sw_gate.h"
#include "sw_json.h"
#include "sw_pareto.h"

/* One stored attempt of the audited series, with what the checks look at. */
struct arec {
  int64_t id, run_id;
  int attempt;
  int64_t finished_ms;
  char *worker, *status, *trainer, *shaders, *scene, *config, *arm, *device;
  int n_during;
  json_t *metrics; /* the result's metrics object, or NULL */
};

struct series {
  struct arec *r;
  int n, cap;
};

static void series_free(struct series *s) {
  for (int i = 0; i < s->n; i++) {
    struct arec *a = &s->r[i];
    free(a->worker);
    free(a->status);
    free(a->trainer);
    free(a->shaders);
    free(a->scene);
    free(a->config);
    free(a->arm);
    free(a->device);
    json_decref(a->metrics);
  }
  free(s->r);
  memset(s, 0, sizeof *s);
}

static char *col_dup(sqlite3_stmt *st, int i) {
  const unsigned char *t = sqlite3_column_text(st, i);
  return t ? strdup((const char *)t) : NULL;
}

static int is_ok(const struct arec *a) { return a->status && strcmp(a->status, "ok") == 0; }

/* Every attempt of a sweep in the order it finished. */
static int load_series(sw_store_t *store, int64_t sweep_id, struct series *s, struct sw_err *err) {
  static const char *const SQL =
      "SELECT a.id, a.run_id, a.attempt, a.finished_ms, a.worker_id, a.status, a.trainer_sha256, "
      "a.shaders_sha256, a.scene_sha256, COALESCE(a.config_sha256, r.config_sha256), "
      "CASE WHEN g.name IS NULL THEN r.arm ELSE g.name || '/' || r.arm END, a.result_json, "
      "(SELECT COUNT(*) FROM windows w WHERE w.attempt_id = a.id AND w.phase = 'during') "
      "FROM attempts a JOIN runs r ON r.id = a.run_id JOIN pairs p ON p.id = r.pair_id "
      "LEFT JOIN gates g ON g.id = p.gate_id WHERE p.sweep_id = ?1 "
      "ORDER BY COALESCE(a.finished_ms, 0), a.id";
  sqlite3_stmt *st;
  int rc = sw_store_stmt(store, SQL, &st, err);
  if (rc) return rc;
  sqlite3_bind_int64(st, 1, sweep_id);
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    if (s->n == s->cap) {
      int nc = s->cap ? 2 * s->cap : 32;
      struct arec *p = realloc(s->r, (size_t)nc * sizeof *p);
      if (!p) {
        sqlite3_reset(st);
        return sw_err_set(err, SW_ENOMEM, "audit: out of memory");
      }
      s->r = p;
      s->cap = nc;
    }
    struct arec *a = &s->r[s->n++];
    memset(a, 0, sizeof *a);
    a->id = sqlite3_column_int64(st, 0);
    a->run_id = sqlite3_column_int64(st, 1);
    a->attempt = sqlite3_column_int(st, 2);
    a->finished_ms = sqlite3_column_int64(st, 3);
    a->worker = col_dup(st, 4);
    a->status = col_dup(st, 5);
    a->trainer = col_dup(st, 6);
    a->shaders = col_dup(st, 7);
    a->scene = col_dup(st, 8);
    a->config = col_dup(st, 9);
    a->arm = col_dup(st, 10);
    a->n_during = sqlite3_column_int(st, 12);
    const unsigned char *res = sqlite3_column_text(st, 11);
    json_t *result = res ? json_loads((const char *)res, 0, NULL) : NULL;
    json_t *m = json_object_get(result, "metrics");
    if (json_is_object(m)) a->metrics = json_incref(m);
    const json_t *dev = json_object_get(result, "device");
    const char *dn = json_string_value(json_object_get(dev, "name"));
    const char *dd = json_string_value(json_object_get(dev, "driver"));
    if (dn || dd) {
      size_t len = (dn ? strlen(dn) : 1) + (dd ? strlen(dd) : 1) + 8;
      a->device = malloc(len);
      if (a->device) snprintf(a->device, len, "%s, driver %s", dn ? dn : "?", dd ? dd : "?");
    }
    json_decref(result);
  }
  sqlite3_reset(st);
  return rc == SQLITE_DONE ? 0 : sw_store_fail(store, err, "reading attempts");
}

static json_t *run_ref(const struct arec *a, const char *value) {
  json_t *o = json_pack("{s:I,s:i,s:s?,s:s?,s:s?}", "run", (json_int_t)a->run_id, "attempt",
                        a->attempt, "worker", a->worker, "status", a->status, "arm", a->arm);
  json_object_set_new(o, "value", value ? json_string(value) : json_null());
  return o;
}

static json_t *check_new(const char *name, const char *status, const char *detail) {
  return json_pack("{s:s,s:s,s:s,s:[]}", "check", name, "status", status, "detail", detail, "runs");
}

static void short_hash(char *buf, size_t len, const char *v) {
  snprintf(buf, len, "%.12s%s", v, strlen(v) > 12 ? "..." : "");
}

typedef const char *(*getter)(const struct arec *);
static const char *get_trainer(const struct arec *a) { return a->trainer; }
static const char *get_shaders(const struct arec *a) { return a->shaders; }
static const char *get_scene(const struct arec *a) { return a->scene; }
static const char *get_config(const struct arec *a) { return a->config; }
static const char *get_device(const struct arec *a) { return a->device; }

/* How one value set looks inside a group of attempts (group NULL = all): the number of distinct
 * values, the most common one, and the ok attempts that carry none. */
struct spread {
  int distinct, missing, total;
  const char *mode;
};

static int in_group(const struct arec *a, const char *group, getter key) {
  if (!group) return 1;
  const char *k = key(a);
  return k && strcmp(k, group) == 0;
}

static struct spread spread_of(const struct series *s, getter get, const char *group, getter key) {
  struct spread sp = {0, 0, 0, NULL};
  int best = 0;
  for (int i = 0; i < s->n; i++) {
    const struct arec *a = &s->r[i];
    if (!in_group(a, group, key)) continue;
    const char *v = get(a);
    if (!v) {
      if (is_ok(a)) sp.missing++;
      continue;
    }
    sp.total++;
    int seen = 0, count = 0;
    for (int j = 0; j < s->n; j++) {
      const char *w = get(&s->r[j]);
      if (!in_group(&s->r[j], group, key) || !w || strcmp(v, w)) continue;
      if (j < i) seen = 1;
      count++;
    }
    if (!seen) sp.distinct++;
    if (count > best) {
      best = count;
      sp.mode = v;
    }
  }
  return sp;
}

/* Adds to `runs` the attempts of a group that differ from its most common value or lack one. */
static void odd_runs(const struct series *s, getter get, const char *group, getter key,
                     const struct spread *sp, json_t *runs) {
  for (int i = 0; i < s->n; i++) {
    const struct arec *a = &s->r[i];
    if (!in_group(a, group, key)) continue;
    const char *v = get(a);
    if ((!v && is_ok(a)) || (v && sp->mode && strcmp(v, sp->mode)))
      json_array_append_new(runs, run_ref(a, v));
  }
}

/* One value across the whole series (trainer, shaders, scene). optional: a trainer that reports
 * the value on no run at all is information, not a problem (an exec trainer without shaders). */
static json_t *check_same(const struct series *s, const char *name, const char *what, getter get,
                          int optional) {
  struct spread sp = spread_of(s, get, NULL, NULL);
  char d[400], h[32];
  if (sp.total == 0) {
    snprintf(d, sizeof d, "no run recorded a %s", what);
    return check_new(name, optional ? "info" : "fail", d);
  }
  json_t *c;
  if (sp.distinct == 1 && sp.missing == 0) {
    short_hash(h, sizeof h, sp.mode);
    snprintf(d, sizeof d, "%s %s on all %d attempt(s)", what, h, sp.total);
    return check_new(name, "pass", d);
  }
  short_hash(h, sizeof h, sp.mode);
  snprintf(d, sizeof d,
           "%d distinct %s value(s) over %d attempt(s)%s; most common %s; %d ok "
           "run(s) without one",
           sp.distinct, what, sp.total, sp.distinct > 1 ? " (not identical)" : "", h, sp.missing);
  c = check_new(name, "fail", d);
  odd_runs(s, get, NULL, NULL, &sp, json_object_get(c, "runs"));
  return c;
}

/* One value within each group (config per arm, device per worker). */
static json_t *check_per_group(const struct series *s, const char *name, const char *what,
                               const char *group_word, getter get, getter key, int optional) {
  json_t *runs = json_array();
  char bad[300] = "";
  int n_groups = 0, n_bad = 0, any = 0;
  for (int i = 0; i < s->n; i++) {
    const char *g = key(&s->r[i]);
    if (!g) continue;
    int seen = 0;
    for (int j = 0; j < i && !seen; j++)
      if (key(&s->r[j]) && strcmp(key(&s->r[j]), g) == 0) seen = 1;
    if (seen) continue;
    n_groups++;
    struct spread sp = spread_of(s, get, g, key);
    if (sp.total) any = 1;
    if (sp.distinct > 1 || (sp.missing && !optional) || (sp.missing && sp.total)) {
      n_bad++;
      size_t used = strlen(bad);
      snprintf(bad + used, sizeof bad - used, "%s%s (%d values)", used ? ", " : "", g, sp.distinct);
      odd_runs(s, get, g, key, &sp, runs);
    }
  }
  char d[600];
  const char *status;
  if (!any && optional) {
    snprintf(d, sizeof d, "no run recorded a %s", what);
    status = "info";
  } else if (n_bad == 0) {
    snprintf(d, sizeof d, "one %s per %s in all %d %s(s)", what, group_word, n_groups, group_word);
    status = "pass";
  } else {
    snprintf(d, sizeof d, "%s not identical within %d of %d %s(s): %s", what, n_bad, n_groups,
             group_word, bad);
    status = "fail";
  }
  json_t *c = check_new(name, status, d);
  json_object_set_new(c, "runs", runs);
  return c;
}

static const char *get_worker(const struct arec *a) { return a->worker; }
static const char *get_arm(const struct arec *a) { return a->arm; }

/* The lab's before/after check, per machine: on each worker the binary of its first run equals
 * that of its last. Machines may run different builds (a Mac and a Linux box cannot share one);
 * one machine must not change in the middle of a series. */
static json_t *check_before_after(const struct series *s) {
  json_t *c = check_new("trainer_before_after", "pass", "");
  json_t *runs = json_object_get(c, "runs");
  char d[600] = "", h1[32], h2[32];
  int machines = 0, changed = 0;
  for (int i = 0; i < s->n; i++) {
    const struct arec *first = &s->r[i], *last = NULL;
    if (!first->trainer) continue;
    int seen = 0;
    for (int j = 0; j < i && !seen; j++)
      seen = s->r[j].trainer &&
             ((!first->worker && !s->r[j].worker) ||
              (first->worker && s->r[j].worker && strcmp(first->worker, s->r[j].worker) == 0));
    if (seen) continue;
    machines++;
    for (int j = i; j < s->n; j++)
      if (s->r[j].trainer &&
          ((!first->worker && !s->r[j].worker) ||
           (first->worker && s->r[j].worker && strcmp(first->worker, s->r[j].worker) == 0)))
        last = &s->r[j];
    if (strcmp(first->trainer, last->trainer) == 0) continue;
    changed++;
    short_hash(h1, sizeof h1, first->trainer);
    short_hash(h2, sizeof h2, last->trainer);
    size_t used = strlen(d);
    snprintf(d + used, sizeof d - used, "%s%s: first run %lld %s, last run %lld %s",
             used ? "; " : "", first->worker ? first->worker : "?", (long long)first->run_id, h1,
             (long long)last->run_id, h2);
    json_array_append_new(runs, run_ref(first, first->trainer));
    json_array_append_new(runs, run_ref(last, last->trainer));
  }
  if (!machines) {
    json_object_set_new(c, "status", json_string("fail"));
    json_object_set_new(c, "detail", json_string("no run recorded a trainer sha256"));
    return c;
  }
  if (changed) {
    char full[700];
    snprintf(full, sizeof full, "the binary changed during the series on %d of %d machine(s): %s",
             changed, machines, d);
    json_object_set_new(c, "status", json_string("fail"));
    json_object_set_new(c, "detail", json_string(full));
  } else {
    snprintf(d, sizeof d, "on each of %d machine(s) the first run's binary is the last run's",
             machines);
    json_object_set_new(c, "detail", json_string(d));
  }
  return c;
}

/* How many trainer builds the fleet ran, for the reader: information, never a problem. */
static json_t *check_fleet(const struct series *s) {
  struct spread sp = spread_of(s, get_trainer, NULL, NULL);
  char d[200];
  snprintf(d, sizeof d, "%d distinct trainer binary sha256 value(s) across the series' machines",
           sp.distinct);
  return check_new("trainer_fleet", "info", d);
}

static json_t *check_windows(const struct series *s) {
  json_t *c = check_new("windows", "pass", "");
  json_t *runs = json_object_get(c, "runs");
  int n_ok = 0, n_missing = 0;
  for (int i = 0; i < s->n; i++) {
    if (!is_ok(&s->r[i])) continue;
    n_ok++;
    if (s->r[i].n_during == 0) {
      n_missing++;
      json_array_append_new(runs, run_ref(&s->r[i], NULL));
    }
  }
  char d[200];
  if (n_missing)
    snprintf(d, sizeof d, "%d of %d run(s) used had no load-sampler records during the run",
             n_missing, n_ok);
  else
    snprintf(d, sizeof d, "all %d run(s) used had load-sampler records during the run", n_ok);
  json_object_set_new(c, "detail", json_string(d));
  if (n_missing) json_object_set_new(c, "status", json_string("fail"));
  return c;
}

static json_t *check_contamination(const struct series *s) {
  json_t *c = check_new("contamination", "info", "");
  json_t *runs = json_object_get(c, "runs");
  int n_cont = 0, n_inv = 0;
  for (int i = 0; i < s->n; i++) {
    const char *st = s->r[i].status ? s->r[i].status : "";
    int cont = strcmp(st, "contaminated") == 0, inv = strcmp(st, "invalid") == 0;
    if (!cont && !inv) continue;
    n_cont += cont;
    n_inv += inv;
    json_array_append_new(runs, run_ref(&s->r[i], NULL));
  }
  char d[200];
  snprintf(d, sizeof d,
           "%d contaminated and %d invalid attempt(s) (kept, labelled, re-run by "
           "the scheduler)",
           n_cont, n_inv);
  json_object_set_new(c, "detail", json_string(d));
  json_object_set_new(c, "count", json_integer(n_cont + n_inv));
  return c;
}

static int count_failed(const json_t *checks) {
  int n = 0;
  size_t i;
  const json_t *c;
  json_array_foreach(checks, i, c) n +=
      strcmp(json_string_value(json_object_get(c, "status")), "fail") == 0;
  return n;
}

/* ---- the re-measurement against a gate ----------------------------------------------------- */

static double metric_of(const struct arec *a, const char *metric) {
  return sw_json_num(a->metrics, metric);
}

/* The reference gate: its id, name, metric and stored verdict JSON (caller frees strings). */
static int reference_gate(sw_store_t *store, int64_t sweep_id, const char *want, int64_t *gate_id,
                          char **name, char **metric, json_t **verdict, struct sw_err *err) {
  static const char *const SQL_KIND = "SELECT kind FROM sweeps WHERE id = ?1";
  static const char *const SQL_GATES =
      "SELECT id, name, metric, verdict_json FROM gates WHERE sweep_id = ?1 ORDER BY id";
  sqlite3_stmt *st;
  int rc = sw_store_stmt(store, SQL_KIND, &st, err);
  if (rc) return rc;
  sqlite3_bind_int64(st, 1, sweep_id);
  rc = sqlite3_step(st);
  int is_gate = rc == SQLITE_ROW && strcmp((const char *)sqlite3_column_text(st, 0), "gate") == 0;
  sqlite3_reset(st);
  if (rc == SQLITE_DONE)
    return sw_err_set(err, SW_ENOTFOUND, "no reference sweep %lld", (long long)sweep_id);
  /* A busy or broken database is a database error, not a missing sweep. */
  if (rc != SQLITE_ROW) return sw_store_fail(store, err, "reading the reference sweep");
  if (!is_gate)
    return sw_err_set(err, SW_EINVAL, "reference sweep %lld is not a gate sweep",
                      (long long)sweep_id);
  if ((rc = sw_store_stmt(store, SQL_GATES, &st, err))) return rc;
  sqlite3_bind_int64(st, 1, sweep_id);
  int n = 0, match = 0;
  char names[300] = "";
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    const char *nm = (const char *)sqlite3_column_text(st, 1);
    size_t used = strlen(names);
    snprintf(names + used, sizeof names - used, "%s%s", used ? ", " : "", nm);
    n++;
    if ((want && strcmp(want, nm) == 0) || (!want && n == 1)) {
      match++;
      *gate_id = sqlite3_column_int64(st, 0);
      free(*name);
      free(*metric);
      *name = strdup(nm);
      *metric = col_dup(st, 2);
      json_decref(*verdict);
      const unsigned char *vj = sqlite3_column_text(st, 3);
      *verdict = vj ? json_loads((const char *)vj, 0, NULL) : NULL;
    }
  }
  sqlite3_reset(st);
  if (rc != SQLITE_DONE) return sw_store_fail(store, err, "reading gates");
  if (want && !match)
    return sw_err_set(err, SW_ENOTFOUND, "reference sweep %lld has no gate '%s' (gates: %s)",
                      (long long)sweep_id, want, names);
  if (!want && n != 1)
    return sw_err_set(err, SW_EINVAL,
                      "reference sweep %lld has %d gates (%s): name one with "
                      "--gate",
                      (long long)sweep_id, n, names);
  if (!*name || !*metric) return sw_err_set(err, SW_ENOMEM, "audit: out of memory");
  return 0;
}

/* The gate's on-arm mean computed from its runs (used when it has no stored verdict): ok on
 * runs of the pairs' current attempts. */
static int gate_on_mean(sw_store_t *store, int64_t gate_id, const char *metric, double *mean,
                        int *n, char **trainer, struct sw_err *err) {
  static const char *const SQL =
      "SELECT a.result_json, a.trainer_sha256 FROM pairs p JOIN runs r ON r.pair_id = p.id "
      "JOIN attempts a ON a.run_id = r.id AND a.attempt = p.attempt WHERE p.gate_id = ?1 AND "
      "r.arm = 'on' AND a.status = 'ok' ORDER BY a.id";
  sqlite3_stmt *st;
  int rc = sw_store_stmt(store, SQL, &st, err);
  if (rc) return rc;
  sqlite3_bind_int64(st, 1, gate_id);
  double sum = 0;
  *n = 0;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    json_t *res = json_loads((const char *)sqlite3_column_text(st, 0), 0, NULL);
    const json_t *v = json_object_get(json_object_get(res, "metrics"), metric);
    if (json_is_number(v)) {
      sum += json_number_value(v);
      (*n)++;
    }
    json_decref(res);
    if (!*trainer && sqlite3_column_type(st, 1) != SQLITE_NULL) *trainer = col_dup(st, 1);
  }
  sqlite3_reset(st);
  if (rc != SQLITE_DONE) return sw_store_fail(store, err, "reading the gate's runs");
  *mean = *n ? sum / *n : NAN;
  return 0;
}

/* The configuration hash(es) of the gate's ok on-arm runs: *sha the first (malloc'd, NULL when
 * none is known), *n_distinct how many different ones there are. */
static int gate_on_config(sw_store_t *store, int64_t gate_id, char **sha, int *n_distinct,
                          struct sw_err *err) {
  static const char *const SQL =
      "SELECT DISTINCT COALESCE(a.config_sha256, r.config_sha256) FROM pairs p JOIN runs r ON "
      "r.pair_id = p.id JOIN attempts a ON a.run_id = r.id AND a.attempt = p.attempt WHERE "
      "p.gate_id = ?1 AND r.arm = 'on' AND a.status = 'ok' AND COALESCE(a.config_sha256, "
      "r.config_sha256) IS NOT NULL ORDER BY a.id";
  sqlite3_stmt *st;
  int rc = sw_store_stmt(store, SQL, &st, err);
  if (rc) return rc;
  sqlite3_bind_int64(st, 1, gate_id);
  *n_distinct = 0;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW)
    if ((*n_distinct)++ == 0) *sha = col_dup(st, 0);
  sqlite3_reset(st);
  return rc == SQLITE_DONE ? 0 : sw_store_fail(store, err, "reading the gate's configurations");
}

/* The lab re-measures the adopted stack itself: a mean is only comparable with the gate's
 * on-arm mean when the re-measurement ran the same resolved configuration (the trainer's
 * config_sha256). A different one fails and names the runs; unknown hashes are information. */
static json_t *check_reference_config(const struct series *s, const char *gname,
                                      const char *gate_cfg, int gate_cfgs) {
  int known = 0, differ = 0;
  for (int i = 0; i < s->n; i++) {
    if (!is_ok(&s->r[i]) || !s->r[i].config) continue;
    known++;
    differ += !gate_cfg || strcmp(s->r[i].config, gate_cfg) != 0;
  }
  char d[400], hg[16] = "?";
  if (gate_cfg) short_hash(hg, sizeof hg, gate_cfg);
  if (!gate_cfg || !known) {
    snprintf(d, sizeof d,
             "configuration hash unknown for %s: cannot tell whether the same "
             "configuration was re-measured",
             !gate_cfg ? "the gate's on arm" : "the re-measurement");
    return check_new("reference_config", "info", d);
  }
  if (gate_cfgs > 1 || differ) {
    snprintf(d, sizeof d,
             "%d of %d re-measured runs ran another configuration than gate %s's "
             "on arm (%s%s): the means are not comparable",
             differ, known, gname, hg, gate_cfgs > 1 ? ", itself not one configuration" : "");
    json_t *c = check_new("reference_config", "fail", d);
    for (int i = 0; i < s->n; i++)
      if (is_ok(&s->r[i]) && s->r[i].config && strcmp(s->r[i].config, gate_cfg) != 0)
        json_array_append_new(json_object_get(c, "runs"), run_ref(&s->r[i], s->r[i].config));
    return c;
  }
  snprintf(d, sizeof d, "every re-measured run ran gate %s's on-arm configuration (%s)", gname, hg);
  return check_new("reference_config", "pass", d);
}

static int check_reference(sw_store_t *store, const struct sw_audit_opts *o, const struct series *s,
                           json_t *checks, json_t **ref_out, struct sw_err *err) {
  double tol = o->tolerance > 0 ? o->tolerance : SW_AUDIT_DEFAULT_TOLERANCE;
  int64_t gate_id = 0;
  char *gname = NULL, *metric = NULL, *gate_trainer = NULL;
  json_t *verdict = NULL;
  int rc = reference_gate(store, o->reference_id, o->reference_gate, &gate_id, &gname, &metric,
                          &verdict, err);
  const char *label = NULL;
  for (int i = 0; !rc && i < s->n; i++) {
    if (!is_ok(&s->r[i]) || !s->r[i].arm) continue;
    if (!label)
      label = s->r[i].arm;
    else if (strcmp(label, s->r[i].arm))
      rc = sw_err_set(err, SW_EINVAL,
                      "the re-measurement sweep %lld runs several "
                      "configurations (%s, %s, ...): a re-measurement runs one",
                      (long long)o->sweep_id, label, s->r[i].arm);
  }
  double gate_mean = NAN;
  int gate_n = 0;
  const char *source = "gate verdict (lab.mean_on)";
  if (!rc) rc = gate_on_mean(store, gate_id, metric, &gate_mean, &gate_n, &gate_trainer, err);
  if (!rc) {
    const json_t *m = json_object_get(json_object_get(verdict, "lab"), "mean_on");
    if (json_is_number(m))
      gate_mean = json_number_value(m); /* the number the gate published */
    else
      source = "the gate's ok on-arm runs";
  }
  if (rc) goto out;
  double sum = 0;
  int n = 0;
  for (int i = 0; i < s->n; i++) {
    double v = is_ok(&s->r[i]) ? metric_of(&s->r[i], metric) : NAN;
    if (isfinite(v)) {
      sum += v;
      n++;
    }
  }
  double mean = n ? sum / n : NAN;
  double rel = n && gate_mean != 0 ? (mean - gate_mean) / gate_mean : NAN;
  int pass = isfinite(rel) && fabs(rel) <= tol;
  char d[600];
  if (!n)
    snprintf(d, sizeof d, "no ok run of the re-measurement has %s", metric);
  else if (!isfinite(gate_mean))
    snprintf(d, sizeof d, "gate %s has no on-arm %s to compare with", gname, metric);
  else
    snprintf(d, sizeof d,
             "re-measured mean %s %.6g (n=%d) vs gate %s on-arm mean %.6g: %+.3f%% "
             "(tolerance %.3f%%)%s",
             metric, mean, n, gname, gate_mean, 100 * rel, 100 * tol,
             pass ? "" : ": does not reproduce");
  char *gate_cfg = NULL;
  int gate_cfgs = 0;
  if ((rc = gate_on_config(store, gate_id, &gate_cfg, &gate_cfgs, err))) goto out;
  json_array_append_new(checks, check_reference_config(s, gname, gate_cfg, gate_cfgs));
  free(gate_cfg);
  json_t *c = check_new("reproduces", pass ? "pass" : "fail", d);
  for (int i = 0; !pass && i < s->n; i++)
    if (is_ok(&s->r[i])) json_array_append_new(json_object_get(c, "runs"), run_ref(&s->r[i], NULL));
  json_array_append_new(checks, c);
  /* Same binary as the gate: information, since a re-measurement may deliberately use a new
   * build; a reader needs to know which it was. */
  const char *mine = NULL;
  for (int i = 0; i < s->n && !mine; i++) mine = s->r[i].trainer;
  int same_bin = mine && gate_trainer && strcmp(mine, gate_trainer) == 0;
  snprintf(d, sizeof d, "trainer binary %s the gate's on-arm runs",
           same_bin ? "identical to" : "differs from (or is unknown for)");
  json_array_append_new(checks, check_new("reference_trainer", "info", d));
  *ref_out = json_pack("{s:I,s:s,s:s,s:o,s:i,s:s,s:o,s:i,s:o,s:f,s:b,s:b}", "sweep_id",
                       (json_int_t)o->reference_id, "gate", gname, "metric", metric, "gate_mean",
                       sw_json_real_or_null(gate_mean), "gate_n", gate_n, "gate_mean_source",
                       source, "mean", sw_json_real_or_null(mean), "n", n, "relative_diff",
                       sw_json_real_or_null(rel), "tolerance", tol, "pass", pass, "same_trainer",
                       same_bin);
out:
  free(gname);
  free(metric);
  free(gate_trainer);
  json_decref(verdict);
  return rc;
}

/* One model size per configuration: the ok runs of one config (its sha256) trained models of one
 * size, within the gate engine's tolerance (SW_GATE_SIZE_TOL of their median, judged where
 * SW_GATE_SIZE_MIN or more runs report metrics.splats_final), as a gate judges its arms. A run
 * outside it is a trainer that does not reproduce (issue 12's float-mode runaway): the run is
 * listed with its size. */
static json_t *check_model_size(const struct series *s) {
  json_t *c = check_new("model_size", "info", "");
  json_t *runs = json_object_get(c, "runs");
  double *v = malloc((size_t)(s->n ? s->n : 1) * sizeof *v);
  if (!v) return c;
  int n_groups = 0, n_judged = 0, n_off = 0;
  double worst = 0.0;
  for (int i = 0; i < s->n; i++) {
    const char *g = s->r[i].config;
    int seen = 0;
    for (int j = 0; j < i && !seen; j++) seen = s->r[j].config && strcmp(s->r[j].config, g) == 0;
    if (!g || seen) continue;
    n_groups++;
    size_t n = 0;
    for (int j = 0; j < s->n; j++) {
      const struct arec *a = &s->r[j];
      if (is_ok(a) && a->config && strcmp(a->config, g) == 0) v[n++] = metric_of(a, "splats_final");
    }
    double med = sw_gate_size_median(v, n, NULL);
    if (isnan(med)) continue;
    n_judged++;
    for (int j = 0; j < s->n; j++) {
      const struct arec *a = &s->r[j];
      double z = metric_of(a, "splats_final"), dev = 0.0;
      if (!is_ok(a) || !a->config || strcmp(a->config, g)) continue;
      int off = sw_gate_size_off(z, med, SW_GATE_SIZE_TOL, &dev);
      if (fabs(dev) > fabs(worst)) worst = dev;
      if (!off) continue;
      char val[96];
      snprintf(val, sizeof val, "%.0f (%+.1f%% from its configuration's median %.0f)", z,
               100.0 * dev, med);
      json_array_append_new(runs, run_ref(a, val));
      n_off++;
    }
  }
  free(v);
  char d[300];
  if (n_judged == 0) {
    snprintf(d, sizeof d,
             "no configuration of %d has %d or more ok runs reporting a model size "
             "(splats_final)",
             n_groups, SW_GATE_SIZE_MIN);
  } else if (n_off == 0) {
    snprintf(d, sizeof d,
             "every ok run within %.0f%% of its configuration's median model size (%d of %d "
             "configuration(s) judged; largest deviation %+.2f%%)",
             100.0 * SW_GATE_SIZE_TOL, n_judged, n_groups, 100.0 * worst);
    json_object_set_new(c, "status", json_string("pass"));
  } else {
    snprintf(d, sizeof d,
             "%d ok run(s) trained a model more than %.0f%% from their configuration's median "
             "size: the trainer does not reproduce (%d of %d configuration(s) judged)",
             n_off, 100.0 * SW_GATE_SIZE_TOL, n_judged, n_groups);
    json_object_set_new(c, "status", json_string("fail"));
  }
  json_object_set_new(c, "detail", json_string(d));
  return c;
}

/* ---- the audit ---------------------------------------------------------------------------------
 */

static int audit_sweep(sw_store_t *store, const struct sw_audit_opts *o, int64_t id,
                       const char *name, const char *kind, json_t *series_arr, json_t **ref,
                       struct sw_err *err) {
  struct series s;
  memset(&s, 0, sizeof s);
  int rc = load_series(store, id, &s, err);
  if (rc) return rc;
  json_t *checks = json_array();
  int n_ok = 0, runs = 0;
  for (int i = 0; i < s.n; i++) {
    n_ok += is_ok(&s.r[i]);
    int seen = 0;
    for (int j = 0; j < i && !seen; j++) seen = s.r[j].run_id == s.r[i].run_id;
    runs += !seen;
  }
  if (n_ok == 0)
    json_array_append_new(checks, check_new("results", "fail", "no finished (ok) run to audit"));
  json_array_append_new(checks, check_per_group(&s, "trainer", "trainer binary sha256", "machine",
                                                get_trainer, get_worker, 0));
  json_array_append_new(checks, check_before_after(&s));
  json_array_append_new(checks, check_fleet(&s));
  json_array_append_new(checks, check_same(&s, "shaders", "shaders sha256", get_shaders, 1));
  json_array_append_new(checks, check_same(&s, "scene", "scene sha256", get_scene, 1));
  json_array_append_new(
      checks, check_per_group(&s, "config", "config sha256", "arm", get_config, get_arm, 0));
  json_array_append_new(checks, check_windows(&s));
  json_array_append_new(checks, check_contamination(&s));
  json_array_append_new(checks, check_model_size(&s));
  json_array_append_new(checks, check_per_group(&s, "devices", "device and driver", "machine",
                                                get_device, get_worker, 1));
  if (o->reference_id) rc = check_reference(store, o, &s, checks, ref, err);
  json_t *one =
      json_pack("{s:I,s:s,s:s,s:i,s:i,s:i,s:o}", "sweep_id", (json_int_t)id, "name", name, "kind",
                kind, "runs", runs, "attempts", s.n, "ok", n_ok, "checks", checks);
  json_object_set_new(one, "problems", json_integer(count_failed(checks)));
  json_array_append_new(series_arr, one);
  series_free(&s);
  return rc;
}

json_t *sw_audit_json(sw_store_t *store, const struct sw_audit_opts *opts, int *problems,
                      struct sw_err *err) {
  static const char *const SQL =
      "SELECT id, name, kind FROM sweeps WHERE ?1 = 0 OR id = ?1 ORDER BY id";
  struct sw_audit_opts none = {0};
  const struct sw_audit_opts *o = opts ? opts : &none;
  if (problems) *problems = 0;
  if (o->reference_id && !o->sweep_id) {
    sw_err_set(err, SW_EINVAL, "audit: --reference needs the re-measurement SWEEP");
    return NULL;
  }
  if (o->tolerance < 0 || o->tolerance >= 1 || isnan(o->tolerance)) {
    sw_err_set(err, SW_EINVAL, "audit: tolerance %g outside (0, 1)", o->tolerance);
    return NULL;
  }
  sqlite3_stmt *st;
  if (sw_store_stmt(store, SQL, &st, err)) return NULL;
  sqlite3_bind_int64(st, 1, o->sweep_id);
  json_t *list = json_array();
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW)
    json_array_append_new(list,
                          json_pack("{s:I,s:s,s:s}", "id", (json_int_t)sqlite3_column_int64(st, 0),
                                    "name", (const char *)sqlite3_column_text(st, 1), "kind",
                                    (const char *)sqlite3_column_text(st, 2)));
  sqlite3_reset(st);
  if (rc != SQLITE_DONE) {
    sw_store_fail(store, err, "reading sweeps");
    json_decref(list);
    return NULL;
  }
  if (o->sweep_id && json_array_size(list) == 0) {
    sw_err_set(err, SW_ENOTFOUND, "no sweep %lld in %s", (long long)o->sweep_id,
               sw_store_path(store));
    json_decref(list);
    return NULL;
  }
  json_t *series = json_array(), *ref = NULL;
  size_t i;
  json_t *sw;
  rc = 0;
  json_array_foreach(list, i, sw) {
    rc = audit_sweep(store, o, json_integer_value(json_object_get(sw, "id")),
                     json_string_value(json_object_get(sw, "name")),
                     json_string_value(json_object_get(sw, "kind")), series, &ref, err);
    if (rc) break;
  }
  json_decref(list);
  if (rc) {
    json_decref(series);
    json_decref(ref);
    return NULL;
  }
  int total = 0;
  json_array_foreach(series, i, sw) total +=
      (int)json_integer_value(json_object_get(sw, "problems"));
  if (json_array_size(series) == 0) total = 1; /* an empty store proves nothing */
  if (problems) *problems = total;
  return json_pack("{s:b,s:i,s:o,s:o}", "pass", total == 0, "problems", total, "series", series,
                   "reference", ref ? ref : json_null());
}

static void render_text(FILE *out, const json_t *root) {
  int problems = (int)json_integer_value(json_object_get(root, "problems"));
  fprintf(out, "audit: %s (%d problem%s)\n", problems ? "FAIL" : "PASS", problems,
          problems == 1 ? "" : "s");
  const json_t *series = json_object_get(root, "series");
  if (json_array_size(series) == 0) fprintf(out, "  no sweep in the store\n");
  size_t i, j, k;
  const json_t *sw, *c, *r;
  json_array_foreach(series, i, sw) {
    fprintf(out, "\nseries %lld %s (%s): %lld run(s), %lld attempt(s), %lld ok\n",
            (long long)json_integer_value(json_object_get(sw, "sweep_id")),
            json_string_value(json_object_get(sw, "name")),
            json_string_value(json_object_get(sw, "kind")),
            (long long)json_integer_value(json_object_get(sw, "runs")),
            (long long)json_integer_value(json_object_get(sw, "attempts")),
            (long long)json_integer_value(json_object_get(sw, "ok")));
    json_array_foreach(json_object_get(sw, "checks"), j, c) {
      const char *status = json_string_value(json_object_get(c, "status"));
      int fail = strcmp(status, "fail") == 0;
      fprintf(out, "  %-4s  %-20s %s\n", fail ? "FAIL" : status,
              json_string_value(json_object_get(c, "check")),
              json_string_value(json_object_get(c, "detail")));
      if (!fail) continue;
      json_array_foreach(json_object_get(c, "runs"), k, r) {
        const char *v = json_string_value(json_object_get(r, "value"));
        fprintf(out, "          run %lld attempt %lld on %s, arm %s, %s%s%s\n",
                (long long)json_integer_value(json_object_get(r, "run")),
                (long long)json_integer_value(json_object_get(r, "attempt")),
                json_string_value(json_object_get(r, "worker"))
                    ? json_string_value(json_object_get(r, "worker"))
                    : "?",
                json_string_value(json_object_get(r, "arm"))
                    ? json_string_value(json_object_get(r, "arm"))
                    : "?",
                json_string_value(json_object_get(r, "status"))
                    ? json_string_value(json_object_get(r, "status"))
                    : "?",
                v ? ": " : "", v ? v : "");
      }
    }
  }
}

int sw_audit_render(sw_store_t *store, const struct sw_audit_opts *opts, int json, FILE *out,
                    int *problems, struct sw_err *err) {
  struct sw_err local = {0};
  if (!err) err = &local;
  json_t *root = sw_audit_json(store, opts, problems, err);
  if (!root) return err->code ? err->code : SW_EDB;
  int rc = 0;
  if (json) {
    if (json_dumpf(root, out, JSON_INDENT(2)) == 0)
      fputc('\n', out);
    else
      rc = sw_err_set(err, SW_EIO, "audit: writing JSON failed");
  } else {
    render_text(out, root);
  }
  json_decref(root);
  if (!rc && ferror(out)) rc = sw_err_set(err, SW_EIO, "audit: write failed");
  return rc;
}
