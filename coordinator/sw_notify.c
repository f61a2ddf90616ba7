/* sw_notify.c: the webhook notifier's queue and thread (sw_notify.h). */
#include "sw_notify.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sw_clock.h"
#include "sw_log.h"

struct item {
  struct item *next;
  char *url, *body;
  int attempts;    /* tries so far */
  int64_t next_ms; /* monotonic time of the next try */
};

struct sw_notify {
  struct sw_notify_opts o;
  pthread_t thread;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int stop; /* under mu; also read (racily, as a hint) by the transfer's progress callback */
  struct item *head;
  struct sw_notify_counts counts;
};

static void item_free(struct item *it) {
  if (!it) return;
  free(it->url);
  free(it->body);
  free(it);
}

static size_t discard(char *p, size_t size, size_t n, void *ctx) {
  (void)p;
  (void)ctx;
  return size * n;
}

/* Aborts a transfer once stop is set, so sw_notify_stop never waits for a slow server. */
static int on_progress(void *ctx, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un) {
  (void)dt;
  (void)dn;
  (void)ut;
  (void)un;
  sw_notify_t *n = ctx;
  pthread_mutex_lock(&n->mu);
  int stop = n->stop;
  pthread_mutex_unlock(&n->mu);
  return stop;
}

/* One POST. Returns 1 delivered, 0 worth retrying, -1 refused (not retried); why says what. */
static int post_once(sw_notify_t *n, const struct item *it, char *why, size_t cap) {
  CURL *c = curl_easy_init();
  if (!c) {
    snprintf(why, cap, "curl init failed");
    return 0;
  }
  char ebuf[CURL_ERROR_SIZE] = "";
  struct curl_slist *hdr = curl_slist_append(NULL, "Content-Type: application/json");
  curl_easy_setopt(c, CURLOPT_URL, it->url);
  curl_easy_setopt(c, CURLOPT_POSTFIELDS, it->body);
  curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)strlen(it->body));
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
  curl_easy_setopt(c, CURLOPT_USERAGENT, "splatsweep-coordinator");
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)n->o.timeout_ms);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, ebuf);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
  curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
  curl_easy_setopt(c, CURLOPT_XFERINFODATA, n);
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  CURLcode cc = curl_easy_perform(c);
  long code = 0;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
  curl_slist_free_all(hdr);
  curl_easy_cleanup(c);
  if (cc != CURLE_OK) {
    snprintf(why, cap, "%s", ebuf[0] ? ebuf : curl_easy_strerror(cc));
    return 0;
  }
  if (code >= 200 && code < 300) return 1;
  snprintf(why, cap, "HTTP %ld", code);
  return code == 408 || code == 429 || code >= 500 ? 0 : -1;
}

static void *run(void *arg) {
  sw_notify_t *n = arg;
  pthread_mutex_lock(&n->mu);
  while (!n->stop) {
    /* The item due first; wait for it (or for a new one, or stop). */
    struct item **due = NULL;
    for (struct item **pp = &n->head; *pp; pp = &(*pp)->next)
      if (!due || (*pp)->next_ms < (*due)->next_ms) due = pp;
    int64_t now = sw_clock_mono_ms();
    if (!due || (*due)->next_ms > now) {
      if (!due) {
        pthread_cond_wait(&n->cv, &n->mu);
      } else {
        /* CLOCK_REALTIME deadline for pthread_cond_timedwait, from the monotonic wait left. */
        int64_t wait = (*due)->next_ms - now;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += (time_t)(wait / 1000);
        ts.tv_nsec += (long)(wait % 1000) * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
          ts.tv_sec++;
          ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&n->cv, &n->mu, &ts);
      }
      continue;
    }
    struct item *it = *due;
    *due = it->next; /* out of the list while it is sent: the loop may add more meanwhile */
    pthread_mutex_unlock(&n->mu);
    char why[CURL_ERROR_SIZE + 32] = "";
    int r = post_once(n, it, why, sizeof why);
    it->attempts++;
    pthread_mutex_lock(&n->mu);
    if (r == 1) {
      n->counts.sent++;
      n->counts.queued--;
      sw_log_info("webhook %s: delivered (try %d)", it->url, it->attempts);
      item_free(it);
    } else if (r < 0 || it->attempts >= n->o.max_attempts || n->stop) {
      n->counts.failed++;
      n->counts.queued--;
      sw_log_warn("webhook %s: %s after %d tr%s; notification dropped", it->url, why, it->attempts,
                  it->attempts == 1 ? "y" : "ies");
      item_free(it);
    } else {
      int64_t backoff = (int64_t)n->o.first_backoff_ms << (it->attempts - 1);
      sw_log_warn("webhook %s: %s; retry in %lld ms", it->url, why, (long long)backoff);
      it->next_ms = sw_clock_mono_ms() + backoff;
      it->next = n->head;
      n->head = it;
    }
  }
  pthread_mutex_unlock(&n->mu);
  return NULL;
}

