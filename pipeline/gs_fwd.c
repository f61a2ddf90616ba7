/* gs_fwd.c: host side of the GPU forward pass (see gs_fwd.h): buffer sizing with the grow-only
 * pair arena, recording of the seven stages, overflow detection and the convenience runner. */
#include "gs_fwd.h"

#include <stdlib.h>
#include <string.h>

#include "gs_shaders.h"
#include "gs_shared.h"

struct gs_fwd {
  gs_vk_t *vk;
  struct gs_fwd_opts opts;
  gs_vk_kernel_t *project, *tile_count, *emit, *ranges, *raster;
  gs_vk_kernel_t *bucket_alloc, *bucket_args; /* opts.bucket only */
  gs_vk_kernel_t *depth_gather;               /* opts.depth_first only */
  gs_vk_kernel_t *tile_order;                 /* opts.dense_first only */
  struct gs_vk_buf *depth_keys, *depth_vals;  /* opts.depth_first: the splats' depth sort */
  struct gs_vk_buf *order; /* where that sort left the splat indices front to back */
  gs_scan_t *scan;
  gs_sort_t *sort;
  struct gs_fwd_bufs b;
  struct gs_vk_buf *keys, *values; /* the arena's own pair buffers (b.keys may be sort scratch) */
  uint32_t reserved_count;
  int prepared; /* the last prepare succeeded: every buffer exists (a failed grow leaves holes) */
  uint32_t pending_growth; /* capacity wanted at the next prepare (transient regime) */
};

static const char *const stage_names[GS_FWD_STAGES] = {"project_fwd",  "tile_count", "scan",
                                                       "emit_pairs",   "radix_sort", "tile_ranges",
                                                       "rasterize_fwd"};

const char *gs_fwd_stage_name(enum gs_fwd_stage s) {
  return (unsigned)s < GS_FWD_STAGES ? stage_names[s] : "unknown";
}

