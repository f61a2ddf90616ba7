/* sw_sched.c: the scheduler's top layer, its entry points: workers, leases (next, renew, done,
 * expiry), results, submission, cancellation and the lifecycle; every transaction is opened
 * and committed here. It calls down (sw_sched.h draws the layers): a result's consequences
 * into sw_sched_gate.c, a new sweep's rows into sw_sched_submit.c, the sweep mirror into
 * sw_sched_mem.c. The progress view is sw_sched_status.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __GLIBC__ /* defined by the headers above */
#include <malloc.h>
#endif

#include "sw_result.h"
#include "sw_sched_int.h"
#include "sw_sha256.h"

void sw_sched_opts_default(struct sw_sched_opts *opts) {
  memset(opts, 0, sizeof *opts);
  opts->lease_ttl_ms = 60000;
  opts->max_attempts = 3;
  opts->worker_expire_ms = SW_SCHED_WORKER_EXPIRE_MS;
  opts->workers_offline_max = SW_SCHED_WORKERS_OFFLINE_MAX;
}

/* ---- sweeps ------------------------------------------------------------------------------- */

/* After a commit: drops flagged sweeps whose stored status is no longer 'running' (a flag left
 * by a rolled-back transaction is simply cleared). */
static void reap(sw_sched_t *s) {
  static const char *const SQL = "SELECT status = 'running' FROM sweeps WHERE id = ?1";
  for (int i = 0; i < s->n_sweeps;) {
    struct sweep_mem *sw = &s->sweeps[i];
    if (!sw->finishing) {
      i++;
      continue;
    }
    sw->finishing = 0;
    sqlite3_stmt *st;
    int running = 1;
    if (sw_store_stmt(s->store, SQL, &st, NULL) == 0) {
      sqlite3_bind_int64(st, 1, sw->id);
      if (sqlite3_step(st) == SQLITE_ROW) running = sqlite3_column_int(st, 0);
      sqlite3_reset(st);
    }
    if (running) {
      i++;
      continue;
    }
    sched_sweep_drop(s, sw->id); /* moves the last sweep into slot i */
  }
}

/* ---- workers ------------------------------------------------------------------------------ */

static unsigned hash_str(const char *p) {
  unsigned h = 2166136261u; /* FNV-1a */
  for (; *p; p++) h = (h ^ (unsigned char)*p) * 16777619u;
  return h;
}

static int find_worker(const sw_sched_t *s, const char *id) {
  if (!s->index_cap) return -1;
  unsigned mask = (unsigned)s->index_cap - 1;
  for (unsigned i = hash_str(id) & mask;; i = (i + 1) & mask) {
    int w = s->worker_index[i];
    if (w < 0) return -1;
    if (strcmp(s->workers[w].id, id) == 0) return w;
  }
}

/* Fills idx (cap slots, a power of two) with every worker's index and makes it the id index. */
static void index_install(sw_sched_t *s, int *idx, int cap) {
  for (int i = 0; i < cap; i++) idx[i] = -1;
  for (int w = 0; w < s->n_workers; w++) {
    unsigned i = hash_str(s->workers[w].id) & (unsigned)(cap - 1);
    while (idx[i] >= 0) i = (i + 1) & (unsigned)(cap - 1);
    idx[i] = w;
  }
  free(s->worker_index);
  s->worker_index = idx;
  s->index_cap = cap;
}

static int reindex(sw_sched_t *s, int cap) {
  int *idx = malloc((size_t)cap * sizeof *idx);
  if (!idx) return -1;
  index_install(s, idx, cap);
  return 0;
}

/* Frees what a worker entry owns. */
static void worker_free(struct worker_mem *wm) {
  free(wm->id);
  free(wm->key);
  json_decref(wm->labels);
  json_decref(wm->fingerprint);
}

/* Parses a JSON object text, or gives an empty object (NULL / unparsable / not an object). */
static json_t *object_or_empty(const char *text) {
  json_t *v = text ? json_loads(text, 0, NULL) : NULL;
  if (json_is_object(v)) return v;
  json_decref(v);
  return json_object();
}

/* The machine a worker runs on, for spreading: its fingerprint's hostname, else its id. */
static const char *machine_name(const json_t *fingerprint, const char *id) {
  const json_t *h = json_object_get(fingerprint, "hostname");
  return json_is_string(h) && json_string_length(h) ? json_string_value(h) : id;
}

/* Sets worker w's machine to the first worker (lowest index, w itself at worst) with the same
 * machine name. O(workers); called when a worker is added. */
static void machine_assign(sw_sched_t *s, int w) {
  const char *name = machine_name(s->workers[w].fingerprint, s->workers[w].id);
  int x = 0;
  while (x < w && strcmp(machine_name(s->workers[x].fingerprint, s->workers[x].id), name) != 0) x++;
  s->workers[w].machine = x;
}

/* Recomputes every worker's machine: after a known worker's hostname changed, workers that
 * pointed at it may need another first worker. O(workers^2), but only on such a change. */
static void machine_assign_all(sw_sched_t *s) {
  for (int w = 0; w < s->n_workers; w++) machine_assign(s, w);
}

/* Finds or adds a worker in memory; returns its index or -1 on out of memory. */
static int ensure_worker(sw_sched_t *s, const char *id) {
  int w = find_worker(s, id);
  if (w >= 0) return w;
  if (sched_grow((void **)&s->workers, &s->cap_workers, s->n_workers + 1, sizeof *s->workers))
    return -1;
  struct worker_mem *wm = &s->workers[s->n_workers];
  memset(wm, 0, sizeof *wm);
  if (!(wm->id = strdup(id))) return -1;
  wm->labels = json_object();
  wm->fingerprint = json_object();
  wm->machine = s->n_workers; /* its own until a fingerprint names a host (machine_assign) */
  s->n_workers++;
  if (s->n_workers * 2 > s->index_cap) {
    int cap = s->index_cap ? s->index_cap : 64;
    while (s->n_workers * 2 > cap) cap *= 2;
    if (reindex(s, cap)) {
      s->n_workers--;
      worker_free(wm);
      return -1;
    }
  } else {
    unsigned mask = (unsigned)s->index_cap - 1, i = hash_str(id) & mask;
    while (s->worker_index[i] >= 0) i = (i + 1) & mask;
    s->worker_index[i] = s->n_workers - 1;
  }
  return s->n_workers - 1;
}

int sw_sched_worker_hello(sw_sched_t *s, const char *worker_id, const char *fingerprint_json,
                          const char *labels_json, int64_t now, struct sw_err *err) {
  static const char *const SQL =
      "INSERT INTO workers (id, fingerprint_json, labels_json, first_seen_ms, last_seen_ms, "
      "state) VALUES (?1, ?2, ?3, ?4, ?4, 'online') ON CONFLICT (id) DO UPDATE SET "
      "fingerprint_json = ?2, labels_json = ?3, last_seen_ms = ?4, state = 'online'";
  if (!worker_id || !worker_id[0]) return sw_err_set(err, SW_EINVAL, "worker hello without id");
  int known = find_worker(s, worker_id) >= 0;
  int w = ensure_worker(s, worker_id);
  if (w < 0) return sw_err_set(err, SW_ENOMEM, "registering worker: out of memory");
  struct worker_mem *wm = &s->workers[w];
  json_t *old_fp = wm->fingerprint;
  json_decref(wm->labels);
  wm->labels = object_or_empty(labels_json);
  wm->fingerprint = object_or_empty(fingerprint_json);
  /* A new worker is the last one, so only its own machine changes; a known worker that moved to
   * another host may have been the first worker of its old machine. */
  if (!known)
    machine_assign(s, w);
  else if (strcmp(machine_name(old_fp, wm->id), machine_name(wm->fingerprint, wm->id)) != 0)
    machine_assign_all(s);
  json_decref(old_fp);
  wm->online = 1;
  wm->last_seen = now;
  char *fp = json_dumps(wm->fingerprint, JSON_COMPACT), *lb = json_dumps(wm->labels, JSON_COMPACT);
  sqlite3_stmt *st;
  int rc = sw_store_stmt(s->store, SQL, &st, err);
  if (!rc) {
    sqlite3_bind_text(st, 1, worker_id, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, fp ? fp : "{}", -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, lb ? lb : "{}", -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 4, now);
    if (sqlite3_step(st) != SQLITE_DONE) rc = sw_store_fail(s->store, err, "recording worker");
    sqlite3_reset(st);
  }
  free(fp);
  free(lb);
  return rc;
}

