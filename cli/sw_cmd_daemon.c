/* sw_cmd_daemon.c: the daemons of `splatsweep` (sw_cmd.h): coordinator and worker, each the
 * library's run loop (sw_coord.h, sw_worker.h) under the options given. */
#include "sw_cmd.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <zmq.h>

#include "sw_coord.h"
#include "sw_log.h"
#include "sw_worker.h"

/* Whether a ZeroMQ endpoint stays on this machine: ipc://, inproc://, or tcp:// to a loopback
 * address (127.x.x.x, localhost, [::1]) with an optional port. Anything else, including
 * a wildcard bind, an interface name or the source;destination form, is not. */
static int endpoint_is_local(const char *ep) {
  if (strncmp(ep, "ipc://", 6) == 0 || strncmp(ep, "inproc://", 9) == 0) return 1;
  if (strncmp(ep, "tcp://", 6) != 0 || strchr(ep, ';')) return 0;
  const char *host = ep + 6, *end;
  if (*host == '[') {
    end = strchr(host, ']');
    if (!end || (end[1] != 0 && end[1] != ':')) return 0;
    return end - host == 4 && strncmp(host, "[::1", 4) == 0;
  }
  end = strchr(host, ':');
  size_t n = end ? (size_t)(end - host) : strlen(host);
  if (n == 9 && strncasecmp(host, "localhost", 9) == 0) return 1;
  /* 127.a.b.c: four decimal parts of at most three digits, the first 127. */
  if (n < 9 || strncmp(host, "127.", 4) != 0) return 0;
  int parts = 2, digits = 0; /* "127" and the part being read */
  for (size_t i = 4; i < n; i++) {
    if (host[i] == '.') {
      if (digits == 0) return 0;
      parts++, digits = 0;
    } else if (host[i] >= '0' && host[i] <= '9' && digits < 3) {
      digits++;
    } else {
      return 0;
    }
  }
  return parts == 4 && digits > 0;
}

/* --insecure sends plain text: refuse it on an endpoint that leaves the machine unless
 * --insecure-anywhere says so. Returns 0, or SW_CMD_EXIT_USAGE after saying why. */
static int check_insecure(const struct sw_cmd_args *a, const char *cmd, const char *ep) {
  if (!a->insecure || a->insecure_anywhere || !ep || endpoint_is_local(ep)) return 0;
  fprintf(stderr,
          "splatsweep %s: --insecure with %s, which is not ipc:// or loopback: refused (use "
          "--keys, or add --insecure-anywhere to send plain text over the network)\n",
          cmd, ep);
  return SW_CMD_EXIT_USAGE;
}

void sw_cmd_coord_opts(const struct sw_cmd_args *a, struct sw_coord_opts *o) {
  *o = (struct sw_coord_opts){.bind_work = a->bind_work,
                              .bind_control = a->bind_control,
                              .db_path = a->db,
                              .keys_dir = a->keys,
                              .insecure = a->insecure,
                              .heartbeat_ms = (int)a->heartbeat_ms,
                              .liveness = (int)a->liveness,
                              .lease_ttl_ms = a->lease_ttl_ms,
                              .max_attempts = (int)a->max_attempts,
                              .stop = &sw_cmd_stop,
                              .on_status = a->http ? sw_http_publish : NULL,
                              .on_status_arg = a->http,
                              .dashboard_url = a->dashboard_url,
                              .artifact_url = a->artifact_url};
}

int sw_cmd_coordinator(struct sw_cmd_args *a) {
  const char *work = a->bind_work ? a->bind_work : SW_COORD_BIND_WORK;
  const char *control = a->bind_control ? a->bind_control : SW_COORD_BIND_CONTROL;
  int bad = check_insecure(a, "coordinator", work);
  if (!bad) bad = check_insecure(a, "coordinator", control);
  if (bad) return bad;
  sw_cmd_install_signals();
  sw_log_set_component("coordinator");
  struct sw_coord_opts o;
  sw_cmd_coord_opts(a, &o);
  void *ctx = zmq_ctx_new();
  sw_coord_t *c = NULL;
  struct sw_err err = {0};
  int rc = sw_coord_new(ctx, &o, &c, &err);
  if (!rc) {
    sw_log_info("serving workers on %s, control on %s%s", work, control,
                a->insecure ? " (insecure)" : "");
    rc = sw_coord_run(c, &err);
  }
  sw_coord_destroy(&c);
  zmq_ctx_term(ctx);
  if (rc) {
    fprintf(stderr, "splatsweep coordinator: %s\n", err.msg);
    return rc == SW_EINVAL ? SW_CMD_EXIT_USAGE : 1;
  }
  return 0;
}

int sw_cmd_worker(struct sw_cmd_args *a) {
  int bad = check_insecure(a, "worker", a->coordinator);
  if (bad) return bad;
  sw_cmd_install_signals();
  char comp[200];
  char host[128] = "";
  gethostname(host, sizeof host - 1);
  const char *id = a->id ? a->id : host;
  snprintf(comp, sizeof comp, "worker %s", id);
  sw_log_set_component(comp);
  char *trainer = a->trainer ? strdup(a->trainer) : sw_cmd_find_splat_train();
  char wd[4200];
  if (a->work_dir) {
    snprintf(wd, sizeof wd, "%s", a->work_dir);
  } else {
    const char *base = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    if (base)
      snprintf(wd, sizeof wd, "%s/splatsweep/worker-%s", base, id);
    else
      snprintf(wd, sizeof wd, "%s/.cache/splatsweep/worker-%s", home ? home : "/tmp", id);
  }
  struct sw_worker_opts o = {.endpoint = a->coordinator,
                             .worker_id = id,
                             .labels = a->labels,
                             .n_labels = a->n_labels,
                             .keys_dir = a->keys,
                             .insecure = a->insecure,
                             .work_dir = wd,
                             .splat_train = trainer,
                             .heartbeat_ms = (int)a->heartbeat_ms,
                             .keep_runs = a->keep_runs,
                             .host_lock = a->host_lock,
                             .shared_host = a->shared_host,
                             .stop = &sw_cmd_stop};
  void *ctx = zmq_ctx_new();
  struct sw_err err = {0};
  int rc = sw_worker_run(ctx, &o, &err);
  zmq_ctx_term(ctx);
  free(trainer);
  if (rc) {
    fprintf(stderr, "splatsweep worker: %s\n", err.msg);
    return rc == SW_EINVAL ? SW_CMD_EXIT_USAGE : 1;
  }
  return 0;
}
