/* test_report.c: Check suite for the reports (read/sw_report.h): a gate sweep and a grid
 * sweep are run through the scheduler with fake workers, then the report is read back from the
 * store in JSON (the DESIGN.md section 10 shape), text, Markdown and HTML (Chart.js embedded
 * at build time, a chart area for every gate and grid), plus error paths. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sw_fs.h"
#include "sw_html.h"
#include "sw_report.h"
#include "fixture_result.h"
#include "sw_sched.h"
#include "sw_store.h"

static char g_dir[64];
static char g_db[128];

static const struct sw_window_sample QUIET[2] = {
    {.t_ms = 0, .load1 = 0.4, .cpu_other = 0.05, .cpu_total = 1.0, .mem_avail = 1e9},
    {.t_ms = 1000, .load1 = 0.5, .cpu_other = 0.10, .cpu_total = 1.0, .mem_avail = 1e9}};
static const struct sw_window_sample BUSY[2] = {
    {.t_ms = 0, .load1 = 0.4, .cpu_other = 0.05, .cpu_total = 1.0, .mem_avail = 1e9},
    {.t_ms = 1000, .load1 = 5.0, .cpu_other = 3.00, .cpu_total = 4.0, .mem_avail = 1e9}};

static void deliver(sw_sched_t *s, const struct sw_lease *l, const char *w, int r, double t,
                    double psnr, const struct sw_window_sample *win, int64_t now) {
  char res[512];
  snprintf(res, sizeof res,
           "{\"status\":\"ok\",\"metrics\":{\"train_s\":%.4f,\"wall_s\":%.4f,\"psnr_db\":%.4f,"
           "\"iterations\":100},\"kernels\":[{\"name\":\"rasterize_fwd\",\"calls\":100,"
           "\"gpu_ms\":2.5,\"share\":0.4}],\"trainer\":{\"binary_sha256\":\"abc\"}}",
           t, t + 0.5, psnr);
  char *full = fixture_result(res); /* the rest of the contract */
  ck_assert_ptr_nonnull(full);
  struct sw_run_result rr = {.lease_id = l->lease_id,
                             .epoch = l->epoch,
                             .worker_id = w,
                             .run_id = l->runs[r].run_id,
                             .attempt = l->attempt,
                             .result_json = full,
                             .pre = QUIET,
                             .n_pre = 1,
                             .during = win,
                             .n_during = 2};
  struct sw_err err = {0};
  ck_assert_msg(sw_sched_result(s, &rr, now, &err) == 0, "%s", err.msg);
  free(full);
}

/* Builds the database once per test: a finished 5-pair gate (pair 1 contaminated and replaced,
 * pair 3 re-run after an expired lease) and a finished 2-point grid. */