int sw_sched_worker_gone(sw_sched_t *s, const char *worker_id, int64_t now, struct sw_err *err) {
  static const char *const SQL =
      "UPDATE workers SET state = 'offline', last_seen_ms = ?2 WHERE id = ?1";
  int w = find_worker(s, worker_id);
  if (w < 0) return sw_err_set(err, SW_ENOTFOUND, "unknown worker '%s'", worker_id);
  s->workers[w].online = 0;
  sqlite3_stmt *st;
  int rc = sw_store_stmt(s->store, SQL, &st, err);
  if (rc) return rc;
  sqlite3_bind_text(st, 1, worker_id, -1, SQLITE_STATIC);
  sqlite3_bind_int64(st, 2, now);
  rc = sqlite3_step(st);
  sqlite3_reset(st);
  return rc == SQLITE_DONE ? 0 : sw_store_fail(s->store, err, "marking worker offline");
}

int sw_sched_worker_key(sw_sched_t *s, const char *worker_id, char *buf, size_t len,
                        struct sw_err *err) {
  static const char *const SQL = "SELECT key FROM workers WHERE id = ?1 AND key IS NOT NULL";
  int w = find_worker(s, worker_id);
  char *key = w >= 0 ? s->workers[w].key : NULL, *loaded = NULL;
  if (!key) {
    sqlite3_stmt *st;
    int rc = sw_store_stmt(s->store, SQL, &st, err);
    if (rc) return rc;
    sqlite3_bind_text(st, 1, worker_id, -1, SQLITE_STATIC);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) loaded = strdup((const char *)sqlite3_column_text(st, 0));
    sqlite3_reset(st);
    if (rc == SQLITE_DONE) return 0;
    if (rc != SQLITE_ROW) return sw_store_fail(s->store, err, "reading worker key");
    if (!loaded) return sw_err_set(err, SW_ENOMEM, "worker key: out of memory");
    key = loaded;
    if (w >= 0) s->workers[w].key = loaded; /* cached: the binding never changes */
  }
  size_t n = strlen(key);
  if (n < len) memcpy(buf, key, n + 1);
  if (w < 0) free(loaded);
  return n < len ? 1 : sw_err_set(err, SW_EINVAL, "worker key longer than %zu bytes", len);
}

int sw_sched_worker_bind(sw_sched_t *s, const char *worker_id, const char *key,
                         struct sw_err *err) {
  static const char *const SQL = "UPDATE workers SET key = ?2 WHERE id = ?1 AND key IS NULL";
  int w = find_worker(s, worker_id);
  if (w < 0) return sw_err_set(err, SW_ENOTFOUND, "unknown worker '%s'", worker_id);
  if (s->workers[w].key) return 0;
  sqlite3_stmt *st;
  int rc = sw_store_stmt(s->store, SQL, &st, err);
  if (rc) return rc;
  sqlite3_bind_text(st, 1, worker_id, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 2, key, -1, SQLITE_STATIC);
  rc = sqlite3_step(st);
  sqlite3_reset(st);
  if (rc != SQLITE_DONE) return sw_store_fail(s->store, err, "binding worker key");
  char buf[256];
  rc = sw_sched_worker_key(s, worker_id, buf, sizeof buf, err); /* caches what the store holds */
  return rc < 0 ? rc : 0;
}

int sw_sched_workers_in_memory(const sw_sched_t *s) { return s->n_workers; }

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

/* Drops from memory the workers offline without a lease for longer than worker_expire_ms, and
 * beyond workers_offline_max offline ones the longest offline:
 * compacts the array (order kept), renumbers the leases' and machines' indices and rebuilds the
 * id index at a size fitting what is left. Nothing changes when memory for the new index cannot
 * be had (the next tick tries again). O(workers). */
static void workers_expire(sw_sched_t *s, int64_t now) {
  int n = s->n_workers, gone = 0;
  unsigned char *pin = calloc((size_t)n + 1, 1);
  if (!pin) return;
  for (int i = 0; i < s->n_leases; i++) pin[s->leases[i].worker] = 1;
  int offline = 0;
  for (int w = 0; w < n; w++) {
    const struct worker_mem *wm = &s->workers[w];
    pin[w] |= wm->online || wm->lease_id;
    offline += !pin[w];
  }
  /* Offline workers seen after `keep_after` stay: those within the expiry, and at most
   * workers_offline_max of them (the most recently seen). */
  int64_t keep_after = now - s->opts.worker_expire_ms;
  if (offline > s->opts.workers_offline_max) {
    int64_t *seen = malloc((size_t)offline * sizeof *seen);
    if (!seen) {
      free(pin);
      return;
    }
    int k = 0;
    for (int w = 0; w < n; w++)
      if (!pin[w]) seen[k++] = s->workers[w].last_seen;
    qsort(seen, (size_t)k, sizeof *seen, cmp_i64);
    int64_t t = seen[k - s->opts.workers_offline_max - 1]; /* the newest of those to drop */
    if (t > keep_after) keep_after = t;
    free(seen);
  }
  for (int w = 0; w < n; w++) {
    if (!pin[w] && s->workers[w].last_seen > keep_after) pin[w] = 1;
    gone += !pin[w];
  }
  int cap = 64;
  while ((n - gone) * 2 > cap) cap *= 2;
  int *map = gone ? malloc((size_t)n * sizeof *map) : NULL;
  int *idx = gone ? malloc((size_t)cap * sizeof *idx) : NULL;
  if (!gone || !map || !idx) {
    free(pin);
    free(map);
    free(idx);
    return;
  }
  int kept = 0;
  for (int w = 0; w < n; w++) {
    struct worker_mem *wm = &s->workers[w];
    if (!pin[w]) {
      worker_free(wm);
      map[w] = -1;
      continue;
    }
    map[w] = kept;
    if (kept != w) s->workers[kept] = *wm;
    kept++;
  }
  s->n_workers = kept;
  for (int i = 0; i < s->n_leases; i++) s->leases[i].worker = map[s->leases[i].worker];
  /* A machine's representative is its first worker; where that one left, the first remaining
   * worker of the machine takes over (found by machine_assign, which looks only at lower
   * indices, all renumbered by then). */
  for (int w = 0; w < kept; w++) {
    int m = map[s->workers[w].machine];
    if (m >= 0)
      s->workers[w].machine = m;
    else
      machine_assign(s, w);
  }
  index_install(s, idx, cap);
  if (kept < s->cap_workers / 4) { /* give the array back too, keeping room to grow */
    int nc = kept * 2 > 16 ? kept * 2 : 16;
    struct worker_mem *nw = realloc(s->workers, (size_t)nc * sizeof *nw);
    if (nw) {
      s->workers = nw;
      s->cap_workers = nc;
    }
  }
  free(map);
  free(pin);
#ifdef __GLIBC__
  /* Many workers' fingerprints and labels were freed at once: give the pages back, so that the
   * coordinator's resident size follows the registry down. */
  if (gone >= 100) malloc_trim(0);
#endif
}

/* 1 when the worker may run pairs of the sweep: a worker that lists its runners must offer the
 * spec's, and the spec's placement (sw_spec_placement_eligible, the one placement rule) must
 * hold. */
