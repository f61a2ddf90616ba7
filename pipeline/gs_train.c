/* gs_train.c: the training loop (see gs_train.h): scene and device setup, GPU buffers of the
 * model, its gradients and Adam moments, the per-iteration recording in both timing regimes,
 * densification round trips, checkpoints, evaluation, divergence diagnosis and the result. */
#include "gs_train.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gs_fwd.h"
#include "gs_metrics.h"
#include "gs_model.h"
#include "gs_ply.h"
#include "gs_scene.h"
#include "gs_train_densify.h"
#include "gs_train_diag.h"
#include "gs_train_gpu.h"
#include "sw_clock.h"
#include "sw_log.h"

#ifndef GS_TRAINER_VERSION
#define GS_TRAINER_VERSION "0.0.0"
#endif

/* Stages of the backward half, in recording order (names as in DESIGN.md section 8). */
enum bstage { B_LOSS = 0, B_SSIM_BWD, B_RASTER_BWD, B_PROJECT_BWD, B_ADAM, B_STAGES };
static const char *bstage_name[B_STAGES] = {"loss", "ssim_bwd", "rasterize_bwd", "project_bwd",
                                            "adam"};

struct slot;

struct trainer {
  const struct gs_config *cfg;
  int splat_bwd; /* the rasterize backward in use: per splat (1) or per pixel (0), auto resolved */
  struct gs_scene *sc;
  gs_vk_t *vk;
  gs_fwd_t *fwd;
  struct gs_tk *tk;
  gs_vk_timer_t *timer;   /* one query set per slot */
  struct slot *slots;     /* GS_TRAIN_SLOTS */
  uint32_t in_flight;     /* iterations submitted before the host waits: 1 or 2 */
  uint64_t redone;        /* iterations recorded again after an arena overflow */
  uint32_t fault_nan_gt;  /* GS_TRAIN_FAULT_NAN_GT (tests): after this iteration the ground truth
                             of every view is NaN, so the next loss is not finite (0 = off) */
  struct gs_model *model; /* host copy: initial upload, densification, final.ply */
  struct gs_moments mo;   /* host copy of the moments during densification */
  /* The model and its Adam moments on the GPU, in two sets: densification gathers from the
   * current set into the other and swaps them. */
  uint32_t cap; /* splats the current set holds */
  struct gs_vk_buf *params[GS_P_COUNT], *moments;
  uint32_t alt_cap;
  struct gs_vk_buf *alt_params[GS_P_COUNT], *alt_moments;
  uint32_t work_cap; /* splats the per-iteration arrays below hold */
  struct gs_vk_buf *grads[GS_P_COUNT], *grad2d, *dens;
  struct gs_vk_buf *plan_src, *plan_off; /* densification plan */
  struct gs_vk_buf **gt;                 /* one per training view */
  struct gs_tk_img im;
  float bg[3];
  double densify_ms;
  uint64_t densify_calls;
  /* SW_LOG=debug: every splat's lineage and a description of each grow step (gs_train_diag.h). */
  int diag;
  struct gs_lineage lineage;
  uint32_t prev_grow;
};

static void bg_of(const struct gs_config *cfg, float bg[3]) {
  for (int k = 0; k < 3; k++) bg[k] = cfg->background == GS_BG_WHITE ? 1.0f : 0.0f;
}

/* ---- GPU model buffers ----------------------------------------------------------------------- */

static uint32_t grown(uint32_t cap, uint32_t n) {
  uint32_t c = cap + cap / 2;
  return c < n ? n : c;
}

/* Makes a parameter set hold at least n splats (contents lost when it grows). */
static int reserve_set(struct trainer *t, struct gs_vk_buf **params, struct gs_vk_buf **moments,
                       uint32_t *cap, uint32_t n, struct sw_err *err) {
  if (n <= *cap && *moments) return 0;
  uint32_t c = grown(*cap, n), off[GS_P_COUNT];
  int rc = 0;
  for (int g = 0; g < GS_P_COUNT && !rc; g++)
    rc = gs_vk_buf_ensure(t->vk, &params[g], 4ull * gs_pgroup_floats[g] * c, 0, "params", err);
  if (!rc)
    rc = gs_vk_buf_ensure(t->vk, moments, 4 * gs_tk_moment_offsets(c, off), 0, "moments", err);
  if (!rc) *cap = c;
  return rc;
}

/* Makes the per-iteration arrays (gradients, 2D gradients, densification statistics) hold at
 * least n splats; *grew_out (may be NULL) says whether they were reallocated (contents lost).
 * With `project_adam: fused` no kernel reads or writes parameter gradients: none are made. */
static int reserve_work(struct trainer *t, uint32_t n, int *grew_out, struct sw_err *err) {
  if (grew_out) *grew_out = 0;
  if (n <= t->work_cap && t->dens) return 0;
  uint32_t c = grown(t->work_cap, n);
  int rc = 0;
  int grads = t->cfg->project_adam != GS_PROJECT_ADAM_FUSED;
  for (int g = 0; g < GS_P_COUNT && !rc && grads; g++)
    rc = gs_vk_buf_ensure(t->vk, &t->grads[g], 4ull * gs_pgroup_floats[g] * c, 0, "grads", err);
  if (!rc) rc = gs_vk_buf_ensure(t->vk, &t->grad2d, 4ull * GS_G2D * c, 0, "grad2d", err);
  if (!rc) rc = gs_vk_buf_ensure(t->vk, &t->dens, 12ull * c, 0, "dens", err);
  if (!rc) {
    t->work_cap = c;
    if (grew_out) *grew_out = 1;
  }
  return rc;
}

static int reserve_gpu(struct trainer *t, uint32_t n, struct sw_err *err) {
  int rc = reserve_set(t, t->params, &t->moments, &t->cap, n, err);
  if (!rc) rc = reserve_work(t, n, NULL, err);
  return rc;
}

/* Host model + moments -> GPU (the initial state); densification statistics zeroed when
 * zero_dens. Model moves are batched copies (gs_vk_buf_copy), one submission for all pieces: a
 * gs_vk_buf_upload per piece (a submission and a wait each) made densification cost ~50 ms at
 * 60k splats on an H200. */
static int upload_state(struct trainer *t, int zero_dens, struct sw_err *err) {
  struct gs_model *m = t->model;
  int rc = reserve_gpu(t, m->count, err);
  if (rc) return rc;
  uint32_t off[GS_P_COUNT];
  gs_tk_moment_offsets(t->cap, off);
  struct gs_vk_copy x[2 * GS_P_COUNT];
  int n = 0;
  for (int g = 0; g < GS_P_COUNT && m->count; g++) {
    VkDeviceSize floats = (VkDeviceSize)gs_pgroup_floats[g] * m->count;
    x[n++] = (struct gs_vk_copy){t->params[g], 0, 4 * floats, gs_pgroup_host(m, g)};
    x[n++] = (struct gs_vk_copy){t->moments, 4ull * off[g], 8 * floats, t->mo.g[g]};
  }
  return gs_vk_buf_copy(t->vk, 1, x, n, zero_dens ? t->dens : NULL, err);
}