int gs_fwd_new(gs_vk_t *vk, const struct gs_fwd_opts *opts, gs_fwd_t **out, struct sw_err *err) {
  *out = NULL;
  gs_fwd_t *f = calloc(1, sizeof *f);
  if (!f) return sw_err_set(err, SW_ENOMEM, "out of memory");
  f->vk = vk;
  if (opts) f->opts = *opts;
  if (!f->opts.initial_pairs_per_splat) f->opts.initial_pairs_per_splat = 8;
  float alpha_max = gs_alpha_max_resolve(f->opts.alpha_max);
  if (alpha_max == 0.0f) {
    int rc =
        sw_err_set(err, SW_EINVAL, "forward pass: alpha_max %g outside [%g, %g]",
                   (double)f->opts.alpha_max, (double)GS_ALPHA_MAX_LO, (double)GS_ALPHA_MAX_HI);
    free(f);
    return rc;
  }
  f->opts.alpha_max = alpha_max;
  if (f->opts.step > 3) {
    int rc = sw_err_set(err, SW_EINVAL,
                        "forward pass: fwd_step %u (0 branch, 1 select, 2 group, 3 group8)",
                        f->opts.step);
    free(f);
    return rc;
  }
  uint32_t bucket = f->opts.bucket;
  if (bucket > GS_BUCKET_MAX || (bucket & (bucket - 1)) != 0) {
    int rc = sw_err_set(err, SW_EINVAL,
                        "forward pass: runs of %u splats (the per-splat backward takes a power of "
                        "two up to %u: the device's subgroup size)",
                        bucket, GS_BUCKET_MAX);
    free(f);
    return rc;
  }
  f->b.bucket = bucket;
  /* Specialization data are raw 32-bit words, by id: SIGMA_SKIP, ACCUM_F16, ALPHA_MAX (the float
   * clamp goes in by its bits), BUCKET, FWD_STEP, FWD_CULL, FWD_PREFETCH, FWD_ORDER (gs_shared.h);
   * the plain forward has no BUCKET, and an id a shader lacks is ignored. */
  uint32_t raster_spec[8] = {f->opts.sigma_skip ? 1u : 0u,
                             f->opts.accum_f16 ? 1u : 0u,
                             0u,
                             bucket,
                             f->opts.step,
                             f->opts.cull_rows ? 1u : 0u,
                             f->opts.prefetch ? 1u : 0u,
                             f->opts.dense_first ? 1u : 0u};
  memcpy(&raster_spec[GS_SPEC_ALPHA_MAX], &alpha_max, sizeof alpha_max);
  uint32_t depth_first = f->opts.depth_first ? 1u : 0u;
  /* GS_SPEC_TILE_CULL, GS_SPEC_DEPTH_FIRST */
  uint32_t bin_spec[2] = {f->opts.tile_cull ? 1u : 0u, depth_first};
  uint32_t sh_vec4 = f->opts.sh_vec4 ? 1u : 0u; /* GS_SPEC_SH_VEC4 */
  int rc = gs_vk_kernel_embedded(vk, gs_shaders_spirv, "project_fwd", NULL, 6,
                                 sizeof(struct gs_pc_project), &sh_vec4, 1, &f->project, err);
  if (!rc)
    rc = gs_vk_kernel_embedded(vk, gs_shaders_spirv, "tile_count", NULL, 5,
                               sizeof(struct gs_pc_bin), bin_spec, 2, &f->tile_count, err);
  if (!rc)
    rc = gs_vk_kernel_embedded(vk, gs_shaders_spirv, "emit_pairs", NULL, 6,
                               sizeof(struct gs_pc_bin), bin_spec, 2, &f->emit, err);
  if (!rc)
    rc = gs_vk_kernel_embedded(vk, gs_shaders_spirv, "tile_ranges", NULL, 3,
                               sizeof(struct gs_pc_ranges), &depth_first, 1, &f->ranges, err);
  if (!rc && depth_first)
    rc = gs_vk_kernel_embedded(vk, gs_shaders_spirv, "depth_gather", NULL, 3,
                               sizeof(struct gs_pc_bin), NULL, 0, &f->depth_gather, err);
  if (!rc && !bucket)
    rc = gs_vk_kernel_embedded(vk, gs_shaders_spirv, "rasterize_fwd", NULL, 7,
                               sizeof(struct gs_pc_raster), raster_spec, 8, &f->raster, err);
  if (!rc && bucket)
    rc = gs_vk_kernel_embedded(vk, gs_shaders_spirv, "rasterize_fwd_bucket", NULL, 10,
                               sizeof(struct gs_pc_raster), raster_spec, 8, &f->raster, err);
  if (!rc && f->opts.dense_first)
    rc = gs_vk_kernel_embedded(vk, gs_shaders_spirv, "tile_order", NULL, 2,
                               sizeof(struct gs_pc_ranges), NULL, 0, &f->tile_order, err);
  if (!rc && bucket)
    rc = gs_vk_kernel_embedded(vk, gs_shaders_spirv, "bucket_alloc", NULL, 4,
                               sizeof(struct gs_pc_bucket), &raster_spec[3], 1, &f->bucket_alloc,
                               err);
  if (!rc && bucket)
    rc = gs_vk_kernel_embedded(vk, gs_shaders_spirv, "bucket_args", NULL, 1,
                               sizeof(struct gs_pc_bucket), NULL, 0, &f->bucket_args, err);
  if (!rc) rc = gs_scan_new(vk, &f->scan, err);
  if (!rc)
    rc = gs_sort_new(vk, f->opts.radix_ballot ? GS_SORT_SCATTER_BALLOT : GS_SORT_SCATTER_SERIAL,
                     &f->sort, err);
  if (!rc)
    rc = gs_vk_buf_new(vk, 4 * GS_CTR_WORDS, GS_VK_BUF_HOST, "fwd_counters", &f->b.counters, err);
  if (rc) {
    sw_err_prefix(err, "setting up the forward pass");
    gs_fwd_destroy(&f);
    return rc;
  }
  memset(f->b.counters->map, 0, 4 * GS_CTR_WORDS);
  *out = f;
  return 0;
}

static void release_arena(gs_fwd_t *f) {
  gs_vk_buf_destroy(&f->keys);
  gs_vk_buf_destroy(&f->values);
  gs_sort_release(f->sort);
  f->b.keys = f->b.values = NULL;
}

void gs_fwd_destroy(gs_fwd_t **fp) {
  if (!fp || !*fp) return;
  gs_fwd_t *f = *fp;
  if (f->sort) release_arena(f);
  gs_sort_destroy(&f->sort);
  gs_scan_destroy(&f->scan);
  struct gs_vk_buf **bufs[] = {
      &f->b.splats,      &f->b.tiles_touched, &f->b.offsets,  &f->b.ranges,
      &f->b.rgb,         &f->b.final_t,       &f->b.last,     &f->b.counters,
      &f->b.tile_base,   &f->b.tile_maxlast,  &f->b.groups,   &f->b.state,
      &f->b.bucket_meta, &f->depth_keys,      &f->depth_vals, &f->b.tile_order};
  for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) gs_vk_buf_destroy(bufs[i]);
  gs_vk_kernel_destroy(&f->project);
  gs_vk_kernel_destroy(&f->tile_count);
  gs_vk_kernel_destroy(&f->emit);
  gs_vk_kernel_destroy(&f->ranges);
  gs_vk_kernel_destroy(&f->raster);
  gs_vk_kernel_destroy(&f->bucket_alloc);
  gs_vk_kernel_destroy(&f->bucket_args);
  gs_vk_kernel_destroy(&f->depth_gather);
  gs_vk_kernel_destroy(&f->tile_order);
  free(f);
  *fp = NULL;
}

