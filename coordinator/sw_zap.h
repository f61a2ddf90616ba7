/* sw_zap.h: the coordinator's ZAP handler (ZeroMQ RFC 27) for CurveZMQ: a thread answering
 * authentication requests on inproc://zeromq.zap.01, admitting a CURVE client only when its
 * public key is in the allow-list KEYS/authorized/ (one z85 key per file).
 *
 * libzmq admits every CURVE client when no ZAP handler is bound, so sw_zap_start returns only
 * once the handler is bound, and the coordinator binds its sockets after it (fail closed). An
 * allow-list that is missing, empty or holds a malformed key refuses to start.
 *
 * An admitted client's ZAP reply carries User-Id = the name of its key's file in
 * KEYS/authorized/, so every message from that connection has the property "User-Id"
 * (zmq_msg_gets) naming the key; the coordinator binds worker ids to it. The list is read once,
 * at start: adding or deleting a key file takes effect when the coordinator restarts. */
#ifndef SW_ZAP_H
#define SW_ZAP_H

#include <stdint.h>

#include "sw_err.h"

typedef struct sw_zap sw_zap_t;

#define SW_ZAP_USER_ID_MAX 200 /* longest key file name (the User-Id) */

/* Loads keys_dir/authorized/, starts the handler thread on zmq_ctx and waits until it is bound.
 * Returns 0, SW_EINVAL (allow-list missing, empty or malformed), SW_ENET (cannot bind),
 * SW_ENOMEM. */
int sw_zap_start(void *zmq_ctx, const char *keys_dir, sw_zap_t **out, struct sw_err *err);
/* Stops and joins the thread. NULL-safe; nulls *self_p. */
void sw_zap_stop(sw_zap_t **self_p);
/* Clients denied / admitted so far (0 for NULL). */
uint64_t sw_zap_denied(const sw_zap_t *self);
uint64_t sw_zap_allowed(const sw_zap_t *self);

#endif