static int eligible(const struct sweep_mem *sw, const struct worker_mem *w) {
  const json_t *caps = json_object_get(w->fingerprint, "capabilities");
  if (json_is_array(caps) && json_array_size(caps)) {
    size_t i;
    const json_t *c;
    int has = 0;
    json_array_foreach(caps, i, c) {
      if (json_is_string(c) && strcmp(json_string_value(c), sw->runner) == 0) has = 1;
    }
    if (!has) return 0;
  }
  return sw_spec_placement_eligible(&sw->spec->placement, w->id, w->fingerprint, w->labels);
}

/* ---- leases ------------------------------------------------------------------------------- */

static struct lease_mem *find_lease(sw_sched_t *s, int64_t lease_id) {
  for (int i = 0; i < s->n_leases; i++)
    if (s->leases[i].id == lease_id) return &s->leases[i];
  return NULL;
}

/* Puts an active lease in memory and makes it its worker's (room reserved by the caller with
 * grow, so that nothing can fail once the store has committed it). */
static void lease_add(sw_sched_t *s, struct lease_mem l) {
  s->leases[s->n_leases++] = l;
  s->workers[l.worker].lease_id = l.id;
}

/* Removes the active lease of a pair from memory (worker becomes idle); no store writes. */
static void lease_forget(sw_sched_t *s, int64_t lease_id) {
  for (int i = 0; i < s->n_leases; i++) {
    if (s->leases[i].id != lease_id) continue;
    struct worker_mem *w = &s->workers[s->leases[i].worker];
    if (w->lease_id == lease_id) w->lease_id = 0;
    s->leases[i] = s->leases[--s->n_leases];
    return;
  }
}

const char *sw_sched_lease_worker(sw_sched_t *s, int64_t lease_id) {
  struct lease_mem *l = find_lease(s, lease_id);
  return l ? s->workers[l->worker].id : NULL;
}

void sw_lease_clear(struct sw_lease *lease) {
  if (!lease) return;
  for (int i = 0; i < lease->n_runs && i < SW_SCHED_MAX_RUNS; i++) free(lease->runs[i].config_json);
  free(lease->trainer_json);
  free(lease->scene_json);
  free(lease->contamination_json);
  memset(lease, 0, sizeof *lease);
}

/* The pair's status as stored ('leased', 'done', ...), into buf. */
static int pair_status(sw_sched_t *s, int64_t pair_id, char *buf, size_t len, struct sw_err *err) {
  static const char *const SQL = "SELECT status FROM pairs WHERE id = ?1";
  sqlite3_stmt *st;
  int rc = sw_store_stmt(s->store, SQL, &st, err);
  if (rc) return rc;
  sqlite3_bind_int64(st, 1, pair_id);
  rc = sqlite3_step(st);
  if (rc == SQLITE_ROW) snprintf(buf, len, "%s", (const char *)sqlite3_column_text(st, 0));
  sqlite3_reset(st);
  if (rc == SQLITE_ROW) return 0;
  if (rc == SQLITE_DONE)
    return sw_err_set(err, SW_ENOTFOUND, "pair %lld not found", (long long)pair_id);
  return sw_store_fail(s->store, err, "reading pair status");
}

/* Ends an active lease whose holder is finished with it (LeaseDone, or a Ready while holding
 * it): when the pair still waits for results, it is re-queued. One transaction. */
static int lease_finish(sw_sched_t *s, struct lease_mem *l, int64_t now, const char *why,
                        struct sw_err *err) {
  int64_t lease_id = l->id, pair_id = l->pair_id, sweep_id = l->sweep_id;
  char status[16] = "";
  int rc = sw_store_begin(s->store, err);
  if (rc) return rc;
  rc = sched_lease_close_db(s, lease_id, "done", now, err);
  if (!rc) rc = pair_status(s, pair_id, status, sizeof status, err);
  if (!rc && strcmp(status, "leased") == 0) rc = sched_pair_requeue(s, pair_id, now, why, err);
  if (!rc) rc = sched_sweep_check(s, sweep_id, now, err);
  if (!rc) rc = sw_store_commit(s->store, err);
  if (rc) {
    sw_store_rollback(s->store);
    return rc;
  }
  lease_forget(s, lease_id);
  reap(s);
  return 0;
}

/* Fairness order of active sweeps: least recently served first, then higher priority, then
 * older. Small n (active sweeps), so an insertion sort of indices is enough. */
static void sweep_order(const sw_sched_t *s, int *order) {
  for (int i = 0; i < s->n_sweeps; i++) {
    int j = i;
    const struct sweep_mem *a = &s->sweeps[i];
    while (j > 0) {
      const struct sweep_mem *b = &s->sweeps[order[j - 1]];
      int before = a->served != b->served       ? a->served < b->served
                   : a->priority != b->priority ? a->priority > b->priority
                                                : a->id < b->id;
      if (!before) break;
      order[j] = order[j - 1];
      j--;
    }
    order[j] = i;
  }
}

/* Per-worker pair counts of one gate (pairs leased or done), for the spread rule, into cnt
 * indexed like sched->workers (n_workers entries, zeroed here); spread_check sums them per
 * machine. */
static int gate_counts(sw_sched_t *s, int64_t gate_id, int *cnt, struct sw_err *err) {
  static const char *const SQL =
      "SELECT worker_id, COUNT(*) FROM pairs WHERE gate_id = ?1 AND worker_id IS NOT NULL AND "
      "status IN ('leased', 'done') GROUP BY worker_id";
  memset(cnt, 0, (size_t)s->n_workers * sizeof *cnt);
  sqlite3_stmt *st;
  int rc = sw_store_stmt(s->store, SQL, &st, err);
  if (rc) return rc;
  sqlite3_bind_int64(st, 1, gate_id);
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    int w = find_worker(s, (const char *)sqlite3_column_text(st, 0));
    if (w >= 0) cnt[w] = sqlite3_column_int(st, 1);
  }
  sqlite3_reset(st);
  return rc == SQLITE_DONE ? 0 : sw_store_fail(s->store, err, "counting pairs per worker");
}

/* Spread: how many pairs of the gate this worker's machine has, and whether an idle, online,
 * eligible worker on a machine with fewer exists (then this worker leaves the gate's next pair
 * to that one). Counting per machine keeps two GPUs of one host from taking two pairs while
 * another host idles. O(workers). */
static int spread_check(sw_sched_t *s, const struct sweep_mem *sw, int64_t gate_id, int w,
                        int *mine, int *hold, struct sw_err *err) {
  int n = s->n_workers;
  int *cnt = malloc(2 * (size_t)n * sizeof *cnt);
  if (!cnt) return sw_err_set(err, SW_ENOMEM, "spread counts: out of memory");
  int *mcnt = cnt + n; /* per machine, indexed by the machine's first worker */
  int rc = gate_counts(s, gate_id, cnt, err);
  if (rc) {
    free(cnt);
    return rc;
  }
  memset(mcnt, 0, (size_t)n * sizeof *mcnt);
  for (int x = 0; x < n; x++) mcnt[s->workers[x].machine] += cnt[x];
  *mine = mcnt[s->workers[w].machine];
  *hold = 0;
  const struct sw_spec_placement *pl = &sw->spec->placement;
  if (pl->spread && !(pl->pin && pl->pin[0]) && *mine > 0) {
    for (int x = 0; x < n && !*hold; x++) {
      const struct worker_mem *p = &s->workers[x];
      if (x == w || !p->online || p->lease_id) continue;
      if (mcnt[p->machine] < *mine && eligible(sw, p)) *hold = 1;
    }
  }
  free(cnt);
  return 0;
}