static int reserve_arena(gs_fwd_t *f, uint32_t capacity, struct sw_err *err) {
  int rc = gs_vk_buf_ensure(f->vk, &f->keys, 8ull * capacity, 0, "pair_keys", err);
  if (!rc) rc = gs_vk_buf_ensure(f->vk, &f->values, 4ull * capacity, 0, "pair_values", err);
  if (!rc) rc = gs_sort_reserve(f->sort, capacity, err);
  if (rc) {
    /* A failed grow may leave a buffer empty: the next prepare sizes the arena afresh. */
    f->prepared = 0;
    f->b.capacity = 0;
    return rc;
  }
  f->b.capacity = capacity;
  f->b.keys = f->keys;
  f->b.values = f->values;
  return 0;
}

/* The per-splat backward's runs for the arena's capacity: a tile of n pairs has
 * ceil(n / (bucket GROUP)) <= n / (bucket GROUP) + 1 groups, so tiles + capacity / (bucket GROUP)
 * bound every frame the arena holds. */
static int reserve_buckets(gs_fwd_t *f, uint32_t tiles, struct sw_err *err) {
  uint64_t per_group = (uint64_t)f->b.bucket * GS_BUCKET_GROUP;
  uint64_t groups = tiles + f->b.capacity / per_group + 1;
  uint64_t state = 16ull * GS_RASTER_WG * GS_BUCKET_GROUP * groups;
  uint64_t most = gs_vk_info(f->vk)->max_storage_buffer_range;
  if (groups > UINT32_MAX / 2 || (most && state > most))
    return sw_err_set(err, SW_EDEVICE,
                      "forward pass: the per-splat backward's state for %u pairs needs %.1f GiB "
                      "in one buffer, more than the device's %.1f GiB (rasterize_bwd: pixel needs "
                      "none)",
                      f->b.capacity, (double)state / 1073741824.0, (double)most / 1073741824.0);
  int rc = gs_vk_buf_ensure(f->vk, &f->b.tile_base, 4ull * tiles, 0, "tile_base", err);
  if (!rc) rc = gs_vk_buf_ensure(f->vk, &f->b.tile_maxlast, 4ull * tiles, 0, "tile_maxlast", err);
  if (!rc) rc = gs_vk_buf_ensure(f->vk, &f->b.groups, 8 * groups, 0, "bucket_groups", err);
  if (!rc) rc = gs_vk_buf_ensure(f->vk, &f->b.state, state, 0, "bucket_state", err);
  if (!rc)
    rc = gs_vk_buf_ensure(f->vk, &f->b.bucket_meta, 4 * GS_BMETA_WORDS, 0, "bucket_meta", err);
  f->b.max_groups = rc ? 0 : (uint32_t)groups;
  return rc;
}

int gs_fwd_prepare(gs_fwd_t *f, uint32_t count, uint32_t width, uint32_t height,
                   struct sw_err *err) {
  if (width == 0 || height == 0 || width > 65535 * GS_TILE || height > 65535 * GS_TILE)
    return sw_err_set(err, SW_EINVAL, "forward pass: image size %ux%u out of range", width, height);
  gs_vk_t *vk = f->vk;
  uint32_t n = count ? count : 1;
  uint32_t tx = gs_vk_div_up(width, GS_TILE), ty = gs_vk_div_up(height, GS_TILE);
  uint64_t px = (uint64_t)width * height;
  int rc =
      gs_vk_buf_ensure(vk, &f->b.splats, sizeof(struct gs_splat2d) * (uint64_t)n, 0, "splats", err);
  if (!rc) rc = gs_vk_buf_ensure(vk, &f->b.tiles_touched, 4ull * n, 0, "tiles_touched", err);
  if (!rc) rc = gs_vk_buf_ensure(vk, &f->b.offsets, 4ull * n, 0, "offsets", err);
  if (!rc) rc = gs_scan_reserve(f->scan, n, err);
  if (!rc) rc = gs_vk_buf_ensure(vk, &f->b.ranges, 8ull * tx * ty, 0, "tile_ranges", err);
  if (!rc) rc = gs_vk_buf_ensure(vk, &f->b.tile_order, 4ull * tx * ty, 0, "tile_order", err);
  if (!rc) rc = gs_vk_buf_ensure(vk, &f->b.rgb, 12 * px, 0, "image_rgb", err);
  if (!rc) rc = gs_vk_buf_ensure(vk, &f->b.final_t, 4 * px, 0, "final_t", err);
  if (!rc) rc = gs_vk_buf_ensure(vk, &f->b.last, 4 * px, 0, "last_contributor", err);
  if (!rc) {
    uint64_t cap = f->b.capacity;
    if (f->pending_growth > cap) cap = f->pending_growth;
    uint64_t guess = (uint64_t)n * f->opts.initial_pairs_per_splat;
    if (cap == 0) cap = guess > 4096 ? guess : 4096;
    if (cap > UINT32_MAX / 2) cap = UINT32_MAX / 2;
    if (!f->keys || cap > f->b.capacity) rc = reserve_arena(f, (uint32_t)cap, err);
  }
  if (!rc && f->b.bucket) rc = reserve_buckets(f, tx * ty, err);
  if (!rc && f->opts.depth_first) {
    rc = gs_vk_buf_ensure(vk, &f->depth_keys, 8ull * n, 0, "depth_keys", err);
    if (!rc) rc = gs_vk_buf_ensure(vk, &f->depth_vals, 4ull * n, 0, "depth_values", err);
    if (!rc) rc = gs_sort_reserve(f->sort, n, err); /* grow-only: the arena's or n, the larger */
  }
  f->prepared = rc == 0;
  if (rc) {
    sw_err_prefix(err, "forward pass buffers for %u splats at %ux%u", count, width, height);
    return rc;
  }
  f->b.count = count;
  f->b.width = width;
  f->b.height = height;
  f->b.tiles_x = tx;
  f->b.tiles_y = ty;
  f->reserved_count = n;
  return 0;
}

