/* fwd_bench.c: time per frame of the GPU forward pass (gs_fwd) on the workload of issue 4's
 * iteration benchmark: N Gaussians with means uniform in [-1,1]^3, log-scales ln(0.01) + 0.3 randn,
 * random unit quaternions, opacity sigmoid(-1), SH degree 3 with coefficients 0.1 randn; an
 * 800x800 camera (fx = fy = 1111) at distance 4 orbiting the z axis at height 1, looking at the
 * origin, a new angle every frame.
 *
 * For each N it prints the median over --frames frames (after --warmup frames and at least
 * --warmup-ms of GPU work, default 1000, so that GPU clocks have ramped up) of
 *  - wall ms per frame in the production regime (one submission per frame: record, submit,
 *    wait, overflow check), and the GPU busy ms of those frames (timestamps);
 *  - per-kernel GPU ms per call and share of the busy time, from the per_kernel regime (one
 *    submission per stage), as the lab measures kernel shares.
 * --json prints one JSON object per N instead. Runs anywhere: on lavapipe use a small N, e.g.
 *   fwd_bench --n 20000 --frames 3
 * Variant flags: --sigma-skip --ballot --full-sort --transient --f16; --device NAME|INDEX.
 * --sort-only times the radix sort alone (N keys) with its steps. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gs_fwd.h"
#include "gs_vk.h"
#include "sw_clock.h"
#include "sw_stats.h"

static uint64_t rng_s;
static double urand(void) {
  uint64_t z = (rng_s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return ((double)(z >> 11) + 0.5) / 9007199254740992.0;
}
static double nrand(void) { return sqrt(-2.0 * log(urand())) * cos(6.283185307179586 * urand()); }

struct host_model {
  struct gs_model m;
  float *store;
};

static int make_model(struct host_model *h, uint32_t n, uint64_t seed) {
  rng_s = seed;
  h->store = malloc((size_t)n * 59 * sizeof(float));
  if (!h->store) return -1;
  struct gs_model *m = &h->m;
  *m = (struct gs_model){.count = n, .capacity = n};
  m->means = h->store;
  m->log_scales = m->means + 3 * (size_t)n;
  m->quats = m->log_scales + 3 * (size_t)n;
  m->opacity = m->quats + 4 * (size_t)n;
  m->sh = m->opacity + n;
  for (uint32_t i = 0; i < n; i++) {
    for (int k = 0; k < 3; k++) {
      m->means[3 * (size_t)i + k] = (float)(2 * urand() - 1);
      m->log_scales[3 * (size_t)i + k] = (float)(log(0.01) + 0.3 * nrand());
    }
    double q[4], qn = 0;
    for (int k = 0; k < 4; k++) {
      q[k] = nrand();
      qn += q[k] * q[k];
    }
    for (int k = 0; k < 4; k++) m->quats[4 * (size_t)i + k] = (float)(q[k] / sqrt(qn));
    m->opacity[i] = -1.0f; /* logit: opacity sigmoid(-1) */
    for (int k = 0; k < 48; k++) m->sh[48 * (size_t)i + k] = (float)(0.1 * nrand());
  }
  return 0;
}

/* Camera at distance 4 from the z axis, height 1, angle a, looking at the origin (OpenCV axes). */
static void orbit_camera(struct gs_camera *c, uint32_t w, uint32_t h, double a) {
  memset(c, 0, sizeof *c);
  c->width = w;
  c->height = h;
  c->fx = c->fy = 1111.0f;
  c->cx = 0.5f * (float)w;
  c->cy = 0.5f * (float)h;
  double pos[3] = {4 * cos(a), 4 * sin(a), 1.0};
  double f[3] = {-pos[0], -pos[1], -pos[2]}, fn = sqrt(f[0] * f[0] + f[1] * f[1] + f[2] * f[2]);
  for (int k = 0; k < 3; k++) f[k] /= fn;
  double r[3] = {f[1], -f[0], 0}; /* forward x (0, 0, 1) */
  double rn = sqrt(r[0] * r[0] + r[1] * r[1]);
  for (int k = 0; k < 3; k++) r[k] /= rn;
  double d[3] = {f[1] * r[2] - f[2] * r[1], f[2] * r[0] - f[0] * r[2], f[0] * r[1] - f[1] * r[0]};
  const double *rows[3] = {r, d, f};
  for (int i = 0; i < 3; i++) {
    double t = 0;
    for (int k = 0; k < 3; k++) {
      c->viewmat[4 * i + k] = (float)rows[i][k];
      t -= rows[i][k] * pos[k];
    }
    c->viewmat[4 * i + 3] = (float)t;
  }
  c->viewmat[15] = 1;
  for (int k = 0; k < 3; k++) c->campos[k] = (float)pos[k];
}