/* Chooses the pending pair of a sweep for worker w: 1 and *pair_id, or 0 when none suits. */
static int pick_pair(sw_sched_t *s, const struct sweep_mem *sw, int w, int64_t *pair_id,
                     struct sw_err *err) {
  static const char *const SQL =
      "SELECT gate_id, MIN(idx), id FROM pairs WHERE sweep_id = ?1 AND status = 'pending' "
      "GROUP BY gate_id ORDER BY gate_id";
  sqlite3_stmt *st;
  int rc = sw_store_stmt(s->store, SQL, &st, err);
  if (rc) return rc;
  sqlite3_bind_int64(st, 1, sw->id);
  /* Candidates are copied out first: spread_check runs other statements. */
  int64_t cand_gate[64], cand_pair[64];
  int n = 0;
  while (n < 64 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
    cand_gate[n] = sqlite3_column_int64(st, 0);
    cand_pair[n++] = sqlite3_column_int64(st, 2);
  }
  sqlite3_reset(st);
  if (rc != SQLITE_ROW && rc != SQLITE_DONE)
    return sw_store_fail(s->store, err, "finding pending pairs");
  int best = -1, best_mine = 0;
  for (int i = 0; i < n; i++) {
    if (cand_gate[i] == 0) { /* grid run: no gate to spread */
      best = i;
      break;
    }
    int mine = 0, hold = 0;
    if ((rc = spread_check(s, sw, cand_gate[i], w, &mine, &hold, err))) return rc;
    if (hold) continue;
    if (best < 0 || mine < best_mine) {
      best = i;
      best_mine = mine;
    }
  }
  if (best < 0) return 0;
  *pair_id = cand_pair[best];
  return 1;
}

/* Writes the lease for pair_id to worker w and fills out. One transaction. */
/* Steps st (bound; columns run id, arm, config JSON) into out's runs and resets it. Returns
 * SQLITE_DONE, SQLITE_NOMEM or SQLite's error code. */
static int lease_runs(sqlite3_stmt *st, struct sw_lease *out) {
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW && out->n_runs < SW_SCHED_MAX_RUNS) {
    struct sw_lease_run *r = &out->runs[out->n_runs++];
    r->run_id = sqlite3_column_int64(st, 0);
    snprintf(r->arm, sizeof r->arm, "%s", (const char *)sqlite3_column_text(st, 1));
    if (!(r->config_json = strdup((const char *)sqlite3_column_text(st, 2)))) {
      rc = SQLITE_NOMEM; /* not overwritten by a further step */
      break;
    }
  }
  sqlite3_reset(st);
  return rc;
}

/* The sweep's trainer, scene and contamination texts into out: 0, or -1 out of memory. */
static int lease_sweep_texts(struct sw_lease *out, const struct sweep_mem *sw) {
  out->trainer_json = strdup(sw->trainer_json);
  out->scene_json = strdup(sw->scene_json);
  out->contamination_json = strdup(sw->contamination_json);
  return out->trainer_json && out->scene_json && out->contamination_json ? 0 : -1;
}

static int make_lease(sw_sched_t *s, struct sweep_mem *sw, int w, int64_t pair_id, int64_t now,
                      struct sw_lease *out, struct sw_err *err) {
  static const char *const SQL_PAIR =
      "UPDATE pairs SET status = 'leased', worker_id = ?2 WHERE id = ?1 AND status = 'pending' "
      "RETURNING attempt, gate_id, idx, ord";
  static const char *const SQL_LEASE = "INSERT INTO leases (epoch, worker_id, pair_id, issued_ms, "
                                       "deadline_ms) VALUES (?1, ?2, ?3, ?4, ?5)";
  static const char *const SQL_RUNS =
      "SELECT id, arm, config_json FROM runs WHERE pair_id = ?1 ORDER BY position";
  struct worker_mem *wm = &s->workers[w];
  memset(out, 0, sizeof *out);
  int64_t deadline = now + s->opts.lease_ttl_ms;
  /* Not fsynced: a lease lost to a power cut costs a re-run, never a wrong result. */
  int rc = sw_store_begin_relaxed(s->store, err);
  if (rc) return rc;
  sqlite3_stmt *st;
  if ((rc = sw_store_stmt(s->store, SQL_PAIR, &st, err))) goto fail;
  sqlite3_bind_int64(st, 1, pair_id);
  sqlite3_bind_text(st, 2, wm->id, -1, SQLITE_STATIC);
  if (sqlite3_step(st) != SQLITE_ROW) {
    rc = sw_store_fail(s->store, err, "leasing pair");
    sqlite3_reset(st);
    goto fail;
  }
  out->attempt = sqlite3_column_int(st, 0);
  out->gate_id = sqlite3_column_int64(st, 1);
  out->pair_index = sqlite3_column_int(st, 2);
  snprintf(out->order, sizeof out->order, "%s", (const char *)sqlite3_column_text(st, 3));
  sqlite3_step(st); /* RETURNING completes on the next step */
  sqlite3_reset(st);
  out->epoch = (uint64_t)out->attempt;
  if ((rc = sw_store_stmt(s->store, SQL_LEASE, &st, err))) goto fail;
  sqlite3_bind_int64(st, 1, (sqlite3_int64)out->epoch);
  sqlite3_bind_text(st, 2, wm->id, -1, SQLITE_STATIC);
  sqlite3_bind_int64(st, 3, pair_id);
  sqlite3_bind_int64(st, 4, now);
  sqlite3_bind_int64(st, 5, deadline);
  rc = sqlite3_step(st);
  sqlite3_reset(st);
  if (rc != SQLITE_DONE) {
    rc = sw_store_fail(s->store, err, "inserting lease");
    goto fail;
  }
  out->lease_id = sqlite3_last_insert_rowid(sw_store_db(s->store));
  if ((rc = sw_store_stmt(s->store, SQL_RUNS, &st, err))) goto fail;
  sqlite3_bind_int64(st, 1, pair_id);
  rc = lease_runs(st, out);
  if (rc != SQLITE_DONE || out->n_runs == 0) {
    rc = rc == SQLITE_NOMEM ? sw_err_set(err, SW_ENOMEM, "lease: out of memory")
                            : sw_store_fail(s->store, err, "reading runs of pair");
    goto fail;
  }
  if (sched_grow((void **)&s->leases, &s->cap_leases, s->n_leases + 1, sizeof *s->leases)) {
    rc = sw_err_set(err, SW_ENOMEM, "lease: out of memory");
    goto fail;
  }
  if ((rc = sw_store_commit(s->store, err))) goto fail;
  lease_add(s, (struct lease_mem){.id = out->lease_id,
                                  .epoch = out->epoch,
                                  .worker = w,
                                  .pair_id = pair_id,
                                  .sweep_id = sw->id,
                                  .deadline = deadline});
  out->deadline_ms = deadline;
  out->sweep_id = sw->id;
  out->pair_id = pair_id;
  if (lease_sweep_texts(out, sw)) {
    /* The lease is committed; the worker simply will not get it and it expires normally. */
    sw_lease_clear(out);
    return sw_err_set(err, SW_ENOMEM, "lease: out of memory");
  }
  sw->served = ++s->serve_clock;
  return 1;
fail:
  sw_store_rollback(s->store);
  sw_lease_clear(out);
  return rc;
}

/* The Assign of an active lease again, for its holder: the runs of the lease's epoch that have no
 * stored result yet (a worker that lost its state redoes only those), a deadline renewed from
 * now. Returns 1, or a negative code (the lease stays as it was). */
