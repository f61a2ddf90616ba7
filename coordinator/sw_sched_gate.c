/* sw_sched_gate.c: what happens when a pair's runs are in: contamination classification, pair
 * completion, re-queue and poison caps, replacement pairs, the gate decision (through the gate
 * engine, common/sw_gate.h, which alone writes the verdict and its reasons) and sweep
 * completion. Every function here runs inside a transaction opened by its caller in
 * sw_sched.c, so a result and all its consequences commit together. It calls down only: new
 * pairs through sw_sched_submit.c, the sweep mirror and lease rows through sw_sched_mem.c. */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sw_gate.h"
#include "sw_sched_int.h"

static int gate_decide(sw_sched_t *s, int64_t gate_id, int64_t now, struct sw_err *err);

/* Contamination (DESIGN.md section 5, LAB-PRACTICE rule 4; the reasoning is in
 * docs/gate-rules.md "Contamination: what flags a run"). A run is judged on sustained evidence,
 * never on one sample: a one-second spike (cron, the exit of our own previous run, the sampler
 * catching a process start) costs the trainer a fraction of a percent and used to flag every run.
 * A sample's cpu_other is the average over the interval since the previous sample (the pre and
 * during windows are one timeline: the first during sample follows the last pre sample), so a
 * sample stands for (previous t_ms, its t_ms]; the very first, or one out of order, for
 * sample_interval_s before it. Time and means below count the part of each interval inside the
 * span judged: (0, end] for the run, (-settle_s, 0] for the pre window. The sample taken as the
 * trainer starts (t_ms 0) thus speaks for the seconds before the start, not for the run.
 *  - a failed run (non-zero exit, unusable result) is FAILED whatever its windows say;
 *  - no during-run samples while the spec requires windows: INVALID (nothing shows the machine
 *    was quiet, so the run cannot be trusted);
 *  - otherwise CONTAMINATED when any of these holds (every one that holds is named in why):
 *    (a) the worker's quiet wait gave up (!quiet) and the last settle_s seconds of the pre window
 *        show load: mean cpu_other above cpu_other_mean_max, or more than over_max_s above
 *        cpu_other_max. A wait that gave up on a window that shows neither is not evidence;
 *    (b) the during window's mean cpu_other is above cpu_other_mean_max: steady background work;
 *    (c) the during window spends more than over_max_s above cpu_other_max: a burst long enough
 *        to cost the trainer real time;
 *    (d) gpu_foreign is on and a during-run sample saw a process on the trainer's GPU that is not
 *        ours (gpu_foreign > 0; -1, cannot attribute, is not evidence): discrete evidence, one
 *        sample is enough;
 *    (e) load1_max > 0 and the last pre-run load1 is above it. Off by default: load1 is a
 *        1-minute decaying average that counts the trainer's own threads and our previous run.
 * load1 during the run is never judged: it counts the trainer itself. */
struct window_load {
  int n;         /* samples whose interval overlaps the span judged */
  double span_s; /* time they stand for inside the span */
  double mean;   /* time-weighted mean cpu_other, cores */
  double over_s; /* time with cpu_other above cpu_other_max */
  double peak;   /* the highest cpu_other above cpu_other_max (0 when none) */
  int64_t peak_ms;
};

/* Summarises the run's samples (pre, then during) over the span (lo_ms, hi_ms]. Times are
 * doubles because t_ms comes from the network: no value of it can overflow the arithmetic. */
static struct window_load summarise_window(const struct sweep_mem *sw,
                                           const struct sw_run_result *r, double lo_ms,
                                           double hi_ms) {
  struct window_load L = {0};
  const double nominal_ms = sw->spec->contamination.sample_interval_s * 1000.0;
  double sum = 0, span_ms = 0, over_ms = 0, prev_ms = 0;
  int have_prev = 0;
  for (int part = 0; part < 2; part++) {
    const struct sw_window_sample *w = part ? r->during : r->pre;
    int n = part ? r->n_during : r->n_pre;
    for (int i = 0; i < n; i++) {
      double t = (double)w[i].t_ms, from = have_prev && prev_ms <= t ? prev_ms : t - nominal_ms;
      prev_ms = t, have_prev = 1;
      if (from < lo_ms) from = lo_ms;
      if (t > hi_ms) t = hi_ms;
      if (t <= from) continue;
      double d = t - from;
      L.n++;
      span_ms += d;
      sum += d * w[i].cpu_other;
      if (w[i].cpu_other > sw->spec->contamination.cpu_other_max) {
        over_ms += d;
        if (w[i].cpu_other > L.peak) L.peak = w[i].cpu_other, L.peak_ms = w[i].t_ms;
      }
    }
  }
  L.span_s = span_ms / 1000.0;
  L.over_s = over_ms / 1000.0;
  L.mean = span_ms > 0 ? sum / span_ms : 0;
  return L;
}

/* Environment changes (docs/gate-rules.md "Environment changes inside a pair"). The worker
 * takes an environment object just before the trainer starts and just after it exits
 * (worker/sw_fingerprint.c sw_fingerprint_env: device, driver, trainer_sha256). A pair must
 * compare one change, the arm's, so an environment that moves during a run or between the two
 * runs of a pair makes the run invalid, and rerun_once re-runs its pair. */
#define ENV_VALUE_MAX 64 /* characters of a device or driver value named in a reason */