static void record_project(gs_fwd_t *f, VkCommandBuffer cmd, const struct gs_fwd_input *in) {
  const struct gs_camera *c = &in->cam;
  struct gs_pc_project pc = {.fx = c->fx,
                             .fy = c->fy,
                             .cx = c->cx,
                             .cy = c->cy,
                             .n = f->b.count,
                             .width = f->b.width,
                             .height = f->b.height,
                             .tiles_x = f->b.tiles_x,
                             .tiles_y = f->b.tiles_y,
                             .sh_degree = in->sh_degree};
  memcpy(pc.viewmat, c->viewmat, sizeof pc.viewmat);
  memcpy(pc.campos, c->campos, sizeof pc.campos);
  /* Per-frame state the later stages read: the arena capacity and empty tile ranges. */
  uint32_t cap = f->b.capacity;
  vkCmdUpdateBuffer(cmd, f->b.counters->buf, 4 * GS_CTR_CAPACITY, 4, &cap);
  vkCmdFillBuffer(cmd, f->b.ranges->buf, 0, VK_WHOLE_SIZE, 0);
  const struct gs_fwd_model *m = &in->model;
  struct gs_vk_buf *b[6] = {m->means, m->log_scales, m->quats, m->opacity, m->sh, f->b.splats};
  gs_vk_dispatch(cmd, f->project, b, &pc, gs_vk_div_up(f->b.count, GS_WG), 1, 1);
}

/* The per-splat backward's runs, before the rasterizer writes their state: the group list
 * (bucket_alloc) and the backward's dispatch size (bucket_args). */
static void record_buckets(gs_fwd_t *f, VkCommandBuffer cmd) {
  struct gs_pc_bucket pc = {.num_tiles = f->b.tiles_x * f->b.tiles_y,
                            .max_groups = f->b.max_groups,
                            .max_x = gs_vk_info(f->vk)->max_workgroup_count[0]};
  vkCmdFillBuffer(cmd, f->b.bucket_meta->buf, 0, VK_WHOLE_SIZE, 0);
  gs_vk_barrier(cmd);
  struct gs_vk_buf *b[4] = {f->b.ranges, f->b.tile_base, f->b.groups, f->b.bucket_meta};
  gs_vk_dispatch(cmd, f->bucket_alloc, b, &pc, gs_vk_div_up(pc.num_tiles, GS_WG), 1, 1);
  gs_vk_barrier(cmd);
  gs_vk_dispatch(cmd, f->bucket_args, &f->b.bucket_meta, &pc, 1, 1, 1);
  gs_vk_barrier(cmd);
}

/* Bits of the pair keys to sort: (tile, depth) with the tile's bits, or with `sort: depth_first`
 * the tile id alone; radix_passes: full sorts every bit of the words that can hold any. */
static uint32_t sort_key_bits(const gs_fwd_t *f, uint32_t tiles) {
  if (!f->opts.depth_first) return f->opts.radix_full ? 64 : gs_sort_key_bits(tiles - 1);
  uint32_t bits = gs_sort_key_bits(tiles - 1) - 32;
  return f->opts.radix_full ? 32 : (bits ? bits : 1);
}

