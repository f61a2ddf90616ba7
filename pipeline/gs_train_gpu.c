/* gs_train_gpu.c: building the training kernels (embedded SPIR-V of gs_train_shaders with their
 * specialization constants) and recording their dispatches (see gs_train_gpu.h). */
#include "gs_train_gpu.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gs_train_shaders.h"
#include "gs_types.h"

_Static_assert(sizeof(struct gs_pc_loss) == 32, "gs_pc_loss layout");
_Static_assert(sizeof(struct gs_pc_adam) == 72, "gs_pc_adam layout");
_Static_assert(sizeof(struct gs_pc_project_bwd) == 112, "gs_pc_project_bwd layout");
_Static_assert(sizeof(struct gs_pc_raster_splat) == 48, "gs_pc_raster_splat layout");
_Static_assert(sizeof(struct gs_pc_densify) == 56, "gs_pc_densify layout");
_Static_assert(sizeof(struct gs_pc_resolve) == 16, "gs_pc_resolve layout");

const uint32_t gs_pgroup_floats[GS_P_COUNT] = {3, 3, 4, 1, 48};

float *gs_pgroup_host(struct gs_model *m, int g) {
  switch (g) {
  case GS_P_MEANS: return m->means;
  case GS_P_SCALES: return m->log_scales;
  case GS_P_QUATS: return m->quats;
  case GS_P_OPACITY: return m->opacity;
  default: return m->sh;
  }
}

const struct gs_tk_runs *gs_tk_runs_of(const struct gs_fwd_bufs *fb, struct gs_tk_runs *r) {
  if (!fb->bucket) return NULL;
  *r = (struct gs_tk_runs){.rgb = fb->rgb,
                           .groups = fb->groups,
                           .state = fb->state,
                           .tile_maxlast = fb->tile_maxlast,
                           .meta = fb->bucket_meta,
                           .max_groups = fb->max_groups};
  return r;
}

uint32_t gs_tk_splat_bucket(const gs_vk_t *vk, struct sw_err *err) {
  const struct gs_vk_device_info *d = gs_vk_info(vk);
  uint32_t b = d->subgroup_size;
  /* Its module declares indexed shuffles too (bwd_state: global), so a device must offer them
   * whichever state it runs with. */
  if (!d->subgroup_shuffle_up || !d->subgroup_shuffle || !d->subgroup_ballot) {
    sw_err_set(err, SW_EDEVICE,
               "rasterize_bwd: splat needs relative and indexed subgroup shuffles, ballots and "
               "subgroup arithmetic in compute shaders, which %s lacks (rasterize_bwd: pixel "
               "does not)",
               d->name);
    return 0;
  }
  if (b == 0 || b > GS_BUCKET_MAX || (b & (b - 1)) != 0 || d->min_subgroup_size != b) {
    sw_err_set(err, SW_EDEVICE,
               "rasterize_bwd: splat needs a fixed subgroup size, a power of two up to %u; %s "
               "has %u (min %u) (rasterize_bwd: pixel does not)",
               GS_BUCKET_MAX, d->name, b, d->min_subgroup_size);
    return 0;
  }
  return b;
}

uint32_t gs_tk_auto_bucket(const gs_vk_t *vk, FILE *note) {
  /* The per-splat backward keeps 4 KiB of state per run of a tile's splats in one buffer: auto
   * takes it only where that buffer can hold the runs of ~8 million pairs. */
  struct sw_err why = {0};
  uint32_t bucket = 0;
  uint64_t range = gs_vk_info(vk)->max_storage_buffer_range;
  if (range < GS_AUTO_SPLAT_MIN_RANGE)
    sw_err_set(&why, SW_EDEVICE,
               "its largest storage buffer (%.2f GiB) is under the %.0f GiB the per-splat "
               "backward's state takes at ~8 million pairs",
               (double)range / (1 << 30), (double)GS_AUTO_SPLAT_MIN_RANGE / (1 << 30));
  else
    bucket = gs_tk_splat_bucket(vk, &why);
  if (!bucket && note)
    fprintf(note, "note: rasterize_bwd auto takes pixel on %s: %s\n", gs_vk_info(vk)->name,
            why.msg);
  return bucket;
}