/* Appends text to out (cap bytes), after sep when out is not empty; truncates at cap. */
static void add_text(char *out, size_t cap, const char *sep, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void add_text(char *out, size_t cap, const char *sep, const char *fmt, ...) {
  size_t len = strlen(out);
  if (len > 0) len += (size_t)snprintf(out + len, cap - len, "%s", sep);
  if (len + 1 >= cap) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(out + len, cap - len, fmt, ap);
  va_end(ap);
}

/* One environment value as a reason names it: a hash (a key ending in sha256) by its first 8
 * hex digits, another string quoted and in full up to ENV_VALUE_MAX characters, JSON null as
 * null, a key the object lacks as absent. */
static void env_value(const char *key, const json_t *v, char *out, size_t cap) {
  size_t klen = strlen(key);
  if (!v) {
    snprintf(out, cap, "absent");
  } else if (json_is_string(v)) {
    const char *t = json_string_value(v);
    int hash = klen >= 6 && strcmp(key + klen - 6, "sha256") == 0;
    size_t keep = hash ? 8 : ENV_VALUE_MAX;
    const char *more = strlen(t) > keep ? ".." : "";
    if (hash)
      snprintf(out, cap, "%.*s%s", (int)keep, t, more);
    else
      snprintf(out, cap, "\"%.*s%s\"", (int)keep, t, more);
  } else {
    char *text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    snprintf(out, cap, "%.*s%s", ENV_VALUE_MAX, text ? text : "?",
             text && strlen(text) > ENV_VALUE_MAX ? ".." : "");
    free(text);
  }
}

static int cmp_key(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Compares two environment objects as JSON (key order and spacing do not matter). Returns 1
 * when both parse as objects and differ, with what changed in out ("key old -> new", keys in
 * sorted order, ", "-separated); 0 when they are equal or cannot be compared (NULL from an old
 * worker, or text that is not an object: no evidence that anything changed). */
static int env_changed(const char *before, const char *after, char *out, size_t cap) {
  out[0] = '\0';
  if (!before || !after) return 0;
  json_t *a = json_loads(before, 0, NULL), *b = json_loads(after, 0, NULL);
  int changed = json_is_object(a) && json_is_object(b) && !json_equal(a, b);
  if (changed) {
    size_t n = 0;
    const char **keys = malloc((json_object_size(a) + json_object_size(b) + 1) * sizeof *keys);
    const char *k;
    json_t *v;
    if (keys) {
      json_object_foreach(a, k, v) { keys[n++] = k; }
      json_object_foreach(b, k, v) {
        if (!json_object_get(a, k)) keys[n++] = k;
      }
      qsort(keys, n, sizeof *keys, cmp_key);
    }
    for (size_t i = 0; i < n; i++) {
      const json_t *va = json_object_get(a, keys[i]), *vb = json_object_get(b, keys[i]);
      if (va && vb && json_equal(va, vb)) continue;
      char was[ENV_VALUE_MAX + 8], now[ENV_VALUE_MAX + 8];
      env_value(keys[i], va, was, sizeof was);
      env_value(keys[i], vb, now, sizeof now);
      add_text(out, cap, ", ", "%s %s -> %s", keys[i], was, now);
    }
    free(keys);
    if (!out[0]) snprintf(out, cap, "the environment objects differ");
  }
  json_decref(a);
  json_decref(b);
  return changed;
}

enum sw_attempt_status sched_classify(const struct sweep_mem *sw, const struct sw_run_result *r,
                                      int result_ok, char *why, size_t cap) {
  const struct sw_spec_contamination *c = &sw->spec->contamination;
  why[0] = '\0';
  if (!result_ok) return SW_ATTEMPT_FAILED;
  /* An environment that changed during the run: the run measured two environments, so it is
   * invalid whatever its windows say. */
  char changed[SW_FLAG_REASON_MAX];
  if (env_changed(r->env_before, r->env_after, changed, sizeof changed)) {
    snprintf(why, cap, "environment changed during the run: %s", changed);
    return SW_ATTEMPT_INVALID;
  }
  if (r->n_during == 0 && c->require_windows) {
    snprintf(why, cap, "no window samples during the run (contamination.require_windows)");
    return SW_ATTEMPT_INVALID;
  }
  if (!r->quiet && r->n_pre > 0) { /* (a) */
    struct window_load L = summarise_window(sw, r, -c->settle_s * 1000.0, 0);
    if (L.n > 0 && (L.mean > c->cpu_other_mean_max || L.over_s > c->over_max_s))
      add_text(why, cap, "; ",
               "not quiet before the run: cpu_other mean %.2f cores over the last %.1f s "
               "(limit %.2f), above %.2f for %.1f s (limit %.1f s)",
               L.mean, L.span_s, c->cpu_other_mean_max, c->cpu_other_max, L.over_s, c->over_max_s);
  }
  struct window_load D = summarise_window(sw, r, 0, INFINITY);
  if (D.n > 0 && D.mean > c->cpu_other_mean_max) /* (b) */
    add_text(why, cap, "; ", "cpu_other mean %.2f cores over %.1f s of the run (limit %.2f)",
             D.mean, D.span_s, c->cpu_other_mean_max);
  if (D.over_s > c->over_max_s) /* (c) */
    add_text(why, cap, "; ",
             "cpu_other above %.2f cores for %.1f s (limit %.1f s), peak %.2f at %+.1f s",
             c->cpu_other_max, D.over_s, c->over_max_s, D.peak, D.peak_ms / 1000.0);
  if (c->gpu_foreign) { /* (d) */
    int seen = 0, most = 0;
    int64_t first_ms = 0, last_ms = 0;
    for (int i = 0; i < r->n_during; i++) {
      const struct sw_window_sample *w = &r->during[i];
      if (!w->has_gpu || w->gpu_foreign <= 0) continue;
      if (!seen++) first_ms = w->t_ms;
      last_ms = w->t_ms;
      if (w->gpu_foreign > most) most = w->gpu_foreign;
    }
    if (seen)
      add_text(why, cap, "; ",
               "%d foreign process(es) on the trainer's GPU from %+.1f s to %+.1f s (%d of %d "
               "samples)",
               most, first_ms / 1000.0, last_ms / 1000.0, seen, r->n_during);
  }
  if (c->load1_max > 0 && r->n_pre > 0 && r->pre[r->n_pre - 1].load1 > c->load1_max) /* (e) */
    add_text(why, cap, "; ", "load1 %.2f before the run, above load1_max %.2f",
             r->pre[r->n_pre - 1].load1, c->load1_max);
  return why[0] ? SW_ATTEMPT_CONTAMINATED : SW_ATTEMPT_OK;
}

static int step_done(sw_sched_t *s, sqlite3_stmt *st, const char *what, struct sw_err *err) {
  int rc = sqlite3_step(st);
  sqlite3_reset(st);
  return rc == SQLITE_DONE ? 0 : sw_store_fail(s->store, err, what);
}

/* Reads one row of integers from a statement with ?1 = id (and ?2 = id2 when it has a ?2). */
static int row_ints(sw_sched_t *s, const char *sql, int64_t id, int64_t id2, int64_t *v, int n,
                    struct sw_err *err) {
  sqlite3_stmt *st;
  int rc = sw_store_stmt(s->store, sql, &st, err);
  if (rc) return rc;
  sqlite3_bind_int64(st, 1, id);
  if (sqlite3_bind_parameter_count(st) >= 2) sqlite3_bind_int64(st, 2, id2);
  rc = sqlite3_step(st);
  if (rc == SQLITE_ROW)
    for (int i = 0; i < n; i++) v[i] = sqlite3_column_int64(st, i);
  sqlite3_reset(st);
  if (rc == SQLITE_ROW) return 0;
  if (rc == SQLITE_DONE) return sw_err_set(err, SW_ENOTFOUND, "row %lld not found", (long long)id);
  return sw_store_fail(s->store, err, "reading counts");
}

int sched_pair_requeue(sw_sched_t *s, int64_t pair_id, int64_t now, const char *why,
                       struct sw_err *err) {
  static const char *const SQL_PAIR =
      "SELECT attempt, sweep_id, COALESCE(gate_id, 0), idx FROM pairs WHERE id = ?1";
  static const char *const SQL_ABANDON =
      "UPDATE attempts SET status = 'abandoned' WHERE attempt = ?2 AND status <> 'failed' AND "
      "run_id IN (SELECT id FROM runs WHERE pair_id = ?1)";
  static const char *const SQL_FAIL =
      "UPDATE pairs SET status = 'failed', finished_ms = ?2 WHERE id = ?1";
  static const char *const SQL_AGAIN = "UPDATE pairs SET status = 'pending', attempt = attempt + "
                                       "1, worker_id = NULL WHERE id = ?1";
  int64_t v[4];
  int rc = row_ints(s, SQL_PAIR, pair_id, 0, v, 4, err);
  if (rc) return rc;
  int attempt = (int)v[0];
  int64_t sweep_id = v[1], gate_id = v[2];
  sqlite3_stmt *st;
  if ((rc = sw_store_stmt(s->store, SQL_ABANDON, &st, err))) return rc;
  sqlite3_bind_int64(st, 1, pair_id);
  sqlite3_bind_int(st, 2, attempt);
  if ((rc = step_done(s, st, "abandoning attempts", err))) return rc;
  char text[256];
  int poison = attempt >= s->opts.max_attempts;
  if (poison) {
    if ((rc = sw_store_stmt(s->store, SQL_FAIL, &st, err))) return rc;
    sqlite3_bind_int64(st, 1, pair_id);
    sqlite3_bind_int64(st, 2, now);
    snprintf(text, sizeof text, "pair %lld failed after %d attempts (%s)", (long long)v[3], attempt,
             why);
  } else {
    if ((rc = sw_store_stmt(s->store, SQL_AGAIN, &st, err))) return rc;
    sqlite3_bind_int64(st, 1, pair_id);
    snprintf(text, sizeof text, "pair %lld re-queued as attempt %d (%s)", (long long)v[3],
             attempt + 1, why);
  }
  if ((rc = step_done(s, st, "re-queuing pair", err))) return rc;
  if ((rc = sw_store_event(s->store, now, sweep_id, poison ? "poison" : "requeue", text, err)))
    return rc;
  if (poison && gate_id) rc = gate_decide(s, gate_id, now, err);
  return rc;
}

/* Adds the one replacement pair that a contaminated or invalid pair gets (same order, so the
 * counterbalancing is kept), unless it already has one; why says what flagged it (the event). */
static int add_replacement(sw_sched_t *s, int64_t pair_id, int64_t sweep_id, int64_t gate_id,
                           int64_t point_id, int idx, const char *ord, const char *why, int64_t now,
                           struct sw_err *err) {
  static const char *const SQL_EXISTS =
      "SELECT COUNT(*) FROM pairs WHERE sweep_id = ?1 AND replaces = ?2 AND "
      "COALESCE(gate_id, 0) = ?3";
  static const char *const SQL_NEXT =
      "SELECT COALESCE(MAX(idx), -1) + 1 FROM pairs WHERE sweep_id = ?1 AND COALESCE(gate_id, 0) "
      "= ?2";
  static const char *const SQL_GRID_PAIR =
      "INSERT INTO pairs (sweep_id, point_id, idx, ord, replaces, is_replacement, created_ms) "
      "VALUES (?1, ?2, ?3, 'single', ?4, 1, ?5)";
  static const char *const SQL_GRID_RUN =
      "INSERT INTO runs (pair_id, arm, position, config_json, config_sha256) SELECT ?1, arm, "
      "position, config_json, config_sha256 FROM runs WHERE pair_id = ?2";
  sqlite3_stmt *st;
  int rc = sw_store_stmt(s->store, SQL_EXISTS, &st, err);
  if (rc) return rc;
  sqlite3_bind_int64(st, 1, sweep_id);
  sqlite3_bind_int(st, 2, idx);
  sqlite3_bind_int64(st, 3, gate_id);
  int exists = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0) > 0;
  sqlite3_reset(st);
  if (exists) return 0;
  int64_t next = 0;
  if ((rc = row_ints(s, SQL_NEXT, sweep_id, gate_id, &next, 1, err))) return rc;
  if (gate_id) {
    rc = sched_insert_gate_pair(s, sweep_id, gate_id, (int)next, ord, idx, now, err);
  } else {
    if ((rc = sw_store_stmt(s->store, SQL_GRID_PAIR, &st, err))) return rc;
    sqlite3_bind_int64(st, 1, sweep_id);
    sqlite3_bind_int64(st, 2, point_id);
    sqlite3_bind_int64(st, 3, next);
    sqlite3_bind_int(st, 4, idx);
    sqlite3_bind_int64(st, 5, now);
    if ((rc = step_done(s, st, "inserting replacement pair", err))) return rc;
    int64_t new_id = sqlite3_last_insert_rowid(sw_store_db(s->store));
    if ((rc = sw_store_stmt(s->store, SQL_GRID_RUN, &st, err))) return rc;
    sqlite3_bind_int64(st, 1, new_id);
    sqlite3_bind_int64(st, 2, pair_id);
    rc = step_done(s, st, "copying replacement run", err);
  }
  if (rc) return rc;
  char text[160];
  snprintf(text, sizeof text, "pair %d %s: replacement pair %lld added", idx, why, (long long)next);
  return sw_store_event(s->store, now, sweep_id, "replace", text, err);
}

/* The runs of a pair must start in one environment: a rebuild, a driver update or a device swap
 * between the off and the on run would be measured as the arm's effect. Compares each run's
 * env_before (the pair's current attempt, in run order) with the first run's, and marks every
 * run that differs invalid, its reason appended to any it had. Runs without env_before (old
 * workers) are not compared. *marked gets how many were marked. */
static int pair_env_check(sw_sched_t *s, int64_t pair_id, int attempt, int *marked,
                          struct sw_err *err) {
  static const char *const SQL_RUNS =
      "SELECT a.id, a.env_before FROM runs r JOIN attempts a ON a.run_id = r.id AND a.attempt = "
      "?2 WHERE r.pair_id = ?1 AND a.env_before IS NOT NULL ORDER BY r.position, r.id";
  static const char *const SQL_MARK =
      "UPDATE attempts SET status = 'invalid', flag_reason = CASE WHEN COALESCE(flag_reason, '') "
      "= '' THEN ?2 ELSE flag_reason || '; ' || ?2 END WHERE id = ?1";
  *marked = 0;
  sqlite3_stmt *st;
  int rc = sw_store_stmt(s->store, SQL_RUNS, &st, err);
  if (rc) return rc;
  sqlite3_bind_int64(st, 1, pair_id);
  sqlite3_bind_int(st, 2, attempt);
  char *first = NULL, why[SW_SCHED_MAX_RUNS][SW_FLAG_REASON_MAX];
  int64_t ids[SW_SCHED_MAX_RUNS];
  int n = 0;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW && n < SW_SCHED_MAX_RUNS) {
    const char *env = (const char *)sqlite3_column_text(st, 1);
    if (!env) { /* NOT NULL in the query: only an out-of-memory gives NULL here */
      rc = SQLITE_NOMEM;
      break;
    }
    if (!first) {
      if (!(first = strdup(env))) {
        rc = SQLITE_NOMEM;
        break;
      }
      continue;
    }
    char changed[SW_FLAG_REASON_MAX];
    if (!env_changed(first, env, changed, sizeof changed)) continue;
    ids[n] = sqlite3_column_int64(st, 0);
    snprintf(why[n++], SW_FLAG_REASON_MAX, "environment changed between the pair's runs: %s",
             changed);
  }
  sqlite3_reset(st);
  free(first);
  if (rc == SQLITE_NOMEM) return sw_err_set(err, SW_ENOMEM, "pair environments: out of memory");
  if (rc != SQLITE_ROW && rc != SQLITE_DONE)
    return sw_store_fail(s->store, err, "reading the pair's environments");
  for (int i = 0; i < n; i++) {
    if ((rc = sw_store_stmt(s->store, SQL_MARK, &st, err))) return rc;
    sqlite3_bind_int64(st, 1, ids[i]);
    sqlite3_bind_text(st, 2, why[i], -1, SQLITE_TRANSIENT);
    if ((rc = step_done(s, st, "marking a run invalid", err))) return rc;
  }
  *marked = n;
  return 0;
}