static int lease_resend(sw_sched_t *s, struct lease_mem *l, int64_t now, struct sw_lease *out,
                        struct sw_err *err) {
  static const char *const SQL_PAIR = "SELECT attempt, COALESCE(gate_id, 0), idx, ord FROM pairs "
                                      "WHERE id = ?1";
  static const char *const SQL_RUNS =
      "SELECT r.id, r.arm, r.config_json FROM runs r WHERE r.pair_id = ?1 AND NOT EXISTS (SELECT "
      "1 FROM attempts a WHERE a.run_id = r.id AND a.attempt = ?2) ORDER BY r.position";
  struct sweep_mem *sw = sched_sweep(s, l->sweep_id);
  if (!sw) return sw_err_set(err, SW_ESTATE, "lease %lld: its sweep is gone", (long long)l->id);
  memset(out, 0, sizeof *out);
  sqlite3_stmt *st;
  int rc = sw_store_stmt(s->store, SQL_PAIR, &st, err);
  if (rc) return rc;
  sqlite3_bind_int64(st, 1, l->pair_id);
  if (sqlite3_step(st) != SQLITE_ROW) {
    sqlite3_reset(st);
    return sw_store_fail(s->store, err, "reading the leased pair");
  }
  out->attempt = sqlite3_column_int(st, 0);
  out->gate_id = sqlite3_column_int64(st, 1);
  out->pair_index = sqlite3_column_int(st, 2);
  snprintf(out->order, sizeof out->order, "%s", (const char *)sqlite3_column_text(st, 3));
  sqlite3_reset(st);
  if ((rc = sw_store_stmt(s->store, SQL_RUNS, &st, err))) return rc;
  sqlite3_bind_int64(st, 1, l->pair_id);
  sqlite3_bind_int64(st, 2, (sqlite3_int64)l->epoch);
  rc = lease_runs(st, out);
  if (rc != SQLITE_DONE || out->n_runs == 0) {
    sw_lease_clear(out);
    return rc == SQLITE_NOMEM ? sw_err_set(err, SW_ENOMEM, "lease: out of memory")
           : rc == SQLITE_DONE
               ? sw_err_set(err, SW_ESTATE, "lease %lld has no run left to do", (long long)l->id)
               : sw_store_fail(s->store, err, "reading runs of pair");
  }
  l->deadline = now + s->opts.lease_ttl_ms;
  out->lease_id = l->id;
  out->epoch = l->epoch;
  out->deadline_ms = l->deadline;
  out->sweep_id = sw->id;
  out->pair_id = l->pair_id;
  if (lease_sweep_texts(out, sw)) {
    sw_lease_clear(out);
    return sw_err_set(err, SW_ENOMEM, "lease: out of memory");
  }
  return 1;
}

int sw_sched_next(sw_sched_t *s, const char *worker_id, int64_t now, struct sw_lease *out,
                  struct sw_err *err) {
  memset(out, 0, sizeof *out);
  int w = find_worker(s, worker_id);
  if (w < 0) return sw_err_set(err, SW_ENOTFOUND, "unknown worker '%s' (no Hello)", worker_id);
  struct worker_mem *wm = &s->workers[w];
  wm->online = 1;
  wm->last_seen = now;
  if (wm->lease_id) {
    /* A worker gives a lease up only by saying so (LeaseDone). A Ready from the holder comes
     * from protocol churn (a reconnect, a coordinator restart, a lost Assign): it gets its lease
     * again, with a fresh term, never a new attempt. */
    struct lease_mem *l = find_lease(s, wm->lease_id);
    if (l && l->deadline < now) {
      /* Past its deadline (the loop's tick has not come round yet, e.g. after a stall): it
       * expires now, whichever event comes first, and the worker gets other work. */
      int rc = sw_sched_tick(s, now, NULL, err);
      if (rc) return rc;
      l = find_lease(s, wm->lease_id);
    }
    if (l) return lease_resend(s, l, now, out, err);
    wm->lease_id = 0;
  }
  int order_small[32];
  int *order = s->n_sweeps <= 32 ? order_small : malloc((size_t)s->n_sweeps * sizeof *order);
  if (!order) return sw_err_set(err, SW_ENOMEM, "next: out of memory");
  sweep_order(s, order);
  int rc = 0;
  for (int i = 0; i < s->n_sweeps && rc == 0; i++) {
    struct sweep_mem *sw = &s->sweeps[order[i]];
    if (!eligible(sw, wm)) continue;
    int64_t pair_id = 0;
    rc = pick_pair(s, sw, w, &pair_id, err);
    if (rc == 1) rc = make_lease(s, sw, w, pair_id, now, out, err);
  }
  if (order != order_small) free(order);
  return rc;
}

int sw_sched_renew(sw_sched_t *s, int64_t lease_id, uint64_t epoch, const char *worker_id,
                   int64_t now, struct sw_err *err) {
  struct lease_mem *l = find_lease(s, lease_id);
  if (!l) return sw_err_set(err, SW_ESTATE, "lease %lld is not active", (long long)lease_id);
  if (l->epoch != epoch || strcmp(s->workers[l->worker].id, worker_id) != 0)
    return sw_err_set(err, SW_ESTATE, "lease %lld epoch %llu is not held by '%s'",
                      (long long)lease_id, (unsigned long long)epoch, worker_id);
  l->deadline = now + s->opts.lease_ttl_ms;
  s->workers[l->worker].last_seen = now;
  return 0;
}

/* ---- results ------------------------------------------------------------------------------ */

/* A result of a lease that expired while its worker was cut off (a partition or a store outage
 * longer than the lease, a frozen process) is finished work: when nobody has taken the pair
 * since (it waits re-queued, as the next attempt, with no result of the old attempt stored) and
 * the worker holds no other lease, the lease comes back to life in the caller's transaction:
 * the pair returns to the old attempt, leased to that worker, the lease is active again with a
 * fresh deadline, and the result is stored as if the lease had never expired. Returns 1
 * (revived; the lease is in memory again, lease_forget undoes that on a rollback), 0 (not
 * revivable: the result is stale) or a negative code. */
static int lease_revive(sw_sched_t *s, const struct sw_run_result *res, int64_t pair_id,
                        int64_t now, struct sw_err *err) {
  static const char *const SQL_CHECK =
      "SELECT p.sweep_id FROM leases l JOIN pairs p ON p.id = l.pair_id WHERE l.id = ?1 AND "
      "l.state = 'expired' AND l.worker_id = ?2 AND l.epoch = ?3 AND l.pair_id = ?4 AND "
      "p.status = 'pending' AND p.attempt = ?3 + 1 AND p.worker_id IS NULL AND NOT EXISTS "
      "(SELECT 1 FROM attempts a JOIN runs r ON r.id = a.run_id WHERE r.pair_id = ?4 AND "
      "a.attempt = ?3)";
  static const char *const SQL_PAIR =
      "UPDATE pairs SET status = 'leased', attempt = ?2, worker_id = ?3 WHERE id = ?1";
  static const char *const SQL_LEASE =
      "UPDATE leases SET state = 'active', closed_ms = NULL, deadline_ms = ?2 WHERE id = ?1";
  if (res->attempt < 1 || (uint64_t)res->attempt != res->epoch) return 0;
  int w = find_worker(s, res->worker_id);
  if (w < 0 || (s->workers[w].lease_id && s->workers[w].lease_id != res->lease_id)) return 0;
  sqlite3_stmt *st;
  int rc = sw_store_stmt(s->store, SQL_CHECK, &st, err);
  if (rc) return rc;
  sqlite3_bind_int64(st, 1, res->lease_id);
  sqlite3_bind_text(st, 2, res->worker_id, -1, SQLITE_STATIC);
  sqlite3_bind_int64(st, 3, (sqlite3_int64)res->epoch);
  sqlite3_bind_int64(st, 4, pair_id);
  rc = sqlite3_step(st);
  int64_t sweep_id = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
  sqlite3_reset(st);
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) return sw_store_fail(s->store, err, "reading lease");
  struct sweep_mem *sw = rc == SQLITE_ROW ? sched_sweep(s, sweep_id) : NULL;
  if (!sw) return 0;
  int64_t deadline = now + s->opts.lease_ttl_ms;
  if ((rc = sw_store_stmt(s->store, SQL_PAIR, &st, err))) return rc;
  sqlite3_bind_int64(st, 1, pair_id);
  sqlite3_bind_int(st, 2, res->attempt);
  sqlite3_bind_text(st, 3, res->worker_id, -1, SQLITE_STATIC);
  rc = sqlite3_step(st);
  sqlite3_reset(st);
  if (rc != SQLITE_DONE) return sw_store_fail(s->store, err, "reviving pair");
  if ((rc = sw_store_stmt(s->store, SQL_LEASE, &st, err))) return rc;
  sqlite3_bind_int64(st, 1, res->lease_id);
  sqlite3_bind_int64(st, 2, deadline);
  rc = sqlite3_step(st);
  sqlite3_reset(st);
  if (rc != SQLITE_DONE) return sw_store_fail(s->store, err, "reviving lease");
  char text[200];
  snprintf(text, sizeof text,
           "lease %lld of worker '%s' revived: its result came after it expired, before anyone "
           "took its pair again",
           (long long)res->lease_id, res->worker_id);
  if ((rc = sw_store_event(s->store, now, sweep_id, "revive", text, err))) return rc;
  if (sched_grow((void **)&s->leases, &s->cap_leases, s->n_leases + 1, sizeof *s->leases))
    return sw_err_set(err, SW_ENOMEM, "lease: out of memory");
  lease_add(s, (struct lease_mem){.id = res->lease_id,
                                  .epoch = res->epoch,
                                  .worker = w,
                                  .pair_id = pair_id,
                                  .sweep_id = sweep_id,
                                  .deadline = deadline});
  return 1;
}

