/* sw_worker.c: the worker's poll loop, its session state machine and the per-run phases
 * (scene preparation in a child, quiet wait, trainer run, delivery through the spool). */
#include "sw_worker.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "sw_clock.h"
#include "sw_codec.h"
#include "sw_fingerprint.h"
#include "sw_fs.h"
#include "sw_gpu.h"
#include "sw_hostlock.h"
#include "sw_keys.h"
#include "sw_log.h"
#include "sw_runner.h"
#include "sw_sampler.h"
#include "sw_scene_prep.h"
#include "sw_sha256.h"
#include "sw_spool.h"
#include "sw_upload.h"

#define MAX_SAMPLES 20000  /* per window; a 5-hour run sampled every second */
#define LOCK_YIELD_MS 500  /* after releasing the host lock, before trying to take it again */
#define RESEND_EVERY_HB 15 /* heartbeat intervals between resends of unacknowledged results */

enum session_state { S_DISCONNECTED, S_HELLO_SENT, S_CONNECTED };
/* P_DONE: every run of the lease has finished; LeaseDone waits until each result is
 * acknowledged, so the coordinator never closes a lease whose results it has not stored. */
enum run_phase { P_NONE, P_LOCK, P_PREP, P_QUIET, P_RUN, P_DONE };
#define DONE_KEPT 8 /* leases finished recently, whose LeaseDone is repeated if asked again */
#define BACKOFF_MIN_MS 1000
#define BACKOFF_MAX_MS 32000

struct window {
  struct sw_msg_sample *s;
  size_t n, cap;
};

struct worker {
  const struct sw_worker_opts *o;
  void *ctx, *sock;
  char id[SW_MSG_ID_MAX + 1];
  char public_key[41], secret_key[41], server_key[41];
  enum session_state state;
  uint64_t seq;
  int64_t hb_ms, liveness, lease_ttl_ms;
  int64_t last_recv_ms, last_send_ms, hello_ms, last_resend_ms;
  int ready_sent;
  struct sw_msg hello; /* built once; its lists are malloc'd */
  sw_spool_t *spool;
  sw_upload_t *uploads; /* artifact uploads, in their own thread (sw_upload.h) */
  sw_sampler_t *sampler;
  sw_gpu_t *gpu;             /* NVML, when the machine has it */
  sw_hostlock_t *hostlock;   /* NULL when this worker shares the host (--shared-host) */
  char host_lock_path[4200]; /* its file, which the upload thread takes too */
  int64_t lock_wait_ms, lock_logged_ms, lock_released_ms;
  char runs_dir[4200], scenes_dir[4200];

  /* current lease */
  int have_lease;
  struct sw_msg assign; /* decoded Assign, owned */
  size_t run_idx;
  enum run_phase phase;
  pid_t prep_pid;
  int prep_fd;
  char prep_buf[4400];
  size_t prep_len;
  char scene_dir[4400];
  struct sw_quiet quiet;
  int quiet_ok;
  int64_t quiet_start_ms, run_start_ms, last_sample_ms, last_progress_ms, sample_every_ms;
  struct window pre, during;
  sw_runner_t *runner;
  pid_t trainer_pgid; /* attributed by the sampler from start until the last sample */
  char *env_before;   /* the environment when the current run started (malloc'd) */
  int64_t run_start_wall_ms;
  char run_dir[4400];
  int abandon; /* the lease is being dropped: no result is sent for the running trainer */
  /* leases finished here (LeaseDone sent): an Assign of one again means our LeaseDone was lost */
  uint64_t done_lease[DONE_KEPT], done_epoch[DONE_KEPT];
  unsigned n_done;
  int64_t backoff_ms; /* the next reconnect's delay: doubles per failed attempt, jittered */
};

static int64_t now_ms(void) { return sw_clock_mono_ms(); }

/* ---- sending ------------------------------------------------------------------------------- */

/* Encodes and sends one message; returns the seq used, or 0 when it could not be sent now
 * (the session's heartbeat / spool logic covers what matters). */
static uint64_t send_msg(struct worker *w, struct sw_msg *m) {
  if (!w->sock) return 0;
  m->seq = ++w->seq;
  uint8_t *buf = NULL;
  size_t len = 0;
  struct sw_err err = {0};
  if (sw_codec_encode(m, &buf, &len, &err)) {
    sw_log_error("cannot encode %s: %s", sw_msg_type_name(m->type), err.msg);
    return 0;
  }
  int rc = zmq_send(w->sock, buf, len, ZMQ_DONTWAIT);
  free(buf);
  if (rc < 0) {
    sw_log_debug("send %s: %s", sw_msg_type_name(m->type), zmq_strerror(errno));
    return 0;
  }
  w->last_send_ms = now_ms();
  return m->seq;
}

static void send_simple(struct worker *w, enum sw_msg_type type) {
  struct sw_msg m;
  sw_msg_init(&m, type);
  send_msg(w, &m);
}

static uint64_t lease_id(const struct worker *w) {
  return w->have_lease ? w->assign.u.assign.lease_id : 0;
}
static uint64_t lease_epoch(const struct worker *w) {
  return w->have_lease ? w->assign.u.assign.epoch : 0;
}

static void send_heartbeat(struct worker *w) {
  struct sw_msg m;
  sw_msg_init(&m, SW_MSG_HEARTBEAT);
  /* A lease being dropped is not renewed: the coordinator's clock should run out on it. */
  if (!w->abandon) {
    m.u.heartbeat.lease_id = lease_id(w);
    m.u.heartbeat.epoch = lease_epoch(w);
  }
  send_msg(w, &m);
}

static void send_ready(struct worker *w) {
  if (w->state != S_CONNECTED || w->have_lease || w->ready_sent) return;
  send_simple(w, SW_MSG_READY);
  w->ready_sent = 1;
}

/* ---- socket lifecycle ---------------------------------------------------------------------- */

static void close_socket(struct worker *w) {
  if (w->sock) {
    int zero = 0;
    zmq_setsockopt(w->sock, ZMQ_LINGER, &zero, sizeof zero);
    zmq_close(w->sock);
    w->sock = NULL;
  }
  w->state = S_DISCONNECTED;
}

