/* frame_poke.c: integration-test helper that sends hostile frames to a splatsweep endpoint.
 *
 *   frame_poke ENDPOINT garbage N     N frames of seeded random bytes (and truncated envelopes)
 *   frame_poke ENDPOINT multipart     a message of three frames
 *   frame_poke ENDPOINT badversion    a well-formed envelope of protocol 99; expects Reject
 *   frame_poke ENDPOINT oversize      one frame larger than ZMQ_MAXMSGSIZE (16 MiB)
 *   frame_poke ENDPOINT nohello       Ready without Hello; expects Reject(unknown)
 *   frame_poke ENDPOINT hellos N PREFIX
 *                                     N workers PREFIX-0..N-1 say Hello, each on its own connection
 *                                     with the most labels and fingerprint extras a Hello may carry
 *                                     (values of the largest size), wait for Welcome and leave;
 *                                     expects N Welcomes
 *   frame_poke ENDPOINT impersonate RID LEASE RUN [KEYS_DIR]
 *                                     with routing id RID (and CURVE keys of KEYS_DIR: public.key,
 *                                     secret.key, coordinator.pub) a RunFinished for LEASE/RUN
 *                                     without Hello; expects no Ack within 3 s (prints what came)
 *
 * Exit 0 when the frames were sent (and the expected answer came back), 1 otherwise. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "sw_codec.h"
#include "sw_keys.h"

/* The next message on s within 5 s, decoded into m: 0, 1 when none came, or the codec's error
 * (err set; m then needs no clearing). */
static int recv_one(void *s, struct sw_msg *m, struct sw_err *err) {
  zmq_pollitem_t it = {s, 0, ZMQ_POLLIN, 0};
  if (zmq_poll(&it, 1, 5000) <= 0) return 1;
  zmq_msg_t f;
  zmq_msg_init(&f);
  zmq_msg_recv(&f, s, 0);
  int rc = sw_codec_decode(zmq_msg_data(&f), zmq_msg_size(&f), m, err);
  zmq_msg_close(&f);
  return rc;
}

static int expect_reject(void *s, enum sw_reject_code want) {
  struct sw_msg m;
  struct sw_err err = {0};
  int rc = recv_one(s, &m, &err);
  if (rc == 1) {
    fprintf(stderr, "frame_poke: no answer within 5 s\n");
    return 1;
  }
  if (rc || m.type != SW_MSG_REJECT || m.u.reject.code != want) {
    fprintf(stderr, "frame_poke: expected Reject(%d), got %s (%s)\n", (int)want,
            rc ? "undecodable" : sw_msg_type_name(m.type), err.msg);
    sw_msg_clear(&m);
    return 1;
  }
  printf("reject %d: %s\n", (int)m.u.reject.code, m.u.reject.reason ? m.u.reject.reason : "");
  sw_msg_clear(&m);
  return 0;
}

/* The first 40 characters (a z85 key) of path into key; 0 or -1. */
/* Sends a RunFinished for someone else's lease and reports whether an Ack came back. */
static int impersonate(void *s, const char *lease, const char *run) {
  struct sw_msg m;
  sw_msg_init(&m, SW_MSG_RUN_FINISHED);
  m.u.run_finished.lease_id = strtoull(lease, NULL, 10);
  m.u.run_finished.epoch = 1;
  m.u.run_finished.run_id = strtoull(run, NULL, 10);
  m.u.run_finished.attempt = 1;
  m.u.run_finished.quiet = true;
  m.u.run_finished.result_json = "{\"train_s\": 1.0, \"psnr_db\": 99.0}";
  uint8_t *buf = NULL;
  size_t len = 0;
  struct sw_err err = {0};
  if (sw_codec_encode(&m, &buf, &len, &err)) {
    fprintf(stderr, "frame_poke: encode: %s\n", err.msg);
    return 1;
  }
  zmq_send(s, buf, len, 0);
  free(buf);
  int got_ack = 0;
  zmq_pollitem_t it = {s, 0, ZMQ_POLLIN, 0};
  while (zmq_poll(&it, 1, 3000) > 0) {
    zmq_msg_t f;
    zmq_msg_init(&f);
    zmq_msg_recv(&f, s, 0);
    struct sw_msg a;
    struct sw_err e = {0};
    if (sw_codec_decode(zmq_msg_data(&f), zmq_msg_size(&f), &a, &e) == 0) {
      printf("answer: %s%s%s\n", sw_msg_type_name(a.type), a.type == SW_MSG_REJECT ? ": " : "",
             a.type == SW_MSG_REJECT && a.u.reject.reason ? a.u.reject.reason : "");
      if (a.type == SW_MSG_ACK) got_ack = 1;
      sw_msg_clear(&a);
    }
    zmq_msg_close(&f);
  }
  if (got_ack)
    fprintf(stderr, "frame_poke: the impersonated RunFinished was acknowledged\n");
  else
    printf("no Ack for the impersonated RunFinished\n");
  return got_ack;
}

