/* test_zap.c: Check suite for the coordinator's ZAP handler (coordinator/sw_zap.h). CURVE
 * ROUTERs on loopback behind the handler, one per ZAP domain as the coordinator sets them:
 *   - an empty allow-list refuses to start (fail closed);
 *   - "work" admits the keys of authorized/ with User-Id = the key's file name;
 *   - "control" admits submitters/ as "submitter:NAME" and viewers/ as "viewer:NAME", and a
 *     worker key only when submitters/ does not exist (the layout before roles);
 *   - an unknown domain, or a key not listed for the domain, gets nothing through and is
 *     counted as denied; a key that is both submitter and viewer refuses to start. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

#include "sw_zap.h"

struct pair {
  char pub[41], sec[41];
};

static char g_dir[64];

static void write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  fprintf(f, "%s\n", text);
  fclose(f);
}

/* Writes p's public key as KEYS/sub/name, creating sub/ when needed. */
static void add_key(const char *sub, const char *name, const struct pair *p) {
  char path[256];
  snprintf(path, sizeof path, "%s/%s", g_dir, sub);
  mkdir(path, 0700);
  snprintf(path, sizeof path, "%s/%s/%s", g_dir, sub, name);
  write_text(path, p->pub);
}

static void make_dir(void) {
  snprintf(g_dir, sizeof g_dir, "/tmp/sw-test-zap-XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(g_dir));
}

static void remove_dir(void) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
  ck_assert_int_eq(system(cmd), 0);
}

/* A CURVE server ROUTER with the given ZAP domain on a loopback port; its endpoint into ep. */
static void *curve_router(void *ctx, const char *srv_sec, const char *domain, char *ep,
                          size_t cap) {
  void *router = zmq_socket(ctx, ZMQ_ROUTER);
  int one = 1, zero = 0;
  zmq_setsockopt(router, ZMQ_LINGER, &zero, sizeof zero);
  zmq_setsockopt(router, ZMQ_CURVE_SERVER, &one, sizeof one);
  zmq_setsockopt(router, ZMQ_CURVE_SECRETKEY, srv_sec, 40);
  zmq_setsockopt(router, ZMQ_ZAP_DOMAIN, domain, strlen(domain));
  ck_assert_int_eq(zmq_bind(router, "tcp://127.0.0.1:*"), 0);
  zmq_getsockopt(router, ZMQ_LAST_ENDPOINT, ep, &cap);
  return router;
}

/* Receives [routing id, body] within timeout_ms; returns the body's User-Id copied into out, 1
 * when a message came, 0 when none did. */
static int recv_user_id(void *router, int timeout_ms, char *out, size_t cap) {
  zmq_pollitem_t it = {router, 0, ZMQ_POLLIN, 0};
  if (zmq_poll(&it, 1, timeout_ms) <= 0) return 0;
  zmq_msg_t rid, body;
  zmq_msg_init(&rid);
  zmq_msg_init(&body);
  ck_assert_int_ge(zmq_msg_recv(&rid, router, 0), 0);
  ck_assert_int_ge(zmq_msg_recv(&body, router, 0), 0);
  const char *uid = zmq_msg_gets(&body, "User-Id");
  snprintf(out, cap, "%s", uid ? uid : "");
  zmq_msg_close(&rid);
  zmq_msg_close(&body);
  return 1;
}

/* Connects as key p to the router at ep, sends one message and returns the User-Id the router
 * saw in uid (1), or 0 when nothing came through within timeout_ms. */
static int try_key(void *ctx, void *router, const char *ep, const char *srv_pub,
                   const struct pair *p, int timeout_ms, char *uid, size_t cap) {
  void *s = zmq_socket(ctx, ZMQ_DEALER);
  int zero = 0;
  zmq_setsockopt(s, ZMQ_LINGER, &zero, sizeof zero);
  zmq_setsockopt(s, ZMQ_CURVE_SERVERKEY, srv_pub, 40);
  zmq_setsockopt(s, ZMQ_CURVE_PUBLICKEY, p->pub, 40);
  zmq_setsockopt(s, ZMQ_CURVE_SECRETKEY, p->sec, 40);
  ck_assert_int_eq(zmq_connect(s, ep), 0);
  zmq_send(s, "hi", 2, ZMQ_DONTWAIT);
  int got = recv_user_id(router, timeout_ms, uid, cap);
  zmq_close(s);
  return got;
}