/* GPU -> host parameters of the current set (final.ply and the final NaN check). */
static int download_params(struct trainer *t, struct sw_err *err) {
  struct gs_model *m = t->model;
  if (!m->count) return 0;
  struct gs_vk_copy x[GS_P_COUNT];
  for (int g = 0; g < GS_P_COUNT; g++)
    x[g] = (struct gs_vk_copy){t->params[g], 0, 4ull * gs_pgroup_floats[g] * m->count,
                               gs_pgroup_host(m, g)};
  return gs_vk_buf_copy(t->vk, 0, x, GS_P_COUNT, NULL, err);
}

/* OUT/checkpoint-ITER.ply: the model after `iter` steps (checkpoint_ply: 1), e.g. for the
 * iteration benchmark's replayed workload (bench/iter_bench --ply). */
static int write_checkpoint(struct trainer *t, const struct gs_train_io *io, uint32_t iter,
                            struct sw_err *err) {
  int rc = download_params(t, err);
  if (rc) return rc;
  char path[4096];
  snprintf(path, sizeof path, "%s/checkpoint-%u.ply", io->out_dir, iter);
  return gs_ply_write(path, t->model, err);
}

/* ---- one iteration -----------------------------------------------------------------------------
 */

struct iter_args {
  struct gs_fwd_input in;
  struct gs_pc_project_bwd pb;
  struct gs_pc_adam adam;
  struct gs_densify_when when;
  uint32_t iter;
  uint32_t view;
  float lambda;
  int sync; /* host work follows (densification, reset, checkpoint): nothing may run behind it */
};

/* An iteration on its way through the GPU. Its readback block is a host-visible copy, taken at
 * the end of its command buffer, of what the host reads after it: the forward's counters (and
 * tile ranges on a CPU device) and the loss partial sums, since the iteration submitted behind
 * it overwrites the originals. */
#define GS_TRAIN_SLOTS 2
struct slot {
  struct gs_fwd_flight fl; /* first: gs_fwd_flight_complete hands it back to submit_flight */
  VkDeviceSize loss_off;   /* of the partial sums in fl.rb */
  struct iter_args a;
};

/* The backward stages an iteration records: no SSIM backward without D-SSIM, and with
 * `project_adam: fused` one stage, named project_adam, for the projection backward and Adam. */
static int bstage_runs(const struct trainer *t, const struct iter_args *a, int s) {
  if (s == B_SSIM_BWD) return a->lambda != 0.0f;
  if (s == B_ADAM) return !t->tk->opts.fuse_adam;
  return 1;
}

static const char *bstage_label(const struct trainer *t, int s) {
  return s == B_PROJECT_BWD && t->tk->opts.fuse_adam ? "project_adam" : bstage_name[s];
}

static void record_bstage(struct trainer *t, VkCommandBuffer cmd, enum bstage s,
                          const struct iter_args *a) {
  const struct gs_fwd_bufs *fb = gs_fwd_bufs(t->fwd);
  struct gs_vk_buf *gt = t->gt[a->view];
  switch (s) {
  case B_LOSS: gs_tk_record_loss(t->tk, cmd, &t->im, fb->rgb, gt, a->lambda); break;
  case B_SSIM_BWD: gs_tk_record_ssim_bwd(t->tk, cmd, &t->im, fb->rgb, gt, a->lambda); break;
  case B_RASTER_BWD: {
    struct gs_pc_raster pc = {
        .width = fb->width, .height = fb->height, .tiles_x = fb->tiles_x, .tiles_y = fb->tiles_y};
    memcpy(pc.background, t->bg, sizeof t->bg);
    struct gs_tk_runs runs;
    gs_tk_record_raster_bwd(t->tk, cmd, &pc, fb->ranges, fb->values, fb->splats, fb->final_t,
                            fb->last, t->im.dl, t->grad2d, a->in.model.count,
                            gs_tk_runs_of(fb, &runs));
    break;
  }
  case B_PROJECT_BWD:
    if (t->tk->opts.fuse_adam) {
      gs_tk_record_project_adam(t->tk, cmd, &a->pb, &a->adam, t->params, fb->splats, t->grad2d,
                                t->moments, fb->tiles_touched, t->dens, fb->counters);
      break;
    }
    gs_tk_record_project_bwd(t->tk, cmd, &a->pb, t->params, fb->splats, t->grad2d, t->grads,
                             t->dens, fb->counters);
    break;
  case B_ADAM:
    gs_tk_record_adam(t->tk, cmd, &a->adam, t->params, t->grads, t->moments, fb->tiles_touched,
                      fb->counters);
    break;
  default: break;
  }
}

/* The slot's readback block: sized for this frame, and its copies recorded (after a barrier). */
static void record_readback(struct trainer *t, VkCommandBuffer cmd, struct slot *sl) {
  gs_vk_barrier(cmd);
  gs_fwd_record_readback(t->fwd, cmd, sl->fl.rb, 0);
  gs_tk_record_loss_readback(cmd, &t->im, sl->fl.rb, sl->loss_off);
}

/* Records and submits the slot's iteration. With in_flight 2 the iteration submitted before it
 * may still be running: its buffers keep their sizes (the caller waits for it first when the
 * view's size changes; the splat count changes only in densification, after a wait), and the
 * command buffer starts with a barrier behind it. timing: per_kernel submits and waits for every
 * stage on its own (exact per-kernel times, at the cost of the gaps between them). */
