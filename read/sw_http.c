/* sw_http.c: the read-only HTTP dashboard: a libmicrohttpd daemon on its own internal thread
 * with its own lazily opened read-only store connection and the coordinator's published status
 * snapshot, serving the live dashboard (sw_dash.h), reports, Pareto pages and JSON APIs (routes
 * in sw_http.h), behind a token when it listens beyond loopback. */
#include "sw_http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <jansson.h>
#include <microhttpd.h>
#include <pthread.h>
#include <sodium.h>

#include "sw_artifact_files.h"
#include "sw_audit.h"
#include "sw_clock.h"
#include "sw_dash.h"
#include "sw_fs.h"
#include "sw_log.h"
#include "sw_pareto.h"
#include "sw_html.h"
#include "sw_report.h"
#include "sw_store.h"

struct sw_http {
  struct MHD_Daemon *daemon;
  char *db_path;
  sw_store_t *store; /* used only from the daemon's thread */
  int port;
  char token[SW_HTTP_TOKEN_LEN + 1]; /* the dashboard's token (DB.http-token) */
  int require_token;                 /* listening on anything but loopback */
  /* The coordinator's last status snapshot (sw_http_publish, from its poll loop's thread),
   * read by the daemon's thread: the mutex guards only the pointer swap and the copy. */
  pthread_mutex_t live_mu;
  char *live;
  int64_t live_ms;
};

/* A response under construction: body (malloc'd), its type and the HTTP status. */
struct reply {
  unsigned status;
  const char *type;
  char *body;
};