int gs_tk_new(gs_vk_t *vk, const struct gs_tk_opts *opts, struct gs_tk **out, struct sw_err *err) {
  *out = NULL;
  struct gs_tk *tk = calloc(1, sizeof *tk);
  if (!tk) return sw_err_set(err, SW_ENOMEM, "training kernels: out of memory");
  tk->vk = vk;
  if (opts) tk->opts = *opts;
  tk->cas = tk->opts.force_cas || !gs_vk_info(vk)->float_atomic_add;
  float alpha_max = gs_alpha_max_resolve(tk->opts.alpha_max);
  if (alpha_max == 0.0f) {
    int rc =
        sw_err_set(err, SW_EINVAL, "training kernels: alpha_max %g outside [%g, %g]",
                   (double)tk->opts.alpha_max, (double)GS_ALPHA_MAX_LO, (double)GS_ALPHA_MAX_HI);
    free(tk);
    return rc;
  }
  tk->opts.alpha_max = alpha_max;
  if (!tk->opts.chain) tk->opts.chain = 1;
  if (tk->opts.chain != 1 && tk->opts.chain != 2 && tk->opts.chain != 4) {
    int rc = sw_err_set(err, SW_EINVAL, "training kernels: bwd_chain %d is not 1, 2 or 4",
                        tk->opts.chain);
    free(tk);
    return rc;
  }
  if (tk->opts.splat_bwd && tk->opts.chain > 1 && !tk->opts.step) {
    int rc = sw_err_set(err, SW_EINVAL,
                        "training kernels: bwd_chain %d needs bwd_step select, lean or dot",
                        tk->opts.chain);
    free(tk);
    return rc;
  }
  if (tk->opts.ssim_padding != GS_SSIM_SAME && tk->opts.ssim_padding != GS_SSIM_VALID) {
    int rc = sw_err_set(err, SW_EINVAL, "training kernels: unknown ssim_padding %d",
                        tk->opts.ssim_padding);
    free(tk);
    return rc;
  }
  if (tk->opts.splat_bwd) {
    tk->bucket = gs_tk_splat_bucket(vk, err);
    if (!tk->bucket) {
      free(tk);
      return err ? err->code : SW_EDEVICE;
    }
  }
  /* The SSIM kernels' constants, by id: walk, padding valid (loss_ssim's), planar maps. */
  uint32_t lss[3] = {(uint32_t)tk->opts.ssim_walk, tk->opts.ssim_padding == GS_SSIM_VALID ? 1u : 0u,
                     tk->opts.ssim_planar ? 1u : 0u};
  uint32_t rb[5] = {tk->opts.sigma_skip ? 1u : 0u, tk->opts.warp_skip ? 1u : 0u,
                    tk->opts.atomic_spread ? 1u : 0u, tk->opts.direct_atomics ? 0u : 1u, 0u};
  memcpy(&rb[GS_SPEC_BWD_ALPHA_MAX], &alpha_max, sizeof alpha_max); /* a float by its bits */
  uint32_t av = tk->opts.adam_visible ? 1u : 0u;
  uint32_t ls = sizeof(struct gs_pc_loss);
  int rc = gs_vk_kernel_embedded(vk, gs_train_shaders_spirv, "loss_l1", "loss_l1", 4, ls, NULL, 0,
                                 &tk->loss_l1, err);
  if (!rc)
    rc = gs_vk_kernel_embedded(vk, gs_train_shaders_spirv, "ssim_h", "ssim_h", 3, ls, lss, 3,
                               &tk->ssim_h, err);
  if (!rc)
    rc = gs_vk_kernel_embedded(vk, gs_train_shaders_spirv, "loss_ssim", "loss_ssim", 5, ls, lss, 3,
                               &tk->loss_ssim, err);
  if (!rc)
    rc = gs_vk_kernel_embedded(vk, gs_train_shaders_spirv, "ssim_bwd_h", "ssim_bwd_h", 2, ls, lss,
                               3, &tk->ssim_bwd_h, err);
  if (!rc)
    rc = gs_vk_kernel_embedded(vk, gs_train_shaders_spirv, "ssim_bwd_v", "ssim_bwd_v", 4, ls, lss,
                               3, &tk->ssim_bwd_v, err);
  const char *rb_stem = tk->opts.deterministic ? "rasterize_bwd_det"
                        : tk->cas              ? "rasterize_bwd_cas"
                                               : "rasterize_bwd";
  const char *rs_stem = tk->opts.deterministic ? "rasterize_bwd_splat_det"
                        : tk->cas              ? "rasterize_bwd_splat_cas"
                                               : "rasterize_bwd_splat";
  /* The per-splat build's constants: sigma skip and alpha clamp at the same ids, then the run
   * length, the workgroup size (GS_BUCKET_GROUP runs, chain to a subgroup), the walk's pixels,
   * its step, its end, where lane 0 takes the runs' states from and the chain. */
  uint32_t rs[12] = {rb[0],
                     0u,
                     0u,
                     0u,
                     rb[GS_SPEC_BWD_ALPHA_MAX],
                     tk->bucket,
                     tk->bucket * GS_BUCKET_GROUP / (uint32_t)tk->opts.chain,
                     (uint32_t)tk->opts.run_pixels,
                     (uint32_t)tk->opts.step,
                     (uint32_t)tk->opts.drain,
                     (uint32_t)tk->opts.state,
                     (uint32_t)tk->opts.chain};
  if (!rc && !tk->opts.splat_bwd)
    rc = gs_vk_kernel_embedded(vk, gs_train_shaders_spirv, rb_stem, "rasterize_bwd", 7,
                               sizeof(struct gs_pc_raster), rb, 5, &tk->raster_bwd, err);
  if (!rc && tk->opts.splat_bwd)
    rc = gs_vk_kernel_embedded(vk, gs_train_shaders_spirv, rs_stem, "rasterize_bwd", 11,
                               sizeof(struct gs_pc_raster_splat), rs, 12, &tk->raster_bwd, err);
  if (!rc && tk->opts.deterministic)
    rc = gs_vk_kernel_embedded(vk, gs_train_shaders_spirv, "grad2d_resolve", "grad2d_resolve", 3,
                               sizeof(struct gs_pc_resolve), NULL, 0, &tk->resolve, err);
  if (!rc)
    rc = gs_vk_kernel_embedded(vk, gs_train_shaders_spirv, "project_bwd", "project_bwd", 13,
                               sizeof(struct gs_pc_project_bwd), NULL, 0, &tk->project_bwd, err);
  if (!rc)
    rc = gs_vk_kernel_embedded(vk, gs_train_shaders_spirv, "adam", "adam", 13,
                               sizeof(struct gs_pc_adam), &av, 1, &tk->adam, err);
  if (!rc && tk->opts.fuse_adam) {
    const struct gs_vk_device_info *di = gs_vk_info(vk);
    if (di->max_shared_memory < GS_PROJECT_ADAM_SHARED)
      rc = sw_err_set(err, SW_EDEVICE,
                      "project_adam fused needs %u bytes of shared memory per workgroup; %s has "
                      "%u (use project_adam: separate)",
                      GS_PROJECT_ADAM_SHARED, di->name, di->max_shared_memory);
    if (!rc)
      rc = gs_vk_kernel_embedded(vk, gs_train_shaders_spirv, "project_bwd_adam", "project_adam", 12,
                                 sizeof(struct gs_pc_project_bwd), &av, 1, &tk->project_adam, err);
    if (!rc)
      rc = gs_vk_buf_ensure(vk, &tk->adam_consts, sizeof(struct gs_pc_adam), 0, "adam constants",
                            err);
  }
  if (!rc)
    rc = gs_vk_kernel_embedded(vk, gs_train_shaders_spirv, "densify_gather", "densify", 14,
                               sizeof(struct gs_pc_densify), NULL, 0, &tk->densify, err);
  if (rc) {
    gs_tk_destroy(&tk);
    return rc;
  }
  *out = tk;
  return 0;
}