/* 32 random bits from /dev/urandom (the clock and pid when it cannot be read). */
static uint32_t random_u32(void) {
  uint32_t r = 0;
  int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd < 0 || read(fd, &r, sizeof r) != (ssize_t)sizeof r)
    r = (uint32_t)(sw_clock_mono_ns() ^ ((uint64_t)getpid() << 16));
  if (fd >= 0) close(fd);
  return r;
}

/* A routing id fresh for each socket, "ID.NONCE": the coordinator's ROUTER ignores a second
 * connection with a live peer's routing id (no handover), so a reconnect must not reuse the
 * old one; the worker id itself travels in Hello. */
static void fresh_routing_id(const struct worker *w, char *out, size_t cap) {
  snprintf(out, cap, "%s.%08" PRIx32, w->id, random_u32());
}

static int open_socket(struct worker *w, struct sw_err *err) {
  close_socket(w);
  w->sock = zmq_socket(w->ctx, ZMQ_DEALER);
  if (!w->sock) return sw_err_set(err, SW_ENET, "zmq_socket: %s", zmq_strerror(errno));
  int zero = 0, one = 1, hs = 3000;
  int64_t maxmsg = SW_MSG_FRAME_MAX;
  zmq_setsockopt(w->sock, ZMQ_LINGER, &zero, sizeof zero);
  char rid[SW_MSG_ID_MAX + 16];
  fresh_routing_id(w, rid, sizeof rid);
  zmq_setsockopt(w->sock, ZMQ_ROUTING_ID, rid, strlen(rid));
  zmq_setsockopt(w->sock, ZMQ_MAXMSGSIZE, &maxmsg, sizeof maxmsg);
  zmq_setsockopt(w->sock, ZMQ_HANDSHAKE_IVL, &hs, sizeof hs);
  /* No ZMQ_IMMEDIATE: Hello is sent right after connect and must wait for the connection.
   * A socket is closed (linger 0) on every reconnect, so nothing stale is queued for long. */
  (void)one;
  if (!w->o->insecure) {
    zmq_setsockopt(w->sock, ZMQ_CURVE_SERVERKEY, w->server_key, 40);
    zmq_setsockopt(w->sock, ZMQ_CURVE_PUBLICKEY, w->public_key, 40);
    zmq_setsockopt(w->sock, ZMQ_CURVE_SECRETKEY, w->secret_key, 40);
  }
  if (zmq_connect(w->sock, w->o->endpoint) != 0) {
    int e = errno;
    close_socket(w);
    return sw_err_set(err, SW_ENET, "connect %s: %s", w->o->endpoint, zmq_strerror(e));
  }
  return 0;
}

/* The delay before the next reconnect: 1 s, doubling per attempt without a Welcome up to 32 s,
 * each drawn uniformly from [d/2, d] so that a fleet cut off at once does not come back at once. */
static int64_t next_backoff(struct worker *w) {
  int64_t d = w->backoff_ms ? w->backoff_ms * 2 : BACKOFF_MIN_MS;
  if (d > BACKOFF_MAX_MS) d = BACKOFF_MAX_MS;
  w->backoff_ms = d;
  return d / 2 + (int64_t)(random_u32() % (uint32_t)(d / 2 + 1));
}

static void send_hello(struct worker *w) {
  w->hello.seq = 0;
  send_msg(w, &w->hello);
  w->state = S_HELLO_SENT;
  w->hello_ms = now_ms();
  w->ready_sent = 0;
}

/* ---- spool --------------------------------------------------------------------------------- */

static void resend_one(void *ctx, uint64_t run_id, uint32_t attempt, uint64_t lease,
                       const void *frame, size_t len) {
  struct worker *w = ctx;
  if (w->sock && zmq_send(w->sock, frame, len, ZMQ_DONTWAIT) >= 0)
    sw_log_info("resent spooled result of run %" PRIu64 " attempt %u (lease %" PRIu64 ")", run_id,
                attempt, lease);
}

struct spool_count {
  uint64_t lease;
  int n;
};

static void count_one(void *ctx, uint64_t run_id, uint32_t attempt, uint64_t lease,
                      const void *frame, size_t len) {
  struct spool_count *c = ctx;
  (void)run_id, (void)attempt, (void)frame, (void)len;
  c->n += lease == c->lease;
}

/* Results of lease still waiting for their Ack. */
static int spooled_for(struct worker *w, uint64_t lease) {
  struct spool_count c = {lease, 0};
  sw_spool_foreach(w->spool, count_one, &c);
  return c.n;
}

/* ---- lease and run phases ------------------------------------------------------------------ */

static void window_push(struct window *win, const struct sw_load_sample *s) {
  if (win->n == win->cap) {
    if (win->cap >= MAX_SAMPLES) {
      /* Keep the newest: shift by one (rare: only runs longer than the bound). */
      memmove(win->s, win->s + 1, (win->n - 1) * sizeof *win->s);
      win->n--;
    } else {
      size_t nc = win->cap ? win->cap * 2 : 64;
      struct sw_msg_sample *ns = realloc(win->s, nc * sizeof *ns);
      if (!ns) return;
      win->s = ns;
      win->cap = nc;
    }
  }
  struct sw_msg_sample *d = &win->s[win->n++];
  d->t_ms = s->t_ms; /* absolute monotonic; made relative to the run start when sent */
  d->load1 = s->load1 >= 0 ? s->load1 : 0;
  d->cpu_other = s->cpu_other >= 0 ? s->cpu_other : 0;
  d->cpu_total = s->cpu_total >= 0 ? s->cpu_total : 0;
  d->mem_avail = s->mem_avail > 0 ? (uint64_t)s->mem_avail : 0;
  d->cpu_trainer = s->cpu_trainer >= 0 ? s->cpu_trainer : 0;
  d->cpu_self = s->cpu_self >= 0 ? s->cpu_self : 0;
  d->has_gpu = false;
  d->gpu_util = d->gpu_sm_mhz = d->gpu_temp_c = d->gpu_power_w = 0;
  d->gpu_throttle = 0;
  d->gpu_foreign = s->gpu_users >= 0 ? s->gpu_users : -1;
}

static int pid_is_ours(void *ctx, int32_t pid) {
  return sw_sampler_is_ours(((struct worker *)ctx)->sampler, (pid_t)pid);
}

