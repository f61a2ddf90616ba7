/* test_http.c: Check suite for the HTTP dashboard (read/sw_http.h). A store with a
 * finished grid sweep is served on an ephemeral loopback port and fetched with libcurl: every
 * route's status code, content type and content, 404 for unknown paths and sweeps, 405 for
 * writes, 503 while the database does not exist, a sweep written by another connection after
 * the server started shows up (WAL readers), the dashboard JSON with and without the
 * coordinator's snapshot, /api/status as the coordinator's own status document (the one status
 * builder), the token off loopback, and the dashboard the CLI's --http starts. */
#include <check.h>
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

#include "sw_coord.h"
#include "sw_fs.h"
#include "sw_http.h"
#include "fixture_result.h"
#include "sw_sched.h"
#include "sw_cmd.h"
#include "sw_store.h"

static char g_dir[64];
static char g_db[128];

static const struct sw_window_sample QUIET[2] = {
    {.t_ms = 0, .load1 = 0.4, .cpu_other = 0.05, .cpu_total = 1.0, .mem_avail = 1e9},
    {.t_ms = 1000, .load1 = 0.5, .cpu_other = 0.10, .cpu_total = 1.0, .mem_avail = 1e9}};

/* Submits a 2-run grid named `name` and runs it to the end with worker w1. */
static void run_grid(sw_store_t *store, const char *name) {
  struct sw_err err = {0};
  sw_sched_t *s = NULL;
  ck_assert_int_eq(sw_sched_new(store, NULL, 0, &s, &err), 0);
  /* name is the display name, which may carry HTML's special characters (a spec's own name
   * cannot). */
  const char *spec = "{\"name\":\"grid\",\"kind\":\"grid\",\"trainer\":{\"builtin\":{}},"
                     "\"scene\":{\"path\":\"/x\"},\"base\":{},\"parameters\":{\"iterations\":"
                     "[100,200]},\"repeats\":1}";
  int64_t id = 0;
  ck_assert_msg(sw_sched_submit(s, spec, "test", name, 0, &id, &err) == 0, "%s", err.msg);
  ck_assert_int_eq(sw_sched_worker_hello(s, "w1", NULL, NULL, 0, &err), 0);
  int64_t now = 10;
  for (int k = 0; sw_sched_sweep_finished(s, id, &err) == 0; k++) {
    ck_assert_int_lt(k, 10);
    struct sw_lease l;
    ck_assert_int_eq(sw_sched_next(s, "w1", now, &l, &err), 1);
    char res[400];
    int iters = strstr(l.runs[0].config_json, "200") ? 200 : 100;
    snprintf(res, sizeof res,
             "{\"status\":\"ok\",\"trainer\":{\"name\":\"splat-train\",\"binary_sha256\":\"b1\"},"
             "\"metrics\":{\"train_s\":%d.5,\"psnr_db\":%.2f,\"iterations\":%d}}",
             iters / 10, 25.0 + iters / 100.0, iters);
    char *full = fixture_result(res); /* the rest of the contract */
    ck_assert_ptr_nonnull(full);
    struct sw_run_result rr = {.lease_id = l.lease_id,
                               .epoch = l.epoch,
                               .worker_id = "w1",
                               .run_id = l.runs[0].run_id,
                               .attempt = l.attempt,
                               .result_json = full,
                               .pre = QUIET,
                               .n_pre = 1,
                               .during = QUIET,
                               .n_during = 2};
    ck_assert_msg(sw_sched_result(s, &rr, now, &err) == 0, "%s", err.msg);
    free(full);
    sw_lease_clear(&l);
    now += 10;
  }
  sw_sched_destroy(&s);
}

static sw_store_t *open_rw(void) {
  struct sw_store_opts so;
  sw_store_opts_default(&so);
  so.synchronous_full = 0;
  sw_store_t *store = NULL;
  struct sw_err err = {0};
  ck_assert_msg(sw_store_open(g_db, &so, &store, &err) == 0, "%s", err.msg);
  return store;
}

