/* sched_bench.c: load benchmark of the scheduler and store (coordinator/sw_sched.h) in-process.
 *
 * Simulates W workers (default 500) against an on-disk database: each idle worker asks for work
 * (sw_sched_next), holds its lease for a simulated 1-5 s while heartbeats renew it, then delivers
 * one result per run (sw_sched_result, with kernels, checkpoints and window samples as a real
 * trainer and sampler produce them) and LeaseDone. Simulated time runs in 1 s rounds with a tick
 * per round; wall time is measured around each call. The work: G gate sweeps of P pairs each
 * plus a grid of Q single runs (default 10 x 100 pairs + 1000 points = 3000 runs).
 *
 * Prints p50 / p99 / max of sw_sched_next (split into calls that assigned a lease and calls that
 * found nothing), of sw_sched_result, and runs stored per second of wall time. See bench/README.md.
 *
 *   sched_bench [--workers W] [--gates G] [--pairs P] [--grid Q] [--db PATH] [--sync full|normal]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sw_clock.h"
#include "sw_fs.h"
#include "sw_result.h"
#include "sw_sched.h"
#include "sw_store.h"

struct samples {
  int64_t *v;
  size_t n, cap;
};

static void add(struct samples *s, int64_t ns) {
  if (s->n == s->cap) {
    s->cap = s->cap ? s->cap * 2 : 4096;
    int64_t *p = realloc(s->v, s->cap * sizeof *p);
    if (!p) {
      fprintf(stderr, "out of memory\n");
      exit(1);
    }
    s->v = p;
  }
  s->v[s->n++] = ns;
}

static int cmp64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

static void report(const char *name, struct samples *s) {
  if (!s->n) {
    printf("%-26s %8s\n", name, "no calls");
    return;
  }
  qsort(s->v, s->n, sizeof *s->v, cmp64);
  double p50 = s->v[s->n / 2] / 1e3, p99 = s->v[(size_t)((double)s->n * 0.99)] / 1e3;
  double mx = s->v[s->n - 1] / 1e3;
  printf("%-26s %8zu calls  p50 %9.1f us  p99 %9.1f us  max %9.1f us\n", name, s->n, p50, p99, mx);
}

struct sim_worker {
  char id[32];
  struct sw_lease lease;
  int busy;
  int64_t finish; /* simulated ms when its runs are done */
};

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void) { /* xorshift64*: a deterministic, seeded workload */
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * 2685821657736338717ull;
}

/* A result.json the size of a real one: metrics, 13 kernels, 5 checkpoints. */
static void make_result(char *buf, size_t len, double t, double psnr) {
  static const char *const K[] = {"project_fwd", "tile_count",    "scan",          "emit_pairs",
                                  "radix_sort",  "tile_ranges",   "rasterize_fwd", "loss",
                                  "ssim_bwd",    "rasterize_bwd", "project_bwd",   "adam",
                                  "densify"};
  int n = snprintf(
      buf, len,
      "{\"schema\":\"splatsweep.result/1\",\"status\":\"ok\",\"trainer\":{\"name\":"
      "\"splat-train\",\"version\":\"0.1\",\"binary_sha256\":\"%064d\","
      "\"shaders_sha256\":\"%064d\"},\"config\":{},\"config_sha256\":\"%064d\",\"scene\":{"
      "\"path\":\"lego\",\"sha256\":\"%064d\",\"train_views\":87,\"test_views\":13,\"width\":800,"
      "\"height\":800,\"held_out_split\":true},\"device\":{\"name\":\"bench\",\"driver\":\"\","
      "\"api\":\"vulkan "
      "1.3\",\"kind\":\"discrete\"},\"metrics\":{\"train_s\":%.4f,\"wall_s\":%.4f,\"iterations\":"
      "2000,"
      "\"psnr_db\":%.4f,\"ssim\":0.95,\"splats_final\":400000,\"splats_mean\":320000,"
      "\"gpu_busy_frac\":0.69},\"kernels\":[",
      1, 2, 3, 4, t, t + 2, psnr);
  for (int i = 0; i < 13; i++)
    n += snprintf(buf + n, len - (size_t)n,
                  "%s{\"name\":\"%s\",\"calls\":2000,\"gpu_ms\":%.3f,\"share\":%.4f}", i ? "," : "",
                  K[i], 0.5 + i, 1.0 / 13);
  n += snprintf(buf + n, len - (size_t)n, "],\"checkpoints\":[");
  for (int i = 0; i < 5; i++)
    n += snprintf(buf + n, len - (size_t)n,
                  "%s{\"iter\":%d,\"train_s\":%.2f,\"psnr_db\":%.3f,\"splats\":%d}", i ? "," : "",
                  (i + 1) * 400, t * (i + 1) / 5, psnr - 5 + i, 100000 * (i + 1));
  snprintf(buf + n, len - (size_t)n, "]}");
}