/* `sort: depth_first`, inside stage tile_count: the splats sorted by depth (stable: equal depths
 * keep index order), then the tile counts in that order for the scan. Timed as a second
 * "radix_sort" interval (the stage names are the result's contract, DESIGN.md section 8), so
 * radix_sort holds both sorts, two calls per frame. */
static int record_depth_sort(gs_fwd_t *f, VkCommandBuffer cmd, gs_vk_timer_t *timer,
                             struct sw_err *err) {
  uint32_t n = f->b.count;
  gs_vk_barrier(cmd);
  if (timer) {
    gs_vk_timer_end(timer, cmd);
    gs_vk_timer_begin(timer, cmd, gs_fwd_stage_name(GS_FWD_SORT));
  }
  struct gs_sort_io io = {.keys = f->depth_keys,
                          .values = f->depth_vals,
                          .count_index = UINT32_MAX,
                          .n = n,
                          .capacity = n,
                          .key_bits = 32};
  struct gs_vk_buf *keys_out;
  int rc = gs_sort_record(f->sort, cmd, &io, &keys_out, &f->order, err);
  if (rc || !n) return rc;
  struct gs_pc_bin pc = {.n = n};
  struct gs_vk_buf *b[3] = {f->order, f->b.tiles_touched, f->b.offsets};
  gs_vk_dispatch(cmd, f->depth_gather, b, &pc, gs_vk_div_up(n, GS_WG), 1, 1);
  return 0;
}

int gs_fwd_record_stage(gs_fwd_t *f, VkCommandBuffer cmd, gs_vk_timer_t *timer,
                        enum gs_fwd_stage stage, const struct gs_fwd_input *in,
                        struct sw_err *err) {
  if (!f->prepared || !f->keys || in->model.count != f->b.count || in->cam.width != f->b.width ||
      in->cam.height != f->b.height)
    return sw_err_set(err, SW_ESTATE,
                      "forward pass: %s recorded for %u splats at %ux%u, "
                      "prepared for %u at %ux%u",
                      gs_fwd_stage_name(stage), in->model.count, in->cam.width, in->cam.height,
                      f->b.count, f->b.width, f->b.height);
  if (in->sh_degree > 3)
    return sw_err_set(err, SW_EINVAL, "forward pass: SH degree %u above 3", in->sh_degree);
  if (timer) gs_vk_timer_begin(timer, cmd, gs_fwd_stage_name(stage));
  uint32_t n = f->b.count;
  struct gs_pc_bin bin = {.n = n, .tiles_x = f->b.tiles_x, .capacity = f->b.capacity};
  int rc = 0;
  switch (stage) {
  case GS_FWD_PROJECT: record_project(f, cmd, in); break;
  case GS_FWD_TILE_COUNT: {
    int df = f->opts.depth_first;
    struct gs_vk_buf *b[5] = {f->b.splats, f->b.tiles_touched, f->b.offsets,
                              df ? f->depth_keys : f->b.offsets, df ? f->depth_vals : f->b.offsets};
    gs_vk_dispatch(cmd, f->tile_count, b, &bin, gs_vk_div_up(n, GS_WG), 1, 1);
    if (df) rc = record_depth_sort(f, cmd, timer, err);
    break;
  }
  case GS_FWD_SCAN: gs_scan_record(f->scan, cmd, f->b.offsets, n); break;
  case GS_FWD_EMIT: {
    struct gs_vk_buf *b[6] = {f->b.splats,   f->b.offsets,
                              f->keys,       f->values,
                              f->b.counters, f->opts.depth_first ? f->order : f->b.offsets};
    /* At least one group, so that the pair count is written even without splats. */
    gs_vk_dispatch(cmd, f->emit, b, &bin, n ? gs_vk_div_up(n, GS_WG) : 1, 1, 1);
    break;
  }
  case GS_FWD_SORT: {
    uint32_t tiles = f->b.tiles_x * f->b.tiles_y;
    struct gs_sort_io io = {.keys = f->keys,
                            .values = f->values,
                            .counters = f->b.counters,
                            .count_index = GS_CTR_PAIRS,
                            .capacity = f->b.capacity,
                            .key_bits = sort_key_bits(f, tiles)};
    rc = gs_sort_record(f->sort, cmd, &io, &f->b.keys, &f->b.values, err);
    break;
  }
  case GS_FWD_RANGES: {
    struct gs_pc_ranges pc = {.num_tiles = f->b.tiles_x * f->b.tiles_y};
    uint32_t groups = gs_vk_div_up(f->b.capacity, GS_WG);
    uint32_t gx = groups, maxg = gs_vk_info(f->vk)->max_workgroup_count[0];
    if (gx > maxg) gx = maxg;
    struct gs_vk_buf *b[3] = {f->b.keys, f->b.ranges, f->b.counters};
    gs_vk_dispatch(cmd, f->ranges, b, &pc, gx, gs_vk_div_up(groups, gx), 1);
    break;
  }
  case GS_FWD_RASTER: {
    struct gs_pc_raster pc = {.width = f->b.width,
                              .height = f->b.height,
                              .tiles_x = f->b.tiles_x,
                              .tiles_y = f->b.tiles_y};
    memcpy(pc.background, in->background, sizeof pc.background);
    if (f->b.bucket) record_buckets(f, cmd);
    /* The plain forward binds the first seven; the bucket forward also the runs' three. */
    struct gs_vk_buf *b[10] = {f->b.splats,  f->b.values,      f->b.ranges,     f->b.rgb,
                               f->b.final_t, f->b.last,        f->b.tile_order, f->b.tile_base,
                               f->b.state,   f->b.tile_maxlast};
    uint32_t gx = f->b.tiles_x, gy = f->b.tiles_y;
    if (f->opts.dense_first) {
      /* fwd_order: dense_first: the order first, then the tiles in it on a grid of at least as
       * many workgroups, row by row (the extra ones return at once). */
      struct gs_pc_ranges po = {.num_tiles = gx * gy};
      struct gs_vk_buf *ob[2] = {f->b.ranges, f->b.tile_order};
      gs_vk_dispatch(cmd, f->tile_order, ob, &po, 1, 1, 1);
      gs_vk_barrier(cmd);
      uint32_t maxg = gs_vk_info(f->vk)->max_workgroup_count[0];
      gx = po.num_tiles < maxg ? po.num_tiles : maxg;
      gy = gs_vk_div_up(po.num_tiles, gx);
    }
    gs_vk_dispatch(cmd, f->raster, b, &pc, gx, gy, 1);
    break;
  }
  default: rc = sw_err_set(err, SW_EINVAL, "forward pass: unknown stage %d", (int)stage);
  }
  if (stage != GS_FWD_SORT) gs_vk_barrier(cmd); /* the sort ends with its own barrier */
  if (timer) gs_vk_timer_end(timer, cmd);
  return rc;
}