static void setup(void) {
  snprintf(g_dir, sizeof g_dir, "/tmp/sw_test_httpXXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(g_dir));
  snprintf(g_db, sizeof g_db, "%s/h.db", g_dir);
  sw_store_t *store = open_rw();
  run_grid(store, "pareto<x>");
  sw_store_close(&store);
}

static void teardown(void) { sw_fs_rm_rf(g_dir, NULL); }

struct fetched {
  long status;
  char *body;
  size_t len;
  char type[128];
  char cookie[200]; /* the Set-Cookie header, if any */
};

static size_t on_body(char *p, size_t size, size_t n, void *user) {
  struct fetched *f = user;
  char *nb = realloc(f->body, f->len + size * n + 1);
  if (!nb) return 0;
  memcpy(nb + f->len, p, size * n);
  f->len += size * n;
  nb[f->len] = '\0';
  f->body = nb;
  return size * n;
}

static size_t on_header(char *p, size_t size, size_t n, void *user) {
  struct fetched *f = user;
  if (n * size > 11 && strncasecmp(p, "Set-Cookie:", 11) == 0)
    snprintf(f->cookie, sizeof f->cookie, "%.*s", (int)(n * size), p);
  return size * n;
}

/* GET with one extra request header (NULL: none). */
static struct fetched fetch_h(int port, const char *path, const char *header);

/* GET (or another method) of http://127.0.0.1:port/path. */
static struct fetched fetch(int port, const char *path, const char *method) {
  if (!method) return fetch_h(port, path, NULL);
  struct fetched f = {0, NULL, 0, "", ""};
  char url[256];
  snprintf(url, sizeof url, "http://127.0.0.1:%d%s", port, path);
  CURL *c = curl_easy_init();
  ck_assert_ptr_nonnull(c);
  curl_easy_setopt(c, CURLOPT_URL, url);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &f);
  curl_easy_setopt(c, CURLOPT_TIMEOUT, 20L);
  if (method && strcmp(method, "HEAD") == 0) {
    curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
  } else if (method) {
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    if (strcmp(method, "POST") == 0) curl_easy_setopt(c, CURLOPT_POSTFIELDS, "x=1");
  }
  CURLcode rc = curl_easy_perform(c);
  ck_assert_msg(rc == CURLE_OK, "%s: %s", url, curl_easy_strerror(rc));
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &f.status);
  char *ct = NULL;
  curl_easy_getinfo(c, CURLINFO_CONTENT_TYPE, &ct);
  snprintf(f.type, sizeof f.type, "%s", ct ? ct : "");
  curl_easy_cleanup(c);
  if (!f.body) f.body = calloc(1, 1);
  return f;
}

static struct fetched fetch_h(int port, const char *path, const char *header) {
  struct fetched f = {0, NULL, 0, "", ""};
  char url[256];
  snprintf(url, sizeof url, "http://127.0.0.1:%d%s", port, path);
  CURL *c = curl_easy_init();
  ck_assert_ptr_nonnull(c);
  struct curl_slist *hs = header ? curl_slist_append(NULL, header) : NULL;
  curl_easy_setopt(c, CURLOPT_URL, url);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &f);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &f);
  curl_easy_setopt(c, CURLOPT_TIMEOUT, 20L);
  if (hs) curl_easy_setopt(c, CURLOPT_HTTPHEADER, hs);
  CURLcode rc = curl_easy_perform(c);
  ck_assert_msg(rc == CURLE_OK, "%s: %s", url, curl_easy_strerror(rc));
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &f.status);
  char *ct = NULL;
  curl_easy_getinfo(c, CURLINFO_CONTENT_TYPE, &ct);
  snprintf(f.type, sizeof f.type, "%s", ct ? ct : "");
  curl_easy_cleanup(c);
  curl_slist_free_all(hs);
  if (!f.body) f.body = calloc(1, 1);
  return f;
}

static sw_http_t *start(const char *db) {
  struct sw_http_opts o = {.db_path = db, .port = 0};
  sw_http_t *h = NULL;
  struct sw_err err = {0};
  ck_assert_msg(sw_http_start(&o, &h, &err) == 0, "%s", err.msg);
  ck_assert_int_gt(sw_http_port(h), 0);
  return h;
}