static void usage(void) {
  fprintf(stderr, "usage: fwd_bench [--n N[,N...]] [--frames F] [--warmup W] [--warmup-ms MS] "
                  "[--width W] [--height H] [--device D] [--sigma-skip] [--ballot] [--full-sort] "
                  "[--transient] [--f16] [--sort-only] [--json]\n");
}

static int bench_one(gs_vk_t *vk, const struct gs_fwd_opts *fo, uint32_t n, int frames, int warmup,
                     int warmup_ms, uint32_t w, uint32_t h, int json) {
  struct sw_err err = {0};
  struct host_model hm;
  if (make_model(&hm, n, 42)) {
    fprintf(stderr, "fwd_bench: out of memory for %u splats\n", n);
    return 1;
  }
  gs_fwd_t *f = NULL;
  gs_vk_timer_t *tp = NULL, *tk = NULL;
  struct gs_fwd_input in = {.sh_degree = 3, .background = {1, 1, 1}};
  int rc = gs_fwd_new(vk, fo, &f, &err);
  if (!rc) rc = gs_vk_timer_new(vk, 2 * GS_FWD_STAGES, &tp, &err);
  if (!rc) rc = gs_vk_timer_new(vk, 2 * GS_FWD_STAGES, &tk, &err);
  if (!rc) rc = gs_fwd_model_upload(vk, &hm.m, &in.model, &err);
  double *wall = calloc((size_t)frames, sizeof *wall), *gpu = calloc((size_t)frames, sizeof *gpu);
  uint64_t pairs_sum = 0;
  /* Warm-up: the warm-up frames, and at least warmup_ms of GPU work, so that clocks have ramped
   * up after the host-side model generation left the GPU idle. */
  int64_t warm_end = sw_clock_mono_ns() + (int64_t)warmup_ms * 1000000;
  for (int i = 0; !rc && (i < warmup || sw_clock_mono_ns() < warm_end); i++) {
    orbit_camera(&in.cam, w, h, 0.1 * i);
    rc = gs_fwd_run(f, NULL, &in, 0, &err);
  }
  /* production regime: one submission per frame */
  for (int i = warmup; !rc && i < warmup + frames; i++) {
    orbit_camera(&in.cam, w, h, 6.283185307179586 * i / (warmup + frames));
    double busy0;
    gs_vk_timer_summary(tp, NULL, NULL, &busy0);
    int64_t t0 = sw_clock_mono_ns();
    int retry = 1;
    uint32_t pairs = 0;
    while (!rc && retry) {
      rc = gs_fwd_prepare(f, n, w, h, &err);
      VkCommandBuffer cmd = VK_NULL_HANDLE;
      if (!rc) rc = gs_vk_cmd_begin(vk, &cmd, &err);
      if (!rc) {
        gs_vk_timer_reset(tp, cmd);
        gs_vk_timer_begin(tp, cmd, "forward");
        rc = gs_fwd_record(f, cmd, NULL, &in, &err);
        gs_vk_timer_end(tp, cmd);
        if (rc)
          gs_vk_cmd_discard(vk, &cmd);
        else
          rc = gs_vk_cmd_submit_wait(vk, &cmd, &err);
      }
      if (!rc) rc = gs_vk_timer_collect(tp, &err);
      if (!rc) rc = gs_fwd_finish(f, &retry, &pairs, &err);
    }
    int64_t t1 = sw_clock_mono_ns();
    double busy1;
    gs_vk_timer_summary(tp, NULL, NULL, &busy1);
    if (i >= warmup) {
      wall[i - warmup] = (double)(t1 - t0) * 1e-6;
      gpu[i - warmup] = busy1 - busy0;
      pairs_sum += pairs;
    }
  }
  /* per_kernel regime: one submission per stage, for exact per-kernel times */
  for (int i = 0; !rc && i < frames; i++) {
    orbit_camera(&in.cam, w, h, 6.283185307179586 * i / frames);
    rc = gs_fwd_run(f, tk, &in, 1, &err);
  }
  double wall_med = 0, gpu_med = 0;
  if (!rc) rc = sw_stats_median(wall, (size_t)frames, &wall_med, &err);
  if (!rc) rc = sw_stats_median(gpu, (size_t)frames, &gpu_med, &err);
  if (rc) {
    fprintf(stderr, "fwd_bench: N=%u: %s\n", n, err.msg);
  } else {
    const struct gs_vk_stage_stats *st;
    uint32_t ns;
    double busy;
    gs_vk_timer_summary(tk, &st, &ns, &busy);
    const struct gs_vk_device_info *di = gs_vk_info(vk);
    if (json) {
      printf("{\"n\":%u,\"width\":%u,\"height\":%u,\"frames\":%d,\"device\":\"%s\","
             "\"wall_ms_median\":%.4f,\"gpu_ms_median\":%.4f,\"pairs_mean\":%.0f,\"kernels\":[",
             n, w, h, frames, di->name, wall_med, gpu_med, (double)pairs_sum / frames);
      for (uint32_t k = 0; k < ns; k++)
        printf("%s{\"name\":\"%s\",\"calls\":%llu,\"gpu_ms\":%.4f,\"ms_per_call\":%.4f,"
               "\"share\":%.4f}",
               k ? "," : "", st[k].name, (unsigned long long)st[k].calls, st[k].gpu_ms,
               st[k].gpu_ms / (double)st[k].calls, st[k].share);
      printf("]}\n");
    } else {
      printf("N=%u %ux%u on %s: %d frames, median %.3f ms/frame wall, %.3f ms GPU; "
             "%.0f pairs/frame\n",
             n, w, h, di->name, frames, wall_med, gpu_med, (double)pairs_sum / frames);
      for (uint32_t k = 0; k < ns; k++)
        printf("  %-14s %8.3f ms/call  %5.1f%%\n", st[k].name, st[k].gpu_ms / (double)st[k].calls,
               100 * st[k].share);
    }
    fflush(stdout);
  }
  free(wall);
  free(gpu);
  gs_fwd_model_release(&in.model);
  gs_vk_timer_destroy(&tp);
  gs_vk_timer_destroy(&tk);
  gs_fwd_destroy(&f);
  free(hm.store);
  return rc ? 1 : 0;
}

