/* sw_reader.c: the report thread of the coordinator (sw_reader.h): an inproc PAIR socket between
 * the poll loop and one thread with its own read-only store connection. */
#include "sw_reader.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zmq.h>

#include "sw_log.h"
#include "sw_report.h"
#include "sw_store.h"

struct sw_reader {
  void *loop_side, *thread_side;
  pthread_t thread;
  int started;
  char *db_path;
  atomic_int pending;
};

/* The request frame after the routing id: sweep id and format, native byte order (inproc). */
struct request {
  int64_t sweep_id;
  int32_t format;
};

static int send_frame(void *sock, const void *data, size_t len, int more) {
  return zmq_send(sock, data, len, more ? ZMQ_SNDMORE : 0) < 0 ? -1 : 0;
}

/* Thread side: renders one request, replies [rid][code][body or message]. */
static void serve(sw_reader_t *r, sw_store_t **store, const void *rid, size_t rid_len,
                  const struct request *q) {
  struct sw_err err = {0};
  char *body = NULL;
  int rc = 0;
  if (!*store) {
    struct sw_store_opts so;
    sw_store_opts_default(&so);
    so.read_only = 1;
    so.busy_timeout_ms = 2000; /* this thread may wait: the loop does not */
    rc = sw_store_open(r->db_path, &so, store, &err);
  }
  if (!rc)
    rc =
        sw_report_render_string(*store, q->sweep_id, (enum sw_report_format)q->format, &body, &err);
  if (rc == SW_EDB) sw_store_close(store); /* reopened by the next request */
  int32_t head[2] = {rc, q->format};
  const char *out = rc ? err.msg : (body ? body : "");
  if (send_frame(r->thread_side, rid, rid_len, 1) ||
      send_frame(r->thread_side, head, sizeof head, 1) ||
      send_frame(r->thread_side, out, strlen(out), 0))
    sw_log_error("report reply could not be handed back: %s", zmq_strerror(errno));
  free(body);
}

static void *reader_main(void *arg) {
  sw_reader_t *r = arg;
  sw_store_t *store = NULL;
  for (;;) {
    zmq_msg_t rid, req;
    zmq_msg_init(&rid);
    zmq_msg_init(&req);
    if (zmq_msg_recv(&rid, r->thread_side, 0) < 0) {
      zmq_msg_close(&rid);
      zmq_msg_close(&req);
      if (errno == EINTR) continue;
      break; /* context terminated */
    }
    if (zmq_msg_size(&rid) == 0 || !zmq_msg_more(&rid)) { /* the stop message */
      zmq_msg_close(&rid);
      zmq_msg_close(&req);
      break;
    }
    if (zmq_msg_recv(&req, r->thread_side, 0) >= 0 &&
        zmq_msg_size(&req) == sizeof(struct request)) {
      struct request q;
      memcpy(&q, zmq_msg_data(&req), sizeof q);
      serve(r, &store, zmq_msg_data(&rid), zmq_msg_size(&rid), &q);
    }
    zmq_msg_close(&rid);
    zmq_msg_close(&req);
  }
  sw_store_close(&store);
  return NULL;
}

int sw_reader_start(void *zmq_ctx, const char *db_path, sw_reader_t **out, struct sw_err *err) {
  *out = NULL;
  sw_reader_t *r = calloc(1, sizeof *r);
  if (!r || !(r->db_path = strdup(db_path))) {
    free(r);
    return sw_err_set(err, SW_ENOMEM, "reader: out of memory");
  }
  char ep[64];
  static atomic_uint serial;
  snprintf(ep, sizeof ep, "inproc://sw-reader-%u", atomic_fetch_add(&serial, 1));
  r->loop_side = zmq_socket(zmq_ctx, ZMQ_PAIR);
  r->thread_side = zmq_socket(zmq_ctx, ZMQ_PAIR);
  int zero = 0;
  if (!r->loop_side || !r->thread_side || zmq_bind(r->loop_side, ep) ||
      zmq_connect(r->thread_side, ep)) {
    int rc = sw_err_set(err, SW_ENET, "reader: inproc socket: %s", zmq_strerror(errno));
    sw_reader_stop(&r);
    return rc;
  }
  zmq_setsockopt(r->loop_side, ZMQ_LINGER, &zero, sizeof zero);
  zmq_setsockopt(r->thread_side, ZMQ_LINGER, &zero, sizeof zero);
  if (pthread_create(&r->thread, NULL, reader_main, r)) {
    sw_reader_stop(&r);
    return sw_err_set(err, SW_ENOMEM, "reader: cannot start its thread");
  }
  r->started = 1;
  *out = r;
  return 0;
}

