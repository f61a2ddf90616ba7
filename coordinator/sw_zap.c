/* sw_zap.c: ZAP handler thread with a CurveZMQ public-key allow-list. */
#include "sw_zap.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zmq.h>

#include "sw_log.h"
#include "sw_worker.h" /* sw_curve_read_key */

#define MAX_KEYS 4096
#define ZAP_FRAMES 7 /* version, request id, domain, address, identity, mechanism, credentials */

struct sw_zap {
  pthread_t thread;
  int started;
  atomic_int state; /* 0 starting, -1 bound, 1 asked to stop, 2 failed to bind */
  atomic_ulong denied, allowed;
  void *ctx;
  uint8_t keys[MAX_KEYS][32];
  char names[MAX_KEYS][SW_ZAP_USER_ID_MAX + 1]; /* the allow-list file name of each key */
  int n_keys;
};

/* Receives one multipart request into f (at most ZAP_FRAMES parts kept); returns the number of
 * parts received (more than ZAP_FRAMES when extras were dropped), or -1. */
static int recv_request(void *sock, zmq_msg_t *f) {
  int n = 0, more = 1;
  while (more) {
    zmq_msg_t m;
    zmq_msg_init(&m);
    if (zmq_msg_recv(&m, sock, 0) < 0) {
      zmq_msg_close(&m);
      break;
    }
    more = zmq_msg_more(&m);
    if (n < ZAP_FRAMES)
      f[n] = m;
    else
      zmq_msg_close(&m);
    n++;
  }
  return n;
}

static void reply(void *rep, zmq_msg_t *req_id, const char *code, const char *text,
                  const char *user_id) {
  zmq_send(rep, "1.0", 3, ZMQ_SNDMORE);
  zmq_send(rep, req_id ? zmq_msg_data(req_id) : "", req_id ? zmq_msg_size(req_id) : 0, ZMQ_SNDMORE);
  zmq_send(rep, code, strlen(code), ZMQ_SNDMORE);
  zmq_send(rep, text, strlen(text), ZMQ_SNDMORE);
  zmq_send(rep, user_id, strlen(user_id), ZMQ_SNDMORE); /* User-Id: the key's file name */
  zmq_send(rep, "", 0, 0);           /* metadata */
}

static void *zap_main(void *arg) {
  sw_zap_t *z = arg;
  void *rep = zmq_socket(z->ctx, ZMQ_REP);
  int zero = 0;
  zmq_setsockopt(rep, ZMQ_LINGER, &zero, sizeof zero);
  if (zmq_bind(rep, "inproc://zeromq.zap.01") != 0) {
    sw_log_error("ZAP handler: bind inproc://zeromq.zap.01: %s", zmq_strerror(errno));
    atomic_store(&z->state, 2);
    zmq_close(rep);
    return NULL;
  }
  atomic_store(&z->state, -1);
  while (atomic_load(&z->state) <= 0) {
    zmq_pollitem_t it = {rep, 0, ZMQ_POLLIN, 0};
    if (zmq_poll(&it, 1, 100) <= 0)
      continue;
    zmq_msg_t f[ZAP_FRAMES];
    int n = recv_request(rep, f);
    int kept = n < ZAP_FRAMES ? n : ZAP_FRAMES;
    if (n < 6 || n > ZAP_FRAMES) {
      /* Not a request we understand; a REP socket must still answer. */
      reply(rep, kept >= 2 ? &f[1] : NULL, "500", "malformed ZAP request", "");
    } else {
      int ok = 0, who = -1;
      const char *why = "mechanism not allowed";
      if (zmq_msg_size(&f[5]) == 5 && !memcmp(zmq_msg_data(&f[5]), "CURVE", 5) && n == 7 &&
          zmq_msg_size(&f[6]) == 32) {
        why = "public key not authorised";
        for (int i = 0; i < z->n_keys && !ok; i++)
          if ((ok = !memcmp(z->keys[i], zmq_msg_data(&f[6]), 32)))
            who = i;
      }
      if (ok) {
        atomic_fetch_add(&z->allowed, 1);
        reply(rep, &f[1], "200", "OK", z->names[who]);
      } else {
        atomic_fetch_add(&z->denied, 1);
        sw_log_warn("ZAP: denied a client from %.*s: %s", (int)zmq_msg_size(&f[3]),
                    (const char *)zmq_msg_data(&f[3]), why);
        reply(rep, &f[1], "400", why, "");
      }
    }
    for (int i = 0; i < kept; i++)
      zmq_msg_close(&f[i]);
  }
  zmq_close(rep);
  return NULL;
}