/* --sort-only: the radix sort alone on forward-like keys (tile ids below 2,500, positive depth
 * bits), with its steps timed. */
static int bench_sort(gs_vk_t *vk, const struct gs_fwd_opts *fo, uint32_t n, int frames, int json) {
  struct sw_err err = {0};
  gs_sort_t *s = NULL;
  gs_vk_timer_t *t = NULL;
  uint64_t *keys = malloc(8ull * n), *k2 = malloc(8ull * n);
  uint32_t *vals = malloc(4ull * n), *v2 = malloc(4ull * n);
  int rc = keys && k2 && vals && v2 ? 0 : sw_err_set(&err, SW_ENOMEM, "out of memory");
  rng_s = 7;
  for (uint32_t i = 0; !rc && i < n; i++) {
    float depth = (float)(1.0 + 6.0 * urand());
    uint32_t bits;
    memcpy(&bits, &depth, 4);
    keys[i] = (uint64_t)(uint32_t)(urand() * 2500) << 32 | bits;
    vals[i] = i;
  }
  if (!rc)
    rc = gs_sort_new(vk, fo->radix_ballot ? GS_SORT_SCATTER_BALLOT : GS_SORT_SCATTER_SERIAL, &s,
                     &err);
  if (!rc) rc = gs_vk_timer_new(vk, 3 * 8 + 2, &t, &err);
  if (!rc) gs_sort_set_step_timer(s, t);
  uint32_t bits = fo->radix_full ? 64 : gs_sort_key_bits(2499);
  for (int i = 0; !rc && i < frames + 1; i++) {
    if (i == 1) gs_vk_timer_clear(t); /* the first run warms up */
    memcpy(k2, keys, 8ull * n);
    memcpy(v2, vals, 4ull * n);
    rc = gs_sort_run(s, k2, v2, n, bits, NULL, &err);
    if (!rc) rc = gs_vk_timer_collect(t, &err);
  }
  if (rc) {
    fprintf(stderr, "fwd_bench: sort of %u keys: %s\n", n, err.msg);
  } else {
    const struct gs_vk_stage_stats *st;
    uint32_t ns;
    double busy;
    gs_vk_timer_summary(t, &st, &ns, &busy);
    printf(json ? "{\"sort_n\":%u,\"passes\":%u,\"gpu_ms_per_sort\":%.4f}\n"
                : "sort of %u keys, %u passes: %.3f ms GPU per sort\n",
           n, gs_sort_passes(bits), busy / frames);
    for (uint32_t k = 0; !json && k < ns; k++)
      printf("  %-14s %8.3f ms/sort  %5.1f%%\n", st[k].name, st[k].gpu_ms / frames,
             100 * st[k].share);
  }
  gs_vk_timer_destroy(&t);
  gs_sort_destroy(&s);
  free(keys);
  free(k2);
  free(vals);
  free(v2);
  return rc ? 1 : 0;
}