/* One Hello as id with every bound at its largest, on its own connection; 0 on Welcome. */
static int one_hello(void *ctx, const char *ep, const char *id) {
  void *s = zmq_socket(ctx, ZMQ_DEALER);
  int linger = 0;
  zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof linger);
  if (zmq_connect(s, ep) != 0) {
    zmq_close(s);
    return 1;
  }
  struct sw_msg m;
  sw_msg_init(&m, SW_MSG_HELLO);
  snprintf(m.u.hello.worker_id, sizeof m.u.hello.worker_id, "%s", id);
  snprintf(m.u.hello.fp.hostname, sizeof m.u.hello.fp.hostname, "flood-%s", id);
  char key[SW_MSG_KEY_MAX + 1], value[SW_MSG_KV_VALUE_MAX + 1];
  memset(value, 'v', SW_MSG_KV_VALUE_MAX);
  value[SW_MSG_KV_VALUE_MAX] = '\0';
  for (int i = 0; i < SW_MSG_LABELS_MAX; i++) {
    snprintf(key, sizeof key, "label%02d%0*d", i, SW_MSG_KEY_MAX - 7, 0);
    sw_msg_kv_add(&m.u.hello.labels, &m.u.hello.n_labels, key, value);
  }
  for (int i = 0; i < SW_MSG_EXTRA_MAX; i++) {
    snprintf(key, sizeof key, "extra%02d%0*d", i, SW_MSG_KEY_MAX - 7, 0);
    sw_msg_kv_add(&m.u.hello.fp.extra, &m.u.hello.fp.n_extra, key, value);
  }
  uint8_t *buf = NULL;
  size_t len = 0;
  struct sw_err err = {0};
  int rc = sw_codec_encode(&m, &buf, &len, &err);
  sw_msg_clear(&m);
  if (rc) {
    fprintf(stderr, "frame_poke: encode Hello: %s\n", err.msg);
    zmq_close(s);
    return 1;
  }
  zmq_send(s, buf, len, 0);
  free(buf);
  struct sw_msg w;
  rc = recv_one(s, &w, &err) == 0 ? 0 : 1;
  if (!rc) {
    rc = w.type == SW_MSG_WELCOME ? 0 : 1;
    if (rc) fprintf(stderr, "frame_poke: %s got %s\n", id, sw_msg_type_name(w.type));
    sw_msg_clear(&w);
  }
  zmq_close(s);
  return rc;
}

/* rawconns N: N plain TCP connections to the endpoint (tcp://HOST:PORT), none of them speaking
 * ZMTP: a third write random bytes, a third a ZMTP greeting cut short, a third nothing; each
 * is closed at once. Prints how many connected. */
static int raw_conns(const char *endpoint, int n) {
  char host[64];
  int port = 0;
  if (sscanf(endpoint, "tcp://%63[^:]:%d", host, &port) != 2) {
    fprintf(stderr, "frame_poke: rawconns needs tcp://HOST:PORT, not %s\n", endpoint);
    return 2;
  }
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  if (inet_pton(AF_INET, host, &a.sin_addr) != 1) {
    fprintf(stderr, "frame_poke: %s is not an IPv4 address\n", host);
    return 2;
  }
  static const uint8_t greeting[] = {0xff, 0, 0, 0, 0, 0, 0, 0, 1, 0x7f, 3, 0, 'N', 'U', 'L'};
  int connected = 0;
  srand(4242);
  for (int i = 0; i < n; i++) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) {
      perror("socket");
      return 1;
    }
    if (connect(fd, (struct sockaddr *)&a, sizeof a) == 0) {
      connected++;
      uint8_t buf[256];
      size_t len = 0;
      if (i % 3 == 0) {
        len = (size_t)(1 + rand() % (int)sizeof buf);
        for (size_t k = 0; k < len; k++) buf[k] = (uint8_t)rand();
      } else if (i % 3 == 1) {
        len = (size_t)(1 + rand() % (int)sizeof greeting);
        memcpy(buf, greeting, len);
      }
      if (len && write(fd, buf, len) < 0) { /* the peer may have closed first: fine */
      }
    }
    close(fd);
  }
  printf("%d of %d raw connections made and closed\n", connected, n);
  return 0;
}