int sw_sched_result(sw_sched_t *s, const struct sw_run_result *res, int64_t now,
                    struct sw_err *err) {
  static const char *const SQL_RUN =
      "SELECT r.pair_id, p.sweep_id FROM runs r JOIN pairs p ON p.id = r.pair_id WHERE r.id = ?1";
  static const char *const SQL_DUP = "SELECT 1 FROM attempts WHERE run_id = ?1 AND attempt = ?2";
  if (!res->worker_id) return sw_err_set(err, SW_EINVAL, "result without worker id");
  if ((res->n_pre && !res->pre) || (res->n_during && !res->during) || res->n_pre < 0 ||
      res->n_during < 0)
    return sw_err_set(err, SW_EINVAL, "result: window counts without samples");
  int revived = 0;
  int rc = sw_store_begin(s->store, err);
  if (rc) return rc;
  sqlite3_stmt *st;
  int64_t pair_id = 0;
  if ((rc = sw_store_stmt(s->store, SQL_RUN, &st, err))) goto fail;
  sqlite3_bind_int64(st, 1, res->run_id);
  rc = sqlite3_step(st);
  if (rc == SQLITE_ROW) pair_id = sqlite3_column_int64(st, 0);
  sqlite3_reset(st);
  if (rc == SQLITE_DONE) {
    rc = sw_err_set(err, SW_ENOTFOUND, "result for unknown run %lld", (long long)res->run_id);
    goto fail;
  }
  if (rc != SQLITE_ROW) {
    rc = sw_store_fail(s->store, err, "looking up run");
    goto fail;
  }
  /* A duplicate delivery (the worker resends until acknowledged) is answered before the lease
   * check: the lease may be long closed, and the worker still needs its Ack. */
  if ((rc = sw_store_stmt(s->store, SQL_DUP, &st, err))) goto fail;
  sqlite3_bind_int64(st, 1, res->run_id);
  sqlite3_bind_int(st, 2, res->attempt);
  rc = sqlite3_step(st);
  sqlite3_reset(st);
  if (rc == SQLITE_ROW) {
    sw_store_rollback(s->store);
    return 0;
  }
  if (rc != SQLITE_DONE) {
    rc = sw_store_fail(s->store, err, "looking up attempt");
    goto fail;
  }
  struct lease_mem *l = find_lease(s, res->lease_id);
  if (!l) {
    if ((rc = lease_revive(s, res, pair_id, now, err)) < 0) goto fail;
    if (rc == 1) {
      revived = 1;
      l = find_lease(s, res->lease_id);
    }
  }
  if (!l || l->epoch != res->epoch || strcmp(s->workers[l->worker].id, res->worker_id) != 0 ||
      l->pair_id != pair_id || res->attempt < 0 || (uint64_t)res->attempt != l->epoch) {
    rc = sw_err_set(err, SW_ESTATE,
                    "stale result: run %lld attempt %d under lease %lld epoch %llu from '%s' does "
                    "not match an active lease",
                    (long long)res->run_id, res->attempt, (long long)res->lease_id,
                    (unsigned long long)res->epoch, res->worker_id);
    goto fail;
  }
  int64_t lease_id = l->id;
  struct sweep_mem *sw = sched_sweep(s, l->sweep_id);
  /* A run that exited 0 must leave a result that parses and matches docs/result.schema.json
   * (checked by code generated from that file): one that parses but breaks the schema is
   * stored as invalid, with the schema's complaint as its reason, and never reaches a verdict
   * (its pair gets the replacement an invalid run gets); one that does not parse is a failed
   * run. */
  int result_ok = 0, untrusted = 0;
  char why[SW_FLAG_REASON_MAX] = "";
  json_t *parsed =
      res->result_json ? json_loads(res->result_json, JSON_REJECT_DUPLICATES, NULL) : NULL;
  if (res->exit_status == 0 && parsed) {
    struct sw_err verr = {0};
    if (sw_result_check(parsed, &verr)) {
      untrusted = 1;
      snprintf(why, sizeof why, "result.json breaks docs/result.schema.json at %s", verr.msg);
    } else {
      result_ok = 1;
    }
  }
  enum sw_attempt_status status = untrusted ? SW_ATTEMPT_INVALID
                                  : sw      ? sched_classify(sw, res, result_ok, why, sizeof why)
                                            : (result_ok ? SW_ATTEMPT_OK : SW_ATTEMPT_FAILED);
  struct sw_attempt_rec rec = {.run_id = res->run_id,
                               .attempt = res->attempt,
                               .lease_id = res->lease_id,
                               .worker_id = res->worker_id,
                               .status = status,
                               .result_untrusted = untrusted,
                               .exit_status = res->exit_status,
                               .started_ms = now,
                               .finished_ms = now,
                               .result_json = res->result_json,
                               .result = untrusted ? NULL : parsed,
                               .error_text = res->error_text,
                               .pre = res->pre,
                               .n_pre = res->n_pre,
                               .during = res->during,
                               .n_during = res->n_during,
                               .env_before = res->env_before,
                               .env_after = res->env_after,
                               .run_start_wall_ms = res->run_start_wall_ms,
                               .run_end_wall_ms = res->run_end_wall_ms};
  rec.flag_reason = why[0] ? why : NULL;
  if (res->n_during > 0) { /* the window tells when the run started, relative to its end */
    /* Offsets come from the worker: a span that is negative or longer than the clock has run
     * is ignored rather than computed with signed overflow. */
    int64_t span;
    if (!__builtin_sub_overflow(res->during[res->n_during - 1].t_ms, res->during[0].t_ms, &span) &&
        span >= 0 && span <= now)
      rec.started_ms = now - span;
  }
  int dup = 0;
  rc = sw_store_put_attempt(s->store, &rec, &dup, err);
  json_decref(parsed);
  if (rc) goto fail;
  int lease_closed = 0;
  if ((rc = sched_pair_check(s, pair_id, now, &lease_closed, err))) goto fail;
  if ((rc = sw_store_commit(s->store, err))) goto fail;
  if (lease_closed) lease_forget(s, lease_id);
  reap(s);
  return 0;
fail:
  sw_store_rollback(s->store);
  if (revived) lease_forget(s, res->lease_id); /* the revival was rolled back with it */
  return rc;
}

int sw_sched_lease_done(sw_sched_t *s, int64_t lease_id, uint64_t epoch, const char *worker_id,
                        int64_t now, struct sw_err *err) {
  static const char *const SQL = "SELECT worker_id, epoch FROM leases WHERE id = ?1";
  struct lease_mem *l = find_lease(s, lease_id);
  if (l) {
    if (l->epoch != epoch || strcmp(s->workers[l->worker].id, worker_id) != 0)
      return sw_err_set(err, SW_ESTATE, "lease %lld epoch %llu is not held by '%s'",
                        (long long)lease_id, (unsigned long long)epoch, worker_id);
    return lease_finish(s, l, now, "lease finished without every result", err);
  }
  /* Already closed (its pair completed with the last result): fine for its holder. */
  sqlite3_stmt *st;
  int rc = sw_store_stmt(s->store, SQL, &st, err);
  if (rc) return rc;
  sqlite3_bind_int64(st, 1, lease_id);
  rc = sqlite3_step(st);
  int ok = rc == SQLITE_ROW && strcmp((const char *)sqlite3_column_text(st, 0), worker_id) == 0 &&
           (uint64_t)sqlite3_column_int64(st, 1) == epoch;
  sqlite3_reset(st);
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) return sw_store_fail(s->store, err, "reading lease");
  return ok ? 0
            : sw_err_set(err, SW_ESTATE, "lease %lld epoch %llu is not held by '%s'",
                         (long long)lease_id, (unsigned long long)epoch, worker_id);
}

