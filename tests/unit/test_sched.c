/* test_sched.c: Check suite for the scheduler (coordinator/sw_sched.h), driven with fake time and
 * fake workers against a real on-disk store: pair orders, one worker per pair, lease expiry and
 * re-queue, stale and duplicate results, fairness between sweeps, placement, poison pairs,
 * contamination replacements, environment changes inside a pair, sequential extension, grids and
 * a coordinator restart. */
#include <check.h>
#include <malloc.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fault_vfs.h"
#include "fixture_result.h"
#include "sw_fs.h"
#include "sw_sched.h"
#include "sw_spec.h"
#include "sw_store.h"

static char g_dir[64];
static char g_db[128];

static void setup(void) {
  snprintf(g_dir, sizeof g_dir, "/tmp/sw_test_schedXXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(g_dir));
  snprintf(g_db, sizeof g_db, "%s/s.db", g_dir);
}

static void teardown(void) { sw_fs_rm_rf(g_dir, NULL); }

struct env {
  sw_store_t *store;
  sw_sched_t *sched;
  struct sw_err err;
};

/* env_open with the store's options given (so: NULL = the tests' defaults below). */
static void env_open_with(struct env *e, const struct sw_store_opts *so_in, int64_t ttl,
                          int max_attempts, int64_t now) {
  memset(e, 0, sizeof *e);
  struct sw_store_opts so;
  sw_store_opts_default(&so);
  so.synchronous_full = 0; /* tests do not need fsync per commit */
  if (so_in) so = *so_in;
  ck_assert_msg(sw_store_open(g_db, &so, &e->store, &e->err) == 0, "%s", e->err.msg);
  struct sw_sched_opts o;
  sw_sched_opts_default(&o);
  o.lease_ttl_ms = ttl;
  o.max_attempts = max_attempts;
  ck_assert_msg(sw_sched_new(e->store, &o, now, &e->sched, &e->err) == 0, "%s", e->err.msg);
}

static void env_open(struct env *e, int64_t ttl, int max_attempts, int64_t now) {
  env_open_with(e, NULL, ttl, max_attempts, now);
}

static void env_close(struct env *e) {
  sw_sched_destroy(&e->sched);
  ck_assert_ptr_null(e->sched);
  sw_store_close(&e->store);
}

/* A gate spec in the normalised JSON form; extra is spliced in as more top-level members. */
static int64_t submit_gate(struct env *e, const char *name, int n, int max, const char *extra,
                           int64_t now) {
  char json[2048];
  snprintf(
      json, sizeof json,
      "{\"name\":\"%s\",\"kind\":\"gate\",\"trainer\":{\"builtin\":{}},\"scene\":{\"path\":\"/x\"},"
      "\"base\":{\"iterations\":100,\"seed\":42},"
      "\"arms\":{\"off\":{\"radix_scatter\":\"serial\"},\"on\":{\"radix_scatter\":\"ballot\"}},"
      "\"pairs\":{\"n\":%d,\"max\":%d,\"order\":\"alternate\",\"sequential\":false},"
      "\"gate\":{\"metric\":\"train_s\",\"direction\":\"lower\",\"rule\":{\"k\":2.0,"
      "\"floor\":0.01},\"guard\":{\"metric\":\"psnr_db\",\"max_drop\":0.05}},"
      "\"contamination\":{\"require_windows\":true,\"rerun_once\":true}%s%s}",
      name, n, max, extra ? "," : "", extra ? extra : "");
  int64_t id = 0;
  ck_assert_msg(sw_sched_submit(e->sched, json, "test", NULL, now, &id, &e->err) == 0, "%s",
                e->err.msg);
  ck_assert_int_gt(id, 0);
  return id;
}

/* A worker whose fingerprint names no hostname: the scheduler takes its id for its machine, so
 * these workers spread as separate machines. */
static void hello(struct env *e, const char *id, const char *labels, int64_t now) {
  ck_assert_msg(sw_sched_worker_hello(e->sched, id, "{\"cores\":8}", labels, now, &e->err) == 0,
                "%s", e->err.msg);
}

/* A worker on machine host (several workers may share one, e.g. one per GPU). */
static void hello_on(struct env *e, const char *id, const char *host, int64_t now) {
  char fp[128];
  snprintf(fp, sizeof fp, "{\"hostname\":\"%s\",\"cores\":8}", host);
  ck_assert_msg(sw_sched_worker_hello(e->sched, id, fp, "{}", now, &e->err) == 0, "%s", e->err.msg);
}

/* 1: fake runs report a foreign trainer's mapped result (metrics and "foreign" only) that also
 * carries custom_s, a metric outside the contract (gate_metric_outside_the_columns). */
static int g_mapped_results;

/* Metrics of a fake run: the on arm is 5% faster, with a little deterministic noise. `extra` is
 * more top-level members (text ending in a comma, or ""). A contract result (fixture_result.h),
 * or a mapped one when g_mapped_results is set. */
static char *fake_result_with(const char *arm, int k, double on_factor, const char *extra) {
  double base = 100.0 * (1.0 + 0.002 * ((k * 7) % 5 - 2));
  double t = strcmp(arm, "on") == 0 ? base * on_factor : base;
  double psnr = 30.0 + 0.01 * ((k * 3) % 4);
  size_t cap = strlen(extra) + 2048;
  char *buf = malloc(cap);
  if (g_mapped_results) {
    snprintf(
        buf, cap,
        "{%s\"schema\":\"splatsweep.result/1\",\"status\":\"ok\",\"metrics\":{\"train_s\":%.6f,"
        "\"psnr_db\":%.6f,\"ssim\":0.9,\"custom_s\":%.6f},\"foreign\":{\"seconds\":%.6f}}",
        extra, t, psnr, 2 * t, t);
    return buf;
  }
  snprintf(buf, cap,
           "{%s\"trainer\":{\"binary_sha256\":\"aa\",\"shaders_sha256\":\"bb\"},"
           "\"config_sha256\":\"cc\",\"scene\":{\"sha256\":\"dd\"},\"metrics\":{\"train_s\":%.6f,"
           "\"wall_s\":%.6f,\"iterations\":100,\"psnr_db\":%.6f,\"ssim\":0.9,\"splats_final\":1000,"
           "\"splats_mean\":800,\"gpu_busy_frac\":0.7},\"kernels\":[{\"name\":\"adam\",\"calls\":"
           "100,\"gpu_ms\":1.5,\"share\":0.3}],\"checkpoints\":[{\"iter\":50,\"train_s\":1,"
           "\"psnr_db\":20,\"splats\":500}]}",
           extra, t, t + 1, psnr);
  char *full = fixture_result(buf);
  free(buf);
  return full;
}

static char *fake_result(const char *arm, int k, double on_factor) {
  return fake_result_with(arm, k, on_factor, "");
}

static const struct sw_window_sample QUIET[3] = {
    {.t_ms = 0, .load1 = 0.5, .cpu_other = 0.05, .cpu_total = 1.0, .mem_avail = 1e9},
    {.t_ms = 1000, .load1 = 0.6, .cpu_other = 0.10, .cpu_total = 1.0, .mem_avail = 1e9},
    {.t_ms = 2000, .load1 = 0.6, .cpu_other = 0.05, .cpu_total = 1.0, .mem_avail = 1e9}};
/* A sustained burst during the run: something took 1.2 cores for 4 s of an 11 s run (more
 * than over_max_s above cpu_other_max, and a mean above cpu_other_mean_max). */
#define IDLE_S(t)                                                                                  \
  { .t_ms = (t), .load1 = 0.6, .cpu_other = 0.05, .cpu_total = 1.0, .mem_avail = 1e9 }
#define HOG_S(t)                                                                                   \
  { .t_ms = (t), .load1 = 2.0, .cpu_other = 1.20, .cpu_total = 2.2, .mem_avail = 1e9 }
static const struct sw_window_sample BUSY[12] = {
    IDLE_S(0),   IDLE_S(1000), IDLE_S(2000), IDLE_S(3000), HOG_S(4000),   HOG_S(5000),
    HOG_S(6000), HOG_S(7000),  IDLE_S(8000), IDLE_S(9000), IDLE_S(10000), IDLE_S(11000)};
#define N_BUSY ((int)(sizeof BUSY / sizeof *BUSY))

/* Delivers the result of run r of lease l. */
static int deliver(struct env *e, const struct sw_lease *l, const char *worker, int r, int exit_st,
                   const struct sw_window_sample *during, int n_during, int k, double on_factor,
                   int64_t now) {
  char *res = fake_result(l->runs[r].arm, k, on_factor);
  struct sw_run_result rr = {.lease_id = l->lease_id,
                             .epoch = l->epoch,
                             .worker_id = worker,
                             .run_id = l->runs[r].run_id,
                             .attempt = l->attempt,
                             .exit_status = exit_st,
                             .result_json = exit_st == 0 ? res : NULL,
                             .error_text = exit_st ? "trainer crashed" : NULL,
                             .pre = QUIET,
                             .n_pre = 1,
                             .during = during,
                             .n_during = n_during,
                             .quiet = 1};
  sw_err_clear(&e->err);
  int rc = sw_sched_result(e->sched, &rr, now, &e->err);
  free(res);
  return rc;
}

/* Runs a whole lease: both runs quiet, then LeaseDone. */
static void run_lease(struct env *e, const struct sw_lease *l, const char *worker, int k,
                      double on_factor, int64_t now) {
  for (int r = 0; r < l->n_runs; r++)
    ck_assert_msg(deliver(e, l, worker, r, 0, QUIET, 3, k, on_factor, now) == 0, "%s", e->err.msg);
  ck_assert_msg(sw_sched_lease_done(e->sched, l->lease_id, l->epoch, worker, now, &e->err) == 0,
                "%s", e->err.msg);
}

static int64_t q1(struct env *e, const char *sql) {
  sqlite3_stmt *st;
  ck_assert_int_eq(sqlite3_prepare_v2(sw_store_db(e->store), sql, -1, &st, NULL), SQLITE_OK);
  ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
  int64_t v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return v;
}

START_TEST(alternate_orders_three_workers_five_pairs) {
  struct env e;
  env_open(&e, 10000, 3, 0);
  int64_t sweep = submit_gate(&e, "ballot", 5, 5, NULL, 0);
  const char *w[3] = {"w1", "w2", "w3"};
  for (int i = 0; i < 3; i++) hello(&e, w[i], "{}", 0);
  int64_t now = 10;
  int leases = 0, k = 0;
  struct sw_lease held[3] = {0};
  int busy[3] = {0};
  /* Event loop: idle workers ask, busy workers finish their lease in turn. */
  while (sw_sched_sweep_finished(e.sched, sweep, &e.err) == 0) {
    ck_assert_int_lt(leases, 20);
    for (int i = 0; i < 3; i++) {
      if (busy[i]) continue;
      int rc = sw_sched_next(e.sched, w[i], now, &held[i], &e.err);
      ck_assert_int_ge(rc, 0);
      if (rc == 1) {
        busy[i] = 1;
        leases++;
        ck_assert_int_eq(held[i].n_runs, 2);
        ck_assert_int_eq(held[i].attempt, 1);
        const char *want = held[i].pair_index % 2 == 0 ? "off-on" : "on-off";
        ck_assert_str_eq(held[i].order, want);
        ck_assert_str_eq(held[i].runs[0].arm, held[i].pair_index % 2 == 0 ? "off" : "on");
        ck_assert_ptr_nonnull(strstr(held[i].runs[0].config_json, "\"iterations\":100"));
        ck_assert_ptr_nonnull(strstr(held[i].runs[0].config_json,
                                     strcmp(held[i].runs[0].arm, "on") == 0 ? "ballot" : "serial"));
        ck_assert_ptr_nonnull(strstr(held[i].trainer_json, "builtin"));
      }
    }
    for (int i = 0; i < 3; i++) {
      if (!busy[i]) continue;
      run_lease(&e, &held[i], w[i], k++, 0.95, now);
      sw_lease_clear(&held[i]);
      busy[i] = 0;
      break; /* one finishes per round, so the others stay busy and spread is exercised */
    }
    now += 100;
  }
  ck_assert_int_eq(leases, 5);
  ck_assert_int_eq(sw_sched_sweep_finished(e.sched, sweep, &e.err), 1);
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM pairs WHERE status = 'done'"), 5);
  /* No pair mixes two workers or two attempts. */
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM (SELECT r.pair_id FROM attempts a JOIN runs r ON "
                          "r.id = a.run_id GROUP BY r.pair_id HAVING COUNT(DISTINCT a.worker_id) "
                          "> 1 OR COUNT(DISTINCT a.attempt) > 1)"),
                   0);
  ck_assert_int_eq(q1(&e, "SELECT COUNT(DISTINCT worker_id) FROM pairs"), 3);
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM gates WHERE status = 'done' AND verdict = 'adopt'"),
                   1);
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM kernels"), 10);
  char aa[SW_SHA256_HEX_LEN], sql[200];
  fixture_sha("aa", aa);
  snprintf(sql, sizeof sql,
           "SELECT COUNT(*) FROM attempts WHERE trainer_sha256 = '%s' AND psnr_db > 29 AND "
           "gpu_busy_frac > 0.6",
           aa);
  ck_assert_int_eq(q1(&e, sql), 10);
  json_t *st = sw_sched_status_json(e.sched, sweep, 0, 0, &e.err);
  ck_assert_ptr_nonnull(st);
  json_t *g =
      json_array_get(json_object_get(json_array_get(json_object_get(st, "sweeps"), 0), "gates"), 0);
  ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(g, "pairs"), "done")), 5);
  ck_assert_str_eq(json_string_value(json_object_get(g, "verdict")), "adopt");
  ck_assert_int_eq(json_array_size(json_object_get(st, "workers")), 3);
  json_decref(st);
  env_close(&e);
}
END_TEST

START_TEST(lease_expiry_requeues_whole_pair) {
  struct env e;
  env_open(&e, 1000, 3, 0);
  submit_gate(&e, "g", 2, 2, NULL, 0);
  hello(&e, "w1", NULL, 0);
  hello(&e, "w2", NULL, 0);
  struct sw_lease l1, l2;
  ck_assert_int_eq(sw_sched_next(e.sched, "w1", 0, &l1, &e.err), 1);
  ck_assert_int_eq(l1.pair_index, 0);
  /* First arm done, renewed once, then silence. */
  ck_assert_int_eq(deliver(&e, &l1, "w1", 0, 0, QUIET, 3, 0, 0.95, 500), 0);
  ck_assert_int_eq(sw_sched_renew(e.sched, l1.lease_id, l1.epoch, "w1", 800, &e.err), 0);
  int n = -1;
  ck_assert_int_eq(sw_sched_tick(e.sched, 1700, &n, &e.err), 0);
  ck_assert_int_eq(n, 0); /* renewed at 800: deadline 1800 */
  ck_assert_int_eq(sw_sched_tick(e.sched, 1801, &n, &e.err), 0);
  ck_assert_int_eq(n, 1);
  ck_assert_int_eq(q1(&e, "SELECT attempt FROM pairs WHERE idx = 0"), 2);
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM attempts WHERE status = 'abandoned'"), 1);
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM leases WHERE state = 'expired'"), 1);
  /* The late second arm of the old lease is refused; so is a renewal. */
  ck_assert_int_eq(deliver(&e, &l1, "w1", 1, 0, QUIET, 3, 0, 0.95, 1900), SW_ESTATE);
  ck_assert_int_eq(sw_sched_renew(e.sched, l1.lease_id, l1.epoch, "w1", 1900, &e.err), SW_ESTATE);
  /* Another worker gets the whole pair again, as attempt 2, and completes it. */
  ck_assert_int_eq(sw_sched_next(e.sched, "w2", 2000, &l2, &e.err), 1);
  ck_assert_int_eq(l2.pair_index, 0);
  ck_assert_int_eq(l2.attempt, 2);
  ck_assert_uint_eq(l2.epoch, 2);
  ck_assert_int_eq(l2.runs[0].run_id, l1.runs[0].run_id);
  run_lease(&e, &l2, "w2", 1, 0.95, 2100);
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM attempts WHERE attempt = 2 AND status = 'ok' AND "
                          "worker_id = 'w2'"),
                   2);
  ck_assert_int_eq(q1(&e, "SELECT status = 'done' FROM pairs WHERE idx = 0"), 1);
  sw_lease_clear(&l1);
  sw_lease_clear(&l2);
  env_close(&e);
}
END_TEST