void *sw_reader_socket(sw_reader_t *self) { return self ? self->loop_side : NULL; }

int sw_reader_pending(const sw_reader_t *self) { return self ? atomic_load(&self->pending) : 0; }

int sw_reader_submit(sw_reader_t *self, const void *rid, size_t rid_len, int64_t sweep_id,
                     int format, struct sw_err *err) {
  if (rid_len == 0 || rid_len > SW_READER_RID_MAX)
    return sw_err_set(err, SW_EINVAL, "report: routing id of %zu bytes", rid_len);
  if (atomic_load(&self->pending) >= SW_READER_QUEUE)
    return sw_err_set(err, SW_ESTATE,
                      "report: %d reports are being made already; ask again in a moment",
                      SW_READER_QUEUE);
  struct request q = {.sweep_id = sweep_id, .format = format};
  if (send_frame(self->loop_side, rid, rid_len, 1) || send_frame(self->loop_side, &q, sizeof q, 0))
    return sw_err_set(err, SW_ENET, "report: cannot queue: %s", zmq_strerror(errno));
  atomic_fetch_add(&self->pending, 1);
  return 0;
}

int sw_reader_take(sw_reader_t *self, struct sw_reader_reply *out) {
  memset(out, 0, sizeof *out);
  zmq_msg_t f[3];
  int n = 0;
  for (; n < 3; n++) {
    zmq_msg_init(&f[n]);
    if (zmq_msg_recv(&f[n], self->loop_side, n == 0 ? ZMQ_DONTWAIT : 0) < 0) {
      zmq_msg_close(&f[n]);
      break;
    }
    if (!zmq_msg_more(&f[n])) {
      n++;
      break;
    }
  }
  int ok = n == 3 && zmq_msg_size(&f[0]) <= SW_READER_RID_MAX && zmq_msg_size(&f[1]) == 8;
  if (ok) {
    out->rid_len = zmq_msg_size(&f[0]);
    memcpy(out->rid, zmq_msg_data(&f[0]), out->rid_len);
    int32_t head[2];
    memcpy(head, zmq_msg_data(&f[1]), sizeof head);
    int code = head[0];
    out->code = code;
    out->format = head[1];
    size_t len = zmq_msg_size(&f[2]);
    if (code) {
      snprintf(out->msg, sizeof out->msg, "%.*s", (int)(len < 255 ? len : 255),
               (const char *)zmq_msg_data(&f[2]));
    } else if ((out->body = malloc(len + 1))) {
      memcpy(out->body, zmq_msg_data(&f[2]), len);
      out->body[len] = '\0';
    } else {
      out->code = SW_ENOMEM;
      snprintf(out->msg, sizeof out->msg, "report: out of memory for %zu bytes", len);
    }
  }
  for (int i = 0; i < n; i++) zmq_msg_close(&f[i]);
  if (n > 0) atomic_fetch_sub(&self->pending, 1);
  return ok;
}

void sw_reader_stop(sw_reader_t **self_p) {
  if (!self_p || !*self_p) return;
  sw_reader_t *r = *self_p;
  if (r->started) {
    send_frame(r->loop_side, "", 0, 0);
    pthread_join(r->thread, NULL);
  }
  if (r->loop_side) zmq_close(r->loop_side);
  if (r->thread_side) zmq_close(r->thread_side);
  free(r->db_path);
  free(r);
  *self_p = NULL;
}