START_TEST(routes_serve_the_store) {
  sw_http_t *h = start(g_db);
  int port = sw_http_port(h);
  struct fetched f = fetch(port, "/", NULL);
  ck_assert_int_eq(f.status, 200);
  ck_assert_ptr_nonnull(strstr(f.type, "text/html"));
  /* The live page: it draws from /api/dashboard, with the embedded Chart.js. */
  ck_assert_ptr_nonnull(strstr(f.body, "id=\"dash-sweeps\""));
  ck_assert_ptr_nonnull(strstr(f.body, "api/dashboard"));
  ck_assert_ptr_nonnull(strstr(f.body, "Chart.js v3.9.1"));
  free(f.body);

  /* The dashboard JSON from the store alone (no coordinator snapshot published). */
  f = fetch(port, "/api/dashboard", NULL);
  ck_assert_int_eq(f.status, 200);
  json_t *d = json_loads(f.body, 0, NULL);
  ck_assert_ptr_nonnull(d);
  ck_assert(json_is_null(json_object_get(d, "live")));
  json_t *ds = json_array_get(json_object_get(d, "sweeps"), 0);
  ck_assert_str_eq(json_string_value(json_object_get(ds, "name")), "pareto<x>");
  json_t *runs = json_object_get(ds, "runs");
  ck_assert_int_eq(json_integer_value(json_object_get(runs, "total")), 2);
  ck_assert_int_eq(json_integer_value(json_object_get(runs, "done")), 2);
  ck_assert_int_eq(json_integer_value(json_object_get(runs, "left")), 0);
  ck_assert(json_real_value(json_object_get(ds, "progress")) == 1.0);
  ck_assert(json_is_null(json_object_get(ds, "eta_s"))); /* done: no time left to show */
  json_t *dw = json_array_get(json_object_get(d, "workers"), 0);
  ck_assert_str_eq(json_string_value(json_object_get(dw, "id")), "w1");
  ck_assert(json_is_null(json_object_get(dw, "run")));
  json_t *lw = json_object_get(dw, "last_window");
  ck_assert_str_eq(json_string_value(json_object_get(lw, "status")), "ok");
  ck_assert(json_real_value(json_object_get(lw, "cpu_other_max")) == 0.10);
  json_decref(d);
  free(f.body);
  /* No coordinator has published its status: the read side has no status view of its own. */
  f = fetch(port, "/api/status", NULL);
  ck_assert_int_eq(f.status, 503);
  ck_assert_ptr_nonnull(strstr(f.body, "no coordinator status yet"));
  free(f.body);

  /* The coordinator's snapshot: w1 busy in run 1 (100 iterations) at iteration 25. */
  static const char *const SNAPSHOT =
      "{\"workers\":[{\"id\":\"w1\",\"state\":\"busy\",\"lease\":7}],"
      "\"coordinator\":{\"sessions\":[{\"id\":\"w1\",\"lease\":7,\"run\":1,"
      "\"iter\":25,\"train_s\":1.5,\"silent_ms\":3,\"runs_finished\":2}]}}";
  sw_http_publish(h, SNAPSHOT);
  f = fetch(port, "/api/dashboard", NULL);
  d = json_loads(f.body, 0, NULL);
  ck_assert(json_is_object(json_object_get(d, "live")));
  dw = json_array_get(json_object_get(d, "workers"), 0);
  ck_assert_str_eq(json_string_value(json_object_get(dw, "state")), "busy");
  ck_assert_int_eq(json_integer_value(json_object_get(dw, "run")), 1);
  ck_assert_int_eq(json_integer_value(json_object_get(dw, "sweep")), 1);
  ck_assert_int_eq(json_integer_value(json_object_get(dw, "iter")), 25);
  ck_assert_int_eq(json_integer_value(json_object_get(dw, "iterations")), 100);
  ck_assert(json_real_value(json_object_get(dw, "progress")) == 0.25);
  ds = json_array_get(json_object_get(d, "sweeps"), 0);
  ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(ds, "runs"), "running")), 1);
  json_decref(d);
  free(f.body);
  sw_http_publish(NULL, "{}"); /* NULL-safe */

  /* /api/status is the published document itself, byte for byte. */
  f = fetch(port, "/api/status", NULL);
  ck_assert_int_eq(f.status, 200);
  ck_assert_str_eq(f.type, "application/json");
  ck_assert_str_eq(f.body, SNAPSHOT);
  free(f.body);
  json_t *j;

  f = fetch(port, "/api/report/1", NULL);
  ck_assert_int_eq(f.status, 200);
  j = json_loads(f.body, 0, NULL);
  ck_assert_int_eq(
      json_array_size(json_object_get(json_array_get(json_object_get(j, "sweeps"), 0), "points")),
      2);
  json_decref(j);
  free(f.body);

  f = fetch(port, "/sweep/1", NULL);
  ck_assert_int_eq(f.status, 200);
  ck_assert_ptr_nonnull(strstr(f.type, "text/html"));
  ck_assert_ptr_nonnull(strstr(f.body, "<!DOCTYPE html>"));
  free(f.body);

  f = fetch(port, "/api/pareto/1", NULL);
  ck_assert_int_eq(f.status, 200);
  j = json_loads(f.body, 0, NULL);
  json_t *pts = json_object_get(json_array_get(json_object_get(j, "configurations"), 0), "points");
  ck_assert_int_eq(json_array_size(pts), 2);
  ck_assert_int_eq(json_array_size(json_object_get(j, "front")), 2);
  json_decref(j);
  free(f.body);

  f = fetch(port, "/pareto/1", NULL);
  ck_assert_int_eq(f.status, 200);
  ck_assert_ptr_nonnull(strstr(f.body, "pareto-charts"));
  free(f.body);

  f = fetch(port, "/api/audit/1", NULL);
  ck_assert_int_eq(f.status, 200);
  j = json_loads(f.body, 0, NULL);
  ck_assert(json_is_boolean(json_object_get(j, "pass")));
  json_decref(j);
  free(f.body);

  f = fetch(port, "/sweep/1", "HEAD");
  ck_assert_int_eq(f.status, 200);
  free(f.body);
  sw_http_stop(&h);
  ck_assert_ptr_null(h);
  sw_http_stop(&h); /* NULL-safe */
}
END_TEST