int sched_pair_check(sw_sched_t *s, int64_t pair_id, int64_t now, int *lease_closed,
                     struct sw_err *err) {
  static const char *const SQL_PAIR =
      "SELECT attempt, status, sweep_id, COALESCE(gate_id, 0), COALESCE(point_id, 0), idx, "
      "is_replacement, ord FROM pairs WHERE id = ?1";
  static const char *const SQL_COUNTS =
      "SELECT COUNT(r.id), COUNT(a.id), COALESCE(SUM(a.status = 'failed'), 0), "
      "COALESCE(SUM(a.status IN ('contaminated', 'invalid')), 0) FROM runs r LEFT JOIN attempts "
      "a ON a.run_id = r.id AND a.attempt = ?2 WHERE r.pair_id = ?1";
  static const char *const SQL_DONE =
      "UPDATE pairs SET status = 'done', finished_ms = ?2 WHERE id = ?1";
  *lease_closed = 0;
  sqlite3_stmt *st;
  int rc = sw_store_stmt(s->store, SQL_PAIR, &st, err);
  if (rc) return rc;
  sqlite3_bind_int64(st, 1, pair_id);
  if (sqlite3_step(st) != SQLITE_ROW) {
    sqlite3_reset(st);
    return sw_store_fail(s->store, err, "reading pair");
  }
  int attempt = sqlite3_column_int(st, 0);
  int leased = strcmp((const char *)sqlite3_column_text(st, 1), "leased") == 0;
  int64_t sweep_id = sqlite3_column_int64(st, 2), gate_id = sqlite3_column_int64(st, 3);
  int64_t point_id = sqlite3_column_int64(st, 4);
  int idx = sqlite3_column_int(st, 5), is_repl = sqlite3_column_int(st, 6);
  char ord[8];
  snprintf(ord, sizeof ord, "%s", (const char *)sqlite3_column_text(st, 7));
  sqlite3_reset(st);
  if (!leased) return 0;
  int64_t c[4];
  if ((rc = row_ints(s, SQL_COUNTS, pair_id, attempt, c, 4, err))) return rc;
  if (c[1] < c[0]) return 0; /* the other arm is still to come */

  for (int i = 0; i < s->n_leases; i++) {
    if (s->leases[i].pair_id != pair_id) continue;
    if ((rc = sched_lease_close_db(s, s->leases[i].id, "done", now, err))) return rc;
    *lease_closed = 1;
  }
  if (c[2] > 0) {
    /* A failed run re-queues the pair, or fails it for good (poison): then the sweep may be
     * over, so it is checked like after a completed pair. */
    rc = sched_pair_requeue(s, pair_id, now, "a run failed", err);
    return rc ? rc : sched_sweep_check(s, sweep_id, now, err);
  }
  /* Runs that began in another environment than the pair's first are invalid: counted here so
   * the replacement rule below re-runs the pair. */
  int marked = 0;
  if ((rc = pair_env_check(s, pair_id, attempt, &marked, err))) return rc;
  c[3] += marked;
  if ((rc = sw_store_stmt(s->store, SQL_DONE, &st, err))) return rc;
  sqlite3_bind_int64(st, 1, pair_id);
  sqlite3_bind_int64(st, 2, now);
  if ((rc = step_done(s, st, "completing pair", err))) return rc;
  const struct sweep_mem *sw = sched_sweep(s, sweep_id);
  if (c[3] > 0 && sw && sw->spec->contamination.rerun_once && !is_repl &&
      (rc = add_replacement(s, pair_id, sweep_id, gate_id, point_id, idx, ord,
                            "contaminated or invalid", now, err)))
    return rc;
  if (gate_id && (rc = gate_decide(s, gate_id, now, err))) return rc;
  return sched_sweep_check(s, sweep_id, now, err);
}

