/* sw_coord.c: the coordinator's poll loop, worker sessions, control requests. */
#include "sw_coord.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <zmq.h>

#if defined(__SANITIZE_ADDRESS__)
#define SW_HAS_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SW_HAS_SANITIZER 1
#endif
#endif
#ifndef SW_HAS_SANITIZER
#define SW_HAS_SANITIZER 0
#endif
#if SW_HAS_SANITIZER
#include <sanitizer/allocator_interface.h>
#endif

#ifdef __APPLE__
#include <mach/mach.h>
#include <malloc/malloc.h>
#elif defined(__GLIBC__)
#include <malloc.h>
#endif

#include "sw_artifact.h"
#include "sw_clock.h"
#include "sw_codec.h"
#include "sw_fs.h"
#include "sw_hostlock.h"
#include "sw_json.h"
#include "sw_keys.h"
#include "sw_log.h"
#include "sw_notify.h"
#include "sw_reader.h"
#include "sw_report.h"
#include "sw_sched.h"
#include "sw_spec.h"
#include "sw_store.h"
#include "sw_watch.h"
#include "sw_zap.h"

#define LAT_MAX 100000 /* Ready->Assign latencies kept for percentiles (a ring) */

struct session {
  uint8_t rid[256]; /* ZeroMQ routing id */
  size_t rid_len;
  char worker_id[SW_MSG_ID_MAX + 1];
  char session_id[SW_MSG_ID_MAX + 1];
  char
      key[SW_ZAP_USER_ID_MAX + 1]; /* the CURVE key's User-Id (allow-list file name); "" insecure */
  int64_t last_recv_ms, created_ms;
  int waiting;      /* sent Ready, no Assign yet */
  int64_t ready_us; /* when that Ready arrived (monotonic microseconds) */
  int64_t lease_id;
  uint64_t epoch;
  uint64_t run_id; /* run in progress (RunStarted) */
  uint64_t iter;   /* last Progress */
  double train_s;
  /* The current run's place, read from the store at RunStarted for status and `watch`: its
   * sweep, its arm and the iterations its config asks for (0 when the config does not say). */
  int64_t run_sweep;
  char run_arm[SW_MSG_ID_MAX + 1];
  int64_t run_iterations;
  uint64_t runs_finished;
};

/* The last LAT_MAX Ready->Assign latencies (microseconds), for percentiles in status. */
struct lat_ring {
  double *us;
  size_t n, pos;
};

/* A worker id's key, fixed by its first Hello for the coordinator's lifetime (CURVE mode). */

struct endpoint_stats {
  uint64_t frames, dropped, bad_protocol, disconnects, auth_denied;
};

struct sw_coord {
  const struct sw_coord_opts *o;
  void *ctx, *work, *control, *mon_work, *mon_control;
  sw_store_t *store;
  sw_sched_t *sched;
  sw_zap_t *zap;          /* CurveZMQ allow-list handler; NULL when insecure */
  sw_hostlock_t *db_lock; /* flock on DB.lock for the coordinator's lifetime */
  sw_reader_t *reader;    /* reports, rendered off the loop (sw_reader.h) */
  int hb_ms, liveness;
  int64_t lease_ttl_ms;
  char public_key[41], secret_key[41];
  struct session **sessions;
  size_t n_sessions, cap_sessions;
  uint64_t refused_identity; /* Hellos refused: id bound to another key, or live elsewhere */
  uint64_t dropped_identity; /* non-Hello frames whose key is not their session's */
  uint64_t seq, session_counter;
  int64_t last_tick_ms;
  struct endpoint_stats st_work, st_control;
  uint64_t assigns, results, acks, stale, runs_failed_store;
  struct lat_ring lat_all; /* every Ready->Assign, waits for free work included */
  struct lat_ring lat_now; /* only Readys answered at once: the coordinator's service time */
  int need_assign;         /* something changed that may let waiting workers start */
  sw_notify_t *notify;     /* webhook notifications (its own thread) */
  int artifacts;           /* an artifact store runs: Assigns carry its URL and tokens */
  uint8_t artifact_key[SW_ARTIFACT_KEY_LEN];
  int64_t notify_event; /* the last event looked at for notifications */
};

static int64_t now_ms(void) { return sw_clock_mono_ms(); }

/* ---- frames ------------------------------------------------------------------------------- */

static int recv_frames(void *sock, zmq_msg_t *frames, int max, int flags) {
  int n = 0, more = 1;
  while (more) {
    zmq_msg_t f;
    zmq_msg_init(&f);
    if (zmq_msg_recv(&f, sock, flags) < 0) {
      zmq_msg_close(&f);
      for (int i = 0; i < n; i++) zmq_msg_close(&frames[i]);
      return -1;
    }
    more = zmq_msg_more(&f);
    flags = 0; /* the rest of a multipart message is already here */
    if (n < max) {
      frames[n++] = f;
    } else {
      zmq_msg_close(&f);
      n = max + 1; /* too many frames: caller treats as malformed */
      if (!more) break;
      n = max; /* keep draining */
    }
  }
  return n;
}

static void close_frames(zmq_msg_t *frames, int n) {
  for (int i = 0; i < n; i++) zmq_msg_close(&frames[i]);
}

/* ---- sessions ------------------------------------------------------------------------------ */

static struct session *find_rid(sw_coord_t *c, const void *rid, size_t len) {
  for (size_t i = 0; i < c->n_sessions; i++)
    if (c->sessions[i]->rid_len == len && !memcmp(c->sessions[i]->rid, rid, len))
      return c->sessions[i];
  return NULL;
}

static struct session *find_worker(sw_coord_t *c, const char *worker_id) {
  for (size_t i = 0; i < c->n_sessions; i++)
    if (!strcmp(c->sessions[i]->worker_id, worker_id)) return c->sessions[i];
  return NULL;
}

static void remove_session(sw_coord_t *c, struct session *s) {
  for (size_t i = 0; i < c->n_sessions; i++)
    if (c->sessions[i] == s) {
      c->sessions[i] = c->sessions[--c->n_sessions];
      free(s);
      return;
    }
}

static struct session *add_session(sw_coord_t *c, const void *rid, size_t len) {
  if (c->n_sessions == c->cap_sessions) {
    size_t nc = c->cap_sessions ? c->cap_sessions * 2 : 16;
    struct session **ns = realloc(c->sessions, nc * sizeof *ns);
    if (!ns) return NULL;
    c->sessions = ns;
    c->cap_sessions = nc;
  }
  struct session *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  memcpy(s->rid, rid, len);
  s->rid_len = len;
  c->sessions[c->n_sessions++] = s;
  return s;
}

/* ---- sending ------------------------------------------------------------------------------- */

static int send_to(sw_coord_t *c, void *sock, const void *rid, size_t rid_len, struct sw_msg *m) {
  m->seq = ++c->seq;
  uint8_t *buf = NULL;
  size_t len = 0;
  struct sw_err err = {0};
  if (sw_codec_encode(m, &buf, &len, &err)) {
    sw_log_error("cannot encode %s: %s", sw_msg_type_name(m->type), err.msg);
    if (m->type == SW_MSG_ERROR) return -1;
    /* The peer waits for an answer: it gets an Error saying why instead of silence. */
    char text[SW_ERR_MSG_MAX + 64];
    snprintf(text, sizeof text, "the %s reply could not be encoded: %s", sw_msg_type_name(m->type),
             err.msg);
    struct sw_msg e;
    sw_msg_init(&e, SW_MSG_ERROR);
    e.u.error.code = err.code ? err.code : SW_EPROTO;
    e.u.error.message = text;
    return send_to(c, sock, rid, rid_len, &e);
  }
  int rc = zmq_send(sock, rid, rid_len, ZMQ_SNDMORE | ZMQ_DONTWAIT);
  if (rc >= 0) rc = zmq_send(sock, buf, len, ZMQ_DONTWAIT);
  free(buf);
  if (rc < 0) {
    /* EHOSTUNREACH (ROUTER_MANDATORY): the peer is gone; liveness will clean up. */
    sw_log_debug("send %s: %s", sw_msg_type_name(m->type), zmq_strerror(errno));
    return -1;
  }
  return 0;
}