static void setup(void) {
  snprintf(g_dir, sizeof g_dir, "/tmp/sw_test_reportXXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(g_dir));
  snprintf(g_db, sizeof g_db, "%s/r.db", g_dir);
  struct sw_err err = {0};
  struct sw_store_opts so;
  sw_store_opts_default(&so);
  so.synchronous_full = 0;
  sw_store_t *store = NULL;
  ck_assert_msg(sw_store_open(g_db, &so, &store, &err) == 0, "%s", err.msg);
  struct sw_sched_opts o;
  sw_sched_opts_default(&o);
  o.lease_ttl_ms = 1000;
  sw_sched_t *s = NULL;
  ck_assert_int_eq(sw_sched_new(store, &o, 0, &s, &err), 0);
  const char *gate =
      "{\"name\":\"ballot\",\"kind\":\"gate\",\"trainer\":{\"builtin\":{}},\"scene\":{\"path\":\"/"
      "x\"},\"base\":{"
      "\"iterations\":"
      "100},\"arms\":{\"off\":{\"radix_scatter\":\"serial\"},\"on\":{\"radix_scatter\":\"ballot\"}}"
      ","
      "\"pairs\":{\"n\":5,\"max\":5,\"order\":\"alternate\"},\"gate\":{\"metric\":\"train_s\","
      "\"direction\":\"lower\",\"rule\":{\"k\":2,\"floor\":0.01},\"guard\":{\"metric\":\"psnr_db\","
      "\"max_drop\":0.05}},\"contamination\":{\"cpu_other_max\":0.5,\"rerun_once\":true}}";
  const char *grid = "{\"name\":\"pareto\",\"kind\":\"grid\",\"trainer\":{\"builtin\":{}},"
                     "\"scene\":{\"path\":\"/x\"},\"base\":{},"
                     "\"parameters\":{\"iterations\":[100,200]},\"repeats\":1}";
  int64_t g = 0, p = 0;
  /* The display name carries HTML's special characters (a spec's own name cannot). */
  ck_assert_msg(sw_sched_submit(s, gate, "test", "ballot<b>&", 0, &g, &err) == 0, "%s", err.msg);
  ck_assert_int_eq(sw_sched_submit(s, grid, "test", NULL, 0, &p, &err), 0);
  ck_assert_int_eq(sw_sched_worker_hello(s, "w1", NULL, NULL, 0, &err), 0);
  int64_t now = 10;
  int k = 0, expired_once = 0;
  while (sw_sched_sweep_finished(s, g, &err) == 0 || sw_sched_sweep_finished(s, p, &err) == 0) {
    ck_assert_int_lt(k, 30);
    struct sw_lease l;
    ck_assert_int_eq(sw_sched_next(s, "w1", now, &l, &err), 1);
    for (int r = 0; r < l.n_runs; r++) {
      int on = strcmp(l.runs[r].arm, "on") == 0;
      double noise = 0.003 * ((k * 7 + r) % 3 - 1);
      double t = l.n_runs == 1 ? 50.0 + l.pair_index : 100.0 * (on ? 0.9 : 1.0) * (1 + noise);
      if (l.gate_id && l.pair_index == 3 && !expired_once && r == 1) {
        expired_once = 1; /* the worker vanishes before its second run: the lease expires */
        now += 2000;
        ck_assert_int_eq(sw_sched_tick(s, now, NULL, &err), 0);
        break;
      }
      deliver(s, &l, "w1", r, t, 30.0 + 0.01 * r,
              l.gate_id && l.pair_index == 1 && !on ? BUSY : QUIET, now);
    }
    sw_lease_clear(&l);
    now += 10;
    k++;
  }
  sw_sched_destroy(&s);
  sw_store_close(&store);
}

static void teardown(void) { sw_fs_rm_rf(g_dir, NULL); }

static sw_store_t *open_ro(void) {
  struct sw_store_opts o;
  sw_store_opts_default(&o);
  o.read_only = 1;
  sw_store_t *s = NULL;
  struct sw_err err = {0};
  ck_assert_msg(sw_store_open(g_db, &o, &s, &err) == 0, "%s", err.msg);
  return s;
}

START_TEST(json_has_the_design_shape) {
  sw_store_t *s = open_ro(); /* reports read only the store */
  struct sw_err err = {0};
  json_t *root = sw_report_json(s, 0, &err);
  ck_assert_msg(root != NULL, "%s", err.msg);
  json_t *sweeps = json_object_get(root, "sweeps");
  ck_assert_int_eq(json_array_size(sweeps), 2);
  json_t *sw = json_array_get(sweeps, 0);
  ck_assert_str_eq(json_string_value(json_object_get(sw, "name")), "ballot<b>&");
  ck_assert(json_is_integer(json_object_get(sw, "id")));
  json_t *g = json_array_get(json_object_get(sw, "gates"), 0);
  ck_assert_str_eq(json_string_value(json_object_get(g, "verdict")), "adopt");
  ck_assert_int_gt(json_array_size(json_object_get(g, "reasons")), 0);
  ck_assert(json_is_number(json_object_get(g, "delta")));
  ck_assert(json_number_value(json_object_get(g, "delta")) < -0.05);
  ck_assert(json_is_number(json_object_get(g, "threshold")));
  ck_assert(json_is_object(json_object_get(g, "guard")));
  json_t *pairs = json_object_get(g, "pairs");
  ck_assert_int_eq(json_array_size(pairs), 6); /* 5 + the replacement of pair 1 */
  size_t i;
  json_t *p;
  json_array_foreach(pairs, i, p) {
    int idx = (int)json_integer_value(json_object_get(p, "index"));
    ck_assert_int_eq(idx, (int)i);
    ck_assert_str_eq(json_string_value(json_object_get(p, "worker")), "w1");
    const char *order = json_string_value(json_object_get(p, "order"));
    if (idx < 5) ck_assert_str_eq(order, idx % 2 ? "on-off" : "off-on");
    for (int a = 0; a < 2; a++) {
      json_t *run = json_object_get(p, a ? "on" : "off");
      ck_assert_ptr_nonnull(run);
      ck_assert(json_is_number(json_object_get(json_object_get(run, "metrics"), "train_s")));
      ck_assert_int_eq(json_integer_value(json_object_get(run, "attempt")),
                       json_integer_value(json_object_get(p, "attempt")));
      ck_assert(json_is_boolean(json_object_get(run, "contaminated")));
      json_t *win = json_object_get(run, "window");
      ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(win, "during"), "n")), 2);
      ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(win, "pre"), "n")), 1);
      ck_assert_int_eq(json_array_size(json_object_get(run, "kernels")), 1);
      ck_assert(json_is_array(json_object_get(run, "checkpoints")));
    }
    /* The per-pair delta the report's chart draws: 100 x (on - off) / off of the gate metric. */
    double off = json_number_value(
               json_object_get(json_object_get(json_object_get(p, "off"), "metrics"), "train_s")),
           on = json_number_value(
               json_object_get(json_object_get(json_object_get(p, "on"), "metrics"), "train_s"));
    ck_assert_double_eq_tol(json_number_value(json_object_get(p, "delta_pct")),
                            100 * (on - off) / off, 1e-9);
  }
  /* The limits the windows were judged by: the spec's cpu_other_max, the rest defaults. */
  json_t *lim = json_object_get(sw, "contamination");
  ck_assert_double_eq(json_number_value(json_object_get(lim, "cpu_other_max")), 0.5);
  ck_assert_double_eq(json_number_value(json_object_get(lim, "cpu_other_mean_max")), 0.2);
  /* Pair 1's off run is labelled contaminated; pair 5 replaces it. */
  json_t *p1 = json_array_get(pairs, 1);
  ck_assert(json_is_true(json_object_get(json_object_get(p1, "off"), "contaminated")));
  ck_assert_str_eq(json_string_value(json_object_get(json_object_get(p1, "off"), "status")),
                   "contaminated");
  ck_assert_double_gt(
      json_number_value(json_object_get(
          json_object_get(json_object_get(json_object_get(p1, "off"), "window"), "during"),
          "cpu_other_max")),
      2.9);
  json_t *p5 = json_array_get(pairs, 5);
  ck_assert(json_is_true(json_object_get(p5, "is_replacement")));
  ck_assert_int_eq(json_integer_value(json_object_get(p5, "replaces")), 1);
  /* Pair 3 ran twice: attempt 2 in the report, attempt 1's finished arm kept as abandoned. */
  json_t *p3 = json_array_get(pairs, 3);
  ck_assert_int_eq(json_integer_value(json_object_get(p3, "attempt")), 2);
  json_t *early = json_object_get(p3, "earlier_attempts");
  ck_assert_int_eq(json_array_size(early), 1);
  ck_assert_str_eq(json_string_value(json_object_get(json_array_get(early, 0), "status")),
                   "abandoned");
  /* The sweep's history: submitted, pair 3 re-queued after its lease expired, pair 1 replaced,
   * the verdict. */
  json_t *ev = json_object_get(sw, "events");
  ck_assert_int_ge(json_array_size(ev), 5);
  ck_assert_str_eq(json_string_value(json_object_get(json_array_get(ev, 0), "kind")), "submit");
  int seen_requeue = 0, seen_replace = 0, seen_verdict = 0;
  json_array_foreach(ev, i, p) {
    const char *kind = json_string_value(json_object_get(p, "kind"));
    seen_requeue |= strcmp(kind, "requeue") == 0;
    seen_replace |= strcmp(kind, "replace") == 0;
    seen_verdict |= strcmp(kind, "verdict") == 0;
  }
  ck_assert(seen_requeue && seen_replace && seen_verdict);
  /* The grid lists its points with their single run. */
  json_t *grid = json_array_get(sweeps, 1);
  json_t *points = json_object_get(grid, "points");
  ck_assert_int_eq(json_array_size(points), 2);
  ck_assert_str_eq(json_string_value(json_object_get(json_array_get(points, 1), "label")),
                   "iterations=200");
  ck_assert_double_eq(
      json_number_value(json_object_get(
          json_object_get(json_object_get(json_array_get(points, 1), "run"), "metrics"),
          "train_s")),
      51.0);
  /* The grid carries its Pareto data (sw_pareto's front) for the front chart. */
  json_t *pareto = json_object_get(grid, "pareto");
  ck_assert(json_is_object(pareto));
  ck_assert_int_ge(json_array_size(json_object_get(pareto, "front")), 1);
  json_decref(root);
  /* One sweep only; an unknown one is an error naming it. */
  root = sw_report_json(s, 2, &err);
  ck_assert_int_eq(json_array_size(json_object_get(root, "sweeps")), 1);
  json_decref(root);
  ck_assert_ptr_null(sw_report_json(s, 99, &err));
  ck_assert_int_eq(err.code, SW_ENOTFOUND);
  sw_store_close(&s);
}
END_TEST