void gs_tk_destroy(struct gs_tk **tkp) {
  if (!tkp || !*tkp) return;
  struct gs_tk *tk = *tkp;
  gs_vk_kernel_destroy(&tk->loss_l1);
  gs_vk_kernel_destroy(&tk->ssim_h);
  gs_vk_kernel_destroy(&tk->loss_ssim);
  gs_vk_kernel_destroy(&tk->ssim_bwd_h);
  gs_vk_kernel_destroy(&tk->ssim_bwd_v);
  gs_vk_kernel_destroy(&tk->raster_bwd);
  gs_vk_kernel_destroy(&tk->project_bwd);
  gs_vk_kernel_destroy(&tk->adam);
  gs_vk_kernel_destroy(&tk->project_adam);
  gs_vk_buf_destroy(&tk->adam_consts);
  gs_vk_kernel_destroy(&tk->densify);
  gs_vk_kernel_destroy(&tk->resolve);
  gs_vk_buf_destroy(&tk->grad2d_fx);
  free(tk);
  *tkp = NULL;
}

int gs_tk_reserve(struct gs_tk *tk, uint32_t n, struct sw_err *err) {
  if (!tk->opts.deterministic) return 0;
  VkDeviceSize bytes = 8ull * GS_G2D * (n ? n : 1);
  return gs_vk_buf_ensure(tk->vk, &tk->grad2d_fx, bytes, 0, "grad2d_fx", err);
}