static int submit_iteration(struct trainer *t, struct slot *sl, struct sw_err *err) {
  const struct iter_args *a = &sl->a;
  int per_kernel = t->cfg->timing == GS_TIMING_PER_KERNEL;
  const struct gs_camera *cam = &a->in.cam;
  int rc = gs_fwd_prepare(t->fwd, a->in.model.count, cam->width, cam->height, err);
  if (!rc) rc = gs_tk_reserve(t->tk, a->in.model.count, err);
  /* The loss images take this view's size (buffers only grow, sized by the largest view). */
  if (!rc && (t->im.w != cam->width || t->im.h != cam->height))
    rc = gs_tk_img_reserve(t->vk, &t->im, cam->width, cam->height, err);
  if (!rc) {
    VkDeviceSize fb = gs_fwd_readback_size(t->fwd);
    sl->loss_off = (fb + 15) / 16 * 16;
    rc = gs_vk_buf_ensure(t->vk, &sl->fl.rb, sl->loss_off + gs_tk_loss_part_size(&t->im),
                          GS_VK_BUF_HOST, "readback", err);
  }
  if (rc) return rc;
  gs_vk_timer_use(t->timer, sl->fl.set);
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  if (!per_kernel) {
    rc = gs_vk_cmd_begin(t->vk, &cmd, err);
    if (rc) return rc;
    gs_vk_barrier(cmd); /* behind the iteration in flight, if any */
    gs_vk_timer_reset(t->timer, cmd);
    rc = gs_fwd_record(t->fwd, cmd, t->timer, &a->in, err);
    for (int s = 0; s < B_STAGES && !rc; s++) {
      if (!bstage_runs(t, a, s)) continue;
      gs_vk_timer_begin(t->timer, cmd, bstage_label(t, s));
      record_bstage(t, cmd, (enum bstage)s, a);
      gs_vk_timer_end(t->timer, cmd);
      gs_vk_barrier(cmd);
    }
    if (rc) {
      gs_vk_cmd_discard(t->vk, &cmd);
      return rc;
    }
    record_readback(t, cmd, sl);
    rc = gs_fwd_flight_submit(&sl->fl, &cmd, err);
  } else {
    int last = GS_FWD_STAGES + (bstage_runs(t, a, B_ADAM) ? B_ADAM : B_PROJECT_BWD);
    for (int s = 0; s <= last && !rc; s++) {
      if (s >= GS_FWD_STAGES && !bstage_runs(t, a, s - GS_FWD_STAGES)) continue;
      rc = gs_vk_cmd_begin(t->vk, &cmd, err);
      if (rc) break;
      gs_vk_timer_reset(t->timer, cmd);
      if (s < GS_FWD_STAGES) {
        rc = gs_fwd_record_stage(t->fwd, cmd, t->timer, (enum gs_fwd_stage)s, &a->in, err);
      } else {
        gs_vk_timer_begin(t->timer, cmd, bstage_label(t, s - GS_FWD_STAGES));
        record_bstage(t, cmd, (enum bstage)(s - GS_FWD_STAGES), a);
        gs_vk_timer_end(t->timer, cmd);
      }
      if (rc) {
        gs_vk_cmd_discard(t->vk, &cmd);
        break;
      }
      if (s == last) {
        record_readback(t, cmd, sl);
        rc = gs_fwd_flight_submit(&sl->fl, &cmd, err);
        if (!rc) rc = gs_vk_job_wait(sl->fl.job, err);
      } else {
        rc = gs_vk_cmd_submit_wait(t->vk, &cmd, err);
      }
      if (!rc) rc = gs_vk_timer_collect(t->timer, err);
    }
  }
  return rc;
}

static int submit_flight(void *ctx, struct gs_fwd_flight *fl, struct sw_err *err) {
  return submit_iteration(ctx, (struct slot *)fl, err);
}

/* Completes the slot's iteration; `behind` (NULL or not submitted: none) was submitted after it.
 * When the frame overflowed the pair arena, nothing it or `behind` did touched the model
 * (GS_CTR_STALE): both wait, the arena grows, and both are recorded and submitted again, in
 * order, so the training is the one without the overflow (gs_fwd_flight_complete). */
static int complete_iteration(struct trainer *t, struct slot *sl, struct slot *behind,
                              struct sw_err *err) {
  return gs_fwd_flight_complete(t->fwd, t->timer, &sl->fl, behind ? &behind->fl : NULL,
                                submit_flight, t, &t->redone, NULL, err);
}

/* ---- divergence diagnosis ----------------------------------------------------------------------
 */

static long first_nonfinite(struct gs_vk_buf *b, VkDeviceSize floats, struct sw_err *err) {
  if (!floats) return -1;
  float *h = malloc(4 * floats);
  if (!h) return -1;
  long at = -1;
  if (gs_vk_buf_download(b, 0, h, 4 * floats, err) == 0)
    for (VkDeviceSize i = 0; i < floats; i++)
      if (!isfinite(h[i])) {
        at = (long)i;
        break;
      }
  free(h);
  return at;
}

/* Names the first buffer, in pipeline order, that holds a NaN or Inf after iteration `iter`
 * (the parameter gradients only where a stage writes them: not with `project_adam: fused`). */
static int diverged(struct trainer *t, uint32_t iter, uint32_t n, const char *what,
                    struct sw_err *err) {
  const struct gs_fwd_bufs *fb = gs_fwd_bufs(t->fwd);
  const char *step = t->tk->opts.fuse_adam ? bstage_label(t, B_PROJECT_BWD) : bstage_name[B_ADAM];
  struct {
    struct gs_vk_buf *b;
    VkDeviceSize floats;
    const char *buffer, *stage;
  } order[] = {
      {fb->splats, 16ull * n, "projected splats", "project_fwd"},
      {fb->rgb, 3ull * fb->width * fb->height, "rendered image", "rasterize_fwd"},
      {t->im.dl, 3ull * fb->width * fb->height, "dL/dimage", "loss/ssim_bwd"},
      {t->grad2d, (VkDeviceSize)GS_G2D * n, "per-splat 2D gradients", "rasterize_bwd"},
      {t->grads[GS_P_MEANS], 3ull * n, "mean gradients", "project_bwd"},
      {t->grads[GS_P_SCALES], 3ull * n, "log-scale gradients", "project_bwd"},
      {t->grads[GS_P_QUATS], 4ull * n, "quaternion gradients", "project_bwd"},
      {t->grads[GS_P_OPACITY], 1ull * n, "opacity gradients", "project_bwd"},
      {t->grads[GS_P_SH], 48ull * n, "SH gradients", "project_bwd"},
      {t->params[GS_P_MEANS], 3ull * n, "means", step},
      {t->params[GS_P_SCALES], 3ull * n, "log-scales", step},
      {t->params[GS_P_QUATS], 4ull * n, "quaternions", step},
      {t->params[GS_P_OPACITY], 1ull * n, "opacity logits", step},
      {t->params[GS_P_SH], 48ull * n, "SH coefficients", step},
  };
  for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
    if (!order[i].b) continue;
    long at = first_nonfinite(order[i].b, order[i].floats, NULL);
    if (at >= 0)
      return sw_err_set(err, SW_EDIVERGED,
                        "diverged at iteration %u: %s; first non-finite value in the %s "
                        "(float %ld) written by stage %s",
                        iter, what, order[i].buffer, at, order[i].stage);
  }
  return sw_err_set(err, SW_EDIVERGED, "diverged at iteration %u: %s (no non-finite buffer found)",
                    iter, what);
}

/* ---- evaluation --------------------------------------------------------------------------------
 */