int main(int argc, char **argv) {
  { /* the results measured are ones the coordinator accepts (docs/result.schema.json) */
    char probe[8192];
    struct sw_err perr = {0};
    make_result(probe, sizeof probe, 100.0, 36.2);
    if (sw_result_check_text(probe, &perr)) {
      fprintf(stderr, "sched_bench: its result breaks the schema: %s\n", perr.msg);
      return 1;
    }
  }
  int n_workers = 500, gates = 10, pairs = 100, grid = 1000, sync_full = 1;
  const char *db = NULL;
  for (int i = 1; i < argc; i += 2) { /* flag, value */
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!v) {
      fprintf(stderr, "%s needs a value\n", a);
      return 2;
    }
    if (strcmp(a, "--workers") == 0)
      n_workers = atoi(v);
    else if (strcmp(a, "--gates") == 0)
      gates = atoi(v);
    else if (strcmp(a, "--pairs") == 0)
      pairs = atoi(v);
    else if (strcmp(a, "--grid") == 0)
      grid = atoi(v);
    else if (strcmp(a, "--db") == 0)
      db = v;
    else if (strcmp(a, "--sync") == 0)
      sync_full = strcmp(v, "normal") != 0;
    else {
      fprintf(stderr,
              "usage: %s [--workers W] [--gates G] [--pairs P] [--grid Q] [--db PATH] "
              "[--sync full|normal]\n",
              argv[0]);
      return 2;
    }
  }
  if (n_workers < 1 || gates < 0 || pairs < 1 || grid < 0) {
    fprintf(stderr, "bad sizes\n");
    return 2;
  }
  char tmpdir[] = "/tmp/sw_sched_benchXXXXXX", path[256];
  if (!db) {
    if (!mkdtemp(tmpdir)) {
      perror("mkdtemp");
      return 1;
    }
    snprintf(path, sizeof path, "%s/bench.db", tmpdir);
    db = path;
  }
  struct sw_err err = {0};
  struct sw_store_opts so;
  sw_store_opts_default(&so);
  so.synchronous_full = sync_full;
  sw_store_t *store = NULL;
  sw_sched_t *sched = NULL;
  if (sw_store_open(db, &so, &store, &err) || sw_sched_new(store, NULL, 0, &sched, &err)) {
    fprintf(stderr, "%s\n", err.msg);
    return 1;
  }
  int64_t now = 0, total_runs = (int64_t)gates * pairs * 2 + grid;
  int64_t t0 = sw_clock_mono_ns();
  for (int g = 0; g < gates; g++) {
    char spec[1024];
    snprintf(spec, sizeof spec,
             "{\"name\":\"bench-gate-%d\",\"kind\":\"gate\",\"trainer\":{\"builtin\":{}},\"scene\":"
             "{\"path\":\"/x\"},"
             "\"base\":{\"iterations\":2000,\"seed\":42},\"arms\":{\"off\":{\"radix_scatter\":"
             "\"serial\"},\"on\":{\"radix_scatter\":\"ballot\"}},\"pairs\":{\"n\":%d,\"max\":%d,"
             "\"order\":\"alternate\"},\"gate\":{\"metric\":\"train_s\"},\"contamination\":"
             "{\"cpu_other_max\":0.5}}",
             g, pairs, pairs);
    int64_t id;
    if (sw_sched_submit(sched, spec, "bench", NULL, now, &id, &err)) {
      fprintf(stderr, "%s\n", err.msg);
      return 1;
    }
  }
  if (grid > 0) {
    char spec[65536];
    int n = snprintf(spec, sizeof spec,
                     "{\"name\":\"bench-grid\",\"kind\":\"grid\",\"trainer\":{\"builtin\":{}},"
                     "\"scene\":{\"path\":\"/x\"},"
                     "\"base\":{\"seed\":42},\"parameters\":{\"iterations\":[");
    for (int i = 0; i < grid && n < (int)sizeof spec - 64; i++)
      n += snprintf(spec + n, sizeof spec - (size_t)n, "%s%d", i ? "," : "", 1000 + i);
    snprintf(spec + n, sizeof spec - (size_t)n, "]}}");
    int64_t id;
    if (sw_sched_submit(sched, spec, "bench", NULL, now, &id, &err)) {
      fprintf(stderr, "%s\n", err.msg);
      return 1;
    }
  }
  int64_t t_submit = sw_clock_mono_ns() - t0;
  struct sim_worker *w = calloc((size_t)n_workers, sizeof *w);
  for (int i = 0; i < n_workers; i++) {
    snprintf(w[i].id, sizeof w[i].id, "bench-w%03d", i);
    char labels[64];
    snprintf(labels, sizeof labels, "{\"rack\":\"r%d\"}", i % 8);
    if (sw_sched_worker_hello(sched, w[i].id, "{\"os\":\"linux\",\"cores\":16}", labels, now,
                              &err)) {
      fprintf(stderr, "%s\n", err.msg);
      return 1;
    }
  }
  struct sw_window_sample win[20];
  for (int i = 0; i < 20; i++)
    win[i] = (struct sw_window_sample){.t_ms = i * 1000,
                                       .load1 = 1.0,
                                       .cpu_other = 0.05,
                                       .cpu_total = 8.0,
                                       .cpu_trainer = 7.9,
                                       .mem_avail = 3e10};
  struct samples s_assign = {0}, s_empty = {0}, s_result = {0}, s_done = {0};
  int64_t stored = 0, rounds = 0;
  char *result = malloc(8192);
  t0 = sw_clock_mono_ns();
  for (;;) {
    int busy = 0;
    for (int i = 0; i < n_workers; i++) {
      struct sim_worker *x = &w[i];
      if (x->busy && now >= x->finish) {
        for (int r = 0; r < x->lease.n_runs; r++) {
          int on = strcmp(x->lease.runs[r].arm, "on") == 0;
          make_result(result, 8192, 100.0 * (on ? 0.95 : 1.0) * (1 + 0.001 * (double)(rnd() % 11)),
                      36.2 + 0.01 * (double)(rnd() % 5));
          struct sw_run_result rr = {.lease_id = x->lease.lease_id,
                                     .epoch = x->lease.epoch,
                                     .worker_id = x->id,
                                     .run_id = x->lease.runs[r].run_id,
                                     .attempt = x->lease.attempt,
                                     .exit_status = 0,
                                     .result_json = result,
                                     .pre = win,
                                     .n_pre = 5,
                                     .during = win,
                                     .n_during = 20};
          int64_t a = sw_clock_mono_ns();
          int rc = sw_sched_result(sched, &rr, now, &err);
          add(&s_result, sw_clock_mono_ns() - a);
          if (rc) {
            fprintf(stderr, "result: %s\n", err.msg);
            return 1;
          }
          stored++;
        }
        int64_t a = sw_clock_mono_ns();
        if (sw_sched_lease_done(sched, x->lease.lease_id, x->lease.epoch, x->id, now, &err)) {
          fprintf(stderr, "lease done: %s\n", err.msg);
          return 1;
        }
        add(&s_done, sw_clock_mono_ns() - a);
        sw_lease_clear(&x->lease);
        x->busy = 0;
      }
      if (!x->busy) {
        int64_t a = sw_clock_mono_ns();
        int rc = sw_sched_next(sched, x->id, now, &x->lease, &err);
        int64_t dt = sw_clock_mono_ns() - a;
        if (rc < 0) {
          fprintf(stderr, "next: %s\n", err.msg);
          return 1;
        }
        add(rc ? &s_assign : &s_empty, dt);
        if (rc) {
          x->busy = 1;
          x->finish = now + 1000 + (int64_t)(rnd() % 4000);
        }
      } else {
        sw_sched_renew(sched, x->lease.lease_id, x->lease.epoch, x->id, now, &err);
      }
      busy += x->busy;
    }
    if (sw_sched_tick(sched, now, NULL, &err)) {
      fprintf(stderr, "tick: %s\n", err.msg);
      return 1;
    }
    rounds++;
    now += 1000;
    if (!busy) break; /* nothing running and nothing could be assigned: all done */
  }
  double wall = (double)(sw_clock_mono_ns() - t0) / 1e9;
  printf("sched_bench: %d workers, %d gate sweeps x %d pairs + %d grid runs = %lld runs, db %s "
         "(synchronous %s)\n",
         n_workers, gates, pairs, grid, (long long)total_runs, db, sync_full ? "FULL" : "NORMAL");
  printf("submit: %.3f s for all sweeps\n", (double)t_submit / 1e9);
  report("sw_sched_next (assigned)", &s_assign);
  report("sw_sched_next (nothing)", &s_empty);
  report("sw_sched_result", &s_result);
  report("sw_sched_lease_done", &s_done);
  printf("stored %lld runs in %.2f s of wall time over %lld simulated rounds: %.0f runs/s\n",
         (long long)stored, wall, (long long)rounds, (double)stored / wall);
  int rc = stored == total_runs ? 0 : 1;
  if (rc) printf("MISMATCH: expected %lld runs stored\n", (long long)total_runs);
  free(result);
  for (int i = 0; i < n_workers; i++) sw_lease_clear(&w[i].lease);
  free(w);
  free(s_assign.v);
  free(s_empty.v);
  free(s_result.v);
  free(s_done.v);
  sw_sched_destroy(&sched);
  sw_store_close(&store);
  if (db == path) sw_fs_rm_rf(tmpdir, NULL);
  return rc;
}