int gs_tk_img_reserve(gs_vk_t *vk, struct gs_tk_img *im, uint32_t w, uint32_t h,
                      struct sw_err *err) {
  VkDeviceSize px = (VkDeviceSize)w * h;
  im->w = w;
  im->h = h;
  im->groups_x = gs_vk_div_up(w, GS_IMG_WG);
  im->groups_y = gs_vk_div_up(h, GS_IMG_WG);
  VkDeviceSize groups = (VkDeviceSize)im->groups_x * im->groups_y;
  int rc = gs_vk_buf_ensure(vk, &im->dl, 12 * px, 0, "dl_drgb", err);
  if (!rc) rc = gs_vk_buf_ensure(vk, &im->ssim_h, 60 * px, 0, "ssim_h", err);
  if (!rc) rc = gs_vk_buf_ensure(vk, &im->ssim_p, 36 * px, 0, "ssim_p", err);
  if (!rc) rc = gs_vk_buf_ensure(vk, &im->ssim_q, 36 * px, 0, "ssim_q", err);
  if (!rc) rc = gs_vk_buf_ensure(vk, &im->loss_part, 8 * groups, GS_VK_BUF_HOST, "loss_part", err);
  return rc;
}

void gs_tk_img_free(struct gs_tk_img *im) {
  gs_vk_buf_destroy(&im->dl);
  gs_vk_buf_destroy(&im->ssim_h);
  gs_vk_buf_destroy(&im->ssim_p);
  gs_vk_buf_destroy(&im->ssim_q);
  gs_vk_buf_destroy(&im->loss_part);
  memset(im, 0, sizeof *im);
}

uint64_t gs_tk_ssim_pixels(const struct gs_tk *tk, uint32_t w, uint32_t h) {
  if (tk->opts.ssim_padding != GS_SSIM_VALID) return (uint64_t)w * h;
  if (w <= 2 * GS_SSIM_HALF || h <= 2 * GS_SSIM_HALF) return 0;
  return (uint64_t)(w - 2 * GS_SSIM_HALF) * (h - 2 * GS_SSIM_HALF);
}

static struct gs_pc_loss loss_pc(const struct gs_tk *tk, const struct gs_tk_img *im, float lambda) {
  /* The same-padding divisor is computed exactly as the L1 one, so that mode's bits do not
   * change; a map too small to exist (valid, under 11x11) gets 0: no SSIM gradient, and the
   * trainer refuses such scenes before it gets here. */
  uint64_t map = gs_tk_ssim_pixels(tk, im->w, im->h);
  float inv = 1.0f / (3.0f * (float)im->w * (float)im->h);
  float inv_map = tk->opts.ssim_padding != GS_SSIM_VALID ? inv
                  : map                                  ? 1.0f / (3.0f * (float)map)
                                                         : 0.0f;
  struct gs_pc_loss pc = {.width = im->w,
                          .height = im->h,
                          .lambda = lambda,
                          .inv_count = inv,
                          .ssim_inv_count = inv_map};
  return pc;
}