static void send_reject(sw_coord_t *c, void *sock, const void *rid, size_t len,
                        enum sw_reject_code code, const char *reason) {
  struct sw_msg m;
  sw_msg_init(&m, SW_MSG_REJECT);
  m.u.reject.code = code;
  m.u.reject.reason = (char *)reason;
  send_to(c, sock, rid, len, &m);
}

static void send_cancel(sw_coord_t *c, struct session *s, int64_t lease, const char *reason) {
  struct sw_msg m;
  sw_msg_init(&m, SW_MSG_CANCEL);
  m.u.cancel.lease_id = (uint64_t)lease;
  m.u.cancel.reason = (char *)reason;
  send_to(c, c->work, s->rid, s->rid_len, &m);
}

/* ---- assignment ---------------------------------------------------------------------------- */

/* The lease's contamination object (the stored spec's) as Assign carries it; a key it lacks,
 * or text that does not parse, gets the default from the spec module's one table. */
static void contamination_from_json(const char *text, struct sw_msg_contamination *out) {
  json_t *j = json_loads(text ? text : "{}", 0, NULL);
  struct sw_spec_contamination c;
  sw_spec_contamination_from_json(j, &c);
  json_decref(j);
  sw_spec_contamination_msg(&c, out);
}

static void record_latency(struct lat_ring *r, double us) {
  if (!r->us) {
    r->us = malloc(LAT_MAX * sizeof *r->us);
    if (!r->us) return;
  }
  r->us[r->pos] = us;
  r->pos = (r->pos + 1) % LAT_MAX;
  if (r->n < LAT_MAX) r->n++;
}

/* The sweep's artifact rules from its stored spec (the defaults when it has none). */
static void sweep_artifacts(sw_coord_t *c, int64_t sweep_id, struct sw_spec_artifacts *out) {
  static const char *const SQL = "SELECT json_extract(spec_json, '$.artifacts') FROM sweeps WHERE "
                                 "id = ?1";
  *out = sw_spec_artifacts_defaults();
  sqlite3_stmt *st;
  if (sw_store_stmt(c->store, SQL, &st, NULL)) return;
  sqlite3_bind_int64(st, 1, sweep_id);
  if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) {
    json_t *j = json_loads((const char *)sqlite3_column_text(st, 0), 0, NULL);
    sw_spec_artifacts_from_json(j, out);
    json_decref(j);
  }
  sqlite3_reset(st);
}

/* Gives work to one waiting worker if the scheduler has any. Returns 1 when assigned. */
static int try_assign(sw_coord_t *c, struct session *s, int64_t t, int immediate) {
  struct sw_lease lease;
  memset(&lease, 0, sizeof lease);
  struct sw_err err = {0};
  int rc = sw_sched_next(c->sched, s->worker_id, t, &lease, &err);
  if (rc < 0) {
    sw_log_error("scheduling for %s: %s", s->worker_id, err.msg);
    return 0;
  }
  if (rc == 0) return 0;
  struct sw_msg m;
  sw_msg_init(&m, SW_MSG_ASSIGN);
  struct sw_msg_assign *a = &m.u.assign;
  struct sw_msg_run runs[SW_SCHED_MAX_RUNS];
  a->lease_id = (uint64_t)lease.lease_id;
  a->epoch = lease.epoch;
  /* The scheduler's deadline is on the monotonic clock; the wire carries wall time. */
  a->deadline_ms = sw_clock_wall_ms() + (lease.deadline_ms - t);
  a->sweep_id = (uint64_t)lease.sweep_id;
  a->gate_id = (uint64_t)lease.gate_id;
  a->pair_id = (uint64_t)lease.pair_id;
  a->attempt = (uint32_t)lease.attempt;
  memset(runs, 0, sizeof runs);
  for (int i = 0; i < lease.n_runs; i++) {
    runs[i].run_id = (uint64_t)lease.runs[i].run_id;
    snprintf(runs[i].arm, sizeof runs[i].arm, "%s", lease.runs[i].arm);
    runs[i].config_json = lease.runs[i].config_json;
    runs[i].trainer_json = lease.trainer_json;
    runs[i].scene_json = lease.scene_json ? lease.scene_json : "{}";
  }
  a->runs = runs;
  a->n_runs = (size_t)lease.n_runs;
  contamination_from_json(lease.contamination_json, &a->contamination);
  if (c->artifacts) {
    struct sw_spec_artifacts ar;
    sweep_artifacts(c, lease.sweep_id, &ar);
    if (ar.upload) {
      snprintf(a->artifact_url, sizeof a->artifact_url, "%s", c->o->artifact_url);
      a->artifact_max_bytes = (uint64_t)ar.max_file_mb << 20;
      a->artifact_ply = ar.final_ply;
      for (int i = 0; i < lease.n_runs; i++)
        sw_artifact_token(c->artifact_key, runs[i].run_id, a->attempt, runs[i].artifact_token);
    }
  }
  int sent = send_to(c, c->work, s->rid, s->rid_len, &m);
  if (sent == 0) {
    double us = (double)(sw_clock_mono_ns() / 1000 - s->ready_us);
    record_latency(&c->lat_all, us);
    if (immediate) record_latency(&c->lat_now, us);
    s->waiting = 0;
    s->lease_id = lease.lease_id;
    s->epoch = lease.epoch;
    c->assigns++;
    sw_log_info("lease %" PRId64 " -> %s: pair %" PRId64 " (%s) attempt %d", lease.lease_id,
                s->worker_id, lease.pair_id, lease.order, lease.attempt);
  } else {
    /* The worker vanished between Ready and Assign: give the pair back at once. */
    sw_sched_lease_done(c->sched, lease.lease_id, lease.epoch, s->worker_id, t, NULL);
    s->waiting = 0;
  }
  sw_lease_clear(&lease);
  return sent == 0;
}

static int cmp_ready(const void *a, const void *b) {
  const struct session *x = *(struct session *const *)a, *y = *(struct session *const *)b;
  return x->ready_us < y->ready_us ? -1 : x->ready_us > y->ready_us;
}

/* Offers work to every waiting worker, longest waiting first. */
static void assign_waiting(sw_coord_t *c, int64_t t) {
  size_t n = 0;
  struct session **w = malloc((c->n_sessions + 1) * sizeof *w);
  if (!w) return;
  for (size_t i = 0; i < c->n_sessions; i++)
    if (c->sessions[i]->waiting) w[n++] = c->sessions[i];
  qsort(w, n, sizeof *w, cmp_ready);
  /* A worker that gets nothing does not stop the loop: others may match other placement rules. */
  for (size_t i = 0; i < n; i++) try_assign(c, w[i], t, 0);
  free(w);
  c->need_assign = 0;
}

/* ---- worker endpoint ----------------------------------------------------------------------- */

