/* test_worker.c: Check suite for the worker's parts that need no coordinator: the load sampler
 * (over a prepared /proc tree), the quiet wait, the spool, the exec runner (command template,
 * {set} expansion, progress lines, result reading, JSON-pointer mapping, exit codes, SIGTERM ->
 * SIGKILL escalation) and scene preparation from a path and from a file:// URL archive. */
#include <archive.h>
#include <archive_entry.h>
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sw_clock.h"
#include "sw_fs.h"
#include "sw_runner.h"
#include "sw_sampler.h"
#include "sw_scene_prep.h"
#include "sw_sha256.h"
#include "sw_spool.h"

#ifndef FAKE_TRAINER
#error "FAKE_TRAINER must name the fake trainer executable"
#endif

static char *tmpdir(void) {
  char *d = strdup("/tmp/sw_test_workerXXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(d));
  return d;
}

static void put(const char *dir, const char *name, const char *text) {
  char p[512];
  snprintf(p, sizeof p, "%s/%s", dir, name);
  struct sw_err err = {0};
  ck_assert_int_eq(sw_fs_write_atomic(p, text, strlen(text), &err), 0);
}

/* A /proc tree with 4 cores. Processes (pid ppid pgrp utime cutime):
 *   100 splatsweep local (self root)         1   100
 *   200 the worker (self)                    100 100  cutime = reaped children
 *   500 trainer leader, 501 its helper        200 500
 *   502 a trainer grandchild in its own group 501 502 (still the trainer's tree)
 *   300 another local worker's trainer        100 300 (not ours: other)
 *   777 a foreign process                     1   777 */
struct fake {
  unsigned long long busy, idle;
  unsigned long long local_ut, worker_ut, worker_cut, tr_a, tr_b, tr_c, other_tr, foreign;
  int trainer_alive;
  double load1;
};

static void proc_file(const char *root, int pid, int ppid, int pgrp, unsigned long long ut,
                      unsigned long long cut, const char *name) {
  char d[512], text[512];
  struct sw_err err = {0};
  snprintf(d, sizeof d, "%s/%d", root, pid);
  sw_fs_mkdir_p(d, &err);
  /* Process names with spaces and parentheses must not confuse the parser. */
  snprintf(text, sizeof text, "%d (%s) S %d %d %d 0 -1 0 0 0 0 0 %llu 0 %llu 0 20 0 1 0\n", pid,
           name, ppid, pgrp, pgrp, ut, cut);
  put(d, "stat", text);
}

static void fake_proc(const char *root, const struct fake *f) {
  char text[512];
  snprintf(text, sizeof text,
           "cpu  %llu 0 0 %llu 0 0 0 0 0 0\ncpu0 1 0 0 1 0 0 0 0\ncpu1 1 0 0 1 0 0 0 0\n"
           "cpu2 1 0 0 1 0 0 0 0\ncpu3 1 0 0 1 0 0 0 0\nintr 1\n",
           f->busy, f->idle);
  put(root, "stat", text);
  snprintf(text, sizeof text, "%.2f 0.50 0.40 1/100 999\n", f->load1);
  put(root, "loadavg", text);
  put(root, "meminfo", "MemTotal: 1000 kB\nMemAvailable: 512 kB\n");
  proc_file(root, 100, 1, 100, f->local_ut, 0, "splatsweep local");
  proc_file(root, 200, 100, 100, f->worker_ut, f->worker_cut, "splatsweep");
  char d[512];
  snprintf(d, sizeof d, "%s/500", root);
  if (f->trainer_alive) {
    proc_file(root, 500, 200, 500, f->tr_a, 0, "my (trainer) x");
    proc_file(root, 501, 500, 500, f->tr_b, 0, "helper");
    proc_file(root, 502, 501, 502, f->tr_c, 0, "escaped");
  } else {
    for (int pid = 500; pid <= 502; pid++) {
      snprintf(d, sizeof d, "%s/%d", root, pid);
      sw_fs_rm_rf(d, NULL);
    }
  }
  proc_file(root, 300, 100, 300, f->other_tr, 0, "other worker's trainer");
  proc_file(root, 777, 1, 777, f->foreign, 0, "other");
}

START_TEST(sampler_separates_trainer_self_and_others) {
  char *root = tmpdir();
  sw_sampler_t *s = NULL;
  struct sw_err err = {0};
  ck_assert_int_eq(sw_sampler_new(root, 200, 100, &s, &err), 0);
  struct sw_load_sample x;
  struct fake f = {.busy = 1000, .idle = 1000, .load1 = 0.25, .trainer_alive = 0};
  fake_proc(root, &f);
  ck_assert_int_eq(sw_sampler_sample(s, 0, &x, &err), 0);
  ck_assert_int_eq(sw_sampler_cores(s), 4);
  ck_assert(x.cpu_total == 0 && x.cpu_other == 0); /* first sample: no interval yet */
  ck_assert_double_eq_tol(x.load1, 0.25, 1e-9);
  ck_assert_double_eq_tol(x.mem_avail, 512.0 * 1024.0, 1e-6);
  ck_assert_int_eq(x.gpu_users, -1); /* no GPU node known: lavapipe opens none */

  /* Idle with the worker busy preparing (40) and the local coordinator (20): self, not other.
   * 400 jiffies over 4 cores = 100 per core. */
  f.busy = 1100, f.idle = 1300, f.worker_ut = 40, f.local_ut = 20, f.foreign = 10;
  fake_proc(root, &f);
  ck_assert_int_eq(sw_sampler_sample(s, 1000, &x, &err), 0);
  ck_assert_double_eq_tol(x.cpu_total, 1.0, 1e-9);
  ck_assert_double_eq_tol(x.cpu_self, 0.6, 1e-9);
  ck_assert_double_eq_tol(x.cpu_trainer, 0.0, 1e-9);
  ck_assert_double_eq_tol(x.cpu_other, 0.4, 1e-9);

  /* The trainer starts: its group, and a grandchild that left the group, are the trainer. */
  f.trainer_alive = 1;
  fake_proc(root, &f);
  ck_assert_int_eq(sw_sampler_trainer_begin(s, 500, &err), 0);
  f.busy = 1400, f.idle = 1400, f.tr_a = 150, f.tr_b = 50, f.tr_c = 50, f.worker_ut = 50;
  fake_proc(root, &f);
  ck_assert_int_eq(sw_sampler_sample(s, 2000, &x, &err), 0);
  ck_assert_double_eq_tol(x.cpu_total, 3.0, 1e-9);
  ck_assert_double_eq_tol(x.cpu_trainer, 2.5, 1e-9);
  ck_assert_double_eq_tol(x.cpu_self, 0.1, 1e-9);
  ck_assert_double_eq_tol(x.cpu_other, 0.4, 1e-9);
  ck_assert(sw_sampler_is_ours(s, 501) && sw_sampler_is_ours(s, 502));
  ck_assert(sw_sampler_is_ours(s, 200) && sw_sampler_is_ours(s, 100));
  ck_assert(!sw_sampler_is_ours(s, 777) && !sw_sampler_is_ours(s, 300));

  /* The trainer's last interval: it used 100 more jiffies, exited and was reaped by the
   * worker, whose cutime now holds its whole 350. Still the trainer's, not "other". */
  f.trainer_alive = 0, f.worker_cut = 350, f.busy = 1500, f.idle = 1700;
  fake_proc(root, &f);
  ck_assert_int_eq(sw_sampler_sample(s, 3000, &x, &err), 0);
  ck_assert_double_eq_tol(x.cpu_total, 1.0, 1e-9);
  ck_assert_double_eq_tol(x.cpu_trainer, 1.0, 1e-9);
  ck_assert_double_eq_tol(x.cpu_other, 0.0, 1e-9);
  ck_assert_int_eq(sw_sampler_trainer_end(s, &err), 0);

  /* Afterwards the reaped time is never anyone's again; another local worker's trainer is. */
  f.busy = 1700, f.idle = 1900, f.other_tr = 200;
  fake_proc(root, &f);
  ck_assert_int_eq(sw_sampler_sample(s, 4000, &x, &err), 0);
  ck_assert_double_eq_tol(x.cpu_self, 0.0, 1e-9);
  ck_assert_double_eq_tol(x.cpu_trainer, 0.0, 1e-9);
  ck_assert_double_eq_tol(x.cpu_other, 2.0, 1e-9);
  sw_sampler_destroy(&s);
  ck_assert_ptr_null(s);
  sw_sampler_destroy(NULL);
  /* A missing /proc file is a clean error naming it. */
  ck_assert_int_eq(sw_sampler_new("/nonexistent-proc", 0, 0, &s, &err), 0);
  ck_assert_int_eq(sw_sampler_sample(s, 0, &x, &err), SW_EIO);
  ck_assert_ptr_nonnull(strstr(err.msg, "/nonexistent-proc/stat"));
  sw_sampler_destroy(&s);
  sw_fs_rm_rf(root, NULL);
  free(root);
}
END_TEST

/* The real /proc: this test process busy-loops in a child (a foreign process to a sampler whose
 * self is a different pid) and the sampler sees it as "other". */
START_TEST(sampler_sees_a_real_hog) {
  sw_sampler_t *s = NULL;
  struct sw_err err = {0};
  ck_assert_int_eq(sw_sampler_new("/proc", 1, 1, &s, &err), 0);
  struct sw_load_sample x;
  ck_assert_int_eq(sw_sampler_sample(s, sw_clock_mono_ms(), &x, &err), 0);
  pid_t pid = fork();
  if (pid == 0) {
    int64_t end = sw_clock_mono_ms() + 1500;
    volatile unsigned long spin = 0;
    while (sw_clock_mono_ms() < end) spin++;
    _exit(0);
  }
  struct timespec ts = {1, 200000000L};
  nanosleep(&ts, NULL);
  ck_assert_int_eq(sw_sampler_sample(s, sw_clock_mono_ms(), &x, &err), 0);
  waitpid(pid, NULL, 0);
  ck_assert_msg(x.cpu_other > 0.7, "a busy core must show as other: %.2f", x.cpu_other);
  sw_sampler_destroy(&s);
}
END_TEST

static struct sw_load_sample at(int64_t t, double other) {
  return (struct sw_load_sample){.t_ms = t, .load1 = 0.2, .cpu_other = other, .gpu_users = -1};
}

START_TEST(quiet_wait_needs_settle_time_and_gives_up) {
  struct sw_quiet q;
  const struct sw_quiet_rules rules = {.cpu_other_max = 0.5,
                                       .cpu_other_mean_max = 0.2,
                                       .over_max_ms = 2000,
                                       .settle_ms = 3000,
                                       .max_wait_ms = 20000,
                                       .gpu_foreign = 1};
  sw_quiet_begin(&q, &rules, 0);
  struct sw_load_sample s = at(0, 0.0);
  ck_assert_int_eq(sw_quiet_feed(&q, &s), SW_QUIET_WAIT);
  s = at(1000, 0.9); /* one second's spike: not sustained, and the mean stays low */
  ck_assert_int_eq(sw_quiet_feed(&q, &s), SW_QUIET_WAIT);
  s = at(2000, 0.0);
  ck_assert_int_eq(sw_quiet_feed(&q, &s), SW_QUIET_WAIT);
  s = at(3000, 0.0); /* 3 s of window, mean 0.3: not yet */
  ck_assert_int_eq(sw_quiet_feed(&q, &s), SW_QUIET_WAIT);
  s = at(4000, 0.0); /* the window [1000, 4000]: mean 0.0 after the spike left it */
  ck_assert_int_eq(sw_quiet_feed(&q, &s), SW_QUIET_READY);
  /* A foreign process on the GPU keeps the machine busy whatever the CPU says. */
  sw_quiet_begin(&q, &rules, 0);
  for (int64_t t = 0; t <= 5000; t += 1000) {
    s = at(t, 0.0);
    s.gpu_users = 1;
    ck_assert_int_eq(sw_quiet_feed(&q, &s), SW_QUIET_WAIT);
  }
  /* A sustained hog never settles; the wait gives up at max_wait. */
  sw_quiet_begin(&q, &rules, 0);
  for (int64_t t = 0; t < 20000; t += 1000) {
    s = at(t, 1.0);
    ck_assert_int_eq(sw_quiet_feed(&q, &s), SW_QUIET_WAIT);
  }
  s = at(20000, 1.0);
  ck_assert_int_eq(sw_quiet_feed(&q, &s), SW_QUIET_GAVE_UP);
  /* load1 counts only when a limit is set. */
  struct sw_quiet_rules with_load = rules;
  with_load.load1_max = 1.5;
  sw_quiet_begin(&q, &with_load, 0);
  for (int64_t t = 0; t <= 4000; t += 1000) {
    s = at(t, 0.0);
    s.load1 = 3.0;
    ck_assert_int_eq(sw_quiet_feed(&q, &s), SW_QUIET_WAIT);
  }
  sw_quiet_begin(&q, &rules, 0);
  int state = SW_QUIET_WAIT;
  for (int64_t t = 0; t <= 4000; t += 1000) {
    s = at(t, 0.0);
    s.load1 = 3.0;
    state = sw_quiet_feed(&q, &s);
  }
  ck_assert_int_eq(state, SW_QUIET_READY);
}
END_TEST

static int seen;
static void count_cb(void *ctx, uint64_t run, uint32_t attempt, uint64_t lease, const void *f,
                     size_t len) {
  (void)ctx;
  (void)lease;
  seen++;
  ck_assert(run == 7 || run == 8 || run == 9);
  ck_assert_uint_eq(attempt, run == 8 ? 2 : 1);
  ck_assert_uint_eq(len, 5);
  ck_assert_int_eq(memcmp(f, "frame", 5), 0);
}

START_TEST(spool_keeps_frames_until_acknowledged) {
  char *dir = tmpdir();
  char sub[512];
  snprintf(sub, sizeof sub, "%s/spool", dir);
  sw_spool_t *sp = NULL;
  struct sw_err err = {0};
  ck_assert_int_eq(sw_spool_open(sub, &sp, &err), 0);
  ck_assert_int_eq(sw_spool_put(sp, 7, 1, 3, "frame", 5, &err), 0);
  ck_assert_int_eq(sw_spool_put(sp, 8, 2, 4, "frame", 5, &err), 0);
  ck_assert_int_eq(sw_spool_put(sp, 9, 1, 4, "frame", 5, &err), 0);
  ck_assert_int_eq(sw_spool_put(sp, 7, 1, 3, "frame", 5, &err), 0); /* replaces */
  put(sub, "unrelated.txt", "x");
  ck_assert_int_eq(sw_spool_count(sp), 3);
  seen = 0;
  ck_assert_int_eq(sw_spool_foreach(sp, count_cb, NULL), 3);
  ck_assert_int_eq(seen, 3);
  /* A restarted worker (new handle on the same directory) sees what was not acknowledged. */
  sw_spool_close(&sp);
  ck_assert_int_eq(sw_spool_open(sub, &sp, &err), 0);
  ck_assert_int_eq(sw_spool_remove(sp, 7, 1), 1);
  ck_assert_int_eq(sw_spool_remove(sp, 7, 1), 0);
  ck_assert_int_eq(sw_spool_remove_lease(sp, 4), 2);
  ck_assert_int_eq(sw_spool_count(sp), 0);
  sw_spool_close(&sp);
  sw_spool_close(NULL);
  sw_fs_rm_rf(dir, NULL);
  free(dir);
}
END_TEST

struct prog {
  int n;
  uint64_t last_iter;
};
static void prog_cb(void *ctx, const struct sw_runner_progress *p) {
  struct prog *pr = ctx;
  pr->n++;
  pr->last_iter = p->iter;
}

/* Runs a trainer to the end, polling like the worker does. */
static int run_to_end(const struct sw_runner_opts *o, struct prog *pr, int stop_after_ms,
                      char **result, char **error, double *wall) {
  sw_runner_t *r = NULL;
  struct sw_err err = {0};
  int rc = sw_runner_start(o, sw_clock_mono_ms(), &r, &err);
  ck_assert_msg(rc == 0, "start: %s", err.msg);
  int64_t t0 = sw_clock_mono_ms();
  int stopped = 0;
  for (;;) {
    int64_t t = sw_clock_mono_ms();
    sw_runner_read(r, prog_cb, pr);
    if (stop_after_ms >= 0 && !stopped && t - t0 >= stop_after_ms) {
      sw_runner_stop(r, t);
      stopped = 1;
    }
    if (sw_runner_check(r, t)) break;
    ck_assert_msg(t - t0 < 20000, "trainer did not finish");
    struct timespec ts = {0, 20 * 1000000L};
    nanosleep(&ts, NULL);
  }
  sw_runner_read(r, prog_cb, pr);
  ck_assert_int_eq(sw_runner_pgid(r), 0);
  int status;
  sw_runner_outcome(r, &status, wall, result, error);
  sw_runner_destroy(&r);
  ck_assert_ptr_null(r);
  return status;
}

static char *exec_trainer(const char *extra_exec) {
  char *t = malloc(1024);
  snprintf(t, 1024,
           "{\"exec\":{\"command\":[\"%s\",\"train\",\"--scene\",\"{scene}\",\"--out\",\"{out}\","
           "\"{set}\",\"--progress\"]%s}}",
           FAKE_TRAINER, extra_exec);
  return t;
}

START_TEST(exec_runner_runs_the_contract) {
  char *dir = tmpdir();
  char out[512];
  snprintf(out, sizeof out, "%s/run1", dir);
  char *trainer = exec_trainer("");
  struct sw_runner_opts o = {.trainer_json = trainer,
                             .config_json = "{\"arm\":\"on\",\"seed\":3,\"fake_effect\":-0.1,"
                                            "\"fake_sleep_s\":0.5,\"flag\":true}",
                             .scene_dir = "/some/scene",
                             .out_dir = out,
                             .grace_ms = 1000};
  struct prog pr = {0};
  char *result = NULL, *error = NULL;
  double wall = 0;
  ck_assert_int_eq(run_to_end(&o, &pr, -1, &result, &error, &wall), 0);
  ck_assert_ptr_null(error);
  ck_assert_ptr_nonnull(result);
  ck_assert_int_ge(pr.n, 2);
  ck_assert_uint_eq(pr.last_iter, 1000);
  ck_assert(wall >= 0.4);
  json_t *j = json_loads(result, 0, NULL);
  ck_assert_ptr_nonnull(j);
  ck_assert_str_eq(json_string_value(json_object_get(j, "schema")), "splatsweep.result/1");
  /* {set} passed every key, numbers and booleans as JSON writes them; {scene} expanded. */
  json_t *cfg = json_object_get(j, "config");
  ck_assert_str_eq(json_string_value(json_object_get(cfg, "seed")), "3");
  ck_assert_str_eq(json_string_value(json_object_get(cfg, "flag")), "true");
  ck_assert_str_eq(json_string_value(json_object_get(cfg, "fake_effect")), "-0.1");
  ck_assert_str_eq(json_string_value(json_object_get(json_object_get(j, "scene"), "path")),
                   "/some/scene");
  json_decref(j);
  free(result);
  /* The {config} file holds the resolved config. */
  char cfgpath[600], *text = NULL;
  snprintf(cfgpath, sizeof cfgpath, "%s/config.yaml", out);
  ck_assert_int_eq(sw_fs_read_all(cfgpath, &text, NULL, NULL), 0);
  ck_assert_ptr_nonnull(strstr(text, "\"seed\": 3"));
  free(text);
  free(trainer);
  sw_fs_rm_rf(dir, NULL);
  free(dir);
}
END_TEST

START_TEST(exec_runner_reports_failures) {
  char *dir = tmpdir();
  char out[512];
  char *trainer = exec_trainer("");
  struct prog pr = {0};
  char *result = NULL, *error = NULL;
  double wall;
  struct sw_runner_opts o = {.trainer_json = trainer, .scene_dir = "", .grace_ms = 500};
  /* Divergence: exit 4, no result, the trainer's stderr in the error. */
  snprintf(out, sizeof out, "%s/nan", dir);
  o.out_dir = out;
  o.config_json = "{\"fake_nan\":1}";
  ck_assert_int_eq(run_to_end(&o, &pr, -1, &result, &error, &wall), 4);
  ck_assert_ptr_null(result);
  ck_assert_ptr_nonnull(strstr(error, "diverged"));
  ck_assert_ptr_nonnull(strstr(error, "NaN"));
  free(error);
  /* A crash: 128 + SIGSEGV. */
  snprintf(out, sizeof out, "%s/crash", dir);
  o.config_json = "{\"fake_crash\":1}";
  ck_assert_int_eq(run_to_end(&o, &pr, -1, &result, &error, &wall), 128 + 11);
  free(error);
  /* Stop: SIGTERM is honoured with 143. */
  snprintf(out, sizeof out, "%s/term", dir);
  o.config_json = "{\"fake_hang\":1}";
  ck_assert_int_eq(run_to_end(&o, &pr, 200, &result, &error, &wall), 143);
  free(error);
  /* A trainer that ignores SIGTERM is killed after the grace period. */
  snprintf(out, sizeof out, "%s/kill", dir);
  o.config_json = "{\"fake_hang\":1,\"fake_ignore_term\":1}";
  ck_assert_int_eq(run_to_end(&o, &pr, 200, &result, &error, &wall), 128 + 9);
  ck_assert(wall >= 0.6); /* 200 ms + 500 ms grace */
  free(error);
  /* exec.timeout_s stops a trainer that runs too long (SIGTERM honoured: 143). */
  free(trainer);
  trainer = exec_trainer(",\"timeout_s\":0.3");
  o.trainer_json = trainer;
  snprintf(out, sizeof out, "%s/timeout", dir);
  o.config_json = "{\"fake_hang\":1}";
  ck_assert_int_eq(run_to_end(&o, &pr, -1, &result, &error, &wall), 143);
  ck_assert(wall >= 0.3);
  free(error);
  /* A program that does not exist: 127 with the reason. */
  free(trainer);
  trainer = strdup("{\"exec\":{\"command\":[\"/nonexistent/trainer\",\"{out}\"]}}");
  o.trainer_json = trainer;
  o.config_json = "{}";
  snprintf(out, sizeof out, "%s/missing", dir);
  ck_assert_int_eq(run_to_end(&o, &pr, -1, &result, &error, &wall), 127);
  ck_assert_ptr_nonnull(strstr(error, "cannot execute"));
  free(error);
  /* Bad specs are refused before anything starts. */
  sw_runner_t *r = NULL;
  struct sw_err err = {0};
  o.trainer_json = "{\"exec\":{\"command\":[]}}";
  ck_assert_int_eq(sw_runner_start(&o, 0, &r, &err), SW_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "trainer.exec.command"));
  sw_err_clear(&err);
  o.trainer_json = "{\"builtin\":{}}";
  o.splat_train = NULL;
  ck_assert_int_eq(sw_runner_start(&o, 0, &r, &err), SW_EINVAL);
  ck_assert_ptr_null(r);
  free(trainer);
  sw_fs_rm_rf(dir, NULL);
  free(dir);
}
END_TEST