void gs_tk_record_loss(struct gs_tk *tk, VkCommandBuffer cmd, struct gs_tk_img *im,
                       struct gs_vk_buf *img, struct gs_vk_buf *gt, float lambda) {
  struct gs_pc_loss pc = loss_pc(tk, im, lambda);
  if (lambda == 0.0f) {
    struct gs_vk_buf *b[4] = {img, gt, im->dl, im->loss_part};
    gs_vk_dispatch(cmd, tk->loss_l1, b, &pc, im->groups_x, im->groups_y, 1);
    return;
  }
  struct gs_vk_buf *b1[3] = {img, gt, im->ssim_h};
  gs_vk_dispatch(cmd, tk->ssim_h, b1, &pc, im->groups_x, im->groups_y, 1);
  gs_vk_barrier(cmd);
  struct gs_vk_buf *b2[5] = {img, gt, im->ssim_h, im->ssim_p, im->loss_part};
  gs_vk_dispatch(cmd, tk->loss_ssim, b2, &pc, im->groups_x, im->groups_y, 1);
}

void gs_tk_record_ssim_bwd(struct gs_tk *tk, VkCommandBuffer cmd, struct gs_tk_img *im,
                           struct gs_vk_buf *img, struct gs_vk_buf *gt, float lambda) {
  if (lambda == 0.0f) return;
  struct gs_pc_loss pc = loss_pc(tk, im, lambda);
  struct gs_vk_buf *b1[2] = {im->ssim_p, im->ssim_q};
  gs_vk_dispatch(cmd, tk->ssim_bwd_h, b1, &pc, im->groups_x, im->groups_y, 1);
  gs_vk_barrier(cmd);
  struct gs_vk_buf *b2[4] = {img, gt, im->ssim_q, im->dl};
  gs_vk_dispatch(cmd, tk->ssim_bwd_v, b2, &pc, im->groups_x, im->groups_y, 1);
}

VkDeviceSize gs_tk_loss_part_size(const struct gs_tk_img *im) {
  return 8 * (VkDeviceSize)im->groups_x * im->groups_y;
}

void gs_tk_record_loss_readback(VkCommandBuffer cmd, const struct gs_tk_img *im,
                                struct gs_vk_buf *dst, VkDeviceSize offset) {
  VkBufferCopy c = {.srcOffset = 0, .dstOffset = offset, .size = gs_tk_loss_part_size(im)};
  vkCmdCopyBuffer(cmd, im->loss_part->buf, dst->buf, 1, &c);
}

int gs_tk_loss_value(const struct gs_tk *tk, struct gs_tk_img *im, float lambda, double *loss,
                     double *l1, double *ssim, struct sw_err *err) {
  /* loss_part is GS_VK_BUF_HOST: always mapped (gs_vk_buf_ensure fails otherwise). */
  if (!im->loss_part || !im->loss_part->map)
    return sw_err_set(err, SW_ESTATE, "loss value: no loss pass was recorded for this image");
  return gs_tk_loss_value_of(tk, im, lambda, im->loss_part->map, loss, l1, ssim, err);
}

int gs_tk_loss_value_of(const struct gs_tk *tk, const struct gs_tk_img *im, float lambda,
                        const float *part, double *loss, double *l1, double *ssim,
                        struct sw_err *err) {
  uint32_t groups = im->groups_x * im->groups_y;
  uint64_t map = gs_tk_ssim_pixels(tk, im->w, im->h);
  if (lambda != 0.0f && !map)
    return sw_err_set(err, SW_EINVAL,
                      "loss value: a %ux%u image has no valid SSIM window "
                      "(ssim_padding valid needs 11x11)",
                      im->w, im->h);
  double sl1 = 0.0, sss = 0.0;
  for (uint32_t g = 0; g < groups; g++) {
    sl1 += part[2 * g];
    sss += part[2 * g + 1];
  }
  double n = 3.0 * (double)im->w * (double)im->h;
  double ml1 = sl1 / n, mss = map ? sss / (3.0 * (double)map) : 0.0;
  if (l1) *l1 = ml1;
  if (ssim) *ssim = mss;
  if (loss) *loss = lambda == 0.0f ? ml1 : (1.0 - lambda) * ml1 + lambda * (1.0 - mss);
  return 0;
}