/* Mean PSNR and SSIM over the test views (train views when the scene has none). */
static int evaluate(struct trainer *t, uint32_t sh_degree, double *psnr, double *ssim,
                    struct sw_err *err) {
  const struct gs_scene *sc = t->sc;
  const struct gs_view *views = sc->n_test ? sc->test : sc->train;
  uint32_t nv = sc->n_test ? sc->n_test : sc->n_train;
  *psnr = *ssim = 0;
  if (!nv) return 0;
  size_t px = (size_t)sc->width * sc->height; /* the largest view */
  float *rgb = malloc(12 * px);
  if (!rgb) return sw_err_set(err, SW_ENOMEM, "evaluation: out of memory");
  int rc = 0;
  double sp = 0, ss = 0;
  for (uint32_t v = 0; v < nv && !rc; v++) {
    struct gs_fwd_input in = {.cam = views[v].cam, .sh_degree = sh_degree};
    in.model = (struct gs_fwd_model){t->params[0], t->params[1], t->params[2],
                                     t->params[3], t->params[4], t->model->count};
    memcpy(in.background, t->bg, sizeof t->bg);
    double p = 0, s = 0;
    rc = gs_fwd_run(t->fwd, NULL, &in, 0, err);
    if (!rc) rc = gs_fwd_read_image(t->fwd, rgb, NULL, NULL, err);
    uint32_t w = views[v].cam.width, h = views[v].cam.height;
    if (!rc) rc = gs_metrics_psnr(rgb, views[v].rgb, w, h, &p, err);
    if (!rc) rc = gs_metrics_ssim(rgb, views[v].rgb, w, h, &s, err);
    if (rc == SW_EINVAL) {
      sw_err_prefix(err, "evaluating view %s", views[v].name);
      rc = SW_EDIVERGED; /* a NaN in the render: the model diverged */
    }
    /* An exact render has infinite PSNR; cap it so that means stay finite. */
    sp += isfinite(p) ? p : 100.0;
    ss += s;
  }
  free(rgb);
  if (rc) return rc;
  *psnr = sp / nv;
  *ssim = ss / nv;
  return 0;
}

/* ---- setup and teardown ------------------------------------------------------------------------
 */

static void trainer_free(struct trainer *t) {
  if (t->gt)
    for (uint32_t v = 0; v < t->sc->n_train; v++) gs_vk_buf_destroy(&t->gt[v]);
  free(t->gt);
  for (int g = 0; g < GS_P_COUNT; g++) {
    gs_vk_buf_destroy(&t->params[g]);
    gs_vk_buf_destroy(&t->grads[g]);
  }
  gs_vk_buf_destroy(&t->moments);
  for (int g = 0; g < GS_P_COUNT; g++) gs_vk_buf_destroy(&t->alt_params[g]);
  gs_vk_buf_destroy(&t->alt_moments);
  gs_vk_buf_destroy(&t->plan_src);
  gs_vk_buf_destroy(&t->plan_off);
  gs_vk_buf_destroy(&t->grad2d);
  gs_vk_buf_destroy(&t->dens);
  gs_tk_img_free(&t->im);
  if (t->slots)
    for (int k = 0; k < GS_TRAIN_SLOTS; k++) {
      gs_vk_job_destroy(&t->slots[k].fl.job);
      gs_vk_buf_destroy(&t->slots[k].fl.rb);
    }
  free(t->slots);
  gs_vk_timer_destroy(&t->timer);
  gs_tk_destroy(&t->tk);
  gs_fwd_destroy(&t->fwd);
  gs_vk_close(&t->vk);
  gs_moments_free(&t->mo);
  gs_lineage_free(&t->lineage);
  gs_model_destroy(&t->model);
  gs_scene_destroy(&t->sc);
}

