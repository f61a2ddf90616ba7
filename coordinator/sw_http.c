/* sw_http.c: the read-only HTTP dashboard: a libmicrohttpd daemon on its own internal thread
 * with its own lazily opened read-only store connection, serving the sweep list, reports,
 * Pareto pages and JSON APIs (routes in sw_http.h). */
#include "sw_http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <jansson.h>
#include <microhttpd.h>

#include "sw_artifact.h"
#include "sw_audit.h"
#include "sw_fs.h"
#include "sw_log.h"
#include "sw_pareto.h"
#include "sw_report.h"
#include "sw_store.h"

struct sw_http {
  struct MHD_Daemon *daemon;
  char *db_path;
  sw_store_t *store; /* used only from the daemon's thread */
  int port;
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

/* ---- /api/status ---------------------------------------------------------------------------- */

static json_t *status_json(sw_store_t *s, struct sw_err *err) {
  static const char *const SQL_SWEEPS =
      "SELECT id, name, kind, status, priority, created_ms, finished_ms FROM sweeps ORDER BY id";
  static const char *const SQL_PAIRS =
      "SELECT status, COUNT(*) FROM pairs WHERE sweep_id = ?1 GROUP BY status";
  static const char *const SQL_GATES =
      "SELECT name, status, verdict FROM gates WHERE sweep_id = ?1 ORDER BY id";
  static const char *const SQL_WORKERS =
      "SELECT w.id, w.state, w.last_seen_ms, (SELECT l.id FROM leases l WHERE l.worker_id = w.id "
      "AND l.state = 'active' ORDER BY l.id DESC LIMIT 1), (SELECT COUNT(*) FROM pairs p WHERE "
      "p.worker_id = w.id AND p.status = 'done') FROM workers w ORDER BY w.id";
  static const char *const SQL_LEASES = "SELECT COUNT(*) FROM leases WHERE state = 'active'";
  json_t *root = json_object(), *sweeps = json_array(), *workers = json_array();
  json_object_set_new(root, "sweeps", sweeps);
  json_object_set_new(root, "workers", workers);
  sqlite3_stmt *st, *st2;
  int rc;
  if (sw_store_stmt(s, SQL_SWEEPS, &st, err)) goto fail;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    json_t *o = json_pack("{s:I,s:s,s:s,s:s,s:i,s:I}", "id",
                          (json_int_t)sqlite3_column_int64(st, 0), "name",
                          (const char *)sqlite3_column_text(st, 1), "kind",
                          (const char *)sqlite3_column_text(st, 2), "status",
                          (const char *)sqlite3_column_text(st, 3), "priority",
                          sqlite3_column_int(st, 4), "created_ms",
                          (json_int_t)sqlite3_column_int64(st, 5));
    json_object_set_new(o, "finished_ms", sqlite3_column_type(st, 6) == SQLITE_NULL
                                              ? json_null()
                                              : json_integer(sqlite3_column_int64(st, 6)));
    json_array_append_new(sweeps, o);
  }
  sqlite3_reset(st);
  if (rc != SQLITE_DONE) {
    sw_store_fail(s, err, "reading sweeps");
    goto fail;
  }
  size_t i;
  json_t *o;
  json_array_foreach(sweeps, i, o) {
    int64_t id = json_integer_value(json_object_get(o, "id"));
    json_t *pairs = json_pack("{s:i,s:i,s:i,s:i,s:i,s:i}", "pending", 0, "leased", 0, "done", 0,
                              "failed", 0, "abandoned", 0, "total", 0);
    json_object_set_new(o, "pairs", pairs);
    if (sw_store_stmt(s, SQL_PAIRS, &st2, err)) goto fail;
    sqlite3_bind_int64(st2, 1, id);
    int total = 0;
    while ((rc = sqlite3_step(st2)) == SQLITE_ROW) {
      total += sqlite3_column_int(st2, 1);
      json_object_set_new(pairs, (const char *)sqlite3_column_text(st2, 0),
                          json_integer(sqlite3_column_int(st2, 1)));
    }
    sqlite3_reset(st2);
    json_object_set_new(pairs, "total", json_integer(total));
    if (rc != SQLITE_DONE) {
      sw_store_fail(s, err, "counting pairs");
      goto fail;
    }
    json_t *gates = json_array();
    json_object_set_new(o, "gates", gates);
    if (sw_store_stmt(s, SQL_GATES, &st2, err)) goto fail;
    sqlite3_bind_int64(st2, 1, id);
    while ((rc = sqlite3_step(st2)) == SQLITE_ROW)
      json_array_append_new(
          gates, json_pack("{s:s,s:s,s:s?}", "name", (const char *)sqlite3_column_text(st2, 0),
                           "status", (const char *)sqlite3_column_text(st2, 1), "verdict",
                           (const char *)sqlite3_column_text(st2, 2)));
    sqlite3_reset(st2);
    if (rc != SQLITE_DONE) {
      sw_store_fail(s, err, "reading gates");
      goto fail;
    }
  }
  if (sw_store_stmt(s, SQL_WORKERS, &st, err)) goto fail;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    json_t *w = json_pack("{s:s,s:s,s:I,s:i}", "id", (const char *)sqlite3_column_text(st, 0),
                          "state", (const char *)sqlite3_column_text(st, 1), "last_seen_ms",
                          (json_int_t)sqlite3_column_int64(st, 2), "pairs_done",
                          sqlite3_column_int(st, 4));
    json_object_set_new(w, "lease", sqlite3_column_type(st, 3) == SQLITE_NULL
                                        ? json_null()
                                        : json_integer(sqlite3_column_int64(st, 3)));
    json_array_append_new(workers, w);
  }
  sqlite3_reset(st);
  if (rc != SQLITE_DONE) {
    sw_store_fail(s, err, "reading workers");
    goto fail;
  }
  if (sw_store_stmt(s, SQL_LEASES, &st, err)) goto fail;
  rc = sqlite3_step(st);
  json_object_set_new(root, "leases_active",
                      json_integer(rc == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0));
  sqlite3_reset(st);
  return root;
