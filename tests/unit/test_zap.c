/* test_zap.c: Check suite for the coordinator's ZAP handler (coordinator/sw_zap.h). A CURVE
 * ROUTER on loopback behind the handler: a client whose key is in the allow-list gets through
 * and each of its messages carries User-Id = the key's file name; a client with a key not in
 * the list gets nothing through and is counted as denied; an empty allow-list refuses to start. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

#include "sw_zap.h"

static char g_dir[64];

static void write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  fprintf(f, "%s\n", text);
  fclose(f);
}

static void *curve_client(void *ctx, const char *ep, const char *srv_pub) {
  char pub[41], sec[41];
  ck_assert_int_eq(zmq_curve_keypair(pub, sec), 0);
  void *s = zmq_socket(ctx, ZMQ_DEALER);
  int zero = 0;
  zmq_setsockopt(s, ZMQ_LINGER, &zero, sizeof zero);
  zmq_setsockopt(s, ZMQ_CURVE_SERVERKEY, srv_pub, 40);
  zmq_setsockopt(s, ZMQ_CURVE_PUBLICKEY, pub, 40);
  zmq_setsockopt(s, ZMQ_CURVE_SECRETKEY, sec, 40);
  ck_assert_int_eq(zmq_connect(s, ep), 0);
  return s;
}

/* Receives [routing id, body] within timeout_ms; returns the body's User-Id copied into out, 1
 * when a message came, 0 when none did. */
static int recv_user_id(void *router, int timeout_ms, char *out, size_t cap) {
  zmq_pollitem_t it = {router, 0, ZMQ_POLLIN, 0};
  if (zmq_poll(&it, 1, timeout_ms) <= 0)
    return 0;
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

START_TEST(test_user_id_is_key_file_name) {
  snprintf(g_dir, sizeof g_dir, "/tmp/sw-test-zap-XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(g_dir));
  char path[256], srv_pub[41], srv_sec[41], alice_pub[41], alice_sec[41];
  ck_assert_int_eq(zmq_curve_keypair(srv_pub, srv_sec), 0);
  ck_assert_int_eq(zmq_curve_keypair(alice_pub, alice_sec), 0);
  snprintf(path, sizeof path, "%s/authorized", g_dir);
  ck_assert_int_eq(mkdir(path, 0700), 0);

  void *ctx = zmq_ctx_new();
  struct sw_err err = {0};
  sw_zap_t *zap = NULL;
  /* An empty allow-list refuses to start (fail closed). */
  ck_assert_int_eq(sw_zap_start(ctx, g_dir, &zap, &err), SW_EINVAL);
  ck_assert_ptr_null(zap);

  snprintf(path, sizeof path, "%s/authorized/alice.pub", g_dir);
  write_text(path, alice_pub);
  ck_assert_int_eq(sw_zap_start(ctx, g_dir, &zap, &err), 0);

  void *router = zmq_socket(ctx, ZMQ_ROUTER);
  int one = 1, zero = 0;
  zmq_setsockopt(router, ZMQ_LINGER, &zero, sizeof zero);
  zmq_setsockopt(router, ZMQ_CURVE_SERVER, &one, sizeof one);
  zmq_setsockopt(router, ZMQ_CURVE_SECRETKEY, srv_sec, 40);
  zmq_setsockopt(router, ZMQ_ZAP_DOMAIN, "splatsweep", 10);
  ck_assert_int_eq(zmq_bind(router, "tcp://127.0.0.1:*"), 0);
  char ep[128];
  size_t ep_len = sizeof ep;
  zmq_getsockopt(router, ZMQ_LAST_ENDPOINT, ep, &ep_len);

  /* Allowed: alice's messages carry her key's file name. */
  void *alice = zmq_socket(ctx, ZMQ_DEALER);
  zmq_setsockopt(alice, ZMQ_LINGER, &zero, sizeof zero);
  zmq_setsockopt(alice, ZMQ_CURVE_SERVERKEY, srv_pub, 40);
  zmq_setsockopt(alice, ZMQ_CURVE_PUBLICKEY, alice_pub, 40);
  zmq_setsockopt(alice, ZMQ_CURVE_SECRETKEY, alice_sec, 40);
  ck_assert_int_eq(zmq_connect(alice, ep), 0);
  ck_assert_int_eq(zmq_send(alice, "hi", 2, 0), 2);
  char uid[256];
  ck_assert_int_eq(recv_user_id(router, 5000, uid, sizeof uid), 1);
  ck_assert_str_eq(uid, "alice.pub");
  ck_assert_uint_ge(sw_zap_allowed(zap), 1);

  /* Not in the list: nothing gets through, the handler counts a denial. */
  void *mallory = curve_client(ctx, ep, srv_pub);
  zmq_send(mallory, "hi", 2, ZMQ_DONTWAIT);
  ck_assert_int_eq(recv_user_id(router, 1000, uid, sizeof uid), 0);
  ck_assert_uint_ge(sw_zap_denied(zap), 1);

  zmq_close(mallory);
  zmq_close(alice);
  zmq_close(router);
  sw_zap_stop(&zap);
  ck_assert_ptr_null(zap);
  zmq_ctx_term(ctx);
  snprintf(path, sizeof path, "%s/authorized/alice.pub", g_dir);
  unlink(path);
  snprintf(path, sizeof path, "%s/authorized", g_dir);
  rmdir(path);
  rmdir(g_dir);
}
END_TEST

int main(void) {
  Suite *s = suite_create("zap");
  TCase *tc = tcase_create("zap");
  tcase_set_timeout(tc, 30);
  tcase_add_test(tc, test_user_id_is_key_file_name);
  suite_add_tcase(s, tc);
  SRunner *r = srunner_create(s);
  srunner_run_all(r, CK_NORMAL);
  int failed = srunner_ntests_failed(r);
  srunner_free(r);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