/* The NVML figures of the trainer's GPU into the newest sample of win. A foreign process seen
 * by NVML or through the device nodes counts; the larger of the two counts is kept. */
static void add_gpu(struct worker *w, struct window *win) {
  if (!w->gpu || !win || win->n == 0) return;
  struct sw_gpu_sample g;
  struct sw_err err = {0};
  if (sw_gpu_sample(w->gpu, pid_is_ours, w, &g, &err)) {
    sw_log_debug("gpu sampler: %s", err.msg);
    return;
  }
  struct sw_msg_sample *d = &win->s[win->n - 1];
  d->has_gpu = true;
  d->gpu_util = isfinite(g.util_pct) && g.util_pct >= 0 ? g.util_pct : 0;
  d->gpu_sm_mhz = isfinite(g.sm_mhz) && g.sm_mhz >= 0 ? g.sm_mhz : 0;
  d->gpu_temp_c = isfinite(g.temp_c) && g.temp_c >= 0 ? g.temp_c : 0;
  d->gpu_power_w = isfinite(g.power_w) && g.power_w >= 0 ? g.power_w : 0;
  d->gpu_throttle = g.throttle == SW_GPU_THROTTLE_UNKNOWN ? 0 : g.throttle;
  if (g.n_foreign > d->gpu_foreign) d->gpu_foreign = g.n_foreign;
}

static void window_reset(struct window *win) { win->n = 0; }

static void take_sample(struct worker *w, struct window *win, int64_t t) {
  struct sw_load_sample s;
  struct sw_err err = {0};
  if (sw_sampler_sample(w->sampler, t, &s, &err)) {
    sw_log_warn("load sampler: %s", err.msg);
    return;
  }
  w->last_sample_ms = t;
  if (win) {
    window_push(win, &s);
    add_gpu(w, win);
    if (win->n) s.gpu_users = win->s[win->n - 1].gpu_foreign;
  }
  if (w->phase == P_QUIET) {
    int q = sw_quiet_feed(&w->quiet, &s);
    if (q != SW_QUIET_WAIT) w->quiet_ok = (q == SW_QUIET_READY) ? 1 : -1;
  }
}

static void end_prep_child(struct worker *w) {
  if (w->prep_fd >= 0) {
    close(w->prep_fd);
    w->prep_fd = -1;
  }
  if (w->prep_pid > 0) {
    kill(w->prep_pid, SIGKILL);
    waitpid(w->prep_pid, NULL, 0);
    w->prep_pid = 0;
  }
}

/* The trainer is gone (reaped): its attribution ends once its last sample was taken. */
static void end_trainer(struct worker *w) {
  if (!w->trainer_pgid) return;
  struct sw_err err = {0};
  if (sw_sampler_trainer_end(w->sampler, &err)) sw_log_warn("load sampler: %s", err.msg);
  w->trainer_pgid = 0;
}

static void release_host(struct worker *w) {
  if (sw_hostlock_held(w->hostlock)) {
    sw_hostlock_release(w->hostlock);
    w->lock_released_ms = now_ms();
    sw_log_debug("host measurement lock released");
  }
}

static void drop_lease(struct worker *w, const char *why) {
  if (w->have_lease) sw_log_info("lease %" PRIu64 " dropped: %s", lease_id(w), why);
  end_prep_child(w);
  sw_runner_destroy(&w->runner);
  end_trainer(w);
  release_host(w);
  free(w->env_before);
  w->env_before = NULL;
  sw_msg_clear(&w->assign);
  w->have_lease = 0;
  w->phase = P_NONE;
  w->abandon = 0;
  w->ready_sent = 0;
  if (w->run_dir[0] && !w->o->keep_runs) sw_fs_rm_rf(w->run_dir, NULL);
  w->run_dir[0] = '\0';
}

/* Starts preparing the scene of the current run in a child process that writes the directory
 * (or "!error text") to a pipe, so the loop keeps heartbeating during a download. */
static void start_prep(struct worker *w) {
  const struct sw_msg_run *run = &w->assign.u.assign.runs[w->run_idx];
  w->phase = P_PREP;
  w->prep_len = 0;
  /* No scene, or a local path: nothing slow to do, so no child process is needed. */
  json_t *spec = json_loads(run->scene_json ? run->scene_json : "{}", 0, NULL);
  int quick =
      json_is_object(spec) && !json_object_get(spec, "generate") && !json_object_get(spec, "url");
  json_decref(spec);
  if (quick) {
    char path[4096];
    struct sw_err err = {0};
    if (sw_scene_prepare(run->scene_json, w->scenes_dir, w->o->splat_train, path, sizeof path,
                         &err))
      snprintf(w->prep_buf, sizeof w->prep_buf, "!%s", err.msg);
    else
      snprintf(w->prep_buf, sizeof w->prep_buf, "=%s", path);
    w->prep_len = strlen(w->prep_buf);
    w->prep_fd = -1;
    w->prep_pid = 0;
    return;
  }
  int pfd[2];
  if (pipe(pfd) != 0) {
    snprintf(w->prep_buf, sizeof w->prep_buf, "!pipe: %s", strerror(errno));
    w->prep_len = strlen(w->prep_buf);
    w->prep_fd = -1;
    w->prep_pid = 0;
    return;
  }
  pid_t pid = fork();
  if (pid == 0) {
    close(pfd[0]);
    char path[4096];
    struct sw_err err = {0};
    char line[4400];
    /* "=" + directory on success (an empty directory means "no scene"), "!" + reason on error. */
    if (sw_scene_prepare(run->scene_json, w->scenes_dir, w->o->splat_train, path, sizeof path,
                         &err))
      snprintf(line, sizeof line, "!%s", err.msg);
    else
      snprintf(line, sizeof line, "=%s", path);
    ssize_t left = (ssize_t)strlen(line);
    const char *p = line;
    while (left > 0) {
      ssize_t n = write(pfd[1], p, (size_t)left);
      if (n <= 0) break;
      p += n;
      left -= n;
    }
    _exit(0);
  }
  close(pfd[1]);
  if (pid < 0) {
    close(pfd[0]);
    snprintf(w->prep_buf, sizeof w->prep_buf, "!fork: %s", strerror(errno));
    w->prep_len = strlen(w->prep_buf);
    w->prep_fd = -1;
    w->prep_pid = 0;
    return;
  }
  fcntl(pfd[0], F_SETFL, fcntl(pfd[0], F_GETFL) | O_NONBLOCK);
  w->prep_fd = pfd[0];
  w->prep_pid = pid;
}

