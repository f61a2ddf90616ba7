/* test_pareto.c: Check suite for the Pareto data (read/sw_pareto.h). Two grid sweeps,
 * "ours" and a slower competing exec trainer "theirs", each at 1000 and 2000 iterations with
 * two repeats and checkpoints at 500 / 1000 / 2000, plus a small gate, are run through the
 * scheduler with a fake worker that reports synthetic results; the points, their aggregation,
 * the front and the three matched comparisons are then checked against values worked out by
 * hand (the curves are in the comment of setup()). Also: interpolation edge cases, the
 * renderings and the command line's exit codes. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sw_fs.h"
#include "sw_pareto.h"
#include "fixture_result.h"
#include "sw_sched.h"
#include "sw_cmd.h"
#include "sw_spec.h"
#include "sw_store.h"

static char g_dir[64];
static char g_db[128];
static int64_t g_ours, g_theirs, g_gate;

static const struct sw_window_sample QUIET[2] = {
    {.t_ms = 0, .load1 = 0.4, .cpu_other = 0.05, .cpu_total = 1.0, .mem_avail = 1e9},
    {.t_ms = 1000, .load1 = 0.5, .cpu_other = 0.10, .cpu_total = 1.0, .mem_avail = 1e9}};

/* Per trainer, at iteration budgets 500 / 1000 / 2000 (time, PSNR):
 *   ours:   (25, 31.0)  (50, 32.0)  (100, 34.0)    final times 49/51 and 99/101 over repeats,
 *                                                  final PSNR +-0.1 over repeats
 *   theirs: (40, 30.8)  (80, 33.0)  (160, 35.0)    exact on every repeat
 * A checkpoint at a run's own final iteration carries a deliberately different PSNR (+0.5):
 * the final metrics, not that checkpoint, must be used at the budget where runs end. */
static void result_for(char *buf, size_t len, int theirs, int iters, int repeat) {
  double k = theirs ? 0.08 : 0.05;
  double sgn = repeat % 2 ? 1.0 : -1.0;
  double t = k * iters + (theirs ? 0 : sgn * 1.0);
  double p = iters == 1000 ? (theirs ? 33.0 : 32.0) : (theirs ? 35.0 : 34.0);
  if (!theirs) p += sgn * 0.1;
  double p500 = theirs ? 30.8 : 31.0;
  char cps[400];
  if (iters == 1000)
    snprintf(cps, sizeof cps,
             "{\"iter\":500,\"train_s\":%.3f,\"psnr_db\":%.3f,\"splats\":1},"
             "{\"iter\":1000,\"train_s\":%.3f,\"psnr_db\":%.3f,\"splats\":1}",
             k * 500, p500, t, p + 0.5);
  else
    snprintf(cps, sizeof cps,
             "{\"iter\":500,\"train_s\":%.3f,\"psnr_db\":%.3f,\"splats\":1},"
             "{\"iter\":1000,\"train_s\":%.3f,\"psnr_db\":%.3f},"
             "{\"iter\":2000,\"train_s\":%.3f,\"psnr_db\":%.3f}",
             k * 500, p500, k * 1000, 32.7, t, p + 0.5);
  snprintf(buf, len,
           "{\"schema\":\"splatsweep.result/1\",\"status\":\"ok\",\"trainer\":{\"name\":\"%s\","
           "\"binary_sha256\":\"b1\"},\"metrics\":{\"train_s\":%.4f,\"wall_s\":%.4f,\"psnr_db\":"
           "%.4f,\"iterations\":%d},\"checkpoints\":[%s]}",
           theirs ? "msplat" : "splat-train", t, t + 1, p, iters, cps);
}

static void deliver(sw_sched_t *s, const struct sw_lease *l, int r, const char *res, int64_t now) {
  char *full = fixture_result(res); /* the rest of the contract */
  ck_assert_ptr_nonnull(full);
  struct sw_run_result rr = {.lease_id = l->lease_id,
                             .epoch = l->epoch,
                             .worker_id = "w1",
                             .run_id = l->runs[r].run_id,
                             .attempt = l->attempt,
                             .result_json = full,
                             .pre = QUIET,
                             .n_pre = 1,
                             .during = QUIET,
                             .n_during = 2};
  struct sw_err err = {0};
  ck_assert_msg(sw_sched_result(s, &rr, now, &err) == 0, "%s", err.msg);
  free(full);
}