/* The worker registry is bounded: 10,000 distinct worker ids that come and go leave memory
 * once they have been offline for worker_expire_ms (the default, 10 minutes), or beyond the
 * 1,000 most recently seen offline ones (workers_offline_max), while a worker
 * holding a lease never does; they stay in the store, their key binding too, and a returning
 * worker is known again. Status lists one page of workers. */
START_TEST(worker_registry_expires_and_pages) {
  struct env e;
  env_open(&e, 60 * 60 * 1000, 3, 0);
  submit_gate(&e, "g", 1, 1, NULL, 0);
  hello(&e, "holder", NULL, 0);
  struct sw_lease l;
  ck_assert_int_eq(sw_sched_next(e.sched, "holder", 0, &l, &e.err), 1);
  ck_assert_int_eq(sw_sched_worker_bind(e.sched, "holder", "key-holder", &e.err), 0);
  sw_sched_worker_gone(e.sched, "holder", 0, &e.err); /* offline, but its lease is valid */
  /* Two rounds of 10,000 ids: the memory in use after the second (SQLite's own left out) equals
   * that after the first, so nothing accumulates per id. */
  char id[32], key[64];
  size_t in_use[2];
  int64_t later = 0;
  for (int round = 0; round < 2; round++) {
    int64_t t0 = 1000 + round * 2 * SW_SCHED_WORKER_EXPIRE_MS;
    ck_assert_int_eq(sw_store_begin(e.store, &e.err), 0); /* one commit: the test is about memory */
    for (int i = 0; i < 10000; i++) {
      snprintf(id, sizeof id, "%c%05d", round ? 'x' : 'w', i);
      hello(&e, id, "{\"gpu\":\"h200\",\"rack\":\"r1\"}", t0 + i);
      if (i % 100 == 0) {
        snprintf(key, sizeof key, "key-%d", i);
        ck_assert_int_eq(sw_sched_worker_bind(e.sched, id, key, &e.err), 0);
      }
      ck_assert_int_eq(sw_sched_worker_gone(e.sched, id, t0 + i, &e.err), 0);
    }
    ck_assert_int_eq(sw_store_commit(e.store, &e.err), 0);
    ck_assert_int_eq(sw_sched_workers_in_memory(e.sched), 10001);
    if (round == 0) {
      /* One page in status, however many there are. */
      json_t *st = sw_sched_status_json(e.sched, 0, 0, 0, &e.err);
      ck_assert_int_eq(json_array_size(json_object_get(st, "workers")), SW_SCHED_STATUS_WORKERS);
      ck_assert_int_eq(
          json_integer_value(json_object_get(json_object_get(st, "workers_page"), "total")), 10001);
      json_decref(st);
      st = sw_sched_status_json(e.sched, 0, 9990, 50, &e.err);
      ck_assert_int_eq(json_array_size(json_object_get(st, "workers")), 11);
      json_decref(st);
      st = sw_sched_status_json(e.sched, 0, 0, 1 << 30, &e.err); /* capped */
      ck_assert_int_eq(json_array_size(json_object_get(st, "workers")),
                       SW_SCHED_STATUS_WORKERS_MAX);
      json_decref(st);
      /* Before the expiry only the cap applies: the 1,000 most recently seen offline workers
       * stay (and the lease holder). */
      ck_assert_int_eq(sw_sched_tick(e.sched, t0 + SW_SCHED_WORKER_EXPIRE_MS, NULL, &e.err), 0);
      ck_assert_int_eq(sw_sched_workers_in_memory(e.sched), 1 + SW_SCHED_WORKERS_OFFLINE_MAX);
      st = sw_sched_status_json(e.sched, 0, 1, 1, &e.err);
      ck_assert_str_eq(json_string_value(json_object_get(
                           json_array_get(json_object_get(st, "workers"), 0), "id")),
                       "w09000");
      json_decref(st);
    }
    /* After it, all but the lease holder (which renews its lease). */
    later = t0 + 10000 + SW_SCHED_WORKER_EXPIRE_MS + 1;
    ck_assert_int_eq(sw_sched_renew(e.sched, l.lease_id, l.epoch, "holder", later, &e.err), 0);
    ck_assert_int_eq(sw_sched_tick(e.sched, later, NULL, &e.err), 0);
    ck_assert_int_eq(sw_sched_workers_in_memory(e.sched), 1);
    /* Ours only: SQLite's page cache (its own accounting) grows with the table up to its cap. */
    in_use[round] = mallinfo2().uordblks - (size_t)sqlite3_memory_used();
  }
  ck_assert_msg(in_use[1] < in_use[0] + 64 * 1024,
                "memory in use grew by %zu bytes in a second round of 10,000 workers",
                in_use[1] - in_use[0]);
  printf("memory in use after 10,000 workers came and went: %zu, after 20,000: %zu bytes\n",
         in_use[0], in_use[1]);
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM workers"), 20001);
  /* The holder is still found and still holds its lease; bindings outlive expiry. */
  ck_assert_int_eq(sw_sched_worker_key(e.sched, "holder", key, sizeof key, &e.err), 1);
  ck_assert_str_eq(key, "key-holder");
  ck_assert_int_eq(sw_sched_worker_key(e.sched, "w00100", key, sizeof key, &e.err), 1);
  ck_assert_str_eq(key, "key-100");
  ck_assert_int_eq(sw_sched_worker_key(e.sched, "w00101", key, sizeof key, &e.err), 0);
  /* A binding is never replaced. */
  hello(&e, "w00100", NULL, later + 1);
  ck_assert_int_eq(sw_sched_worker_bind(e.sched, "w00100", "key-other", &e.err), 0);
  ck_assert_int_eq(sw_sched_worker_key(e.sched, "w00100", key, sizeof key, &e.err), 1);
  ck_assert_str_eq(key, "key-100");
  ck_assert_int_eq(sw_sched_workers_in_memory(e.sched), 2);
  /* A restarted scheduler loads the recent and the lease holders only, bindings with them. */
  sw_lease_clear(&l);
  sw_sched_destroy(&e.sched);
  struct sw_sched_opts o;
  sw_sched_opts_default(&o);
  o.lease_ttl_ms = 60 * 60 * 1000;
  ck_assert_int_eq(sw_sched_new(e.store, &o, later + 2, &e.sched, &e.err), 0);
  ck_assert_int_eq(sw_sched_workers_in_memory(e.sched), 2);
  ck_assert_int_eq(sw_sched_worker_key(e.sched, "holder", key, sizeof key, &e.err), 1);
  ck_assert_str_eq(key, "key-holder");
  env_close(&e);
}
END_TEST

/* Protocol churn never costs an attempt: a Ready from the holder of a lease (a reconnect, a
 * coordinator restart, several queued Hellos) is answered with that same lease, epoch and
 * attempt, listing only the runs still without a result; only LeaseDone gives it up. */
START_TEST(ready_from_holder_gets_its_lease_again) {
  struct env e;
  env_open(&e, 10000, 3, 0);
  submit_gate(&e, "g", 1, 1, NULL, 0);
  hello(&e, "w1", NULL, 0);
  struct sw_lease l, again;
  ck_assert_int_eq(sw_sched_next(e.sched, "w1", 0, &l, &e.err), 1);
  for (int k = 0; k < 5; k++) { /* five Readys, as five queued heartbeats' Hellos made */
    hello(&e, "w1", NULL, 10 + k);
    ck_assert_int_eq(sw_sched_next(e.sched, "w1", 10 + k, &again, &e.err), 1);
    ck_assert_int_eq(again.lease_id, l.lease_id);
    ck_assert_uint_eq(again.epoch, l.epoch);
    ck_assert_int_eq(again.attempt, l.attempt);
    ck_assert_int_eq(again.n_runs, 2);
    sw_lease_clear(&again);
  }
  ck_assert_int_eq(deliver(&e, &l, "w1", 0, 0, QUIET, 3, 0, 0.95, 20), 0);
  /* A restarted coordinator too. */
  sw_sched_destroy(&e.sched);
  struct sw_sched_opts o;
  sw_sched_opts_default(&o);
  o.lease_ttl_ms = 10000;
  ck_assert_int_eq(sw_sched_new(e.store, &o, 30, &e.sched, &e.err), 0);
  hello(&e, "w1", NULL, 30);
  ck_assert_int_eq(sw_sched_next(e.sched, "w1", 30, &again, &e.err), 1);
  ck_assert_int_eq(again.lease_id, l.lease_id);
  ck_assert_int_eq(again.n_runs, 1); /* the run with a stored result is not asked for again */
  ck_assert_int_eq(again.runs[0].run_id, l.runs[1].run_id);
  sw_lease_clear(&again);
  ck_assert_int_eq(deliver(&e, &l, "w1", 1, 0, QUIET, 3, 0, 0.95, 40), 0);
  ck_assert_int_eq(sw_sched_lease_done(e.sched, l.lease_id, l.epoch, "w1", 50, &e.err), 0);
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM pairs WHERE status = 'done' AND attempt = 1"), 1);
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM attempts WHERE status = 'ok'"), 2);
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM leases"), 1);
  sw_lease_clear(&l);
  /* A lease past its deadline is not handed back, whichever comes first, the Ready or the tick:
   * it expires and its pair comes back as attempt 2. */
  submit_gate(&e, "g2", 1, 1, NULL, 60);
  ck_assert_int_eq(sw_sched_next(e.sched, "w1", 60, &l, &e.err), 1);
  ck_assert_int_eq(l.attempt, 1);
  ck_assert_int_eq(sw_sched_next(e.sched, "w1", 60 + 10001, &again, &e.err), 1);
  ck_assert_int_ne(again.lease_id, l.lease_id);
  ck_assert_int_eq(again.attempt, 2);
  sw_lease_clear(&again);
  sw_lease_clear(&l);
  env_close(&e);
}
END_TEST

START_TEST(stale_refused_duplicate_idempotent) {
  struct env e;
  env_open(&e, 10000, 3, 0);
  submit_gate(&e, "g", 1, 1, NULL, 0);
  hello(&e, "w1", NULL, 0);
  hello(&e, "w2", NULL, 0);
  struct sw_lease l;
  ck_assert_int_eq(sw_sched_next(e.sched, "w1", 0, &l, &e.err), 1);
  struct sw_lease bad = l;
  bad.epoch = l.epoch + 1;
  ck_assert_int_eq(deliver(&e, &bad, "w1", 0, 0, QUIET, 3, 0, 0.95, 10), SW_ESTATE);
  ck_assert_ptr_nonnull(strstr(e.err.msg, "stale"));
  /* Epochs are compared in 64 bits: 2^32 + epoch is another epoch, not this one. */
  bad.epoch = l.epoch + (UINT64_C(1) << 32);
  ck_assert_int_eq(deliver(&e, &bad, "w1", 0, 0, QUIET, 3, 0, 0.95, 10), SW_ESTATE);
  ck_assert_int_eq(sw_sched_renew(e.sched, l.lease_id, bad.epoch, "w1", 10, &e.err), SW_ESTATE);
  ck_assert_int_eq(sw_sched_lease_done(e.sched, l.lease_id, bad.epoch, "w1", 10, &e.err),
                   SW_ESTATE);
  ck_assert_int_eq(deliver(&e, &l, "w2", 0, 0, QUIET, 3, 0, 0.95, 10), SW_ESTATE);
  ck_assert_int_eq(sw_sched_renew(e.sched, l.lease_id, l.epoch, "w2", 10, &e.err), SW_ESTATE);
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM attempts"), 0);
  ck_assert_int_eq(deliver(&e, &l, "w1", 0, 0, QUIET, 3, 0, 0.95, 20), 0);
  ck_assert_int_eq(deliver(&e, &l, "w1", 0, 0, QUIET, 3, 0, 0.95, 30), 0); /* resent */
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM attempts"), 1);
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM windows"), 4);
  ck_assert_int_eq(deliver(&e, &l, "w1", 1, 0, QUIET, 3, 0, 0.95, 40), 0);
  /* After the pair completed and the lease closed, a resend is still acknowledged. */
  ck_assert_int_eq(deliver(&e, &l, "w1", 1, 0, QUIET, 3, 0, 0.95, 50), 0);
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM attempts"), 2);
  ck_assert_int_eq(sw_sched_lease_done(e.sched, l.lease_id, l.epoch, "w1", 60, &e.err), 0);
  ck_assert_int_eq(sw_sched_lease_done(e.sched, l.lease_id, l.epoch, "w2", 60, &e.err), SW_ESTATE);
  /* A result for a run that does not exist is an error, not a crash. */
  struct sw_lease ghost = l;
  ghost.runs[0].run_id = 999999;
  ck_assert_int_eq(deliver(&e, &ghost, "w1", 0, 0, QUIET, 3, 0, 0.95, 70), SW_ENOTFOUND);
  sw_lease_clear(&l);
  env_close(&e);
}
END_TEST

START_TEST(gate_metric_outside_the_columns) {
  struct env e;
  env_open(&e, 10000, 3, 0);
  const char *spec =
      "{\"name\":\"custom\",\"kind\":\"gate\",\"trainer\":{\"exec\":{\"command\":[\"t\"]}},"
      "\"arms\":{\"off\":{},\"on\":{\"x\":1}},"
      "\"pairs\":{\"n\":3},\"gate\":{\"metric\":\"custom_s\",\"guard\":{\"metric\":"
      "\"ssim\",\"max_drop\":0.01}}}";
  int64_t sweep = 0;
  ck_assert_msg(sw_sched_submit(e.sched, spec, "test", NULL, 0, &sweep, &e.err) == 0, "%s",
                e.err.msg);
  hello(&e, "w1", NULL, 0);
  g_mapped_results = 1; /* custom_s can only come from a mapped (foreign) result */
  for (int k = 0; sw_sched_sweep_finished(e.sched, sweep, &e.err) == 0; k++) {
    ck_assert_int_lt(k, 5);
    struct sw_lease l;
    ck_assert_int_eq(sw_sched_next(e.sched, "w1", k * 10, &l, &e.err), 1);
    run_lease(&e, &l, "w1", k, 0.95, k * 10 + 5);
    sw_lease_clear(&l);
  }
  g_mapped_results = 0;
  /* custom_s (2 x train_s) exists only in result.json; the guard metric is a column. */
  ck_assert_int_eq(q1(&e, "SELECT verdict = 'adopt' AND json_extract(verdict_json, "
                          "'$.lab.mean_off') > 199 AND json_extract(verdict_json, "
                          "'$.guard.evaluated') FROM gates"),
                   1);
  /* A metric name that is not an identifier is refused at submit, by the spec loader. */
  ck_assert_int_eq(sw_sched_submit(e.sched,
                                   "{\"name\":\"bad\",\"kind\":\"gate\",\"trainer\":{\"exec\":{"
                                   "\"command\":[\"t\"]}},\"arms\":{\"off\":{},\"on\":{\"x\":1}},"
                                   "\"gate\":{\"metric\":\"x') --\"}}",
                                   "test", NULL, 0, &sweep, &e.err),
                   SW_EINVAL);
  ck_assert_msg(strstr(e.err.msg, "is not a metric name"), "%s", e.err.msg);
  env_close(&e);
}
END_TEST