static char *fingerprint_json(const struct sw_msg_hello *h) {
  const struct sw_msg_fingerprint *f = &h->fp;
  json_t *o =
      json_pack("{s:s,s:s,s:s,s:s,s:s,s:I,s:I,s:s,s:s,s:s,s:s,s:s}", "worker_id", h->worker_id,
                "hostname", f->hostname, "os", f->os, "arch", f->arch, "cpu_model", f->cpu_model,
                "cores", (json_int_t)f->cores, "mem_bytes", (json_int_t)f->mem_bytes, "gpu_name",
                f->gpu_name, "gpu_driver", f->gpu_driver, "gpu_api", f->gpu_api, "gpu_kind",
                sw_gpu_kind_name(f->gpu_kind), "trainer_sha256", h->trainer_sha256);
  if (!o) return NULL;
  /* The host identity the gate counts machines by; an old worker that sends none is its own
   * machine under its hostname. */
  json_object_set_new(o, "machine_id", json_string(f->machine_id[0] ? f->machine_id : f->hostname));
  for (size_t i = 0; i < f->n_extra; i++)
    if (!json_object_get(o, f->extra[i].key))
      json_object_set_new(o, f->extra[i].key, json_string(f->extra[i].value));
  json_t *caps = json_array();
  for (size_t i = 0; i < h->n_capabilities; i++)
    json_array_append_new(caps, json_string(h->capabilities[i].name));
  json_object_set_new(o, "capabilities", caps);
  char *s = json_dumps(o, JSON_COMPACT);
  json_decref(o);
  return s;
}

static char *labels_json(const struct sw_msg_hello *h) {
  json_t *o = json_object();
  for (size_t i = 0; i < h->n_labels; i++)
    json_object_set_new(o, h->labels[i].key, json_string(h->labels[i].value));
  char *s = json_dumps(o, JSON_COMPACT);
  json_decref(o);
  return s;
}

static void on_hello(sw_coord_t *c, const void *rid, size_t len, struct session *s,
                     const struct sw_msg *m, const char *key, int64_t t) {
  const struct sw_msg_hello *h = &m->u.hello;
  /* CURVE: a worker id belongs to the key of its first Hello, for good (kept in the store). */
  char bound_buf[SW_ZAP_USER_ID_MAX + 1];
  const char *bound = NULL;
  if (c->zap) {
    struct sw_err kerr = {0};
    int kr = sw_sched_worker_key(c->sched, h->worker_id, bound_buf, sizeof bound_buf, &kerr);
    if (kr < 0) {
      sw_log_error("hello from %s: %s", h->worker_id, kerr.msg);
      send_reject(c, c->work, rid, len, SW_REJECT_UNSPECIFIED, kerr.msg);
      return;
    }
    bound = kr ? bound_buf : NULL;
  }
  if (bound && strcmp(bound, key)) {
    c->refused_identity++;
    sw_log_warn("refused Hello as worker %s from key '%s': the id is bound to key '%s'",
                h->worker_id, key, bound);
    send_reject(c, c->work, rid, len, SW_REJECT_INCOMPATIBLE, "worker id bound to another key");
    return;
  }
  /* A connection that said Hello as one worker id (or with another key) is not another. */
  if (s && (strcmp(s->worker_id, h->worker_id) || strcmp(s->key, key))) {
    c->refused_identity++;
    sw_log_warn("refused Hello as worker %s on the connection of worker %s", h->worker_id,
                s->worker_id);
    send_reject(c, c->work, rid, len, SW_REJECT_INCOMPATIBLE,
                "connection already bound to another worker id");
    return;
  }
  /* A worker id held by another live connection would mix two machines' runs, or be a peer
   * taking over a worker's lease: refused, except a reconnect with the same CURVE key. A
   * session silent past liveness is replaced; its lease stays with the worker id. */
  struct session *other = find_worker(c, h->worker_id);
  if (other && other != s) {
    int live = t - other->last_recv_ms <= (int64_t)c->hb_ms * c->liveness;
    if (live && !(c->zap && !strcmp(other->key, key))) {
      c->refused_identity++;
      sw_log_warn("refused Hello as worker %s from another connection: its session %s is live",
                  h->worker_id, other->session_id);
      send_reject(c, c->work, rid, len, SW_REJECT_INCOMPATIBLE,
                  "worker id already in use by a live session");
      return;
    }
    remove_session(c, other);
  }
  if (!s && !(s = add_session(c, rid, len))) return;
  snprintf(s->key, sizeof s->key, "%s", key);
  char *fp = fingerprint_json(h), *lb = labels_json(h);
  struct sw_err err = {0};
  int rc = sw_sched_worker_hello(c->sched, h->worker_id, fp, lb, t, &err);
  if (!rc && c->zap && !bound) rc = sw_sched_worker_bind(c->sched, h->worker_id, key, &err);
  free(fp);
  free(lb);
  if (rc) {
    sw_log_error("hello from %s: %s", h->worker_id, err.msg);
    send_reject(c, c->work, rid, len, SW_REJECT_UNSPECIFIED, err.msg);
    remove_session(c, s);
    return;
  }
  snprintf(s->worker_id, sizeof s->worker_id, "%s", h->worker_id);
  snprintf(s->session_id, sizeof s->session_id, "%s.%" PRIu64, h->worker_id, ++c->session_counter);
  s->created_ms = t;
  s->last_recv_ms = t;
  s->waiting = 0;
  struct sw_msg w;
  sw_msg_init(&w, SW_MSG_WELCOME);
  snprintf(w.u.welcome.session_id, sizeof w.u.welcome.session_id, "%s", s->session_id);
  w.u.welcome.heartbeat_ms = (uint32_t)c->hb_ms;
  w.u.welcome.liveness = (uint32_t)c->liveness;
  w.u.welcome.lease_ttl_ms = (uint32_t)c->lease_ttl_ms;
  send_to(c, c->work, rid, len, &w);
  sw_log_info("worker %s joined (session %s, %s, %u cores)", h->worker_id, s->session_id,
              h->fp.hostname, h->fp.cores);
}

static struct sw_window_sample *conv_samples(const struct sw_msg_sample *in, size_t n) {
  struct sw_window_sample *out = calloc(n ? n : 1, sizeof *out);
  if (!out) return NULL;
  for (size_t i = 0; i < n; i++) {
    out[i].t_ms = in[i].t_ms;
    out[i].load1 = in[i].load1;
    out[i].cpu_other = in[i].cpu_other;
    out[i].cpu_total = in[i].cpu_total;
    out[i].mem_avail = (double)in[i].mem_avail;
    out[i].cpu_trainer = in[i].cpu_trainer;
    out[i].cpu_self = in[i].cpu_self;
    out[i].has_gpu = in[i].has_gpu;
    out[i].gpu_util = in[i].gpu_util;
    out[i].gpu_sm_mhz = in[i].gpu_sm_mhz;
    out[i].gpu_temp_c = in[i].gpu_temp_c;
    out[i].gpu_power_w = in[i].gpu_power_w;
    out[i].gpu_throttle = in[i].gpu_throttle;
    out[i].gpu_foreign = in[i].gpu_foreign;
  }
  return out;
}

