/* test_audit.c: Check suite for the reproducibility audit (read/sw_audit.h). Sweeps are
 * run through the scheduler with a fake worker that reports synthetic results: a clean series,
 * and series where one run has a different trainer binary, no window samples, a different
 * config hash, or another GPU driver on the same machine; a gate and two re-measurements of its
 * on arm (one that reproduces the gate's mean, one that does not). The audit must pass the
 * clean series and name the exact run behind each problem; the command line's exit codes are
 * 0 pass, 1 problems, 2 bad input. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sw_audit.h"
#include "sw_fs.h"
#include "fixture_result.h"
#include "sw_noise.h"
#include "sw_sched.h"
#include "sw_cmd.h"
#include "sw_store.h"

static char g_dir[64];
static char g_db[128];

/* FLEET runs on two workers, each with its own constant build; it is submitted after the rest. */
enum {
  CLEAN,
  BINARY,
  NOWINDOW,
  CONFIG,
  DEVICES,
  GATE,
  REMEASURE_OK,
  REMEASURE_BAD,
  RUNAWAY,
  FLEET,
  N_SWEEPS
};
static const char *const NAMES[N_SWEEPS] = {"clean",   "binary", "nowindow",     "config",
                                            "devices", "gate",   "remeasure-ok", "remeasure-bad",
                                            "runaway", "fleet"};
static int64_t g_id[N_SWEEPS];
static int64_t g_odd_run[N_SWEEPS]; /* the run given the odd value in each faulty series */

static const struct sw_window_sample QUIET[2] = {
    {.t_ms = 0, .load1 = 0.4, .cpu_other = 0.05, .cpu_total = 1.0, .mem_avail = 1e9},
    {.t_ms = 1000, .load1 = 0.5, .cpu_other = 0.10, .cpu_total = 1.0, .mem_avail = 1e9}};

static int kind_of(int64_t sweep_id) {
  for (int k = 0; k < N_SWEEPS; k++)
    if (g_id[k] == sweep_id) return k;
  return -1;
}

/* The result a run reports: the nth run of its series (n from 0) gets the series' fault. */
static void result_for(char *buf, size_t len, int kind, int n, const char *arm, int pair) {
  const char *bin = kind == BINARY && n == 2 ? "b2" : "b1";
  const char *cfg = kind == CONFIG && n == 2 ? "c2" : (strcmp(arm, "on") == 0 ? "c-on" : "c1");
  if (kind == REMEASURE_OK || kind == REMEASURE_BAD) cfg = "c-on"; /* the gate's on arm */
  const char *drv = kind == DEVICES && n == 1 ? "mesa 23.1" : "mesa 22.3";
  double t = 100.0;
  if (kind == GATE) t = strcmp(arm, "on") == 0 ? 89.9 + 0.1 * pair : 100.0 + 0.2 * pair;
  if (kind == REMEASURE_OK) t = 90.1 + 0.1 * n;  /* mean 90.2: +0.22% */
  if (kind == REMEASURE_BAD) t = 91.9 + 0.1 * n; /* mean 92.0: +2.2% */
  /* The runaway series: its third run trained 30% more splats than its three siblings. */
  int splats = kind == RUNAWAY && n == 2 ? 1300 : 1000;
  snprintf(buf, len,
           "{\"schema\":\"splatsweep.result/1\",\"status\":\"ok\",\"trainer\":{\"name\":"
           "\"splat-train\",\"binary_sha256\":\"%s\",\"shaders_sha256\":\"s1\"},"
           "\"config_sha256\":\"%s\",\"scene\":{\"sha256\":\"scene1\"},\"device\":{\"name\":"
           "\"llvmpipe\",\"driver\":\"%s\",\"kind\":\"cpu\"},\"metrics\":{\"train_s\":%.3f,"
           "\"psnr_db\":30.0,\"iterations\":100,\"splats_final\":%d}}",
           bin, cfg, drv, t, splats);
}