START_TEST(text_markdown_and_json_render) {
  sw_store_t *s = open_ro();
  struct sw_err err = {0};
  char *text = NULL;
  ck_assert_int_eq(sw_report_render_string(s, 0, SW_REPORT_TEXT, &text, &err), 0);
  ck_assert_ptr_nonnull(strstr(text, "gate ballot<b>&: adopt"));
  ck_assert_ptr_nonnull(strstr(text, "contaminated(off)"));
  ck_assert_ptr_nonnull(strstr(text, "replaces 1"));
  ck_assert_ptr_nonnull(strstr(text, "iterations=200"));
  free(text);
  ck_assert_int_eq(sw_report_render_string(s, 1, SW_REPORT_MD, &text, &err), 0);
  ck_assert_ptr_nonnull(strstr(text, "### Gate `ballot<b>&`: **adopt**"));
  ck_assert_ptr_nonnull(strstr(text, "| pair | worker | order |"));
  ck_assert_ptr_null(strstr(text, "pareto")); /* only sweep 1 */
  free(text);
  ck_assert_int_eq(sw_report_render_string(s, 0, SW_REPORT_JSON, &text, &err), 0);
  json_t *back = json_loads(text, 0, NULL);
  ck_assert_ptr_nonnull(back);
  ck_assert_int_eq(json_array_size(json_object_get(back, "sweeps")), 2);
  json_decref(back);
  free(text);
  enum sw_report_format f;
  ck_assert_int_eq(sw_report_format_parse("md", &f, &err), 0);
  ck_assert_int_eq(f, SW_REPORT_MD);
  ck_assert_int_eq(sw_report_format_parse("pdf", &f, &err), SW_EINVAL);
  /* A report that cannot be written is an I/O error, not a silent success. */
  FILE *full = fopen("/dev/full", "w");
  if (full) {
    ck_assert_int_eq(sw_report_render(s, 0, SW_REPORT_JSON, full, &err), SW_EIO);
    fclose(full);
  }
  sw_store_close(&s);
}
END_TEST