START_TEST(full_disk_result_not_acknowledged_then_resent) {
  struct env e;
  env_open(&e, 10000, 3, 0);
  submit_gate(&e, "g", 1, 1, NULL, 0);
  hello(&e, "w1", NULL, 0);
  struct sw_lease l;
  ck_assert_int_eq(sw_sched_next(e.sched, "w1", 0, &l, &e.err), 1);
  /* A result.json with a large log: no room for it once the file may not grow. */
  size_t big = 300000;
  char *log = malloc(big + 64);
  snprintf(log, big + 64, "\"config\":{\"log\":\"%0*d\"},", (int)big, 0);
  char *res = fake_result_with(l.runs[0].arm, 0, 0.95, log);
  free(log);
  char pragma[80];
  snprintf(pragma, sizeof pragma, "PRAGMA max_page_count = %lld",
           (long long)q1(&e, "PRAGMA page_count"));
  ck_assert_int_eq(sw_store_exec(e.store, pragma, &e.err), 0);
  struct sw_run_result rr = {.lease_id = l.lease_id,
                             .epoch = l.epoch,
                             .worker_id = "w1",
                             .run_id = l.runs[0].run_id,
                             .attempt = l.attempt,
                             .result_json = res,
                             .pre = QUIET,
                             .n_pre = 1,
                             .during = QUIET,
                             .n_during = 3};
  ck_assert_int_eq(sw_sched_result(e.sched, &rr, 10, &e.err), SW_EDB);
  ck_assert_msg(strstr(e.err.msg, "full") != NULL, "%s", e.err.msg);
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM attempts"), 0);
  /* Nothing changed: the lease is still valid and the worker's resend is stored. */
  ck_assert_int_eq(sw_sched_renew(e.sched, l.lease_id, l.epoch, "w1", 20, &e.err), 0);
  ck_assert_int_eq(sw_store_exec(e.store, "PRAGMA max_page_count = 1000000", &e.err), 0);
  sw_err_clear(&e.err);
  ck_assert_msg(sw_sched_result(e.sched, &rr, 30, &e.err) == 0, "%s", e.err.msg);
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM attempts WHERE status = 'ok' AND train_s > 0"), 1);
  ck_assert_int_eq(deliver(&e, &l, "w1", 1, 0, QUIET, 3, 0, 0.95, 40), 0);
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM pairs WHERE status = 'done'"), 1);
  free(res);
  sw_lease_clear(&l);
  env_close(&e);
}
END_TEST

/* Store outages longer than the lease: another process holding the database's write lock,
 * then a full disk (where a small expiry could commit but a large result cannot). Each result
 * is refused (SW_EDB, after a short busy wait: 50 ms here, the daemon's SW_COORD_BUSY_MS is
 * 200), the store reports itself failing, and no lease expires while failures keep coming and
 * for one TTL after, even past its deadline and unrenewed; the resent results are stored once
 * the store is back and the pair completes. A lease whose worker went away during the outage
 * expires one TTL after the last failure. */
START_TEST(store_outage_longer_than_the_lease_keeps_it) {
  struct env e;
  struct sw_store_opts so;
  sw_store_opts_default(&so);
  so.synchronous_full = 0;
  so.busy_timeout_ms = 50;
  env_open_with(&e, &so, 1000, 3, 0);
  submit_gate(&e, "g", 2, 2, NULL, 0);
  hello(&e, "w1", NULL, 0);
  hello(&e, "w2", NULL, 0);
  struct sw_lease l1, l2;
  ck_assert_int_eq(sw_sched_next(e.sched, "w1", 0, &l1, &e.err), 1);
  ck_assert_int_eq(sw_sched_next(e.sched, "w2", 0, &l2, &e.err), 1);
  struct sw_store_health h;
  sw_store_health(e.store, &h);
  ck_assert_int_eq(h.failing, 0);
  /* 1. The lock: w1's first result refused. */
  sqlite3 *other = NULL;
  ck_assert_int_eq(sqlite3_open(g_db, &other), SQLITE_OK);
  ck_assert_int_eq(sqlite3_exec(other, "BEGIN EXCLUSIVE", NULL, NULL, NULL), SQLITE_OK);
  ck_assert_int_eq(deliver(&e, &l1, "w1", 0, 0, QUIET, 3, 0, 0.95, 100), SW_EDB);
  sw_store_health(e.store, &h);
  ck_assert_int_eq(h.failing, 1);
  ck_assert_msg(strstr(h.last_error, "locked") != NULL, "%s", h.last_error);
  int n = -1;
  ck_assert_int_eq(sw_sched_tick(e.sched, 900, &n, &e.err), 0);
  ck_assert_int_eq(n, 0);
  ck_assert_int_eq(sqlite3_exec(other, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
  sqlite3_close(other);
  /* Past both deadlines (1000), nobody renewing, lock gone: still no expiry within a TTL of
   * the failure; w1's resend is stored. */
  ck_assert_int_eq(sw_sched_tick(e.sched, 1500, &n, &e.err), 0);
  ck_assert_int_eq(n, 0);
  ck_assert_msg(deliver(&e, &l1, "w1", 0, 0, QUIET, 3, 0, 0.95, 1600) == 0, "%s", e.err.msg);
  sw_store_health(e.store, &h);
  ck_assert_int_eq(h.failing, 0);
  /* 2. The full disk: w1's second result (a large log) cannot be stored. */
  size_t big = 300000;
  char *log = malloc(big + 64);
  snprintf(log, big + 64, "\"config\":{\"log\":\"%0*d\"},", (int)big, 0);
  char *res = fake_result_with(l1.runs[1].arm, 0, 0.95, log);
  free(log);
  char pragma[80];
  snprintf(pragma, sizeof pragma, "PRAGMA max_page_count = %lld",
           (long long)q1(&e, "PRAGMA page_count"));
  ck_assert_int_eq(sw_store_exec(e.store, pragma, &e.err), 0);
  struct sw_run_result rr = {.lease_id = l1.lease_id,
                             .epoch = l1.epoch,
                             .worker_id = "w1",
                             .run_id = l1.runs[1].run_id,
                             .attempt = l1.attempt,
                             .result_json = res,
                             .pre = QUIET,
                             .n_pre = 1,
                             .during = QUIET,
                             .n_during = 3};
  for (int64_t t = 1800; t <= 6000; t += 600) { /* resends keep failing, ticks expire nothing */
    sw_err_clear(&e.err);
    ck_assert_int_eq(sw_sched_result(e.sched, &rr, t, &e.err), SW_EDB);
    ck_assert_int_eq(sw_sched_tick(e.sched, t + 100, &n, &e.err), 0);
    ck_assert_int_eq(n, 0);
  }
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM leases WHERE state = 'expired'"), 0);
  ck_assert_int_eq(sw_store_exec(e.store, "PRAGMA max_page_count = 1000000", &e.err), 0);
  sw_err_clear(&e.err);
  ck_assert_msg(sw_sched_result(e.sched, &rr, 6500, &e.err) == 0, "%s", e.err.msg);
  ck_assert_int_eq(sw_sched_lease_done(e.sched, l1.lease_id, l1.epoch, "w1", 6500, &e.err), 0);
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM pairs WHERE status = 'done'"), 1);
  /* w2 went away at 0: its lease expires once a TTL has passed since the tick that saw the last
   * failure (6100). */
  ck_assert_int_eq(sw_sched_tick(e.sched, 7000, &n, &e.err), 0);
  ck_assert_int_eq(n, 0);
  ck_assert_int_eq(sw_sched_tick(e.sched, 7200, &n, &e.err), 0);
  ck_assert_int_eq(n, 1);
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM leases WHERE state = 'expired'"), 1);
  free(res);
  sw_lease_clear(&l1);
  sw_lease_clear(&l2);
  env_close(&e);
}
END_TEST

/* SQLITE_FULL, SQLITE_IOERR_WRITE and SQLITE_IOERR_FSYNC injected into a result's commit (the
 * fault VFS of fault_vfs.h under the unchanged store): the result is refused (SW_EDB, so no Ack)
 * with SQLite's message, the store reports itself failing, nothing of the attempt is stored and
 * the scheduler keeps serving (renewals, status, another worker's lease); once the fault is
 * gone the resend is stored, and the pair completes with exactly its two runs. */
static const struct {
  enum fault_vfs_kind kind;
  int code;
  const char *says;
} COMMIT_FAULTS[] = {{FAULT_VFS_WRITE, SQLITE_FULL, "full"},
                     {FAULT_VFS_WRITE, SQLITE_IOERR_WRITE, "I/O error"},
                     {FAULT_VFS_FSYNC, SQLITE_IOERR_FSYNC, "I/O error"}};

START_TEST(injected_commit_fault_is_refused_then_stored) {
  ck_assert_int_eq(fault_vfs_install(), SQLITE_OK);
  struct env e;
  struct sw_store_opts so;
  sw_store_opts_default(&so); /* synchronous FULL, as the daemon runs: commits sync */
  env_open_with(&e, &so, 10000, 3, 0);
  submit_gate(&e, "g", 2, 2, NULL, 0);
  hello(&e, "w1", NULL, 0);
  hello(&e, "w2", NULL, 0);
  struct sw_lease l1, l2;
  ck_assert_int_eq(sw_sched_next(e.sched, "w1", 0, &l1, &e.err), 1);
  fault_vfs_arm(COMMIT_FAULTS[_i].kind, COMMIT_FAULTS[_i].code);
  ck_assert_int_eq(deliver(&e, &l1, "w1", 0, 0, QUIET, 3, 0, 0.95, 100), SW_EDB);
  ck_assert_int_gt(g_fault.hits, 0);
  ck_assert_msg(strstr(e.err.msg, COMMIT_FAULTS[_i].says) != NULL, "%s", e.err.msg);
  struct sw_store_health h;
  sw_store_health(e.store, &h);
  ck_assert_int_eq(h.failing, 1);
  /* Still serving while the disk fails: a renewal, a status, a second lease from memory. */
  ck_assert_int_eq(sw_sched_renew(e.sched, l1.lease_id, l1.epoch, "w1", 200, &e.err), 0);
  json_t *st = sw_sched_status_json(e.sched, 0, 0, 100, &e.err);
  ck_assert_msg(st != NULL, "%s", e.err.msg);
  json_decref(st);
  fault_vfs_arm(FAULT_VFS_NONE, 0);
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM attempts"), 0);
  ck_assert_int_eq(sw_sched_next(e.sched, "w2", 300, &l2, &e.err), 1);
  ck_assert_msg(deliver(&e, &l1, "w1", 0, 0, QUIET, 3, 0, 0.95, 400) == 0, "%s", e.err.msg);
  sw_store_health(e.store, &h);
  ck_assert_int_eq(h.failing, 0);
  ck_assert_int_eq(deliver(&e, &l1, "w1", 1, 0, QUIET, 3, 0, 0.95, 500), 0);
  ck_assert_int_eq(sw_sched_lease_done(e.sched, l1.lease_id, l1.epoch, "w1", 500, &e.err), 0);
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM attempts WHERE status = 'ok'"), 2);
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM pairs WHERE status = 'done'"), 1);
  sqlite3_stmt *ic;
  ck_assert_int_eq(
      sqlite3_prepare_v2(sw_store_db(e.store), "PRAGMA integrity_check", -1, &ic, NULL), SQLITE_OK);
  ck_assert_int_eq(sqlite3_step(ic), SQLITE_ROW);
  ck_assert_str_eq((const char *)sqlite3_column_text(ic, 0), "ok");
  sqlite3_finalize(ic);
  sw_lease_clear(&l1);
  sw_lease_clear(&l2);
  env_close(&e);
}
END_TEST

/* A worker cut off past its lease (a partition, a frozen process) finishes both runs meanwhile:
 * its results arrive after the lease expired. While nobody has taken the pair again, the lease
 * is revived and both results count (attempt 1, pair done, no GPU time lost); once another
 * worker holds the pair, a late result is stale and refused. */
START_TEST(late_results_revive_an_expired_lease_nobody_took) {
  struct env e;
  env_open(&e, 1000, 3, 0);
  submit_gate(&e, "g", 2, 2, NULL, 0);
  hello(&e, "w1", NULL, 0);
  hello(&e, "w2", NULL, 0);
  struct sw_lease l1, l2, l3;
  ck_assert_int_eq(sw_sched_next(e.sched, "w1", 0, &l1, &e.err), 1);
  int n = -1;
  ck_assert_int_eq(sw_sched_tick(e.sched, 1500, &n, &e.err), 0);
  ck_assert_int_eq(n, 1);
  ck_assert_int_eq(q1(&e, "SELECT attempt FROM pairs WHERE idx = 0"), 2);
  ck_assert_msg(deliver(&e, &l1, "w1", 0, 0, QUIET, 3, 0, 0.95, 1600) == 0, "%s", e.err.msg);
  ck_assert_int_eq(q1(&e, "SELECT attempt FROM pairs WHERE idx = 0"), 1);
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM leases WHERE state = 'active'"), 1);
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM events WHERE kind = 'revive'"), 1);
  /* Revived means held again: a renewal works, the next pair goes to the other worker. */
  ck_assert_int_eq(sw_sched_renew(e.sched, l1.lease_id, l1.epoch, "w1", 1700, &e.err), 0);
  ck_assert_int_eq(deliver(&e, &l1, "w1", 1, 0, QUIET, 3, 0, 0.95, 1800), 0);
  ck_assert_int_eq(sw_sched_lease_done(e.sched, l1.lease_id, l1.epoch, "w1", 1800, &e.err), 0);
  ck_assert_int_eq(q1(&e, "SELECT status = 'done' AND attempt = 1 FROM pairs WHERE idx = 0"), 1);
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM attempts WHERE status = 'ok' AND attempt = 1"), 2);
  /* Pair 1: w2 cut off the same way, but w1 takes the re-queued pair before the late result. */
  ck_assert_int_eq(sw_sched_next(e.sched, "w2", 2000, &l2, &e.err), 1);
  ck_assert_int_eq(sw_sched_worker_gone(e.sched, "w2", 2600, &e.err), 0); /* silent: offline */
  ck_assert_int_eq(sw_sched_tick(e.sched, 3500, &n, &e.err), 0);
  ck_assert_int_eq(n, 1);
  ck_assert_int_eq(sw_sched_next(e.sched, "w1", 3600, &l3, &e.err), 1);
  ck_assert_int_eq(l3.pair_id, l2.pair_id);
  ck_assert_int_eq(l3.attempt, 2);
  ck_assert_int_eq(deliver(&e, &l2, "w2", 0, 0, QUIET, 3, 1, 0.95, 3700), SW_ESTATE);
  run_lease(&e, &l3, "w1", 1, 0.95, 3800);
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM pairs WHERE status = 'done'"), 2);
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM attempts WHERE worker_id = 'w2'"), 0);
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM events WHERE kind = 'revive'"), 1);
  sw_lease_clear(&l1);
  sw_lease_clear(&l2);
  sw_lease_clear(&l3);
  env_close(&e);
}
END_TEST

START_TEST(two_sweeps_both_progress) {
  struct env e;
  env_open(&e, 10000, 3, 0);
  int64_t a = submit_gate(&e, "a", 4, 4, NULL, 0);
  int64_t b = submit_gate(&e, "b", 4, 4, "\"priority\":5", 0);
  hello(&e, "w1", NULL, 0);
  int64_t seen[8];
  for (int i = 0; i < 8; i++) {
    struct sw_lease l;
    if (i == 4) /* two of four pairs each: a progress view, but nothing decided yet */
      ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM gates WHERE status = 'running' AND verdict "
                              "IS NULL AND looks = 0 AND json_extract(verdict_json, '$.verdict') "
                              "IS NOT NULL"),
                       2);
    ck_assert_int_eq(sw_sched_next(e.sched, "w1", i * 10, &l, &e.err), 1);
    seen[i] = l.sweep_id;
    run_lease(&e, &l, "w1", i, 0.95, i * 10 + 5);
    sw_lease_clear(&l);
  }
  /* Round-robin: never the same sweep twice in a row; the higher priority goes first. */
  ck_assert_int_eq(seen[0], b);
  for (int i = 1; i < 8; i++) ck_assert_int_ne(seen[i], seen[i - 1]);
  ck_assert_int_eq(sw_sched_sweep_finished(e.sched, a, &e.err), 1);
  ck_assert_int_eq(sw_sched_sweep_finished(e.sched, b, &e.err), 1);
  struct sw_lease none;
  ck_assert_int_eq(sw_sched_next(e.sched, "w1", 100, &none, &e.err), 0);
  env_close(&e);
}
END_TEST

