/* sw_artifact.c: the artifact store: upload server, expected rows, listing, downloads and
 * retention (sw_artifact.h). */
#include "sw_artifact.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <microhttpd.h>

#include "sw_clock.h"
#include "sw_fs.h"
#include "sw_log.h"
#include "sw_artifact_files.h"
#include "sw_http.h"
#include "sw_sha256.h"

#define RETAIN_EVERY_MS 60000

/* ---- key, token, folder ------------------------------------------------------------------- */

int sw_artifact_key_load(const char *db_path, uint8_t key[SW_ARTIFACT_KEY_LEN],
                         struct sw_err *err) {
  char dir[4096], path[4200];
  sw_artifact_dir(db_path, dir, sizeof dir);
  snprintf(path, sizeof path, "%s/upload.key", dir);
  uint8_t fresh[SW_ARTIFACT_KEY_LEN];
  randombytes_buf(fresh, sizeof fresh);
  char *data = NULL;
  size_t len = 0;
  int rc = sw_fs_secret(path, fresh, sizeof fresh, &data, &len, err);
  sodium_memzero(fresh, sizeof fresh);
  if (!rc && len != SW_ARTIFACT_KEY_LEN)
    rc = sw_err_set(err, SW_EIO, "%s: expected %d bytes of key (delete the file for a new key)",
                    path, SW_ARTIFACT_KEY_LEN);
  if (!rc) memcpy(key, data, SW_ARTIFACT_KEY_LEN);
  if (data) sodium_memzero(data, len);
  free(data);
  return rc;
}

void sw_artifact_token(const uint8_t key[SW_ARTIFACT_KEY_LEN], uint64_t run_id, uint32_t attempt,
                       char out[SW_MSG_TOKEN_LEN + 1]) {
  char msg[64];
  int len = snprintf(msg, sizeof msg, "%" PRIu64 ":%u", run_id, attempt);
  uint8_t mac[crypto_auth_hmacsha256_BYTES];
  crypto_auth_hmacsha256_state st;
  crypto_auth_hmacsha256_init(&st, key, SW_ARTIFACT_KEY_LEN);
  crypto_auth_hmacsha256_update(&st, (const unsigned char *)msg, (unsigned long long)len);
  crypto_auth_hmacsha256_final(&st, mac);
  sodium_bin2hex(out, SW_MSG_TOKEN_LEN + 1, mac, sizeof mac);
}

/* ---- rows ------------------------------------------------------------------------------------ */

int sw_artifact_expect(sw_store_t *store, int64_t run_id, uint32_t attempt,
                       const struct sw_msg_artifact *a, size_t n,
                       const struct sw_spec_artifacts *rules, struct sw_err *err) {
  static const char *const SQL_ATTEMPT =
      "SELECT id FROM attempts WHERE run_id = ?1 AND attempt = ?2";
  static const char *const SQL_INSERT =
      "INSERT OR IGNORE INTO artifacts (attempt_id, name, size, sha256, state, reason) VALUES "
      "(?1, ?2, ?3, ?4, ?5, ?6)";
  if (n == 0) return 0;
  sqlite3_stmt *st;
  int rc = sw_store_stmt(store, SQL_ATTEMPT, &st, err);
  if (rc) return rc;
  sqlite3_bind_int64(st, 1, run_id);
  sqlite3_bind_int64(st, 2, attempt);
  int step = sqlite3_step(st);
  int64_t attempt_id = step == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
  sqlite3_reset(st);
  if (step == SQLITE_DONE)
    return sw_err_set(err, SW_ENOTFOUND, "artifacts: no attempt %u of run %" PRId64, attempt,
                      run_id);
  if (step != SQLITE_ROW) return sw_store_fail(store, err, "artifacts: finding the attempt");
  if ((rc = sw_store_begin(store, err))) return rc;
  uint64_t max = (uint64_t)rules->max_file_mb << 20;
  for (size_t i = 0; !rc && i < n; i++) {
    char reason[160] = "";
    if (!rules->upload)
      snprintf(reason, sizeof reason, "artifacts.upload is false");
    else if (a[i].size > max)
      snprintf(reason, sizeof reason, "%" PRIu64 " bytes, over artifacts.max_file_mb %u", a[i].size,
               rules->max_file_mb);
    else if (!rules->final_ply && !strcmp(a[i].name, "final.ply"))
      snprintf(reason, sizeof reason, "artifacts.final_ply is false");
    if ((rc = sw_store_stmt(store, SQL_INSERT, &st, err))) break;
    sqlite3_bind_int64(st, 1, attempt_id);
    sqlite3_bind_text(st, 2, a[i].name, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 3, (sqlite3_int64)a[i].size);
    sqlite3_bind_text(st, 4, a[i].sha256, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 5, reason[0] ? "refused" : "expected", -1, SQLITE_STATIC);
    if (reason[0])
      sqlite3_bind_text(st, 6, reason, -1, SQLITE_TRANSIENT);
    else
      sqlite3_bind_null(st, 6);
    if (sqlite3_step(st) != SQLITE_DONE) rc = sw_store_fail(store, err, "artifacts: recording");
    sqlite3_reset(st);
  }
  if (rc) {
    sw_store_rollback(store);
    return rc;
  }
  return sw_store_commit(store, err);
}

