/* iter_bench.c: the training-iteration benchmark of issue 4, the workload gsplat 1.5.3 was timed
 * on (2.78 / 3.98 / 5.36 ms per iteration at N = 100k / 400k / 1M on an H200):
 *   N Gaussians, means uniform in [-1, 1]^3, log-scales ln(0.01) + 0.3 randn, random unit
 *   quaternions, opacity sigmoid(-1), SH degree 3 with coefficients 0.1 randn; a camera at
 *   distance 4 orbiting the z axis at height 1, looking at the origin, advancing 0.1 rad per
 *   iteration; 800 x 800, fx = fy = 1111; a fixed random target image; per iteration forward +
 *   L1 loss + backward + Adam (no SSIM, no densification); 30 warm-up iterations, then 200 timed.
 * It runs the trainer's own code path (gs_fwd + gs_train_gpu, one submission per iteration, two
 * iterations on the GPU at once as the trainer's `in_flight: 2`: the host records and submits
 * iteration i + 1 before it waits for iteration i) and prints ms per iteration (wallclock over the
 * timed iterations, and the median iteration, as bench/gsplat_iter.py reports gsplat) and each
 * kernel's share of GPU time (timestamp queries).
 *
 * With --ply FILE --scene DIR it replays a real workload instead: the splats of a trained model
 * (e.g. `splat-train train --set checkpoint_ply=1 --set checkpoints=7000,30000` writes
 * OUT/checkpoint-7000.ply) seen by the scene's training cameras in turn, each view's own image
 * as the target (the scene's background), the same stages; real scenes have the dense tiles that
 * random Gaussians lack.
 *
 * usage: iter_bench --help (usage_text below).
 * --rasterize-bwd picks the backward as the trainer's key does (default auto: splat where the
 * device can, as gs_tk_auto_bucket says, else pixel with a note); --splat-bwd is
 * --rasterize-bwd splat.
 * --run-stats (per-splat backward, not with --json) also prints how its pipeline spends its steps
 * on the last frame (run_stats below): where the next change to that kernel has to look; and how
 * many of the forward's steps fwd_cull: rows leaves out; first a line of tile stats: how the pairs
 * spread over the tiles and the longest band walk, the forward's floor. --stats-bucket N (even,
 * 2-64) counts them for runs of N splats instead of the device's subgroup size: the counts depend
 * only on the frame's lists, boxes and last contributors, so lavapipe (8 lanes) can tell what a
 * 32-lane GPU's runs do on the same frame. On lavapipe use a small N and size, e.g. --n 2000 --size
 * 128 --focal 178 --iters 10. */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gs_config.h"
#include "gs_fwd.h"
#include "gs_model.h"
#include "gs_ply.h"
#include "gs_scene.h"
#include "gs_train_gpu.h"
#include "gs_vk.h"
#include "sw_clock.h"
#include "sw_stats.h"

struct args {
  uint32_t ns[8];
  int n_ns;
  uint32_t size;
  float focal;
  uint32_t warmup, iters;
  int per_kernel;
  const char *device;
  uint64_t seed;
  int json;
  const char *ply, *scene; /* the replayed workload (both or neither) */
  struct gs_tk_opts tk;    /* backward variants */
  int tile_cull;           /* --tile-cull box|ellipse (default ellipse, the trainer's) */
  int depth_first;         /* --sort pairs|depth_first (default the trainer's) */
  int raster_bwd;          /* --rasterize-bwd, enum gs_raster_bwd (default auto, the trainer's) */
  int run_stats;           /* --run-stats: the per-splat backward's steps on the last frame */
  uint32_t stats_bucket;   /* --stats-bucket N: run stats for runs of N splats (0: the device's) */
  int fwd_step;            /* --fwd-step branch|select, enum gs_fwd_step (default the trainer's) */
  int fwd_cull;            /* --fwd-cull off|rows, enum gs_fwd_cull (default the trainer's) */
  int fwd_stage;  /* --fwd-stage direct|prefetch, enum gs_fwd_stage_mode (default the trainer's) */
  int fwd_order;  /* --fwd-order rows|dense_first, enum gs_fwd_order (default the trainer's) */
  int project_sh; /* --project-sh scalar|vec4, enum gs_project_sh (the trainer's) */
  int in_flight;  /* --in-flight 1|2: iterations on the GPU at once (the trainer's key) */
};

/* An option that is a trainer key: the trainer's key table parses it into c (the defaults
 * otherwise), so the values and the message are the trainer's. */
static int trainer_key(const char *option, const char *key, const char *v, struct gs_config *c) {
  struct sw_err e = {0};
  gs_config_defaults(c);
  if (gs_config_set(c, key, v, &e) == 0) return 0;
  fprintf(stderr, "iter_bench: %s: %s\n", option, e.msg);
  return -1;
}

/* The options that are enum keys of the trainer taken as they are: the key, the gs_config field
 * it parses into and the int of args it sets (both start at the trainer's default). */
static const struct {
  const char *option, *key;
  size_t cfg, arg; /* offsetof(struct gs_config, ...), offsetof(struct args, ...) */
} key_opts[] = {
    {"--run-pixels", "bwd_run_pixels", offsetof(struct gs_config, bwd_run_pixels),
     offsetof(struct args, tk.run_pixels)},
    {"--bwd-step", "bwd_step", offsetof(struct gs_config, bwd_step),
     offsetof(struct args, tk.step)},
    {"--bwd-drain", "bwd_drain", offsetof(struct gs_config, bwd_drain),
     offsetof(struct args, tk.drain)},
    {"--bwd-state", "bwd_state", offsetof(struct gs_config, bwd_state),
     offsetof(struct args, tk.state)},
    {"--bwd-chain", "bwd_chain", offsetof(struct gs_config, bwd_chain),
     offsetof(struct args, tk.chain)},
    {"--fwd-step", "fwd_step", offsetof(struct gs_config, fwd_step),
     offsetof(struct args, fwd_step)},
    {"--fwd-cull", "fwd_cull", offsetof(struct gs_config, fwd_cull),
     offsetof(struct args, fwd_cull)},
    {"--fwd-stage", "fwd_stage", offsetof(struct gs_config, fwd_stage),
     offsetof(struct args, fwd_stage)},
    {"--fwd-order", "fwd_order", offsetof(struct gs_config, fwd_order),
     offsetof(struct args, fwd_order)},
    {"--project-sh", "project_sh", offsetof(struct gs_config, project_sh),
     offsetof(struct args, project_sh)},
    {"--project-adam", "project_adam", offsetof(struct gs_config, project_adam),
     offsetof(struct args, tk.fuse_adam)},
    {"--rasterize-bwd", "rasterize_bwd", offsetof(struct gs_config, rasterize_bwd),
     offsetof(struct args, raster_bwd)},
};
#define N_KEY_OPTS (sizeof key_opts / sizeof key_opts[0])

static void set_key_opt(struct args *a, size_t i, const struct gs_config *c) {
  int32_t v;
  memcpy(&v, (const char *)c + key_opts[i].cfg, sizeof v);
  int w = v;
  memcpy((char *)a + key_opts[i].arg, &w, sizeof w);
}