START_TEST(pin_and_match_honoured) {
  struct env e;
  env_open(&e, 10000, 3, 0);
  submit_gate(&e, "pinned", 1, 1, "\"placement\":{\"spread\":true,\"pin\":\"w2\"}", 0);
  submit_gate(&e, "matched", 1, 1,
              "\"placement\":{\"spread\":true,\"match\":{\"label.gpu\":\"m4*\",\"cores\":\"8\"}}",
              0);
  hello(&e, "w1", "{\"gpu\":\"rtx\"}", 0);
  hello(&e, "w2", "{\"gpu\":\"rtx\"}", 0);
  hello(&e, "w3", "{\"gpu\":\"m4max\"}", 0);
  struct sw_lease l;
  ck_assert_int_eq(sw_sched_next(e.sched, "w1", 1, &l, &e.err), 0); /* neither suits w1 */
  ck_assert_int_eq(sw_sched_next(e.sched, "w3", 2, &l, &e.err), 1);
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM pairs p JOIN sweeps s ON s.id = p.sweep_id WHERE "
                          "s.name = 'matched' AND p.worker_id = 'w3'"),
                   1);
  sw_lease_clear(&l);
  ck_assert_int_eq(sw_sched_next(e.sched, "w2", 3, &l, &e.err), 1);
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM pairs p JOIN sweeps s ON s.id = p.sweep_id WHERE "
                          "s.name = 'pinned' AND p.worker_id = 'w2'"),
                   1);
  sw_lease_clear(&l);
  ck_assert_int_eq(sw_sched_next(e.sched, "nobody", 4, &l, &e.err), SW_ENOTFOUND);
  /* A worker whose runners do not include the spec's trainer kind is not eligible. */
  submit_gate(&e, "any", 1, 1, NULL, 5);
  ck_assert_int_eq(
      sw_sched_worker_hello(e.sched, "w4", "{\"capabilities\":[\"exec\"]}", NULL, 5, &e.err), 0);
  ck_assert_int_eq(sw_sched_next(e.sched, "w4", 6, &l, &e.err), 0);
  ck_assert_int_eq(sw_sched_worker_hello(e.sched, "w4", "{\"capabilities\":[\"exec\",\"builtin\"]}",
                                         NULL, 7, &e.err),
                   0);
  ck_assert_int_eq(sw_sched_next(e.sched, "w4", 8, &l, &e.err), 1);
  sw_lease_clear(&l);
  env_close(&e);
}
END_TEST

START_TEST(poison_pair_capped_gate_concludes_from_rest) {
  struct env e;
  env_open(&e, 10000, 2, 0);
  int64_t sweep = submit_gate(&e, "g", 4, 4, NULL, 0);
  hello(&e, "w1", NULL, 0);
  struct sw_lease l;
  int64_t now = 0, k = 0;
  int failures = 0;
  while (sw_sched_sweep_finished(e.sched, sweep, &e.err) == 0) {
    ck_assert_int_lt(now, 100000);
    now += 10;
    ck_assert_int_eq(sw_sched_next(e.sched, "w1", now, &l, &e.err), 1);
    if (l.pair_index == 2) { /* this pair's trainer always crashes */
      ck_assert_int_eq(deliver(&e, &l, "w1", 0, 3, QUIET, 3, 0, 0.95, now), 0);
      ck_assert_int_eq(deliver(&e, &l, "w1", 1, 0, QUIET, 3, 0, 0.95, now), 0);
      failures++;
    } else {
      run_lease(&e, &l, "w1", (int)k++, 0.95, now);
    }
    sw_lease_clear(&l);
  }
  ck_assert_int_eq(failures, 2);
  ck_assert_int_eq(q1(&e, "SELECT status = 'failed' AND attempt = 2 FROM pairs WHERE idx = 2"), 1);
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM pairs WHERE status = 'done'"), 3);
  ck_assert_int_eq(
      q1(&e, "SELECT COUNT(*) FROM gates WHERE status = 'done' AND verdict IS NOT NULL"), 1);
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM events WHERE kind = 'poison'"), 1);
  /* It says it is incomplete, and why. */
  ck_assert_int_eq(q1(&e, "SELECT json_extract(verdict_json, '$.incomplete.usable') = 3 AND "
                          "json_extract(verdict_json, '$.incomplete.planned') = 4 AND "
                          "json_extract(verdict_json, '$.incomplete.failed') = 1 FROM gates"),
                   1);
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM gates, json_each(gates.verdict_json, '$.reasons') "
                          "WHERE json_each.value LIKE 'incomplete: 3 of 4 planned pairs usable%'"),
                   1);
  env_close(&e);
}
END_TEST

START_TEST(contaminated_pair_gets_one_replacement) {
  struct env e;
  env_open(&e, 10000, 3, 0);
  int64_t sweep = submit_gate(&e, "g", 3, 3, NULL, 0);
  hello(&e, "w1", NULL, 0);
  struct sw_lease l;
  int64_t now = 0;
  int k = 0;
  while (sw_sched_sweep_finished(e.sched, sweep, &e.err) == 0) {
    ck_assert_int_lt(k, 10);
    now += 10;
    ck_assert_int_eq(sw_sched_next(e.sched, "w1", now, &l, &e.err), 1);
    if (l.pair_index == 1) { /* load during the off run */
      ck_assert_int_eq(deliver(&e, &l, "w1", 0, 0, BUSY, N_BUSY, k, 0.95, now), 0);
      ck_assert_int_eq(deliver(&e, &l, "w1", 1, 0, QUIET, 3, k, 0.95, now), 0);
    } else if (l.pair_index == 2) { /* no window samples at all: invalid */
      ck_assert_int_eq(deliver(&e, &l, "w1", 0, 0, QUIET, 0, k, 0.95, now), 0);
      ck_assert_int_eq(deliver(&e, &l, "w1", 1, 0, QUIET, 3, k, 0.95, now), 0);
    } else {
      run_lease(&e, &l, "w1", k, 0.95, now);
    }
    k++;
    sw_lease_clear(&l);
  }
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM attempts WHERE status = 'contaminated'"), 1);
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM attempts WHERE status = 'invalid'"), 1);
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM pairs WHERE is_replacement = 1"), 2);
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM pairs WHERE is_replacement = 1 AND replaces = 1"),
                   1);
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM pairs WHERE is_replacement = 1 AND replaces = 2"),
                   1);
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM pairs WHERE status = 'done'"), 5);
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM gates WHERE status = 'done'"), 1);
  /* The gate engine saw the contamination: its JSON carries the sensitivity analysis. */
  ck_assert_int_eq(q1(&e, "SELECT json_extract(verdict_json, '$.name') = 'g' FROM gates"), 1);
  env_close(&e);
}
END_TEST

/* Delivers run r of lease l with its own pre-run window, the worker's quiet flag (1: its quiet
 * wait succeeded) and result text (NULL = fake_result). */
static int deliver_run(struct env *e, const struct sw_lease *l, const char *worker, int r,
                       int quiet, const struct sw_window_sample *pre, int n_pre,
                       const struct sw_window_sample *during, int n_during, const char *result,
                       int k, int64_t now) {
  char *own = result ? NULL : fake_result(l->runs[r].arm, k, 0.95);
  struct sw_run_result rr = {.lease_id = l->lease_id,
                             .epoch = l->epoch,
                             .worker_id = worker,
                             .run_id = l->runs[r].run_id,
                             .attempt = l->attempt,
                             .exit_status = 0,
                             .result_json = result ? result : own,
                             .pre = pre,
                             .n_pre = n_pre,
                             .during = during,
                             .n_during = n_during,
                             .quiet = quiet};
  sw_err_clear(&e->err);
  int rc = sw_sched_result(e->sched, &rr, now, &e->err);
  free(own);
  return rc;
}

/* The same after a quiet wait that succeeded. */
static int deliver_with(struct env *e, const struct sw_lease *l, const char *worker, int r,
                        const struct sw_window_sample *pre, int n_pre,
                        const struct sw_window_sample *during, int n_during, const char *result,
                        int k, int64_t now) {
  return deliver_run(e, l, worker, r, 1, pre, n_pre, during, n_during, result, k, now);
}

/* The engine's model-size check reaches the scheduler: a run that trained a model 30% larger
 * than its arm's others (the float-mode runaway of issue 12) gets its pair rerun once, as a
 * contaminated one does, and the gate waits for that rerun before it concludes; the verdict JSON
 * names the run. */
START_TEST(model_size_outlier_gets_one_replacement) {
  struct env e;
  env_open(&e, 10000, 3, 0);
  int64_t sweep = submit_gate(&e, "g", 4, 4, NULL, 0);
  hello(&e, "w1", NULL, 0);
  struct sw_lease l;
  int64_t now = 0;
  int k = 0;
  while (sw_sched_sweep_finished(e.sched, sweep, &e.err) == 0) {
    ck_assert_int_lt(k, 10);
    now += 10;
    ck_assert_int_eq(sw_sched_next(e.sched, "w1", now, &l, &e.err), 1);
    for (int r = 0; r < l.n_runs; r++) {
      char *res = fake_result(l.runs[r].arm, k, 0.95);
      char *at = strstr(res, "\"splats_final\":1000");
      ck_assert_ptr_nonnull(at);
      if (l.pair_index == 2 && strcmp(l.runs[r].arm, "off") == 0) memcpy(at + 15, "1300", 4);
      ck_assert_msg(deliver_with(&e, &l, "w1", r, QUIET, 1, QUIET, 3, res, k, now) == 0, "%s",
                    e.err.msg);
      free(res);
    }
    ck_assert_msg(sw_sched_lease_done(e.sched, l.lease_id, l.epoch, "w1", now, &e.err) == 0, "%s",
                  e.err.msg);
    k++;
    sw_lease_clear(&l);
  }
  /* No run's window flagged anything: the rerun comes from the model's size alone. */
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM attempts WHERE status <> 'ok'"), 0);
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM pairs WHERE is_replacement = 1"), 1);
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM pairs WHERE is_replacement = 1 AND replaces = 2"),
                   1);
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM pairs WHERE status = 'done'"), 5);
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM events WHERE kind = 'replace' AND text LIKE "
                          "'pair 2 trained a model of another size%'"),
                   1);
  ck_assert_int_eq(q1(&e, "SELECT json_extract(verdict_json, '$.model_size.pairs_flagged') FROM "
                          "gates"),
                   1);
  ck_assert_int_eq(q1(&e, "SELECT json_extract(verdict_json, '$.model_size.flagged[0].pair') = 2 "
                          "AND json_extract(verdict_json, '$.model_size.flagged[0].arm') = 'off' "
                          "FROM gates"),
                   1);
  /* The engine's input position, and the pair's index in the store for readers. */
  ck_assert_int_eq(
      q1(&e, "SELECT json_extract(verdict_json, '$.model_size.flagged[0].pair_index') FROM gates"),
      2);
  ck_assert_int_eq(q1(&e, "SELECT json_extract(verdict_json, '$.counts.used') FROM gates"), 4);
  ck_assert_int_eq(q1(&e, "SELECT status = 'done' AND verdict = 'adopt' FROM gates"), 1);
  env_close(&e);
}
END_TEST

/* The machine never became quiet before the run: background indexing kept 1.5 cores busy (and
 * load1 at 4) through the settle window, the worker's bounded wait gave up, and the run started
 * anyway. */
#define INDEXING_S(t)                                                                              \
  { .t_ms = (t), .load1 = 4.0, .cpu_other = 1.5, .cpu_total = 1.6, .mem_avail = 1e9 }
static const struct sw_window_sample LOADED_PRE[6] = {INDEXING_S(-6000), INDEXING_S(-5000),
                                                      INDEXING_S(-4000), INDEXING_S(-3000),
                                                      INDEXING_S(-2000), INDEXING_S(-1000)};

/* LAB-PRACTICE rule 4: a contaminated run's pair is rerun ONCE, the original kept and labelled.
 * Pair 0's off run starts on a loaded machine (pre-run window), its replacement is contaminated
 * too (load during the run): no third try; the engine's sensitivity analysis sees both. */
/* A result that parses but breaks docs/result.schema.json is stored as invalid with the
 * schema's complaint, none of its numbers where a verdict reads them, and its pair is replaced
 * (issue: a fake `{"metrics":{"train_s":1,"psnr_db":99}}` used to be stored as ok). */
START_TEST(schema_invalid_result_is_invalid_and_out_of_the_verdict) {
  static const char *const BAD[] = {
      "{\"metrics\":{\"train_s\":1,\"psnr_db\":99}}", NULL, /* negative train_s, filled below */
      NULL,                                                 /* ssim 7 */
  };
  const char *where[] = {"/: the required property 'schema' is missing", "/metrics/train_s",
                         "/metrics/ssim"};
  for (int b = 0; b < 3; b++) {
    struct env e;
    env_open(&e, 10000, 3, 0);
    submit_gate(&e, "g", 1, 1, NULL, 0);
    hello(&e, "w1", NULL, 0);
    struct sw_lease l;
    ck_assert_int_eq(sw_sched_next(e.sched, "w1", 0, &l, &e.err), 1);
    char *good = fake_result(l.runs[0].arm, 0, 0.95);
    json_t *o = json_loads(good, 0, NULL);
    if (b == 1) json_object_set_new(json_object_get(o, "metrics"), "train_s", json_real(-5));
    if (b == 2) json_object_set_new(json_object_get(o, "metrics"), "ssim", json_real(7));
    char *bad = b == 0 ? strdup(BAD[0]) : json_dumps(o, JSON_COMPACT);
    json_decref(o);
    ck_assert_int_eq(deliver_with(&e, &l, "w1", 0, QUIET, 1, QUIET, 3, bad, 0, 10), 0);
    free(bad);
    free(good);
    ck_assert_int_eq(deliver(&e, &l, "w1", 1, 0, QUIET, 3, 0, 0.95, 20), 0);
    ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM attempts WHERE status = 'invalid' AND "
                            "train_s IS NULL AND psnr_db IS NULL AND ssim IS NULL AND "
                            "trainer_sha256 IS NULL AND result_json IS NOT NULL AND "
                            "flag_reason LIKE 'result.json breaks docs/result.schema.json at %'"),
                     1);
    sqlite3_stmt *st;
    ck_assert_int_eq(sqlite3_prepare_v2(sw_store_db(e.store),
                                        "SELECT flag_reason FROM attempts WHERE status = 'invalid'",
                                        -1, &st, NULL),
                     SQLITE_OK);
    ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
    ck_assert_msg(strstr((const char *)sqlite3_column_text(st, 0), where[b]), "%s",
                  sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM kernels"), 1); /* the good run's only */
    /* The pair is replaced, and the gate has no verdict from the invalid pair. */
    ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM pairs WHERE is_replacement = 1"), 1);
    ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM gates WHERE verdict IS NULL"), 1);
    sw_lease_clear(&l);
    env_close(&e);
    teardown(); /* a fresh store for the next case */
    setup();
  }
}
END_TEST