START_TEST(exec_runner_maps_foreign_results) {
  char *dir = tmpdir();
  char out[512];
  snprintf(out, sizeof out, "%s/foreign", dir);
  char *trainer =
      exec_trainer(",\"result\":\"{out}/result.json\",\"env\":{\"FAKE_ECHO\":7},"
                   "\"map\":{\"train_s\":\"/timing/seconds\",\"psnr_db\":\"/quality/psnr\"}");
  struct sw_runner_opts o = {.trainer_json = trainer,
                             .config_json = "{\"fake_foreign\":1,\"fake_base\":42,\"fake_cv\":0}",
                             .scene_dir = "",
                             .out_dir = out};
  struct prog pr = {0};
  char *result = NULL, *error = NULL;
  double wall;
  ck_assert_int_eq(run_to_end(&o, &pr, -1, &result, &error, &wall), 0);
  ck_assert_ptr_null(error);
  json_t *j = json_loads(result, 0, NULL);
  ck_assert_ptr_nonnull(j);
  ck_assert_double_eq_tol(
      json_number_value(json_object_get(json_object_get(j, "metrics"), "train_s")), 42.0, 1e-9);
  ck_assert_ptr_nonnull(json_object_get(json_object_get(j, "foreign"), "timing"));
  /* exec.env reached the trainer, a number as its text. */
  ck_assert_str_eq(json_string_value(json_object_get(json_object_get(j, "foreign"), "fake_echo")),
                   "7");
  json_decref(j);
  free(result);
  free(trainer);
  /* A pointer that names nothing makes the run fail with the pointer in the message. */
  trainer = exec_trainer(",\"map\":{\"train_s\":\"/timing/nope\"}");
  o.trainer_json = trainer;
  snprintf(out, sizeof out, "%s/foreign2", dir);
  ck_assert_int_eq(run_to_end(&o, &pr, -1, &result, &error, &wall), 0);
  ck_assert_ptr_null(result);
  ck_assert_ptr_nonnull(strstr(error, "/timing/nope"));
  free(error);
  free(trainer);
  sw_fs_rm_rf(dir, NULL);
  free(dir);
}
END_TEST