static const char usage_text[] =
    "usage: iter_bench [--n 100000,400000,1000000] [--size 800] [--focal 1111] [--warmup 30]\n"
    "                  [--iters 200] [--timing production|per_kernel] [--in-flight 1|2]\n"
    "                  [--device NAME|INDEX] [--seed S] [--json] [--no-warp-skip]\n"
    "                  [--lane0-atomics] [--direct-atomics] [--cas] [--adam-visible]\n"
    "                  [--deterministic] [--rasterize-bwd pixel|splat|auto] [--splat-bwd]\n"
    "                  [--tile-cull box|ellipse] [--sort pairs|depth_first]\n"
    "                  [--run-pixels rows|active|covered] [--bwd-step branch|select|lean|dot]\n"
    "                  [--bwd-drain full|trim] [--bwd-state shared|global] [--bwd-chain 1|2|4]\n"
    "                  [--fwd-step branch|select|group|group8] [--fwd-cull off|rows]\n"
    "                  [--fwd-stage direct|prefetch] [--fwd-order rows|dense_first]\n"
    "                  [--project-sh scalar|vec4]\n"
    "                  [--project-adam separate|fused] [--run-stats [--stats-bucket N]]\n"
    "                  [--ply FILE --scene DIR]\n"
    "The training-iteration benchmark: ms per iteration and each kernel's share of GPU time, on\n"
    "random Gaussians (--n, one run per N) or a replayed checkpoint (--ply with its --scene).\n"
    "Defaults are the trainer's; bench/README.md says more.\n";

/* The options that take a value (besides key_opts). */
static const char *const value_opts[] = {
    "--n",    "--size", "--focal", "--warmup",    "--iters",     "--timing", "--device",
    "--seed", "--ply",  "--scene", "--tile-cull", "--in-flight", "--sort",   "--stats-bucket"};

static int takes_value(const char *k) {
  for (size_t i = 0; i < sizeof value_opts / sizeof value_opts[0]; i++)
    if (!strcmp(k, value_opts[i])) return 1;
  for (size_t i = 0; i < N_KEY_OPTS; i++)
    if (!strcmp(k, key_opts[i].option)) return 1;
  return 0;
}

/* v as a whole decimal number in [lo, hi] for option k (what = the part of k's value it is, for
 * the message), or -1 with a message. */
static int parse_num(const char *k, const char *what, const char *v, uint64_t lo, uint64_t hi,
                     uint64_t *out) {
  char *end = NULL;
  errno = 0;
  unsigned long long x = strtoull(v, &end, 10);
  if (*v < '0' || *v > '9' || *end || errno || x < lo || x > hi) {
    fprintf(stderr, "iter_bench: %s%s takes a whole number from %llu to %llu, not '%s'\n", k, what,
            (unsigned long long)lo, (unsigned long long)hi, v);
    return -1;
  }
  *out = x;
  return 0;
}

static int parse_u32(const char *k, const char *v, uint32_t lo, uint32_t hi, uint32_t *out) {
  uint64_t x;
  if (parse_num(k, "", v, lo, hi, &x)) return -1;
  *out = (uint32_t)x;
  return 0;
}

/* --n: a comma-separated list of up to 8 splat counts. */
static int parse_ns(const char *v, struct args *a) {
  size_t len = strlen(v);
  if (!len || v[0] == ',' || v[len - 1] == ',' || strstr(v, ",,")) {
    fprintf(stderr, "iter_bench: --n takes splat counts separated by commas, not '%s'\n", v);
    return -1;
  }
  char *s = strdup(v), *save = NULL;
  if (!s) return fprintf(stderr, "iter_bench: out of memory\n"), -1;
  int rc = 0;
  a->n_ns = 0;
  for (char *t = strtok_r(s, ",", &save); t && !rc; t = strtok_r(NULL, ",", &save)) {
    uint64_t x;
    if (a->n_ns == 8) {
      fprintf(stderr, "iter_bench: --n takes at most 8 splat counts\n");
      rc = -1;
    } else if (!(rc = parse_num("--n", " (each count)", t, 1, 100000000, &x))) {
      a->ns[a->n_ns++] = (uint32_t)x;
    }
  }
  free(s);
  return rc;
}

/* Returns 0 (run), 1 (--help printed: exit 0) or -1 (a message on stderr: exit 2). */
static int parse(int argc, char **argv, struct args *a) {
  *a = (struct args){.ns = {100000, 400000, 1000000},
                     .n_ns = 3,
                     .size = 800,
                     .focal = 1111.0f,
                     .warmup = 30,
                     .iters = 200,
                     .seed = 42,
                     .tile_cull = 1,
                     .tk = {.sigma_skip = 1,
                            .warp_skip = 1,
                            .ssim_walk = 1,
                            .ssim_planar = 1,
                            .atomic_spread = 1}}; /* the trainer's defaults */
  struct gs_config defaults;
  gs_config_defaults(&defaults);
  a->depth_first = defaults.sort == GS_SORT_DEPTH_FIRST;
  a->in_flight = (int)defaults.in_flight;
  for (size_t o = 0; o < N_KEY_OPTS; o++) set_key_opt(a, o, &defaults);
  for (int i = 1; i < argc; i++) {
    const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(k, "--help") || !strcmp(k, "-h")) {
      fputs(usage_text, stdout);
      return 1;
    }
    if (!strcmp(k, "--json")) {
      a->json = 1;
      continue;
    }
    if (!strcmp(k, "--run-stats")) {
      a->run_stats = 1;
      continue;
    }
    /* Backward variants (defaults: the trainer's defaults). */
    if (!strcmp(k, "--no-warp-skip") || !strcmp(k, "--lane0-atomics") ||
        !strcmp(k, "--direct-atomics") || !strcmp(k, "--cas") || !strcmp(k, "--adam-visible") ||
        !strcmp(k, "--deterministic") || !strcmp(k, "--splat-bwd")) {
      if (!strcmp(k, "--no-warp-skip")) a->tk.warp_skip = 0;
      if (!strcmp(k, "--lane0-atomics")) a->tk.atomic_spread = 0;
      if (!strcmp(k, "--direct-atomics")) a->tk.direct_atomics = 1;
      if (!strcmp(k, "--cas")) a->tk.force_cas = 1;
      if (!strcmp(k, "--adam-visible")) a->tk.adam_visible = 1;
      if (!strcmp(k, "--deterministic")) a->tk.deterministic = 1;
      if (!strcmp(k, "--splat-bwd")) a->raster_bwd = GS_RASTER_BWD_SPLAT;
      continue;
    }
    if (!takes_value(k)) {
      fprintf(stderr, "iter_bench: unknown option '%s' (iter_bench --help lists them)\n", k);
      return -1;
    }
    if (!v) {
      fprintf(stderr, "iter_bench: %s needs a value\n", k);
      return -1;
    }
    i++;
    size_t o = 0;
    while (o < N_KEY_OPTS && strcmp(k, key_opts[o].option)) o++;
    if (o < N_KEY_OPTS) {
      struct gs_config c;
      if (trainer_key(k, key_opts[o].key, v, &c)) return -1;
      set_key_opt(a, o, &c);
      continue;
    }
    if (!strcmp(k, "--n")) {
      if (parse_ns(v, a)) return -1;
    } else if (!strcmp(k, "--size")) {
      if (parse_u32(k, v, 1, 16384, &a->size)) return -1;
    } else if (!strcmp(k, "--focal")) {
      char *end = NULL;
      a->focal = strtof(v, &end);
      if (end == v || *end || !isfinite(a->focal) || a->focal <= 0) {
        fprintf(stderr, "iter_bench: --focal takes a positive number of pixels, not '%s'\n", v);
        return -1;
      }
    } else if (!strcmp(k, "--warmup")) {
      if (parse_u32(k, v, 0, 1000000, &a->warmup)) return -1;
    } else if (!strcmp(k, "--iters")) {
      if (parse_u32(k, v, 1, 1000000, &a->iters)) return -1;
    } else if (!strcmp(k, "--timing")) {
      if (strcmp(v, "production") && strcmp(v, "per_kernel")) {
        fprintf(stderr, "iter_bench: --timing takes production or per_kernel, not '%s'\n", v);
        return -1;
      }
      a->per_kernel = !strcmp(v, "per_kernel");
    } else if (!strcmp(k, "--seed")) {
      uint64_t x = 0;
      if (parse_num(k, "", v, 0, UINT64_MAX, &x)) return -1;
      a->seed = x;
    } else if (!strcmp(k, "--device")) {
      a->device = v;
    } else if (!strcmp(k, "--ply")) {
      a->ply = v;
    } else if (!strcmp(k, "--scene")) {
      a->scene = v;
    } else if (!strcmp(k, "--tile-cull")) {
      if (strcmp(v, "box") && strcmp(v, "ellipse")) {
        fprintf(stderr, "iter_bench: --tile-cull takes box or ellipse, not '%s'\n", v);
        return -1;
      }
      a->tile_cull = !strcmp(v, "ellipse");
    } else if (!strcmp(k, "--stats-bucket")) {
      if (parse_u32(k, v, 2, 64, &a->stats_bucket)) return -1;
      if (a->stats_bucket % 2) {
        fprintf(stderr, "iter_bench: --stats-bucket takes an even number of splats, not %s\n", v);
        return -1;
      }
    } else if (!strcmp(k, "--in-flight")) {
      struct gs_config c;
      if (trainer_key(k, "in_flight", v, &c)) return -1;
      a->in_flight = (int)c.in_flight;
    } else { /* --sort: takes_value knows no other */
      struct gs_config c;
      if (trainer_key(k, "sort", v, &c)) return -1;
      a->depth_first = c.sort == GS_SORT_DEPTH_FIRST;
    }
  }
  if (!a->ply != !a->scene)
    return fprintf(stderr, "iter_bench: --ply and --scene go together\n"), -1;
  a->tk.chain = 1 << a->tk.chain;      /* the key's value is the enum's position: 1, 2, 4 */
  if (a->per_kernel) a->in_flight = 1; /* as the trainer: every stage is waited for */
  return 0;
}