START_TEST(contaminated_pair_is_rerun_once_only) {
  struct env e;
  env_open(&e, 10000, 3, 0);
  int64_t sweep = submit_gate(&e, "g", 3, 3, NULL, 0);
  hello(&e, "w1", NULL, 0);
  struct sw_lease l;
  int64_t now = 0;
  int k = 0;
  while (sw_sched_sweep_finished(e.sched, sweep, &e.err) == 0) {
    ck_assert_int_lt(k, 10);
    now += 10;
    ck_assert_int_eq(sw_sched_next(e.sched, "w1", now, &l, &e.err), 1);
    if (l.pair_index == 0) {
      ck_assert_int_eq(deliver_run(&e, &l, "w1", 0, 0, LOADED_PRE, 6, QUIET, 3, NULL, k, now), 0);
      ck_assert_int_eq(deliver_with(&e, &l, "w1", 1, QUIET, 1, QUIET, 3, NULL, k, now), 0);
      ck_assert_int_eq(sw_sched_lease_done(e.sched, l.lease_id, l.epoch, "w1", now, &e.err), 0);
    } else if (l.pair_index == 3) { /* the replacement of pair 0 */
      ck_assert_int_eq(deliver_with(&e, &l, "w1", 0, QUIET, 1, QUIET, 3, NULL, k, now), 0);
      ck_assert_int_eq(deliver_with(&e, &l, "w1", 1, QUIET, 1, BUSY, N_BUSY, NULL, k, now), 0);
      ck_assert_int_eq(sw_sched_lease_done(e.sched, l.lease_id, l.epoch, "w1", now, &e.err), 0);
    } else {
      run_lease(&e, &l, "w1", k, 0.95, now);
    }
    k++;
    sw_lease_clear(&l);
  }
  ck_assert_int_eq(k, 4); /* 3 pairs + one replacement, nothing more */
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM pairs"), 4);
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM pairs WHERE is_replacement = 1 AND replaces = 0"),
                   1);
  /* Both contaminated runs are kept, labelled, with the windows that condemned them. */
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM attempts WHERE status = 'contaminated'"), 2);
  ck_assert_int_eq(q1(&e, "SELECT COUNT(DISTINCT a.id) FROM attempts a JOIN windows w ON "
                          "w.attempt_id = a.id WHERE a.status = 'contaminated' AND w.phase = "
                          "'pre' AND w.cpu_other > 1"),
                   1);
  /* Each carries the reason in words, with the numbers and the limits. */
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM attempts WHERE status = 'contaminated' AND "
                          "flag_reason LIKE 'not quiet before the run: cpu_other mean 1.21 cores "
                          "over the last 5.0 s (limit 0.20)%'"),
                   1);
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM attempts WHERE status = 'contaminated' AND "
                          "flag_reason LIKE '%cpu_other above 0.50 cores for 4.0 s (limit 2.0 s), "
                          "peak 1.20 at +4.0 s%'"),
                   1);
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM events WHERE kind = 'replace'"), 1);
  /* The verdict was computed on all three sets and warns about the second contamination. */
  ck_assert_int_eq(
      q1(&e, "SELECT json_array_length(verdict_json, '$.sensitivity.sets') FROM gates"), 3);
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM gates, json_each(gates.verdict_json, "
                          "'$.warnings') WHERE json_each.value LIKE '%is contaminated too%'"),
                   1);
  env_close(&e);
}
END_TEST

/* ---- contamination rules, judged with the product's defaults ------------------------------ */

/* A window of n samples one second apart from t0_ms, idle-looking: cpu_other alternates between
 * 0.0 and 0.1 cores (mean 0.05), load1 0.6, no GPU figures. */
static void idle_window(struct sw_window_sample *w, int n, int64_t t0_ms) {
  for (int i = 0; i < n; i++)
    w[i] = (struct sw_window_sample){.t_ms = t0_ms + 1000 * i,
                                     .load1 = 0.6,
                                     .cpu_other = 0.1 * (i % 2),
                                     .cpu_total = 1.0,
                                     .mem_avail = 1e9,
                                     .gpu_foreign = -1};
}

/* How one run was judged: its stored attempt status and flag_reason ("" when none). */
struct judged {
  char status[32];
  char reason[512];
};

/* Judges one run the way production does: a gate of one pair under the contamination object
 * (JSON members; "" = every default), its off run delivered with these windows and the worker's
 * quiet flag, its on run quiet; then reads the off run's attempt back from the store. Each call
 * uses a store of its own. */
static struct judged judge(const char *contamination, int quiet, const struct sw_window_sample *pre,
                           int n_pre, const struct sw_window_sample *during, int n_during) {
  static int calls;
  snprintf(g_db, sizeof g_db, "%s/judge%d.db", g_dir, ++calls);
  struct env e;
  env_open(&e, 10000, 3, 0);
  char json[1024];
  snprintf(json, sizeof json,
           "{\"name\":\"j\",\"kind\":\"gate\",\"trainer\":{\"builtin\":{}},\"scene\":{\"path\":\"/"
           "x\"},\"base\":{},"
           "\"arms\":{\"off\":{\"x\":0},\"on\":{\"x\":1}},"
           "\"pairs\":{\"n\":1,\"max\":1,\"order\":\"fixed\"},\"gate\":{\"metric\":\"train_s\"},"
           "\"contamination\":{%s}}",
           contamination);
  int64_t id = 0;
  ck_assert_msg(sw_sched_submit(e.sched, json, "test", NULL, 0, &id, &e.err) == 0, "%s", e.err.msg);
  hello(&e, "w1", NULL, 0);
  struct sw_lease l;
  ck_assert_int_eq(sw_sched_next(e.sched, "w1", 10, &l, &e.err), 1);
  ck_assert_int_eq(l.n_runs, 2);
  int off = strcmp(l.runs[0].arm, "off") == 0 ? 0 : 1;
  ck_assert_msg(deliver_run(&e, &l, "w1", off, quiet, pre, n_pre, during, n_during, NULL, 0, 20) ==
                    0,
                "%s", e.err.msg);
  ck_assert_int_eq(deliver_run(&e, &l, "w1", 1 - off, 1, QUIET, 1, QUIET, 3, NULL, 0, 30), 0);
  struct judged j = {"", ""};
  sqlite3_stmt *st;
  ck_assert_int_eq(sqlite3_prepare_v2(sw_store_db(e.store),
                                      "SELECT status, COALESCE(flag_reason, '') FROM attempts "
                                      "WHERE run_id = ?1",
                                      -1, &st, NULL),
                   SQLITE_OK);
  sqlite3_bind_int64(st, 1, l.runs[off].run_id);
  ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
  snprintf(j.status, sizeof j.status, "%s", (const char *)sqlite3_column_text(st, 0));
  snprintf(j.reason, sizeof j.reason, "%s", (const char *)sqlite3_column_text(st, 1));
  sqlite3_finalize(st);
  sw_lease_clear(&l);
  env_close(&e);
  return j;
}

#define ck_judged(j, want_status, want_reason)                                                     \
  do {                                                                                             \
    struct judged j_ = (j);                                                                        \
    ck_assert_msg(strcmp(j_.status, want_status) == 0 && strcmp(j_.reason, want_reason) == 0,      \
                  "judged %s (%s), want %s (%s)", j_.status, j_.reason, want_status, want_reason); \
  } while (0)

/* The old rule flagged any single sample above cpu_other_max; on real machines that was every
 * run (cron, our own previous run exiting). A one-second spike, and a two-second one (exactly
 * over_max_s), are not evidence. */
START_TEST(idle_window_with_a_spike_is_not_flagged) {
  struct sw_window_sample w[60];
  idle_window(w, 60, 0);
  w[30].cpu_other = 0.9;
  ck_judged(judge("", 1, QUIET, 1, w, 60), "ok", "");
  /* The sample taken as the trainer starts speaks for the moment before it (the trainer's own
   * start-up is charged to "other" there): not the run's. */
  w[0].cpu_other = 1.5;
  ck_judged(judge("", 1, QUIET, 1, w, 60), "ok", "");
  w[31].cpu_other = 0.9; /* 2.0 s above 0.5: at the limit, not over it */
  ck_judged(judge("", 1, QUIET, 1, w, 60), "ok", "");
  /* No during samples at all is INVALID, and says why. */
  ck_judged(judge("", 1, QUIET, 1, w, 0), "invalid",
            "no window samples during the run (contamination.require_windows)");
}
END_TEST

/* A 5 s hog of a whole core inside a 60 s run: the mean stays low (0.13 cores), the time above
 * cpu_other_max does not. The reason is what the store keeps in attempts.flag_reason. */
START_TEST(five_second_hog_is_flagged) {
  struct sw_window_sample w[60];
  idle_window(w, 60, 0);
  for (int i = 20; i < 25; i++) w[i].cpu_other = 1.0;
  w[22].cpu_other = 1.02;
  ck_judged(judge("", 1, QUIET, 1, w, 60), "contaminated",
            "cpu_other above 0.50 cores for 5.0 s (limit 2.0 s), peak 1.02 at +22.0 s");
  /* Time is counted from the samples' own spacing: the same five samples taken every 2 s
   * stand for 10 s. */
  for (int i = 0; i < 60; i++) w[i].t_ms = 2000 * i;
  ck_judged(judge("", 1, QUIET, 1, w, 60), "contaminated",
            "cpu_other above 0.50 cores for 10.0 s (limit 2.0 s), peak 1.02 at +44.0 s");
}
END_TEST

/* Steady background work below the per-sample limit: 0.3 cores the whole run. */
START_TEST(steady_background_mean_is_flagged) {
  struct sw_window_sample w[30];
  idle_window(w, 30, 0);
  for (int i = 0; i < 30; i++) w[i].cpu_other = 0.3;
  /* 30 samples from the start stand for 29 s of the run: the one taken as the trainer starts
   * (t 0) speaks for the second before it. */
  ck_judged(judge("", 1, QUIET, 1, w, 30), "contaminated",
            "cpu_other mean 0.30 cores over 29.0 s of the run (limit 0.20)");
  for (int i = 0; i < 30; i++) w[i].cpu_other = 0.15; /* below the mean limit */
  ck_judged(judge("", 1, QUIET, 1, w, 30), "ok", "");
}
END_TEST

/* A foreign process on the trainer's GPU is discrete evidence: one sample is enough. -1 (the
 * worker cannot attribute GPU processes) is not evidence, nor is a sample without GPU figures. */
START_TEST(foreign_gpu_process_is_flagged) {
  struct sw_window_sample w[20];
  idle_window(w, 20, 0);
  for (int i = 0; i < 20; i++) w[i].has_gpu = 1, w[i].gpu_foreign = 0;
  w[5].gpu_foreign = 1;
  w[6].gpu_foreign = 2;
  w[7].gpu_foreign = 2;
  ck_judged(judge("", 1, QUIET, 1, w, 20), "contaminated",
            "2 foreign process(es) on the trainer's GPU from +5.0 s to +7.0 s (3 of 20 samples)");
  ck_judged(judge("\"gpu_foreign\":false", 1, QUIET, 1, w, 20), "ok", "");
  for (int i = 0; i < 20; i++) w[i].gpu_foreign = -1;
  ck_judged(judge("", 1, QUIET, 1, w, 20), "ok", "");
  for (int i = 0; i < 20; i++) w[i].has_gpu = 0, w[i].gpu_foreign = 3;
  ck_judged(judge("", 1, QUIET, 1, w, 20), "ok", "");
  /* Every rule that holds is named, in one line. */
  for (int i = 0; i < 20; i++) w[i].has_gpu = 1, w[i].gpu_foreign = 0;
  w[10].gpu_foreign = 1;
  for (int i = 12; i < 15; i++) w[i].cpu_other = 0.8; /* 3 s; the mean stays at 0.17 */
  ck_judged(judge("", 1, QUIET, 1, w, 20), "contaminated",
            "cpu_other above 0.50 cores for 3.0 s (limit 2.0 s), peak 0.80 at +12.0 s; 1 foreign "
            "process(es) on the trainer's GPU from +10.0 s to +10.0 s (1 of 20 samples)");
}
END_TEST

/* The quiet wait gave up: judged on the last settle_s (5 s) of the pre window only. */
START_TEST(not_quiet_pre_window_is_flagged) {
  struct sw_window_sample pre[10], during[20];
  idle_window(pre, 10, -10000);
  idle_window(during, 20, 0);
  /* Busy from -6 s to -1 s (the samples at -5 .. -1 s); the last second before the start, which
   * the first during sample speaks for, was idle: 4 of the last 5 s at 0.9 cores. */
  for (int i = 5; i < 10; i++) pre[i].cpu_other = 0.9;
  ck_judged(judge("", 0, pre, 10, during, 20), "contaminated",
            "not quiet before the run: cpu_other mean 0.72 cores over the last 5.0 s (limit 0.20), "
            "above 0.50 for 4.0 s (limit 2.0 s)");
  /* The same window after a wait that succeeded is not judged again. */
  ck_judged(judge("", 1, pre, 10, during, 20), "ok", "");
  /* Load that ended before the settle window is not evidence against the run. */
  idle_window(pre, 10, -10000);
  for (int i = 0; i < 5; i++) pre[i].cpu_other = 0.9; /* -11 s .. -6 s */
  ck_judged(judge("", 0, pre, 10, during, 20), "ok", "");
}
END_TEST

/* load1 counts the trainer's own threads and our previous run (a 1-minute decaying average):
 * not checked by default; checked against the last pre-run sample when the spec sets it. */
START_TEST(load1_checked_only_when_set) {
  struct sw_window_sample pre[5], during[20];
  idle_window(pre, 5, -5000);
  idle_window(during, 20, 0);
  pre[4].load1 = 3.0;
  ck_judged(judge("", 1, pre, 5, during, 20), "ok", "");
  ck_judged(judge("\"load1_max\":1.5", 1, pre, 5, during, 20), "contaminated",
            "load1 3.00 before the run, above load1_max 1.50");
  ck_judged(judge("\"load1_max\":4", 1, pre, 5, during, 20), "ok", "");
}
END_TEST

/* LAB-PRACTICE rule 1: `order: fixed` is the lab's off-r1, on-r1, off-r2, on-r2, ...;
 * `order: random` is reproducible from pairs.seed. The order of each pair is what its lease
 * runs and what the store records. */
static void submit_order(struct env *e, const char *order, int64_t now) {
  char spec[1024];
  snprintf(spec, sizeof spec,
           "{\"name\":\"o\",\"kind\":\"gate\",\"trainer\":{\"builtin\":{}},\"scene\":{\"path\":\"/"
           "x\"},\"base\":{},"
           "\"arms\":{\"off\":{\"x\":0},\"on\":{\"x\":1}},"
           "\"pairs\":{\"n\":8,\"max\":8,\"order\":\"%s\",\"seed\":7},"
           "\"gate\":{\"metric\":\"train_s\"}}",
           order);
  int64_t id = 0;
  ck_assert_msg(sw_sched_submit(e->sched, spec, "test", NULL, now, &id, &e->err) == 0, "%s",
                e->err.msg);
}

static void orders_of(struct env *e, char *out, size_t len) {
  sqlite3_stmt *st;
  ck_assert_int_eq(sqlite3_prepare_v2(sw_store_db(e->store),
                                      "SELECT group_concat(ord, ' ') FROM (SELECT ord FROM pairs "
                                      "ORDER BY sweep_id DESC, idx) ",
                                      -1, &st, NULL),
                   SQLITE_OK);
  ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
  snprintf(out, len, "%s", (const char *)sqlite3_column_text(st, 0));
  sqlite3_finalize(st);
}