static int setup(struct trainer *t, const char *scene_path, const struct gs_train_io *io,
                 struct sw_err *err) {
  const struct gs_config *cfg = t->cfg;
  bg_of(cfg, t->bg);
  struct gs_scene_opts so = {.background = cfg->background == 0 ? GS_BG_WHITE : GS_BG_BLACK,
                             .resolution_scale = (uint32_t)cfg->resolution_scale,
                             .holdout_every = (uint32_t)cfg->test_every,
                             .normalize = cfg->scene_normalize,
                             .missing_frames_error = cfg->missing_frames == GS_MISSING_ERROR,
                             .stop = io ? io->stop : NULL};
  int rc = gs_scene_load(scene_path, &so, &t->sc, err);
  if (rc == GS_SCENE_STOPPED) return GS_TRAIN_STOPPED;
  if (rc) return rc;
  if (t->sc->warning[0] && io && io->warn) fprintf(io->warn, "warning: %s\n", t->sc->warning);
  if (t->sc->n_train == 0)
    return sw_err_set(err, SW_EINVAL, "scene '%s' has no training views", scene_path);
  if (cfg->scene_extent > 0) t->sc->extent = (float)cfg->scene_extent;
  struct gs_vk_opts vo = {.device = cfg->device[0] ? cfg->device : NULL};
  rc = gs_vk_open(&t->vk, &vo, err);
  if (rc) return rc == SW_ENOTFOUND ? SW_EDEVICE : rc;
  struct gs_fwd_opts fo = {.sigma_skip = cfg->sigma_skip == GS_ON,
                           .accum_f16 = cfg->fwd_accum == GS_FWD_ACCUM_F16,
                           .radix_ballot = cfg->radix_scatter == GS_RADIX_SCATTER_BALLOT,
                           .radix_full = cfg->radix_passes == GS_RADIX_PASSES_FULL,
                           .transient = cfg->binning == GS_BINNING_TRANSIENT,
                           .tile_cull = cfg->tile_cull == GS_TILE_CULL_ELLIPSE,
                           .depth_first = cfg->sort == GS_SORT_DEPTH_FIRST,
                           .alpha_max = (float)cfg->alpha_max,
                           .step = (uint32_t)cfg->fwd_step,
                           .cull_rows = cfg->fwd_cull == GS_FWD_CULL_ROWS,
                           .prefetch = cfg->fwd_stage == GS_FWD_STAGE_PREFETCH,
                           .dense_first = cfg->fwd_order == GS_FWD_ORDER_DENSE_FIRST,
                           .sh_vec4 = cfg->project_sh == GS_PROJECT_SH_VEC4};
  if (cfg->rasterize_bwd == GS_RASTER_BWD_AUTO) {
    fo.bucket = gs_tk_auto_bucket(t->vk, io ? io->warn : NULL);
  } else if (cfg->rasterize_bwd == GS_RASTER_BWD_SPLAT) {
    fo.bucket = gs_tk_splat_bucket(t->vk, err);
    if (!fo.bucket) return SW_EDEVICE;
  }
  t->splat_bwd = fo.bucket != 0;
  rc = gs_fwd_new(t->vk, &fo, &t->fwd, err);
  struct gs_tk_opts to = {.ssim_walk = cfg->ssim_walk,
                          .ssim_planar = cfg->ssim_layout == GS_SSIM_LAYOUT_PLANAR,
                          .sigma_skip = cfg->sigma_skip == GS_ON,
                          .warp_skip = cfg->bwd_warp_skip == GS_ON,
                          .atomic_spread = cfg->atomic_spread == GS_ATOMIC_SPREAD_LANES,
                          .adam_visible = cfg->adam == GS_ADAM_VISIBLE,
                          .alpha_max = (float)cfg->alpha_max,
                          .ssim_padding = cfg->ssim_padding,
                          .deterministic = cfg->deterministic == GS_ON,
                          .splat_bwd = t->splat_bwd,
                          .run_pixels = cfg->bwd_run_pixels,
                          .step = cfg->bwd_step,
                          .drain = cfg->bwd_drain,
                          .state = cfg->bwd_state,
                          .chain = 1 << cfg->bwd_chain,
                          .fuse_adam = cfg->project_adam == GS_PROJECT_ADAM_FUSED};
  if (!rc) rc = gs_tk_new(t->vk, &to, &t->tk, err);
  if (!rc && cfg->lambda_dssim > 0 && !gs_tk_ssim_pixels(t->tk, t->sc->width, t->sc->height))
    rc = sw_err_set(err, SW_EINVAL,
                    "ssim_padding valid needs images of at least 11x11; scene "
                    "'%s' has %ux%u",
                    scene_path, t->sc->width, t->sc->height);
  if (!rc) rc = gs_vk_timer_new_sets(t->vk, 32, GS_TRAIN_SLOTS, &t->timer, err);
  /* Per-kernel timing submits every stage on its own, and the transient arena is freed after
   * every frame: either needs each iteration done before the next is recorded. */
  const char *fault = getenv("GS_TRAIN_FAULT_NAN_GT");
  if (fault) t->fault_nan_gt = (uint32_t)strtoul(fault, NULL, 10);
  t->in_flight = (uint32_t)cfg->in_flight;
  if (cfg->timing == GS_TIMING_PER_KERNEL || cfg->binning == GS_BINNING_TRANSIENT) t->in_flight = 1;
  if (!rc) {
    t->slots = calloc(GS_TRAIN_SLOTS, sizeof *t->slots);
    if (!t->slots) rc = sw_err_set(err, SW_ENOMEM, "out of memory");
  }
  for (uint32_t k = 0; k < GS_TRAIN_SLOTS && !rc; k++) {
    t->slots[k].fl.set = (uint32_t)k;
    rc = gs_vk_job_new(t->vk, &t->slots[k].fl.job, err);
  }
  if (!rc) rc = gs_tk_img_reserve(t->vk, &t->im, t->sc->width, t->sc->height, err);
  if (rc) return rc;
  /* Ground truth of every training view stays on the GPU. */
  t->gt = calloc(t->sc->n_train, sizeof *t->gt);
  if (!t->gt) return sw_err_set(err, SW_ENOMEM, "ground truth: out of memory");
  for (uint32_t v = 0; v < t->sc->n_train && !rc; v++) {
    /* Views may differ in size: each buffer holds its own view. */
    const struct gs_camera *c = &t->sc->train[v].cam;
    VkDeviceSize img_bytes = 12ull * c->width * c->height;
    rc = gs_vk_buf_new(t->vk, img_bytes, 0, "gt", &t->gt[v], err);
    if (!rc) rc = gs_vk_buf_upload(t->gt[v], 0, t->sc->train[v].rgb, img_bytes, err);
  }
  if (rc) return rc;
  /* Random initialisation inside the scene's content bounds (the 3DGS synthetic recipe), or, as
   * gsplat's random init, in a cube of half-size init_extent x scene extent around the origin. */
  struct gs_init_opts iopt;
  gs_init_opts_default(&iopt);
  iopt.count = (uint32_t)cfg->init_points;
  iopt.seed = (uint64_t)cfg->seed;
  for (int k = 0; k < 3; k++) {
    float c = 0.5f * (t->sc->aabb_min[k] + t->sc->aabb_max[k]);
    float h = 0.5f * (t->sc->aabb_max[k] - t->sc->aabb_min[k]) * (float)cfg->init_extent;
    if (cfg->init_box == GS_INIT_BOX_EXTENT) {
      c = 0.0f;
      h = t->sc->extent * (float)cfg->init_extent;
    }
    iopt.box_min[k] = c - h;
    iopt.box_max[k] = c + h;
  }
  int from_points =
      cfg->init == GS_INIT_POINTS || (cfg->init == GS_INIT_AUTO && t->sc->n_points > 0);
  if (from_points && t->sc->n_points == 0)
    return sw_err_set(err, SW_EINVAL,
                      "init points: scene '%s' (%s) has no point cloud (COLMAP "
                      "points3D); use init: random",
                      scene_path, t->sc->format);
  rc = gs_model_new(from_points ? t->sc->n_points : iopt.count, &t->model, err);
  if (!rc && from_points)
    rc = gs_model_init_points(t->model, t->sc->points, t->sc->colors, t->sc->n_points, 0.1f, err);
  else if (!rc)
    rc = gs_model_init_random(t->model, &iopt, err);
  if (!rc) rc = gs_moments_reserve(&t->mo, t->model->capacity, err);
  if (!rc) rc = upload_state(t, 1, err);
  t->diag = sw_log_enabled(SW_LOG_DEBUG);
  if (!rc && t->diag) rc = gs_lineage_init(&t->lineage, t->model->count, err);
  return rc;
}

/* ---- the loop ----------------------------------------------------------------------------------
 */

static double position_lr(const struct gs_config *cfg, uint32_t step, double extent) {
  uint32_t steps = cfg->lr_means_steps ? (uint32_t)cfg->lr_means_steps : (uint32_t)cfg->iterations;
  double init = cfg->lr_means * extent, fin = cfg->lr_means_final * extent;
  if (steps == 0 || init <= 0) return init;
  if (fin <= 0) fin = init * 1e-12; /* exponential decay towards zero */
  double x = step >= steps ? 1.0 : (double)step / (double)steps;
  return init * pow(fin / init, x);
}

static void shuffle(uint32_t *a, uint32_t n, struct gs_rng *rng) {
  for (uint32_t i = 0; i < n; i++) a[i] = i;
  for (uint32_t i = n; i > 1; i--) {
    uint32_t j = gs_rng_below(rng, i);
    uint32_t x = a[i - 1];
    a[i - 1] = a[j];
    a[j] = x;
  }
}

/* One densification step on the GPU: the statistics and the few parameters the decisions need
 * come to the host, the plan (gs_densify_plan) goes back, and densify_gather builds the new set
 * of parameters and moments from the current one; the sets swap. A reset-only step is the
 * identity plan with the reset flag. Timed as the `densify` kernel (its whole wallclock). */