/* ---- the gate decision ---------------------------------------------------------------------- */

/* The gate engine's configuration from the spec's gate and pairs sections. */
static void gate_config(const struct sweep_mem *sw, const char *name, int n_target, int n_max,
                        struct sw_gate_config *cfg) {
  const struct sw_spec_gate *g = &sw->spec->gate;
  sw_gate_config_default(cfg);
  snprintf(cfg->name, sizeof cfg->name, "%s", name);
  snprintf(cfg->guard_metric, sizeof cfg->guard_metric, "%s", g->guard.metric);
  cfg->direction = g->direction == SW_DIR_HIGHER ? SW_GATE_HIGHER : SW_GATE_LOWER;
  cfg->k = g->k;
  cfg->floor = g->floor;
  cfg->max_drop = g->guard.max_drop;
  cfg->has_band = g->guard.has_band;
  cfg->band_lo = g->guard.band_lo;
  cfg->band_hi = g->guard.band_hi;
  cfg->alpha = g->alpha;
  cfg->size_tol = g->size_tolerance;
  cfg->sequential = sw->spec->pairs.sequential;
  cfg->min_pairs = n_target;
  cfg->max_pairs = n_max;
  cfg->boot_seed = 1; /* fixed: the same data always gives the same verdict */
}

/* Loads the gate's completed pairs into the engine's input form. *pairs_out malloc'd, and
 * *idx_out (malloc'd too) the store index of each. */