START_TEST(html_embeds_chartjs_whatever_the_machine_has) {
  sw_store_t *s = open_ro();
  struct sw_err err = {0};
  char *html = NULL;
  /* The old run-time source of Chart.js pointed nowhere: the embedded copy is used regardless
   * (the it_browser tests hide /usr/share/javascript itself). */
  setenv("SW_CHARTJS", "/nonexistent/chart.min.js", 1);
  ck_assert_int_eq(sw_report_render_string(s, 0, SW_REPORT_HTML, &html, &err), 0);
  unsetenv("SW_CHARTJS");
  ck_assert_ptr_nonnull(strstr(html, "<!DOCTYPE html>"));
  ck_assert_ptr_nonnull(strstr(html, "Chart.js v3.9.1"));
  ck_assert_ptr_nonnull(strstr(html, "window.swCharts"));
  ck_assert_ptr_null(strstr(html, "/nonexistent"));
  ck_assert_ptr_nonnull(strstr(html, "Sweep 1: ballot&lt;b&gt;&amp; (gate, done)"));
  ck_assert_ptr_nonnull(strstr(html, "id=\"charts-1-0\""));
  ck_assert_ptr_nonnull(strstr(html, "id=\"charts-2-grid\""));
  ck_assert_ptr_nonnull(strstr(html, "id=\"report-data\""));
  ck_assert_ptr_nonnull(strstr(html, "swCharts.report("));
  /* Exactly as many script elements close as open. */
  int open = 0, close = 0;
  for (const char *p = html; (p = strstr(p, "<script")); p++) open++;
  for (const char *p = html; (p = strstr(p, "</script")); p++) close++;
  ck_assert_int_eq(open, close);
  ck_assert_ptr_nonnull(strstr(html, "<table>"));
  free(html);
  sw_store_close(&s);
}
END_TEST

/* Data embedded in a page's JSON script element cannot close it, and stays the same JSON value;
 * escaped text keeps markup out of the page. */
START_TEST(html_helpers_keep_data_inside_its_element) {
  const char *json = "{\"name\":\"x</script><script>alert(1)</script>\",\"n\":\"a<b\"}";
  char *buf = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&buf, &len);
  ck_assert_ptr_nonnull(out);
  sw_html_json(out, json);
  ck_assert_int_eq(fclose(out), 0);
  ck_assert_ptr_null(strstr(buf, "</"));
  json_t *a = json_loads(json, 0, NULL), *b = json_loads(buf, 0, NULL);
  ck_assert_ptr_nonnull(b);
  ck_assert(json_equal(a, b));
  json_decref(a);
  json_decref(b);
  free(buf);
  out = open_memstream(&buf, &len);
  ck_assert_ptr_nonnull(out);
  sw_html_escape(out, "<a href=\"x\">&</a>");
  sw_html_escape(out, NULL);
  ck_assert_int_eq(fclose(out), 0);
  ck_assert_str_eq(buf, "&lt;a href=&quot;x&quot;&gt;&amp;&lt;/a&gt;");
  free(buf);
}
END_TEST

int main(void) {
  Suite *s = suite_create("report");
  TCase *tc = tcase_create("core");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, json_has_the_design_shape);
  tcase_add_test(tc, text_markdown_and_json_render);
  tcase_add_test(tc, html_embeds_chartjs_whatever_the_machine_has);
  tcase_add_test(tc, html_helpers_keep_data_inside_its_element);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