static void reply_text(struct reply *r, unsigned status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void reply_text(struct reply *r, unsigned status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  free(r->body);
  r->body = NULL;
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  if (n >= 0 && (r->body = malloc((size_t)n + 1))) vsnprintf(r->body, (size_t)n + 1, fmt, ap2);
  va_end(ap2);
  va_end(ap);
  r->status = status;
  r->type = "text/plain; charset=utf-8";
}

static void reply_json(struct reply *r, json_t *j) {
  r->body = json_dumps(j, JSON_INDENT(2));
  r->status = r->body ? MHD_HTTP_OK : MHD_HTTP_INTERNAL_SERVER_ERROR;
  r->type = "application/json";
  json_decref(j);
}

/* Maps a module error to an HTTP status: unknown sweep 404, anything else 500. */
static void reply_error(struct reply *r, const struct sw_err *err) {
  unsigned status = err->code == SW_ENOTFOUND ? MHD_HTTP_NOT_FOUND
                    : err->code == SW_EINVAL  ? MHD_HTTP_BAD_REQUEST
                                              : MHD_HTTP_INTERNAL_SERVER_ERROR;
  reply_text(r, status, "%s\n", err->msg[0] ? err->msg : sw_strerror(err->code));
}

/* A rendered page (a report or a Pareto page, HTML or JSON): the text it rendered (taken over),
 * or the error of its renderer (rc non-zero). */
static void reply_page(struct reply *r, int rc, char *text, int html, const struct sw_err *err) {
  if (rc) {
    reply_error(r, err);
    return;
  }
  r->body = text;
  r->status = MHD_HTTP_OK;
  r->type = html ? "text/html; charset=utf-8" : "application/json";
}

static int store_ready(struct sw_http *h, struct reply *r) {
  if (h->store) return 0;
  struct sw_err err = {0};
  if (!sw_fs_exists(h->db_path)) {
    reply_text(r, MHD_HTTP_SERVICE_UNAVAILABLE, "no database at %s yet\n", h->db_path);
    return -1;
  }
  struct sw_store_opts so;
  sw_store_opts_default(&so);
  so.read_only = 1;
  so.busy_timeout_ms = 2000;
  if (sw_store_open(h->db_path, &so, &h->store, &err)) {
    reply_text(r, MHD_HTTP_SERVICE_UNAVAILABLE, "%s\n", err.msg);
    return -1;
  }
  return 0;
}

/* ---- routing --------------------------------------------------------------------------------- */

/* "/prefix/ID" with a positive decimal ID and nothing after it. */
static int route_id(const char *url, const char *prefix, int64_t *id) {
  size_t n = strlen(prefix);
  if (strncmp(url, prefix, n) != 0) return 0;
  const char *p = url + n;
  if (*p < '1' || *p > '9') return 0;
  char *end;
  errno = 0;
  long long v = strtoll(p, &end, 10);
  if (errno || *end) return 0;
  *id = v;
  return 1;
}

/* The live snapshot as JSON (NULL when the coordinator has published none) and its age. */
static json_t *live_snapshot(struct sw_http *h, int64_t *age_ms) {
  pthread_mutex_lock(&h->live_mu);
  json_t *j = h->live ? json_loads(h->live, 0, NULL) : NULL;
  *age_ms = sw_clock_mono_ms() - h->live_ms;
  pthread_mutex_unlock(&h->live_mu);
  return j;
}

/* /api/status: the coordinator's status document exactly as it published it (the one builder,
 * sw_coord_status_json over sw_sched_status_json, which `splatsweep status --format json` prints
 * too). Without a snapshot there is no status view to serve: the read side does not build one of
 * its own from the store. */
static void reply_status(struct sw_http *h, struct reply *r) {
  pthread_mutex_lock(&h->live_mu);
  char *text = h->live ? strdup(h->live) : NULL;
  int published = h->live != NULL;
  pthread_mutex_unlock(&h->live_mu);
  if (!published) {
    reply_text(r, MHD_HTTP_SERVICE_UNAVAILABLE, "%s",
               "no coordinator status yet: /api/status is the status the coordinator publishes "
               "from its loop (a dashboard started by `coordinator` or `local` --http); "
               "/api/dashboard reads the store alone\n");
    return;
  }
  r->body = text; /* NULL when out of memory: on_request answers 500 */
  r->status = MHD_HTTP_OK;
  r->type = "application/json";
}

static void route(struct sw_http *h, const char *url, struct reply *r) {
  struct sw_err err = {0};
  int64_t id = 0;
  char *text = NULL;
  if (strcmp(url, "/") == 0) {
    /* The page fetches its data; it needs no store to be served. */
    r->body = sw_dash_page();
    r->status = r->body ? MHD_HTTP_OK : MHD_HTTP_INTERNAL_SERVER_ERROR;
    r->type = "text/html; charset=utf-8";
    return;
  }
  int known = strcmp(url, "/api/dashboard") == 0 || strcmp(url, "/api/status") == 0 ||
              route_id(url, "/sweep/", &id) || route_id(url, "/pareto/", &id) ||
              route_id(url, "/api/report/", &id) || route_id(url, "/api/pareto/", &id) ||
              route_id(url, "/api/audit/", &id);
  if (!known) {
    reply_text(r, MHD_HTTP_NOT_FOUND, "no such page: %s\n", url);
    return;
  }
  if (strcmp(url, "/api/status") == 0) {
    reply_status(h, r); /* the coordinator's document: no store needed */
    return;
  }
  if (store_ready(h, r)) return;
  if (strcmp(url, "/api/dashboard") == 0) {
    int64_t age = 0;
    json_t *live = live_snapshot(h, &age);
    json_t *d = sw_dash_json(h->store, live, age, &err);
    json_decref(live);
    if (!d)
      reply_error(r, &err);
    else
      reply_json(r, d);
  } else if (route_id(url, "/sweep/", &id) || route_id(url, "/api/report/", &id)) {
    int html = url[1] == 's';
    int rc =
        sw_report_render_string(h->store, id, html ? SW_REPORT_HTML : SW_REPORT_JSON, &text, &err);
    reply_page(r, rc, text, html, &err);
  } else if (route_id(url, "/pareto/", &id) || route_id(url, "/api/pareto/", &id)) {
    int html = url[1] == 'p';
    struct sw_pareto_opts po = {.sweep_id = id};
    int rc =
        sw_pareto_render_string(h->store, &po, html ? SW_PARETO_HTML : SW_PARETO_JSON, &text, &err);
    reply_page(r, rc, text, html, &err);
  } else {
    struct sw_audit_opts ao = {.sweep_id = id};
    json_t *a = sw_audit_json(h->store, &ao, NULL, &err);
    if (!a)
      reply_error(r, &err);
    else
      reply_json(r, a);
  }
  /* A failed database read may mean the file was replaced: reopen on the next request. */
  if (err.code == SW_EDB) sw_store_close(&h->store);
}

/* Constant-time comparison of a presented token with ours (NULL: no token presented). */
static int token_equal(const struct sw_http *h, const char *t) {
  return t && strlen(t) == SW_HTTP_TOKEN_LEN && sodium_memcmp(t, h->token, SW_HTTP_TOKEN_LEN) == 0;
}

/* Whether the request may be served: always on loopback; otherwise with the token as the
 * `token` query argument (then *set_cookie: kept as a cookie), an "Authorization: Bearer"
 * header or the sw_token cookie. */
static int token_ok(struct sw_http *h, struct MHD_Connection *conn, int *set_cookie) {
  if (!h->require_token) return 1;
  const char *q = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "token");
  if (token_equal(h, q)) {
    *set_cookie = 1;
    return 1;
  }
  const char *auth =
      MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
  if (auth && strncmp(auth, "Bearer ", 7) == 0 && token_equal(h, auth + 7)) return 1;
  return token_equal(h, MHD_lookup_connection_value(conn, MHD_COOKIE_KIND, "sw_token"));
}