static int gate_pairs(sw_sched_t *s, const struct sweep_mem *sw, int64_t gate_id,
                      const char *metric, struct sw_gate_pair **pairs_out, int **idx_out,
                      size_t *n_out, struct sw_err *err) {
  /* The metric columns of attempts answer the usual metrics without parsing result.json (a
   * gate re-reads all its pairs after each one); any other metric comes from the JSON. */
#define METRIC_OF(P)                                                                               \
  "CASE ?" P " WHEN 'train_s' THEN a.train_s WHEN 'wall_s' THEN a.wall_s WHEN 'psnr_db' THEN "     \
  "a.psnr_db WHEN 'ssim' THEN a.ssim WHEN 'iterations' THEN a.iterations WHEN 'splats_final' "     \
  "THEN a.splats_final WHEN 'splats_mean' THEN a.splats_mean WHEN 'gpu_busy_frac' THEN "           \
  "a.gpu_busy_frac ELSE json_extract(a.result_json, '$.metrics.' || ?" P ") END"
  static const char *const SQL =
      /* The machine is the worker's host (its fingerprint's machine_id): local workers, or
       * several GPUs of one host, are one machine to the statistics (DESIGN.md section 5). */
      "SELECT p.idx, COALESCE(json_extract(w.fingerprint_json, '$.machine_id'), p.worker_id), "
      "p.ord, p.replaces, r.arm, a.status, " METRIC_OF("2") ", " METRIC_OF(
          "3") ", a.splats_final FROM pairs p JOIN runs r ON r.pair_id = p.id JOIN attempts a ON "
               "a.run_id = r.id "
               "AND a.attempt = p.attempt LEFT JOIN workers w ON w.id = p.worker_id WHERE "
               "p.gate_id = ?1 AND p.status = 'done' ORDER BY p.idx, r.position";
#undef METRIC_OF
  sqlite3_stmt *st;
  int rc = sw_store_stmt(s->store, SQL, &st, err);
  if (rc) return rc;
  sqlite3_bind_int64(st, 1, gate_id);
  sqlite3_bind_text(st, 2, metric, -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st, 3, sw->spec->gate.guard.metric, -1, SQLITE_TRANSIENT);
  /* Each input pair with its store index and the store index it replaces, mapped below. */
  struct row {
    struct sw_gate_pair p;
    int idx, repl;
  } *rows = NULL;
  size_t n = 0, cap = 0;
  int last_idx = -1;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    int idx = sqlite3_column_int(st, 0);
    if (idx != last_idx) {
      if (n == cap) {
        size_t ncap = cap ? cap * 2 : 16;
        struct row *grown = realloc(rows, ncap * sizeof *rows);
        if (!grown) {
          rc = SQLITE_NOMEM;
          break;
        }
        rows = grown;
        cap = ncap;
      }
      struct row *w = &rows[n++];
      memset(w, 0, sizeof *w);
      w->p.off = w->p.on = NAN;
      w->p.off_guard = w->p.on_guard = NAN;
      w->p.off_size = w->p.on_size = NAN;
      snprintf(w->p.machine, sizeof w->p.machine, "%s",
               sqlite3_column_text(st, 1) ? (const char *)sqlite3_column_text(st, 1) : "");
      w->p.order = strcmp((const char *)sqlite3_column_text(st, 2), "on-off") == 0 ? SW_GATE_ON_OFF
                                                                                   : SW_GATE_OFF_ON;
      w->p.replaces = -1;
      w->idx = idx;
      w->repl = sqlite3_column_type(st, 3) == SQLITE_NULL ? -1 : sqlite3_column_int(st, 3);
      last_idx = idx;
    }
    struct sw_gate_pair *q = &rows[n - 1].p;
    const char *arm = (const char *)sqlite3_column_text(st, 4);
    const char *status = (const char *)sqlite3_column_text(st, 5);
    if (strcmp(status, "contaminated") == 0) q->contaminated = 1;
    if (strcmp(status, "invalid") == 0) q->invalid = 1;
    int on = strcmp(arm, "on") == 0;
    double v = sqlite3_column_type(st, 6) == SQLITE_NULL ? NAN : sqlite3_column_double(st, 6);
    double g = sqlite3_column_type(st, 7) == SQLITE_NULL ? NAN : sqlite3_column_double(st, 7);
    /* The trained model's size, for the engine's model-size check (unknown: NAN). */
    double z = sqlite3_column_type(st, 8) == SQLITE_NULL ? NAN : sqlite3_column_double(st, 8);
    /* A metric the result did not carry (or a non-positive one) makes the pair unusable:
     * the engine must never see a made-up value. */
    if (!(v > 0) || !isfinite(v)) q->invalid = 1;
    if (on) {
      q->on = v;
      q->on_guard = g;
      q->on_size = z;
    } else {
      q->off = v;
      q->off_guard = g;
      q->off_size = z;
    }
  }
  sqlite3_reset(st);
  struct sw_gate_pair *p = rc == SQLITE_DONE ? malloc((n ? n : 1) * sizeof *p) : NULL;
  int *pidx = p ? malloc((n ? n : 1) * sizeof *pidx) : NULL;
  if (!pidx) {
    free(p);
    free(rows);
    return rc == SQLITE_DONE || rc == SQLITE_NOMEM
               ? sw_err_set(err, SW_ENOMEM, "gate input: out of memory")
               : sw_store_fail(s->store, err, "reading gate pairs");
  }
  for (size_t i = 0; i < n; i++) {
    p[i] = rows[i].p;
    pidx[i] = rows[i].idx;
    /* `replaces` in the store is a pair index; the engine wants a position in its input. */
    for (size_t j = 0; rows[i].repl >= 0 && j < n; j++)
      if (rows[j].idx == rows[i].repl) p[i].replaces = (int)j;
    if (p[i].invalid) { /* keep the numbers well-formed; the engine ignores invalid pairs */
      if (!(p[i].off > 0) || !isfinite(p[i].off)) p[i].off = 1;
      if (!(p[i].on > 0) || !isfinite(p[i].on)) p[i].on = 1;
    }
  }
  free(rows);
  *pairs_out = p;
  *idx_out = pidx;
  *n_out = n;
  return 0;
}