/* Builds, spools and sends the RunFinished of the current run, then moves to the next run. */
static void finish_run(struct worker *w, int exit_status, double wall_s, char *result_json,
                       char *error) {
  const struct sw_msg_assign *a = &w->assign.u.assign;
  const struct sw_msg_run *run = &a->runs[w->run_idx];
  struct sw_msg m;
  sw_msg_init(&m, SW_MSG_RUN_FINISHED);
  struct sw_msg_run_finished *f = &m.u.run_finished;
  f->lease_id = a->lease_id;
  f->epoch = a->epoch;
  f->run_id = run->run_id;
  f->attempt = a->attempt;
  f->exit_status = exit_status;
  f->wall_s = wall_s >= 0 ? wall_s : 0;
  f->waited_s = w->run_start_ms > w->quiet_start_ms
                    ? (double)(w->run_start_ms - w->quiet_start_ms) / 1000.0
                    : 0;
  f->quiet = w->quiet_ok > 0;
  f->result_json = result_json;
  f->error = error;
  /* Sample times become offsets from the run's start (the pre-run window is negative). */
  for (size_t i = 0; i < w->pre.n; i++) w->pre.s[i].t_ms -= w->run_start_ms;
  for (size_t i = 0; i < w->during.n; i++) w->during.s[i].t_ms -= w->run_start_ms;
  f->samples = w->during.s;
  f->n_samples = w->during.n;
  f->pre_samples = w->pre.s;
  f->n_pre_samples = w->pre.n;
  /* The environment after the run, compared by the coordinator with the one before it. */
  char *env_after = w->env_before ? sw_fingerprint_env(w->o->splat_train, run->trainer_json) : NULL;
  f->env_before = w->env_before;
  f->env_after = env_after;
  f->run_start_wall_ms = w->run_start_wall_ms;
  f->run_end_wall_ms = w->run_start_wall_ms ? sw_clock_wall_ms() : 0;
  /* The artifacts are staged for upload before the run directory goes; they are uploaded only
   * once this result is acknowledged (sw_upload.h). */
  if (a->artifact_url[0] && run->artifact_token[0] && w->run_dir[0] && w->uploads) {
    struct sw_err aerr = {0};
    if (sw_upload_stage(w->uploads, w->run_dir, run->run_id, a->attempt, a->artifact_url,
                        run->artifact_token, a->artifact_max_bytes, a->artifact_ply, &f->artifacts,
                        &f->n_artifacts, &aerr))
      sw_log_warn("run %" PRIu64 ": artifacts not staged: %s", run->run_id, aerr.msg);
  }
  m.seq = ++w->seq;
  uint8_t *buf = NULL;
  size_t len = 0;
  struct sw_err err = {0};
  int rc = sw_codec_encode(&m, &buf, &len, &err);
  if (rc) {
    /* A result the codec refuses (too large, not an object, bad text) is delivered as a
     * failure with the codec's reason, so the coordinator always hears about the run. */
    sw_log_error("run %" PRIu64 ": result not sendable: %s", run->run_id, err.msg);
    char why[SW_ERR_MSG_MAX + 64];
    snprintf(why, sizeof why, "result not sendable: %s", err.msg);
    f->result_json = NULL;
    f->error = why;
    sw_err_clear(&err);
    rc = sw_codec_encode(&m, &buf, &len, &err);
  }
  if (rc) {
    sw_log_error("run %" PRIu64 ": cannot encode RunFinished: %s", run->run_id, err.msg);
  } else {
    if (sw_spool_put(w->spool, run->run_id, a->attempt, a->lease_id, buf, len, &err))
      sw_log_error("spool: %s (sending anyway)", err.msg);
    if (w->sock && zmq_send(w->sock, buf, len, ZMQ_DONTWAIT) >= 0) w->last_send_ms = now_ms();
    free(buf);
  }
  sw_log_info("run %" PRIu64 " (%s) finished: exit %d, %.2f s%s%s", run->run_id, run->arm,
              exit_status, wall_s, error ? ": " : "", error ? error : "");
  free(result_json);
  free(error);
  free(env_after);
  free(f->artifacts);
  free(w->env_before);
  w->env_before = NULL;
  w->run_start_wall_ms = 0;
  sw_runner_destroy(&w->runner);
  end_trainer(w);
  if (w->run_dir[0] && !w->o->keep_runs) sw_fs_rm_rf(w->run_dir, NULL);
  w->run_dir[0] = '\0';
  w->run_idx++;
  if (w->run_idx < a->n_runs) {
    start_prep(w);
    return;
  }
  /* The measurements are over: the host is free; LeaseDone follows the last Ack (step_lease). */
  release_host(w);
  w->phase = P_DONE;
}

static int spooled_for(struct worker *w, uint64_t lease);

/* Sends LeaseDone for lease/epoch and remembers it, so a repeated Assign is answered again. */
static void send_lease_done(struct worker *w, uint64_t lease, uint64_t epoch) {
  struct sw_msg d;
  sw_msg_init(&d, SW_MSG_LEASE_DONE);
  d.u.lease_done.lease_id = lease;
  d.u.lease_done.epoch = epoch;
  send_msg(w, &d);
  unsigned k;
  for (k = 0; k < w->n_done && k < DONE_KEPT; k++)
    if (w->done_lease[k] == lease) break;
  if (k == w->n_done || k >= DONE_KEPT) {
    k = w->n_done % DONE_KEPT;
    w->n_done++;
  }
  w->done_lease[k] = lease;
  w->done_epoch[k] = epoch;
}

/* P_DONE: once every result of the lease is acknowledged, LeaseDone and the next Ready. */
static void finish_lease(struct worker *w) {
  if (w->state != S_CONNECTED || spooled_for(w, lease_id(w)) > 0) return;
  send_lease_done(w, lease_id(w), lease_epoch(w));
  w->have_lease = 0;
  sw_msg_clear(&w->assign);
  w->phase = P_NONE;
  w->ready_sent = 0;
  send_ready(w);
}