static void setup(void) {
  snprintf(g_dir, sizeof g_dir, "/tmp/sw_test_auditXXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(g_dir));
  snprintf(g_db, sizeof g_db, "%s/a.db", g_dir);
  struct sw_err err = {0};
  struct sw_store_opts so;
  sw_store_opts_default(&so);
  so.synchronous_full = 0;
  sw_store_t *store = NULL;
  ck_assert_msg(sw_store_open(g_db, &so, &store, &err) == 0, "%s", err.msg);
  sw_sched_t *s = NULL;
  ck_assert_int_eq(sw_sched_new(store, NULL, 0, &s, &err), 0);
  for (int k = 0; k < FLEET; k++) {
    char spec[900];
    if (k == GATE)
      snprintf(spec, sizeof spec,
               "{\"name\":\"gate\",\"kind\":\"gate\",\"trainer\":{\"builtin\":{}},\"scene\":{"
               "\"path\":\"/x\"},\"base\":{"
               "\"iterations\":100},\"arms\":{\"off\":{\"radix_scatter\":\"serial\"},\"on\":{"
               "\"radix_scatter\":\"ballot\"}},\"pairs\":{\"n\":3,\"max\":3,\"order\":"
               "\"alternate\"},\"gate\":{\"metric\":\"train_s\",\"direction\":\"lower\",\"rule\":"
               "{\"k\":2,\"floor\":0.01},\"guard\":{\"metric\":\"psnr_db\",\"max_drop\":0.05}}}");
    else
      snprintf(spec, sizeof spec,
               "{\"name\":\"%s\",\"kind\":\"grid\",\"trainer\":{\"builtin\":{}},\"scene\":{"
               "\"path\":\"/x\"},\"base\":{"
               "\"iterations\":100,\"radix_scatter\":\"ballot\"},\"repeats\":%d%s}",
               NAMES[k], k == RUNAWAY ? 4 : 3,
               k == NOWINDOW ? ",\"contamination\":{\"require_windows\":false}" : "");
    ck_assert_msg(sw_sched_submit(s, spec, "test", NULL, 0, &g_id[k], &err) == 0, "%s", err.msg);
  }
  ck_assert_int_eq(sw_sched_worker_hello(s, "w1", NULL, NULL, 0, &err), 0);
  int64_t now = 10;
  int count[N_SWEEPS] = {0};
  for (int guard = 0;; guard++) {
    int all = 1;
    for (int k = 0; k < FLEET; k++) all &= sw_sched_sweep_finished(s, g_id[k], &err) == 1;
    if (all) break;
    ck_assert_int_lt(guard, 60);
    struct sw_lease l;
    ck_assert_int_eq(sw_sched_next(s, "w1", now, &l, &err), 1);
    int kind = kind_of(l.sweep_id);
    for (int r = 0; r < l.n_runs; r++) {
      char res[1000];
      int n = count[kind]++;
      result_for(res, sizeof res, kind, n, l.runs[r].arm, l.pair_index);
      int no_window = kind == NOWINDOW && n == 1;
      if ((kind == BINARY || kind == CONFIG || kind == RUNAWAY) && n == 2)
        g_odd_run[kind] = l.runs[r].run_id;
      if ((kind == NOWINDOW || kind == DEVICES) && n == 1) g_odd_run[kind] = l.runs[r].run_id;
      char *full = fixture_result(res); /* the rest of the contract */
      ck_assert_ptr_nonnull(full);
      struct sw_run_result rr = {.lease_id = l.lease_id,
                                 .epoch = l.epoch,
                                 .worker_id = "w1",
                                 .run_id = l.runs[r].run_id,
                                 .attempt = l.attempt,
                                 .result_json = full,
                                 .pre = QUIET,
                                 .n_pre = 1,
                                 .during = no_window ? NULL : QUIET,
                                 .n_during = no_window ? 0 : 2};
      ck_assert_msg(sw_sched_result(s, &rr, now, &err) == 0, "%s", err.msg);
      free(full);
      now += 10;
    }
    sw_lease_clear(&l);
  }
  /* The fleet series: w1 and w2 take turns, each reporting its own build ("fw1" / "fw2"). */
  ck_assert_msg(
      sw_sched_submit(s,
                      "{\"name\":\"fleet\",\"kind\":\"grid\",\"trainer\":"
                      "{\"builtin\":{}},\"scene\":{\"path\":\"/x\"},\"base\":{\"iterations\":100},"
                      "\"repeats\":4}",
                      "test", NULL, now, &g_id[FLEET], &err) == 0,
      "%s", err.msg);
  ck_assert_int_eq(sw_sched_worker_hello(s, "w2", NULL, NULL, now, &err), 0);
  for (int k = 0; sw_sched_sweep_finished(s, g_id[FLEET], &err) == 0; k++) {
    ck_assert_int_lt(k, 8);
    const char *w = k % 2 ? "w2" : "w1";
    struct sw_lease l;
    ck_assert_int_eq(sw_sched_next(s, w, now, &l, &err), 1);
    char res[1000];
    result_for(res, sizeof res, FLEET, k, l.runs[0].arm, l.pair_index);
    char *bin = strstr(res, "\"binary_sha256\":\"b1\"");
    ck_assert_ptr_nonnull(bin);
    memcpy(bin + strlen("\"binary_sha256\":\""), k % 2 ? "b2" : "b1", 2);
    char *full = fixture_result(res); /* the rest of the contract */
    ck_assert_ptr_nonnull(full);
    struct sw_run_result rr = {.lease_id = l.lease_id,
                               .epoch = l.epoch,
                               .worker_id = w,
                               .run_id = l.runs[0].run_id,
                               .attempt = l.attempt,
                               .result_json = full,
                               .pre = QUIET,
                               .n_pre = 1,
                               .during = QUIET,
                               .n_during = 2};
    ck_assert_msg(sw_sched_result(s, &rr, now, &err) == 0, "%s", err.msg);
    free(full);
    now += 10;
    sw_lease_clear(&l);
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

static json_t *audit(sw_store_t *s, int kind, int *problems) {
  struct sw_err err = {0};
  struct sw_audit_opts o = {.sweep_id = g_id[kind]};
  json_t *root = sw_audit_json(s, &o, problems, &err);
  ck_assert_msg(root != NULL, "%s", err.msg);
  return root;
}

static const json_t *check_of(const json_t *root, const char *name) {
  const json_t *sw = json_array_get(json_object_get(root, "series"), 0);
  size_t i;
  const json_t *c;
  json_array_foreach(json_object_get(sw, "checks"), i,
                     c) if (strcmp(json_string_value(json_object_get(c, "check")), name) ==
                            0) return c;
  return NULL;
}

static const char *status_of(const json_t *root, const char *name) {
  const json_t *c = check_of(root, name);
  ck_assert_msg(c != NULL, "no check %s", name);
  return json_string_value(json_object_get(c, "status"));
}

/* The one run a failed check names. */
static int64_t only_run(const json_t *root, const char *name) {
  const json_t *runs = json_object_get(check_of(root, name), "runs");
  ck_assert_int_eq(json_array_size(runs), 1);
  return json_integer_value(json_object_get(json_array_get(runs, 0), "run"));
}

START_TEST(clean_series_passes) {
  sw_store_t *s = open_ro();
  int problems = -1;
  json_t *root = audit(s, CLEAN, &problems);
  ck_assert_int_eq(problems, 0);
  ck_assert(json_is_true(json_object_get(root, "pass")));
  static const char *const PASS[] = {
      "trainer",   "trainer_before_after", "shaders", "scene", "config", "windows", "devices",
      "model_size"};
  for (size_t i = 0; i < sizeof PASS / sizeof PASS[0]; i++)
    ck_assert_str_eq(status_of(root, PASS[i]), "pass");
  ck_assert_str_eq(status_of(root, "contamination"), "info");
  const json_t *sw = json_array_get(json_object_get(root, "series"), 0);
  ck_assert_int_eq(json_integer_value(json_object_get(sw, "runs")), 3);
  ck_assert_int_eq(json_integer_value(json_object_get(sw, "ok")), 3);
  json_decref(root);
  /* The gate's two arms each have their own config hash: that is not a mismatch. */
  root = audit(s, GATE, &problems);
  ck_assert_int_eq(problems, 0);
  ck_assert_str_eq(status_of(root, "config"), "pass");
  json_decref(root);
  sw_store_close(&s);
}
END_TEST

/* The machines' noise memory reads the gate's off runs per machine: the fixture's gate ran on
 * one worker with off times 100.0 + 0.2 x pair (CV 0.32% over 5 pairs), nothing jumped. */
START_TEST(noise_memory_of_the_machines) {
  sw_store_t *s = open_ro();
  struct sw_err err = {0};
  json_t *nz = sw_noise_json(s, "train_s", &err);
  ck_assert_msg(nz != NULL, "%s", err.msg);
  const json_t *ms = json_object_get(nz, "machines");
  ck_assert_int_ge(json_array_size(ms), 1);
  const json_t *m = json_array_get(ms, 0);
  ck_assert_int_eq(json_integer_value(json_object_get(m, "gates")), 1);
  double cv = json_number_value(json_object_get(m, "cv_recent"));
  ck_assert_msg(cv > 0.001 && cv < 0.01, "cv %g", cv);
  ck_assert(json_is_false(json_object_get(m, "jumped")));
  ck_assert(json_is_number(json_object_get(nz, "cv_plan")));
  ck_assert_int_eq(json_array_size(json_object_get(nz, "jumped")), 0);
  json_decref(nz);
  /* A metric without finished gates: no machines, no plan. */
  nz = sw_noise_json(s, "wall_s", &err);
  ck_assert_int_eq(json_array_size(json_object_get(nz, "machines")), 0);
  ck_assert(json_is_null(json_object_get(nz, "cv_plan")));
  json_decref(nz);
  sw_store_close(&s);
}
END_TEST

START_TEST(changed_trainer_binary_is_flagged) {
  sw_store_t *s = open_ro();
  int problems = 0;
  json_t *root = audit(s, BINARY, &problems);
  ck_assert_int_eq(problems, 2); /* not identical, and first != last */
  ck_assert(json_is_false(json_object_get(root, "pass")));
  ck_assert_str_eq(status_of(root, "trainer"), "fail");
  ck_assert_int_eq(only_run(root, "trainer"), g_odd_run[BINARY]);
  const json_t *r = json_array_get(json_object_get(check_of(root, "trainer"), "runs"), 0);
  char b2[SW_SHA256_HEX_LEN];
  fixture_sha("b2", b2);
  ck_assert_str_eq(json_string_value(json_object_get(r, "value")), b2);
  ck_assert_str_eq(json_string_value(json_object_get(r, "worker")), "w1");
  ck_assert_str_eq(status_of(root, "trainer_before_after"), "fail");
  ck_assert_str_eq(status_of(root, "config"), "pass");
  json_decref(root);
  sw_store_close(&s);
}
END_TEST

/* LAB-PRACTICE rule 7 is about one machine: two machines with different but constant builds
 * pass (the fleet's builds are information), while a machine whose build changed fails. */
START_TEST(per_machine_builds_pass) {
  sw_store_t *s = open_ro();
  int problems = -1;
  json_t *root = audit(s, FLEET, &problems);
  ck_assert_int_eq(problems, 0);
  ck_assert_str_eq(status_of(root, "trainer"), "pass");
  ck_assert_str_eq(status_of(root, "trainer_before_after"), "pass");
  ck_assert_str_eq(status_of(root, "trainer_fleet"), "info");
  ck_assert_ptr_nonnull(strstr(
      json_string_value(json_object_get(check_of(root, "trainer_fleet"), "detail")), "2 distinct"));
  json_decref(root);
  sw_store_close(&s);
}
END_TEST

START_TEST(missing_window_is_flagged) {
  sw_store_t *s = open_ro();
  int problems = 0;
  json_t *root = audit(s, NOWINDOW, &problems);
  ck_assert_int_eq(problems, 1);
  ck_assert_str_eq(status_of(root, "windows"), "fail");
  ck_assert_int_eq(only_run(root, "windows"), g_odd_run[NOWINDOW]);
  ck_assert_ptr_nonnull(
      strstr(json_string_value(json_object_get(check_of(root, "windows"), "detail")), "1 of 3"));
  json_decref(root);
  sw_store_close(&s);
}
END_TEST

/* One model size per configuration: the runaway series' third run trained 1,300 splats where its
 * three siblings of the same config trained 995-1,005: the audit fails and names that run with
 * its size and the median; the gate's arms (three runs each, one size) pass. */
START_TEST(model_size_runaway_is_flagged) {
  sw_store_t *s = open_ro();
  int problems = 0;
  json_t *root = audit(s, RUNAWAY, &problems);
  ck_assert_int_eq(problems, 1);
  ck_assert_str_eq(status_of(root, "model_size"), "fail");
  ck_assert_int_eq(only_run(root, "model_size"), g_odd_run[RUNAWAY]);
  const json_t *c = check_of(root, "model_size");
  const char *v =
      json_string_value(json_object_get(json_array_get(json_object_get(c, "runs"), 0), "value"));
  ck_assert_msg(v && strstr(v, "1300 (+30.0% from its configuration's median 1000)"), "%s",
                v ? v : "(none)");
  ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(c, "detail")), "1 ok run(s)"));
  json_decref(root);
  root = audit(s, GATE, &problems);
  ck_assert_str_eq(status_of(root, "model_size"), "pass");
  json_decref(root);
  sw_store_close(&s);
}
END_TEST