int sw_artifact_retain(sw_store_t *store, const char *db_path, int64_t now_wall_ms,
                       struct sw_err *err) {
  /* Sweeps holding stored files, with how many sweeps finished after them. */
  static const char *const SQL_SWEEPS =
      "SELECT s.id, json_extract(s.spec_json, '$.artifacts'), (SELECT COUNT(*) FROM sweeps s2 "
      "WHERE s2.id > s.id AND s2.status != 'running') FROM sweeps s WHERE s.status != 'running' "
      "AND EXISTS (SELECT 1 FROM artifacts ar JOIN attempts a ON a.id = ar.attempt_id JOIN runs r "
      "ON r.id = a.run_id JOIN pairs p ON p.id = r.pair_id WHERE p.sweep_id = s.id AND ar.state = "
      "'stored')";
  static const char *const SQL_FILES =
      "SELECT ar.id, a.run_id, a.attempt, ar.name, ar.stored_wall_ms FROM artifacts ar JOIN "
      "attempts a ON a.id = ar.attempt_id JOIN runs r ON r.id = a.run_id JOIN pairs p ON p.id = "
      "r.pair_id WHERE p.sweep_id = ?1 AND ar.state = 'stored'";
  static const char *const SQL_DELETE =
      "UPDATE artifacts SET state = 'deleted', reason = ?2 WHERE id = ?1";
  struct victim {
    int64_t id, sweep, run;
    int attempt;
    char name[SW_MSG_ARTIFACT_NAME_MAX + 1];
    char why[96];
  };
  struct victim *v = NULL;
  size_t nv = 0, cap = 0;
  int64_t sweeps[256];
  struct sw_spec_artifacts rules[256];
  int64_t newer[256];
  int ns = 0;
  sqlite3_stmt *st;
  int rc = sw_store_stmt(store, SQL_SWEEPS, &st, err);
  if (rc) return rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW && ns < 256) {
    sweeps[ns] = sqlite3_column_int64(st, 0);
    json_t *j = sqlite3_column_type(st, 1) == SQLITE_NULL
                    ? NULL
                    : json_loads((const char *)sqlite3_column_text(st, 1), 0, NULL);
    sw_spec_artifacts_from_json(j, &rules[ns]);
    json_decref(j);
    newer[ns] = sqlite3_column_int64(st, 2);
    ns++;
  }
  sqlite3_reset(st);
  if (rc != SQLITE_DONE && rc != SQLITE_ROW) return sw_store_fail(store, err, "retention: sweeps");
  for (int i = 0; i < ns; i++) {
    int by_count = rules[i].keep_sweeps > 0 && newer[i] >= (int64_t)rules[i].keep_sweeps;
    int64_t max_age = (int64_t)(rules[i].keep_days * 86400000.0);
    if (!by_count && max_age <= 0) continue;
    if ((rc = sw_store_stmt(store, SQL_FILES, &st, err))) goto out;
    sqlite3_bind_int64(st, 1, sweeps[i]);
    while (sqlite3_step(st) == SQLITE_ROW) {
      int old = max_age > 0 && sqlite3_column_type(st, 4) != SQLITE_NULL &&
                now_wall_ms - sqlite3_column_int64(st, 4) > max_age;
      if (!by_count && !old) continue;
      if (nv == cap) {
        size_t nc = cap ? cap * 2 : 64;
        struct victim *g = realloc(v, nc * sizeof *g);
        if (!g) break;
        v = g;
        cap = nc;
      }
      struct victim *x = &v[nv++];
      x->id = sqlite3_column_int64(st, 0);
      x->sweep = sweeps[i];
      x->run = sqlite3_column_int64(st, 1);
      x->attempt = sqlite3_column_int(st, 2);
      snprintf(x->name, sizeof x->name, "%s", (const char *)sqlite3_column_text(st, 3));
      if (by_count)
        snprintf(x->why, sizeof x->why, "retention: %lld newer sweeps (keep_sweeps %u)",
                 (long long)newer[i], rules[i].keep_sweeps);
      else
        snprintf(x->why, sizeof x->why, "retention: older than keep_days %g", rules[i].keep_days);
    }
    sqlite3_reset(st);
  }
  /* Rows first (one transaction), then the files: a crash in between leaves files without
   * rows, which the next start's sweep of orphans does not need, because nothing links them. */
  if (nv) {
    if ((rc = sw_store_begin(store, err))) goto out;
    for (size_t k = 0; !rc && k < nv; k++) {
      if ((rc = sw_store_stmt(store, SQL_DELETE, &st, err))) break;
      sqlite3_bind_int64(st, 1, v[k].id);
      sqlite3_bind_text(st, 2, v[k].why, -1, SQLITE_STATIC);
      if (sqlite3_step(st) != SQLITE_DONE) rc = sw_store_fail(store, err, "retention: marking");
      sqlite3_reset(st);
    }
    if (rc) {
      sw_store_rollback(store);
      goto out;
    }
    if ((rc = sw_store_commit(store, err))) goto out;
    for (size_t k = 0; k < nv; k++) {
      char path[4600];
      sw_artifact_path(db_path, v[k].sweep, v[k].run, v[k].attempt, v[k].name, path, sizeof path);
      if (unlink(path) != 0 && errno != ENOENT)
        sw_log_warn("retention: cannot delete %s: %s", path, strerror(errno));
    }
    sw_log_info("artifact retention: %zu file(s) deleted", nv);
  }
  rc = (int)nv;