int sw_sched_tick(sw_sched_t *s, int64_t now, int *n_expired, struct sw_err *err) {
  if (n_expired) *n_expired = 0;
  /* While writes fail, a worker cannot have its results stored and so keeps holding its lease
   * (resending every 15 heartbeats): expiring it would throw finished work away, and a small
   * expiry may well commit where a large result cannot (a full disk). So no lease expires until
   * one lease TTL has passed without a new store failure; live workers renew in memory
   * meanwhile, and only the leases of workers that went away wait that long. */
  struct sw_store_health h;
  sw_store_health(s->store, &h);
  if (h.failures != s->store_failures_seen) {
    s->store_failures_seen = h.failures;
    s->store_failed_at = now;
  }
  if (s->store_failures_seen && now - s->store_failed_at < s->opts.lease_ttl_ms) return 0;
  for (int i = 0; i < s->n_leases;) {
    struct lease_mem *l = &s->leases[i];
    if (l->deadline >= now) {
      i++;
      continue;
    }
    int64_t lease_id = l->id, pair_id = l->pair_id, sweep_id = l->sweep_id;
    char text[160];
    snprintf(text, sizeof text, "lease %lld of worker '%s' expired", (long long)lease_id,
             s->workers[l->worker].id);
    int rc = sw_store_begin(s->store, err);
    if (!rc) rc = sched_lease_close_db(s, lease_id, "expired", now, err);
    if (!rc) rc = sw_store_event(s->store, now, sweep_id, "expire", text, err);
    if (!rc) rc = sched_pair_requeue(s, pair_id, now, "lease expired", err);
    if (!rc) rc = sched_sweep_check(s, sweep_id, now, err);
    if (!rc) rc = sw_store_commit(s->store, err);
    if (rc) {
      sw_store_rollback(s->store);
      return rc;
    }
    lease_forget(s, lease_id); /* swaps the last lease into slot i: do not advance */
    reap(s);
    if (n_expired) (*n_expired)++;
  }
  workers_expire(s, now);
  return 0;
}

int sw_sched_cancel(sw_sched_t *s, int64_t sweep_id, int64_t now, int64_t *lease_ids_out,
                    int max_ids, int *n_ids, struct sw_err *err) {
  static const char *const SQL_SWEEP =
      "UPDATE sweeps SET status = 'cancelled', finished_ms = ?2 WHERE id = ?1 AND status = "
      "'running'";
  static const char *const SQL_GATES =
      "UPDATE gates SET status = 'cancelled', finished_ms = ?2 WHERE sweep_id = ?1 AND status = "
      "'running'";
  static const char *const SQL_PAIRS = "UPDATE pairs SET status = 'abandoned', finished_ms = ?2 "
                                       "WHERE sweep_id = ?1 AND status IN ('pending', 'leased')";
  static const char *const SQL_EXISTS = "SELECT status FROM sweeps WHERE id = ?1";
  if (n_ids) *n_ids = 0;
  sqlite3_stmt *st;
  int rc = sw_store_stmt(s->store, SQL_EXISTS, &st, err);
  if (rc) return rc;
  sqlite3_bind_int64(st, 1, sweep_id);
  rc = sqlite3_step(st);
  sqlite3_reset(st);
  if (rc == SQLITE_DONE) return sw_err_set(err, SW_ENOTFOUND, "no sweep %lld", (long long)sweep_id);
  if (rc != SQLITE_ROW) return sw_store_fail(s->store, err, "looking up sweep");
  if ((rc = sw_store_begin(s->store, err))) return rc;
  const char *const sqls[3] = {SQL_SWEEP, SQL_GATES, SQL_PAIRS};
  for (int i = 0; i < 3 && !rc; i++) {
    if ((rc = sw_store_stmt(s->store, sqls[i], &st, err))) break;
    sqlite3_bind_int64(st, 1, sweep_id);
    sqlite3_bind_int64(st, 2, now);
    if (sqlite3_step(st) != SQLITE_DONE) rc = sw_store_fail(s->store, err, "cancelling sweep");
    sqlite3_reset(st);
  }
  for (int i = 0; i < s->n_leases && !rc; i++)
    if (s->leases[i].sweep_id == sweep_id)
      rc = sched_lease_close_db(s, s->leases[i].id, "cancelled", now, err);
  if (!rc) rc = sw_store_event(s->store, now, sweep_id, "cancel", "sweep cancelled", err);
  if (!rc) rc = sw_store_commit(s->store, err);
  if (rc) {
    sw_store_rollback(s->store);
    return rc;
  }
  for (int i = 0; i < s->n_leases;) {
    if (s->leases[i].sweep_id != sweep_id) {
      i++;
      continue;
    }
    if (lease_ids_out && n_ids && *n_ids < max_ids) lease_ids_out[(*n_ids)++] = s->leases[i].id;
    lease_forget(s, s->leases[i].id);
  }
  sched_sweep_drop(s, sweep_id);
  return 0;
}

/* ---- submission ---------------------------------------------------------------------------- */

int sw_sched_submit(sw_sched_t *s, const char *spec_yaml, const char *source, const char *name,
                    int64_t now, int64_t *sweep_id, struct sw_err *err) {
  *sweep_id = 0;
  struct sw_spec *spec = NULL;
  int rc = sw_spec_load_string(spec_yaml, source && *source ? source : "spec", &spec, err);
  if (rc) return rc;
  char sweep_name[SW_MSG_ID_MAX + 1];
  snprintf(sweep_name, sizeof sweep_name, "%s", name && *name ? name : spec->name);
  const char *kind = spec->kind == SW_SPEC_GRID ? "grid" : "gate";
  int priority = spec->priority;
  json_t *normal = sw_spec_to_json(spec);
  char *spec_text = normal ? json_dumps(normal, JSON_COMPACT) : NULL;
  json_decref(normal);
  if (!spec_text) {
    sw_spec_destroy(&spec);
    return sw_err_set(err, SW_ENOMEM, "serialising spec: out of memory");
  }
  /* The identity of a spec is its submitted text. */
  char hex[SW_SHA256_HEX_LEN];
  sw_sha256_buf(spec_yaml, strlen(spec_yaml), hex);

  if ((rc = sw_store_begin(s->store, err))) {
    free(spec_text);
    sw_spec_destroy(&spec);
    return rc;
  }
  static const char *const SQL =
      "INSERT INTO sweeps (name, kind, spec_yaml, spec_json, spec_sha256, priority, created_ms) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)";
  sqlite3_stmt *st;
  int64_t id = 0;
  if (!(rc = sw_store_stmt(s->store, SQL, &st, err))) {
    sqlite3_bind_text(st, 1, sweep_name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, kind, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, spec_yaml, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, spec_text, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 5, hex, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 6, priority);
    sqlite3_bind_int64(st, 7, now);
    if (sqlite3_step(st) != SQLITE_DONE) rc = sw_store_fail(s->store, err, "inserting sweep");
    sqlite3_reset(st);
    id = sqlite3_last_insert_rowid(sw_store_db(s->store));
  }
  free(spec_text);
  if (!rc) rc = sched_sweep_add(s, id, &spec, priority, err); /* the sweep owns the spec now */
  sw_spec_destroy(&spec);
  if (!rc) rc = sched_series_insert(s, sched_sweep(s, id), sweep_name, now, err);
  if (!rc) {
    char text[300];
    snprintf(text, sizeof text, "%s sweep '%s' submitted", kind, sweep_name);
    rc = sw_store_event(s->store, now, id, "submit", text, err);
  }
  if (!rc) rc = sw_store_commit(s->store, err);
  if (rc) {
    sw_store_rollback(s->store);
    if (id) sched_sweep_drop(s, id);
    return rc;
  }
  *sweep_id = id;
  return 0;
}