START_TEST(errors_and_unknown_paths) {
  sw_http_t *h = start(g_db);
  int port = sw_http_port(h);
  static const char *const MISSING[] = {"/nope",         "/sweep/", "/sweep/abc", "/sweep/1/x",
                                        "/api/report/0", "/api",    "/sweep/-1"};
  for (size_t i = 0; i < sizeof MISSING / sizeof MISSING[0]; i++) {
    struct fetched f = fetch(port, MISSING[i], NULL);
    ck_assert_msg(f.status == 404, "%s gave %ld", MISSING[i], f.status);
    free(f.body);
  }
  struct fetched f = fetch(port, "/sweep/99", NULL);
  ck_assert_int_eq(f.status, 404);
  ck_assert_ptr_nonnull(strstr(f.body, "no sweep 99"));
  free(f.body);
  f = fetch(port, "/api/pareto/42", NULL);
  ck_assert_int_eq(f.status, 404);
  free(f.body);
  f = fetch(port, "/api/status", "POST");
  ck_assert_int_eq(f.status, 405);
  free(f.body);
  f = fetch(port, "/", "DELETE");
  ck_assert_int_eq(f.status, 405);
  free(f.body);
  sw_http_stop(&h);

  /* Before the coordinator has created its database: 503, and the page appears once it does. */
  char later[160];
  snprintf(later, sizeof later, "%s/later.db", g_dir);
  h = start(later);
  f = fetch(sw_http_port(h), "/api/dashboard", NULL);
  ck_assert_int_eq(f.status, 503);
  free(f.body);
  struct sw_store_opts so;
  sw_store_opts_default(&so);
  sw_store_t *st = NULL;
  struct sw_err err = {0};
  ck_assert_int_eq(sw_store_open(later, &so, &st, &err), 0);
  f = fetch(sw_http_port(h), "/api/dashboard", NULL);
  ck_assert_int_eq(f.status, 200);
  free(f.body);
  sw_store_close(&st);
  sw_http_stop(&h);

  /* The listening address, one rule for the dashboard and the artifact store: IPv4, 0-65535. */
  struct sw_http_opts bad = {.db_path = g_db, .bind = "localhost", .port = 0};
  err = (struct sw_err){0};
  ck_assert_int_eq(sw_http_start(&bad, &h, &err), SW_EINVAL);
  ck_assert_str_eq(err.msg, "http: 'localhost' is not an IPv4 address");
  bad.bind = NULL;
  bad.port = 70000;
  err = (struct sw_err){0};
  ck_assert_int_eq(sw_http_start(&bad, &h, &err), SW_EINVAL);
  ck_assert_str_eq(err.msg, "http: port 70000 outside 0-65535");
  struct sw_artifact_opts abad = {.db_path = g_db, .bind = "localhost", .port = 0};
  sw_artifact_t *art = NULL;
  err = (struct sw_err){0};
  ck_assert_int_eq(sw_artifact_start(&abad, &art, &err), SW_EINVAL);
  ck_assert_str_eq(err.msg, "artifacts: 'localhost' is not an IPv4 address");
  abad.bind = NULL;
  abad.port = -1;
  err = (struct sw_err){0};
  ck_assert_int_eq(sw_artifact_start(&abad, &art, &err), SW_EINVAL);
  ck_assert_str_eq(err.msg, "artifacts: port -1 outside 0-65535");
  ck_assert_ptr_null(art);
}
END_TEST