START_TEST(config_mismatch_is_flagged) {
  sw_store_t *s = open_ro();
  int problems = 0;
  json_t *root = audit(s, CONFIG, &problems);
  ck_assert_int_eq(problems, 1);
  ck_assert_str_eq(status_of(root, "config"), "fail");
  ck_assert_int_eq(only_run(root, "config"), g_odd_run[CONFIG]);
  json_decref(root);
  root = audit(s, DEVICES, &problems);
  ck_assert_int_eq(problems, 1);
  ck_assert_str_eq(status_of(root, "devices"), "fail");
  ck_assert_int_eq(only_run(root, "devices"), g_odd_run[DEVICES]);
  json_decref(root);
  sw_store_close(&s);
}
END_TEST

START_TEST(remeasurement_against_the_gate) {
  sw_store_t *s = open_ro();
  struct sw_err err = {0};
  int problems = -1;
  struct sw_audit_opts o = {.sweep_id = g_id[REMEASURE_OK], .reference_id = g_id[GATE]};
  json_t *root = sw_audit_json(s, &o, &problems, &err);
  ck_assert_msg(root != NULL, "%s", err.msg);
  ck_assert_int_eq(problems, 0);
  const json_t *ref = json_object_get(root, "reference");
  ck_assert_double_eq_tol(json_number_value(json_object_get(ref, "gate_mean")), 90.0, 1e-9);
  ck_assert_double_eq_tol(json_number_value(json_object_get(ref, "mean")), 90.2, 1e-9);
  ck_assert_double_eq_tol(json_number_value(json_object_get(ref, "relative_diff")), 0.2 / 90, 1e-9);
  ck_assert_str_eq(json_string_value(json_object_get(ref, "gate_mean_source")),
                   "gate verdict (lab.mean_on)");
  ck_assert_str_eq(status_of(root, "reproduces"), "pass");
  ck_assert_str_eq(status_of(root, "reference_config"), "pass");
  json_decref(root);
  /* A series of another configuration (the clean grid: c1, not the on arm's c-on) is not a
   * re-measurement of the gate: the check fails and names each of its runs. */
  o.sweep_id = g_id[CLEAN];
  root = sw_audit_json(s, &o, &problems, &err);
  ck_assert_msg(root != NULL, "%s", err.msg);
  ck_assert_str_eq(status_of(root, "reference_config"), "fail");
  ck_assert_int_eq(json_array_size(json_object_get(check_of(root, "reference_config"), "runs")), 3);
  json_decref(root);
  /* 2.2% off the gate's mean fails at the default 0.5% and names every re-measured run. */
  o.sweep_id = g_id[REMEASURE_BAD];
  root = sw_audit_json(s, &o, &problems, &err);
  ck_assert_int_eq(problems, 1);
  ck_assert_str_eq(status_of(root, "reproduces"), "fail");
  ck_assert_int_eq(json_array_size(json_object_get(check_of(root, "reproduces"), "runs")), 3);
  json_decref(root);
  o.tolerance = 0.03;
  root = sw_audit_json(s, &o, &problems, &err);
  ck_assert_int_eq(problems, 0);
  json_decref(root);
  sw_store_close(&s);
}
END_TEST