START_TEST(orders_fixed_and_random_seeded) {
  struct env e;
  env_open(&e, 10000, 3, 0);
  submit_order(&e, "fixed", 0);
  hello(&e, "w1", NULL, 0);
  for (int i = 0; i < 8; i++) {
    struct sw_lease l;
    ck_assert_int_eq(sw_sched_next(e.sched, "w1", 10 + i, &l, &e.err), 1);
    ck_assert_str_eq(l.order, "off-on");
    ck_assert_str_eq(l.runs[0].arm, "off");
    ck_assert_str_eq(l.runs[1].arm, "on");
    run_lease(&e, &l, "w1", i, 0.95, 10 + i);
    sw_lease_clear(&l);
  }
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM pairs WHERE ord = 'off-on'"), 8);
  env_close(&e);
  teardown();
  setup();
  /* The same seed gives the same random orders in a fresh store; both orders occur. */
  char first[128], second[128];
  env_open(&e, 10000, 3, 0);
  submit_order(&e, "random", 0);
  orders_of(&e, first, sizeof first);
  env_close(&e);
  teardown();
  setup();
  env_open(&e, 10000, 3, 0);
  submit_order(&e, "random", 0);
  orders_of(&e, second, sizeof second);
  ck_assert_str_eq(first, second);
  ck_assert_ptr_nonnull(strstr(first, "off-on"));
  ck_assert_ptr_nonnull(strstr(first, "on-off"));
  /* Each lease runs its arms in the recorded order. */
  hello(&e, "w1", NULL, 0);
  struct sw_lease l;
  ck_assert_int_eq(sw_sched_next(e.sched, "w1", 10, &l, &e.err), 1);
  ck_assert_str_eq(l.runs[0].arm, strcmp(l.order, "off-on") == 0 ? "off" : "on");
  sw_lease_clear(&l);
  env_close(&e);
}
END_TEST

/* LAB-PRACTICE rule 3: a gate is never adopted unless its quality guard was judged. The trainer
 * here (a foreign one, mapped) reports no psnr_db (the spec's guard metric): a clear 5% speed-up
 * stays inconclusive. */
START_TEST(gate_without_guard_values_is_not_adopted) {
  struct env e;
  env_open(&e, 10000, 3, 0);
  int64_t sweep = submit_gate(&e, "g", 3, 3, NULL, 0);
  hello(&e, "w1", NULL, 0);
  /* A contract result must carry psnr_db (else it is invalid): a foreign trainer's mapped one
   * need not. */
  g_mapped_results = 1;
  for (int k = 0; sw_sched_sweep_finished(e.sched, sweep, &e.err) == 0; k++) {
    ck_assert_int_lt(k, 5);
    struct sw_lease l;
    ck_assert_int_eq(sw_sched_next(e.sched, "w1", k * 10, &l, &e.err), 1);
    for (int r = 0; r < l.n_runs; r++) {
      char *res = fake_result(l.runs[r].arm, k, 0.95);
      json_t *o = json_loads(res, 0, NULL);
      ck_assert_ptr_nonnull(o);
      ck_assert_int_eq(json_object_del(json_object_get(o, "metrics"), "psnr_db"), 0);
      char *text = json_dumps(o, JSON_COMPACT);
      ck_assert_int_eq(deliver_with(&e, &l, "w1", r, QUIET, 1, QUIET, 3, text, k, k * 10), 0);
      free(text);
      json_decref(o);
      free(res);
    }
    ck_assert_int_eq(sw_sched_lease_done(e.sched, l.lease_id, l.epoch, "w1", k * 10, &e.err), 0);
    sw_lease_clear(&l);
  }
  ck_assert_int_eq(q1(&e, "SELECT verdict = 'inconclusive' AND json_extract(verdict_json, "
                          "'$.lab.significant') AND NOT json_extract(verdict_json, "
                          "'$.guard.evaluated') FROM gates"),
                   1);
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM gates, json_each(gates.verdict_json, "
                          "'$.reasons') WHERE json_each.value LIKE '%quality guard is required%'"),
                   1);
  g_mapped_results = 0;
  env_close(&e);
}
END_TEST

/* Runs a 4-pair gate on w1 and w2 (alternating) whose trainer binary is "aa", except that
 * worker `changer` reports "ab" from its second pair on (from its first when `from_start`);
 * returns the stored verdict. */
static void run_binaries(const char *changer, int from_start, char *verdict, size_t len) {
  struct env e;
  env_open(&e, 10000, 3, 0);
  int64_t sweep = submit_gate(&e, "g", 4, 4, NULL, 0);
  hello(&e, "w1", NULL, 0);
  hello(&e, "w2", NULL, 0);
  int seen[2] = {0, 0};
  for (int k = 0; sw_sched_sweep_finished(e.sched, sweep, &e.err) == 0; k++) {
    ck_assert_int_lt(k, 8);
    const char *w = k % 2 ? "w2" : "w1";
    struct sw_lease l;
    ck_assert_int_eq(sw_sched_next(e.sched, w, k * 10, &l, &e.err), 1);
    int rebuilt = changer && strcmp(w, changer) == 0 && (from_start || seen[k % 2] >= 1);
    seen[k % 2]++;
    for (int r = 0; r < l.n_runs; r++) {
      char *res = fake_result(l.runs[r].arm, k, 0.95);
      char aa[SW_SHA256_HEX_LEN], ab[SW_SHA256_HEX_LEN];
      fixture_sha("aa", aa);
      fixture_sha("ab", ab);
      char *sha = strstr(res, aa);
      ck_assert_ptr_nonnull(sha);
      if (rebuilt) memcpy(sha, ab, 64);
      ck_assert_int_eq(deliver_with(&e, &l, w, r, QUIET, 1, QUIET, 3, res, k, k * 10), 0);
      free(res);
    }
    ck_assert_int_eq(sw_sched_lease_done(e.sched, l.lease_id, l.epoch, w, k * 10, &e.err), 0);
    sw_lease_clear(&l);
  }
  sqlite3_stmt *st;
  ck_assert_int_eq(
      sqlite3_prepare_v2(sw_store_db(e.store), "SELECT verdict FROM gates", -1, &st, NULL),
      SQLITE_OK);
  ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
  snprintf(verdict, len, "%s", (const char *)sqlite3_column_text(st, 0));
  sqlite3_finalize(st);
  if (changer && !from_start)
    ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM gates, json_each(gates.verdict_json, "
                            "'$.reasons') WHERE json_each.value LIKE '%trainer binary changed%'"),
                     1);
  env_close(&e);
}

/* LAB-PRACTICE rule 7: the trainer binary is the same before and after a series. A worker
 * whose binary changes in the middle of a gate makes the verdict inconclusive, whatever the
 * numbers say; two workers with different (but each constant) binaries do not. */
START_TEST(binary_change_mid_gate_is_inconclusive) {
  char verdict[32];
  run_binaries(NULL, 0, verdict, sizeof verdict);
  ck_assert_str_eq(verdict, "adopt");
  teardown();
  setup();
  run_binaries("w2", 1, verdict, sizeof verdict); /* another machine, another build */
  ck_assert_str_eq(verdict, "adopt");
  teardown();
  setup();
  run_binaries("w2", 0, verdict, sizeof verdict);
  ck_assert_str_eq(verdict, "inconclusive");
  teardown();
  setup();
  /* A sequential gate (first look at 3 of at most 6 pairs) rebuilt after its first pair stops
   * at the first look: more pairs cannot unmix the builds. */
  struct env e;
  env_open(&e, 10000, 3, 0);
  const char *spec = "{\"name\":\"seq\",\"kind\":\"gate\",\"trainer\":{\"builtin\":{}},\"scene\":{"
                     "\"path\":\"/x\"},\"base\":{},"
                     "\"arms\":{\"off\":{\"x\":0},\"on\":{\"x\":1}},"
                     "\"pairs\":{\"n\":3,\"max\":6,\"order\":\"alternate\",\"sequential\":true},"
                     "\"gate\":{\"metric\":\"train_s\"}}";
  int64_t sweep = 0;
  ck_assert_msg(sw_sched_submit(e.sched, spec, "test", NULL, 0, &sweep, &e.err) == 0, "%s",
                e.err.msg);
  hello(&e, "w1", NULL, 0);
  for (int k = 0; sw_sched_sweep_finished(e.sched, sweep, &e.err) == 0; k++) {
    ck_assert_int_lt(k, 8);
    struct sw_lease l;
    ck_assert_int_eq(sw_sched_next(e.sched, "w1", k * 10, &l, &e.err), 1);
    for (int r = 0; r < l.n_runs; r++) {
      char *res = fake_result(l.runs[r].arm, k, 0.95);
      char aa[SW_SHA256_HEX_LEN], ab[SW_SHA256_HEX_LEN];
      fixture_sha("aa", aa);
      fixture_sha("ab", ab);
      ck_assert_ptr_nonnull(strstr(res, aa));
      if (k >= 1) memcpy(strstr(res, aa), ab, 64);
      ck_assert_int_eq(deliver_with(&e, &l, "w1", r, QUIET, 1, QUIET, 3, res, k, k * 10), 0);
      free(res);
    }
    ck_assert_int_eq(sw_sched_lease_done(e.sched, l.lease_id, l.epoch, "w1", k * 10, &e.err), 0);
    sw_lease_clear(&l);
  }
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM pairs WHERE status = 'done'"), 3);
  ck_assert_int_eq(q1(&e, "SELECT verdict = 'inconclusive' AND json_extract(verdict_json, "
                          "'$.sequential.decision') = 'stop-futile' FROM gates"),
                   1);
  env_close(&e);
}
END_TEST

/* ---- environment changes inside a pair ---------------------------------------------------- */

/* A worker's environment objects as worker/sw_fingerprint.c writes them (compact, sorted keys):
 * ENV_A; ENV_B after a rebuild of the trainer; ENV_C after a driver update. ENV_A_SPACED is
 * ENV_A with its keys in another order and spaced out: the same object. */
#define SHA_A "1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f809"
#define SHA_B "9f8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a39281706f5e4d3c2b1a0"
static const char ENV_A[] =
    "{\"device\":\"NVIDIA H200\",\"driver\":\"550.54.15\",\"trainer_sha256\":\"" SHA_A "\"}";
static const char ENV_B[] =
    "{\"device\":\"NVIDIA H200\",\"driver\":\"550.54.15\",\"trainer_sha256\":\"" SHA_B "\"}";
static const char ENV_C[] =
    "{\"device\":\"NVIDIA H200\",\"driver\":\"555.42.06\",\"trainer_sha256\":\"" SHA_A "\"}";
static const char ENV_A_SPACED[] =
    "{ \"trainer_sha256\": \"" SHA_A "\", \"driver\": \"550.54.15\", \"device\": \"NVIDIA H200\" }";

/* The environments each run reports, by pair index (3: the replacement, if one is added) and
 * run position; NULL is what an old worker sends. */
struct pair_envs {
  const char *before[4][2], *after[4][2];
};

/* Runs the 3-pair gate of submit_gate on w1, every run quiet and the on arm 5% faster, each run
 * reporting its environments from envs; run_ids gets each run's id (0 for a pair not run). */
static void run_env_gate(struct env *e, const struct pair_envs *envs, int64_t run_ids[4][2]) {
  int64_t sweep = submit_gate(e, "g", 3, 3, NULL, 0);
  hello(e, "w1", NULL, 0);
  memset(run_ids, 0, 4 * sizeof *run_ids);
  for (int k = 0; sw_sched_sweep_finished(e->sched, sweep, &e->err) == 0; k++) {
    ck_assert_int_lt(k, 4);
    int64_t now = 10 * (k + 1);
    struct sw_lease l;
    ck_assert_int_eq(sw_sched_next(e->sched, "w1", now, &l, &e->err), 1);
    ck_assert_int_lt(l.pair_index, 4);
    for (int r = 0; r < l.n_runs; r++) {
      char *res = fake_result(l.runs[r].arm, k, 0.95);
      struct sw_run_result rr = {.lease_id = l.lease_id,
                                 .epoch = l.epoch,
                                 .worker_id = "w1",
                                 .run_id = l.runs[r].run_id,
                                 .attempt = l.attempt,
                                 .result_json = res,
                                 .pre = QUIET,
                                 .n_pre = 1,
                                 .during = QUIET,
                                 .n_during = 3,
                                 .quiet = 1,
                                 .env_before = envs->before[l.pair_index][r],
                                 .env_after = envs->after[l.pair_index][r]};
      ck_assert_msg(sw_sched_result(e->sched, &rr, now, &e->err) == 0, "%s", e->err.msg);
      run_ids[l.pair_index][r] = l.runs[r].run_id;
      free(res);
    }
    ck_assert_int_eq(sw_sched_lease_done(e->sched, l.lease_id, l.epoch, "w1", now, &e->err), 0);
    sw_lease_clear(&l);
  }
}

/* How run run_id's first attempt was judged (status, flag_reason or ""). */
static struct judged attempt_of(struct env *e, int64_t run_id) {
  struct judged j = {"", ""};
  sqlite3_stmt *st;
  ck_assert_int_eq(sqlite3_prepare_v2(sw_store_db(e->store),
                                      "SELECT status, COALESCE(flag_reason, '') FROM attempts "
                                      "WHERE run_id = ?1 AND attempt = 1",
                                      -1, &st, NULL),
                   SQLITE_OK);
  sqlite3_bind_int64(st, 1, run_id);
  ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
  snprintf(j.status, sizeof j.status, "%s", (const char *)sqlite3_column_text(st, 0));
  snprintf(j.reason, sizeof j.reason, "%s", (const char *)sqlite3_column_text(st, 1));
  sqlite3_finalize(st);
  return j;
}

/* Every run of every pair reports env (before and after) unless envs already names one. */
static void fill_envs(struct pair_envs *envs, const char *env) {
  for (int p = 0; p < 4; p++)
    for (int r = 0; r < 2; r++) {
      if (!envs->before[p][r]) envs->before[p][r] = env;
      if (!envs->after[p][r]) envs->after[p][r] = env;
    }
}

/* The trainer was rebuilt while pair 1's first run was running: that run is invalid, says what
 * changed, and its pair is re-run once; the gate decides on the other three pairs. A driver
 * update is named with its values in full. */
START_TEST(env_change_during_a_run_invalidates_its_pair) {
  struct env e;
  env_open(&e, 10000, 3, 0);
  struct pair_envs envs = {0};
  envs.after[1][0] = ENV_B;
  fill_envs(&envs, ENV_A);
  int64_t ids[4][2];
  run_env_gate(&e, &envs, ids);
  ck_judged(attempt_of(&e, ids[1][0]), "invalid",
            "environment changed during the run: trainer_sha256 1a2b3c4d.. -> 9f8e7d6c..");
  ck_judged(attempt_of(&e, ids[1][1]), "ok", "");
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM pairs"), 4);
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM pairs WHERE is_replacement = 1 AND replaces = 1"),
                   1);
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM attempts WHERE status <> 'ok'"), 1);
  ck_assert_int_eq(q1(&e, "SELECT verdict = 'adopt' AND json_extract(verdict_json, "
                          "'$.counts.invalid') = 1 AND json_extract(verdict_json, "
                          "'$.counts.used') = 3 FROM gates"),
                   1);
  env_close(&e);
  teardown();
  setup();
  env_open(&e, 10000, 3, 0);
  struct pair_envs drv = {0};
  drv.after[0][1] = ENV_C;
  fill_envs(&drv, ENV_A);
  run_env_gate(&e, &drv, ids);
  ck_judged(attempt_of(&e, ids[0][1]), "invalid",
            "environment changed during the run: driver \"550.54.15\" -> \"555.42.06\"");
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM pairs WHERE is_replacement = 1 AND replaces = 0"),
                   1);
  env_close(&e);
}
END_TEST