void gs_tk_record_raster_bwd(struct gs_tk *tk, VkCommandBuffer cmd, const struct gs_pc_raster *pc,
                             struct gs_vk_buf *ranges, struct gs_vk_buf *values,
                             struct gs_vk_buf *splats, struct gs_vk_buf *final_t,
                             struct gs_vk_buf *last, struct gs_vk_buf *dl, struct gs_vk_buf *grad2d,
                             uint32_t n, const struct gs_tk_runs *runs) {
  VkDeviceSize bytes = (VkDeviceSize)GS_G2D * 4 * (n ? n : 1);
  int det = tk->opts.deterministic;
  struct gs_pc_raster p = *pc;
  struct gs_vk_buf *sums = grad2d;
  if (det) {
    /* Fixed point: 2^32 units per loss unit 1 / (3 w h) (rasterize_bwd.glsl). */
    assert(tk->grad2d_fx && tk->grad2d_fx->size >= 2 * bytes && "gs_tk_reserve first");
    p.fx_scale = ldexpf(3.0f * (float)pc->width * (float)pc->height, 32);
    sums = tk->grad2d_fx;
  }
  vkCmdFillBuffer(cmd, sums->buf, 0, det ? 2 * bytes : bytes, 0);
  gs_vk_barrier(cmd);
  if (tk->opts.splat_bwd) {
    assert(runs && "the per-splat backward reads the forward's runs");
    struct gs_pc_raster_splat ps = {.width = p.width,
                                    .height = p.height,
                                    .tiles_x = p.tiles_x,
                                    .tiles_y = p.tiles_y,
                                    .fx_scale = p.fx_scale,
                                    .max_groups = runs->max_groups};
    memcpy(ps.background, p.background, sizeof ps.background);
    struct gs_vk_buf *b[11] = {ranges, values,       splats,      runs->rgb,          last,      dl,
                               sums,   runs->groups, runs->state, runs->tile_maxlast, runs->meta};
    gs_vk_dispatch_indirect(cmd, tk->raster_bwd, b, &ps, runs->meta, 4 * GS_BMETA_ARGS);
  } else {
    struct gs_vk_buf *b[7] = {ranges, values, splats, final_t, last, dl, sums};
    gs_vk_dispatch(cmd, tk->raster_bwd, b, &p, pc->tiles_x, pc->tiles_y, 1);
  }
  if (!det) return;
  gs_vk_barrier(cmd);
  struct gs_pc_resolve rp = {.n = n, .fx_scale = p.fx_scale};
  struct gs_vk_buf *r[3] = {tk->grad2d_fx, splats, grad2d};
  uint32_t gx, gy;
  gs_vk_grid(gs_vk_div_up((uint64_t)GS_G2D * n, GS_WG), &gx, &gy);
  if (gx) gs_vk_dispatch(cmd, tk->resolve, r, &rp, gx, gy, 1);
}

void gs_tk_record_project_bwd(struct gs_tk *tk, VkCommandBuffer cmd,
                              const struct gs_pc_project_bwd *pc,
                              struct gs_vk_buf *const params[GS_P_COUNT], struct gs_vk_buf *splats,
                              struct gs_vk_buf *grad2d, struct gs_vk_buf *const grads[GS_P_COUNT],
                              struct gs_vk_buf *dens, struct gs_vk_buf *counters) {
  struct gs_vk_buf *b[13] = {params[GS_P_MEANS],
                             params[GS_P_SCALES],
                             params[GS_P_QUATS],
                             params[GS_P_SH],
                             splats,
                             grad2d,
                             grads[GS_P_MEANS],
                             grads[GS_P_SCALES],
                             grads[GS_P_QUATS],
                             grads[GS_P_OPACITY],
                             grads[GS_P_SH],
                             dens,
                             counters};
  uint32_t gx, gy;
  gs_vk_grid(gs_vk_div_up(pc->n, GS_PB_WG), &gx, &gy);
  if (gx) gs_vk_dispatch(cmd, tk->project_bwd, b, pc, gx, gy, 1);
}