/* The token beside the database (DB.http-token): read when it exists, else made from 32 random
 * bytes as 64 hex digits (sw_fs_secret: mode 0600, created once even when two processes start
 * at once), so it survives restarts and only the database's owner can read it. */
static int load_token(struct sw_http *h, struct sw_err *err) {
  size_t n = strlen(h->db_path) + sizeof ".http-token";
  char *path = malloc(n);
  if (!path) return sw_err_set(err, SW_ENOMEM, "http: out of memory");
  snprintf(path, n, "%s.http-token", h->db_path);
  if (sodium_init() < 0) {
    free(path);
    return sw_err_set(err, SW_EIO, "http: libsodium cannot start (no random source)");
  }
  unsigned char raw[SW_HTTP_TOKEN_LEN / 2];
  randombytes_buf(raw, sizeof raw);
  char line[SW_HTTP_TOKEN_LEN + 2];
  sodium_bin2hex(line, SW_HTTP_TOKEN_LEN + 1, raw, sizeof raw);
  strcat(line, "\n");
  char *text = NULL;
  size_t len = 0;
  int rc = sw_fs_secret(path, line, strlen(line), &text, &len, err);
  while (!rc && len && (text[len - 1] == '\n' || text[len - 1] == '\r')) text[--len] = '\0';
  if (!rc && (len != SW_HTTP_TOKEN_LEN || strspn(text, "0123456789abcdef") != len))
    rc = sw_err_set(err, SW_EINVAL,
                    "%s:1:1: expected %d lower-case hex digits (delete the file for a new token)",
                    path, SW_HTTP_TOKEN_LEN);
  if (!rc) memcpy(h->token, text, SW_HTTP_TOKEN_LEN + 1);
  free(text);
  free(path);
  return rc;
}

void sw_http_publish(void *self, const char *status_json) {
  struct sw_http *h = self;
  if (!h || !status_json) return;
  char *copy = strdup(status_json);
  if (!copy) return; /* the dashboard shows the previous snapshot, with its age */
  pthread_mutex_lock(&h->live_mu);
  free(h->live);
  h->live = copy;
  h->live_ms = sw_clock_mono_ms();
  pthread_mutex_unlock(&h->live_mu);
}

const char *sw_http_token(const sw_http_t *self) { return self ? self->token : NULL; }

int sw_http_token_required(const sw_http_t *self) { return self ? self->require_token : 0; }

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **con_cls) {
  (void)version;
  (void)upload_data;
  (void)con_cls;
  struct sw_http *h = cls;
  struct reply r = {MHD_HTTP_OK, "text/plain", NULL};
  int set_cookie = 0;
  if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0) {
    /* Read-only: a request body is never read, so refuse before any is accepted. */
    *upload_data_size = 0;
    reply_text(&r, MHD_HTTP_METHOD_NOT_ALLOWED, "read-only dashboard: GET or HEAD only\n");
  } else if (!token_ok(h, conn, &set_cookie)) {
    /* Nothing about this installation (not even the database's path) before the token. */
    reply_text(&r, MHD_HTTP_UNAUTHORIZED, "%s",
               "this dashboard listens beyond loopback and needs its token: open "
               "/?token=TOKEN (printed when the coordinator started; kept beside its database "
               "as DATABASE.http-token) or send \"Authorization: Bearer TOKEN\"\n");
  } else if (!strncmp(url, "/artifact/", 10) || !strncmp(url, "/api/artifacts/", 15)) {
    /* Artifact downloads and lists: the artifact store's own answer (sw_artifact.h). */
    return (enum MHD_Result)sw_artifact_serve(conn, h->db_path, url);
  } else {
    route(h, url, &r);
  }
  if (!r.body) reply_text(&r, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
  size_t len = r.body ? strlen(r.body) : 0;
  struct MHD_Response *resp = MHD_create_response_from_buffer(
      len, r.body ? r.body : (void *)"", r.body ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
  if (!resp) {
    free(r.body);
    return MHD_NO;
  }
  MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, r.type);
  MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
  if (r.status == MHD_HTTP_METHOD_NOT_ALLOWED)
    MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
  if (r.status == MHD_HTTP_UNAUTHORIZED)
    MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer realm=\"splatsweep\"");
  if (set_cookie) {
    /* A token given in the address is kept as a cookie, so the page's own requests and its
     * links carry it without the token in every URL. */
    char cookie[SW_HTTP_TOKEN_LEN + 80];
    snprintf(cookie, sizeof cookie, "sw_token=%s; Path=/; HttpOnly; SameSite=Strict", h->token);
    MHD_add_response_header(resp, MHD_HTTP_HEADER_SET_COOKIE, cookie);
  }
  enum MHD_Result ret = MHD_queue_response(conn, r.status, resp);
  MHD_destroy_response(resp);
  return ret;
}