START_TEST(bad_input) {
  sw_store_t *s = open_ro();
  struct sw_err err = {0};
  struct sw_audit_opts o = {.reference_id = g_id[GATE]};
  ck_assert_ptr_null(sw_audit_json(s, &o, NULL, &err)); /* a reference needs the series */
  ck_assert_int_eq(err.code, SW_EINVAL);
  sw_err_clear(&err);
  o.sweep_id = g_id[REMEASURE_OK];
  o.reference_id = g_id[CLEAN]; /* not a gate */
  ck_assert_ptr_null(sw_audit_json(s, &o, NULL, &err));
  ck_assert_int_eq(err.code, SW_EINVAL);
  sw_err_clear(&err);
  o.reference_id = g_id[GATE];
  o.reference_gate = "nosuch";
  ck_assert_ptr_null(sw_audit_json(s, &o, NULL, &err));
  ck_assert_int_eq(err.code, SW_ENOTFOUND);
  ck_assert_ptr_nonnull(strstr(err.msg, "gates: gate"));
  sw_err_clear(&err);
  struct sw_audit_opts unknown = {.sweep_id = 999};
  ck_assert_ptr_null(sw_audit_json(s, &unknown, NULL, &err));
  ck_assert_int_eq(err.code, SW_ENOTFOUND);
  /* The whole store: every series audited, the faulty ones counted. */
  int problems = 0;
  struct sw_audit_opts all = {0};
  json_t *root = sw_audit_json(s, &all, &problems, &err);
  ck_assert_int_eq(json_array_size(json_object_get(root, "series")), N_SWEEPS);
  ck_assert_int_eq(problems, 6); /* the 5 of the faulty series before, and the runaway */
  json_decref(root);
  sw_store_close(&s);
}
END_TEST