static void begin_quiet(struct worker *w) {
  const struct sw_msg_contamination *c = &w->assign.u.assign.contamination;
  int64_t t = now_ms();
  w->phase = P_QUIET;
  w->quiet_ok = 0;
  w->quiet_start_ms = t;
  window_reset(&w->pre);
  window_reset(&w->during);
  w->sample_every_ms = c->sample_interval_s > 0 ? (int64_t)(c->sample_interval_s * 1000.0) : 1000;
  struct sw_quiet_rules rules = {.load1_max = c->load1_max,
                                 .cpu_other_max = c->cpu_other_max,
                                 .cpu_other_mean_max = c->cpu_other_mean_max,
                                 .over_max_ms = (int64_t)(c->over_max_s * 1000.0),
                                 .settle_ms = (int64_t)(c->settle_s * 1000.0),
                                 .max_wait_ms = (int64_t)(c->max_wait_s * 1000.0),
                                 .gpu_foreign = c->gpu_foreign};
  sw_quiet_begin(&w->quiet, &rules, t);
  /* The settle window starts now, after the previous trainer was reaped and this worker's own
   * preparation (scene, hashing, spooling) is done: the interval before is not part of it. */
  struct sw_err err = {0};
  if (sw_sampler_prime(w->sampler, t, &err)) sw_log_warn("load sampler: %s", err.msg);
  w->last_sample_ms = t;
}

static void on_progress(void *ctx, const struct sw_runner_progress *p) {
  struct worker *w = ctx;
  int64_t t = now_ms();
  if (t - w->last_progress_ms < 500)
    return; /* a trainer may print often; the coordinator needs a pulse, not every line */
  w->last_progress_ms = t;
  const struct sw_msg_assign *a = &w->assign.u.assign;
  struct sw_msg m;
  sw_msg_init(&m, SW_MSG_PROGRESS);
  m.u.progress.lease_id = a->lease_id;
  m.u.progress.epoch = a->epoch;
  m.u.progress.run_id = a->runs[w->run_idx].run_id;
  m.u.progress.attempt = a->attempt;
  m.u.progress.iter = p->iter;
  m.u.progress.train_s = p->train_s;
  m.u.progress.loss = p->loss;
  m.u.progress.splats = p->splats;
  send_msg(w, &m);
}

static void start_trainer(struct worker *w) {
  const struct sw_msg_assign *a = &w->assign.u.assign;
  const struct sw_msg_run *run = &a->runs[w->run_idx];
  free(w->env_before);
  w->env_before = sw_fingerprint_env(w->o->splat_train, run->trainer_json);
  int64_t t = now_ms();
  w->run_start_ms = t;
  w->run_start_wall_ms = sw_clock_wall_ms();
  snprintf(w->run_dir, sizeof w->run_dir, "%s/l%" PRIu64 "-r%" PRIu64 "-a%u", w->runs_dir,
           a->lease_id, run->run_id, a->attempt);
  sw_fs_rm_rf(w->run_dir, NULL);
  struct sw_runner_opts ro = {.trainer_json = run->trainer_json,
                              .config_json = run->config_json,
                              .scene_dir = w->scene_dir,
                              .out_dir = w->run_dir,
                              .splat_train = w->o->splat_train,
                              .grace_ms = w->o->grace_ms};
  struct sw_err err = {0};
  struct sw_msg m;
  sw_msg_init(&m, SW_MSG_RUN_STARTED);
  m.u.run_started.lease_id = a->lease_id;
  m.u.run_started.epoch = a->epoch;
  m.u.run_started.run_id = run->run_id;
  m.u.run_started.attempt = a->attempt;
  m.u.run_started.waited_s = (double)(t - w->quiet_start_ms) / 1000.0;
  send_msg(w, &m);
  if (sw_runner_start(&ro, t, &w->runner, &err)) {
    char *e = strdup(err.msg);
    sw_log_error("run %" PRIu64 ": %s", run->run_id, err.msg);
    finish_run(w, 2, 0, NULL, e);
    return;
  }
  w->phase = P_RUN;
  w->last_sample_ms = 0;
  w->last_progress_ms = 0;
  w->trainer_pgid = sw_runner_pgid(w->runner);
  if (sw_sampler_trainer_begin(w->sampler, w->trainer_pgid, &err))
    sw_log_warn("load sampler: %s", err.msg);
  sw_log_info("run %" PRIu64 " (%s, attempt %u) started in %s", run->run_id, run->arm, a->attempt,
              w->run_dir);
  take_sample(w, &w->during, t);
}