static void on_run_finished(sw_coord_t *c, struct session *s, const struct sw_msg *m, int64_t t) {
  const struct sw_msg_run_finished *f = &m->u.run_finished;
  struct sw_window_sample *pre = conv_samples(f->pre_samples, f->n_pre_samples);
  struct sw_window_sample *dur = conv_samples(f->samples, f->n_samples);
  if (!pre || !dur) {
    free(pre);
    free(dur);
    return; /* out of memory: not acknowledged, the worker resends */
  }
  struct sw_run_result r = {.lease_id = (int64_t)f->lease_id,
                            .epoch = f->epoch,
                            .worker_id = s->worker_id,
                            .run_id = (int64_t)f->run_id,
                            .attempt = (int)f->attempt,
                            .exit_status = f->exit_status,
                            .result_json = f->result_json,
                            .error_text = f->error,
                            .pre = pre,
                            .n_pre = (int)f->n_pre_samples,
                            .during = dur,
                            .n_during = (int)f->n_samples,
                            .quiet = f->quiet,
                            .env_before = f->env_before,
                            .env_after = f->env_after,
                            .run_start_wall_ms = f->run_start_wall_ms,
                            .run_end_wall_ms = f->run_end_wall_ms};
  struct sw_err err = {0};
  int rc = sw_sched_result(c->sched, &r, t, &err);
  free(pre);
  free(dur);
  c->results++;
  if (rc == 0 && f->n_artifacts && c->artifacts) {
    /* Before the Ack: the worker uploads once acknowledged, and the store must expect it. */
    static const char *const SQL = "SELECT p.sweep_id FROM runs r JOIN pairs p ON p.id = "
                                   "r.pair_id WHERE r.id = ?1";
    struct sw_spec_artifacts ar = sw_spec_artifacts_defaults();
    sqlite3_stmt *st;
    if (!sw_store_stmt(c->store, SQL, &st, NULL)) {
      sqlite3_bind_int64(st, 1, (sqlite3_int64)f->run_id);
      int64_t sweep = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
      sqlite3_reset(st);
      if (sweep) sweep_artifacts(c, sweep, &ar);
    }
    struct sw_err aerr = {0};
    if (sw_artifact_expect(c->store, (int64_t)f->run_id, f->attempt, f->artifacts, f->n_artifacts,
                           &ar, &aerr))
      sw_log_warn("run %" PRIu64 ": artifacts not recorded (their uploads will be refused): %s",
                  f->run_id, aerr.msg);
  }
  if (rc == 0) {
    struct sw_msg a;
    sw_msg_init(&a, SW_MSG_ACK);
    a.u.ack.ack_seq = m->seq;
    a.u.ack.run_id = f->run_id;
    a.u.ack.attempt = f->attempt;
    send_to(c, c->work, s->rid, s->rid_len, &a);
    c->acks++;
    s->runs_finished++;
    s->run_id = 0;
    c->need_assign = 1;
  } else if (rc == SW_ESTATE || rc == SW_ENOTFOUND) {
    c->stale++;
    sw_log_warn("stale result of run %" PRIu64 " from %s: %s", f->run_id, s->worker_id, err.msg);
    send_cancel(c, s, (int64_t)f->lease_id, "stale lease: result refused");
  } else {
    c->runs_failed_store++;
    sw_log_error("storing run %" PRIu64 " from %s failed (not acknowledged): %s", f->run_id,
                 s->worker_id, err.msg);
  }
}

/* Reads the sweep, arm and configured iterations of the session's current run (for status);
 * a run the store does not know leaves them empty. */
static void run_place(sw_coord_t *c, struct session *s) {
  static const char *const SQL = "SELECT p.sweep_id, r.arm, r.config_json FROM runs r JOIN pairs p "
                                 "ON p.id = r.pair_id WHERE r.id = ?1";
  s->run_sweep = 0;
  s->run_arm[0] = '\0';
  s->run_iterations = 0;
  sqlite3_stmt *st;
  struct sw_err err = {0};
  if (sw_store_stmt(c->store, SQL, &st, &err)) return;
  sqlite3_bind_int64(st, 1, (sqlite3_int64)s->run_id);
  if (sqlite3_step(st) == SQLITE_ROW) {
    s->run_sweep = sqlite3_column_int64(st, 0);
    snprintf(s->run_arm, sizeof s->run_arm, "%s", (const char *)sqlite3_column_text(st, 1));
    json_t *cfg = json_loads((const char *)sqlite3_column_text(st, 2), 0, NULL);
    json_t *it = json_object_get(cfg, "iterations");
    if (json_is_integer(it) && json_integer_value(it) > 0)
      s->run_iterations = json_integer_value(it);
    json_decref(cfg);
  }
  sqlite3_reset(st);
}

static void handle_work(sw_coord_t *c, const void *rid, size_t len, struct sw_msg *m,
                        const char *key, int64_t t) {
  struct session *s = find_rid(c, rid, len);
  if (m->type == SW_MSG_HELLO) {
    on_hello(c, rid, len, s, m, key, t);
    return;
  }
  if (!s) {
    send_reject(c, c->work, rid, len, SW_REJECT_UNKNOWN, "no session: send Hello");
    return;
  }
  if (strcmp(s->key, key)) {
    /* Another key behind this session's routing id: never the session's frame. */
    c->dropped_identity++;
    c->st_work.dropped++;
    sw_log_warn("dropped %s for worker %s from key '%s' (its session's key is '%s')",
                sw_msg_type_name(m->type), s->worker_id, key, s->key);
    return;
  }
  s->last_recv_ms = t;
  struct sw_err err = {0};
  switch (m->type) {
  case SW_MSG_READY:
    if (!s->waiting) {
      s->waiting = 1;
      s->ready_us = sw_clock_mono_ns() / 1000;
    }
    s->lease_id = 0;
    try_assign(c, s, t, 1);
    break;
  case SW_MSG_RUN_STARTED:
    s->run_id = m->u.run_started.run_id;
    s->iter = 0;
    s->train_s = 0;
    run_place(c, s);
    sw_log_info("%s: run %" PRIu64 " started after %.1f s quiet wait", s->worker_id,
                m->u.run_started.run_id, m->u.run_started.waited_s);
    break;
  case SW_MSG_PROGRESS:
    if (s->run_id != m->u.progress.run_id) {
      s->run_id = m->u.progress.run_id;
      run_place(c, s);
    }
    s->iter = m->u.progress.iter;
    s->train_s = m->u.progress.train_s;
    break;
  case SW_MSG_RUN_FINISHED: on_run_finished(c, s, m, t); break;
  case SW_MSG_LEASE_DONE:
    if (sw_sched_lease_done(c->sched, (int64_t)m->u.lease_done.lease_id, m->u.lease_done.epoch,
                            s->worker_id, t, &err) == 0) {
      if (s->lease_id == (int64_t)m->u.lease_done.lease_id) s->lease_id = 0;
    } else {
      sw_log_debug("LeaseDone from %s: %s", s->worker_id, err.msg);
    }
    c->need_assign = 1;
    break;
  case SW_MSG_HEARTBEAT:
    if (m->u.heartbeat.lease_id) {
      if (sw_sched_renew(c->sched, (int64_t)m->u.heartbeat.lease_id, m->u.heartbeat.epoch,
                         s->worker_id, t, &err) == SW_ESTATE) {
        c->stale++;
        send_cancel(c, s, (int64_t)m->u.heartbeat.lease_id, "stale lease: abort it");
      }
    }
    break;
  default:
    /* Coordinator-to-worker or control messages on the worker endpoint are out of contract. */
    c->st_work.dropped++;
    break;
  }
}

/* ---- control endpoint ---------------------------------------------------------------------- */