static void keypair(struct pair *p) { ck_assert_int_eq(zmq_curve_keypair(p->pub, p->sec), 0); }

START_TEST(test_compat_authorized_only) {
  make_dir();
  struct pair srv, alice, mallory;
  keypair(&srv);
  keypair(&alice);
  keypair(&mallory);
  char path[256];
  snprintf(path, sizeof path, "%s/authorized", g_dir);
  ck_assert_int_eq(mkdir(path, 0700), 0);

  void *ctx = zmq_ctx_new();
  struct sw_err err = {0};
  sw_zap_t *zap = NULL;
  /* An empty allow-list refuses to start (fail closed). */
  ck_assert_int_eq(sw_zap_start(ctx, g_dir, &zap, &err), SW_EINVAL);
  ck_assert_ptr_null(zap);

  add_key("authorized", "alice.pub", &alice);
  ck_assert_int_eq(sw_zap_start(ctx, g_dir, &zap, &err), 0);
  char wep[128], cep[128], oep[128], uid[256];
  void *work = curve_router(ctx, srv.sec, SW_ZAP_DOMAIN_WORK, wep, sizeof wep);
  void *control = curve_router(ctx, srv.sec, SW_ZAP_DOMAIN_CONTROL, cep, sizeof cep);
  void *other = curve_router(ctx, srv.sec, "splatsweep", oep, sizeof oep);

  /* Work: alice's messages carry her key's file name. */
  ck_assert_int_eq(try_key(ctx, work, wep, srv.pub, &alice, 5000, uid, sizeof uid), 1);
  ck_assert_str_eq(uid, "alice.pub");
  /* Control without submitters/: the worker key is a submitter, as before roles. */
  ck_assert_int_eq(try_key(ctx, control, cep, srv.pub, &alice, 5000, uid, sizeof uid), 1);
  ck_assert_str_eq(uid, "submitter:alice.pub");
  ck_assert_int_eq(sw_zap_role(uid), SW_ZAP_ROLE_SUBMITTER);
  ck_assert_uint_ge(sw_zap_allowed(zap), 2);
  ck_assert_uint_eq(sw_zap_denied(zap), 0);

  /* Not in the list, or an unknown domain: nothing gets through, each is counted. */
  ck_assert_int_eq(try_key(ctx, work, wep, srv.pub, &mallory, 1000, uid, sizeof uid), 0);
  ck_assert_int_eq(try_key(ctx, control, cep, srv.pub, &mallory, 1000, uid, sizeof uid), 0);
  ck_assert_int_eq(try_key(ctx, other, oep, srv.pub, &alice, 1000, uid, sizeof uid), 0);
  ck_assert_uint_ge(sw_zap_denied(zap), 3);

  zmq_close(other);
  zmq_close(control);
  zmq_close(work);
  sw_zap_stop(&zap);
  ck_assert_ptr_null(zap);
  zmq_ctx_term(ctx);
  remove_dir();
}
END_TEST

