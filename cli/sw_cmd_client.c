/* sw_cmd_client.c: the control endpoint's client (sw_cmd.h; docs/protocol.md): the DEALER
 * socket submit, status, report, watch and cancel talk through. */
#include "sw_cmd.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "sw_clock.h"
#include "sw_codec.h"
#include "sw_keys.h"

int sw_cmd_client_open(struct sw_cmd_client *cl, const char *ep, const char *keys_dir,
                       struct sw_err *err) {
  cl->ctx = zmq_ctx_new();
  cl->sock = zmq_socket(cl->ctx, ZMQ_DEALER);
  int zero = 0;
  int64_t maxmsg = SW_MSG_FRAME_MAX;
  zmq_setsockopt(cl->sock, ZMQ_LINGER, &zero, sizeof zero);
  zmq_setsockopt(cl->sock, ZMQ_MAXMSGSIZE, &maxmsg, sizeof maxmsg);
  if (keys_dir) {
    char pub[41], sec[41], srv[41];
    int rc = sw_keys_load(keys_dir, pub, sec, srv, err);
    if (rc) return rc;
    zmq_setsockopt(cl->sock, ZMQ_CURVE_SERVERKEY, srv, 40);
    zmq_setsockopt(cl->sock, ZMQ_CURVE_PUBLICKEY, pub, 40);
    zmq_setsockopt(cl->sock, ZMQ_CURVE_SECRETKEY, sec, 40);
  }
  if (zmq_connect(cl->sock, ep) != 0)
    return sw_err_set(err, SW_ENET, "connect %s: %s", ep, zmq_strerror(errno));
  return 0;
}

void sw_cmd_client_close(struct sw_cmd_client *cl) {
  if (cl->sock) zmq_close(cl->sock);
  if (cl->ctx) zmq_ctx_term(cl->ctx);
}

/* Sends req and waits for one reply (timeout_ms). Returns 0 and *rep, or SW_ETIMEOUT/SW_EPROTO. */
int sw_cmd_client_call(struct sw_cmd_client *cl, struct sw_msg *req, struct sw_msg *rep,
                       int timeout_ms, const char *ep, struct sw_err *err) {
  uint8_t *buf = NULL;
  size_t len = 0;
  req->seq = 1;
  int rc = sw_codec_encode(req, &buf, &len, err);
  if (rc) return rc;
  rc = zmq_send(cl->sock, buf, len, 0);
  free(buf);
  if (rc < 0) return sw_err_set(err, SW_ENET, "send to %s: %s", ep, zmq_strerror(errno));
  zmq_pollitem_t it = {cl->sock, 0, ZMQ_POLLIN, 0};
  int64_t deadline = sw_clock_mono_ms() + timeout_ms;
  while (!sw_cmd_stop) {
    int64_t left = deadline - sw_clock_mono_ms();
    if (left <= 0) break;
    int n = zmq_poll(&it, 1, (long)left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    zmq_msg_t f;
    zmq_msg_init(&f);
    if (zmq_msg_recv(&f, cl->sock, 0) < 0) {
      zmq_msg_close(&f);
      continue;
    }
    rc = sw_codec_decode(zmq_msg_data(&f), zmq_msg_size(&f), rep, err);
    zmq_msg_close(&f);
    if (rc) return rc;
    if (rep->type == SW_MSG_ERROR) {
      rc = sw_err_set(err, rep->u.error.code < 0 ? rep->u.error.code : SW_EINVAL, "%s",
                      rep->u.error.message ? rep->u.error.message : "request failed");
      sw_msg_clear(rep);
      return rc;
    }
    if (rep->type == SW_MSG_REJECT) {
      rc = sw_err_set(err, SW_EPROTO, "rejected: %s",
                      rep->u.reject.reason ? rep->u.reject.reason : "");
      sw_msg_clear(rep);
      return rc;
    }
    return 0;
  }
  return sw_err_set(err, SW_ETIMEOUT, "no answer from the coordinator at %s within %d ms", ep,
                    timeout_ms);
}

int sw_cmd_request(const char *ep, const char *keys_dir, struct sw_msg *req, struct sw_msg *rep,
                   int timeout_ms, struct sw_err *err) {
  struct sw_cmd_client cl = {0};
  int rc = sw_cmd_client_open(&cl, ep, keys_dir, err);
  if (!rc) rc = sw_cmd_client_call(&cl, req, rep, timeout_ms, ep, err);
  sw_cmd_client_close(&cl);
  return rc;
}