int sw_notify_start(const struct sw_notify_opts *opts, sw_notify_t **out, struct sw_err *err) {
  *out = NULL;
  sw_notify_t *n = calloc(1, sizeof *n);
  if (!n) return sw_err_set(err, SW_ENOMEM, "notifier: out of memory");
  if (opts) n->o = *opts;
  if (n->o.max_attempts <= 0) n->o.max_attempts = 6;
  if (n->o.first_backoff_ms <= 0) n->o.first_backoff_ms = 1000;
  if (n->o.timeout_ms <= 0) n->o.timeout_ms = 10000;
  if (n->o.queue_max <= 0) n->o.queue_max = 256;
  if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
    free(n);
    return sw_err_set(err, SW_EIO, "notifier: libcurl initialisation failed");
  }
  pthread_mutex_init(&n->mu, NULL);
  pthread_cond_init(&n->cv, NULL);
  if (pthread_create(&n->thread, NULL, run, n) != 0) {
    pthread_cond_destroy(&n->cv);
    pthread_mutex_destroy(&n->mu);
    curl_global_cleanup();
    free(n);
    return sw_err_set(err, SW_EIO, "notifier: cannot start its thread");
  }
  *out = n;
  return 0;
}

void sw_notify_stop(sw_notify_t **self_p) {
  if (!self_p || !*self_p) return;
  sw_notify_t *n = *self_p;
  pthread_mutex_lock(&n->mu);
  n->stop = 1;
  pthread_cond_signal(&n->cv);
  pthread_mutex_unlock(&n->mu);
  pthread_join(n->thread, NULL);
  for (struct item *it = n->head, *next; it; it = next) {
    next = it->next;
    n->counts.dropped++;
    item_free(it);
  }
  if (n->counts.dropped)
    sw_log_info("webhook notifier stopped: %llu notification(s) undelivered",
                (unsigned long long)n->counts.dropped);
  pthread_cond_destroy(&n->cv);
  pthread_mutex_destroy(&n->mu);
  curl_global_cleanup();
  free(n);
  *self_p = NULL;
}

int sw_notify_post(sw_notify_t *n, const char *url, const char *body) {
  struct item *it = calloc(1, sizeof *it);
  if (it) {
    it->url = strdup(url);
    it->body = strdup(body);
  }
  if (!it || !it->url || !it->body) {
    item_free(it);
    return SW_ENOMEM;
  }
  pthread_mutex_lock(&n->mu);
  if (n->counts.queued >= (uint64_t)n->o.queue_max) {
    n->counts.dropped++;
    pthread_mutex_unlock(&n->mu);
    sw_log_warn("webhook %s: %d notifications already queued; this one is dropped", url,
                n->o.queue_max);
    item_free(it);
    return SW_ESTATE;
  }
  it->next_ms = sw_clock_mono_ms();
  it->next = n->head;
  n->head = it;
  n->counts.queued++;
  pthread_cond_signal(&n->cv);
  pthread_mutex_unlock(&n->mu);
  return 0;
}