out:
  free(v);
  return rc;
}

/* ---- the upload server ------------------------------------------------------------------- */

struct sw_artifact {
  struct MHD_Daemon *daemon;
  char *db_path;
  char *url; /* what workers are told (sw_artifact_url) */
  uint8_t key[SW_ARTIFACT_KEY_LEN];
  sw_store_t *store; /* the daemon thread's connection, opened on first use */
  int port;
  pthread_t retainer;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int stop;
};

/* One upload in progress (the connection's con_cls). */
struct upload {
  int64_t row, sweep, run;
  int attempt;
  char name[SW_MSG_ARTIFACT_NAME_MAX + 1];
  uint64_t size, got;
  char sha256[65];
  struct sw_sha256 h;
  int fd;
  char tmp[4700], final[4700];
  unsigned fail; /* an HTTP status decided while the body streams in (the rest is discarded) */
  char why[200];
};

/* A read-write connection to the database, but only once the coordinator has created it and
 * brought it to this build's schema: this module never creates or migrates the store (two
 * migrations at once would collide). 0, or -1 when it is not ready (yet). */
static int open_current(const char *db_path, sw_store_t **out) {
  if (!sw_fs_exists(db_path)) return -1;
  struct sw_store_opts so;
  sw_store_opts_default(&so);
  so.read_only = 1;
  sw_store_t *probe = NULL;
  struct sw_err err = {0};
  int version = 0;
  if (sw_store_open(db_path, &so, &probe, &err) || sw_store_version(probe, &version, &err)) {
    sw_store_close(&probe);
    return -1;
  }
  sw_store_close(&probe);
  if (version != SW_STORE_SCHEMA_VERSION) return -1;
  if (sw_store_open(db_path, NULL, out, &err)) {
    sw_log_warn("artifacts: %s", err.msg);
    return -1;
  }
  return 0;
}