/* Off loopback every request needs the token kept beside the database; on loopback none does.
 * The token survives a restart (the same file), and a token given in the address is kept as
 * a cookie the page's own requests carry. */
START_TEST(token_required_off_loopback) {
  struct sw_http_opts o = {.db_path = g_db, .bind = "0.0.0.0", .port = 0};
  sw_http_t *h = NULL;
  struct sw_err err = {0};
  ck_assert_msg(sw_http_start(&o, &h, &err) == 0, "%s", err.msg);
  ck_assert_int_eq(sw_http_token_required(h), 1);
  char token[SW_HTTP_TOKEN_LEN + 1];
  snprintf(token, sizeof token, "%s", sw_http_token(h));
  ck_assert_int_eq((int)strlen(token), SW_HTTP_TOKEN_LEN);
  int port = sw_http_port(h);
  static const char *const PATHS[] = {"/", "/api/dashboard", "/api/report/1", "/sweep/1"};
  for (size_t i = 0; i < sizeof PATHS / sizeof *PATHS; i++) {
    struct fetched f = fetch(port, PATHS[i], NULL);
    ck_assert_msg(f.status == 401, "%s without the token gave %ld", PATHS[i], f.status);
    ck_assert_ptr_null(strstr(f.body, "pareto<x>")); /* nothing of the store */
    free(f.body);
  }
  struct fetched f = fetch(port, "/api/dashboard?token=0123", NULL);
  ck_assert_int_eq(f.status, 401);
  free(f.body);
  char path[200], header[200];
  snprintf(path, sizeof path, "/api/dashboard?token=%s", token);
  f = fetch(port, path, NULL);
  ck_assert_int_eq(f.status, 200);
  ck_assert_ptr_nonnull(strstr(f.body, "pareto<x>"));
  ck_assert_ptr_nonnull(strstr(f.cookie, "sw_token="));
  free(f.body);
  snprintf(header, sizeof header, "Authorization: Bearer %s", token);
  f = fetch_h(port, "/api/report/1", header);
  ck_assert_int_eq(f.status, 200);
  free(f.body);
  snprintf(header, sizeof header, "Cookie: sw_token=%s", token);
  f = fetch_h(port, "/sweep/1", header);
  ck_assert_int_eq(f.status, 200);
  free(f.body);
  f = fetch_h(port, "/sweep/1", "Authorization: Bearer nope");
  ck_assert_int_eq(f.status, 401);
  free(f.body);
  sw_http_stop(&h);
  /* The file beside the database holds it, readable by its owner only; a restart keeps it. */
  char file[200];
  snprintf(file, sizeof file, "%s.http-token", g_db);
  struct stat sb;
  ck_assert_int_eq(stat(file, &sb), 0);
  ck_assert_int_eq(sb.st_mode & 0077, 0);
  h = start(g_db); /* loopback */
  ck_assert_int_eq(sw_http_token_required(h), 0);
  ck_assert_str_eq(sw_http_token(h), token);
  f = fetch(sw_http_port(h), "/api/dashboard", NULL);
  ck_assert_int_eq(f.status, 200);
  free(f.body);
  sw_http_stop(&h);
  /* A damaged token file is refused with its name and position. */
  FILE *bad = fopen(file, "w");
  ck_assert_ptr_nonnull(bad);
  fputs("not a token\n", bad);
  fclose(bad);
  ck_assert_int_eq(sw_http_start(&o, &h, &err), SW_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, ".http-token:1:1"));
}
END_TEST