START_TEST(test_roles_by_domain) {
  make_dir();
  struct pair srv, w, sub, view;
  keypair(&srv);
  keypair(&w);
  keypair(&sub);
  keypair(&view);
  add_key("authorized", "gpu-1.pub", &w);
  add_key("submitters", "alice.pub", &sub);
  add_key("viewers", "bob.pub", &view);

  void *ctx = zmq_ctx_new();
  struct sw_err err = {0};
  sw_zap_t *zap = NULL;
  ck_assert_int_eq(sw_zap_start(ctx, g_dir, &zap, &err), 0);
  char wep[128], cep[128], uid[256];
  void *work = curve_router(ctx, srv.sec, SW_ZAP_DOMAIN_WORK, wep, sizeof wep);
  void *control = curve_router(ctx, srv.sec, SW_ZAP_DOMAIN_CONTROL, cep, sizeof cep);

  ck_assert_int_eq(try_key(ctx, work, wep, srv.pub, &w, 5000, uid, sizeof uid), 1);
  ck_assert_str_eq(uid, "gpu-1.pub");
  ck_assert_int_eq(sw_zap_role(uid), SW_ZAP_ROLE_NONE);
  ck_assert_int_eq(try_key(ctx, control, cep, srv.pub, &sub, 5000, uid, sizeof uid), 1);
  ck_assert_str_eq(uid, "submitter:alice.pub");
  ck_assert_int_eq(try_key(ctx, control, cep, srv.pub, &view, 5000, uid, sizeof uid), 1);
  ck_assert_str_eq(uid, "viewer:bob.pub");
  ck_assert_int_eq(sw_zap_role(uid), SW_ZAP_ROLE_VIEWER);
  ck_assert_uint_eq(sw_zap_denied(zap), 0);

  /* With submitters/, a worker key is refused on control; control keys are refused on work. */
  ck_assert_int_eq(try_key(ctx, control, cep, srv.pub, &w, 1000, uid, sizeof uid), 0);
  ck_assert_uint_eq(sw_zap_denied(zap), 1);
  ck_assert_int_eq(try_key(ctx, work, wep, srv.pub, &sub, 1000, uid, sizeof uid), 0);
  ck_assert_int_eq(try_key(ctx, work, wep, srv.pub, &view, 1000, uid, sizeof uid), 0);
  ck_assert_uint_eq(sw_zap_denied(zap), 3);

  /* The coordinator's refusal of a viewer's submit is counted with the rest. */
  sw_zap_refused(zap, "viewer:bob.pub", "submit");
  ck_assert_uint_eq(sw_zap_denied(zap), 4);

  zmq_close(control);
  zmq_close(work);
  sw_zap_stop(&zap);
  zmq_ctx_term(ctx);

  /* A key with two roles is a configuration mistake: refuse to start. */
  add_key("viewers", "alice-too.pub", &sub);
  ctx = zmq_ctx_new();
  ck_assert_int_eq(sw_zap_start(ctx, g_dir, &zap, &err), SW_EINVAL);
  ck_assert_ptr_null(zap);
  ck_assert_ptr_nonnull(strstr(err.msg, "alice-too.pub"));
  zmq_ctx_term(ctx);
  remove_dir();
}
END_TEST

START_TEST(test_role_of_user_id) {
  ck_assert_int_eq(sw_zap_role(NULL), SW_ZAP_ROLE_NONE);
  ck_assert_int_eq(sw_zap_role(""), SW_ZAP_ROLE_NONE);
  ck_assert_int_eq(sw_zap_role("gpu-1.pub"), SW_ZAP_ROLE_NONE);
  ck_assert_int_eq(sw_zap_role("viewer:x"), SW_ZAP_ROLE_VIEWER);
  ck_assert_int_eq(sw_zap_role("submitter:x"), SW_ZAP_ROLE_SUBMITTER);
  sw_zap_refused(NULL, "viewer:x", "cancel"); /* NULL-safe */
}
END_TEST

int main(void) {
  Suite *s = suite_create("zap");
  TCase *tc = tcase_create("zap");
  tcase_set_timeout(tc, 30);
  tcase_add_test(tc, test_compat_authorized_only);
  tcase_add_test(tc, test_roles_by_domain);
  tcase_add_test(tc, test_role_of_user_id);
  suite_add_tcase(s, tc);
  SRunner *r = srunner_create(s);
  srunner_run_all(r, CK_NORMAL);
  int failed = srunner_ntests_failed(r);
  srunner_free(r);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