static int server_store(struct sw_artifact *s) {
  return s->store ? 0 : open_current(s->db_path, &s->store);
}

/* Looks the expected row up; 0 and the upload's fields, or an HTTP status. */
static unsigned find_row(struct sw_artifact *s, struct upload *u, char *state, size_t cap) {
  static const char *const SQL =
      "SELECT ar.id, ar.size, ar.sha256, ar.state, COALESCE(ar.reason, ''), p.sweep_id FROM "
      "artifacts ar JOIN attempts a ON a.id = ar.attempt_id JOIN runs r ON r.id = a.run_id JOIN "
      "pairs p ON p.id = r.pair_id WHERE a.run_id = ?1 AND a.attempt = ?2 AND ar.name = ?3";
  if (server_store(s)) return MHD_HTTP_SERVICE_UNAVAILABLE;
  sqlite3_stmt *st;
  struct sw_err err = {0};
  if (sw_store_stmt(s->store, SQL, &st, &err)) return MHD_HTTP_INTERNAL_SERVER_ERROR;
  sqlite3_bind_int64(st, 1, u->run);
  sqlite3_bind_int64(st, 2, u->attempt);
  sqlite3_bind_text(st, 3, u->name, -1, SQLITE_STATIC);
  int rc = sqlite3_step(st);
  if (rc == SQLITE_ROW) {
    u->row = sqlite3_column_int64(st, 0);
    u->size = (uint64_t)sqlite3_column_int64(st, 1);
    snprintf(u->sha256, sizeof u->sha256, "%s", (const char *)sqlite3_column_text(st, 2));
    snprintf(state, cap, "%s", (const char *)sqlite3_column_text(st, 3));
    snprintf(u->why, sizeof u->why, "%s", (const char *)sqlite3_column_text(st, 4));
    u->sweep = sqlite3_column_int64(st, 5);
  }
  sqlite3_reset(st);
  if (rc == SQLITE_DONE) return MHD_HTTP_NOT_FOUND;
  if (rc != SQLITE_ROW) {
    sw_store_close(&s->store);
    return MHD_HTTP_INTERNAL_SERVER_ERROR;
  }
  return 0;
}

static void upload_free(struct upload *u) {
  if (!u) return;
  if (u->fd >= 0) {
    close(u->fd);
    unlink(u->tmp);
  }
  free(u);
}

static void on_done(void *cls, struct MHD_Connection *conn, void **con_cls,
                    enum MHD_RequestTerminationCode toe) {
  (void)cls;
  (void)conn;
  (void)toe;
  upload_free(*con_cls);
  *con_cls = NULL;
}