/* Advances the current lease; called every loop turn. */
static void step_lease(struct worker *w, int64_t t) {
  if (!w->have_lease) return;
  if (w->phase == P_DONE) {
    finish_lease(w);
    return;
  }
  if (w->phase == P_LOCK) {
    /* flock is not fair: a worker that just released the lock and got its next lease at once
     * would win it again before the waiters' next poll. It lets LOCK_YIELD_MS pass first, so
     * the workers of a host take turns. */
    if (w->lock_released_ms && t - w->lock_released_ms < LOCK_YIELD_MS) return;
    char who[128];
    struct sw_err err = {0};
    int got = sw_hostlock_try(w->hostlock, who, sizeof who, &err);
    if (got < 0) {
      /* A lock that cannot be taken at all must not stop measuring: say so and go on. */
      sw_log_error("%s: measuring without the host lock", err.msg);
      got = 1;
    }
    if (!got) {
      if (t - w->lock_logged_ms >= 30000) {
        sw_log_info("waiting for the host measurement lock (held by %s)", who[0] ? who : "?");
        w->lock_logged_ms = t;
      }
      return;
    }
    sw_log_debug("host measurement lock taken after %.1f s", (double)(t - w->lock_wait_ms) / 1e3);
    start_prep(w);
    return;
  }
  if (w->phase == P_PREP) {
    if (w->prep_fd >= 0) {
      for (;;) {
        ssize_t n =
            read(w->prep_fd, w->prep_buf + w->prep_len, sizeof w->prep_buf - 1 - w->prep_len);
        if (n > 0) {
          w->prep_len += (size_t)n;
          continue;
        }
        if (n == 0) {
          close(w->prep_fd);
          w->prep_fd = -1;
        }
        break;
      }
      if (w->prep_fd >= 0) return;
      if (w->prep_pid > 0) {
        waitpid(w->prep_pid, NULL, 0);
        w->prep_pid = 0;
      }
    }
    w->prep_buf[w->prep_len] = '\0';
    if (w->prep_len == 0 || w->prep_buf[0] != '=') {
      const char *why = w->prep_len ? w->prep_buf + 1 : "scene preparation died";
      char msg[4500];
      snprintf(msg, sizeof msg, "scene: %s", why);
      sw_log_error("%s", msg);
      w->run_start_ms = w->quiet_start_ms = t;
      window_reset(&w->pre);
      window_reset(&w->during);
      finish_run(w, 2, 0, NULL, strdup(msg));
      return;
    }
    snprintf(w->scene_dir, sizeof w->scene_dir, "%s", w->prep_buf + 1);
    begin_quiet(w);
    return;
  }
  if (w->phase == P_QUIET) {
    if (t - w->last_sample_ms >= w->sample_every_ms) take_sample(w, &w->pre, t);
    if (w->quiet_ok != 0) {
      if (w->quiet_ok < 0)
        sw_log_warn("machine not quiet after %.0f s; starting anyway (the window records it)",
                    w->assign.u.assign.contamination.max_wait_s);
      start_trainer(w);
    }
    return;
  }
  if (w->phase == P_RUN && w->runner) {
    sw_runner_read(w->runner, on_progress, w);
    if (t - w->last_sample_ms >= w->sample_every_ms) take_sample(w, &w->during, t);
    if (sw_runner_check(w->runner, t)) {
      sw_runner_read(w->runner, on_progress, w);
      take_sample(w, &w->during, t);
      if (w->abandon) {
        drop_lease(w, "trainer stopped");
        send_ready(w);
        return;
      }
      int status;
      double wall;
      char *res = NULL, *e = NULL;
      sw_runner_outcome(w->runner, &status, &wall, &res, &e);
      finish_run(w, status, wall, res, e);
    }
  }
}

/* Stops the lease's work; the loop finishes the drop once the trainer is gone. */
static void abort_lease(struct worker *w, const char *why) {
  if (!w->have_lease) return;
  sw_spool_remove_lease(w->spool, lease_id(w));
  if (w->phase == P_RUN && w->runner) {
    if (!w->abandon) sw_log_info("lease %" PRIu64 ": stopping the trainer: %s", lease_id(w), why);
    w->abandon = 1;
    sw_runner_stop(w->runner, now_ms());
    return;
  }
  drop_lease(w, why);
  send_ready(w);
}

/* ---- receiving ----------------------------------------------------------------------------- */

static void on_assign(struct worker *w, struct sw_msg *m) {
  uint64_t id = m->u.assign.lease_id;
  if (w->have_lease && id == lease_id(w)) {
    /* The coordinator answers a Ready (ours after a reconnect) with the lease we hold: we are
     * on it already. */
    sw_log_debug("Assign of lease %" PRIu64 ", which runs here: nothing to do", id);
    return;
  }
  for (unsigned k = 0; k < w->n_done && k < DONE_KEPT; k++) {
    if (w->done_lease[k] == id) {
      /* Finished here, but the coordinator missed our LeaseDone (it restarted): say it again. */
      sw_log_info("lease %" PRIu64 " assigned again: it finished here; repeating LeaseDone", id);
      send_lease_done(w, id, w->done_epoch[k]);
      w->ready_sent = 0;
      send_ready(w);
      return;
    }
  }
  if (w->have_lease) {
    /* One run at a time, never two: a second lease is refused by not starting it. The
     * coordinator only assigns to idle workers, so this means it lost track of us. */
    sw_log_warn("Assign of lease %" PRIu64 " while lease %" PRIu64 " runs: ignored",
                m->u.assign.lease_id, lease_id(w));
    return;
  }
  w->assign = *m;
  memset(m, 0, sizeof *m); /* ownership moved */
  w->have_lease = 1;
  w->abandon = 0;
  w->run_idx = 0;
  w->ready_sent = 0;
  sw_log_info("lease %" PRIu64 " (epoch %" PRIu64 "): %zu run(s), pair %" PRIu64 " attempt %u",
              w->assign.u.assign.lease_id, w->assign.u.assign.epoch, w->assign.u.assign.n_runs,
              w->assign.u.assign.pair_id, w->assign.u.assign.attempt);
  /* One measurement at a time per host: the lease (scene preparation, settle windows and both
   * runs) waits for the host lock, unless this worker or the spec shares the host. */
  if (w->hostlock && !w->assign.u.assign.contamination.shared_host) {
    w->phase = P_LOCK;
    w->lock_wait_ms = w->lock_logged_ms = now_ms();
    return;
  }
  start_prep(w);
}

static int handle(struct worker *w, struct sw_msg *m) {
  switch (m->type) {
  case SW_MSG_WELCOME:
    w->state = S_CONNECTED;
    w->backoff_ms = 0;
    w->hb_ms = m->u.welcome.heartbeat_ms;
    w->liveness = m->u.welcome.liveness;
    w->lease_ttl_ms = m->u.welcome.lease_ttl_ms;
    sw_log_info("session %s (heartbeat %" PRId64 " ms, liveness %" PRId64 ", lease ttl %" PRId64
                " ms)",
                m->u.welcome.session_id, w->hb_ms, w->liveness, w->lease_ttl_ms);
    sw_spool_foreach(w->spool, resend_one, w);
    w->last_resend_ms = now_ms();
    w->ready_sent = 0;
    send_ready(w);
    break;
  case SW_MSG_ASSIGN: on_assign(w, m); break;
  case SW_MSG_ACK:
    if (sw_spool_remove(w->spool, m->u.ack.run_id, m->u.ack.attempt) > 0)
      sw_log_debug("run %" PRIu64 " attempt %u acknowledged", m->u.ack.run_id, m->u.ack.attempt);
    if (w->uploads) sw_upload_acked(w->uploads, m->u.ack.run_id, m->u.ack.attempt);
    break;
  case SW_MSG_CANCEL:
    if (m->u.cancel.lease_id == lease_id(w) && w->have_lease) {
      abort_lease(w, m->u.cancel.reason ? m->u.cancel.reason : "cancelled by the coordinator");
    } else {
      /* A stale lease whose results are still in the spool: they will never be accepted. */
      sw_spool_remove_lease(w->spool, m->u.cancel.lease_id);
    }
    break;
  case SW_MSG_HEARTBEAT: break;
  case SW_MSG_REJECT:
    sw_log_warn("rejected (%d): %s", (int)m->u.reject.code,
                m->u.reject.reason ? m->u.reject.reason : "");
    if (m->u.reject.code == SW_REJECT_PROTOCOL) return SW_EPROTO;
    if (m->u.reject.code == SW_REJECT_UNKNOWN) {
      send_hello(w);
    } else if (m->u.reject.code == SW_REJECT_STALE_LEASE) {
      abort_lease(w, "stale lease");
    } else if (m->u.reject.code == SW_REJECT_SHUTDOWN) {
      close_socket(w);
    }
    break;
  default: sw_log_debug("unexpected %s ignored", sw_msg_type_name(m->type)); break;
  }
  return 0;
}

