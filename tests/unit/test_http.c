/* test_http.c: Check suite for the HTTP dashboard (coordinator/sw_http.h). A store with a
 * finished grid sweep is served on an ephemeral loopback port and fetched with libcurl: every
 * route's status code, content type and content, 404 for unknown paths and sweeps, 405 for
 * writes, 503 while the database does not exist, a sweep written by another connection after
 * the server started shows up (WAL readers), and the --http argument handling of the CLI. */
#include <check.h>
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sw_fs.h"
#include "sw_http.h"
#include "fixture_result.h"
#include "sw_sched.h"
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
  char spec[400];
  snprintf(spec, sizeof spec,
           "{\"name\":\"%s\",\"kind\":\"grid\",\"trainer\":{\"builtin\":{}},\"base\":{},"
           "\"parameters\":{\"iterations\":[100,200]},\"repeats\":1}",
           name);
  int64_t id = 0;
  ck_assert_int_eq(sw_sched_submit_text(s, spec, "x: 1\n", NULL, 0, &id, &err), 0);
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

/* GET (or another method) of http://127.0.0.1:port/path. */
static struct fetched fetch(int port, const char *path, const char *method) {
  struct fetched f = {0, NULL, 0, ""};
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
  ck_assert_ptr_nonnull(strstr(f.body, "pareto&lt;x&gt;")); /* names are escaped */
  ck_assert_ptr_nonnull(strstr(f.body, "<td>done</td><td>2 / 2</td>"));
  ck_assert_ptr_nonnull(strstr(f.body, "href=\"/sweep/1\""));
  free(f.body);

  f = fetch(port, "/api/status", NULL);
  ck_assert_int_eq(f.status, 200);
  ck_assert_str_eq(f.type, "application/json");
  json_t *j = json_loads(f.body, 0, NULL);
  ck_assert_ptr_nonnull(j);
  json_t *sw = json_array_get(json_object_get(j, "sweeps"), 0);
  ck_assert_str_eq(json_string_value(json_object_get(sw, "status")), "done");
  ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(sw, "pairs"), "done")), 2);
  ck_assert_str_eq(
      json_string_value(json_object_get(json_array_get(json_object_get(j, "workers"), 0), "id")),
      "w1");
  json_decref(j);
  free(f.body);

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
  f = fetch(sw_http_port(h), "/api/status", NULL);
  ck_assert_int_eq(f.status, 503);
  free(f.body);
  struct sw_store_opts so;
  sw_store_opts_default(&so);
  sw_store_t *st = NULL;
  struct sw_err err = {0};
  ck_assert_int_eq(sw_store_open(later, &so, &st, &err), 0);
  f = fetch(sw_http_port(h), "/api/status", NULL);
  ck_assert_int_eq(f.status, 200);
  free(f.body);
  sw_store_close(&st);
  sw_http_stop(&h);

  struct sw_http_opts bad = {.db_path = g_db, .bind = "localhost", .port = 0};
  ck_assert_int_eq(sw_http_start(&bad, &h, &err), SW_EINVAL);
  bad.bind = NULL;
  bad.port = 70000;
  ck_assert_int_eq(sw_http_start(&bad, &h, &err), SW_EINVAL);
}
END_TEST

START_TEST(reads_while_the_coordinator_writes) {
  /* The coordinator keeps its read-write connection open and writes a new sweep after the
   * dashboard started reading: the dashboard's own connection sees it. */
  sw_store_t *writer = open_rw();
  sw_http_t *h = start(g_db);
  struct fetched f = fetch(sw_http_port(h), "/api/status", NULL);
  ck_assert_int_eq(f.status, 200);
  json_t *j = json_loads(f.body, 0, NULL);
  ck_assert_int_eq(json_array_size(json_object_get(j, "sweeps")), 1);
  json_decref(j);
  free(f.body);
  run_grid(writer, "second");
  f = fetch(sw_http_port(h), "/api/status", NULL);
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

START_TEST(command_line_option) {
  char *argv[] = {"coordinator", "--db", g_db, "--http", "0", "--insecure", NULL};
  int argc = 6;
  sw_http_t *h = NULL;
  struct sw_err err = {0};
  ck_assert_msg(sw_http_from_args(&argc, argv, "results/splatsweep.db", &h, &err) == 0, "%s",
                err.msg);
  ck_assert_int_eq(argc, 4); /* --http 0 removed, the rest left for the daemon's parser */
  ck_assert_str_eq(argv[3], "--insecure");
  ck_assert_ptr_null(argv[4]);
  ck_assert_ptr_nonnull(h);
  struct fetched f = fetch(sw_http_port(h), "/api/report/1", NULL);
  ck_assert_int_eq(f.status, 200); /* it serves the --db database */
  free(f.body);
  sw_http_stop(&h);

  char *plain[] = {"local", "spec.yaml", NULL};
  argc = 2;
  ck_assert_int_eq(sw_http_from_args(&argc, plain, "x.db", &h, &err), 0);
  ck_assert_ptr_null(h);
  ck_assert_int_eq(argc, 2);
  char *badport[] = {"local", "--http", "web", NULL};
  argc = 3;
  ck_assert_int_eq(sw_http_from_args(&argc, badport, "x.db", &h, &err), SW_EINVAL);
  char *noval[] = {"local", "--http", NULL};
  argc = 2;
  ck_assert_int_eq(sw_http_from_args(&argc, noval, "x.db", &h, &err), SW_EINVAL);
  char *bindonly[] = {"local", "--http-bind=127.0.0.1", NULL};
  argc = 2;
  ck_assert_int_eq(sw_http_from_args(&argc, bindonly, "x.db", &h, &err), SW_EINVAL);
  char dbarg[200];
  snprintf(dbarg, sizeof dbarg, "--db=%s", g_db);
  char *eq[] = {"coordinator", "--http=0", "--http-bind=127.0.0.1", dbarg, NULL};
  argc = 4;
  ck_assert_int_eq(sw_http_from_args(&argc, eq, "x.db", &h, &err), 0);
  ck_assert_int_eq(argc, 2);
  ck_assert_str_eq(eq[1], dbarg);
  f = fetch(sw_http_port(h), "/api/report/1", NULL);
  ck_assert_int_eq(f.status, 200);
  free(f.body);
  sw_http_stop(&h);
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
  tcase_add_test(tc, reads_while_the_coordinator_writes);
  tcase_add_test(tc, command_line_option);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  curl_global_cleanup();
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