/* Camera at distance 4 from the z axis, height 1, azimuth theta, looking at the origin (OpenCV
 * axes: x right, y down, z forward; world z up). */
static void orbit(struct gs_camera *c, uint32_t size, float focal, float theta) {
  float eye[3] = {4.0f * cosf(theta), 4.0f * sinf(theta), 1.0f};
  float f[3] = {-eye[0], -eye[1], -eye[2]};
  float fl = sqrtf(f[0] * f[0] + f[1] * f[1] + f[2] * f[2]);
  for (int k = 0; k < 3; k++) f[k] /= fl;
  float r[3] = {f[1], -f[0], 0.0f}; /* f x (0, 0, 1) */
  float rl = sqrtf(r[0] * r[0] + r[1] * r[1]);
  for (int k = 0; k < 3; k++) r[k] /= rl;
  float d[3] = {f[1] * r[2] - f[2] * r[1], f[2] * r[0] - f[0] * r[2], f[0] * r[1] - f[1] * r[0]};
  memset(c, 0, sizeof *c);
  c->width = c->height = size;
  c->fx = c->fy = focal;
  c->cx = c->cy = 0.5f * (float)size;
  const float *rows[3] = {r, d, f};
  for (int i = 0; i < 3; i++) {
    c->viewmat[4 * i] = rows[i][0];
    c->viewmat[4 * i + 1] = rows[i][1];
    c->viewmat[4 * i + 2] = rows[i][2];
    c->viewmat[4 * i + 3] = -(rows[i][0] * eye[0] + rows[i][1] * eye[1] + rows[i][2] * eye[2]);
  }
  c->viewmat[15] = 1.0f;
  memcpy(c->campos, eye, sizeof eye);
}

static int make_model(uint32_t n, uint64_t seed, struct gs_model **out, struct sw_err *err) {
  int rc = gs_model_new(n, out, err);
  if (rc) return rc;
  struct gs_model *m = *out;
  m->count = n;
  struct gs_rng rng;
  gs_rng_seed(&rng, seed);
  for (uint32_t i = 0; i < n; i++) {
    for (int k = 0; k < 3; k++) m->means[3 * i + k] = 2.0f * gs_rng_uniform(&rng) - 1.0f;
    for (int k = 0; k < 3; k++) m->log_scales[3 * i + k] = logf(0.01f) + 0.3f * gs_rng_normal(&rng);
    float q[4], ql = 0;
    for (int k = 0; k < 4; k++) {
      q[k] = gs_rng_normal(&rng);
      ql += q[k] * q[k];
    }
    ql = sqrtf(ql);
    for (int k = 0; k < 4; k++) m->quats[4 * i + k] = ql > 0 ? q[k] / ql : (k == 0);
    m->opacity[i] = -1.0f; /* logit: opacity sigmoid(-1) */
    for (int k = 0; k < 48; k++) m->sh[48 * i + k] = 0.1f * gs_rng_normal(&rng);
  }
  return 0;
}

struct bench {
  gs_vk_t *vk;
  gs_fwd_t *fwd;
  struct gs_tk *tk;
  gs_vk_timer_t *timer;
  struct gs_fwd_model model;
  struct gs_vk_buf *grads[GS_P_COUNT], *moments, *grad2d, *dens, *gt;
  struct gs_tk_img im;
  /* the replayed workload (--ply, --scene), else NULL */
  struct gs_model *replay;
  int replay_degree;
  struct gs_scene *sc;
  struct gs_vk_buf **gts; /* sc->n_train target images */
};

/* Loads the replayed workload: the model, the scene and its training images on the GPU. */
static int load_replay(struct bench *b, const struct args *a, struct sw_err *err) {
  int rc = gs_ply_read(a->ply, &b->replay, &b->replay_degree, err);
  struct gs_scene_opts so = {.background = GS_BG_WHITE};
  if (!rc) rc = gs_scene_load(a->scene, &so, &b->sc, err);
  if (!rc && !b->sc->n_train) rc = sw_err_set(err, SW_EINVAL, "%s: no training views", a->scene);
  if (!rc && !(b->gts = calloc(b->sc->n_train, sizeof *b->gts)))
    rc = sw_err_set(err, SW_ENOMEM, "out of memory");
  for (uint32_t v = 0; !rc && v < b->sc->n_train; v++) {
    const struct gs_view *w = &b->sc->train[v];
    size_t bytes = 12 * (size_t)w->cam.width * w->cam.height;
    rc = gs_vk_buf_new(b->vk, bytes, 0, "target", &b->gts[v], err);
    if (!rc) rc = gs_vk_buf_upload(b->gts[v], 0, w->rgb, bytes, err);
  }
  return rc;
}