int main(int argc, char **argv) {
  uint32_t ns[16] = {100000, 400000, 1000000};
  int n_ns = 3, frames = 50, warmup = 5, warmup_ms = 1000, json = 0, sort_only = 0;
  uint32_t w = 800, h = 800;
  const char *device = NULL;
  struct gs_fwd_opts fo = {0};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    int more = i + 1 < argc;
    if (!strcmp(a, "--n") && more) {
      n_ns = 0;
      for (char *tok = strtok(argv[++i], ","); tok && n_ns < 16; tok = strtok(NULL, ","))
        ns[n_ns++] = (uint32_t)strtoul(tok, NULL, 10);
    } else if (!strcmp(a, "--frames") && more) {
      frames = atoi(argv[++i]);
    } else if (!strcmp(a, "--warmup") && more) {
      warmup = atoi(argv[++i]);
    } else if (!strcmp(a, "--warmup-ms") && more) {
      warmup_ms = atoi(argv[++i]);
    } else if (!strcmp(a, "--width") && more) {
      w = (uint32_t)strtoul(argv[++i], NULL, 10);
    } else if (!strcmp(a, "--height") && more) {
      h = (uint32_t)strtoul(argv[++i], NULL, 10);
    } else if (!strcmp(a, "--device") && more) {
      device = argv[++i];
    } else if (!strcmp(a, "--sigma-skip")) {
      fo.sigma_skip = 1;
    } else if (!strcmp(a, "--ballot")) {
      fo.radix_ballot = 1;
    } else if (!strcmp(a, "--full-sort")) {
      fo.radix_full = 1;
    } else if (!strcmp(a, "--transient")) {
      fo.transient = 1;
    } else if (!strcmp(a, "--f16")) {
      fo.accum_f16 = 1;
    } else if (!strcmp(a, "--sort-only")) {
      sort_only = 1;
    } else if (!strcmp(a, "--json")) {
      json = 1;
    } else {
      usage();
      return 2;
    }
  }
  if (frames < 1 || warmup < 0 || n_ns < 1 || !w || !h) {
    usage();
    return 2;
  }
  struct sw_err err = {0};
  gs_vk_t *vk;
  struct gs_vk_opts vo = {.device = device};
  if (gs_vk_open(&vk, &vo, &err)) {
    fprintf(stderr, "fwd_bench: %s\n", err.msg);
    return 3;
  }
  int rc = 0;
  for (int i = 0; i < n_ns && !rc; i++)
    rc = sort_only ? bench_sort(vk, &fo, ns[i], frames, json)
                   : bench_one(vk, &fo, ns[i], frames, warmup, warmup_ms, w, h, json);
  gs_vk_close(&vk);
  return rc;
}