/* The pairs the engine's model-size check flagged that the scheduler still owes a rerun (not a
 * replacement themselves, none replacing them yet): their store indexes and orders, at most
 * SW_GATE_MAX_SIZE_FLAGS. Returns how many. */
static int size_reruns(const struct sw_gate_input *in, const int *store_idx,
                       const struct sw_gate_result *res, int *idx, enum sw_gate_order *ord) {
  int n = 0;
  for (int k = 0; k < res->size.n_runs && k < SW_GATE_MAX_SIZE_FLAGS; k++) {
    int i = res->size.flags[k].pair, owed = in->pairs[i].replaces < 0;
    for (size_t j = 0; j < in->n_pairs && owed; j++) owed = in->pairs[j].replaces != i;
    for (int m = 0; m < n && owed; m++) owed = idx[m] != store_idx[i];
    if (!owed) continue;
    idx[n] = store_idx[i];
    ord[n++] = in->pairs[i].order;
  }
  return n;
}

/* LAB-PRACTICE rule 7: the trainer binary must be the same before and after a series. Counts
 * the workers whose runs in this gate's completed pairs carry more than one trainer sha256 (a
 * rebuild or an update in the middle of the gate). Machines may differ from each other (a Mac
 * and a Linux box cannot share a binary); one machine must not change. *n gets the count. */
static int binary_changes(sw_sched_t *s, int64_t gate_id, int64_t *n, struct sw_err *err) {
  static const char *const SQL =
      "SELECT COUNT(*) FROM (SELECT a.worker_id FROM pairs p JOIN runs r ON r.pair_id = p.id "
      "JOIN attempts a ON a.run_id = r.id AND a.attempt = p.attempt WHERE p.gate_id = ?1 AND "
      "p.status = 'done' AND a.trainer_sha256 IS NOT NULL GROUP BY a.worker_id HAVING "
      "COUNT(DISTINCT a.trainer_sha256) > 1)";
  return row_ints(s, SQL, gate_id, 0, n, 1, err);
}

/* What one look decided, besides the verdict JSON. */
struct gate_look {
  enum sw_gate_verdict verdict;
  enum sw_gate_seq_decision decision;
  int n_reruns; /* pairs the model-size check flagged that are owed a rerun */
  int rerun_idx[SW_GATE_MAX_SIZE_FLAGS];
  enum sw_gate_order rerun_ord[SW_GATE_MAX_SIZE_FLAGS];
};

/* The one place a verdict is computed: the gate engine on the gate's completed pairs. Fills the
 * verdict JSON (the engine's gate object) and *look (the verdict, the sequential decision, the
 * reruns the model-size check asks for). */

static int gate_verdict(sw_sched_t *s, const struct sweep_mem *sw, int64_t gate_id,
                        const char *name, const char *metric, int n_target, int n_max, int quick,
                        json_t **verdict_json, struct gate_look *look, struct sw_err *err) {
  struct sw_gate_pair *pairs = NULL;
  int *store_idx = NULL;
  size_t n = 0;
  int rc = gate_pairs(s, sw, gate_id, metric, &pairs, &store_idx, &n, err);
  if (rc) return rc;
  struct sw_gate_config cfg;
  gate_config(sw, name, n_target, n_max, &cfg);
  /* Every spec has a guard (metric psnr_db by default): a run without the guard metric leaves
   * the quality unjudged, and then the engine may reject a regression but never adopt. */
  cfg.has_guard = 1;
  cfg.guard_required = 1;
  if (quick) cfg.boot_reps = 0; /* a progress view: the bootstrap never enters a decision */
  struct sw_gate_input in = {
      .pairs = pairs, .n_pairs = n, .baseline_cv = NAN, .baseline_guard_mean = NAN};
  struct sw_gate_result *res = calloc(1, sizeof *res); /* large: keep it off the stack */
  if (!res) {
    free(pairs);
    free(store_idx);
    return sw_err_set(err, SW_ENOMEM, "gate: out of memory");
  }
  int64_t changed = 0;
  rc = binary_changes(s, gate_id, &changed, err);
  in.binary_changed = changed > INT_MAX ? INT_MAX : (int)changed;
  if (!rc) rc = sw_gate_eval(&in, &cfg, res, err);
  if (!rc) {
    *verdict_json = sw_gate_result_to_json(res);
    /* The engine names a flagged run by its place in the input; readers (the report) want the
     * pair's index in the store. */
    size_t k;
    json_t *f;
    json_array_foreach(json_object_get(json_object_get(*verdict_json, "model_size"), "flagged"), k,
                       f) {
      json_int_t i = json_integer_value(json_object_get(f, "pair"));
      if (i >= 0 && (size_t)i < n) json_object_set_new(f, "pair_index", json_integer(store_idx[i]));
    }
    look->verdict = res->verdict;
    look->decision = res->seq.decision;
    look->n_reruns = size_reruns(&in, store_idx, res, look->rerun_idx, look->rerun_ord);
    if (!*verdict_json) rc = sw_err_set(err, SW_ENOMEM, "gate JSON: out of memory");
  }
  free(res);
  free(pairs);
  free(store_idx);
  return rc;
}