void gs_tk_record_adam(struct gs_tk *tk, VkCommandBuffer cmd, const struct gs_pc_adam *pc,
                       struct gs_vk_buf *const params[GS_P_COUNT],
                       struct gs_vk_buf *const grads[GS_P_COUNT], struct gs_vk_buf *moments,
                       struct gs_vk_buf *tiles_touched, struct gs_vk_buf *counters) {
  struct gs_vk_buf *b[13];
  for (int g = 0; g < GS_P_COUNT; g++) {
    b[g] = params[g];
    b[5 + g] = grads[g];
  }
  b[10] = moments;
  b[11] = tiles_touched;
  b[12] = counters;
  uint32_t gx, gy;
  gs_vk_grid(gs_vk_div_up(59ull * pc->n, GS_WG), &gx, &gy); /* one thread per float */
  if (gx) gs_vk_dispatch(cmd, tk->adam, b, pc, gx, gy, 1);
}

void gs_tk_record_project_adam(struct gs_tk *tk, VkCommandBuffer cmd,
                               const struct gs_pc_project_bwd *pc, const struct gs_pc_adam *pa,
                               struct gs_vk_buf *const params[GS_P_COUNT], struct gs_vk_buf *splats,
                               struct gs_vk_buf *grad2d, struct gs_vk_buf *moments,
                               struct gs_vk_buf *tiles_touched, struct gs_vk_buf *dens,
                               struct gs_vk_buf *counters) {
  /* The constants go in through the command buffer: the iteration in flight ahead of this one
   * has read its own before the barrier that starts this one's commands. */
  vkCmdUpdateBuffer(cmd, tk->adam_consts->buf, 0, sizeof *pa, pa);
  gs_vk_barrier(cmd);
  struct gs_vk_buf *b[12] = {params[GS_P_MEANS],
                             params[GS_P_SCALES],
                             params[GS_P_QUATS],
                             params[GS_P_SH],
                             splats,
                             grad2d,
                             params[GS_P_OPACITY],
                             moments,
                             tiles_touched,
                             tk->adam_consts,
                             dens,
                             counters};
  uint32_t gx, gy;
  gs_vk_grid(gs_vk_div_up(pc->n, GS_PB_WG), &gx, &gy);
  if (gx) gs_vk_dispatch(cmd, tk->project_adam, b, pc, gx, gy, 1);
}

void gs_tk_record_densify(struct gs_tk *tk, VkCommandBuffer cmd, const struct gs_pc_densify *pc,
                          struct gs_vk_buf *const old_params[GS_P_COUNT],
                          struct gs_vk_buf *const new_params[GS_P_COUNT],
                          struct gs_vk_buf *old_moments, struct gs_vk_buf *new_moments,
                          struct gs_vk_buf *src, struct gs_vk_buf *off) {
  struct gs_vk_buf *b[14];
  for (int g = 0; g < GS_P_COUNT; g++) {
    b[g] = old_params[g];
    b[5 + g] = new_params[g];
  }
  b[10] = old_moments;
  b[11] = new_moments;
  b[12] = src;
  b[13] = off;
  uint32_t gx, gy;
  gs_vk_grid(gs_vk_div_up(pc->n_new, GS_WG), &gx, &gy);
  if (gx) gs_vk_dispatch(cmd, tk->densify, b, pc, gx, gy, 1);
}

uint64_t gs_tk_moment_offsets(uint32_t capacity, uint32_t off[GS_P_COUNT]) {
  uint64_t o = 0;
  for (int g = 0; g < GS_P_COUNT; g++) {
    off[g] = (uint32_t)o;
    o += 2ull * gs_pgroup_floats[g] * capacity;
  }
  return o;
}

void gs_tk_adam_pc(struct gs_pc_adam *pc, uint32_t n, uint32_t capacity, uint32_t step,
                   const float lr[6], float beta1, float beta2, float eps) {
  memset(pc, 0, sizeof *pc);
  pc->n = n;
  gs_tk_moment_offsets(capacity, pc->mom_off);
  float bias1 = 1.0f - powf(beta1, (float)step);
  float bias2 = 1.0f - powf(beta2, (float)step);
  for (int g = 0; g < 6; g++) pc->step_size[g] = lr[g] / bias1;
  pc->beta1 = beta1;
  pc->beta2 = beta2;
  pc->eps = eps;
  pc->sqrt_bc2 = sqrtf(bias2);
}