int sw_coord_submit(sw_coord_t *c, const char *yaml, const char *file_name, int64_t *sweep_id,
                    struct sw_err *err) {
  int rc = sw_sched_submit(c->sched, yaml, file_name, NULL, now_ms(), sweep_id, err);
  if (!rc)
    sw_log_info("sweep %" PRId64 " submitted from %s", *sweep_id, file_name ? file_name : "?");
  c->need_assign = 1;
  return rc;
}

/* key: the connection's User-Id (borrowed; NULL when insecure). With CurveZMQ only a submitter
 * key may submit or cancel; a viewer's request is answered with Error. */
static void handle_control(sw_coord_t *c, const void *rid, size_t len, struct sw_msg *m,
                           const char *key) {
  struct sw_msg r;
  struct sw_err err = {0};
  char *owned = NULL;
  if (c->zap && (m->type == SW_MSG_SUBMIT_REQ || m->type == SW_MSG_CANCEL_REQ) &&
      sw_zap_role(key) != SW_ZAP_ROLE_SUBMITTER) {
    sw_zap_refused(c->zap, key, m->type == SW_MSG_SUBMIT_REQ ? "submit" : "cancel");
    sw_err_set(&err, SW_EINVAL, "viewer keys may not submit/cancel");
    goto error;
  }
  switch (m->type) {
  case SW_MSG_SUBMIT_REQ: {
    int64_t id = 0;
    sw_msg_init(&r, SW_MSG_SUBMIT_REP);
    if (sw_coord_submit(c, m->u.submit_req.spec_yaml, m->u.submit_req.file_name, &id, &err))
      r.u.submit_rep.error = err.msg;
    else
      r.u.submit_rep.sweep_id = (uint64_t)id;
    break;
  }
  case SW_MSG_STATUS_REQ: {
    uint64_t off = m->u.status_req.workers_offset;
    uint32_t lim = m->u.status_req.workers_limit;
    json_t *st = sw_coord_status_json(c, (int64_t)m->u.status_req.sweep_id,
                                      off > INT32_MAX ? INT32_MAX : (int64_t)off,
                                      lim > INT32_MAX ? INT32_MAX : (int)lim, &err);
    if (!st) goto error;
    if (m->u.status_req.format == SW_FMT_JSON)
      owned = json_dumps(st, JSON_COMPACT);
    else
      owned = sw_watch_status_text(st);
    json_decref(st);
    sw_msg_init(&r, SW_MSG_STATUS_REP);
    r.u.status_rep.format = m->u.status_req.format == SW_FMT_JSON ? SW_FMT_JSON : SW_FMT_TEXT;
    r.u.status_rep.body = owned ? owned : "";
    break;
  }
  case SW_MSG_REPORT_REQ:
    /* Rendered by the reader thread; its reply is sent from on_reader_reply. */
    if (sw_reader_submit(c->reader, rid, len, (int64_t)m->u.report_req.sweep_id,
                         (int)m->u.report_req.format, &err))
      goto error;
    return;
  case SW_MSG_CANCEL_REQ: {
    int64_t leases[256];
    int n = 0;
    if (sw_sched_cancel(c->sched, (int64_t)m->u.cancel_req.sweep_id, now_ms(), leases, 256, &n,
                        &err))
      goto error;
    for (int i = 0; i < n; i++) {
      const char *wid = sw_sched_lease_worker(c->sched, leases[i]);
      struct session *s = wid ? find_worker(c, wid) : NULL;
      if (!s) {
        for (size_t k = 0; k < c->n_sessions; k++)
          if (c->sessions[k]->lease_id == leases[i]) s = c->sessions[k];
      }
      if (s) send_cancel(c, s, leases[i], "sweep cancelled");
    }
    sw_msg_init(&r, SW_MSG_CANCEL_REP);
    r.u.cancel_rep.sweep_id = m->u.cancel_req.sweep_id;
    r.u.cancel_rep.runs_cancelled = (uint32_t)n;
    break;
  }
  default:
    sw_err_set(&err, SW_EPROTO, "%s is not a control request", sw_msg_type_name(m->type));
    goto error;
  }
  send_to(c, c->control, rid, len, &r);
  free(owned);
  return;
error:
  free(owned);
  sw_msg_init(&r, SW_MSG_ERROR);
  r.u.error.code = err.code ? err.code : SW_EINVAL;
  r.u.error.message = err.msg;
  send_to(c, c->control, rid, len, &r);
}

/* Replies finished by the reader thread, sent on the control socket. */
static void recv_reader(sw_coord_t *c) {
  struct sw_reader_reply rep;
  for (int budget = 0; budget < 64 && sw_reader_take(c->reader, &rep); budget++) {
    struct sw_msg r;
    if (rep.code) {
      sw_msg_init(&r, SW_MSG_ERROR);
      r.u.error.code = rep.code;
      r.u.error.message = rep.msg;
    } else {
      sw_msg_init(&r, SW_MSG_REPORT_REP);
      r.u.report_rep.format = (enum sw_msg_format)rep.format;
      r.u.report_rep.body = rep.body;
    }
    send_to(c, c->control, rep.rid, rep.rid_len, &r);
    free(rep.body);
  }
}

/* ---- frames -------------------------------------------------------------------------------- */

static void recv_endpoint(sw_coord_t *c, void *sock, struct endpoint_stats *st, int is_work) {
  for (int budget = 0; budget < 1000; budget++) {
    zmq_msg_t f[3];
    int n = recv_frames(sock, f, 2, ZMQ_DONTWAIT);
    if (n < 0) return;
    st->frames++;
    int64_t t = now_ms();
    if (n != 2) {
      /* ROUTER frames are [identity, body]; anything else is out of contract. */
      st->dropped++;
      close_frames(f, n > 2 ? 2 : n);
      continue;
    }
    struct sw_msg m;
    struct sw_err err = {0};
    int rc = sw_codec_decode(zmq_msg_data(&f[1]), zmq_msg_size(&f[1]), &m, &err);
    if (rc) {
      st->dropped++;
      if (m.bad_protocol) {
        st->bad_protocol++;
        char why[128];
        snprintf(why, sizeof why, "protocol version %u not supported (this coordinator speaks %u)",
                 m.protocol, SW_PROTOCOL_VERSION);
        send_reject(c, sock, zmq_msg_data(&f[0]), zmq_msg_size(&f[0]), SW_REJECT_PROTOCOL, why);
      } else {
        sw_log_debug("dropped a malformed frame: %s", err.msg);
      }
      sw_msg_clear(&m);
      close_frames(f, 2);
      continue;
    }
    /* The ZAP handler's User-Id (the key's allow-list name; on control with its role prefix)
     * rides on every message of a CURVE connection; insecure connections have none. */
    const char *key = zmq_msg_gets(&f[1], "User-Id");
    if (!key) key = zmq_msg_gets(&f[0], "User-Id");
    if (is_work)
      handle_work(c, zmq_msg_data(&f[0]), zmq_msg_size(&f[0]), &m, key ? key : "", t);
    else
      handle_control(c, zmq_msg_data(&f[0]), zmq_msg_size(&f[0]), &m, key);
    sw_msg_clear(&m);
    close_frames(f, 2);
  }
}

static void recv_monitor(void *mon, struct endpoint_stats *st) {
  for (;;) {
    zmq_msg_t f[3];
    int n = recv_frames(mon, f, 2, ZMQ_DONTWAIT);
    if (n < 0) return;
    if (n >= 1 && zmq_msg_size(&f[0]) >= 2) {
      uint16_t ev;
      memcpy(&ev, zmq_msg_data(&f[0]), 2);
      if (ev == ZMQ_EVENT_DISCONNECTED)
        st->disconnects++;
      else if (ev == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH)
        st->auth_denied++;
    }
    close_frames(f, n > 2 ? 2 : n);
  }
}