static int gate_finish(sw_sched_t *s, int64_t gate_id, int64_t sweep_id, const char *name,
                       const char *status, json_t *verdict_json, const char *verdict, int64_t now,
                       struct sw_err *err) {
  static const char *const SQL =
      "UPDATE gates SET status = ?2, verdict = ?3, verdict_json = ?4, looks = looks + 1, "
      "finished_ms = ?5 WHERE id = ?1";
  static const char *const SQL_ABANDON = "UPDATE pairs SET status = 'abandoned', finished_ms = ?2 "
                                         "WHERE gate_id = ?1 AND status = 'pending'";
  char *text = verdict_json ? json_dumps(verdict_json, JSON_COMPACT) : NULL;
  sqlite3_stmt *st;
  int rc = sw_store_stmt(s->store, SQL, &st, err);
  if (!rc) {
    sqlite3_bind_int64(st, 1, gate_id);
    sqlite3_bind_text(st, 2, status, -1, SQLITE_STATIC);
    if (verdict)
      sqlite3_bind_text(st, 3, verdict, -1, SQLITE_STATIC);
    else
      sqlite3_bind_null(st, 3);
    if (text)
      sqlite3_bind_text(st, 4, text, -1, SQLITE_STATIC);
    else
      sqlite3_bind_null(st, 4);
    sqlite3_bind_int64(st, 5, now);
    rc = step_done(s, st, "concluding gate", err);
  }
  free(text);
  if (!rc && !(rc = sw_store_stmt(s->store, SQL_ABANDON, &st, err))) {
    sqlite3_bind_int64(st, 1, gate_id);
    sqlite3_bind_int64(st, 2, now);
    rc = step_done(s, st, "abandoning pending pairs", err);
  }
  if (!rc) {
    char line[200];
    snprintf(line, sizeof line, "gate '%s': %s", name, verdict ? verdict : status);
    rc = sw_store_event(s->store, now, sweep_id, "verdict", line, err);
  }
  return rc;
}

/* Records the latest judgement of a running gate: a sequential look (counted in looks) or, for
 * a fixed-n gate, a progress view for status and reports (not a look: nothing is decided). */
static int gate_interim(sw_sched_t *s, int64_t gate_id, json_t *verdict_json, int is_look,
                        struct sw_err *err) {
  static const char *const SQL =
      "UPDATE gates SET verdict_json = ?2, looks = looks + ?3 WHERE id = ?1";
  char *text = json_dumps(verdict_json, JSON_COMPACT);
  if (!text) return sw_err_set(err, SW_ENOMEM, "gate JSON: out of memory");
  sqlite3_stmt *st;
  int rc = sw_store_stmt(s->store, SQL, &st, err);
  if (!rc) {
    sqlite3_bind_int64(st, 1, gate_id);
    sqlite3_bind_text(st, 2, text, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 3, is_look);
    rc = step_done(s, st, "recording a look", err);
  }
  free(text);
  return rc;
}

/* A gate that concludes with fewer usable pairs than planned says so: "incomplete" in its verdict
 * JSON ({usable, planned, failed, invalid}) and a reason naming why (pairs failed for good after
 * their attempts, pairs whose runs were invalid). The verdict itself stands on the pairs it had. */
static int mark_incomplete(sw_sched_t *s, int64_t gate_id, int n_target, json_t *vj,
                           struct sw_err *err) {
  static const char *const SQL =
      "SELECT COALESCE(SUM(p.status = 'done' AND NOT EXISTS (SELECT 1 FROM runs r JOIN attempts a "
      "ON a.run_id = r.id AND a.attempt = p.attempt WHERE r.pair_id = p.id AND a.status != 'ok')), "
      "0), COALESCE(SUM(p.status = 'failed'), 0), COALESCE(SUM(p.status = 'done' AND EXISTS "
      "(SELECT 1 FROM runs r JOIN attempts a ON a.run_id = r.id AND a.attempt = p.attempt WHERE "
      "r.pair_id = p.id AND a.status = 'invalid')), 0) FROM pairs p WHERE p.gate_id = ?1";
  int64_t c[3];
  int rc = row_ints(s, SQL, gate_id, 0, c, 3, err);
  if (rc || c[0] >= n_target) return rc;
  json_object_set_new(vj, "incomplete",
                      json_pack("{s:I,s:i,s:I,s:I}", "usable", (json_int_t)c[0], "planned",
                                n_target, "failed", (json_int_t)c[1], "invalid", (json_int_t)c[2]));
  json_t *reasons = json_object_get(vj, "reasons");
  char text[SW_GATE_REASON_MAX];
  snprintf(text, sizeof text,
           "incomplete: %lld of %d planned pairs usable (%lld failed after every attempt, %lld "
           "with an invalid run); the verdict rests on the pairs there are",
           (long long)c[0], n_target, (long long)c[1], (long long)c[2]);
  if (json_is_array(reasons)) json_array_append_new(reasons, json_string(text));
  return 0;
}