START_TEST(command_line_exit_codes) {
  char id_clean[16], id_bin[16], id_ok[16];
  snprintf(id_clean, sizeof id_clean, "%lld", (long long)g_id[CLEAN]);
  snprintf(id_bin, sizeof id_bin, "%lld", (long long)g_id[BINARY]);
  snprintf(id_ok, sizeof id_ok, "%lld", (long long)g_id[REMEASURE_OK]);
  char *a1[] = {"audit", id_clean, "--db", g_db, NULL};
  ck_assert_int_eq(sw_cmd_audit(4, a1), 0);
  char *a2[] = {"audit", id_bin, "--db", g_db, "--format", "json", NULL};
  ck_assert_int_eq(sw_cmd_audit(6, a2), 1);
  char *a3[] = {"audit", "remeasure-ok", "--db", g_db, "--reference", "gate", NULL};
  ck_assert_int_eq(sw_cmd_audit(6, a3), 0);
  char *a4[] = {"audit", "remeasure-bad", "--db", g_db, "--reference", "gate", NULL};
  ck_assert_int_eq(sw_cmd_audit(6, a4), 1);
  char *a5[] = {"audit", "remeasure-bad", "--db", g_db, "--reference",
                "gate",  "--tolerance",   "0.03", NULL};
  ck_assert_int_eq(sw_cmd_audit(8, a5), 0);
  char *a6[] = {"audit", "--db", g_db, "--reference", "gate", NULL};
  ck_assert_int_eq(sw_cmd_audit(5, a6), 2);
  char *a7[] = {"audit", "nosuch", "--db", g_db, NULL};
  ck_assert_int_eq(sw_cmd_audit(4, a7), 2);
  char *a8[] = {"audit", id_ok, "--db", g_db, "--reference", "gate", "--tolerance", "-1", NULL};
  ck_assert_int_eq(sw_cmd_audit(8, a8), 2);
  char *a9[] = {"audit", "--db", "/nonexistent/a.db", NULL};
  ck_assert_int_eq(sw_cmd_audit(3, a9), 2);
}
END_TEST

int main(void) {
  Suite *s = suite_create("audit");
  TCase *tc = tcase_create("store");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, clean_series_passes);
  tcase_add_test(tc, noise_memory_of_the_machines);
  tcase_add_test(tc, changed_trainer_binary_is_flagged);
  tcase_add_test(tc, per_machine_builds_pass);
  tcase_add_test(tc, missing_window_is_flagged);
  tcase_add_test(tc, config_mismatch_is_flagged);
  tcase_add_test(tc, model_size_runaway_is_flagged);
  tcase_add_test(tc, remeasurement_against_the_gate);
  tcase_add_test(tc, bad_input);
  tcase_add_test(tc, command_line_exit_codes);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