/* --run-stats: how the per-splat backward's pipeline spends its steps on the frame last
 * rasterized, computed on the host from the forward's buffers with the shader's own rules
 * (rasterize_bwd_splat.glsl): a run is BUCKET consecutive splats of a tile, in front of the tile's
 * largest last contributor; each lane's box is its splat's alpha >= 1/255 extent plus a pixel;
 * `rows` walks every pixel of the rows the boxes reach, `active` the pixels inside their union
 * box whose last contributor lies past the run's first splat; a run of cnt pixels takes
 * cnt + BUCKET - 1 steps. A lane-step is in-box when the pixel is inside the lane's box and in
 * front of its last contributor, contributing when alpha >= 1/255 there as well. Printed: runs,
 * pixels per run in both modes (and the active ones inside some lane's box), steps per run, the
 * fill steps' share, the lanes' in-box and contributing shares of BUCKET x steps (active mode), and
 * the steps a subgroup would take walking all of a tile's runs back to back (fill paid once per
 * tile), and the steps `bwd_drain: trim` leaves out (a run's walk ends once every lane is past the
 * last active pixel of its box), and the steps runs of BUCKET / 2 splats would take, two runs side
 * by side in a subgroup (each half of the lanes walking its own union box's active pixels, the
 * subgroup the longer of the two walks plus BUCKET / 2 - 1 fill steps); then the share of the
 * forward's steps (a band of two rows up to its largest last contributor) `fwd_cull: rows` leaves
 * out. */
/* A splat's box in the tile at (ox, oy), as shaders/splat_box.glsl computes it for the per-splat
 * backward and fwd_cull: rows: x0, x1, y0, y1 in tile pixels, inclusive; no rows
 * (y0 > y1) when it reaches no pixel centre of the tile. */
static void splat_box(const struct gs_splat2d *g, uint32_t ox, uint32_t oy, int box[4]) {
  float s2 = 2.0f * fmaxf(logf(255.0f * g->opacity), 0.0f);
  float ex = sqrtf(s2 * fmaxf(g->cov2d[0], 0.0f)), ey = sqrtf(s2 * fmaxf(g->cov2d[2], 0.0f));
  float mx = g->mean2d[0] - (float)ox, my = g->mean2d[1] - (float)oy, T = GS_RASTER_TILE;
  box[0] = (int)fminf(fmaxf(floorf(mx - ex) - 1.0f, 0.0f), T);
  box[1] = (int)fminf(fmaxf(ceilf(mx + ex) + 1.0f, -1.0f), T - 1);
  box[2] = (int)fminf(fmaxf(floorf(my - ey) - 1.0f, 0.0f), T);
  box[3] = (int)fminf(fmaxf(ceilf(my + ey) + 1.0f, -1.0f), T - 1);
  if (box[0] > box[1]) box[2] = GS_RASTER_TILE, box[3] = -1;
}

/* The union u = (x0, x1, y0, y1) of boxes l0 .. l1 - 1 (box l: bx0[l], bx1[l], by0[l], by1[l]),
 * over those that have rows; no rows (u[2] > u[3]) when none has. */
static void union_box(const int *bx0, const int *bx1, const int *by0, const int *by1, uint32_t l0,
                      uint32_t l1, int u[4]) {
  u[0] = GS_RASTER_TILE, u[1] = -1, u[2] = GS_RASTER_TILE, u[3] = -1;
  for (uint32_t l = l0; l < l1; l++) {
    if (by0[l] > by1[l]) continue;
    if (bx0[l] < u[0]) u[0] = bx0[l];
    if (bx1[l] > u[1]) u[1] = bx1[l];
    if (by0[l] < u[2]) u[2] = by0[l];
    if (by1[l] > u[3]) u[3] = by1[l];
  }
}