int gs_fwd_record(gs_fwd_t *f, VkCommandBuffer cmd, gs_vk_timer_t *timer,
                  const struct gs_fwd_input *in, struct sw_err *err) {
  for (int s = 0; s < GS_FWD_STAGES; s++) {
    int rc = gs_fwd_record_stage(f, cmd, timer, (enum gs_fwd_stage)s, in, err);
    if (rc) return rc;
  }
  return 0;
}

/* llvmpipe (lavapipe, Mesa's CPU driver) ends a shader invocation's loops after 65,535
 * iterations in all (its loop limiter): rasterize_fwd's walk over a tile with more (splat, tile)
 * pairs than that (one iteration per pair plus one per batch of GS_RASTER_WG) stops part-way,
 * leaving pixels unwritten and the loss garbage. On a CPU device the frame's fullest tile is
 * checked after every frame (a few kilobytes of host-visible memory), so the run stops with a
 * clear error at the first such frame. */
#define GS_CPU_TILE_PAIRS_MAX 65000u

static int cpu_device(const gs_fwd_t *f) {
  const struct gs_vk_device_info *di = gs_vk_info(f->vk);
  return di && di->kind == GS_VK_KIND_CPU;
}

static size_t frame_tiles(const gs_fwd_t *f) { return (size_t)f->b.tiles_x * f->b.tiles_y; }

/* ranges: the frame's tile ranges (2 words a tile), from a readback block, or NULL: read them
 * from the GPU now. */
static int check_cpu_tile_limit(gs_fwd_t *f, const uint32_t *ranges, struct sw_err *err) {
  if (!cpu_device(f) || !f->b.ranges) return 0;
  size_t tiles = frame_tiles(f);
  uint32_t *own = NULL;
  int rc = 0;
  if (!ranges) {
    own = malloc(8 * tiles);
    if (!own) return sw_err_set(err, SW_ENOMEM, "forward pass: out of memory");
    rc = gs_vk_buf_download(f->b.ranges, 0, own, 8 * tiles, err);
    ranges = own;
  }
  uint32_t most = 0;
  for (size_t i = 0; !rc && i < tiles; i++) {
    uint32_t lo = ranges[2 * i], hi = ranges[2 * i + 1];
    if (hi > lo && hi - lo > most) most = hi - lo;
  }
  free(own);
  if (rc) return rc;
  if (most > GS_CPU_TILE_PAIRS_MAX)
    return sw_err_set(err, SW_EDEVICE,
                      "forward pass: a 16x16 tile holds %u (splat, tile) pairs, more than the "
                      "65,535 loop iterations llvmpipe (lavapipe, a CPU device) runs in one shader "
                      "invocation, so it cannot be rasterized: use fewer splats (init_points), a "
                      "larger image (a lower resolution_scale) or a GPU",
                      most);
  return 0;
}