/* The first call of a PUT: checks everything that can be checked before the body. */
static enum MHD_Result upload_begin(struct sw_artifact *s, struct MHD_Connection *conn,
                                    const char *url, void **con_cls) {
  struct upload *u = calloc(1, sizeof *u);
  if (!u) return MHD_NO;
  u->fd = -1;
  if (strncmp(url, "/upload/", 8) ||
      sw_artifact_parse_target(url + 8, &u->run, &u->attempt, u->name, sizeof u->name)) {
    free(u);
    return sw_artifact_answer(conn, MHD_HTTP_BAD_REQUEST,
                              "expected PUT /upload/RUN/ATTEMPT/NAME\n");
  }
  const char *auth =
      MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
  char want[SW_MSG_TOKEN_LEN + 1];
  sw_artifact_token(s->key, (uint64_t)u->run, (uint32_t)u->attempt, want);
  if (!auth || strncmp(auth, "Bearer ", 7) || strlen(auth + 7) != SW_MSG_TOKEN_LEN ||
      sodium_memcmp(auth + 7, want, SW_MSG_TOKEN_LEN) != 0) {
    sw_log_warn("artifacts: upload of run %lld attempt %d refused: no or wrong token",
                (long long)u->run, u->attempt);
    free(u);
    return sw_artifact_answer(conn, MHD_HTTP_UNAUTHORIZED, "no or wrong upload token\n");
  }
  char state[16] = "";
  unsigned status = find_row(s, u, state, sizeof state);
  if (status) {
    free(u);
    return sw_artifact_answer(conn, status,
                              status == MHD_HTTP_NOT_FOUND
                                  ? "no expected artifact there (is the result stored?)\n"
                                  : "artifact store unavailable\n");
  }
  if (!strcmp(state, "stored")) {
    free(u);
    return sw_artifact_answer(conn, MHD_HTTP_OK, "already stored\n");
  }
  if (strcmp(state, "expected")) {
    int rc = sw_artifact_answer(conn, MHD_HTTP_CONFLICT, "%s: %s\n", state, u->why);
    free(u);
    return rc;
  }
  const char *cl =
      MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
  if (!cl) {
    free(u);
    return sw_artifact_answer(conn, MHD_HTTP_LENGTH_REQUIRED, "Content-Length required\n");
  }
  char *end;
  errno = 0;
  unsigned long long len = strtoull(cl, &end, 10);
  if (errno || end == cl || *end || len != u->size) {
    int rc = sw_artifact_answer(conn, MHD_HTTP_CONTENT_TOO_LARGE,
                                "%s bytes sent, %" PRIu64 " announced\n", cl, u->size);
    free(u);
    return rc;
  }
  sw_artifact_path(s->db_path, u->sweep, u->run, u->attempt, u->name, u->final, sizeof u->final);
  char dir[4700];
  snprintf(dir, sizeof dir, "%s", u->final);
  *strrchr(dir, '/') = '\0';
  struct sw_err err = {0};
  if (sw_fs_mkdir_p(dir, &err)) {
    free(u);
    sw_log_error("artifacts: %s", err.msg);
    return sw_artifact_answer(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "cannot store: %s\n", err.msg);
  }
  snprintf(u->tmp, sizeof u->tmp, "%s.part", u->final);
  u->fd = open(u->tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (u->fd < 0) {
    int rc = sw_artifact_answer(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "%s: %s\n", u->tmp,
                                strerror(errno));
    free(u);
    return rc;
  }
  sw_sha256_init(&u->h);
  *con_cls = u;
  return MHD_YES;
}

static unsigned upload_finish(struct sw_artifact *s, struct upload *u) {
  static const char *const SQL = "UPDATE artifacts SET state = 'stored', stored_wall_ms = ?2 WHERE "
                                 "id = ?1 AND state = 'expected'";
  char hex[SW_SHA256_HEX_LEN];
  sw_sha256_final(&u->h, hex);
  if (u->got != u->size) {
    snprintf(u->why, sizeof u->why, "%" PRIu64 " bytes received, %" PRIu64 " announced", u->got,
             u->size);
    return MHD_HTTP_CONTENT_TOO_LARGE;
  }
  if (strcmp(hex, u->sha256)) {
    snprintf(u->why, sizeof u->why, "sha256 %s, the result announced %s", hex, u->sha256);
    sw_log_warn("artifacts: run %lld attempt %d %s: %s", (long long)u->run, u->attempt, u->name,
                u->why);
    return 422;
  }
  int ok = fsync(u->fd) == 0;
  ok = close(u->fd) == 0 && ok;
  u->fd = -1;
  if (!ok || rename(u->tmp, u->final) != 0) {
    snprintf(u->why, sizeof u->why, "%s: %s", u->final, strerror(errno));
    unlink(u->tmp);
    return MHD_HTTP_INTERNAL_SERVER_ERROR;
  }
  sqlite3_stmt *st;
  struct sw_err err = {0};
  if (server_store(s) || sw_store_stmt(s->store, SQL, &st, &err)) {
    snprintf(u->why, sizeof u->why, "database unavailable");
    return MHD_HTTP_INTERNAL_SERVER_ERROR;
  }
  sqlite3_bind_int64(st, 1, u->row);
  sqlite3_bind_int64(st, 2, sw_clock_wall_ms());
  int rc = sqlite3_step(st);
  sqlite3_reset(st);
  if (rc != SQLITE_DONE) {
    snprintf(u->why, sizeof u->why, "database: %s", sqlite3_errmsg(sw_store_db(s->store)));
    sw_store_close(&s->store);
    return MHD_HTTP_INTERNAL_SERVER_ERROR;
  }
  sw_log_info("artifacts: stored %s (%" PRIu64 " bytes, sha256 ok)", u->final, u->size);
  return MHD_HTTP_CREATED;
}

static enum MHD_Result on_upload(void *cls, struct MHD_Connection *conn, const char *url,
                                 const char *method, const char *version, const char *data,
                                 size_t *data_size, void **con_cls) {
  (void)version;
  struct sw_artifact *s = cls;
  struct upload *u = *con_cls;
  if (!u) {
    if (strcmp(method, MHD_HTTP_METHOD_PUT)) {
      *data_size = 0;
      return sw_artifact_answer(conn, MHD_HTTP_METHOD_NOT_ALLOWED,
                                "PUT /upload/RUN/ATTEMPT/NAME only\n");
    }
    return upload_begin(s, conn, url, con_cls);
  }
  if (*data_size) {
    size_t n = *data_size;
    *data_size = 0;
    if (u->fail) return MHD_YES; /* discard the rest */
    if (u->got + n > u->size) {
      u->fail = MHD_HTTP_CONTENT_TOO_LARGE;
      snprintf(u->why, sizeof u->why, "more than the %" PRIu64 " bytes announced", u->size);
      return MHD_YES;
    }
    sw_sha256_update(&u->h, data, n);
    for (size_t off = 0; off < n;) {
      ssize_t w = write(u->fd, data + off, n - off);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) {
        u->fail = MHD_HTTP_INTERNAL_SERVER_ERROR;
        snprintf(u->why, sizeof u->why, "%s: %s", u->tmp, strerror(errno));
        break;
      }
      off += (size_t)w;
    }
    u->got += n;
    return MHD_YES;
  }
  unsigned status = u->fail ? u->fail : upload_finish(s, u);
  return status == MHD_HTTP_CREATED ? sw_artifact_answer(conn, status, "stored %s\n", u->sha256)
                                    : sw_artifact_answer(conn, status, "%s\n", u->why);
}