static int run_stats(const struct gs_fwd_bufs *fb, uint32_t w, uint32_t h, uint32_t bucket,
                     struct sw_err *err) {
  uint32_t tiles = fb->tiles_x * fb->tiles_y, n = fb->count;
  uint32_t B = bucket ? bucket : fb->bucket ? fb->bucket : 32;
  uint32_t pairs = ((const uint32_t *)fb->counters->map)[GS_CTR_PAIRS];
  uint32_t *ranges = malloc(8ull * tiles), *values = malloc(4ull * (pairs ? pairs : 1));
  uint32_t *last = malloc(4ull * w * h);
  struct gs_splat2d *sp = malloc(sizeof *sp * (size_t)(n ? n : 1));
  int rc = ranges && values && last && sp ? 0 : sw_err_set(err, SW_ENOMEM, "run stats: memory");
  if (!rc) rc = gs_vk_buf_download(fb->ranges, 0, ranges, 8ull * tiles, err);
  if (!rc && pairs) rc = gs_vk_buf_download(fb->values, 0, values, 4ull * pairs, err);
  if (!rc) rc = gs_vk_buf_download(fb->last, 0, last, 4ull * w * h, err);
  if (!rc && n) rc = gs_vk_buf_download(fb->splats, 0, sp, sizeof *sp * (size_t)n, err);
  double runs = 0, pix_rows = 0, pix_act = 0, st_rows = 0, st_act = 0, inbox = 0, contrib = 0;
  double pix_box = 0; /* active pixels inside at least one lane's box */
  double st_chain = 0, st_trim = 0, st_half = 0;
  /* The forward's steps, a subgroup of two pixel rows (a band) at a time up to its pixels' last
   * contributor (it walks on until each pixel finishes, so this is a lower bound): every splat of
   * the tile (fwd_cull: off), or only those whose box reaches the band (rows). */
  double fwd_off = 0, fwd_rows = 0;
  /* How the pairs spread over the tiles: the forward's workgroups walk their tile's splats one
   * after another, so the densest tile's walk is a floor under its time however many SMs there
   * are. band_max: the longest walk of one band (fwd_cull rows, to its last contributor). */
  uint32_t busy_tiles = 0, most_pairs = 0, band_max = 0;
  double band_walks = 0;
  for (uint32_t t = 0; t < tiles && !rc; t++) {
    uint32_t start = ranges[2 * t], end = ranges[2 * t + 1], count = end > start ? end - start : 0;
    uint32_t ox = (t % fb->tiles_x) * GS_RASTER_TILE, oy = (t / fb->tiles_x) * GS_RASTER_TILE;
    uint32_t tl[GS_RASTER_WG], live = 0;
    for (uint32_t i = 0; i < GS_RASTER_WG; i++) {
      uint32_t x = ox + i % GS_RASTER_TILE, y = oy + i / GS_RASTER_TILE;
      tl[i] = x < w && y < h ? last[y * w + x] : 0;
      if (tl[i] > live) live = tl[i];
    }
    if (live > count) live = count;
    busy_tiles += count > 0;
    if (count > most_pairs) most_pairs = count;
    double tile_cnt = 0;
    int tile_runs = 0;
    for (uint32_t first = 0; first < live; first += B) {
      int bx0[64], bx1[64], by0[64], by1[64], u[4];
      uint32_t lanes = live - first < B ? live - first : B;
      for (uint32_t l = 0; l < lanes; l++) {
        int box[4];
        splat_box(&sp[values[start + first + l]], ox, oy, box);
        bx0[l] = box[0], bx1[l] = box[1], by0[l] = box[2], by1[l] = box[3];
      }
      union_box(bx0, bx1, by0, by1, 0, lanes, u);
      int ux0 = u[0], ux1 = u[1], uy0 = u[2], uy1 = u[3];
      runs++;
      if (uy0 > uy1) continue; /* the shader returns before the walk */
      pix_rows += (double)(uy1 - uy0 + 1) * GS_RASTER_TILE;
      st_rows += (double)(uy1 - uy0 + 1) * GS_RASTER_TILE + B - 1;
      uint32_t cnt = 0, lst[GS_RASTER_WG];
      for (int py = uy0; py <= uy1; py++)
        for (int px = ux0; px <= ux1; px++) {
          uint32_t p = (uint32_t)py * GS_RASTER_TILE + (uint32_t)px;
          if (first >= tl[p]) continue;
          lst[cnt++] = p;
          int covered = 0;
          for (uint32_t l = 0; l < lanes; l++) {
            if (px < bx0[l] || px > bx1[l] || py < by0[l] || py > by1[l]) continue;
            covered = 1;
            if (first + l >= tl[p]) continue;
            inbox++;
            const struct gs_splat2d *g = &sp[values[start + first + l]];
            float dx = g->mean2d[0] - ((float)(ox + (uint32_t)px) + 0.5f);
            float dy = g->mean2d[1] - ((float)(oy + (uint32_t)py) + 0.5f);
            float sig =
                0.5f * (g->conic[0] * dx * dx + g->conic[2] * dy * dy) + g->conic[1] * dx * dy;
            if (sig >= 0.0f && fminf(GS_ALPHA_MAX, g->opacity * expf(-sig)) >= GS_ALPHA_MIN)
              contrib++;
          }
          pix_box += covered;
        }
      if (cnt == 0) continue;
      /* Runs of B / 2 splats, two to a subgroup side by side: each half walks the active pixels
       * of its own union box, and the subgroup takes the longer walk plus B / 2 - 1 fill steps. */
      uint32_t hc[2] = {0, 0};
      for (uint32_t hf = 0; hf < 2; hf++) {
        uint32_t l0 = hf * (B / 2), l1 = l0 + B / 2 < lanes ? l0 + B / 2 : lanes;
        int hb[4];
        union_box(bx0, bx1, by0, by1, l0, l1, hb);
        for (int py = hb[2]; py <= hb[3]; py++)
          for (int px = hb[0]; px <= hb[1]; px++)
            hc[hf] += first + l0 < tl[(uint32_t)py * GS_RASTER_TILE + (uint32_t)px];
      }
      st_half += (hc[0] > hc[1] ? hc[0] : hc[1]) + B / 2 - 1;
      int need = -1;
      for (uint32_t l = 0; l < lanes; l++) {
        if (by0[l] > by1[l]) continue;
        uint32_t pend = (uint32_t)by1[l] * GS_RASTER_TILE + (uint32_t)bx1[l], n_in = 0;
        while (n_in < cnt && lst[n_in] <= pend) n_in++;
        if ((int)(n_in + l) - 1 > need) need = (int)(n_in + l) - 1;
      }
      st_trim += need + 1;
      pix_act += cnt;
      st_act += cnt + B - 1;
      tile_cnt += cnt;
      tile_runs++;
    }
    if (tile_runs) st_chain += tile_cnt + B - 1;
    uint32_t reach[GS_RASTER_TILE / 2] = {0}; /* each band's largest last contributor */
    for (uint32_t i = 0; i < GS_RASTER_WG; i++) {
      uint32_t b = i / (2 * GS_RASTER_TILE);
      if (tl[i] > reach[b]) reach[b] = tl[i];
    }
    for (uint32_t b = 0; b < GS_RASTER_TILE / 2; b++) fwd_off += reach[b];
    uint32_t walk[GS_RASTER_TILE / 2] = {0};
    for (uint32_t q = 0; q < live; q++) { /* live: the largest reach */
      int box[4];
      splat_box(&sp[values[start + q]], ox, oy, box);
      for (uint32_t b = 0; b < GS_RASTER_TILE / 2; b++)
        walk[b] += q < reach[b] && box[2] <= (int)(2 * b + 1) && box[3] >= (int)(2 * b);
    }
    for (uint32_t b = 0; b < GS_RASTER_TILE / 2; b++) {
      fwd_rows += walk[b];
      if (walk[b] > band_max) band_max = walk[b];
    }
    band_walks += live ? GS_RASTER_TILE / 2 : 0;
  }
  if (!rc && busy_tiles)
    printf("  tile stats (last frame): %u of %u tiles with pairs, %.1f pairs per such tile, the "
           "most %u; forward band walks (fwd_cull rows, to the last contributor) %.1f steps on "
           "average, the longest %u\n",
           busy_tiles, tiles, (double)pairs / busy_tiles, most_pairs,
           band_walks > 0 ? fwd_rows / band_walks : 0.0, band_max);
  if (!rc && runs > 0)
    printf("  run stats (last frame, %u splats, %u pairs, bucket %u): %.0f runs; pixels per run "
           "rows %.1f, active %.1f (%.1f in a lane's box); steps per run rows %.1f, active %.1f "
           "(fill %.1f%%); lanes "
           "in-box %.1f%%, contributing %.1f%% of %u x steps (active); a tile's runs back to "
           "back: %.1f%% fewer steps; bwd_drain trim: %.1f%% fewer steps; runs of %u, two to a "
           "subgroup: %.1f%% fewer steps; forward to the last "
           "contributor, fwd_cull rows: %.1f%% fewer steps\n",
           n, pairs, B, runs, pix_rows / runs, pix_act / runs, pix_box / runs, st_rows / runs,
           st_act / runs, st_act > 0 ? 100.0 * (st_act - pix_act) / st_act : 0.0,
           st_act > 0 ? 100.0 * inbox / (B * st_act) : 0.0,
           st_act > 0 ? 100.0 * contrib / (B * st_act) : 0.0, B,
           st_act > 0 ? 100.0 * (st_act - st_chain) / st_act : 0.0,
           st_act > 0 ? 100.0 * (st_act - st_trim) / st_act : 0.0, B / 2,
           st_act > 0 ? 100.0 * (st_act - st_half) / st_act : 0.0,
           fwd_off > 0 ? 100.0 * (fwd_off - fwd_rows) / fwd_off : 0.0);
  free(ranges);
  free(values);
  free(last);
  free(sp);
  return rc;
}

/* One iteration's inputs: its camera and target, and the backward's push constants. */
struct iter_in {
  struct gs_fwd_input in;
  struct gs_vk_buf *gt;
  struct gs_pc_raster pr;
  struct gs_pc_project_bwd pb;
  struct gs_pc_adam pa;
};