void sw_http_host_url(int port, char *out, size_t cap) {
  char host[256] = "";
  if (gethostname(host, sizeof host - 1) != 0 || !host[0]) snprintf(host, sizeof host, "localhost");
  host[sizeof host - 1] = '\0';
  snprintf(out, cap, "http://%s:%d", host, port);
}

void sw_http_mhd_log(void *cls, const char *fmt, va_list ap) {
  char line[400];
  vsnprintf(line, sizeof line, fmt, ap);
  size_t n = strlen(line);
  while (n && (line[n - 1] == '\n' || line[n - 1] == '\r')) line[--n] = '\0';
  sw_log_warn("%s: %s", (const char *)cls, line);
}

int sw_http_listen_addr(const char *who, const char *bind, int port, struct sockaddr_in *out,
                        struct sw_err *err) {
  if (port < 0 || port > 65535)
    return sw_err_set(err, SW_EINVAL, "%s: port %d outside 0-65535", who, port);
  memset(out, 0, sizeof *out);
  out->sin_family = AF_INET;
  out->sin_port = htons((uint16_t)port);
  if (inet_pton(AF_INET, bind, &out->sin_addr) != 1)
    return sw_err_set(err, SW_EINVAL, "%s: '%s' is not an IPv4 address", who, bind);
  return 0;
}

int sw_http_start(const struct sw_http_opts *opts, sw_http_t **out, struct sw_err *err) {
  *out = NULL;
  if (!opts || !opts->db_path) return sw_err_set(err, SW_EINVAL, "http: no database path");
  struct sockaddr_in addr;
  const char *bind = opts->bind ? opts->bind : "127.0.0.1";
  int arc = sw_http_listen_addr("http", bind, opts->port, &addr, err);
  if (arc) return arc;
  struct sw_http *h = calloc(1, sizeof *h);
  if (!h || !(h->db_path = strdup(opts->db_path))) {
    free(h);
    return sw_err_set(err, SW_ENOMEM, "http: out of memory");
  }
  /* Loopback (127.0.0.0/8) is this machine's users only; any other address needs the token. */
  h->require_token = (ntohl(addr.sin_addr.s_addr) >> 24) != 127;
  int trc = load_token(h, err);
  if (trc) {
    free(h->db_path);
    free(h);
    return trc;
  }
  pthread_mutex_init(&h->live_mu, NULL);
  /* One internal polling thread: every request (and so the store connection) is handled on
   * that thread, one at a time. MHD_USE_AUTO picks epoll/poll, so a coordinator holding many
   * descriptors is not limited by select()'s FD_SETSIZE. */
  h->daemon = MHD_start_daemon(
      MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_USE_ERROR_LOG, (uint16_t)opts->port,
      NULL, NULL, on_request, h, MHD_OPTION_EXTERNAL_LOGGER, sw_http_mhd_log, (void *)"http",
      MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)30,
      MHD_OPTION_CONNECTION_LIMIT, (unsigned)64, MHD_OPTION_END);
  if (!h->daemon) {
    int rc = sw_err_set(err, SW_ENET, "http: cannot listen on %s:%d (%s)", bind, opts->port,
                        strerror(errno));
    pthread_mutex_destroy(&h->live_mu);
    free(h->db_path);
    free(h);
    return rc;
  }
  const union MHD_DaemonInfo *info = MHD_get_daemon_info(h->daemon, MHD_DAEMON_INFO_BIND_PORT);
  h->port = info ? info->port : opts->port;
  *out = h;
  return 0;
}

void sw_http_stop(sw_http_t **self_p) {
  if (!self_p || !*self_p) return;
  sw_http_t *h = *self_p;
  if (h->daemon) MHD_stop_daemon(h->daemon); /* joins the thread: the store is ours again */
  sw_store_close(&h->store);
  pthread_mutex_destroy(&h->live_mu);
  free(h->live);
  free(h->db_path);
  free(h);
  *self_p = NULL;
}

int sw_http_port(const sw_http_t *self) { return self ? self->port : 0; }