void sw_notify_get_counts(sw_notify_t *n, struct sw_notify_counts *out) {
  memset(out, 0, sizeof *out);
  if (!n) return;
  pthread_mutex_lock(&n->mu);
  *out = n->counts;
  pthread_mutex_unlock(&n->mu);
}

/* ---- events to notifications ------------------------------------------------------------- */

#include <jansson.h>
#include <sqlite3.h>

#include "sw_store.h"

int sw_notify_last_event(sw_store_t *store, int64_t *out, struct sw_err *err) {
  static const char *const SQL = "SELECT COALESCE(MAX(id), 0) FROM events";
  sqlite3_stmt *st;
  int rc = sw_store_stmt(store, SQL, &st, err);
  if (rc) return rc;
  rc = sqlite3_step(st);
  *out = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
  sqlite3_reset(st);
  return rc == SQLITE_ROW ? 0 : sw_store_fail(store, err, "reading the last event");
}

/* The gate part of a verdict notification: name, status, verdict, reasons and the numbers. */
static json_t *gate_summary(sw_store_t *store, int64_t sweep_id, const char *name,
                            struct sw_err *err) {
  static const char *const SQL =
      "SELECT status, verdict, verdict_json, looks FROM gates WHERE sweep_id = ?1 AND name = ?2";
  sqlite3_stmt *st;
  if (sw_store_stmt(store, SQL, &st, err)) return NULL;
  sqlite3_bind_int64(st, 1, sweep_id);
  sqlite3_bind_text(st, 2, name, -1, SQLITE_TRANSIENT);
  if (sqlite3_step(st) != SQLITE_ROW) {
    sqlite3_reset(st);
    return json_null();
  }
  json_t *g =
      json_pack("{s:s,s:s}", "name", name, "status", (const char *)sqlite3_column_text(st, 0));
  json_object_set_new(g, "verdict",
                      sqlite3_column_type(st, 1) == SQLITE_NULL
                          ? json_null()
                          : json_string((const char *)sqlite3_column_text(st, 1)));
  json_object_set_new(g, "looks", json_integer(sqlite3_column_int(st, 3)));
  json_t *v = sqlite3_column_type(st, 2) == SQLITE_NULL
                  ? NULL
                  : json_loads((const char *)sqlite3_column_text(st, 2), 0, NULL);
  sqlite3_reset(st);
  json_t *pr = json_object_get(v, "paired"), *gd = json_object_get(v, "guard");
  json_object_set_new(g, "reasons",
                      json_is_array(json_object_get(v, "reasons"))
                          ? json_incref(json_object_get(v, "reasons"))
                          : json_array());
  json_object_set_new(g, "warnings",
                      json_is_array(json_object_get(v, "warnings"))
                          ? json_incref(json_object_get(v, "warnings"))
                          : json_array());
  const char *copy[][2] = {{"delta", "delta"}, {"threshold", "threshold"}};
  for (size_t i = 0; i < 2; i++) {
    json_t *x = json_object_get(v, copy[i][1]);
    json_object_set(g, copy[i][0], x ? x : json_null());
  }
  json_t *x = json_object_get(pr, "effect_pct");
  json_object_set(g, "effect_pct", x ? x : json_null());
  x = json_object_get(pr, "t_interval_pct");
  json_object_set(g, "interval_pct", x ? x : json_null());
  x = json_object_get(gd, "pass");
  json_object_set(g, "guard_pass", x ? x : json_null());
  json_decref(v);
  return g;
}

/* The sweep's name, status and webhook (NULL: none). *webhook is malloc'd. */
static int sweep_hook(sw_store_t *store, int64_t sweep_id, json_t **sweep, char **webhook,
                      struct sw_err *err) {
  static const char *const SQL = "SELECT name, status, kind, spec_json FROM sweeps WHERE id = ?1";
  *sweep = NULL;
  *webhook = NULL;
  sqlite3_stmt *st;
  int rc = sw_store_stmt(store, SQL, &st, err);
  if (rc) return rc;
  sqlite3_bind_int64(st, 1, sweep_id);
  if (sqlite3_step(st) == SQLITE_ROW) {
    json_t *spec = json_loads((const char *)sqlite3_column_text(st, 3), 0, NULL);
    const json_t *h = json_object_get(json_object_get(spec, "notify"), "webhook");
    if (json_is_string(h)) *webhook = strdup(json_string_value(h));
    *sweep = json_pack("{s:I,s:s,s:s,s:s}", "id", (json_int_t)sweep_id, "name",
                       (const char *)sqlite3_column_text(st, 0), "status",
                       (const char *)sqlite3_column_text(st, 1), "kind",
                       (const char *)sqlite3_column_text(st, 2));
    json_decref(spec);
  }
  sqlite3_reset(st);
  return 0;
}