fail:
  json_decref(root);
  return NULL;
}

/* ---- / --------------------------------------------------------------------------------------- */

static char *index_html(const json_t *st) {
  char *buf = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&buf, &len);
  if (!out) return NULL;
  fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><meta http-equiv=\"refresh\" "
        "content=\"10\"><title>splatsweep</title>\n<style>body{font-family:sans-serif;margin:"
        "2em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 8px;text-"
        "align:left}</style></head><body>\n<h1>splatsweep</h1>\n<h2>Sweeps</h2>\n",
        out);
  const json_t *sweeps = json_object_get(st, "sweeps");
  if (json_array_size(sweeps) == 0) fputs("<p>No sweeps yet.</p>\n", out);
  else
    fputs("<table><tr><th>id</th><th>name</th><th>kind</th><th>status</th><th>pairs done / "
          "total</th><th>verdicts</th><th>pages</th></tr>\n",
          out);
  size_t i, j;
  const json_t *o, *g;
  json_array_foreach(sweeps, i, o) {
    long long id = (long long)json_integer_value(json_object_get(o, "id"));
    const json_t *pairs = json_object_get(o, "pairs");
    fprintf(out, "<tr><td>%lld</td><td>", id);
    sw_report_html_escape(out, json_string_value(json_object_get(o, "name")));
    fprintf(out, "</td><td>%s</td><td>%s</td><td>%lld / %lld</td><td>",
            json_string_value(json_object_get(o, "kind")),
            json_string_value(json_object_get(o, "status")),
            (long long)json_integer_value(json_object_get(pairs, "done")),
            (long long)json_integer_value(json_object_get(pairs, "total")));
    json_array_foreach(json_object_get(o, "gates"), j, g) {
      const char *v = json_string_value(json_object_get(g, "verdict"));
      sw_report_html_escape(out, json_string_value(json_object_get(g, "name")));
      fprintf(out, ": %s<br>", v ? v : "(running)");
    }
    fprintf(out, "</td><td><a href=\"/sweep/%lld\">report</a> <a href=\"/pareto/%lld\">pareto"
                 "</a> <a href=\"/api/report/%lld\">json</a> <a href=\"/api/audit/%lld\">audit"
                 "</a></td></tr>\n",
            id, id, id, id);
  }
  if (json_array_size(sweeps)) fputs("</table>\n", out);
  fprintf(out, "<h2>Workers</h2>\n<p>%lld active lease(s)</p>\n",
          (long long)json_integer_value(json_object_get(st, "leases_active")));
  const json_t *workers = json_object_get(st, "workers");
  if (json_array_size(workers)) {
    fputs("<table><tr><th>id</th><th>state</th><th>lease</th><th>pairs done</th></tr>\n", out);
    json_array_foreach(workers, i, o) {
      fputs("<tr><td>", out);
      sw_report_html_escape(out, json_string_value(json_object_get(o, "id")));
      const json_t *l = json_object_get(o, "lease");
      fprintf(out, "</td><td>%s</td><td>", json_string_value(json_object_get(o, "state")));
      if (json_is_integer(l)) fprintf(out, "%lld", (long long)json_integer_value(l));
      fprintf(out, "</td><td>%lld</td></tr>\n",
              (long long)json_integer_value(json_object_get(o, "pairs_done")));
    }
    fputs("</table>\n", out);
  }
  fputs("<p><a href=\"/api/status\">/api/status</a></p>\n</body></html>\n", out);
  if (fclose(out)) {
    free(buf);
    return NULL;
  }
  return buf;
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