static int load_allow_list(sw_zap_t *z, const char *keys_dir, struct sw_err *err) {
  char dir[4200];
  snprintf(dir, sizeof dir, "%s/authorized", keys_dir);
  DIR *d = opendir(dir);
  if (!d)
    return sw_err_set(err, SW_EINVAL, "%s: no allow-list directory of client public keys", dir);
  struct dirent *e;
  int rc = 0;
  while (!rc && (e = readdir(d))) {
    if (e->d_name[0] == '.')
      continue;
    char path[4600], key[41];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    if (z->n_keys == MAX_KEYS)
      rc = sw_err_set(err, SW_EINVAL, "%s: more than %d keys", dir, MAX_KEYS);
    else if (strlen(e->d_name) > SW_ZAP_USER_ID_MAX)
      rc = sw_err_set(err, SW_EINVAL, "%s: key file name longer than %d bytes", path,
                      SW_ZAP_USER_ID_MAX);
    else if (sw_curve_read_key(path, key, err))
      rc = SW_EINVAL;
    else {
      snprintf(z->names[z->n_keys], sizeof z->names[0], "%s", e->d_name);
      zmq_z85_decode(z->keys[z->n_keys++], key);
    }
  }
  closedir(d);
  if (!rc && z->n_keys == 0)
    rc = sw_err_set(err, SW_EINVAL, "%s: the allow-list is empty; refusing to start", dir);
  return rc;
}

int sw_zap_start(void *zmq_ctx, const char *keys_dir, sw_zap_t **out, struct sw_err *err) {
  *out = NULL;
  sw_zap_t *z = calloc(1, sizeof *z);
  if (!z)
    return sw_err_set(err, SW_ENOMEM, "ZAP handler: out of memory");
  z->ctx = zmq_ctx;
  int rc = load_allow_list(z, keys_dir, err);
  if (!rc && pthread_create(&z->thread, NULL, zap_main, z) != 0)
    rc = sw_err_set(err, SW_ENOMEM, "ZAP handler: cannot start its thread");
  if (!rc) {
    z->started = 1;
    for (int i = 0; i < 500 && atomic_load(&z->state) == 0; i++) {
      struct timespec ts = {0, 10 * 1000000L};
      nanosleep(&ts, NULL);
    }
    if (atomic_load(&z->state) != -1)
      rc = sw_err_set(err, SW_ENET, "ZAP handler: inproc://zeromq.zap.01 could not be bound");
  }
  if (rc) {
    sw_zap_stop(&z);
    return rc;
  }
  sw_log_info("CurveZMQ on, %d authorised client key(s)", z->n_keys);
  *out = z;
  return 0;
}

void sw_zap_stop(sw_zap_t **self_p) {
  if (!self_p || !*self_p)
    return;
  sw_zap_t *z = *self_p;
  if (z->started) {
    atomic_store(&z->state, 1);
    pthread_join(z->thread, NULL);
  }
  free(z);
  *self_p = NULL;
}

uint64_t sw_zap_denied(const sw_zap_t *self) {
  return self ? atomic_load(&((sw_zap_t *)self)->denied) : 0;
}

uint64_t sw_zap_allowed(const sw_zap_t *self) {
  return self ? atomic_load(&((sw_zap_t *)self)->allowed) : 0;
}
