/* sw_zap.c: ZAP handler thread with CurveZMQ public-key allow-lists, one set per endpoint
 * (ZAP domain): workers from authorized/, control clients from submitters/ and viewers/. */
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
#include "sw_keys.h"

#define MAX_KEYS 4096
#define ZAP_FRAMES 7 /* version, request id, domain, address, identity, mechanism, credentials */

#define PREFIX_SUBMITTER "submitter:"
#define PREFIX_VIEWER "viewer:"
#define CONTROL_UID_MAX (SW_ZAP_USER_ID_MAX + sizeof PREFIX_SUBMITTER)

/* One allow-list directory: its keys and the file name of each. */
struct key_list {
  uint8_t keys[MAX_KEYS][32];
  char names[MAX_KEYS][SW_ZAP_USER_ID_MAX + 1];
  int n_keys;
};

struct sw_zap {
  pthread_t thread;
  int started;
  atomic_int state; /* 0 starting, -1 bound, 1 asked to stop, 2 failed to bind */
  atomic_ulong denied, allowed;
  void *ctx;
  struct key_list workers;    /* authorized/ */
  struct key_list submitters; /* submitters/, or a copy of authorized/ when it does not exist */
  struct key_list viewers;    /* viewers/ (may be empty) */
};

/* Index of key in l, or -1. */
static int find_key(const struct key_list *l, const uint8_t *key) {
  for (int i = 0; i < l->n_keys; i++)
    if (!memcmp(l->keys[i], key, 32)) return i;
  return -1;
}

/* The first 8 z85 characters of a key, enough to tell keys apart in a log. */
static void key_prefix(const uint8_t *key, char out[9]) {
  char z[41];
  if (zmq_z85_encode(z, key, 32))
    snprintf(out, 9, "%.8s", z);
  else
    snprintf(out, 9, "?");
}

/* Decides one CURVE request: writes the User-Id for an admitted key and returns 1, or returns 0
 * with *why set. */
static int admit(const sw_zap_t *z, const char *domain, size_t domain_len, const uint8_t *key,
                 char *uid, size_t cap, const char **why) {
  int i;
  if (domain_len == strlen(SW_ZAP_DOMAIN_WORK) && !memcmp(domain, SW_ZAP_DOMAIN_WORK, domain_len)) {
    if ((i = find_key(&z->workers, key)) >= 0) {
      snprintf(uid, cap, "%s", z->workers.names[i]);
      return 1;
    }
    *why = "public key not authorised for the work endpoint";
    return 0;
  }
  if (domain_len == strlen(SW_ZAP_DOMAIN_CONTROL) &&
      !memcmp(domain, SW_ZAP_DOMAIN_CONTROL, domain_len)) {
    if ((i = find_key(&z->submitters, key)) >= 0) {
      snprintf(uid, cap, PREFIX_SUBMITTER "%s", z->submitters.names[i]);
      return 1;
    }
    if ((i = find_key(&z->viewers, key)) >= 0) {
      snprintf(uid, cap, PREFIX_VIEWER "%s", z->viewers.names[i]);
      return 1;
    }
    *why = "public key not authorised for the control endpoint";
    return 0;
  }
  *why = "unknown ZAP domain";
  return 0;
}

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
  zmq_send(rep, "", 0, 0);                              /* metadata */
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
    if (zmq_poll(&it, 1, 100) <= 0) continue;
    zmq_msg_t f[ZAP_FRAMES];
    int n = recv_request(rep, f);
    int kept = n < ZAP_FRAMES ? n : ZAP_FRAMES;
    if (n < 6 || n > ZAP_FRAMES) {
      /* Not a request we understand; a REP socket must still answer. */
      reply(rep, kept >= 2 ? &f[1] : NULL, "500", "malformed ZAP request", "");
    } else {
      int ok = 0, curve = 0;
      const char *why = "mechanism not allowed";
      char uid[CONTROL_UID_MAX + 1] = "", kp[9] = "-";
      if (zmq_msg_size(&f[5]) == 5 && !memcmp(zmq_msg_data(&f[5]), "CURVE", 5) && n == 7 &&
          zmq_msg_size(&f[6]) == 32) {
        curve = 1;
        ok = admit(z, zmq_msg_data(&f[2]), zmq_msg_size(&f[2]), zmq_msg_data(&f[6]), uid,
                   sizeof uid, &why);
      }
      if (ok) {
        atomic_fetch_add(&z->allowed, 1);
        reply(rep, &f[1], "200", "OK", uid);
      } else {
        atomic_fetch_add(&z->denied, 1);
        if (curve) key_prefix(zmq_msg_data(&f[6]), kp);
        sw_log_warn("ZAP: denied key %s... from %.*s on endpoint \"%.*s\": %s", kp,
                    (int)zmq_msg_size(&f[3]), (const char *)zmq_msg_data(&f[3]),
                    (int)(zmq_msg_size(&f[2]) > 32 ? 32 : zmq_msg_size(&f[2])),
                    (const char *)zmq_msg_data(&f[2]), why);
        reply(rep, &f[1], "400", why, "");
      }
    }
    for (int i = 0; i < kept; i++) zmq_msg_close(&f[i]);
  }
  zmq_close(rep);
  return NULL;
}