static void iter_inputs(const struct bench *b, uint32_t n, uint32_t it, const struct args *a,
                        struct iter_in *x) {
  static const float lr[6] = {1.6e-4f, 5e-3f, 1e-3f, 5e-2f, 2.5e-3f, 2.5e-3f / 20};
  float bg[3] = {1, 1, 1};
  if (b->sc && b->sc->background == GS_BG_BLACK) bg[0] = bg[1] = bg[2] = 0;
  memset(x, 0, sizeof *x);
  x->in.model = b->model;
  x->in.sh_degree = b->replay ? (uint32_t)b->replay_degree : 3;
  x->gt = b->gt;
  if (b->sc) {
    uint32_t v = it % b->sc->n_train;
    x->in.cam = b->sc->train[v].cam;
    x->gt = b->gts[v];
  } else {
    orbit(&x->in.cam, a->size, a->focal, 0.1f * (float)it);
  }
  const struct gs_camera *c = &x->in.cam;
  memcpy(x->in.background, bg, sizeof bg);
  x->pr = (struct gs_pc_raster){.width = c->width,
                                .height = c->height,
                                .tiles_x = (c->width + GS_TILE - 1) / GS_TILE,
                                .tiles_y = (c->height + GS_TILE - 1) / GS_TILE};
  memcpy(x->pr.background, bg, sizeof bg);
  x->pb = (struct gs_pc_project_bwd){.fx = c->fx,
                                     .fy = c->fy,
                                     .cx = c->cx,
                                     .cy = c->cy,
                                     .n = n,
                                     .width = c->width,
                                     .height = c->height,
                                     .tiles_x = x->pr.tiles_x,
                                     .tiles_y = x->pr.tiles_y,
                                     .sh_degree = x->in.sh_degree};
  memcpy(x->pb.viewmat, c->viewmat, sizeof x->pb.viewmat);
  memcpy(x->pb.campos, c->campos, sizeof x->pb.campos);
  gs_tk_adam_pc(&x->pa, n, n, it + 1, lr, 0.9f, 0.999f, 1e-15f);
}

/* The stages of an iteration in order: the forward's, then loss, rasterize_bwd, project_bwd and
 * adam; with --project-adam fused the projection backward applies the Adam step itself (one
 * stage, project_adam, and none for Adam). */
static int last_stage(const struct args *a) { return GS_FWD_STAGES + (a->tk.fuse_adam ? 2 : 3); }

static int record_stage(struct bench *b, const struct args *a, VkCommandBuffer cmd, int s,
                        const struct iter_in *x, uint32_t n, struct sw_err *err) {
  if (s < GS_FWD_STAGES)
    return gs_fwd_record_stage(b->fwd, cmd, b->timer, (enum gs_fwd_stage)s, &x->in, err);
  const struct gs_fwd_bufs *fb = gs_fwd_bufs(b->fwd);
  struct gs_vk_buf *params[GS_P_COUNT] = {b->model.means, b->model.log_scales, b->model.quats,
                                          b->model.opacity, b->model.sh};
  int st = s - GS_FWD_STAGES, fused = a->tk.fuse_adam;
  static const char *names[4] = {"loss", "rasterize_bwd", "project_bwd", "adam"};
  gs_vk_timer_begin(b->timer, cmd, st == 2 && fused ? "project_adam" : names[st]);
  switch (st) {
  case 0: gs_tk_record_loss(b->tk, cmd, &b->im, fb->rgb, x->gt, 0.0f); break;
  case 1: {
    struct gs_tk_runs runs;
    gs_tk_record_raster_bwd(b->tk, cmd, &x->pr, fb->ranges, fb->values, fb->splats, fb->final_t,
                            fb->last, b->im.dl, b->grad2d, n, gs_tk_runs_of(fb, &runs));
    break;
  }
  case 2:
    if (fused)
      gs_tk_record_project_adam(b->tk, cmd, &x->pb, &x->pa, params, fb->splats, b->grad2d,
                                b->moments, fb->tiles_touched, b->dens, fb->counters);
    else
      gs_tk_record_project_bwd(b->tk, cmd, &x->pb, params, fb->splats, b->grad2d, b->grads, b->dens,
                               fb->counters);
    break;
  default:
    gs_tk_record_adam(b->tk, cmd, &x->pa, params, b->grads, b->moments, fb->tiles_touched,
                      fb->counters);
  }
  gs_vk_timer_end(b->timer, cmd);
  gs_vk_barrier(cmd);
  return 0;
}

/* The buffers of a frame of this size (they only grow; with an iteration in flight the caller
 * has made sure the size is the one it was recorded with). */
static int prepare_frame(struct bench *b, uint32_t n, const struct gs_camera *c,
                         struct sw_err *err) {
  int rc = gs_fwd_prepare(b->fwd, n, c->width, c->height, err);
  if (!rc) rc = gs_tk_reserve(b->tk, n, err);
  if (!rc) rc = gs_tk_img_reserve(b->vk, &b->im, c->width, c->height, err);
  return rc;
}

/* timing: per_kernel: the iteration's stages submitted one by one, each waited for (exact stage
 * times, and the gaps between submissions in the wallclock); the arena grows and the iteration
 * runs again when its frame overflowed. */
static int iterate_per_kernel(struct bench *b, const struct args *a, uint32_t n, uint32_t it,
                              uint32_t *redone, double *pairs, struct sw_err *err) {
  struct iter_in x;
  iter_inputs(b, n, it, a, &x);
  for (int tries = 0;; tries++) {
    int rc = prepare_frame(b, n, &x.in.cam, err);
    for (int s = 0; s <= last_stage(a) && !rc; s++) {
      VkCommandBuffer cmd = VK_NULL_HANDLE;
      rc = gs_vk_cmd_begin(b->vk, &cmd, err);
      if (rc) break;
      gs_vk_timer_reset(b->timer, cmd);
      rc = record_stage(b, a, cmd, s, &x, n, err);
      if (rc) {
        gs_vk_cmd_discard(b->vk, &cmd);
        break;
      }
      rc = gs_vk_cmd_submit_wait(b->vk, &cmd, err);
      if (!rc) rc = gs_vk_timer_collect(b->timer, err);
    }
    int retry = 0;
    if (!rc) rc = gs_fwd_finish(b->fwd, &retry, NULL, err);
    if (rc) return rc;
    if (!retry) {
      *pairs = ((const uint32_t *)gs_fwd_bufs(b->fwd)->counters->map)[GS_CTR_PAIRS];
      return 0;
    }
    if (tries >= 8)
      return sw_err_set(err, SW_EDEVICE, "iteration %u: the pair arena kept overflowing", it);
    ++*redone;
  }
}

/* timing: production: an iteration on its way through the GPU, one command buffer, as the
 * trainer's slots (pipeline/gs_train.c). Its readback block is a host-visible copy, taken at the
 * end of its command buffer, of the forward's counters (and tile ranges on a CPU device), since
 * the iteration submitted behind it overwrites the originals. */
struct slot {
  struct gs_fwd_flight fl; /* first: gs_fwd_flight_complete hands it back to submit_flight */
  const struct args *a;
  uint32_t n, width, height;
};

static int submit_slot(struct bench *b, struct slot *sl, struct sw_err *err) {
  const struct args *a = sl->a;
  struct iter_in x;
  iter_inputs(b, sl->n, sl->fl.iter, a, &x);
  sl->width = x.in.cam.width;
  sl->height = x.in.cam.height;
  int rc = prepare_frame(b, sl->n, &x.in.cam, err);
  if (!rc)
    rc = gs_vk_buf_ensure(b->vk, &sl->fl.rb, gs_fwd_readback_size(b->fwd), GS_VK_BUF_HOST,
                          "readback", err);
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  if (!rc) rc = gs_vk_cmd_begin(b->vk, &cmd, err);
  if (rc) return rc;
  gs_vk_timer_use(b->timer, sl->fl.set);
  gs_vk_barrier(cmd); /* behind the iteration in flight, if any */
  gs_vk_timer_reset(b->timer, cmd);
  for (int s = 0; s <= last_stage(a) && !rc; s++) rc = record_stage(b, a, cmd, s, &x, sl->n, err);
  if (rc) {
    gs_vk_cmd_discard(b->vk, &cmd);
    return rc;
  }
  gs_vk_barrier(cmd);
  gs_fwd_record_readback(b->fwd, cmd, sl->fl.rb, 0);
  return gs_fwd_flight_submit(&sl->fl, &cmd, err);
}