static void route(struct sw_http *h, const char *url, struct reply *r) {
  struct sw_err err = {0};
  int64_t id = 0;
  char *text = NULL;
  int known = strcmp(url, "/") == 0 || strcmp(url, "/api/status") == 0 ||
              route_id(url, "/sweep/", &id) || route_id(url, "/pareto/", &id) ||
              route_id(url, "/api/report/", &id) || route_id(url, "/api/pareto/", &id) ||
              route_id(url, "/api/audit/", &id);
  if (!known) {
    reply_text(r, MHD_HTTP_NOT_FOUND, "no such page: %s\n", url);
    return;
  }
  if (store_ready(h, r)) return;
  if (strcmp(url, "/") == 0 || strcmp(url, "/api/status") == 0) {
    json_t *st = status_json(h->store, &err);
    if (!st) {
      reply_error(r, &err);
    } else if (url[1] == '\0') {
      r->body = index_html(st);
      r->status = r->body ? MHD_HTTP_OK : MHD_HTTP_INTERNAL_SERVER_ERROR;
      r->type = "text/html; charset=utf-8";
      json_decref(st);
    } else {
      reply_json(r, st);
    }
  } else if (route_id(url, "/sweep/", &id) || route_id(url, "/api/report/", &id)) {
    int html = url[1] == 's';
    if (sw_report_render_string(h->store, id, html ? SW_REPORT_HTML : SW_REPORT_JSON, &text,
                                &err)) {
      reply_error(r, &err);
    } else {
      r->body = text;
      r->status = MHD_HTTP_OK;
      r->type = html ? "text/html; charset=utf-8" : "application/json";
    }
  } else if (route_id(url, "/pareto/", &id) || route_id(url, "/api/pareto/", &id)) {
    int html = url[1] == 'p';
    struct sw_pareto_opts po = {.sweep_id = id};
    if (sw_pareto_render_string(h->store, &po, html ? SW_PARETO_HTML : SW_PARETO_JSON, &text,
                                &err)) {
      reply_error(r, &err);
    } else {
      r->body = text;
      r->status = MHD_HTTP_OK;
      r->type = html ? "text/html; charset=utf-8" : "application/json";
    }
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

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version,
                                  const char *upload_data, size_t *upload_data_size,
                                  void **con_cls) {
  (void)version;
  (void)upload_data;
  (void)con_cls;
  struct sw_http *h = cls;
  struct reply r = {MHD_HTTP_OK, "text/plain", NULL};
  if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0) {
    /* Read-only: a request body is never read, so refuse before any is accepted. */
    *upload_data_size = 0;
    reply_text(&r, MHD_HTTP_METHOD_NOT_ALLOWED, "read-only dashboard: GET or HEAD only\n");
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
  enum MHD_Result ret = MHD_queue_response(conn, r.status, resp);
  MHD_destroy_response(resp);
  return ret;
}

static void on_mhd_error(void *cls, const char *fmt, va_list ap) {
  (void)cls;
  char line[400];
  vsnprintf(line, sizeof line, fmt, ap);
  size_t n = strlen(line);
  while (n && (line[n - 1] == '\n' || line[n - 1] == '\r')) line[--n] = '\0';
  sw_log_warn("http: %s", line);
}

int sw_http_start(const struct sw_http_opts *opts, sw_http_t **out, struct sw_err *err) {
  *out = NULL;
  if (!opts || !opts->db_path)
    return sw_err_set(err, SW_EINVAL, "http: no database path");
  if (opts->port < 0 || opts->port > 65535)
    return sw_err_set(err, SW_EINVAL, "http: port %d outside 0-65535", opts->port);
  struct sockaddr_in addr;
  memset(&addr, 0, sizeof addr);
  addr.sin_family = AF_INET;
  addr.sin_port = htons((uint16_t)opts->port);
  const char *bind = opts->bind ? opts->bind : "127.0.0.1";
  if (inet_pton(AF_INET, bind, &addr.sin_addr) != 1)
    return sw_err_set(err, SW_EINVAL, "http: '%s' is not an IPv4 address", bind);
  struct sw_http *h = calloc(1, sizeof *h);
  if (!h || !(h->db_path = strdup(opts->db_path))) {
    free(h);
    return sw_err_set(err, SW_ENOMEM, "http: out of memory");
  }
  /* One internal polling thread: every request (and so the store connection) is handled on
   * that thread, one at a time. MHD_USE_AUTO picks epoll/poll, so a coordinator holding many
   * descriptors is not limited by select()'s FD_SETSIZE. */
  h->daemon = MHD_start_daemon(
      MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_USE_ERROR_LOG, (uint16_t)opts->port,
      NULL, NULL, on_request, h, MHD_OPTION_EXTERNAL_LOGGER, on_mhd_error, NULL, MHD_OPTION_SOCK_ADDR,
      (struct sockaddr *)&addr, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)30,
      MHD_OPTION_CONNECTION_LIMIT, (unsigned)64, MHD_OPTION_END);
  if (!h->daemon) {
    int rc = sw_err_set(err, SW_ENET, "http: cannot listen on %s:%d (%s)", bind, opts->port,
                        strerror(errno));
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
  free(h->db_path);
  free(h);
  *self_p = NULL;
}

int sw_http_port(const sw_http_t *self) { return self ? self->port : 0; }

int sw_http_from_args(int *argc, char **argv, const char *default_db, sw_http_t **out,
                      struct sw_err *err) {
  *out = NULL;
  const char *port_arg = NULL, *bind = NULL, *db = default_db;
  int w = 0;
  for (int i = 0; i < *argc; i++) {
    const char *a = argv[i];
    const char **slot = !strcmp(a, "--http") ? &port_arg : !strcmp(a, "--http-bind") ? &bind : NULL;
    if (slot) {
      if (i + 1 >= *argc) return sw_err_set(err, SW_EINVAL, "%s needs a value", a);
      *slot = argv[++i];
      continue;
    }
    if (!strncmp(a, "--http=", 7) || !strncmp(a, "--http-bind=", 12)) {
      *(a[6] == '=' ? &port_arg : &bind) = strchr(a, '=') + 1;
      continue;
    }
    if (!strcmp(a, "--db") && i + 1 < *argc) db = argv[i + 1];
    if (!strncmp(a, "--db=", 5)) db = a + 5;
    argv[w++] = argv[i];
  }
  for (int i = w; i < *argc; i++) argv[i] = NULL;
  *argc = w;
  if (!port_arg) {
    if (bind) return sw_err_set(err, SW_EINVAL, "--http-bind %s needs --http PORT", bind);
    return 0;
  }
  char *end;
  errno = 0;
  long port = strtol(port_arg, &end, 10);
  if (errno || end == port_arg || *end || port < 0 || port > 65535)
    return sw_err_set(err, SW_EINVAL, "--http %s: expected a port number (default %d)", port_arg,
                      SW_HTTP_DEFAULT_PORT);
  struct sw_http_opts o = {.db_path = db, .bind = bind, .port = (int)port};
  int rc = sw_http_start(&o, out, err);
  if (!rc) sw_log_info("dashboard on http://%s:%d/", bind ? bind : "127.0.0.1", sw_http_port(*out));
  return rc;
}