/* The retention thread: the rule at start and then every minute, on its own connection. */
static void *retain_loop(void *arg) {
  struct sw_artifact *s = arg;
  sw_store_t *store = NULL;
  pthread_mutex_lock(&s->mu);
  while (!s->stop) {
    pthread_mutex_unlock(&s->mu);
    struct sw_err err = {0};
    if (!store) open_current(s->db_path, &store);
    if (store && sw_artifact_retain(store, s->db_path, sw_clock_wall_ms(), &err) < 0) {
      sw_log_warn("artifact retention: %s", err.msg);
      sw_store_close(&store);
    }
    pthread_mutex_lock(&s->mu);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    /* Until the coordinator has made the store ready, look again each second. */
    ts.tv_sec += store ? RETAIN_EVERY_MS / 1000 : 1;
    if (!s->stop) pthread_cond_timedwait(&s->cv, &s->mu, &ts);
  }
  pthread_mutex_unlock(&s->mu);
  sw_store_close(&store);
  return NULL;
}

int sw_artifact_start(const struct sw_artifact_opts *opts, sw_artifact_t **out,
                      struct sw_err *err) {
  *out = NULL;
  if (!opts || !opts->db_path) return sw_err_set(err, SW_EINVAL, "artifacts: no database path");
  struct sockaddr_in addr;
  const char *bind = opts->bind ? opts->bind : "0.0.0.0";
  int arc = sw_http_listen_addr("artifacts", bind, opts->port, &addr, err);
  if (arc) return arc;
  struct sw_artifact *s = calloc(1, sizeof *s);
  if (!s || !(s->db_path = strdup(opts->db_path))) {
    free(s);
    return sw_err_set(err, SW_ENOMEM, "artifacts: out of memory");
  }
  /* The database's folder exists before the coordinator makes the file: the key lives there. */
  int rc = sw_artifact_key_load(s->db_path, s->key, err);
  if (rc) {
    free(s->db_path);
    free(s);
    return rc;
  }
  pthread_mutex_init(&s->mu, NULL);
  pthread_cond_init(&s->cv, NULL);
  s->daemon = MHD_start_daemon(
      MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_USE_ERROR_LOG, (uint16_t)opts->port,
      NULL, NULL, on_upload, s, MHD_OPTION_EXTERNAL_LOGGER, sw_http_mhd_log, (void *)"artifacts",
      MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)60,
      MHD_OPTION_CONNECTION_LIMIT, (unsigned)64, MHD_OPTION_NOTIFY_COMPLETED, on_done, NULL,
      MHD_OPTION_END);
  if (!s->daemon) {
    rc = sw_err_set(err, SW_ENET, "artifacts: cannot listen on %s:%d (%s)", bind, opts->port,
                    strerror(errno));
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->mu);
    free(s->db_path);
    free(s);
    return rc;
  }
  const union MHD_DaemonInfo *info = MHD_get_daemon_info(s->daemon, MHD_DAEMON_INFO_BIND_PORT);
  s->port = info ? info->port : opts->port;
  /* The URL workers are told: the given one, else this host's address at the bound port. */
  char buf[SW_MSG_URL_MAX + 1];
  if (opts->url) {
    snprintf(buf, sizeof buf, "%s", opts->url);
  } else if (opts->bind && !strncmp(opts->bind, "127.", 4)) {
    snprintf(buf, sizeof buf, "http://%s:%d", opts->bind, s->port);
  } else {
    sw_http_host_url(s->port, buf, sizeof buf);
  }
  s->url = strdup(buf);
  if (!s->url || pthread_create(&s->retainer, NULL, retain_loop, s) != 0) {
    MHD_stop_daemon(s->daemon);
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->mu);
    free(s->url);
    free(s->db_path);
    free(s);
    return sw_err_set(err, SW_EIO, "artifacts: cannot start the retention thread");
  }
  *out = s;
  return 0;
}

void sw_artifact_stop(sw_artifact_t **self_p) {
  if (!self_p || !*self_p) return;
  struct sw_artifact *s = *self_p;
  pthread_mutex_lock(&s->mu);
  s->stop = 1;
  pthread_cond_signal(&s->cv);
  pthread_mutex_unlock(&s->mu);
  pthread_join(s->retainer, NULL);
  MHD_stop_daemon(s->daemon);
  sw_store_close(&s->store);
  pthread_cond_destroy(&s->cv);
  pthread_mutex_destroy(&s->mu);
  sodium_memzero(s->key, sizeof s->key);
  free(s->db_path);
  free(s->url);
  free(s);
  *self_p = NULL;
}

int sw_artifact_port(const sw_artifact_t *self) { return self ? self->port : 0; }

const char *sw_artifact_url(const sw_artifact_t *self) { return self ? self->url : NULL; }