static int densify_step(struct trainer *t, uint32_t iter, const struct gs_densify_when *when,
                        struct gs_rng *rng, struct sw_err *err) {
  const struct gs_config *cfg = t->cfg;
  int64_t t0 = sw_clock_mono_ns();
  struct gs_model *m = t->model;
  uint32_t n = m->count;
  size_t nn = n ? n : 1;
  float *h = malloc(sizeof(float) * (t->diag ? 14 : 11) * nn);
  struct gs_densify_plan plan = {0};
  if (!h) return sw_err_set(err, SW_ENOMEM, "densify: out of memory");
  float *dens = h, *ls = h + 3 * nn, *q = h + 6 * nn, *op = h + 10 * nn;
  int rc = 0;
  if (when->grow && n) {
    /* The diagnostics also want the means: one more piece of the same batched copy. */
    float *means = h + 11 * nn;
    struct gs_vk_copy x[5] = {{t->dens, 0, 12ull * n, dens},
                              {t->params[GS_P_SCALES], 0, 12ull * n, ls},
                              {t->params[GS_P_QUATS], 0, 16ull * n, q},
                              {t->params[GS_P_OPACITY], 0, 4ull * n, op},
                              {t->params[GS_P_MEANS], 0, 12ull * n, means}};
    rc = gs_vk_buf_copy(t->vk, 0, x, t->diag ? 5 : 4, NULL, err);
    struct gs_densify_opts o = {.grad_threshold = (float)cfg->grad_threshold,
                                .percent_dense = (float)cfg->percent_dense,
                                .extent = t->sc->extent,
                                .prune_opacity = (float)cfg->prune_opacity,
                                .prune_big = when->prune_big,
                                .prune_screen = (float)cfg->prune_screen,
                                .prune_world = (float)cfg->prune_world,
                                .max_splats = (uint32_t)cfg->max_splats,
                                .share_opacity = cfg->clone_opacity == GS_CLONE_OPACITY_SHARE};
    struct gs_densify_report rep;
    if (!rc) rc = gs_densify_plan(n, dens, ls, q, op, &o, rng, &plan, &rep, err);
    if (!rc)
      sw_log_debug("densify at %u: %u -> %u (cloned %u, split %u, pruned %u)", iter, rep.before,
                   rep.after, rep.cloned, rep.split, rep.pruned);
    if (!rc && t->diag) {
      struct gs_densify_view v = {.n = n,
                                  .iter = iter,
                                  .dens = dens,
                                  .log_scales = ls,
                                  .opacity = op,
                                  .means = means,
                                  .opts = &o,
                                  .center = t->sc->center};
      gs_densify_describe(&v, &plan, &t->lineage, t->prev_grow);
      rc = gs_lineage_apply(&t->lineage, &plan, iter, err);
      t->prev_grow = iter;
    }
  } else {
    plan.src = malloc(sizeof(uint32_t) * nn);
    plan.off = calloc(3 * nn, sizeof(float));
    if (!plan.src || !plan.off) rc = sw_err_set(err, SW_ENOMEM, "densify: out of memory");
    for (uint32_t i = 0; i < n && !rc; i++) plan.src[i] = i; /* GS_DENSIFY_KEEP */
    plan.count = plan.capacity = n;
  }
  uint32_t nn_new = plan.count ? plan.count : 1;
  int work_grew = 0;
  if (!rc) rc = reserve_set(t, t->alt_params, &t->alt_moments, &t->alt_cap, nn_new, err);
  if (!rc) rc = reserve_work(t, nn_new, &work_grew, err);
  if (!rc) rc = gs_vk_buf_ensure(t->vk, &t->plan_src, 4ull * nn_new, 0, "plan", err);
  if (!rc) rc = gs_vk_buf_ensure(t->vk, &t->plan_off, 12ull * nn_new, 0, "plan", err);
  if (!rc && plan.count) {
    struct gs_vk_copy x[2] = {{t->plan_src, 0, 4ull * plan.count, plan.src},
                              {t->plan_off, 0, 12ull * plan.count, plan.off}};
    rc = gs_vk_buf_copy(t->vk, 1, x, 2, NULL, err);
  }
  if (!rc) {
    struct gs_pc_densify pc = {.n_new = plan.count,
                               .reset = when->reset ? 1u : 0u,
                               .opacity_cap = gs_logit(0.01f),
                               .ln16 = logf(1.6f)};
    gs_tk_moment_offsets(t->cap, pc.old_off);
    gs_tk_moment_offsets(t->alt_cap, pc.new_off);
    VkCommandBuffer cmd;
    rc = gs_vk_cmd_begin(t->vk, &cmd, err);
    if (!rc) {
      gs_tk_record_densify(t->tk, cmd, &pc, t->params, t->alt_params, t->moments, t->alt_moments,
                           t->plan_src, t->plan_off);
      /* Statistics restart after each densification (a reset alone keeps them, as in 3DGS). */
      if (when->grow || work_grew) vkCmdFillBuffer(cmd, t->dens->buf, 0, VK_WHOLE_SIZE, 0);
      rc = gs_vk_cmd_submit_wait(t->vk, &cmd, err);
    }
  }
  if (!rc) {
    for (int g = 0; g < GS_P_COUNT; g++) {
      struct gs_vk_buf *x = t->params[g];
      t->params[g] = t->alt_params[g];
      t->alt_params[g] = x;
    }
    struct gs_vk_buf *x = t->moments;
    t->moments = t->alt_moments;
    t->alt_moments = x;
    uint32_t c = t->cap;
    t->cap = t->alt_cap;
    t->alt_cap = c;
    rc = gs_model_reserve(m, plan.count, err);
    if (!rc) m->count = plan.count;
  }
  gs_densify_plan_free(&plan);
  free(h);
  t->densify_ms += (double)(sw_clock_mono_ns() - t0) / 1e6;
  t->densify_calls++;
  return rc;
}

static void fill_kernels(struct trainer *t, struct gs_result *res, double *busy_ms) {
  const struct gs_vk_stage_stats *st;
  uint32_t n;
  gs_vk_timer_summary(t->timer, &st, &n, busy_ms);
  double total = t->densify_ms;
  for (uint32_t i = 0; i < n; i++) total += st[i].gpu_ms;
  res->n_kernels = 0;
  for (uint32_t i = 0; i < n && res->n_kernels < GS_RESULT_MAX_KERNELS; i++) {
    struct gs_result_kernel *k = &res->kernels[res->n_kernels++];
    snprintf(k->name, sizeof k->name, "%s", st[i].name);
    k->calls = st[i].calls;
    k->gpu_ms = st[i].gpu_ms;
    k->share = total > 0 ? st[i].gpu_ms / total : 0;
  }
  if (t->densify_calls && res->n_kernels < GS_RESULT_MAX_KERNELS) {
    struct gs_result_kernel *k = &res->kernels[res->n_kernels++];
    snprintf(k->name, sizeof k->name, "densify");
    k->calls = t->densify_calls;
    k->gpu_ms = t->densify_ms;
    k->share = total > 0 ? t->densify_ms / total : 0;
  }
}

/* The training loop's state that the host work after each iteration updates. */
struct loop {
  const struct gs_train_io *io;
  struct gs_result *res;
  struct gs_rng split_rng; /* densification's splits */
  double splat_sum, train_ns, loss;
  int64_t seg; /* start of the clock's current segment */
  int next_cp;
  uint32_t done; /* iterations completed */
};

static int is_checkpoint(const struct gs_config *cfg, uint32_t iter) {
  for (int k = 0; k < cfg->n_checkpoints; k++)
    if (cfg->checkpoints[k] == (int32_t)iter) return 1;
  return 0;
}