int sw_notify_scan(sw_notify_t *n, sw_store_t *store, int64_t *last_event, const char *link_base,
                   struct sw_err *err) {
  static const char *const SQL = "SELECT id, sweep_id, kind, text FROM events WHERE id > ?1 "
                                 "AND kind IN ('verdict', 'finish') ORDER BY id LIMIT 100";
  struct ev {
    int64_t id, sweep;
    char kind[16], text[256];
  } evs[100];
  int n_ev = 0;
  sqlite3_stmt *st;
  int rc = sw_store_stmt(store, SQL, &st, err);
  if (rc) return rc;
  sqlite3_bind_int64(st, 1, *last_event);
  while ((rc = sqlite3_step(st)) == SQLITE_ROW && n_ev < 100) {
    struct ev *e = &evs[n_ev++];
    e->id = sqlite3_column_int64(st, 0);
    e->sweep = sqlite3_column_int64(st, 1);
    snprintf(e->kind, sizeof e->kind, "%s", (const char *)sqlite3_column_text(st, 2));
    snprintf(e->text, sizeof e->text, "%s", (const char *)sqlite3_column_text(st, 3));
  }
  sqlite3_reset(st);
  if (rc != SQLITE_DONE && rc != SQLITE_ROW) return sw_store_fail(store, err, "reading events");
  for (int i = 0; i < n_ev; i++) {
    const struct ev *e = &evs[i];
    *last_event = e->id;
    json_t *sweep = NULL;
    char *hook = NULL;
    if ((rc = sweep_hook(store, e->sweep, &sweep, &hook, err))) return rc;
    if (!hook || !sweep) {
      free(hook);
      json_decref(sweep);
      continue;
    }
    json_t *body = json_object();
    json_t *gate = NULL;
    const char *event;
    if (!strcmp(e->kind, "verdict")) {
      /* The scheduler's verdict event reads "gate 'NAME': VERDICT". */
      event = "verdict";
      const char *q = strchr(e->text, '\''), *q2 = q ? strstr(q + 1, "': ") : NULL;
      if (q && q2) {
        char name[200];
        snprintf(name, sizeof name, "%.*s", (int)(q2 - q - 1), q + 1);
        gate = gate_summary(store, e->sweep, name, err);
        if (!gate) {
          free(hook);
          json_decref(sweep);
          json_decref(body);
          return err && err->code ? err->code : SW_ENOMEM;
        }
      }
    } else {
      event = strstr(e->text, "failed") ? "sweep_failed" : "sweep_done";
    }
    json_object_set_new(body, "event", json_string(event));
    json_object_set_new(body, "sweep", sweep);
    json_object_set_new(body, "gate", gate ? gate : json_null());
    json_object_set_new(body, "text", json_string(e->text));
    json_object_set_new(body, "time_ms", json_integer(sw_clock_wall_ms()));
    char link[2200];
    if (link_base && *link_base) {
      size_t lb = strlen(link_base);
      snprintf(link, sizeof link, "%.*s/sweep/%lld",
               (int)(lb && link_base[lb - 1] == '/' ? lb - 1 : lb), link_base, (long long)e->sweep);
      json_object_set_new(body, "link", json_string(link));
    } else {
      json_object_set_new(body, "link", json_null());
    }
    char *text = json_dumps(body, JSON_COMPACT);
    json_decref(body);
    if (text) sw_notify_post(n, hook, text);
    free(text);
    free(hook);
  }
  return 0;
}