/* The trainer was rebuilt between pair 1's off and on runs (each run saw one build from start
 * to end): the later run is invalid, the pair is re-run once, and the verdict is computed
 * without it (one invalid pair, three used). */
START_TEST(env_change_between_a_pairs_runs_invalidates_the_later_run) {
  struct env e;
  env_open(&e, 10000, 3, 0);
  struct pair_envs envs = {0};
  envs.before[1][0] = envs.after[1][0] = ENV_A;
  for (int p = 0; p < 4; p++)
    for (int r = 0; r < 2; r++)
      if (p >= 2 || (p == 1 && r == 1)) envs.before[p][r] = envs.after[p][r] = ENV_B;
  fill_envs(&envs, ENV_A);
  int64_t ids[4][2];
  run_env_gate(&e, &envs, ids);
  ck_judged(attempt_of(&e, ids[1][0]), "ok", "");
  ck_judged(attempt_of(&e, ids[1][1]), "invalid",
            "environment changed between the pair's runs: trainer_sha256 1a2b3c4d.. -> "
            "9f8e7d6c..");
  ck_assert_int_ne(ids[3][0], 0); /* the replacement ran */
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM pairs"), 4);
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM pairs WHERE is_replacement = 1 AND replaces = 1"),
                   1);
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM attempts WHERE status <> 'ok'"), 1);
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM events WHERE kind = 'replace'"), 1);
  ck_assert_int_eq(q1(&e, "SELECT verdict = 'adopt' AND json_extract(verdict_json, "
                          "'$.counts.input') = 4 AND json_extract(verdict_json, "
                          "'$.counts.invalid') = 1 AND json_extract(verdict_json, "
                          "'$.counts.used') = 3 FROM gates"),
                   1);
  env_close(&e);
}
END_TEST

/* One environment everywhere is no change, also where a run writes the same object with its
 * keys in another order (objects are compared, not text): every run ok, nothing re-run. */
START_TEST(same_env_everywhere_is_ok) {
  struct env e;
  env_open(&e, 10000, 3, 0);
  struct pair_envs envs = {0};
  envs.after[0][0] = ENV_A_SPACED;
  envs.before[2][1] = envs.after[2][1] = ENV_A_SPACED;
  fill_envs(&envs, ENV_A);
  int64_t ids[4][2];
  run_env_gate(&e, &envs, ids);
  ck_assert_int_eq(ids[3][0], 0);
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM pairs"), 3);
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM attempts WHERE status = 'ok' AND flag_reason IS "
                          "NULL AND env_before IS NOT NULL"),
                   6);
  ck_assert_int_eq(q1(&e, "SELECT verdict = 'adopt' FROM gates"), 1);
  env_close(&e);
}
END_TEST

/* Old workers send no environments: nothing to compare, nothing flagged. Nor is a run that
 * carries only one of the two, or a pair where only one run has env_before. */
START_TEST(missing_envs_are_not_evidence) {
  struct env e;
  env_open(&e, 10000, 3, 0);
  struct pair_envs envs = {0};
  envs.after[1][0] = ENV_A;
  envs.before[1][1] = envs.after[1][1] = ENV_B;
  envs.before[2][0] = ENV_B;
  int64_t ids[4][2];
  run_env_gate(&e, &envs, ids);
  ck_assert_int_eq(ids[3][0], 0);
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM pairs"), 3);
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM attempts WHERE status = 'ok' AND flag_reason IS "
                          "NULL"),
                   6);
  ck_assert_int_eq(q1(&e, "SELECT verdict = 'adopt' FROM gates"), 1);
  env_close(&e);
}
END_TEST

START_TEST(spread_leaves_next_pair_to_idle_peer) {
  struct env e;
  env_open(&e, 10000, 3, 0);
  submit_gate(&e, "g", 4, 4, NULL, 0);
  hello(&e, "w1", NULL, 0);
  hello(&e, "w2", NULL, 0);
  struct sw_lease l;
  ck_assert_int_eq(sw_sched_next(e.sched, "w1", 1, &l, &e.err), 1);
  run_lease(&e, &l, "w1", 0, 0.95, 2);
  sw_lease_clear(&l);
  /* w1 has run one pair, w2 none and is idle: w1 waits, w2 gets the next pair. */
  ck_assert_int_eq(sw_sched_next(e.sched, "w1", 3, &l, &e.err), 0);
  ck_assert_int_eq(sw_sched_next(e.sched, "w2", 4, &l, &e.err), 1);
  ck_assert_int_eq(l.pair_index, 1);
  /* w2 busy now: w1 may take another. */
  struct sw_lease l1;
  ck_assert_int_eq(sw_sched_next(e.sched, "w1", 5, &l1, &e.err), 1);
  sw_lease_clear(&l1);
  sw_lease_clear(&l);
  /* A gone worker does not hold anybody back. */
  ck_assert_int_eq(sw_sched_worker_gone(e.sched, "w2", 6, &e.err), 0);
  env_close(&e);
}
END_TEST

/* Spread counts machines, not workers: three workers share host "ha" (three GPUs), one is alone on
 * "hb". Each round every idle worker asks in the order a1 a2 a3 b1, then every busy one finishes.
 * Counting per worker, a1 a2 a3 would each take a pair in the first round (3 on ha, 1 on hb);
 * counting per machine, ha's second and third worker leave the pair to idle b1, and the gate's
 * 4 pairs end 2 and 2. */
START_TEST(spread_counts_machines_not_workers) {
  struct env e;
  env_open(&e, 10000, 3, 0);
  int64_t sweep = submit_gate(&e, "g", 4, 4, NULL, 0);
  const char *w[4] = {"a1", "a2", "a3", "b1"};
  const char *host[4] = {"ha", "ha", "ha", "hb"};
  for (int i = 0; i < 4; i++) hello_on(&e, w[i], host[i], 0);
  struct sw_lease held[4];
  memset(held, 0, sizeof held);
  int busy[4] = {0}, k = 0, rounds = 0;
  int64_t now = 10;
  while (sw_sched_sweep_finished(e.sched, sweep, &e.err) == 0) {
    ck_assert_int_lt(rounds++, 10);
    for (int i = 0; i < 4; i++) {
      int rc = sw_sched_next(e.sched, w[i], now++, &held[i], &e.err);
      ck_assert_msg(rc >= 0, "%s", e.err.msg);
      busy[i] = rc == 1;
    }
    for (int i = 0; i < 4; i++) {
      if (!busy[i]) continue;
      run_lease(&e, &held[i], w[i], k++, 0.95, now++);
      sw_lease_clear(&held[i]);
      busy[i] = 0;
    }
  }
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM pairs WHERE status = 'done'"), 4);
  ck_assert_int_eq(
      q1(&e, "SELECT COUNT(*) FROM pairs WHERE status = 'done' AND worker_id IN ('a1','a2','a3')"),
      2);
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM pairs WHERE status = 'done' AND worker_id = 'b1'"),
                   2);
  env_close(&e);
}
END_TEST

/* A worker that says Hello again from another host leaves its old machine: a1 and a2 share "ha"
 * until a1 reappears on "hc". Were a2 still counted with a1, a2 would hold back for idle b1 once
 * a1 took a pair; as its own machine with no pair it takes one at once. */
START_TEST(spread_follows_a_worker_to_its_new_host) {
  struct env e;
  env_open(&e, 10000, 3, 0);
  submit_gate(&e, "g", 4, 4, NULL, 0);
  hello_on(&e, "a1", "ha", 0);
  hello_on(&e, "a2", "ha", 0);
  hello_on(&e, "b1", "hb", 0);
  hello_on(&e, "a1", "hc", 1);
  struct sw_lease l1, l2;
  ck_assert_int_eq(sw_sched_next(e.sched, "a1", 2, &l1, &e.err), 1);
  ck_assert_int_eq(sw_sched_next(e.sched, "a2", 3, &l2, &e.err), 1);
  sw_lease_clear(&l2);
  /* b1 is idle with no pair: a1's machine (one pair) now leaves the next pair to b1. */
  run_lease(&e, &l1, "a1", 0, 0.95, 4);
  sw_lease_clear(&l1);
  ck_assert_int_eq(sw_sched_next(e.sched, "a1", 5, &l1, &e.err), 0);
  env_close(&e);
}
END_TEST

/* Runs a sequential gate (n 3, max 6) on one worker whose on arm is 1.5% faster with a per-pair
 * jitter of +-jitter; returns the pairs completed and the verdict's name in verdict. */
static int64_t run_sequential(double jitter, char *verdict, size_t len) {
  struct env e;
  env_open(&e, 10000, 3, 0);
  const char *spec =
      "{\"name\":\"seq\",\"kind\":\"gate\",\"trainer\":{\"builtin\":{}},\"scene\":{\"path\":\"/"
      "x\"},\"base\":{},"
      "\"arms\":{\"off\":{\"x\":0},\"on\":{\"x\":1}},"
      "\"pairs\":{\"n\":3,\"max\":6,\"order\":\"alternate\",\"sequential\":true},"
      "\"gate\":{\"metric\":\"train_s\",\"direction\":\"lower\",\"rule\":{\"k\":2.0,\"floor\":"
      "0.01},\"guard\":{\"metric\":\"psnr_db\",\"max_drop\":0.05}},"
      "\"contamination\":{\"require_windows\":true,\"rerun_once\":true}}";
  int64_t sweep = 0;
  ck_assert_msg(sw_sched_submit(e.sched, spec, "test", NULL, 0, &sweep, &e.err) == 0, "%s",
                e.err.msg);
  hello(&e, "w1", NULL, 0);
  struct sw_lease l;
  int64_t now = 0;
  int k = 0;
  while (sw_sched_sweep_finished(e.sched, sweep, &e.err) == 0) {
    ck_assert_int_lt(k, 10);
    now += 10;
    ck_assert_int_eq(sw_sched_next(e.sched, "w1", now, &l, &e.err), 1);
    ck_assert_int_eq(l.pair_index, k);
    ck_assert_str_eq(l.order, k % 2 ? "on-off" : "off-on"); /* extensions keep alternating */
    run_lease(&e, &l, "w1", k, 0.985 + jitter * (((k * 5) % 3) - 1), now);
    k++;
    sw_lease_clear(&l);
  }
  int64_t total = q1(&e, "SELECT COUNT(*) FROM pairs WHERE status = 'done'");
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM pairs"), total);  /* nothing left pending */
  ck_assert_int_eq(q1(&e, "SELECT looks FROM gates"), total - 2); /* a look per pair from 3 on */
  sqlite3_stmt *st;
  ck_assert_int_eq(
      sqlite3_prepare_v2(sw_store_db(e.store), "SELECT verdict FROM gates", -1, &st, NULL),
      SQLITE_OK);
  ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
  snprintf(verdict, len, "%s", (const char *)sqlite3_column_text(st, 0));
  sqlite3_finalize(st);
  env_close(&e);
  return total;
}

START_TEST(sequential_gate_extends_while_inconclusive) {
  char verdict[32];
  /* Moderate noise: inconclusive at 3 pairs, decisive at the fourth (a look after every pair,
   * alpha spent across the looks: docs/gate-rules.md). */
  ck_assert_int_eq(run_sequential(0.008, verdict, sizeof verdict), 4);
  ck_assert_str_eq(verdict, "adopt");
  teardown();
  setup();
  /* More than twice the noise: extends to max and stops there, inconclusive. */
  ck_assert_int_eq(run_sequential(0.020, verdict, sizeof verdict), 6);
  ck_assert_str_eq(verdict, "inconclusive");
}
END_TEST

START_TEST(grid_expands_and_completes) {
  struct env e;
  env_open(&e, 10000, 3, 0);
  const char *spec = "{\"name\":\"pareto\",\"kind\":\"grid\",\"trainer\":{\"builtin\":{}},"
                     "\"scene\":{\"path\":\"/x\"},"
                     "\"base\":{\"seed\":42},\"parameters\":{\"iterations\":[100,200],\"binning\":"
                     "[\"resident\",\"transient\"]},\"repeats\":2,\"checkpoints\":[50],"
                     "\"contamination\":{\"require_windows\":false}}";
  int64_t sweep = 0;
  ck_assert_msg(sw_sched_submit(e.sched, spec, "test", NULL, 0, &sweep, &e.err) == 0, "%s",
                e.err.msg);
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM grid_points"), 8);
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM runs WHERE config_json LIKE "
                          "'%\"checkpoints\":[50]%'"),
                   8);
  ck_assert_int_eq(q1(&e, "SELECT COUNT(DISTINCT config_sha256) FROM runs"), 4);
  hello(&e, "w1", NULL, 0);
  hello(&e, "w2", NULL, 0);
  struct sw_lease l;
  int n = 0;
  for (int64_t now = 1; sw_sched_sweep_finished(e.sched, sweep, &e.err) == 0; now++) {
    ck_assert_int_lt(n, 20);
    const char *w = (now % 2) ? "w1" : "w2";
    ck_assert_int_eq(sw_sched_next(e.sched, w, now, &l, &e.err), 1);
    ck_assert_int_eq(l.n_runs, 1);
    ck_assert_str_eq(l.order, "single");
    run_lease(&e, &l, w, n++, 1.0, now);
    sw_lease_clear(&l);
  }
  ck_assert_int_eq(n, 8);
  ck_assert_int_eq(q1(&e, "SELECT status = 'done' FROM sweeps"), 1);
  /* A grid without parameters repeats the base config (an audit). */
  ck_assert_msg(sw_sched_submit(e.sched,
                                "{\"name\":\"audit\",\"kind\":\"grid\",\"trainer\":{\"builtin\":"
                                "{}},\"scene\":{\"path\":\"/x\"},\"base\":{\"seed\":42},"
                                "\"repeats\":3}",
                                "test", NULL, 5, &sweep, &e.err) == 0,
                "%s", e.err.msg);
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM grid_points WHERE label = 'base'"), 3);
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM runs WHERE config_json = '{\"seed\":42}'"), 3);
  ck_assert_int_eq(sw_sched_cancel(e.sched, sweep, 6, NULL, 0, NULL, &e.err), 0);
  /* A bad grid is refused before anything reaches the store. */
  int64_t id = 0;
  ck_assert_int_eq(sw_sched_submit(e.sched,
                                   "{\"name\":\"bad\",\"kind\":\"grid\",\"parameters\":{\"a\":"
                                   "[]}}",
                                   "test", NULL, 5, &id, &e.err),
                   SW_EINVAL);
  ck_assert_int_eq(sw_sched_submit(e.sched, "{not json", "test", NULL, 5, &id, &e.err), SW_EINVAL);
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM sweeps"), 2);
  env_close(&e);
}
END_TEST

/* One owner per rule: the limits are the spec loader's. A spec `check` refuses is refused at
 * submit (and so by `local`, which submits through the same call) with the same message, and
 * the largest one `check` accepts is accepted. */