/* The arguments of iteration `iter` on training view `view`, for the model as it is now. */
static void build_args(struct trainer *t, uint32_t iter, uint32_t view, uint32_t deg,
                       struct iter_args *a) {
  const struct gs_config *cfg = t->cfg;
  const struct gs_camera *cam = &t->sc->train[view].cam;
  uint32_t n = t->model->count;
  memset(a, 0, sizeof *a);
  a->iter = iter;
  a->view = view;
  a->lambda = (float)cfg->lambda_dssim;
  gs_densify_schedule(cfg, iter, &a->when);
  a->sync = a->when.grow || a->when.reset || is_checkpoint(cfg, iter);
  a->in = (struct gs_fwd_input){.cam = *cam, .sh_degree = deg};
  a->in.model = (struct gs_fwd_model){t->params[0], t->params[1], t->params[2],
                                      t->params[3], t->params[4], n};
  memcpy(a->in.background, t->bg, sizeof t->bg);
  a->pb =
      (struct gs_pc_project_bwd){.fx = cam->fx,
                                 .fy = cam->fy,
                                 .cx = cam->cx,
                                 .cy = cam->cy,
                                 .n = n,
                                 .width = cam->width,
                                 .height = cam->height,
                                 .sh_degree = deg,
                                 .accumulate = a->when.accumulate,
                                 .count_radii = cfg->densify_visible == GS_DENSIFY_VISIBLE_RADII};
  memcpy(a->pb.viewmat, cam->viewmat, sizeof a->pb.viewmat);
  memcpy(a->pb.campos, cam->campos, sizeof a->pb.campos);
  float lr[6] = {(float)position_lr(cfg, iter, t->sc->extent),
                 (float)cfg->lr_scales,
                 (float)cfg->lr_quats,
                 (float)cfg->lr_opacity,
                 (float)cfg->lr_sh_dc,
                 (float)cfg->lr_sh_rest};
  gs_tk_adam_pc(&a->adam, n, t->cap, iter, lr, (float)cfg->adam_beta1, (float)cfg->adam_beta2,
                (float)cfg->adam_eps);
}

/* The host's work after an iteration completed, in iteration order: its loss, the checkpoint
 * evaluation, densification, the progress line. `behind` (NULL or not submitted: none) is the
 * iteration submitted after it; sync iterations (densification, checkpoints) have none. */
static int post_iteration(struct trainer *t, struct loop *L, struct slot *sl, struct slot *behind,
                          struct sw_err *err) {
  const struct gs_config *cfg = t->cfg;
  const struct iter_args *a = &sl->a;
  uint32_t iter = a->iter;
  double l1, ss;
  const float *part = (const float *)((const char *)sl->fl.rb->map + sl->loss_off);
  int rc = gs_tk_loss_value_of(t->tk, &t->im, a->lambda, part, &L->loss, &l1, &ss, err);
  if (rc) return rc;
  if (!isfinite(L->loss)) {
    char what[160] = "the loss is not finite";
    if (behind && behind->fl.submitted) {
      /* The buffers are looked at once nothing runs; the next iteration had begun. */
      (void)gs_fwd_flight_wait(&behind->fl, t->timer, NULL);
      behind->fl.submitted = 0;
      snprintf(what, sizeof what,
               "the loss is not finite (buffers as iteration %u, in flight behind it, left them; "
               "in_flight: 1 names the stage of iteration %u itself)",
               behind->a.iter, iter);
    }
    return diverged(t, iter, a->in.model.count, what, err);
  }
  L->splat_sum += a->in.model.count;
  L->done = iter;
  if (t->fault_nan_gt && t->fault_nan_gt == iter)
    for (uint32_t v = 0; v < t->sc->n_train && !rc; v++)
      rc = gs_vk_buf_fill(t->gt[v], 0x7fc00000u, err); /* a quiet NaN */
  if (rc) return rc;
  if (L->next_cp < cfg->n_checkpoints && cfg->checkpoints[L->next_cp] == (int32_t)iter) {
    /* Checkpoint evaluations are not training time: the clock stops around them. The model is
     * evaluated after `iter` steps, before this iteration's densification or reset. */
    L->train_ns += (double)(sw_clock_mono_ns() - L->seg);
    double p, s;
    rc = evaluate(t, a->in.sh_degree, &p, &s, err);
    if (!rc && cfg->checkpoint_ply && L->io && L->io->out_dir)
      rc = write_checkpoint(t, L->io, iter, err);
    if (rc) return rc;
    struct gs_result *res = L->res;
    if (res->n_checkpoints < GS_RESULT_MAX_CHECKPOINTS)
      res->checkpoints[res->n_checkpoints++] = (struct gs_result_checkpoint){
          .iter = iter, .train_s = L->train_ns / 1e9, .psnr_db = p, .splats = t->model->count};
    L->next_cp++;
    L->seg = sw_clock_mono_ns();
  }
  if (a->when.grow || a->when.reset) {
    rc = densify_step(t, iter, &a->when, &L->split_rng, err);
    if (rc) return rc;
  }
  const struct gs_train_io *io = L->io;
  if (io && io->progress &&
      (iter % (uint32_t)cfg->progress_every == 0 || iter == (uint32_t)cfg->iterations)) {
    double now = L->train_ns + (double)(sw_clock_mono_ns() - L->seg);
    fprintf(io->progress, "{\"iter\":%u,\"train_s\":%.3f,\"loss\":%.6g,\"splats\":%u}\n", iter,
            now / 1e9, L->loss, t->model->count);
    fflush(io->progress);
  }
  while (L->next_cp < cfg->n_checkpoints && cfg->checkpoints[L->next_cp] <= (int32_t)iter)
    L->next_cp++;
  return 0;
}

static int finish_iteration(struct trainer *t, struct loop *L, struct slot *sl, struct slot *behind,
                            struct sw_err *err) {
  int rc = complete_iteration(t, sl, behind, err);
  if (!rc) rc = post_iteration(t, L, sl, behind, err);
  sl->fl.submitted = 0;
  return rc;
}

/* The iterations go through the two slots in turn. With in_flight 2 the host records and submits
 * iteration i + 1 before it waits for iteration i, so the GPU does not idle while the host
 * records, submits, reads the loss back and wakes up; the host's work after each iteration still
 * runs in order, and before a sync iteration's work (densification, a checkpoint) nothing else
 * is submitted. */