/* Reads keys_dir/sub into l. A directory that does not exist is SW_ENOTFOUND (the caller
 * decides whether that is fatal); a malformed key or too long a name is SW_EINVAL. */
static int load_dir(struct key_list *l, const char *keys_dir, const char *sub, struct sw_err *err) {
  char dir[4200];
  snprintf(dir, sizeof dir, "%s/%s", keys_dir, sub);
  DIR *d = opendir(dir);
  if (!d)
    return sw_err_set(err, errno == ENOENT ? SW_ENOTFOUND : SW_EINVAL,
                      "%s: no allow-list directory of client public keys", dir);
  struct dirent *e;
  int rc = 0;
  while (!rc && (e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    char path[4600], key[41];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    if (l->n_keys == MAX_KEYS)
      rc = sw_err_set(err, SW_EINVAL, "%s: more than %d keys", dir, MAX_KEYS);
    else if (strlen(e->d_name) > SW_ZAP_USER_ID_MAX)
      rc = sw_err_set(err, SW_EINVAL, "%s: key file name longer than %d bytes", path,
                      SW_ZAP_USER_ID_MAX);
    else if (sw_keys_read(path, key, err))
      rc = SW_EINVAL;
    else {
      snprintf(l->names[l->n_keys], sizeof l->names[0], "%s", e->d_name);
      zmq_z85_decode(l->keys[l->n_keys++], key);
    }
  }
  closedir(d);
  return rc;
}

/* Loads the three allow-lists; see the rules in sw_zap.h. */
static int load_allow_lists(sw_zap_t *z, const char *keys_dir, struct sw_err *err) {
  int rc = load_dir(&z->workers, keys_dir, "authorized", err);
  if (rc) return rc == SW_ENOTFOUND ? SW_EINVAL : rc;
  if (z->workers.n_keys == 0)
    return sw_err_set(err, SW_EINVAL, "%s/authorized: the allow-list is empty; refusing to start",
                      keys_dir);
  rc = load_dir(&z->submitters, keys_dir, "submitters", err);
  if (rc == SW_ENOTFOUND) {
    z->submitters = z->workers;
    sw_log_warn("%s/submitters does not exist: the worker keys of %s/authorized may also "
                "submit and cancel sweeps on the control endpoint (create submitters/ to "
                "separate the roles)",
                keys_dir, keys_dir);
  } else if (rc)
    return rc;
  rc = load_dir(&z->viewers, keys_dir, "viewers", err);
  if (rc && rc != SW_ENOTFOUND) return rc;
  for (int i = 0; i < z->viewers.n_keys; i++) {
    int k = find_key(&z->submitters, z->viewers.keys[i]);
    if (k >= 0)
      return sw_err_set(err, SW_EINVAL,
                        "%s: key viewers/%s is also a submitter (%s); a key has one role", keys_dir,
                        z->viewers.names[i], z->submitters.names[k]);
  }
  return 0;
}

int sw_zap_start(void *zmq_ctx, const char *keys_dir, sw_zap_t **out, struct sw_err *err) {
  *out = NULL;
  sw_zap_t *z = calloc(1, sizeof *z);
  if (!z) return sw_err_set(err, SW_ENOMEM, "ZAP handler: out of memory");
  z->ctx = zmq_ctx;
  int rc = load_allow_lists(z, keys_dir, err);
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
  sw_log_info("CurveZMQ on: %d worker key(s), %d submitter key(s), %d viewer key(s)",
              z->workers.n_keys, z->submitters.n_keys, z->viewers.n_keys);
  *out = z;
  return 0;
}

enum sw_zap_role sw_zap_role(const char *user_id) {
  if (!user_id) return SW_ZAP_ROLE_NONE;
  if (!strncmp(user_id, PREFIX_SUBMITTER, strlen(PREFIX_SUBMITTER))) return SW_ZAP_ROLE_SUBMITTER;
  if (!strncmp(user_id, PREFIX_VIEWER, strlen(PREFIX_VIEWER))) return SW_ZAP_ROLE_VIEWER;
  return SW_ZAP_ROLE_NONE;
}

void sw_zap_refused(sw_zap_t *self, const char *user_id, const char *what) {
  if (!self) return;
  atomic_fetch_add(&self->denied, 1);
  char kp[9] = "?";
  const char *name = user_id ? user_id : "";
  if (sw_zap_role(name) == SW_ZAP_ROLE_VIEWER) {
    name += strlen(PREFIX_VIEWER);
    for (int i = 0; i < self->viewers.n_keys; i++)
      if (!strcmp(self->viewers.names[i], name)) key_prefix(self->viewers.keys[i], kp);
  }
  sw_log_warn("control: refused %s from key %s... (%s) on endpoint \"" SW_ZAP_DOMAIN_CONTROL
              "\": not a submitter",
              what ? what : "a request", kp, user_id ? user_id : "no User-Id");
}

void sw_zap_stop(sw_zap_t **self_p) {
  if (!self_p || !*self_p) return;
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