START_TEST(limits_are_the_spec_loaders) {
  struct env e;
  env_open(&e, 10000, 3, 0);
  char big[1024];
  const char *gate_fmt =
      "{\"name\":\"lim\",\"kind\":\"gate\",\"trainer\":{\"builtin\":{}},\"scene\":{\"path\":\"/"
      "x\"},"
      "\"arms\":{\"off\":{\"a\":1},\"on\":{\"a\":2}},\"pairs\":{\"n\":%d,\"max\":%d}}";
  /* 101 x 100 = 10,100 runs: one over the grid limit. */
  char vals[2][700];
  for (int k = 0; k < 2; k++) {
    int n = k ? 100 : 101, used = 0;
    for (int i = 0; i < n; i++)
      used += snprintf(vals[k] + used, sizeof vals[k] - used, "%s%d", i ? "," : "", i);
  }
  const int cases[][2] = {{SW_SPEC_PAIRS_MAX + 1, SW_SPEC_PAIRS_MAX + 1},
                          {1, SW_SPEC_PAIRS_MAX + 1}};
  for (int c = 0; c < 3; c++) {
    const char *text = big;
    if (c < 2) {
      snprintf(big, sizeof big, gate_fmt, cases[c][0], cases[c][1]);
    } else {
      char *g = malloc(4096);
      snprintf(g, 4096,
               "{\"name\":\"lim\",\"kind\":\"grid\",\"trainer\":{\"builtin\":{}},\"scene\":{"
               "\"path\":\"/x\"},\"parameters\":{\"a\":[%s],\"b\":[%s]}}",
               vals[0], vals[1]);
      text = g;
    }
    struct sw_spec *spec = NULL;
    struct sw_err check = {0};
    ck_assert_int_eq(sw_spec_load_string(text, "test", &spec, &check), SW_EINVAL);
    int64_t id = 0;
    ck_assert_int_eq(sw_sched_submit(e.sched, text, "test", NULL, 0, &id, &e.err), SW_EINVAL);
    ck_assert_str_eq(e.err.msg, check.msg);
    sw_err_clear(&e.err);
    if (text != big) free((char *)text);
  }
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM sweeps"), 0);
  /* The limit itself is accepted by both. */
  snprintf(big, sizeof big, gate_fmt, SW_SPEC_PAIRS_MAX, SW_SPEC_PAIRS_MAX);
  struct sw_spec *spec = NULL;
  struct sw_err check = {0};
  ck_assert_msg(sw_spec_load_string(big, "test", &spec, &check) == 0, "%s", check.msg);
  sw_spec_destroy(&spec);
  int64_t id = 0;
  ck_assert_msg(sw_sched_submit(e.sched, big, "test", NULL, 0, &id, &e.err) == 0, "%s", e.err.msg);
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM pairs"), SW_SPEC_PAIRS_MAX);
  env_close(&e);
}
END_TEST

/* The grid is expanded once, by the spec: the stored points are sw_spec_grid_expand's in its
 * order, with its labels (sw_spec_label of their values), and each run's config is
 * sw_spec_resolve_point's (a checkpoint past a run's iterations dropped). */
START_TEST(grid_points_are_the_specs_expansion) {
  struct env e;
  env_open(&e, 10000, 3, 0);
  const char *text =
      "{\"name\":\"g\",\"kind\":\"grid\",\"trainer\":{\"builtin\":{\"timing\":true}},\"scene\":{"
      "\"path\":\"/x\"},\"base\":{\"seed\":7},\"parameters\":{\"radix_passes\":[\"skip\",\"full\"],"
      "\"scale\":[0.5,2],\"iterations\":[100,300]},\"repeats\":2,\"checkpoints\":[50,200]}";
  int64_t id = 0;
  ck_assert_msg(sw_sched_submit(e.sched, text, "test", NULL, 0, &id, &e.err) == 0, "%s", e.err.msg);
  struct sw_spec *spec = NULL;
  ck_assert_int_eq(sw_spec_load_string(text, "test", &spec, &e.err), 0);
  struct sw_spec_point *pts = NULL;
  size_t n = 0;
  ck_assert_int_eq(sw_spec_grid_expand(spec, &pts, &n, &e.err), 0);
  ck_assert_uint_eq(n, 16);
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM grid_points"), (int64_t)n);
  sqlite3_stmt *st;
  ck_assert_int_eq(sqlite3_prepare_v2(sw_store_db(e.store),
                                      "SELECT g.idx, g.label, g.params_json, g.repeat, "
                                      "r.config_json, r.arm FROM grid_points g JOIN pairs p ON "
                                      "p.point_id = g.id JOIN runs r ON r.pair_id = p.id "
                                      "ORDER BY g.idx",
                                      -1, &st, NULL),
                   SQLITE_OK);
  size_t i = 0;
  for (; sqlite3_step(st) == SQLITE_ROW; i++) {
    ck_assert_uint_lt(i, n);
    ck_assert_int_eq(sqlite3_column_int(st, 0), (int)pts[i].index);
    ck_assert_str_eq((const char *)sqlite3_column_text(st, 1), pts[i].label);
    ck_assert_str_eq((const char *)sqlite3_column_text(st, 5), pts[i].label);
    ck_assert_int_eq(sqlite3_column_int(st, 3), (int)pts[i].repeat);
    json_t *params = json_loads((const char *)sqlite3_column_text(st, 2), 0, NULL);
    char label[SW_SPEC_LABEL_MAX];
    sw_spec_label(params, label, sizeof label);
    ck_assert_str_eq(label, pts[i].label);
    json_decref(params);
    struct sw_spec_config c;
    ck_assert_int_eq(sw_spec_resolve_point(spec, &pts[i], &c, &e.err), 0);
    json_t *want = sw_spec_config_to_json(&c);
    char *want_text = json_dumps(want, JSON_COMPACT);
    ck_assert_str_eq((const char *)sqlite3_column_text(st, 4), want_text);
    free(want_text);
    json_decref(want);
    sw_spec_config_clear(&c);
  }
  sqlite3_finalize(st);
  ck_assert_uint_eq(i, n);
  ck_assert_str_eq(pts[0].label, "radix_passes=skip,scale=0.5,iterations=100");
  /* 200 lies past 100 iterations: those runs carry only the checkpoint at 50. */
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM runs WHERE config_json LIKE "
                          "'%\"iterations\":100,\"checkpoints\":[50]}'"),
                   8);
  sw_spec_points_free(&pts, n);
  sw_spec_destroy(&spec);
  env_close(&e);
}
END_TEST

/* Placement is one rule: for every worker, the scheduler offers a pair exactly when
 * sw_spec_placement_eligible says the worker may run the spec. */
START_TEST(placement_is_the_specs_rule) {
  struct env e;
  env_open(&e, 10000, 3, 0);
  const char *text =
      "{\"name\":\"p\",\"kind\":\"gate\",\"trainer\":{\"builtin\":{}},\"scene\":{\"path\":\"/x\"},"
      "\"arms\":{\"off\":{\"a\":1},\"on\":{\"a\":2}},\"pairs\":{\"n\":1,\"max\":1},"
      "\"placement\":{\"spread\":false,\"pin\":\"w*\",\"match\":{\"label.site\":\"lab-?\","
      "\"cores\":\"1?\",\"trainer_sha256\":\"ab*\"}}}";
  int64_t id = 0;
  ck_assert_msg(sw_sched_submit(e.sched, text, "test", NULL, 0, &id, &e.err) == 0, "%s", e.err.msg);
  struct sw_spec *spec = NULL;
  ck_assert_int_eq(sw_spec_load_string(text, "test", &spec, &e.err), 0);
  const struct {
    const char *id, *fp, *labels;
  } workers[] = {
      {"w1", "{\"cores\":16,\"trainer_sha256\":\"abc\"}", "{}"},                   /* no site */
      {"w2", "{\"cores\":8,\"trainer_sha256\":\"abc\"}", "{\"site\":\"lab-a\"}"},  /* cores */
      {"x3", "{\"cores\":16,\"trainer_sha256\":\"abc\"}", "{\"site\":\"lab-a\"}"}, /* pin */
      {"w4", "{\"cores\":16,\"trainer_sha256\":\"ff\"}", "{\"site\":\"lab-a\"}"},  /* binary */
      {"w5", "{\"cores\":16,\"trainer_sha256\":\"abc\"}", "{\"site\":\"lab-b\"}"}, /* all hold */
  };
  for (size_t i = 0; i < sizeof workers / sizeof *workers; i++) {
    ck_assert_int_eq(
        sw_sched_worker_hello(e.sched, workers[i].id, workers[i].fp, workers[i].labels, 1, &e.err),
        0);
    json_t *fp = json_loads(workers[i].fp, 0, NULL), *lb = json_loads(workers[i].labels, 0, NULL);
    int want = sw_spec_placement_eligible(&spec->placement, workers[i].id, fp, lb);
    json_decref(fp);
    json_decref(lb);
    struct sw_lease l;
    int got = sw_sched_next(e.sched, workers[i].id, 2 + (int64_t)i, &l, &e.err);
    ck_assert_msg(got == want, "%s: scheduler %d, placement rule %d", workers[i].id, got, want);
    ck_assert_int_eq(want, i == 4);
    if (got == 1) sw_lease_clear(&l);
  }
  sw_spec_destroy(&spec);
  env_close(&e);
}
END_TEST

/* After a restart the scheduler reloads each running sweep from its stored YAML through the spec
 * loader; one that no longer loads (a build with other rules wrote it) is failed with the
 * loader's message, and the others carry on. */
START_TEST(restart_reloads_specs_and_fails_one_that_no_longer_loads) {
  struct env e;
  env_open(&e, 10000, 3, 0);
  int64_t bad = submit_gate(&e, "old", 2, 2, NULL, 0);
  int64_t good = submit_gate(&e, "new", 2, 2, NULL, 0);
  char sql[200];
  snprintf(sql, sizeof sql,
           "UPDATE sweeps SET spec_yaml = replace(spec_yaml, '\"n\":2', '\"n\":2000') WHERE id = "
           "%lld",
           (long long)bad);
  ck_assert_int_eq(sqlite3_exec(sw_store_db(e.store), sql, NULL, NULL, NULL), SQLITE_OK);
  env_close(&e);
  env_open(&e, 10000, 3, 10);
  snprintf(sql, sizeof sql, "SELECT status = 'failed' FROM sweeps WHERE id = %lld", (long long)bad);
  ck_assert_int_eq(q1(&e, sql), 1);
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM events WHERE text LIKE '%stored spec does not "
                          "load: sweep %pairs.n%'"),
                   1);
  ck_assert_int_eq(sw_sched_sweep_finished(e.sched, good, &e.err), 0);
  hello(&e, "w1", NULL, 20);
  struct sw_lease l;
  ck_assert_int_eq(sw_sched_next(e.sched, "w1", 21, &l, &e.err), 1);
  ck_assert_int_eq(l.sweep_id, good);
  sw_lease_clear(&l);
  env_close(&e);
}
END_TEST

START_TEST(restart_keeps_leases_and_cancel) {
  struct env e;
  env_open(&e, 1000, 3, 0);
  int64_t sweep = submit_gate(&e, "g", 2, 2, NULL, 0);
  hello(&e, "w1", NULL, 0);
  struct sw_lease l;
  ck_assert_int_eq(sw_sched_next(e.sched, "w1", 0, &l, &e.err), 1);
  ck_assert_int_eq(deliver(&e, &l, "w1", 0, 0, QUIET, 3, 0, 0.95, 100), 0);
  env_close(&e);
  /* The coordinator restarts: the lease survives with a fresh term, the result completes it. */
  env_open(&e, 1000, 3, 5000);
  int n = -1;
  ck_assert_int_eq(sw_sched_tick(e.sched, 5500, &n, &e.err), 0);
  ck_assert_int_eq(n, 0);
  hello(&e, "w1", NULL, 5600);
  ck_assert_int_eq(deliver(&e, &l, "w1", 1, 0, QUIET, 3, 0, 0.95, 5700), 0);
  ck_assert_int_eq(q1(&e, "SELECT COUNT(*) FROM pairs WHERE status = 'done'"), 1);
  sw_lease_clear(&l);
  ck_assert_int_eq(sw_sched_next(e.sched, "w1", 5800, &l, &e.err), 1);
  int64_t ids[4];
  int nids = 0;
  ck_assert_int_eq(sw_sched_cancel(e.sched, sweep, 5900, ids, 4, &nids, &e.err), 0);
  ck_assert_int_eq(nids, 1);
  ck_assert_int_eq(ids[0], l.lease_id);
  ck_assert_int_eq(deliver(&e, &l, "w1", 0, 0, QUIET, 3, 0, 0.95, 6000), SW_ESTATE);
  ck_assert_int_eq(sw_sched_sweep_finished(e.sched, sweep, &e.err), 1);
  ck_assert_int_eq(sw_sched_cancel(e.sched, 424242, 6000, NULL, 0, NULL, &e.err), SW_ENOTFOUND);
  sw_lease_clear(&l);
  env_close(&e);
}
END_TEST

int main(void) {
  Suite *s = suite_create("sched");
  TCase *tc = tcase_create("core");
  /* Not a performance bound: the 10,000-worker registry case takes seconds on a loaded 2-core
   * machine, past check's 4 s default. */
  tcase_set_timeout(tc, 120);
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, alternate_orders_three_workers_five_pairs);
  tcase_add_test(tc, lease_expiry_requeues_whole_pair);
  tcase_add_test(tc, stale_refused_duplicate_idempotent);
  tcase_add_test(tc, ready_from_holder_gets_its_lease_again);
  tcase_add_test(tc, worker_registry_expires_and_pages);
  tcase_add_test(tc, schema_invalid_result_is_invalid_and_out_of_the_verdict);
  tcase_add_test(tc, two_sweeps_both_progress);
  tcase_add_test(tc, gate_metric_outside_the_columns);
  tcase_add_test(tc, full_disk_result_not_acknowledged_then_resent);
  tcase_add_test(tc, store_outage_longer_than_the_lease_keeps_it);
  tcase_add_test(tc, late_results_revive_an_expired_lease_nobody_took);
  tcase_add_loop_test(tc, injected_commit_fault_is_refused_then_stored, 0,
                      (int)(sizeof COMMIT_FAULTS / sizeof COMMIT_FAULTS[0]));
  tcase_add_test(tc, pin_and_match_honoured);
  tcase_add_test(tc, poison_pair_capped_gate_concludes_from_rest);
  tcase_add_test(tc, contaminated_pair_gets_one_replacement);
  tcase_add_test(tc, model_size_outlier_gets_one_replacement);
  tcase_add_test(tc, contaminated_pair_is_rerun_once_only);
  tcase_add_test(tc, idle_window_with_a_spike_is_not_flagged);
  tcase_add_test(tc, five_second_hog_is_flagged);
  tcase_add_test(tc, steady_background_mean_is_flagged);
  tcase_add_test(tc, foreign_gpu_process_is_flagged);
  tcase_add_test(tc, not_quiet_pre_window_is_flagged);
  tcase_add_test(tc, load1_checked_only_when_set);
  tcase_add_test(tc, orders_fixed_and_random_seeded);
  tcase_add_test(tc, gate_without_guard_values_is_not_adopted);
  tcase_add_test(tc, binary_change_mid_gate_is_inconclusive);
  tcase_add_test(tc, env_change_during_a_run_invalidates_its_pair);
  tcase_add_test(tc, env_change_between_a_pairs_runs_invalidates_the_later_run);
  tcase_add_test(tc, same_env_everywhere_is_ok);
  tcase_add_test(tc, missing_envs_are_not_evidence);
  tcase_add_test(tc, spread_leaves_next_pair_to_idle_peer);
  tcase_add_test(tc, spread_counts_machines_not_workers);
  tcase_add_test(tc, spread_follows_a_worker_to_its_new_host);
  tcase_add_test(tc, sequential_gate_extends_while_inconclusive);
  tcase_add_test(tc, grid_expands_and_completes);
  tcase_add_test(tc, limits_are_the_spec_loaders);
  tcase_add_test(tc, grid_points_are_the_specs_expansion);
  tcase_add_test(tc, placement_is_the_specs_rule);
  tcase_add_test(tc, restart_reloads_specs_and_fails_one_that_no_longer_loads);
  tcase_add_test(tc, restart_keeps_leases_and_cancel);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