static int submit_flight(void *ctx, struct gs_fwd_flight *fl, struct sw_err *err) {
  return submit_slot(ctx, (struct slot *)fl, err);
}

/* The timed part's clock: each timed iteration's wallclock runs from the completion of the one
 * before it to its own (with two in flight, the steady state's interval), for the median that
 * gsplat_iter.py reports for gsplat; the whole from the last warm-up iteration's completion to
 * the last one's. The stage times start there too. */
struct book {
  uint32_t warmup;
  gs_vk_timer_t *timer;
  double *it_ms, pairs;
  int64_t t0, t_last;
  uint32_t retries; /* submissions again after an arena overflow, in the timed part */
};

static void book_done(struct book *k, uint32_t it, double pairs, uint32_t redone) {
  int64_t now = sw_clock_mono_ns();
  if (it + 1 == k->warmup) {
    gs_vk_timer_clear(k->timer);
    k->t0 = now;
  } else if (it >= k->warmup) {
    k->it_ms[it - k->warmup] = (double)(now - k->t_last) / 1e6;
    k->pairs += pairs;
    k->retries += redone;
  }
  k->t_last = now;
}

/* Completes the slot's iteration (`behind`, NULL or submitted after it, goes again with it after
 * an arena overflow, as in the trainer: gs_fwd_flight_complete) and books it. */
static int complete_booked(struct bench *b, struct slot *sl, struct slot *behind, struct book *k,
                           struct sw_err *err) {
  uint64_t redone = 0;
  uint32_t pairs = 0;
  int rc = gs_fwd_flight_complete(b->fwd, b->timer, &sl->fl, behind ? &behind->fl : NULL,
                                  submit_flight, b, &redone, &pairs, err);
  sl->fl.submitted = 0;
  if (!rc) book_done(k, sl->fl.iter, pairs, (uint32_t)redone);
  return rc;
}

static int run_n(struct bench *b, const struct args *a, uint32_t n, struct sw_err *err) {
  struct gs_model *m = NULL;
  int rc = b->replay ? gs_fwd_model_upload(b->vk, b->replay, &b->model, err)
                     : make_model(n, a->seed, &m, err);
  if (!rc && !b->replay) rc = gs_fwd_model_upload(b->vk, m, &b->model, err);
  gs_model_destroy(&m);
  if (rc) return rc;
  uint32_t off[GS_P_COUNT];
  uint64_t mfloats = gs_tk_moment_offsets(n, off);
  for (int g = 0; g < GS_P_COUNT && !rc && !a->tk.fuse_adam; g++) /* fused: none are read */
    rc = gs_vk_buf_new(b->vk, 4ull * gs_pgroup_floats[g] * n, 0, "grads", &b->grads[g], err);
  if (!rc) rc = gs_vk_buf_new(b->vk, 4 * mfloats, 0, "moments", &b->moments, err);
  if (!rc) rc = gs_vk_buf_fill(b->moments, 0, err);
  if (!rc) rc = gs_vk_buf_new(b->vk, 4ull * GS_G2D * n, 0, "grad2d", &b->grad2d, err);
  if (!rc) rc = gs_vk_buf_new(b->vk, 12ull * n, 0, "dens", &b->dens, err);
  if (rc) return rc;
  double busy_ms = 0;
  struct book bk = {.warmup = a->warmup, .timer = b->timer};
  if (!(bk.it_ms = calloc(a->iters ? a->iters : 1, sizeof *bk.it_ms)))
    return sw_err_set(err, SW_ENOMEM, "out of memory");
  gs_vk_timer_clear(b->timer);
  bk.t0 = bk.t_last = sw_clock_mono_ns();
  uint32_t n_it = a->warmup + a->iters;
  struct slot sl[2] = {{.fl.set = 0, .a = a, .n = n}, {.fl.set = 1, .a = a, .n = n}};
  for (int k = 0; k < 2 && !rc && !a->per_kernel; k++)
    rc = gs_vk_job_new(b->vk, &sl[k].fl.job, err);
  struct slot *prev = NULL; /* submitted, not yet completed */
  for (uint32_t it = 0; it < n_it && !rc; it++) {
    if (a->per_kernel) {
      uint32_t redone = 0;
      double p = 0;
      rc = iterate_per_kernel(b, a, n, it, &redone, &p, err);
      if (!rc) book_done(&bk, it, p, redone);
      continue;
    }
    /* A frame of another size waits for the one in flight: its buffers are resized. */
    const struct gs_camera *c = b->sc ? &b->sc->train[it % b->sc->n_train].cam : NULL;
    uint32_t w = c ? c->width : a->size, h = c ? c->height : a->size;
    if (prev && (prev->width != w || prev->height != h)) {
      rc = complete_booked(b, prev, NULL, &bk, err);
      prev = NULL;
    }
    struct slot *cur = &sl[it % 2];
    cur->fl.iter = it;
    cur->fl.tries = 0;
    if (!rc) rc = submit_slot(b, cur, err);
    if (!rc && prev) rc = complete_booked(b, prev, cur, &bk, err);
    prev = cur;
    if (!rc && (a->in_flight < 2 || it + 1 == n_it)) {
      rc = complete_booked(b, cur, NULL, &bk, err);
      prev = NULL;
    }
  }
  for (int k = 0; k < 2; k++) { /* waits for a submission an error left behind */
    gs_vk_job_destroy(&sl[k].fl.job);
    gs_vk_buf_destroy(&sl[k].fl.rb);
  }
  double wall_ms = (double)(bk.t_last - bk.t0) / 1e6, pairs = bk.pairs;
  uint32_t retries = bk.retries;
  double med_ms = 0;
  if (!rc) rc = sw_stats_median(bk.it_ms, a->iters, &med_ms, err);
  free(bk.it_ms);
  int stats = !rc && a->run_stats && (a->tk.splat_bwd || a->stats_bucket) && !a->json;
  if (!rc) {
    const struct gs_vk_stage_stats *st;
    uint32_t ns;
    gs_vk_timer_summary(b->timer, &st, &ns, &busy_ms);
    /* With one submission per iteration (production), the span is one iteration on the GPU
     * from its first kernel's start to its last kernel's end: what gsplat_iter.py's CUDA events
     * measure for gsplat. The wallclock adds the host's submit and wait. */
    double span_ms = a->per_kernel ? 0 : gs_vk_timer_span_ms(b->timer);
    double total = 0;
    for (uint32_t i = 0; i < ns; i++) total += st[i].gpu_ms;
    if (a->json) {
      printf("{\"n\":%u,\"size\":%u,\"iters\":%u,\"ms_per_iter\":%.4f,\"ms_per_iter_median\":%.4f,"
             "\"gpu_busy_ms_per_iter\":%.4f,"
             "\"gpu_span_ms_per_iter\":%.4f,"
             "\"retries\":%u,\"pairs_per_iter\":%.0f,\"in_flight\":%d,\"rasterize_bwd\":\"%s\","
             "\"sort\":\"%s\",\"kernels\":[",
             n, b->sc ? b->sc->width : a->size, a->iters, wall_ms / a->iters, med_ms,
             busy_ms / a->iters, span_ms / a->iters, retries, pairs / a->iters, a->in_flight,
             a->tk.splat_bwd ? "splat" : "pixel", a->depth_first ? "depth_first" : "pairs");
      for (uint32_t i = 0; i < ns; i++)
        printf("%s{\"name\":\"%s\",\"ms_per_iter\":%.4f,\"share\":%.4f}", i ? "," : "", st[i].name,
               st[i].gpu_ms / a->iters, total > 0 ? st[i].gpu_ms / total : 0);
      printf("]}\n");
    } else {
      printf("N = %u, %ux%u, %u iterations after %u warm-up (%s, %d in flight): %.3f ms/iteration "
             "(median %.3f, GPU span %.3f, GPU busy %.3f ms/iteration, %.0f pairs/iteration)%s\n",
             n, b->sc ? b->sc->width : a->size, b->sc ? b->sc->height : a->size, a->iters,
             a->warmup, a->per_kernel ? "per_kernel" : "production", a->in_flight,
             wall_ms / a->iters, med_ms, span_ms / a->iters, busy_ms / a->iters, pairs / a->iters,
             retries ? " [arena regrew]" : "");
      for (uint32_t i = 0; i < ns; i++)
        printf("  %-14s %8.3f ms/iter  %5.1f%%\n", st[i].name, st[i].gpu_ms / a->iters,
               total > 0 ? 100.0 * st[i].gpu_ms / total : 0.0);
    }
    fflush(stdout);
  }
  if (stats) {
    const struct gs_fwd_bufs *fb = gs_fwd_bufs(b->fwd);
    rc = run_stats(fb, fb->width, fb->height, a->stats_bucket, err);
  }
  for (int g = 0; g < GS_P_COUNT; g++) gs_vk_buf_destroy(&b->grads[g]);
  gs_vk_buf_destroy(&b->moments);
  gs_vk_buf_destroy(&b->grad2d);
  gs_vk_buf_destroy(&b->dens);
  gs_fwd_model_release(&b->model);
  return rc;
}