/* The frame's pair count is known: the tile check, and growth on overflow. */
static int finish_pairs(gs_fwd_t *f, uint32_t pairs, const uint32_t *ranges, int *retry,
                        uint32_t *pairs_out, struct sw_err *err) {
  *retry = 0;
  if (pairs_out) *pairs_out = pairs;
  if (pairs <= f->b.capacity && pairs > GS_CPU_TILE_PAIRS_MAX) {
    int rc = check_cpu_tile_limit(f, ranges, err);
    if (rc) return rc;
  }
  if (pairs > f->b.capacity) {
    /* Headroom so that a slowly growing model does not overflow every frame. */
    uint64_t want = (uint64_t)pairs + pairs / 2;
    if (want > UINT32_MAX / 2)
      return sw_err_set(err, SW_EINVAL,
                        "forward pass: %u (splat, tile) pairs exceed the "
                        "arena's limit",
                        pairs);
    *retry = 1;
    if (f->opts.transient) {
      f->pending_growth = (uint32_t)want;
    } else {
      int rc = reserve_arena(f, (uint32_t)want, err);
      if (rc) return rc;
    }
    /* Handled: the frames to come may touch the model again (nothing is in flight now). */
    ((uint32_t *)f->b.counters->map)[GS_CTR_STALE] = 0;
  }
  if (f->opts.transient) release_arena(f); /* prepare allocates it again, same size or grown */
  return 0;
}

int gs_fwd_finish(gs_fwd_t *f, int *retry, uint32_t *pairs_out, struct sw_err *err) {
  uint32_t pairs = ((const uint32_t *)f->b.counters->map)[GS_CTR_PAIRS];
  return finish_pairs(f, pairs, NULL, retry, pairs_out, err);
}

VkDeviceSize gs_fwd_readback_size(const gs_fwd_t *f) {
  return 4 * GS_CTR_WORDS + (cpu_device(f) ? 8 * (VkDeviceSize)frame_tiles(f) : 0);
}

void gs_fwd_record_readback(gs_fwd_t *f, VkCommandBuffer cmd, struct gs_vk_buf *dst,
                            VkDeviceSize offset) {
  VkBufferCopy c[2] = {{.srcOffset = 0, .dstOffset = offset, .size = 4 * GS_CTR_WORDS},
                       {.srcOffset = 0,
                        .dstOffset = offset + 4 * GS_CTR_WORDS,
                        .size = 8 * (VkDeviceSize)frame_tiles(f)}};
  vkCmdCopyBuffer(cmd, f->b.counters->buf, dst->buf, 1, &c[0]);
  if (cpu_device(f)) vkCmdCopyBuffer(cmd, f->b.ranges->buf, dst->buf, 1, &c[1]);
}

int gs_fwd_readback_overflowed(const void *block) {
  const uint32_t *w = block; /* the capacity the frame was recorded with is in the block too */
  return w[GS_CTR_PAIRS] > w[GS_CTR_CAPACITY];
}

int gs_fwd_finish_readback(gs_fwd_t *f, const void *block, int *retry, uint32_t *pairs_out,
                           struct sw_err *err) {
  const uint32_t *w = block;
  return finish_pairs(f, w[GS_CTR_PAIRS], cpu_device(f) ? w + GS_CTR_WORDS : NULL, retry, pairs_out,
                      err);
}

const struct gs_fwd_bufs *gs_fwd_bufs(const gs_fwd_t *f) { return &f->b; }

static int submit_stages(gs_fwd_t *f, gs_vk_timer_t *timer, const struct gs_fwd_input *in,
                         int first, int last, struct sw_err *err) {
  VkCommandBuffer cmd;
  int rc = gs_vk_cmd_begin(f->vk, &cmd, err);
  if (rc) return rc;
  if (timer) gs_vk_timer_reset(timer, cmd);
  for (int s = first; s <= last && !rc; s++)
    rc = gs_fwd_record_stage(f, cmd, timer, (enum gs_fwd_stage)s, in, err);
  if (rc) {
    gs_vk_cmd_discard(f->vk, &cmd);
    return rc;
  }
  rc = gs_vk_cmd_submit_wait(f->vk, &cmd, err);
  if (!rc && timer) rc = gs_vk_timer_collect(timer, err);
  return rc;
}

int gs_fwd_flight_submit(struct gs_fwd_flight *fl, VkCommandBuffer *cmd, struct sw_err *err) {
  int rc = gs_vk_job_submit(fl->job, cmd, err);
  if (!rc) {
    fl->submitted = 1;
    fl->tries++;
  }
  return rc;
}