int main(int argc, char **argv) {
  if (argc >= 4 && !strcmp(argv[2], "rawconns")) return raw_conns(argv[1], atoi(argv[3]));
  if (argc < 3) {
    fprintf(
        stderr,
        "usage: frame_poke ENDPOINT garbage N|rawconns N|multipart|badversion|oversize|nohello\n");
    return 2;
  }
  void *ctx = zmq_ctx_new();
  void *s = zmq_socket(ctx, ZMQ_DEALER);
  int zero = 0, linger = 2000;
  (void)zero;
  zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof linger);
  if (!strcmp(argv[2], "impersonate")) {
    if (argc < 6) {
      fprintf(stderr, "usage: frame_poke ENDPOINT impersonate RID LEASE RUN [KEYS_DIR]\n");
      return 2;
    }
    zmq_setsockopt(s, ZMQ_ROUTING_ID, argv[3], strlen(argv[3]));
    if (argc > 6) {
      char pub[41], sec[41], srv[41];
      struct sw_err kerr = {0};
      if (sw_keys_load(argv[6], pub, sec, srv, &kerr)) {
        fprintf(stderr, "frame_poke: cannot read the keys of %s: %s\n", argv[6], kerr.msg);
        return 1;
      }
      zmq_setsockopt(s, ZMQ_CURVE_SERVERKEY, srv, 40);
      zmq_setsockopt(s, ZMQ_CURVE_PUBLICKEY, pub, 40);
      zmq_setsockopt(s, ZMQ_CURVE_SECRETKEY, sec, 40);
    }
  }
  if (zmq_connect(s, argv[1]) != 0) {
    fprintf(stderr, "frame_poke: connect %s failed\n", argv[1]);
    return 1;
  }
  int rc = 0;
  const char *mode = argv[2];
  if (!strcmp(mode, "garbage")) {
    int n = argc > 3 ? atoi(argv[3]) : 100;
    srand(12345);
    /* A valid frame to truncate: a Ready envelope. */
    struct sw_msg r;
    sw_msg_init(&r, SW_MSG_READY);
    uint8_t *valid = NULL;
    size_t vlen = 0;
    sw_codec_encode(&r, &valid, &vlen, NULL);
    for (int i = 0; i < n; i++) {
      uint8_t buf[512];
      size_t len = (size_t)(rand() % (int)sizeof buf);
      for (size_t k = 0; k < len; k++) buf[k] = (uint8_t)rand();
      if (i % 4 == 0 && valid && vlen > 1) {
        len = (size_t)(rand() % (int)vlen); /* a truncated envelope */
        memcpy(buf, valid, len);
      }
      zmq_send(s, buf, len, 0);
    }
    free(valid);
    printf("sent %d garbage frames\n", n);
  } else if (!strcmp(mode, "multipart")) {
    zmq_send(s, "a", 1, ZMQ_SNDMORE);
    zmq_send(s, "b", 1, ZMQ_SNDMORE);
    zmq_send(s, "c", 1, 0);
    printf("sent a 3-frame message\n");
  } else if (!strcmp(mode, "badversion")) {
    struct sw_msg m;
    sw_msg_init(&m, SW_MSG_READY);
    m.protocol = 99;
    uint8_t *buf = NULL;
    size_t len = 0;
    struct sw_err err = {0};
    if (sw_codec_encode(&m, &buf, &len, &err)) {
      fprintf(stderr, "frame_poke: encode: %s\n", err.msg);
      return 1;
    }
    zmq_send(s, buf, len, 0);
    free(buf);
    rc = expect_reject(s, SW_REJECT_PROTOCOL);
  } else if (!strcmp(mode, "oversize")) {
    size_t len = (16u << 20) + 4096;
    uint8_t *buf = calloc(1, len);
    if (!buf) return 1;
    zmq_send(s, buf, len, 0);
    free(buf);
    /* Give libzmq time to push the bytes before the socket closes. */
    struct timespec ts = {1, 0};
    nanosleep(&ts, NULL);
    printf("sent one frame of %zu bytes\n", len);
  } else if (!strcmp(mode, "nohello")) {
    struct sw_msg m;
    sw_msg_init(&m, SW_MSG_READY);
    uint8_t *buf = NULL;
    size_t len = 0;
    sw_codec_encode(&m, &buf, &len, NULL);
    zmq_send(s, buf, len, 0);
    free(buf);
    rc = expect_reject(s, SW_REJECT_UNKNOWN);
  } else if (!strcmp(mode, "hellos")) {
    int n = argc > 3 ? atoi(argv[3]) : 30, welcomed = 0;
    char id[SW_MSG_ID_MAX + 1];
    for (int i = 0; i < n; i++) {
      snprintf(id, sizeof id, "%s-%d", argc > 4 ? argv[4] : "flood", i);
      welcomed += one_hello(ctx, argv[1], id) == 0;
    }
    printf("%d of %d Hellos welcomed\n", welcomed, n);
    rc = welcomed == n ? 0 : 1;
  } else if (!strcmp(mode, "impersonate")) {
    rc = impersonate(s, argv[4], argv[5]);
  } else {
    fprintf(stderr, "frame_poke: unknown mode %s\n", mode);
    rc = 2;
  }
  zmq_close(s);
  zmq_ctx_term(ctx);
  return rc;
}