START_TEST(reads_while_the_coordinator_writes) {
  /* The coordinator keeps its read-write connection open and writes a new sweep after the
   * dashboard started reading: the dashboard's own connection sees it. */
  sw_store_t *writer = open_rw();
  sw_http_t *h = start(g_db);
  struct fetched f = fetch(sw_http_port(h), "/api/dashboard", NULL);
  ck_assert_int_eq(f.status, 200);
  json_t *j = json_loads(f.body, 0, NULL);
  ck_assert_int_eq(json_array_size(json_object_get(j, "sweeps")), 1);
  json_decref(j);
  free(f.body);
  run_grid(writer, "second");
  f = fetch(sw_http_port(h), "/api/dashboard", NULL);
  j = json_loads(f.body, 0, NULL);
  ck_assert_int_eq(json_array_size(json_object_get(j, "sweeps")), 2);
  json_decref(j);
  free(f.body);
  f = fetch(sw_http_port(h), "/sweep/2", NULL);
  ck_assert_int_eq(f.status, 200);
  free(f.body);
  sw_http_stop(&h);
  sw_store_close(&writer);
}
END_TEST

/* A coordinator on the fixture's store publishes to the dashboard as `coordinator --http` wires
 * it (sw_coord_opts.on_status = sw_http_publish): /api/status is the document the one status
 * builder makes for that store (sw_coord_status_json, the scheduler's sw_sched_status_json
 * inside it), the same that `splatsweep status --format json` prints. Only the moment differs:
 * the snapshot's t_ms and the coordinator's resident memory at that moment. */
START_TEST(status_is_the_coordinators_document) {
  sw_http_t *h = start(g_db);
  void *zctx = zmq_ctx_new();
  ck_assert_ptr_nonnull(zctx);
  struct sw_coord_opts co = {.bind_work = "tcp://127.0.0.1:*",
                             .bind_control = "tcp://127.0.0.1:*",
                             .db_path = g_db,
                             .insecure = 1,
                             .on_status = sw_http_publish,
                             .on_status_arg = h};
  sw_coord_t *c = NULL;
  struct sw_err err = {0};
  ck_assert_msg(sw_coord_new(zctx, &co, &c, &err) == 0, "%s", err.msg);
  struct fetched f = fetch(sw_http_port(h), "/api/status", NULL);
  ck_assert_int_eq(f.status, 200);
  ck_assert_str_eq(f.type, "application/json");
  json_t *got = json_loads(f.body, 0, NULL);
  ck_assert_ptr_nonnull(got);
  free(f.body);
  json_t *want = sw_coord_status_json(c, 0, 0, SW_SCHED_STATUS_WORKERS_MAX, &err);
  ck_assert_msg(want != NULL, "%s", err.msg);
  ck_assert(json_is_integer(json_object_get(got, "t_ms")));
  json_object_del(got, "t_ms");
  json_t *gc = json_object_get(got, "coordinator"), *wc = json_object_get(want, "coordinator");
  ck_assert(json_is_integer(json_object_get(gc, "rss_kb")));
  ck_assert(json_is_integer(json_object_get(gc, "heap_kb")));
  json_object_del(gc, "rss_kb");
  json_object_del(wc, "rss_kb");
  json_object_del(gc, "heap_kb");
  json_object_del(wc, "heap_kb");
  char *g = json_dumps(got, JSON_SORT_KEYS), *w = json_dumps(want, JSON_SORT_KEYS);
  ck_assert_msg(json_equal(got, want), "/api/status %s\nbuilder     %s", g, w);
  /* The fixture's finished sweep, as the scheduler counts it. */
  json_t *sw = json_array_get(json_object_get(got, "sweeps"), 0);
  ck_assert_str_eq(json_string_value(json_object_get(sw, "status")), "done");
  ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(sw, "pairs"), "done")), 2);
  ck_assert(json_is_object(json_object_get(got, "workers_page")));
  free(g);
  free(w);
  json_decref(got);
  json_decref(want);
  sw_coord_destroy(&c);
  zmq_ctx_term(zctx);
  sw_http_stop(&h);
}
END_TEST