START_TEST(json_pointer_follows_rfc6901) {
  json_t *doc = json_loads("{\"a\":{\"b/c\":[10,{\"~k\":5}]},\"\":1}", 0, NULL);
  ck_assert_ptr_eq(sw_json_pointer(doc, ""), doc);
  ck_assert_int_eq(json_integer_value(sw_json_pointer(doc, "/a/b~1c/0")), 10);
  ck_assert_int_eq(json_integer_value(sw_json_pointer(doc, "/a/b~1c/1/~0k")), 5);
  ck_assert_int_eq(json_integer_value(sw_json_pointer(doc, "/")), 1);
  ck_assert_ptr_null(sw_json_pointer(doc, "/a/b~1c/2"));
  ck_assert_ptr_null(sw_json_pointer(doc, "/a/b~1c/01"));
  ck_assert_ptr_null(sw_json_pointer(doc, "a"));
  ck_assert_ptr_null(sw_json_pointer(doc, "/a/~2"));
  json_decref(doc);
}
END_TEST

START_TEST(scene_prep_path_url_and_errors) {
  char *dir = tmpdir();
  char cache[512], scene[512], path[4096];
  snprintf(cache, sizeof cache, "%s/cache", dir);
  snprintf(scene, sizeof scene, "%s/scene", dir);
  struct sw_err err = {0};
  ck_assert_int_eq(sw_fs_mkdir_p(scene, &err), 0);
  char spec[1024];
  snprintf(spec, sizeof spec, "{\"path\":\"%s\"}", scene);
  ck_assert_int_eq(sw_scene_prepare(spec, cache, NULL, path, sizeof path, &err), 0);
  ck_assert_str_eq(path, scene);
  ck_assert_int_eq(sw_scene_prepare("{}", cache, NULL, path, sizeof path, &err), 0);
  ck_assert_str_eq(path, "");
  ck_assert_int_eq(
      sw_scene_prepare("{\"path\":\"/nonexistent/scene\"}", cache, NULL, path, sizeof path, &err),
      SW_ENOTFOUND);
  sw_err_clear(&err);
  /* A tar archive holding scene/transforms_train.json, fetched from a file:// URL. */
  char cmd[2048], tarpath[600], hex[SW_SHA256_HEX_LEN];
  put(scene, "transforms_train.json", "{\"frames\":[]}");
  snprintf(tarpath, sizeof tarpath, "%s/scene.tar", dir);
  snprintf(cmd, sizeof cmd, "tar -C %s -cf %s scene", dir, tarpath);
  ck_assert_int_eq(system(cmd), 0);
  ck_assert_int_eq(sw_sha256_file(tarpath, hex, &err), 0);
  snprintf(spec, sizeof spec, "{\"url\":\"file://%s\",\"sha256\":\"%s\"}", tarpath, hex);
  ck_assert_msg(sw_scene_prepare(spec, cache, NULL, path, sizeof path, &err) == 0, "%s", err.msg);
  ck_assert_ptr_nonnull(strstr(path, hex));
  char probe[4200];
  snprintf(probe, sizeof probe, "%s/transforms_train.json", path);
  ck_assert(sw_fs_exists(probe));
  /* A wrong checksum is refused. */
  snprintf(spec, sizeof spec, "{\"url\":\"file://%s\",\"sha256\":\"%064d\"}", tarpath, 0);
  ck_assert_int_eq(sw_scene_prepare(spec, cache, NULL, path, sizeof path, &err), SW_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "sha256"));
  sw_err_clear(&err);
  ck_assert_int_eq(sw_scene_prepare("[1]", cache, NULL, path, sizeof path, &err), SW_EINVAL);
  sw_err_clear(&err);
  /* An archive whose entry climbs out of the directory ("../evil") is refused. */
  char evil[600];
  snprintf(evil, sizeof evil, "%s/evil.tar", dir);
  struct archive *a = archive_write_new();
  archive_write_set_format_pax_restricted(a);
  ck_assert_int_eq(archive_write_open_filename(a, evil), ARCHIVE_OK);
  struct archive_entry *e = archive_entry_new();
  archive_entry_set_pathname(e, "../evil.txt");
  archive_entry_set_size(e, 4);
  archive_entry_set_filetype(e, AE_IFREG);
  archive_entry_set_perm(e, 0644);
  archive_write_header(a, e);
  archive_write_data(a, "evil", 4);
  archive_entry_free(e);
  archive_write_close(a);
  archive_write_free(a);
  ck_assert_int_eq(sw_sha256_file(evil, hex, &err), 0);
  snprintf(spec, sizeof spec, "{\"url\":\"file://%s\",\"sha256\":\"%s\"}", evil, hex);
  ck_assert_int_eq(sw_scene_prepare(spec, cache, NULL, path, sizeof path, &err), SW_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "escapes"));
  snprintf(probe, sizeof probe, "%s/evil.txt", cache);
  ck_assert(!sw_fs_exists(probe));
  sw_fs_rm_rf(dir, NULL);
  free(dir);
}
END_TEST

int main(void) {
  Suite *s = suite_create("worker");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, sampler_separates_trainer_self_and_others);
  tcase_add_test(tc, sampler_sees_a_real_hog);
  tcase_add_test(tc, quiet_wait_needs_settle_time_and_gives_up);
  tcase_add_test(tc, spool_keeps_frames_until_acknowledged);
  tcase_add_test(tc, exec_runner_runs_the_contract);
  tcase_add_test(tc, exec_runner_reports_failures);
  tcase_add_test(tc, exec_runner_maps_foreign_results);
  tcase_add_test(tc, json_pointer_follows_rfc6901);
  tcase_add_test(tc, scene_prep_path_url_and_errors);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
