/* sw_zap.h: the coordinator's ZAP handler (ZeroMQ RFC 27) for CurveZMQ: a thread answering
 * authentication requests on inproc://zeromq.zap.01, admitting a CURVE client only when its
 * public key is in the allow-list of the endpoint it connects to (one z85 key per file).
 *
 * Roles. Each coordinator socket sets ZMQ_ZAP_DOMAIN (SW_ZAP_DOMAIN_WORK, SW_ZAP_DOMAIN_CONTROL)
 * and the handler admits by the request's domain:
 *   - "work":    keys in KEYS/authorized/ (workers); User-Id = the key's file name.
 *   - "control": keys in KEYS/submitters/ (User-Id "submitter:NAME": submit, cancel, status,
 *                report) and KEYS/viewers/ (User-Id "viewer:NAME": status and report only).
 *                When KEYS/submitters/ does not exist the keys of KEYS/authorized/ are admitted
 *                as submitters (the layout before roles) and sw_zap_start logs a warning.
 *   - any other domain is denied.
 * KEYS/authorized/ must exist and hold at least one key; submitters/ and viewers/ are optional
 * and may be empty; a key listed in both submitters/ and viewers/ refuses to start. Every
 * denial is counted (sw_zap_denied) and logged with the key's z85 prefix and the domain.
 *
 * libzmq admits every CURVE client when no ZAP handler is bound, so sw_zap_start returns only
 * once the handler is bound, and the coordinator binds its sockets after it (fail closed). An
 * authorized/ that is missing or empty, or a malformed key in any list, refuses to start.
 *
 * An admitted client's ZAP reply carries the User-Id above, so every message from that
 * connection has the property "User-Id" (zmq_msg_gets); the coordinator binds worker ids to a
 * worker's and checks a control client's role with sw_zap_role. The lists are read once, at
 * start: adding or deleting a key file takes effect when the coordinator restarts. */
#ifndef SW_ZAP_H
#define SW_ZAP_H

#include <stdint.h>

#include "sw_err.h"

typedef struct sw_zap sw_zap_t;

/* Longest key file name: a worker's User-Id; a control User-Id adds its role prefix. */
#define SW_ZAP_USER_ID_MAX 200

#define SW_ZAP_DOMAIN_WORK "work"
#define SW_ZAP_DOMAIN_CONTROL "control"

/* What a control client's User-Id lets it do (sw_zap_role). */
enum sw_zap_role {
  SW_ZAP_ROLE_NONE = 0,  /* not a control User-Id (a worker's, or none) */
  SW_ZAP_ROLE_VIEWER,    /* status, report */
  SW_ZAP_ROLE_SUBMITTER, /* submit, cancel, status, report */
};

/* Loads keys_dir/authorized/, submitters/ and viewers/, starts the handler thread on zmq_ctx and
 * waits until it is bound. Returns 0, SW_EINVAL (allow-list missing, empty or malformed), SW_ENET
 * (cannot bind), SW_ENOMEM. */
int sw_zap_start(void *zmq_ctx, const char *keys_dir, sw_zap_t **out, struct sw_err *err);
/* The role a control connection's User-Id (borrowed; NULL allowed) names. The one place that
 * reads the "submitter:" / "viewer:" prefixes. */
enum sw_zap_role sw_zap_role(const char *user_id);
/* Called by the coordinator when a control request needs the submitter role and the client's
 * User-Id (borrowed) does not have it: counts the refusal in sw_zap_denied and logs it with the
 * key's z85 prefix, the endpoint and what (borrowed, e.g. "submit"). NULL-safe. */
void sw_zap_refused(sw_zap_t *self, const char *user_id, const char *what);
/* Stops and joins the thread. NULL-safe; nulls *self_p. */
void sw_zap_stop(sw_zap_t **self_p);
/* Clients denied / admitted so far (0 for NULL). */
uint64_t sw_zap_denied(const sw_zap_t *self);
uint64_t sw_zap_allowed(const sw_zap_t *self);

#endif