int main(int argc, char **argv) {
  struct args a;
  int prc = parse(argc, argv, &a);
  if (prc) return prc > 0 ? 0 : 2;
  struct sw_err err = {0};
  struct bench b = {0};
  struct gs_vk_opts vo = {.device = a.device};
  int rc = gs_vk_open(&b.vk, &vo, &err);
  struct gs_fwd_opts fo = {.sigma_skip = 1,
                           .radix_ballot = 1,
                           .tile_cull = a.tile_cull,
                           .depth_first = a.depth_first,
                           .step = (uint32_t)a.fwd_step,
                           .cull_rows = a.fwd_cull == GS_FWD_CULL_ROWS,
                           .prefetch = a.fwd_stage == GS_FWD_STAGE_PREFETCH,
                           .dense_first = a.fwd_order == GS_FWD_ORDER_DENSE_FIRST,
                           .sh_vec4 = a.project_sh == GS_PROJECT_SH_VEC4};
  if (!rc && a.raster_bwd == GS_RASTER_BWD_SPLAT && !(fo.bucket = gs_tk_splat_bucket(b.vk, &err)))
    rc = SW_EDEVICE;
  if (!rc && a.raster_bwd == GS_RASTER_BWD_AUTO) fo.bucket = gs_tk_auto_bucket(b.vk, stderr);
  a.tk.splat_bwd = fo.bucket != 0;
  if (!rc) rc = gs_fwd_new(b.vk, &fo, &b.fwd, &err);
  if (!rc) rc = gs_tk_new(b.vk, &a.tk, &b.tk, &err);
  /* a query set per slot: the host reads an iteration's stamps after the next one was submitted */
  if (!rc) rc = gs_vk_timer_new_sets(b.vk, 32, 2, &b.timer, &err);
  if (!rc) rc = gs_tk_img_reserve(b.vk, &b.im, a.size, a.size, &err);
  size_t px = (size_t)a.size * a.size;
  if (!rc) rc = gs_vk_buf_new(b.vk, 12 * px, 0, "target", &b.gt, &err);
  if (!rc) {
    float *t = malloc(12 * px);
    struct gs_rng rng;
    gs_rng_seed(&rng, a.seed + 1);
    for (size_t i = 0; i < 3 * px; i++) t[i] = gs_rng_uniform(&rng);
    rc = gs_vk_buf_upload(b.gt, 0, t, 12 * px, &err);
    free(t);
  }
  if (!rc && a.ply) rc = load_replay(&b, &a, &err);
  if (!rc && !a.json) {
    const struct gs_vk_device_info *di = gs_vk_info(b.vk);
    char bwd_step[16]; /* gs_config_enum_name answers in one buffer */
    snprintf(bwd_step, sizeof bwd_step, "%s", gs_config_enum_name("bwd_step", a.tk.step));
    printf("device: %s (%s, %s), subgroup %u, float atomics %s, rasterize_bwd %s, tile_cull %s, "
           "sort %s, run pixels %s, step %s, drain %s, state %s, chain %d, fwd step %s, "
           "fwd cull %s, fwd stage %s, fwd order %s, project_sh %s, project_adam %s\n",
           di->name, di->driver, gs_vk_kind_name(di->kind), di->subgroup_size,
           b.tk->cas ? "no (CAS)" : "yes", a.tk.splat_bwd ? "splat" : "pixel",
           a.tile_cull ? "ellipse" : "box", a.depth_first ? "depth_first" : "pairs",
           a.tk.run_pixels == 2 ? "covered"
           : a.tk.run_pixels    ? "active"
                                : "rows",
           bwd_step, a.tk.drain ? "trim" : "full", a.tk.state ? "global" : "shared", a.tk.chain,
           gs_config_enum_name("fwd_step", a.fwd_step), a.fwd_cull ? "rows" : "off",
           a.fwd_stage ? "prefetch" : "direct", a.fwd_order ? "dense_first" : "rows",
           a.project_sh ? "vec4" : "scalar", a.tk.fuse_adam ? "fused" : "separate");
    if (b.replay)
      printf("workload: replay of %s (%u splats, SH degree %d) through the %u training views of "
             "%s\n",
             a.ply, b.replay->count, b.replay_degree, b.sc->n_train, a.scene);
    else
      printf("workload: random Gaussians (issue 4)\n");
  }
  if (b.replay)
    rc = rc ? rc : run_n(&b, &a, b.replay->count, &err);
  else
    for (int i = 0; i < a.n_ns && !rc; i++) rc = run_n(&b, &a, a.ns[i], &err);
  if (rc) fprintf(stderr, "iter_bench: %s\n", err.msg);
  gs_vk_buf_destroy(&b.gt);
  for (uint32_t v = 0; b.gts && v < b.sc->n_train; v++) gs_vk_buf_destroy(&b.gts[v]);
  free(b.gts);
  gs_scene_destroy(&b.sc);
  gs_model_destroy(&b.replay);
  gs_tk_img_free(&b.im);
  gs_vk_timer_destroy(&b.timer);
  gs_tk_destroy(&b.tk);
  gs_fwd_destroy(&b.fwd);
  gs_vk_close(&b.vk);
  return rc ? (rc == SW_EDEVICE ? 3 : 1) : 0;
}