/* Gate decision for a gate after one of its pairs changed; concludes the gate and the sweep. */
static int gate_decide(sw_sched_t *s, int64_t gate_id, int64_t now, struct sw_err *err) {
  static const char *const SQL_GATE =
      "SELECT status, n_target, n_max, metric, sweep_id, name FROM gates WHERE id = ?1";
  static const char *const SQL_COUNTS =
      "SELECT COALESCE(SUM(status = 'done'), 0), COALESCE(SUM(status IN ('pending', 'leased')), "
      "0), COALESCE(SUM(is_replacement = 0), 0), COALESCE(MAX(idx), -1) FROM pairs WHERE gate_id "
      "= ?1";
  sqlite3_stmt *st;
  int rc = sw_store_stmt(s->store, SQL_GATE, &st, err);
  if (rc) return rc;
  sqlite3_bind_int64(st, 1, gate_id);
  if (sqlite3_step(st) != SQLITE_ROW) {
    sqlite3_reset(st);
    return sw_store_fail(s->store, err, "reading gate");
  }
  int running = strcmp((const char *)sqlite3_column_text(st, 0), "running") == 0;
  int n_target = sqlite3_column_int(st, 1), n_max = sqlite3_column_int(st, 2);
  char metric[64], name[SW_GATE_NAME_MAX];
  snprintf(metric, sizeof metric, "%s", (const char *)sqlite3_column_text(st, 3));
  int64_t sweep_id = sqlite3_column_int64(st, 4);
  snprintf(name, sizeof name, "%s", (const char *)sqlite3_column_text(st, 5));
  sqlite3_reset(st);
  const struct sweep_mem *sw = sched_sweep(s, sweep_id);
  if (!running || !sw) return 0;
  int64_t c[4];
  if ((rc = row_ints(s, SQL_COUNTS, gate_id, 0, c, 4, err))) return rc;
  int64_t done = c[0], open = c[1], regular = c[2], max_idx = c[3];
  /* Fixed n decides once everything is in, a sequential gate looks from n pairs on; before
   * that, the engine's view of the pairs so far is kept for progress reports only. */
  int progress_only = open > 0 && (!sw->spec->pairs.sequential || done < n_target);

  json_t *vj = NULL;
  struct gate_look look = {.verdict = SW_GATE_INCONCLUSIVE, .decision = SW_GATE_SEQ_NONE};
  struct sw_err gerr = {0};
  int grc = done > 0 ? gate_verdict(s, sw, gate_id, name, metric, n_target, n_max, progress_only,
                                    &vj, &look, &gerr)
                     : sw_err_set(&gerr, SW_EINVAL, "no completed pairs");
  enum sw_gate_verdict verdict = look.verdict;
  enum sw_gate_seq_decision decision = look.decision;
  if (grc == SW_EDB || grc == SW_ENOMEM) {
    sw_err_set(err, grc, "%s", gerr.msg);
    return grc;
  }
  if (grc) { /* the engine cannot judge these pairs (yet) */
    if (progress_only || (sw->spec->pairs.sequential && open > 0)) return 0;
    json_t *fj =
        json_pack("{s:s,s:s,s:[s]}", "name", name, "verdict", "inconclusive", "reasons", gerr.msg);
    rc = gate_finish(s, gate_id, sweep_id, name, "failed", fj, NULL, now, err);
    json_decref(fj);
    return rc;
  }
  /* A pair whose run trained a model of another size than its arm's others (the engine's
   * model-size check) is rerun once, as a contaminated one is; the gate waits for the rerun. */
  int reruns = 0;
  for (int k = 0; k < look.n_reruns && sw->spec->contamination.rerun_once; k++) {
    rc = add_replacement(s, 0, sweep_id, gate_id, 0, look.rerun_idx[k],
                         look.rerun_ord[k] == SW_GATE_ON_OFF ? "on-off" : "off-on",
                         "trained a model of another size than its arm's", now, err);
    if (rc) {
      json_decref(vj);
      return rc;
    }
    reruns++;
  }
  if (progress_only || reruns) {
    rc = gate_interim(s, gate_id, vj, 0, err);
    json_decref(vj);
    return rc;
  }
  int conclude = !sw->spec->pairs.sequential;
  if (sw->spec->pairs.sequential) {
    if (decision == SW_GATE_SEQ_STOP_DECISIVE || decision == SW_GATE_SEQ_STOP_FUTILE ||
        decision == SW_GATE_SEQ_STOP_MAX)
      conclude = 1;
    else if (open == 0 && regular >= n_max)
      conclude = 1;
    else if (open == 0) {
      /* Inconclusive after every pair so far: extend by one, in the counterbalanced order. */
      rc = sched_insert_gate_pair(s, sweep_id, gate_id, (int)max_idx + 1,
                                  sched_pair_order(sw, (int)regular), -1, now, err);
      if (!rc) {
        char text[160];
        snprintf(text, sizeof text, "gate '%s' inconclusive after %lld pairs: extended", name,
                 (long long)done);
        rc = sw_store_event(s->store, now, sweep_id, "extend", text, err);
      }
    }
  }
  if (!rc && conclude) rc = mark_incomplete(s, gate_id, n_target, vj, err);
  if (!rc)
    rc = conclude ? gate_finish(s, gate_id, sweep_id, name, "done", vj,
                                sw_gate_verdict_name(verdict), now, err)
                  : gate_interim(s, gate_id, vj, 1, err);
  json_decref(vj);
  return rc;
}

int sched_sweep_check(sw_sched_t *s, int64_t sweep_id, int64_t now, struct sw_err *err) {
  static const char *const SQL_GATES =
      "SELECT COALESCE(SUM(status = 'running'), 0), COALESCE(SUM(status = 'done'), 0) FROM gates "
      "WHERE sweep_id = ?1";
  static const char *const SQL_PAIRS =
      "SELECT COALESCE(SUM(status IN ('pending', 'leased')), 0), COALESCE(SUM(status = "
      "'leased'), 0), COALESCE(SUM(status = 'done'), 0) FROM pairs WHERE sweep_id = ?1";
  static const char *const SQL_FINISH = "UPDATE sweeps SET status = ?2, finished_ms = ?3 WHERE id "
                                        "= ?1 AND status = 'running'";
  struct sweep_mem *sw = sched_sweep(s, sweep_id);
  if (!sw) return 0;
  int64_t p[3], g[2] = {0, 0};
  int rc = row_ints(s, SQL_PAIRS, sweep_id, 0, p, 3, err);
  if (rc) return rc;
  int finished, ok;
  if (sw->is_grid) {
    finished = p[0] == 0;
    ok = p[2] > 0;
  } else {
    if ((rc = row_ints(s, SQL_GATES, sweep_id, 0, g, 2, err))) return rc;
    /* A gate that stopped early may still have a pair running: its worker finishes it and the
     * result is kept, so the sweep ends when that lease is over too. */
    finished = g[0] == 0 && p[1] == 0;
    ok = g[1] > 0;
  }
  if (!finished) return 0;
  sqlite3_stmt *st;
  if ((rc = sw_store_stmt(s->store, SQL_FINISH, &st, err))) return rc;
  sqlite3_bind_int64(st, 1, sweep_id);
  sqlite3_bind_text(st, 2, ok ? "done" : "failed", -1, SQLITE_STATIC);
  sqlite3_bind_int64(st, 3, now);
  if ((rc = step_done(s, st, "finishing sweep", err))) return rc;
  sw->finishing = 1;
  return sw_store_event(s->store, now, sweep_id, "finish", ok ? "sweep done" : "sweep failed", err);
}