static void setup(void) {
  snprintf(g_dir, sizeof g_dir, "/tmp/sw_test_paretoXXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(g_dir));
  snprintf(g_db, sizeof g_db, "%s/p.db", g_dir);
  struct sw_err err = {0};
  struct sw_store_opts so;
  sw_store_opts_default(&so);
  so.synchronous_full = 0;
  sw_store_t *store = NULL;
  ck_assert_msg(sw_store_open(g_db, &so, &store, &err) == 0, "%s", err.msg);
  sw_sched_t *s = NULL;
  ck_assert_int_eq(sw_sched_new(store, NULL, 0, &s, &err), 0);
  const char *ours = "{\"name\":\"ours\",\"kind\":\"grid\",\"trainer\":{\"builtin\":{}},\"scene\":{"
                     "\"path\":\"/x\"},\"base\":"
                     "{\"seed\":42},\"parameters\":{\"iterations\":[1000,2000]},\"repeats\":2,"
                     "\"checkpoints\":[500,1000,2000]}";
  const char *theirs =
      "{\"name\":\"theirs\",\"kind\":\"grid\",\"trainer\":{\"exec\":{\"command\":[\"msplat\","
      "\"{scene}\",\"{out}\"]}},\"base\":{},\"parameters\":{\"iterations\":[1000,2000]},"
      "\"repeats\":2,\"checkpoints\":[500,1000,2000]}";
  const char *gate =
      "{\"name\":\"ballot\",\"kind\":\"gate\",\"trainer\":{\"builtin\":{}},\"scene\":{\"path\":\"/"
      "x\"},\"base\":{"
      "\"iterations\":"
      "1000},\"arms\":{\"off\":{\"radix_scatter\":\"serial\"},\"on\":{\"radix_scatter\":\"ballot\"}"
      "},"
      "\"pairs\":{\"n\":2,\"max\":2,\"order\":\"alternate\"},\"gate\":{\"metric\":\"train_s\","
      "\"direction\":\"lower\",\"rule\":{\"k\":2,\"floor\":0.01},\"guard\":{\"metric\":\"psnr_db\","
      "\"max_drop\":0.05}}}";
  ck_assert_int_eq(sw_sched_submit(s, ours, "test", NULL, 0, &g_ours, &err), 0);
  ck_assert_int_eq(sw_sched_submit(s, theirs, "test", NULL, 0, &g_theirs, &err), 0);
  ck_assert_int_eq(sw_sched_submit(s, gate, "test", NULL, 0, &g_gate, &err), 0);
  ck_assert_int_eq(sw_sched_worker_hello(s, "w1", NULL, NULL, 0, &err), 0);
  int64_t now = 10;
  int k = 0;
  int repeat_seen[2][3] = {{0}};
  while (sw_sched_sweep_finished(s, g_ours, &err) == 0 ||
         sw_sched_sweep_finished(s, g_theirs, &err) == 0 ||
         sw_sched_sweep_finished(s, g_gate, &err) == 0) {
    ck_assert_int_lt(k++, 40);
    struct sw_lease l;
    ck_assert_int_eq(sw_sched_next(s, "w1", now, &l, &err), 1);
    for (int r = 0; r < l.n_runs; r++) {
      char res[1200];
      if (l.gate_id) {
        int on = strcmp(l.runs[r].arm, "on") == 0;
        snprintf(res, sizeof res,
                 "{\"status\":\"ok\",\"trainer\":{\"name\":\"splat-train\"},\"metrics\":{"
                 "\"train_s\":%.3f,\"psnr_db\":%.3f,\"iterations\":1000},\"checkpoints\":[]}",
                 on ? 45.0 + l.pair_index : 50.0 + l.pair_index, on ? 32.05 : 32.0);
      } else {
        int is_theirs = l.sweep_id == g_theirs;
        int iters = strstr(l.runs[r].config_json, "\"iterations\":2000") ? 2000 : 1000;
        result_for(res, sizeof res, is_theirs, iters, repeat_seen[is_theirs][iters / 1000]++);
      }
      deliver(s, &l, r, res, now);
    }
    sw_lease_clear(&l);
    now += 10;
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

static const json_t *config_by_id(const json_t *root, const char *id) {
  size_t i;
  const json_t *c;
  json_array_foreach(json_object_get(root, "configurations"), i,
                     c) if (strcmp(json_string_value(json_object_get(c, "id")), id) == 0) return c;
  return NULL;
}

static const json_t *point_at(const json_t *cfg, int iter) {
  size_t i;
  const json_t *p;
  json_array_foreach(json_object_get(cfg, "points"), i,
                     p) if (json_integer_value(json_object_get(p, "iter")) == iter) return p;
  return NULL;
}

static double stat(const json_t *p, const char *k, const char *f) {
  return json_number_value(json_object_get(json_object_get(p, k), f));
}

static double num(const json_t *o, const char *k) {
  return json_number_value(json_object_get(o, k));
}

START_TEST(points_are_aggregated_per_budget) {
  sw_store_t *s = open_ro();
  struct sw_err err = {0};
  json_t *root = sw_pareto_json(s, NULL, &err);
  ck_assert_msg(root != NULL, "%s", err.msg);
  ck_assert_int_eq(json_array_size(json_object_get(root, "configurations")), 4);
  char id[64];
  snprintf(id, sizeof id, "%lld:ours", (long long)g_ours);
  const json_t *a = config_by_id(root, id);
  ck_assert_ptr_nonnull(a);
  ck_assert_str_eq(json_string_value(json_object_get(a, "trainer")), "splat-train");
  ck_assert_int_eq(json_array_size(json_object_get(a, "points")), 3);
  const json_t *p = point_at(a, 1000);
  ck_assert_str_eq(json_string_value(json_object_get(p, "source")), "final");
  ck_assert_int_eq(json_integer_value(json_object_get(p, "n")), 2);
  ck_assert_double_eq_tol(stat(p, "train_s", "mean"), 50.0, 1e-9);
  ck_assert_double_eq_tol(stat(p, "train_s", "sd"), sqrt(2.0), 1e-9);
  ck_assert_double_eq_tol(stat(p, "psnr_db", "mean"), 32.0, 1e-9);
  ck_assert_double_eq_tol(stat(p, "psnr_db", "sd"), sqrt(0.02), 1e-9);
  /* The budget where no run ends comes from the checkpoints of all four runs. */
  p = point_at(a, 500);
  ck_assert_str_eq(json_string_value(json_object_get(p, "source")), "checkpoint");
  ck_assert_int_eq(json_integer_value(json_object_get(p, "n")), 4);
  ck_assert_double_eq_tol(stat(p, "psnr_db", "mean"), 31.0, 1e-9);
  p = point_at(a, 2000);
  ck_assert_double_eq_tol(stat(p, "train_s", "mean"), 100.0, 1e-9);
  ck_assert_double_eq_tol(stat(p, "psnr_db", "mean"), 34.0, 1e-9);
  /* The exec trainer's series and the gate's arms are configurations too. */
  snprintf(id, sizeof id, "%lld:theirs", (long long)g_theirs);
  const json_t *b = config_by_id(root, id);
  ck_assert_ptr_nonnull(b);
  ck_assert_str_eq(json_string_value(json_object_get(b, "trainer")), "msplat");
  ck_assert(isnan(stat(point_at(b, 1000), "train_s", "sd")) ||
            stat(point_at(b, 1000), "train_s", "sd") == 0.0);
  snprintf(id, sizeof id, "%lld:ballot/on", (long long)g_gate);
  const json_t *on = config_by_id(root, id);
  ck_assert_ptr_nonnull(on);
  ck_assert_double_eq_tol(stat(point_at(on, 1000), "train_s", "mean"), 45.5, 1e-9);
  json_decref(root);
  sw_store_close(&s);
}
END_TEST

START_TEST(front_is_non_dominated) {
  sw_store_t *s = open_ro();
  struct sw_err err = {0};
  struct sw_pareto_opts o = {.sweep_id = 0};
  json_t *root = sw_pareto_json(s, &o, &err);
  ck_assert_ptr_nonnull(root);
  /* Over all points: the gate's on arm (45.5 s, 32.05 dB) dominates ours at 1000 (50 s,
   * 32.0 dB) and the gate's off arm (50.5 s, 32.0); theirs at 500 (40 s, 30.8 dB) is dominated
   * by ours at 500 (25 s, 31.0 dB). The front in time order: */
  const json_t *front = json_object_get(root, "front");
  static const double T[] = {25, 45.5, 80, 100, 160};
  ck_assert_int_eq(json_array_size(front), 5);
  for (size_t i = 0; i < 5; i++)
    ck_assert_double_eq_tol(num(json_array_get(front, i), "train_s"), T[i], 1e-9);
  char id[64];
  snprintf(id, sizeof id, "%lld:ours", (long long)g_ours);
  const json_t *a = config_by_id(root, id);
  ck_assert(json_is_true(json_object_get(point_at(a, 500), "on_front")));
  ck_assert(json_is_false(json_object_get(point_at(a, 1000), "on_front")));
  json_decref(root);
  /* Within one sweep the front is that sweep's own. */
  o.sweep_id = g_theirs;
  root = sw_pareto_json(s, &o, &err);
  ck_assert_int_eq(json_array_size(json_object_get(root, "configurations")), 1);
  ck_assert_int_eq(json_array_size(json_object_get(root, "front")), 3);
  json_decref(root);
  sw_store_close(&s);
}
END_TEST

static const json_t *row(const json_t *arr, const char *at, int iter) {
  size_t i;
  const json_t *r;
  json_array_foreach(arr, i, r) {
    if (at && strcmp(json_string_value(json_object_get(r, "at")), at)) continue;
    if ((int)num(r, "iter") == iter) return r;
  }
  return NULL;
}

START_TEST(matched_comparisons) {
  sw_store_t *s = open_ro();
  struct sw_err err = {0};
  struct sw_pareto_opts o = {.compare_a = "ours", .compare_b = "theirs"};
  json_t *root = sw_pareto_json(s, &o, &err);
  ck_assert_msg(root != NULL, "%s", err.msg);
  ck_assert_int_eq(json_array_size(json_object_get(root, "comparisons")), 1);
  const json_t *c = json_array_get(json_object_get(root, "comparisons"), 0);
  /* Matched iteration: theirs is 1.6x slower at every budget. */
  const json_t *mi = json_object_get(c, "matched_iteration");
  ck_assert_int_eq(json_array_size(mi), 3);
  ck_assert_double_eq_tol(num(row(mi, NULL, 1000), "time_ratio"), 1.6, 1e-9);
  ck_assert_double_eq_tol(num(row(mi, NULL, 1000), "psnr_diff"), 1.0, 1e-9);
  ck_assert_double_eq_tol(num(row(mi, NULL, 500), "psnr_diff"), -0.2, 1e-9);
  /* Standard errors from the repeats: ours' time at 1000 has sd sqrt(2) over n = 2 (se 1 s of
   * 50 s), theirs none: ratio se 1.6 x 1/50; PSNR sd sqrt(0.02) over 2: diff se 0.1. */
  ck_assert_double_eq_tol(num(row(mi, NULL, 1000), "time_ratio_se"), 1.6 / 50, 1e-9);
  ck_assert_double_eq_tol(num(row(mi, NULL, 1000), "psnr_diff_se"), 0.1, 1e-9);
  ck_assert_int_eq(json_integer_value(json_object_get(row(mi, NULL, 500), "a_n")), 4);
  /* Matched wallclock: at ours' 50 s theirs is between (40, 30.8) and (80, 33.0): 31.35 dB. */
  const json_t *mw = json_object_get(c, "matched_wallclock");
  ck_assert_int_eq(json_array_size(mw), 6);
  ck_assert_double_eq_tol(num(row(mw, "a", 1000), "other_psnr_db"), 31.35, 1e-9);
  ck_assert_double_eq_tol(num(row(mw, "a", 1000), "psnr_diff"), -0.65, 1e-9);
  ck_assert_double_eq_tol(num(row(mw, "a", 2000), "other_psnr_db"), 33.5, 1e-9);
  ck_assert_double_eq_tol(num(row(mw, "b", 500), "other_psnr_db"), 31.6, 1e-9);
  ck_assert_double_eq_tol(num(row(mw, "b", 1000), "other_psnr_db"), 33.2, 1e-9);
  /* Out of range: no extrapolation, a note instead. */
  ck_assert(json_is_null(json_object_get(row(mw, "a", 500), "other_psnr_db")));
  ck_assert_ptr_nonnull(
      strstr(json_string_value(json_object_get(row(mw, "a", 500), "note")), "before"));
  ck_assert(json_is_null(json_object_get(row(mw, "b", 2000), "other_psnr_db")));
  /* Matched PSNR: theirs needs 61.82 s for ours' 32.0 dB, 120 s for 34.0 dB. */
  const json_t *mp = json_object_get(c, "matched_psnr");
  ck_assert_double_eq_tol(num(row(mp, "a", 1000), "other_train_s"), 40 + 40 * 1.2 / 2.2, 1e-9);
  ck_assert_double_eq_tol(num(row(mp, "a", 1000), "time_ratio"), (40 + 40 * 1.2 / 2.2) / 50, 1e-9);
  ck_assert_double_eq_tol(num(row(mp, "a", 2000), "other_train_s"), 120.0, 1e-9);
  ck_assert_double_eq_tol(num(row(mp, "a", 500), "other_train_s"), 40 + 40 * 0.2 / 2.2, 1e-9);
  ck_assert_double_eq_tol(num(row(mp, "b", 1000), "other_train_s"), 75.0, 1e-9);
  ck_assert(json_is_null(json_object_get(row(mp, "b", 2000), "other_train_s")));
  ck_assert_ptr_nonnull(
      strstr(json_string_value(json_object_get(row(mp, "b", 2000), "note")), "never"));
  ck_assert(json_is_null(json_object_get(row(mp, "b", 500), "other_train_s")));
  json_decref(root);
  /* Defaults: the gate's off vs on, and the two grid series. */
  root = sw_pareto_json(s, NULL, &err);
  const json_t *cmps = json_object_get(root, "comparisons");
  ck_assert_int_eq(json_array_size(cmps), 2);
  ck_assert_ptr_nonnull(
      strstr(json_string_value(json_object_get(json_array_get(cmps, 0), "a")), "ballot/off"));
  ck_assert_ptr_nonnull(
      strstr(json_string_value(json_object_get(json_array_get(cmps, 1), "b")), "theirs"));
  json_decref(root);
  /* Unknown and ambiguous names are errors that list what exists. */
  o.compare_b = "nosuch";
  ck_assert_ptr_null(sw_pareto_json(s, &o, &err));
  ck_assert_int_eq(err.code, SW_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "ballot/on"));
  sw_err_clear(&err);
  o.compare_b = "ballot";
  ck_assert_ptr_null(sw_pareto_json(s, &o, &err));
  ck_assert_int_eq(err.code, SW_EINVAL);
  sw_err_clear(&err);
  o.sweep_id = 99;
  ck_assert_ptr_null(sw_pareto_json(s, &o, &err));
  ck_assert_int_eq(err.code, SW_ENOTFOUND);
  sw_store_close(&s);
}
END_TEST

/* The Pareto series label is the grid point's label (sw_spec_label, the one label format) less
 * its iterations: parameters in the spec's order, not re-sorted. */
START_TEST(series_label_is_the_grid_point_label) {
  struct sw_store_opts so;
  sw_store_opts_default(&so);
  so.synchronous_full = 0;
  char db[160];
  snprintf(db, sizeof db, "%s/labels.db", g_dir);
  sw_store_t *store = NULL;
  struct sw_err err = {0};
  ck_assert_msg(sw_store_open(db, &so, &store, &err) == 0, "%s", err.msg);
  sw_sched_t *s = NULL;
  ck_assert_int_eq(sw_sched_new(store, NULL, 0, &s, &err), 0);
  const char *spec = "{\"name\":\"order\",\"kind\":\"grid\",\"trainer\":{\"builtin\":{}},"
                     "\"scene\":{\"path\":\"/x\"},\"parameters\":{\"radix_scatter\":[\"ballot\"],"
                     "\"binning\":[\"resident\"],\"iterations\":[1000]}}";
  int64_t id = 0;
  ck_assert_msg(sw_sched_submit(s, spec, "test", NULL, 0, &id, &err) == 0, "%s", err.msg);
  ck_assert_int_eq(sw_sched_worker_hello(s, "w1", NULL, NULL, 0, &err), 0);
  struct sw_lease l;
  ck_assert_int_eq(sw_sched_next(s, "w1", 1, &l, &err), 1);
  ck_assert_str_eq(l.runs[0].arm, "radix_scatter=ballot,binning=resident,iterations=1000");
  char res[1200];
  result_for(res, sizeof res, 0, 1000, 0);
  deliver(s, &l, 0, res, 2);
  sw_lease_clear(&l);
  json_t *root = sw_pareto_json(store, NULL, &err);
  ck_assert_msg(root != NULL, "%s", err.msg);
  const json_t *cfg = json_array_get(json_object_get(root, "configurations"), 0);
  ck_assert_str_eq(json_string_value(json_object_get(cfg, "label")),
                   "radix_scatter=ballot,binning=resident");
  json_t *values = json_pack("{s:s, s:s}", "radix_scatter", "ballot", "binning", "resident");
  char label[SW_SPEC_LABEL_MAX];
  sw_spec_label(values, label, sizeof label);
  ck_assert_str_eq(json_string_value(json_object_get(cfg, "label")), label);
  json_decref(values);
  json_decref(root);
  sw_sched_destroy(&s);
  sw_store_close(&store);
}
END_TEST

START_TEST(interpolation_edges) {
  const struct sw_pareto_pt c[] = {{500, 10, 30}, {1000, 20, 32}, {2000, 40, 31.5}};
  double v = 0;
  ck_assert_int_eq(sw_pareto_psnr_at_time(c, 3, 15, &v), 0);
  ck_assert_double_eq_tol(v, 31.0, 1e-12);
  ck_assert_int_eq(sw_pareto_psnr_at_time(c, 3, 20, &v), 0);
  ck_assert_double_eq_tol(v, 32.0, 1e-12);
  ck_assert_int_eq(sw_pareto_psnr_at_time(c, 3, 5, &v), 1);
  ck_assert_int_eq(sw_pareto_psnr_at_time(c, 3, 41, &v), 2);
  /* A curve that rises then falls: the first crossing counts. */
  ck_assert_int_eq(sw_pareto_time_to_psnr(c, 3, 31.5, &v), 0);
  ck_assert_double_eq_tol(v, 17.5, 1e-12);
  ck_assert_int_eq(sw_pareto_time_to_psnr(c, 3, 29, &v), 1);
  ck_assert_int_eq(sw_pareto_time_to_psnr(c, 3, 33, &v), 2);
  ck_assert_int_eq(sw_pareto_time_to_psnr(c, 0, 33, &v), SW_EINVAL);
  ck_assert_int_eq(sw_pareto_psnr_at_time(c, 1, 10, &v), 0);
  ck_assert_double_eq_tol(v, 30.0, 1e-12);
}
END_TEST

START_TEST(renderings) {
  sw_store_t *s = open_ro();
  struct sw_err err = {0};
  struct sw_pareto_opts o = {.compare_a = "ours", .compare_b = "theirs"};
  char *t = NULL;
  ck_assert_int_eq(sw_pareto_render_string(s, &o, SW_PARETO_TEXT, &t, &err), 0);
  ck_assert_ptr_nonnull(strstr(t, "4 configuration(s), 8 point(s), 5 on the front"));
  ck_assert_ptr_nonnull(strstr(t, "matched wallclock"));
  ck_assert_ptr_nonnull(strstr(t, "61.818"));
  free(t);
  ck_assert_int_eq(sw_pareto_render_string(s, &o, SW_PARETO_MD, &t, &err), 0);
  ck_assert_ptr_nonnull(strstr(t, "| iterations | source |"));
  free(t);
  ck_assert_int_eq(sw_pareto_render_string(s, &o, SW_PARETO_CSV, &t, &err), 0);
  ck_assert_ptr_nonnull(strstr(t, "config,sweep_id,kind,iterations,source,n,"));
  int lines = 0;
  for (const char *c = t; *c; c++) lines += *c == '\n';
  ck_assert_int_eq(lines, 9); /* header + 8 points */
  ck_assert_ptr_nonnull(strstr(t, ":ours\",1,grid,1000,final,2,50.000000,1.414214,32.000000,"));
  free(t);
  /* Chart.js is embedded at build time: no run-time file is looked for. */
  setenv("SW_CHARTJS", "/nonexistent/chart.js", 1);
  ck_assert_int_eq(sw_pareto_render_string(s, &o, SW_PARETO_HTML, &t, &err), 0);
  unsetenv("SW_CHARTJS");
  ck_assert_ptr_nonnull(strstr(t, "Chart.js v3.9.1"));
  ck_assert_ptr_nonnull(strstr(t, "id=\"pareto-data\""));
  ck_assert_ptr_nonnull(strstr(t, "swCharts.pareto("));
  free(t);
  ck_assert_int_eq(sw_pareto_render_string(s, &o, SW_PARETO_JSON, &t, &err), 0);
  json_t *back = json_loads(t, 0, NULL);
  ck_assert_ptr_nonnull(back);
  json_decref(back);
  free(t);
  enum sw_pareto_format f;
  ck_assert_int_eq(sw_pareto_format_parse("csv", &f, &err), 0);
  ck_assert_int_eq(f, SW_PARETO_CSV);
  ck_assert_int_eq(sw_pareto_format_parse("pdf", &f, &err), SW_EINVAL);
  int64_t id = 0;
  ck_assert_int_eq(sw_pareto_resolve_sweep(s, "theirs", &id, &err), 0);
  ck_assert_int_eq(id, g_theirs);
  ck_assert_int_eq(sw_pareto_resolve_sweep(s, "2", &id, &err), 0);
  ck_assert_int_eq(id, 2);
  ck_assert_int_eq(sw_pareto_resolve_sweep(s, "nosuch", &id, &err), SW_ENOTFOUND);
  sw_store_close(&s);
}
END_TEST

START_TEST(command_line) {
  char out[200];
  snprintf(out, sizeof out, "%s/front.csv", g_dir);
  char *a1[] = {"pareto", "ours", "--db", g_db, "--format", "csv", "-o", out, NULL};
  ck_assert_int_eq(sw_cmd_pareto(8, a1), 0);
  char *csv = NULL;
  ck_assert_int_eq(sw_fs_read_all(out, &csv, NULL, NULL), 0);
  ck_assert_ptr_nonnull(strstr(csv, ":ours\""));
  ck_assert_ptr_null(strstr(csv, "theirs"));
  free(csv);
  char *a2[] = {"pareto", "nosuch", "--db", g_db, NULL};
  ck_assert_int_eq(sw_cmd_pareto(4, a2), 2);
  char *a3[] = {"pareto", "--db", g_db, "--format", "pdf", NULL};
  ck_assert_int_eq(sw_cmd_pareto(5, a3), 2);
  char *a4[] = {"pareto", "--db", "/nonexistent/x.db", NULL};
  ck_assert_int_eq(sw_cmd_pareto(3, a4), 2);
  char *a5[] = {"pareto", "--db", g_db, "--compare", "ours", NULL};
  ck_assert_int_eq(sw_cmd_pareto(5, a5), 2);
}
END_TEST

int main(void) {
  Suite *s = suite_create("pareto");
  TCase *tc = tcase_create("store");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, points_are_aggregated_per_budget);
  tcase_add_test(tc, front_is_non_dominated);
  tcase_add_test(tc, matched_comparisons);
  tcase_add_test(tc, renderings);
  tcase_add_test(tc, command_line);
  tcase_add_test(tc, series_label_is_the_grid_point_label);
  suite_add_tcase(s, tc);
  TCase *pure = tcase_create("interpolation");
  tcase_add_test(pure, interpolation_edges);
  suite_add_tcase(s, pure);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