/* ---- lifecycle ---------------------------------------------------------------------------- */

/* A running sweep whose stored spec no longer loads (written by a build with other rules) is
 * failed with the loader's message as its event, so the coordinator still starts. */
static int fail_unloadable(sw_sched_t *s, int64_t sweep_id, const char *why, int64_t now,
                           struct sw_err *err) {
  static const char *const SQL =
      "UPDATE sweeps SET status = 'failed', finished_ms = ?2 WHERE id = ?1";
  int rc = sw_store_begin(s->store, err);
  if (rc) return rc;
  sqlite3_stmt *st;
  if (!(rc = sw_store_stmt(s->store, SQL, &st, err))) {
    sqlite3_bind_int64(st, 1, sweep_id);
    sqlite3_bind_int64(st, 2, now);
    if (sqlite3_step(st) != SQLITE_DONE) rc = sw_store_fail(s->store, err, "failing sweep");
    sqlite3_reset(st);
  }
  if (!rc) {
    char text[SW_ERR_MSG_MAX + 64];
    snprintf(text, sizeof text, "sweep failed: its stored spec does not load: %s", why);
    rc = sw_store_event(s->store, now, sweep_id, "finish", text, err);
  }
  if (!rc) rc = sw_store_commit(s->store, err);
  if (rc) sw_store_rollback(s->store);
  return rc;
}

/* Running sweeps back into memory, each from its stored YAML through the spec loader. A sweep
 * that does not load is failed (outside the read), and the read resumes after it. */
static int load_sweeps(sw_sched_t *s, int64_t now, struct sw_err *err) {
  static const char *const SQL = "SELECT id, spec_yaml, priority FROM sweeps WHERE status = "
                                 "'running' AND id > ?1 ORDER BY id";
  int64_t after = 0;
  for (;;) {
    sqlite3_stmt *st;
    int rc = sw_store_stmt(s->store, SQL, &st, err);
    if (rc) return rc;
    sqlite3_bind_int64(st, 1, after);
    int64_t bad_id = 0;
    struct sw_err bad = {0};
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
      int64_t id = sqlite3_column_int64(st, 0);
      char source[32];
      snprintf(source, sizeof source, "sweep %lld", (long long)id);
      struct sw_spec *spec = NULL;
      int r = sw_spec_load_string((const char *)sqlite3_column_text(st, 1), source, &spec, &bad);
      if (!r) r = sched_sweep_add(s, id, &spec, sqlite3_column_int(st, 2), &bad);
      if (r == SW_ENOMEM) {
        sqlite3_reset(st);
        return sw_err_set(err, r, "%s", bad.msg);
      }
      if (r) {
        bad_id = id;
        break;
      }
      after = id;
    }
    sqlite3_reset(st);
    if (!bad_id) return rc == SQLITE_DONE ? 0 : sw_store_fail(s->store, err, "loading sweeps");
    if ((rc = fail_unloadable(s, bad_id, bad.msg, now, err))) return rc;
    after = bad_id;
  }
}

static int load_state(sw_sched_t *s, int64_t now, struct sw_err *err) {
  /* Only workers seen within the expiry or holding an active lease come back into memory: the
   * others are loaded by their next Hello. */
  static const char *const SQL_WORKERS =
      "SELECT id, fingerprint_json, labels_json, last_seen_ms, key FROM workers WHERE "
      "last_seen_ms >= ?1 OR id IN (SELECT worker_id FROM leases WHERE state = 'active') ORDER BY "
      "id";
  static const char *const SQL_LEASES =
      "SELECT l.id, l.epoch, l.worker_id, l.pair_id, p.sweep_id FROM leases l JOIN pairs p ON "
      "p.id = l.pair_id WHERE l.state = 'active'";
  int rc = load_sweeps(s, now, err);
  if (rc) return rc;
  sqlite3_stmt *st;
  if ((rc = sw_store_stmt(s->store, SQL_WORKERS, &st, err))) return rc;
  sqlite3_bind_int64(st, 1, now - s->opts.worker_expire_ms);
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    int w = ensure_worker(s, (const char *)sqlite3_column_text(st, 0));
    if (w < 0) {
      sqlite3_reset(st);
      return sw_err_set(err, SW_ENOMEM, "loading workers: out of memory");
    }
    /* Every worker is offline until it says Hello to this coordinator. */
    json_decref(s->workers[w].fingerprint);
    json_decref(s->workers[w].labels);
    s->workers[w].fingerprint = object_or_empty((const char *)sqlite3_column_text(st, 1));
    s->workers[w].labels = object_or_empty((const char *)sqlite3_column_text(st, 2));
    s->workers[w].last_seen = sqlite3_column_int64(st, 3);
    if (sqlite3_column_type(st, 4) == SQLITE_TEXT &&
        !(s->workers[w].key = strdup((const char *)sqlite3_column_text(st, 4)))) {
      sqlite3_reset(st);
      return sw_err_set(err, SW_ENOMEM, "loading workers: out of memory");
    }
  }
  sqlite3_reset(st);
  if (rc != SQLITE_DONE) return sw_store_fail(s->store, err, "loading workers");
  machine_assign_all(s);
  if ((rc = sw_store_stmt(s->store, SQL_LEASES, &st, err))) return rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    int w = find_worker(s, (const char *)sqlite3_column_text(st, 2));
    if (w < 0 ||
        sched_grow((void **)&s->leases, &s->cap_leases, s->n_leases + 1, sizeof *s->leases))
      continue;
    /* We cannot know how long the lease had left: give it a whole fresh term. */
    lease_add(s, (struct lease_mem){.id = sqlite3_column_int64(st, 0),
                                    .epoch = (uint64_t)sqlite3_column_int64(st, 1),
                                    .worker = w,
                                    .pair_id = sqlite3_column_int64(st, 3),
                                    .sweep_id = sqlite3_column_int64(st, 4),
                                    .deadline = now + s->opts.lease_ttl_ms});
  }
  sqlite3_reset(st);
  return rc == SQLITE_DONE ? 0 : sw_store_fail(s->store, err, "loading leases");
}

int sw_sched_new(sw_store_t *store, const struct sw_sched_opts *opts, int64_t now, sw_sched_t **out,
                 struct sw_err *err) {
  *out = NULL;
  sw_sched_t *s = calloc(1, sizeof *s);
  if (!s) return sw_err_set(err, SW_ENOMEM, "scheduler: out of memory");
  s->store = store;
  if (opts)
    s->opts = *opts;
  else
    sw_sched_opts_default(&s->opts);
  if (s->opts.lease_ttl_ms <= 0) s->opts.lease_ttl_ms = 60000;
  if (s->opts.max_attempts <= 0) s->opts.max_attempts = 3;
  if (s->opts.worker_expire_ms <= 0) s->opts.worker_expire_ms = SW_SCHED_WORKER_EXPIRE_MS;
  if (s->opts.workers_offline_max <= 0) s->opts.workers_offline_max = SW_SCHED_WORKERS_OFFLINE_MAX;
  int rc = load_state(s, now, err);
  if (rc) {
    sw_sched_destroy(&s);
    return rc;
  }
  *out = s;
  return 0;
}

void sw_sched_destroy(sw_sched_t **sched) {
  if (!sched || !*sched) return;
  sw_sched_t *s = *sched;
  for (int i = 0; i < s->n_sweeps; i++) sched_sweep_free(&s->sweeps[i]);
  for (int i = 0; i < s->n_workers; i++) worker_free(&s->workers[i]);
  free(s->sweeps);
  free(s->workers);
  free(s->worker_index);
  free(s->leases);
  free(s);
  *sched = NULL;
}