static int train_loop(struct trainer *t, const struct gs_train_io *io, struct gs_result *res,
                      struct sw_err *err) {
  const struct gs_config *cfg = t->cfg;
  const struct gs_scene *sc = t->sc;
  /* Two streams: the camera order must not depend on how many splits earlier densifications
   * drew (one split more or less, from float rounding, would reorder every later view). */
  struct gs_rng rng;
  struct loop L = {.io = io, .res = res};
  gs_rng_seed(&rng, (uint64_t)cfg->seed ^ 0x5851f42d4c957f2dull);
  gs_rng_seed(&L.split_rng, (uint64_t)cfg->seed ^ 0x9e3779b97f4a7c15ull);
  uint32_t *order = malloc(sizeof(uint32_t) * sc->n_train);
  if (!order) return sw_err_set(err, SW_ENOMEM, "camera order: out of memory");
  uint32_t pos = sc->n_train;
  int rc = 0, stopped = 0;
  uint32_t iters = (uint32_t)cfg->iterations;
  uint32_t deg = 0;
  if (cfg->n_checkpoints && cfg->checkpoints[0] == 0) { /* the initial model */
    double p, s;
    rc = evaluate(t, 0, &p, &s, err);
    if (rc) {
      free(order);
      return rc;
    }
    res->checkpoints[res->n_checkpoints++] = (struct gs_result_checkpoint){
        .iter = 0, .train_s = 0, .psnr_db = p, .splats = t->model->count};
    L.next_cp = 1;
  }
  L.seg = sw_clock_mono_ns();
  struct slot *prev = NULL; /* submitted, not yet finished */
  for (uint32_t iter = 1; iter <= iters; iter++) {
    if (io && io->stop && *io->stop) {
      stopped = 1;
      break;
    }
    /* gsplat's schedule: degree (step / sh_every) with 0-based steps. */
    deg = (iter - 1) / (uint32_t)cfg->sh_every;
    if (deg > (uint32_t)cfg->sh_degree) deg = (uint32_t)cfg->sh_degree;
    if (pos >= sc->n_train) {
      shuffle(order, sc->n_train, &rng);
      pos = 0;
    }
    uint32_t view = order[pos++];
    const struct gs_camera *cam = &sc->train[view].cam;
    /* Host work after the previous iteration, or a view of another size (the buffers grow), come
     * before this iteration is even built. */
    if (prev && (prev->a.sync || prev->a.in.cam.width != cam->width ||
                 prev->a.in.cam.height != cam->height)) {
      rc = finish_iteration(t, &L, prev, NULL, err);
      prev = NULL;
      if (rc) break;
    }
    struct slot *sl = prev == &t->slots[0] ? &t->slots[1] : &t->slots[0];
    build_args(t, iter, view, deg, &sl->a);
    sl->fl.tries = 0;
    sl->fl.iter = iter;
    rc = submit_iteration(t, sl, err);
    if (rc) break;
    if (prev) {
      rc = finish_iteration(t, &L, prev, sl, err);
      prev = NULL;
      if (rc) break;
    }
    if (t->in_flight < 2 || sl->a.sync) {
      rc = finish_iteration(t, &L, sl, NULL, err);
      if (rc) break;
    } else {
      prev = sl;
    }
  }
  if (!rc && prev) rc = finish_iteration(t, &L, prev, NULL, err);
  /* After an error, nothing may still run when the buffers go. */
  for (int k = 0; k < GS_TRAIN_SLOTS; k++) (void)gs_vk_job_wait(t->slots[k].fl.job, NULL);
  if (!rc && stopped) rc = GS_TRAIN_STOPPED;
  L.train_ns += (double)(sw_clock_mono_ns() - L.seg);
  free(order);
  res->iterations = L.done;
  res->redone = t->redone;
  if (t->redone)
    sw_log_debug("%" PRIu64 " iterations recorded again after pair-arena overflows", t->redone);
  res->train_s = L.train_ns / 1e9;
  res->splats_mean = L.done ? L.splat_sum / L.done : t->model->count;
  if (rc) return rc;
  /* Final parameters, checked for NaN: a diverged model must not be reported as a result. */
  rc = download_params(t, err);
  if (rc) return rc;
  struct gs_model *m = t->model;
  static const char *gname[GS_P_COUNT] = {"means", "log-scales", "quaternions", "opacity logits",
                                          "SH coefficients"};
  for (int g = 0; g < GS_P_COUNT; g++) {
    const float *p = gs_pgroup_host(m, g);
    size_t cnt = (size_t)gs_pgroup_floats[g] * m->count;
    for (size_t k = 0; k < cnt; k++)
      if (!isfinite(p[k]))
        return sw_err_set(err, SW_EDIVERGED,
                          "diverged by iteration %u: non-finite %s (splat %zu) written by stage "
                          "adam",
                          L.done, gname[g], k / gs_pgroup_floats[g]);
  }
  res->splats_final = m->count;
  rc = evaluate(t, deg, &res->psnr_db, &res->ssim, err);
  return rc;
}

int gs_train_run(const struct gs_config *cfg, const char *scene_path, const struct gs_train_io *io,
                 struct gs_result *res, struct sw_err *err) {
  int64_t wall0 = sw_clock_mono_ns();
  struct trainer t = {.cfg = cfg};
  const char *cfg_json = res->config_json;
  memset(res, 0, sizeof *res);
  res->config_json = cfg_json;
  snprintf(res->status, sizeof res->status, "ok");
  snprintf(res->version, sizeof res->version, "%s", GS_TRAINER_VERSION);
  snprintf(res->shaders_sha256, sizeof res->shaders_sha256, "%s", gs_shaders_sha256());
  int rc = gs_result_self_sha256(res->binary_sha256, err);
  if (!rc) rc = setup(&t, scene_path, io, err);
  if (!rc) {
    const struct gs_scene *sc = t.sc;
    snprintf(res->scene_path, sizeof res->scene_path, "%s", sc->path);
    snprintf(res->scene_sha256, sizeof res->scene_sha256, "%s", sc->sha256);
    res->train_views = sc->n_train;
    res->test_views = sc->n_test;
    res->width = sc->width;
    res->height = sc->height;
    res->held_out_split = sc->held_out;
    const struct gs_vk_device_info *di = gs_vk_info(t.vk);
    snprintf(res->device_name, sizeof res->device_name, "%s", di->name);
    snprintf(res->device_driver, sizeof res->device_driver, "%s", di->driver);
    snprintf(res->device_api, sizeof res->device_api, "%s", di->api);
    snprintf(res->device_kind, sizeof res->device_kind, "%s", gs_vk_kind_name(di->kind));
    snprintf(res->raster_bwd, sizeof res->raster_bwd, "%s", t.splat_bwd ? "splat" : "pixel");
    rc = train_loop(&t, io, res, err);
  }
  if (t.timer) {
    double busy = 0;
    fill_kernels(&t, res, &busy);
    res->gpu_busy_frac = res->train_s > 0 ? busy / (res->train_s * 1000.0) : 0;
    if (res->gpu_busy_frac > 1) res->gpu_busy_frac = 1;
  }
  if (!rc && io && io->out_dir && cfg->save_ply) {
    char path[4096];
    snprintf(path, sizeof path, "%s/final.ply", io->out_dir);
    rc = gs_ply_write(path, t.model, err);
  }
  res->wall_s = (double)(sw_clock_mono_ns() - wall0) / 1e9;
  trainer_free(&t);
  return rc;
}