/* The dashboard `coordinator --http` starts: the command line's options arrive as the parsed
 * option struct (sw_cmd.h), and the dashboard serves the --db database, or the default one. */
START_TEST(serve_options_start_the_dashboard) {
  struct sw_cmd_args a = {.db = g_db, .http_port = 0, .artifacts_port = -1};
  sw_artifact_t *art = NULL;
  struct sw_err err = {0};
  ck_assert_msg(sw_cmd_serve_start(&a, SW_STORE_DEFAULT_PATH, &art, &err) == 0, "%s", err.msg);
  ck_assert_ptr_nonnull(a.http);
  ck_assert_ptr_null(art); /* no --artifacts */
  struct fetched f = fetch(sw_http_port(a.http), "/api/report/1", NULL);
  ck_assert_int_eq(f.status, 200); /* it serves the --db database */
  free(f.body);
  sw_cmd_serve_stop(&a, &art);
  ck_assert_ptr_null(a.http);

  /* Neither option: nothing runs. */
  struct sw_cmd_args none = {.http_port = -1, .artifacts_port = -1};
  ck_assert_int_eq(sw_cmd_serve_asked(&none), 0);
  ck_assert_int_eq(sw_cmd_serve_start(&none, "x.db", &art, &err), 0);
  ck_assert_ptr_null(none.http);
  /* A bind address without its port is a usage error, and leaves nothing running. */
  struct sw_cmd_args bind_only = {.http_port = -1, .artifacts_port = -1, .http_bind = "127.0.0.1"};
  ck_assert_int_eq(sw_cmd_serve_asked(&bind_only), 1);
  ck_assert_int_eq(sw_cmd_serve_start(&bind_only, "x.db", &art, &err), SW_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "--http-bind 127.0.0.1 needs --http PORT"));
  ck_assert_ptr_null(bind_only.http);
  /* The dashboard started, then the artifact store refused: the dashboard is stopped again. */
  err = (struct sw_err){0}; /* the first error wins: a new one for a new call */
  struct sw_cmd_args url_only = {
      .db = g_db, .http_port = 0, .artifacts_port = -1, .artifacts_url = "http://x:1"};
  ck_assert_int_eq(sw_cmd_serve_start(&url_only, "x.db", &art, &err), SW_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "--artifacts-url needs --artifacts PORT"));
  ck_assert_ptr_null(url_only.http);
  ck_assert_ptr_null(art);
}
END_TEST

int main(void) {
  curl_global_init(CURL_GLOBAL_DEFAULT);
  Suite *s = suite_create("http");
  TCase *tc = tcase_create("server");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, routes_serve_the_store);
  tcase_add_test(tc, errors_and_unknown_paths);
  tcase_add_test(tc, token_required_off_loopback);
  tcase_add_test(tc, reads_while_the_coordinator_writes);
  tcase_add_test(tc, status_is_the_coordinators_document);
  tcase_add_test(tc, serve_options_start_the_dashboard);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  curl_global_cleanup();
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