static int recv_all(struct worker *w) {
  for (;;) {
    zmq_msg_t f;
    zmq_msg_init(&f);
    if (zmq_msg_recv(&f, w->sock, ZMQ_DONTWAIT) < 0) {
      zmq_msg_close(&f);
      return 0;
    }
    int more = zmq_msg_more(&f);
    struct sw_msg m;
    struct sw_err err = {0};
    int rc = sw_codec_decode(zmq_msg_data(&f), zmq_msg_size(&f), &m, &err);
    zmq_msg_close(&f);
    while (more) { /* a DEALER gets one frame per message; extra frames are out of contract */
      zmq_msg_t x;
      zmq_msg_init(&x);
      if (zmq_msg_recv(&x, w->sock, ZMQ_DONTWAIT) < 0) {
        zmq_msg_close(&x);
        break;
      }
      more = zmq_msg_more(&x);
      zmq_msg_close(&x);
      rc = rc ? rc : SW_EPROTO;
    }
    w->last_recv_ms = now_ms();
    if (rc) {
      sw_log_warn("dropped a malformed frame from the coordinator: %s", err.msg);
      sw_msg_clear(&m);
      continue;
    }
    rc = handle(w, &m);
    sw_msg_clear(&m);
    if (rc) return rc;
  }
}

/* ---- setup and loop ------------------------------------------------------------------------ */

static int build_hello(struct worker *w, struct sw_err *err) {
  struct sw_msg *h = &w->hello;
  sw_msg_init(h, SW_MSG_HELLO);
  snprintf(h->u.hello.worker_id, sizeof h->u.hello.worker_id, "%s", w->id);
  int rc = sw_fingerprint_collect(w->o->splat_train, &h->u.hello.fp, err);
  if (rc) return rc;
  for (size_t i = 0; i < w->o->n_labels; i++)
    if (sw_msg_kv_add(&h->u.hello.labels, &h->u.hello.n_labels, w->o->labels[i].key,
                      w->o->labels[i].value))
      return sw_err_set(err, SW_EINVAL, "label %s: too long or too many", w->o->labels[i].key);
  sw_msg_name_add(&h->u.hello.capabilities, &h->u.hello.n_capabilities, "exec");
  if (w->o->splat_train) {
    sw_msg_name_add(&h->u.hello.capabilities, &h->u.hello.n_capabilities, "builtin");
    char hex[SW_SHA256_HEX_LEN];
    if (sw_sha256_file(w->o->splat_train, hex, NULL) == 0)
      snprintf(h->u.hello.trainer_sha256, sizeof h->u.hello.trainer_sha256, "%s", hex);
  }
  sw_msg_name_add(&h->u.hello.features, &h->u.hello.n_features, "spool");
  return 0;
}

static int setup(struct worker *w, struct sw_err *err) {
  const struct sw_worker_opts *o = w->o;
  if (!o->endpoint || !*o->endpoint)
    return sw_err_set(err, SW_EINVAL, "worker: --coordinator ENDPOINT is required");
  if (o->worker_id && *o->worker_id) {
    snprintf(w->id, sizeof w->id, "%s", o->worker_id);
  } else {
    /* Unique per machine and GPU: HOST-MACHINEID8[-GPUINDEX] (docs/cli.md). */
    char host[64] = "", mid[256] = "";
    if (gethostname(host, sizeof host - 1) != 0 || !host[0]) snprintf(host, sizeof host, "worker");
    sw_fingerprint_machine_id(mid, sizeof mid);
    const char *gpu = getenv("SW_GPU_INDEX");
    if (gpu && *gpu)
      snprintf(w->id, sizeof w->id, "%s-%.8s-%s", host, mid, gpu);
    else
      snprintf(w->id, sizeof w->id, "%s-%.8s", host, mid);
  }
  if (!o->insecure) {
    if (!o->keys_dir)
      return sw_err_set(err, SW_EINVAL,
                        "worker: --keys DIR (CurveZMQ) or an explicit --insecure is required");
    int rc = sw_keys_load(o->keys_dir, w->public_key, w->secret_key, w->server_key, err);
    if (rc) {
      sw_err_prefix(err, "worker keys");
      return rc;
    }
  }
  char d[4200];
  const char *wd = o->work_dir;
  snprintf(d, sizeof d, "%s/spool", wd);
  int rc = sw_spool_open(d, &w->spool, err);
  if (rc) return rc;
  snprintf(w->runs_dir, sizeof w->runs_dir, "%s/runs", wd);
  snprintf(w->scenes_dir, sizeof w->scenes_dir, "%s/scenes", wd);
  if ((rc = sw_fs_mkdir_p(w->runs_dir, err)) || (rc = sw_fs_mkdir_p(w->scenes_dir, err))) return rc;
  /* In local mode `splatsweep local` (the coordinator and every local worker) is splatsweep's
   * own process tree; it says so through SW_SELF_ROOT_PID. */
  const char *root_env = getenv("SW_SELF_ROOT_PID");
  pid_t root = root_env ? (pid_t)atol(root_env) : 0;
  if ((rc = sw_sampler_new("/proc", getpid(), root > 0 ? root : getpid(), &w->sampler, err)))
    return rc;
  if ((rc = sw_gpu_open(&w->gpu, err))) return rc;
  if (!o->shared_host) {
    const char *lp = o->host_lock && *o->host_lock ? o->host_lock : getenv("SW_HOST_LOCK");
    snprintf(w->host_lock_path, sizeof w->host_lock_path, "%s",
             lp && *lp ? lp : "/tmp/splatsweep-measure.lock");
    if ((rc = sw_hostlock_open(w->host_lock_path, w->id, &w->hostlock, err))) return rc;
  }
  return build_hello(w, err);
}