/* ---- timers -------------------------------------------------------------------------------- */

/* The status snapshot for opts->on_status (the dashboard), made on this thread. */
static void publish_status(sw_coord_t *c) {
  if (!c->o->on_status) return;
  struct sw_err err = {0};
  json_t *st = sw_coord_status_json(c, 0, 0, SW_SCHED_STATUS_WORKERS_MAX, &err);
  if (!st) {
    sw_log_debug("status snapshot: %s", err.msg);
    return;
  }
  json_object_set_new(st, "t_ms", json_integer(now_ms()));
  char *text = json_dumps(st, JSON_COMPACT);
  json_decref(st);
  if (text) c->o->on_status(c->o->on_status_arg, text);
  free(text);
}

static void tick(sw_coord_t *c, int64_t t) {
  /* Liveness: a worker silent for `liveness` intervals is offline; its lease runs on. */
  for (size_t i = 0; i < c->n_sessions;) {
    struct session *s = c->sessions[i];
    if (t - s->last_recv_ms > (int64_t)c->hb_ms * c->liveness) {
      sw_log_warn("worker %s silent for %" PRId64 " ms: offline", s->worker_id,
                  t - s->last_recv_ms);
      sw_sched_worker_gone(c->sched, s->worker_id, t, NULL);
      remove_session(c, s);
      continue;
    }
    i++;
  }
  for (size_t i = 0; i < c->n_sessions; i++) {
    struct session *s = c->sessions[i];
    struct sw_msg m;
    sw_msg_init(&m, SW_MSG_HEARTBEAT);
    m.u.heartbeat.lease_id = (uint64_t)(s->lease_id > 0 ? s->lease_id : 0);
    m.u.heartbeat.epoch = s->epoch;
    send_to(c, c->work, s->rid, s->rid_len, &m);
  }
  int expired = 0;
  struct sw_err err = {0};
  if (sw_sched_tick(c->sched, t, &expired, &err)) sw_log_error("lease expiry: %s", err.msg);
  if (expired) sw_log_warn("%d lease(s) expired: their pairs are re-queued", expired);
  c->need_assign = 1;
  publish_status(c);
}

int sw_coord_poll(sw_coord_t *c, int timeout_ms, struct sw_err *err) {
  zmq_pollitem_t items[5] = {{c->work, 0, ZMQ_POLLIN, 0},
                             {c->control, 0, ZMQ_POLLIN, 0},
                             {c->mon_work, 0, ZMQ_POLLIN, 0},
                             {c->mon_control, 0, ZMQ_POLLIN, 0},
                             {sw_reader_socket(c->reader), 0, ZMQ_POLLIN, 0}};
  int64_t t = now_ms();
  int64_t until_tick = c->last_tick_ms + c->hb_ms - t;
  if (until_tick < timeout_ms) timeout_ms = until_tick > 0 ? (int)until_tick : 0;
  int n = zmq_poll(items, 5, timeout_ms);
  if (n < 0 && errno != EINTR) return sw_err_set(err, SW_ENET, "zmq_poll: %s", zmq_strerror(errno));
  if (n > 0) {
    if (items[0].revents & ZMQ_POLLIN) recv_endpoint(c, c->work, &c->st_work, 1);
    if (items[1].revents & ZMQ_POLLIN) recv_endpoint(c, c->control, &c->st_control, 0);
    if (items[2].revents & ZMQ_POLLIN) recv_monitor(c->mon_work, &c->st_work);
    if (items[3].revents & ZMQ_POLLIN) recv_monitor(c->mon_control, &c->st_control);
    if (items[4].revents & ZMQ_POLLIN) recv_reader(c);
  }
  t = now_ms();
  if (t - c->last_tick_ms >= c->hb_ms) {
    c->last_tick_ms = t;
    tick(c, t);
    /* Verdicts and finished sweeps become webhook notifications; the POSTs happen in the
     * notifier's thread, here they are only queued. */
    struct sw_err nerr = {0};
    if (sw_notify_scan(c->notify, c->store, &c->notify_event, c->o->dashboard_url, &nerr))
      sw_log_warn("notifications: %s", nerr.msg);
  }
  if (c->need_assign) assign_waiting(c, t);
  return 0;
}

int sw_coord_run(sw_coord_t *c, struct sw_err *err) {
  int rc = 0;
  while (!rc && !(c->o->stop && *c->o->stop)) rc = sw_coord_poll(c, 200, err);
  return rc;
}

/* ---- status -------------------------------------------------------------------------------- */

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Resident set size of this process in KiB, -1 when unknown: the task's basic info on macOS
 * (no /proc there), VmRSS of /proc/self/status elsewhere. */
static long rss_kb(void) {
#ifdef __APPLE__
  mach_task_basic_info_data_t info;
  mach_msg_type_number_t count = MACH_TASK_BASIC_INFO_COUNT;
  if (task_info(mach_task_self(), MACH_TASK_BASIC_INFO, (task_info_t)&info, &count) != KERN_SUCCESS)
    return -1;
  return (long)(info.resident_size / 1024);
#else
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long kb = -1;
  if (!f) return -1;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "VmRSS: %ld kB", &kb) == 1) break;
  fclose(f);
  return kb;
#endif
}

/* Bytes of the heap in use (handed out by malloc and not yet freed) in KiB, -1 when unknown:
 * the sanitizer's allocator when built with one (it replaces malloc), else the malloc zones' size
 * in use on macOS, mallinfo2's arena and mmap blocks on glibc. Unlike the resident size it does
 * not count freed memory the allocator keeps, so it is what a leak grows. */
static long heap_kb(void) {
#if SW_HAS_SANITIZER
  return (long)(__sanitizer_get_current_allocated_bytes() / 1024);
#elif defined(__APPLE__)
  malloc_statistics_t ms;
  malloc_zone_statistics(NULL, &ms);
  return (long)(ms.size_in_use / 1024);
#elif defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
  struct mallinfo2 mi = mallinfo2();
  return (long)((mi.uordblks + mi.hblkhd) / 1024);
#elif defined(__GLIBC__)
  struct mallinfo mi = mallinfo(); /* int fields: wrap past 2 GiB, enough for a leak test */
  return (long)(((unsigned long)(unsigned)mi.uordblks + (unsigned)mi.hblkhd) / 1024);
#else
  return -1;
#endif
}

/* {n, p50_ms, p99_ms, max_ms} of a latency ring (only n when empty). */
static json_t *lat_json(const struct lat_ring *r) {
  json_t *o = json_object();
  json_object_set_new(o, "n", json_integer((json_int_t)r->n));
  if (!r->n) return o;
  double *v = malloc(r->n * sizeof *v);
  if (!v) return o;
  memcpy(v, r->us, r->n * sizeof *v);
  qsort(v, r->n, sizeof *v, cmp_double);
  json_object_set_new(o, "p50_ms", json_real(v[(r->n - 1) / 2] / 1000.0));
  json_object_set_new(o, "p99_ms", json_real(v[(size_t)((double)(r->n - 1) * 0.99)] / 1000.0));
  json_object_set_new(o, "max_ms", json_real(v[r->n - 1] / 1000.0));
  free(v);
  return o;
}