int gs_fwd_flight_wait(struct gs_fwd_flight *fl, gs_vk_timer_t *timer, struct sw_err *err) {
  if (!gs_vk_job_pending(fl->job)) return 0;
  int rc = gs_vk_job_wait(fl->job, err);
  if (!rc && timer) {
    gs_vk_timer_use(timer, fl->set);
    rc = gs_vk_timer_collect(timer, err);
  }
  return rc;
}

int gs_fwd_flight_complete(gs_fwd_t *f, gs_vk_timer_t *timer, struct gs_fwd_flight *fl,
                           struct gs_fwd_flight *behind, gs_fwd_submit_fn submit, void *ctx,
                           uint64_t *redone, uint32_t *pairs_out, struct sw_err *err) {
  for (;;) {
    int rc = gs_fwd_flight_wait(fl, timer, err);
    if (rc) return rc;
    int redo_behind = gs_fwd_readback_overflowed(fl->rb->map) && behind && behind->submitted;
    if (redo_behind) rc = gs_fwd_flight_wait(behind, timer, err);
    int retry = 0;
    if (!rc) rc = gs_fwd_finish_readback(f, fl->rb->map, &retry, pairs_out, err);
    if (rc || !retry) return rc;
    if (fl->tries >= 8)
      return sw_err_set(err, SW_EDEVICE, "iteration %u: the pair arena kept overflowing", fl->iter);
    if (redone) *redone += 1 + (uint64_t)redo_behind;
    rc = submit(ctx, fl, err);
    if (!rc && redo_behind) rc = submit(ctx, behind, err);
    if (rc) return rc;
  }
}

int gs_fwd_run(gs_fwd_t *f, gs_vk_timer_t *timer, const struct gs_fwd_input *in, int per_kernel,
               struct sw_err *err) {
  for (int attempt = 0; attempt < 4; attempt++) {
    int rc = gs_fwd_prepare(f, in->model.count, in->cam.width, in->cam.height, err);
    if (per_kernel)
      for (int s = 0; s < GS_FWD_STAGES && !rc; s++) rc = submit_stages(f, timer, in, s, s, err);
    else if (!rc)
      rc = submit_stages(f, timer, in, 0, GS_FWD_STAGES - 1, err);
    int retry = 0;
    if (!rc) rc = gs_fwd_finish(f, &retry, NULL, err);
    if (rc || !retry) return rc;
  }
  return sw_err_set(err, SW_ESTATE, "forward pass: the pair arena kept overflowing");
}

int gs_fwd_model_upload(gs_vk_t *vk, const struct gs_model *m, struct gs_fwd_model *out,
                        struct sw_err *err) {
  memset(out, 0, sizeof *out);
  uint64_t n = m->count ? m->count : 1;
  struct {
    struct gs_vk_buf **buf;
    const float *src;
    uint32_t per;
    const char *label;
  } g[5] = {{&out->means, m->means, 3, "means"},
            {&out->log_scales, m->log_scales, 3, "log_scales"},
            {&out->quats, m->quats, 4, "quats"},
            {&out->opacity, m->opacity, 1, "opacity"},
            {&out->sh, m->sh, 48, "sh"}};
  int rc = 0;
  for (int i = 0; i < 5 && !rc; i++) {
    rc = gs_vk_buf_new(vk, 4 * n * g[i].per, 0, g[i].label, g[i].buf, err);
    if (!rc && m->count)
      rc = gs_vk_buf_upload(*g[i].buf, 0, g[i].src, 4ull * m->count * g[i].per, err);
  }
  if (rc) {
    gs_fwd_model_release(out);
    return rc;
  }
  out->count = m->count;
  return 0;
}

void gs_fwd_model_release(struct gs_fwd_model *m) {
  gs_vk_buf_destroy(&m->means);
  gs_vk_buf_destroy(&m->log_scales);
  gs_vk_buf_destroy(&m->quats);
  gs_vk_buf_destroy(&m->opacity);
  gs_vk_buf_destroy(&m->sh);
  m->count = 0;
}

int gs_fwd_read_image(gs_fwd_t *f, float *rgb, float *final_t, uint32_t *last, struct sw_err *err) {
  uint64_t px = (uint64_t)f->b.width * f->b.height;
  int rc = 0;
  if (rgb) rc = gs_vk_buf_download(f->b.rgb, 0, rgb, 12 * px, err);
  if (!rc && final_t) rc = gs_vk_buf_download(f->b.final_t, 0, final_t, 4 * px, err);
  if (!rc && last) rc = gs_vk_buf_download(f->b.last, 0, last, 4 * px, err);
  return rc;
}