int sw_worker_run(void *zmq_ctx, const struct sw_worker_opts *opts, struct sw_err *err) {
  struct worker *w = calloc(1, sizeof *w);
  if (!w) return sw_err_set(err, SW_ENOMEM, "worker: out of memory");
  w->o = opts;
  w->ctx = zmq_ctx;
  w->prep_fd = -1;
  w->hb_ms = opts->heartbeat_ms > 0 ? opts->heartbeat_ms : 1000;
  w->liveness = 5;
  w->lease_ttl_ms = 60000;
  int rc = setup(w, err);
  int64_t reconnect_at = 0;
  int64_t t = now_ms();
  if (!rc) {
    /* Beside runs/ in the work directory. */
    char up[4300];
    snprintf(up, sizeof up, "%.*s/uploads", (int)(strlen(w->runs_dir) - strlen("/runs")),
             w->runs_dir);
    char holder[SW_MSG_ID_MAX + 16];
    snprintf(holder, sizeof holder, "%s uploads", w->id);
    rc = sw_upload_start(up, w->hostlock ? w->host_lock_path : NULL, holder, &w->uploads, err);
  }
  if (!rc) take_sample(w, NULL, t); /* primes the CPU counters */
  while (!rc && !(opts->stop && *opts->stop)) {
    t = now_ms();
    /* Uploads wait while this worker waits for the host lock or measures (quiet wait, run). */
    if (w->uploads)
      sw_upload_hold(w->uploads, w->phase == P_LOCK || w->phase == P_QUIET || w->phase == P_RUN);
    if (w->state == S_DISCONNECTED && t >= reconnect_at) {
      struct sw_err e2 = {0};
      if (open_socket(w, &e2)) {
        sw_log_error("%s", e2.msg);
        reconnect_at = t + next_backoff(w);
      } else {
        w->last_recv_ms = w->last_recv_ms ? w->last_recv_ms : t;
        send_hello(w);
      }
    }
    zmq_pollitem_t items[2];
    int n = 0;
    if (w->sock) {
      items[n].socket = w->sock;
      items[n].fd = 0;
      items[n].events = ZMQ_POLLIN;
      items[n].revents = 0;
      n++;
    }
    int fd = w->runner ? sw_runner_fd(w->runner) : (w->phase == P_PREP ? w->prep_fd : -1);
    if (fd >= 0) {
      items[n].socket = NULL;
      items[n].fd = fd;
      items[n].events = ZMQ_POLLIN;
      items[n].revents = 0;
      n++;
    }
    /* Short waits while a child runs (its exit has no fd), longer when idle. */
    long timeout = (w->have_lease || w->state != S_CONNECTED) ? 50 : 200;
    if (n == 0) {
      struct timespec ts = {0, timeout * 1000000L};
      nanosleep(&ts, NULL);
    } else if (zmq_poll(items, n, timeout) < 0 && errno != EINTR) {
      rc = sw_err_set(err, SW_ENET, "zmq_poll: %s", zmq_strerror(errno));
      break;
    }
    if (w->sock && (rc = recv_all(w)) != 0) {
      sw_err_set(err, rc, "the coordinator rejected this worker's protocol version %u",
                 SW_PROTOCOL_VERSION);
      break;
    }
    t = now_ms();
    step_lease(w, t);
    if (!w->have_lease && t - w->last_sample_ms >= 1000)
      take_sample(w, NULL, t); /* keeps the counters fresh for the next quiet wait */
    if (w->state == S_CONNECTED && t - w->last_send_ms >= w->hb_ms) send_heartbeat(w);
    /* Until acknowledged, results are resent now and then even without a reconnect: an Ack can
     * be lost, or the coordinator may have failed to commit (it then does not acknowledge). */
    if (w->state == S_CONNECTED && t - w->last_resend_ms >= RESEND_EVERY_HB * w->hb_ms) {
      w->last_resend_ms = t;
      sw_spool_foreach(w->spool, resend_one, w);
    }
    /* Liveness: the coordinator silent too long -> reconnect (the trainer keeps running). */
    int64_t silent = t - w->last_recv_ms;
    if (w->sock && ((w->state == S_CONNECTED && silent > w->hb_ms * w->liveness) ||
                    (w->state == S_HELLO_SENT && t - w->hello_ms > w->hb_ms * w->liveness))) {
      int64_t wait = next_backoff(w);
      sw_log_warn("coordinator silent for %" PRId64 " ms: reconnecting in %.1f s", silent,
                  (double)wait / 1000.0);
      close_socket(w);
      reconnect_at = t + wait;
    }
    /* Cut off longer than the lease: the coordinator has re-queued the pair by now. A lease
     * whose runs are done keeps its spooled results: a coordinator back from an outage accepts
     * them while it still holds the lease, and says so (Reject stale) when it does not. */
    if (w->have_lease && !w->abandon && w->phase != P_DONE && silent > w->lease_ttl_ms) {
      sw_log_warn("cut off for %" PRId64 " ms (> lease ttl %" PRId64 " ms): killing the trainer",
                  silent, w->lease_ttl_ms);
      abort_lease(w, "lease expired while cut off");
    }
  }
  /* Stop: the trainer goes (SIGTERM, then SIGKILL by destroy); the spool stays for next time. */
  if (w->runner) {
    sw_runner_stop(w->runner, now_ms());
    for (int i = 0; i < 40 && !sw_runner_check(w->runner, now_ms()); i++) {
      struct timespec ts = {0, 50 * 1000000L};
      nanosleep(&ts, NULL);
    }
  }
  drop_lease(w, "worker stopping");
  sw_hostlock_close(&w->hostlock);
  sw_gpu_close(&w->gpu);
  close_socket(w);
  sw_msg_clear(&w->hello);
  sw_upload_stop(&w->uploads);
  sw_spool_close(&w->spool);
  sw_sampler_destroy(&w->sampler);
  free(w->pre.s);
  free(w->during.s);
  free(w);
  return rc;
}