static json_t *stats_json(const struct endpoint_stats *s) {
  return json_pack("{s:I,s:I,s:I,s:I,s:I}", "frames", (json_int_t)s->frames, "dropped",
                   (json_int_t)s->dropped, "bad_protocol", (json_int_t)s->bad_protocol,
                   "disconnects", (json_int_t)s->disconnects, "auth_failures",
                   (json_int_t)s->auth_denied);
}

json_t *sw_coord_status_json(sw_coord_t *c, int64_t sweep_id, int64_t workers_offset,
                             int workers_limit, struct sw_err *err) {
  json_t *st = sw_sched_status_json(c->sched, sweep_id, workers_offset, workers_limit, err);
  if (!st && err && err->code != SW_EDB) return NULL;
  if (!st) {
    /* The store cannot be read (locked, failing disk): the live part still answers, with the
     * reason, so that `status` shows the outage instead of failing with it. */
    st = json_pack("{s:[],s:[],s:{s:i,s:i,s:i},s:s}", "sweeps", "workers", "workers_page", "offset",
                   0, "limit", 0, "total", 0, "sweeps_unavailable", err->msg);
    if (!st) return NULL;
    memset(err, 0, sizeof *err);
  }
  int64_t t = now_ms();
  json_t *sessions = json_array();
  /* Sessions are paged like the workers (the page the scheduler settled on). */
  json_t *page = json_object_get(st, "workers_page");
  size_t from = (size_t)json_integer_value(json_object_get(page, "offset"));
  size_t shown = (size_t)json_integer_value(json_object_get(page, "limit"));
  json_object_set_new(page, "sessions_total", json_integer((json_int_t)c->n_sessions));
  for (size_t i = from; i < c->n_sessions && i - from < shown; i++) {
    struct session *s = c->sessions[i];
    json_t *o = json_pack("{s:s,s:s,s:b,s:I,s:I,s:I,s:f,s:I,s:I}", "id", s->worker_id, "session",
                          s->session_id, "waiting", s->waiting, "lease", (json_int_t)s->lease_id,
                          "run", (json_int_t)s->run_id, "iter", (json_int_t)s->iter, "train_s",
                          s->train_s, "runs_finished", (json_int_t)s->runs_finished, "silent_ms",
                          (json_int_t)(t - s->last_recv_ms));
    if (s->run_id && s->run_sweep) {
      json_object_set_new(o, "sweep", json_integer(s->run_sweep));
      json_object_set_new(o, "arm", json_string(s->run_arm));
      json_object_set_new(o, "iterations",
                          s->run_iterations ? json_integer(s->run_iterations) : json_null());
    }
    json_array_append_new(sessions, o);
  }
  json_t *lat = lat_json(&c->lat_all), *lat_now = lat_json(&c->lat_now);
  json_t *co = json_pack(
      "{s:o,s:o,s:o,s:o,s:o,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:i,s:i,s:I}", "work",
      stats_json(&c->st_work), "control", stats_json(&c->st_control), "sessions", sessions,
      "ready_to_assign", lat, "ready_to_assign_immediate", lat_now, "assigns",
      (json_int_t)c->assigns, "results", (json_int_t)c->results, "acks", (json_int_t)c->acks,
      "stale", (json_int_t)c->stale, "zap_denied", (json_int_t)sw_zap_denied(c->zap), "zap_allowed",
      (json_int_t)sw_zap_allowed(c->zap), "refused_identity", (json_int_t)c->refused_identity,
      "dropped_identity", (json_int_t)c->dropped_identity, "rss_kb", (json_int_t)rss_kb(),
      "heap_kb", (json_int_t)heap_kb(), "heartbeat_ms", c->hb_ms, "liveness", c->liveness,
      "lease_ttl_ms", (json_int_t)c->lease_ttl_ms);
  struct sw_notify_counts nc;
  sw_notify_get_counts(c->notify, &nc);
  json_object_set_new(co, "webhooks",
                      json_pack("{s:I,s:I,s:I,s:I}", "sent", (json_int_t)nc.sent, "failed",
                                (json_int_t)nc.failed, "dropped", (json_int_t)nc.dropped, "queued",
                                (json_int_t)nc.queued));
  json_object_set_new(st, "coordinator", co);
  struct sw_store_health h;
  sw_store_health(c->store, &h);
  json_object_set_new(st, "store",
                      json_pack("{s:b,s:I,s:I,s:I,s:I,s:s,s:I}", "failing", h.failing, "failures",
                                (json_int_t)h.failures, "failing_since_ms",
                                (json_int_t)h.failing_since_ms, "last_fail_ms",
                                (json_int_t)h.last_fail_ms, "last_ok_ms", (json_int_t)h.last_ok_ms,
                                "last_error", h.last_error, "results_not_stored",
                                (json_int_t)c->runs_failed_store));
  return st;
}

int sw_coord_sweep_finished(sw_coord_t *c, int64_t sweep_id, struct sw_err *err) {
  return sw_sched_sweep_finished(c->sched, sweep_id, err);
}

int sw_coord_sessions(const sw_coord_t *c) { return (int)c->n_sessions; }

/* ---- lifecycle ----------------------------------------------------------------------------- */

/* zap_domain names the endpoint to the ZAP handler, which admits by it (sw_zap.h). */
static void *router(sw_coord_t *c, const char *ep, const char *zap_domain, const char *mon_ep,
                    void **mon, struct sw_err *err) {
  void *s = zmq_socket(c->ctx, ZMQ_ROUTER);
  if (!s) {
    sw_err_set(err, SW_ENET, "zmq_socket: %s", zmq_strerror(errno));
    return NULL;
  }
  int one = 1, zero = 0, hs = 3000, hwm = 100000;
  int64_t maxmsg = SW_MSG_FRAME_MAX;
  zmq_setsockopt(s, ZMQ_LINGER, &zero, sizeof zero);
  zmq_setsockopt(s, ZMQ_ROUTER_MANDATORY, &one, sizeof one);
  /* No ZMQ_ROUTER_HANDOVER: a second connection presenting a live peer's routing id is ignored
   * by the ROUTER instead of stealing its route (workers use a fresh routing id per socket). */
  zmq_setsockopt(s, ZMQ_MAXMSGSIZE, &maxmsg, sizeof maxmsg);
  zmq_setsockopt(s, ZMQ_HANDSHAKE_IVL, &hs, sizeof hs);
  zmq_setsockopt(s, ZMQ_SNDHWM, &hwm, sizeof hwm);
  zmq_setsockopt(s, ZMQ_RCVHWM, &hwm, sizeof hwm);
  if (!c->o->insecure) {
    zmq_setsockopt(s, ZMQ_CURVE_SERVER, &one, sizeof one);
    zmq_setsockopt(s, ZMQ_CURVE_SECRETKEY, c->secret_key, 40);
    zmq_setsockopt(s, ZMQ_ZAP_DOMAIN, zap_domain, strlen(zap_domain));
  }
  if (zmq_socket_monitor(s, mon_ep, ZMQ_EVENT_DISCONNECTED | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH) ==
      0) {
    *mon = zmq_socket(c->ctx, ZMQ_PAIR);
    if (*mon) {
      zmq_setsockopt(*mon, ZMQ_LINGER, &zero, sizeof zero);
      zmq_connect(*mon, mon_ep);
    }
  }
  if (zmq_bind(s, ep) != 0) {
    sw_err_set(err, SW_ENET, "bind %s: %s", ep, zmq_strerror(errno));
    zmq_close(s);
    return NULL;
  }
  return s;
}

/* One coordinator per database: an flock on DB.lock (sw_hostlock, the same mechanism as the
 * workers' measurement lock: the kernel drops it when the process dies, and the file names the
 * holder), held until sw_coord_destroy. A second coordinator would expire the first one's
 * leases and interleave its commits. */
static int lock_db(sw_coord_t *c, const char *db, struct sw_err *err) {
  char path[4200], who[128] = "";
  snprintf(path, sizeof path, "%s.lock", db);
  int rc = sw_hostlock_open(path, "coordinator", &c->db_lock, err);
  if (!rc) rc = sw_hostlock_try(c->db_lock, who, sizeof who, err);
  if (rc == 0)
    return sw_err_set(err, SW_ESTATE,
                      "%s is in use by another coordinator (pid %s, lock %s): one coordinator per "
                      "database",
                      db, who[0] ? who : "?", path);
  return rc < 0 ? rc : 0;
}

/* A store with damaged pages is refused at start with a clear message rather than served until
 * every commit fails: PRAGMA quick_check (O(N) in the file size, once per start). */
static int check_db(sw_store_t *store, const char *db, struct sw_err *err) {
  sqlite3_stmt *st;
  if (sqlite3_prepare_v2(sw_store_db(store), "PRAGMA quick_check", -1, &st, NULL) != SQLITE_OK)
    return sw_err_set(err, SW_EDB, "%s: quick_check: %s", db, sqlite3_errmsg(sw_store_db(store)));
  int rc = sqlite3_step(st);
  const char *first = rc == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 0) : NULL;
  int ok = first && !strcmp(first, "ok");
  char what[256];
  snprintf(what, sizeof what, "%s", first ? first : sqlite3_errmsg(sw_store_db(store)));
  for (char *q = what; *q; q++) /* its report has a line per problem: one line here */
    if (*q == '\n') *q = ' ';
  sqlite3_finalize(st);
  if (!ok)
    return sw_err_set(err, SW_EDB,
                      "%s is damaged (PRAGMA quick_check: %s): restore it from a backup, or "
                      "recover it with `sqlite3 %s .recover`",
                      db, what, db);
  return 0;
}

int sw_coord_new(void *zmq_ctx, const struct sw_coord_opts *o, sw_coord_t **out,
                 struct sw_err *err) {
  *out = NULL;
  sw_coord_t *c = calloc(1, sizeof *c);
  if (!c) return sw_err_set(err, SW_ENOMEM, "coordinator: out of memory");
  c->o = o;
  c->ctx = zmq_ctx;
  c->hb_ms = o->heartbeat_ms > 0 ? o->heartbeat_ms : 1000;
  c->liveness = o->liveness > 0 ? o->liveness : 5;
  c->lease_ttl_ms = o->lease_ttl_ms > 0 ? o->lease_ttl_ms : 60000;
  c->last_tick_ms = now_ms();
  int rc = 0;
  if (!o->insecure) {
    /* Fail closed: secure mode needs our key pair and a non-empty allow-list. */
    if (!o->keys_dir) {
      rc = sw_err_set(err, SW_EINVAL,
                      "coordinator: --keys DIR (CurveZMQ) or an explicit "
                      "--insecure is required");
      goto fail;
    }
    if ((rc = sw_keys_load(o->keys_dir, c->public_key, c->secret_key, NULL, err))) goto fail;
    /* The handler is bound before either socket binds: libzmq admits every CURVE client
     * while no ZAP handler runs. */
    if ((rc = sw_zap_start(zmq_ctx, o->keys_dir, &c->zap, err))) goto fail;
  }
  const char *db = o->db_path ? o->db_path : SW_STORE_DEFAULT_PATH;
  {
    /* The default database's folder (results/) is made on first use; a --db names a place the
     * user chose, whose folder must exist: a typo must not create a store nobody finds. */
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", db);
    char *slash = strrchr(dir, '/');
    if (slash && slash != dir) {
      *slash = '\0';
      struct stat st;
      if (!o->db_path) {
        if ((rc = sw_fs_mkdir_p(dir, err))) goto fail;
      } else if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        rc = sw_err_set(err, SW_EINVAL, "--db %s: the folder %s %s (create it first)", db, dir,
                        stat(dir, &st) != 0 ? "does not exist" : "is not a folder");
        goto fail;
      }
    }
  }
  if ((rc = lock_db(c, db, err))) goto fail;
  {
    /* Short busy waits: the loop must keep answering heartbeats while another process holds the
     * database's lock; a write that meets the lock fails now and is retried (a result by its
     * worker's resend, an expiry by the next tick, an assignment by the next Ready). */
    struct sw_store_opts so;
    sw_store_opts_default(&so);
    so.busy_timeout_ms = SW_COORD_BUSY_MS;
    if ((rc = sw_store_open(db, &so, &c->store, err))) goto fail;
  }
  if ((rc = check_db(c->store, db, err))) goto fail;
  if ((rc = sw_reader_start(zmq_ctx, db, &c->reader, err))) goto fail;
  struct sw_sched_opts so;
  sw_sched_opts_default(&so);
  so.lease_ttl_ms = c->lease_ttl_ms;
  if (o->max_attempts > 0) so.max_attempts = o->max_attempts;
  if ((rc = sw_sched_new(c->store, &so, now_ms(), &c->sched, err))) goto fail;
  /* Notifications start from the events after this start: what happened before is history. */
  if (o->artifact_url) {
    if ((rc = sw_artifact_key_load(db, c->artifact_key, err))) goto fail;
    c->artifacts = 1;
  }
  if ((rc = sw_notify_last_event(c->store, &c->notify_event, err)) ||
      (rc = sw_notify_start(NULL, &c->notify, err)))
    goto fail;
  char mon[96];
  snprintf(mon, sizeof mon, "inproc://sw-mon-work-%p", (void *)c);
  c->work = router(c, o->bind_work ? o->bind_work : SW_COORD_BIND_WORK, SW_ZAP_DOMAIN_WORK, mon,
                   &c->mon_work, err);
  if (!c->work) {
    rc = SW_ENET;
    goto fail;
  }
  snprintf(mon, sizeof mon, "inproc://sw-mon-control-%p", (void *)c);
  c->control = router(c, o->bind_control ? o->bind_control : SW_COORD_BIND_CONTROL,
                      SW_ZAP_DOMAIN_CONTROL, mon, &c->mon_control, err);
  if (!c->control) {
    rc = SW_ENET;
    goto fail;
  }
  publish_status(c); /* the dashboard has the live view before the first heartbeat */
  *out = c;
  return 0;
fail:
  sw_coord_destroy(&c);
  return rc;
}

void sw_coord_destroy(sw_coord_t **self_p) {
  if (!self_p || !*self_p) return;
  sw_coord_t *c = *self_p;
  sw_reader_stop(&c->reader);
  sw_notify_stop(&c->notify);
  if (c->work) {
    zmq_socket_monitor(c->work, NULL, 0);
    zmq_close(c->work);
  }
  if (c->control) {
    zmq_socket_monitor(c->control, NULL, 0);
    zmq_close(c->control);
  }
  if (c->mon_work) zmq_close(c->mon_work);
  if (c->mon_control) zmq_close(c->mon_control);
  sw_zap_stop(&c->zap);
  sw_sched_destroy(&c->sched);
  sw_store_close(&c->store);
  sw_hostlock_close(&c->db_lock); /* releases the flock */
  for (size_t i = 0; i < c->n_sessions; i++) free(c->sessions[i]);
  free(c->sessions);
  free(c->lat_all.us);
  free(c->lat_now.us);
  free(c);
  *self_p = NULL;
}
