/* gs_fwd.h: the GPU forward pass (host side): project_fwd, tile_count, scan, emit_pairs,
 * radix_sort, tile_ranges, rasterize_fwd, recorded into any command buffer of the device layer.
 *
 * Everything a backward pass needs stays on the GPU after a frame (struct gs_fwd_bufs): projected
 * splats, per-splat tile counts and their scan, sorted pair keys/values, tile ranges, the image,
 * final T and last contributor.
 *
 * Pair arena: the (splat, tile) pairs and the sort scratch live in grow-only buffers sized for a
 * capacity. A frame never reads its pair count back to record: pair-sized work is dispatched for
 * the capacity and reads the true count on the GPU. After the frame, gs_fwd_finish() reads the
 * count (a host-visible word) and, when it exceeded the capacity, grows the arena and asks for the
 * frame to be recorded again (rare: the arena settles at 1.5x the largest frame). With
 * `binding: transient` (opts.resident = 0) the arena is freed after every frame and allocated
 * again at the next one, as the lab's pipeline did before its "resident binning arena" change.
 *
 * Typical use (one submission per iteration, the `production` regime):
 *   gs_fwd_prepare(f, n, w, h)             outside recording: sizes buffers (grow-only)
 *   record: gs_fwd_record(f, cmd, timer, &in) then the caller's backward kernels
 *   submit, wait; gs_fwd_finish(f, &retry) -> retry: record the iteration again
 * In the `per_kernel` regime, gs_fwd_record_stage() records one stage per command buffer. */
#ifndef GS_FWD_H
#define GS_FWD_H

#include <stdint.h>

#include "gs_sort.h"
#include "gs_types.h"
#include "gs_vk.h"

typedef struct gs_fwd gs_fwd_t;

struct gs_fwd_opts {
  int sigma_skip;   /* sigma_skip: on -> skip sigma >= 5.55 before the exp (bit-exact) */
  int accum_f16;    /* fwd_accum: f16 -> colour accumulator rounded to half */
  int radix_ballot; /* radix_scatter: ballot (else serial) */
  int radix_full;   /* radix_passes: full (all 64 bits; else skip to the tile-id bits) */
  int transient;    /* binning: transient (else resident grow-only arena) */
  int tile_cull;    /* tile_cull: ellipse -> pairs only for the tiles the ellipse meets, not the
                       whole box (tile_cull.glsl; bit-exact images and gradients) */
  int depth_first;  /* sort: depth_first -> the splats sorted by depth (4 passes over them), their
                       pairs emitted in that order and sorted by tile id alone (2 passes over the
                       pairs at 2,500 tiles, not 6); the same order (gs_shared.h) */
  uint32_t initial_pairs_per_splat; /* first arena guess (0: 8 pairs per splat) */
  float alpha_max;                  /* alpha_max: the alpha clamp (0: GS_ALPHA_MAX; else within
                                       [GS_ALPHA_MAX_LO, GS_ALPHA_MAX_HI], SW_EINVAL otherwise) */
  uint32_t bucket; /* rasterize_bwd: splat -> runs of this many splats (the device's subgroup
                      size, 1..GS_BUCKET_MAX): the forward also writes the runs' state for the
                      per-splat backward (gs_shared.h, "Buckets"); 0 = off */
  uint32_t step;   /* fwd_step (enum gs_fwd_step): 1 (select) -> the rasterize step is one basic
                      block (masks and selects, the next splat's loads first); 2 / 3 (group,
                      group8) -> that step 4 / 8 splats at a time, their alphas first; the same
                      image to the bit; above 3 SW_EINVAL */
  int cull_rows;   /* fwd_cull: rows -> each pair of a tile's pixel rows steps only through the
                      splats whose box (alpha >= 1/255 extent plus a pixel, the per-splat
                      backward's) reaches them; the same image to the bit */
  int dense_first; /* fwd_order: dense_first -> the rasterizer's workgroups take the tiles with
                      the most pairs first (tile_order.comp); the same image to the bit */
  int prefetch;    /* fwd_stage: prefetch -> each rasterize invocation loads its splat of the
                      next batch before walking this one; the same image to the bit */
  int sh_vec4;     /* project_sh: vec4 -> the projection reads each splat's SH coefficients 16
                      bytes at a time; the same colours to the bit */
};

/* The model's parameters on the GPU (struct gs_model layout; borrowed). */
struct gs_fwd_model {
  struct gs_vk_buf *means, *log_scales, *quats, *opacity, *sh;
  uint32_t count;
};

struct gs_fwd_input {
  struct gs_fwd_model model;
  struct gs_camera cam;
  uint32_t sh_degree;
  float background[3];
};

/* Buffers of the last recorded frame (borrowed; valid until the next prepare/finish that grows
 * or frees them). keys/values point at wherever the sort left its output. */
struct gs_fwd_bufs {
  struct gs_vk_buf *splats;        /* struct gs_splat2d[count] */
  struct gs_vk_buf *tiles_touched; /* uint[count] */
  struct gs_vk_buf *offsets;       /* uint[count], inclusive scan of tiles_touched */
  struct gs_vk_buf *keys;          /* uint[2 * capacity], sorted (lo depth bits, hi tile) */
  struct gs_vk_buf *values;        /* uint[capacity], splat index of each sorted pair */
  struct gs_vk_buf *ranges;        /* uint[2 * tiles] */
  struct gs_vk_buf *rgb;           /* float[3 * w * h] */
  struct gs_vk_buf *final_t;       /* float[w * h] */
  struct gs_vk_buf *last;          /* uint[w * h] */
  struct gs_vk_buf *counters;      /* uint[GS_CTR_WORDS], host-visible */
  struct gs_vk_buf *tile_order;    /* uint[tiles]: opts.dense_first: the order the rasterizer took
                                      the tiles in (tile_order.comp); unwritten otherwise */
  /* opts.bucket only (else NULL): the per-splat backward's runs (gs_shared.h, "Buckets") */
  struct gs_vk_buf *tile_base;    /* uint[tiles]: the tile's first run, ~0 = none */
  struct gs_vk_buf *tile_maxlast; /* uint[tiles]: largest last contributor of the tile */
  struct gs_vk_buf *groups;       /* uint[2 * max_groups]: (tile, first position) */
  struct gs_vk_buf *state;        /* vec4[GS_BUCKET_GROUP * max_groups * 256]: (C, T) */
  struct gs_vk_buf *bucket_meta;  /* uint[GS_BMETA_WORDS]: group count, indirect dispatch */
  uint32_t count, width, height, tiles_x, tiles_y;
  uint32_t capacity;   /* pairs the arena holds */
  uint32_t bucket;     /* opts.bucket */
  uint32_t max_groups; /* entries `groups` holds: tiles + capacity / (bucket GROUP) + 1 */
};

enum gs_fwd_stage {
  GS_FWD_PROJECT = 0, /* project_fwd */
  GS_FWD_TILE_COUNT,  /* tile_count */
  GS_FWD_SCAN,        /* scan */
  GS_FWD_EMIT,        /* emit_pairs */
  GS_FWD_SORT,        /* radix_sort */
  GS_FWD_RANGES,      /* tile_ranges */
  GS_FWD_RASTER,      /* rasterize_fwd */
  GS_FWD_STAGES
};

/* Stage name as reported in results ("project_fwd", ...). */
const char *gs_fwd_stage_name(enum gs_fwd_stage s);

int gs_fwd_new(gs_vk_t *vk, const struct gs_fwd_opts *opts, gs_fwd_t **out, struct sw_err *err);
void gs_fwd_destroy(gs_fwd_t **f);

/* Sizes the buffers for `count` splats and a width x height image (grow-only; call outside any
 * pending submission). */
int gs_fwd_prepare(gs_fwd_t *f, uint32_t count, uint32_t width, uint32_t height,
                   struct sw_err *err);
/* Records every stage with a barrier between stages (and one at the end), each wrapped in a
 * timer stage when timer is not NULL (the caller resets the timer for the command buffer). */
int gs_fwd_record(gs_fwd_t *f, VkCommandBuffer cmd, gs_vk_timer_t *timer,
                  const struct gs_fwd_input *in, struct sw_err *err);
/* Records one stage (stages must be recorded in order; a barrier follows each). */
int gs_fwd_record_stage(gs_fwd_t *f, VkCommandBuffer cmd, gs_vk_timer_t *timer,
                        enum gs_fwd_stage stage, const struct gs_fwd_input *in, struct sw_err *err);
/* After the submission holding the frame completed: *retry = 1 when the pairs overflowed the
 * arena (now grown: record and submit the frame again), else 0. Frees the arena in the transient
 * regime. pairs_out (may be NULL) gets the frame's pair count. */
int gs_fwd_finish(gs_fwd_t *f, int *retry, uint32_t *pairs_out, struct sw_err *err);
/* Frames in flight (the trainer submits an iteration before the previous one completed): the
 * frame's own copy of what gs_fwd_finish reads, taken at the end of its command buffer, since the
 * next frame overwrites the counters. gs_fwd_readback_size() bytes (the counters; on a CPU device
 * also the tile ranges, for the loop-limit check) for the frame last prepared;
 * gs_fwd_record_readback copies them to dst at offset, after a barrier the caller records. Once
 * the submission completed: gs_fwd_readback_overflowed says whether the frame overflowed the
 * arena, and gs_fwd_finish_readback is gs_fwd_finish on the block. When it overflowed, wait for
 * every later submission first: the arena grows, and the stale flag (GS_CTR_STALE) that kept
 * them from touching the model is lowered. */
VkDeviceSize gs_fwd_readback_size(const gs_fwd_t *f);
void gs_fwd_record_readback(gs_fwd_t *f, VkCommandBuffer cmd, struct gs_vk_buf *dst,
                            VkDeviceSize offset);
int gs_fwd_readback_overflowed(const void *block);
int gs_fwd_finish_readback(gs_fwd_t *f, const void *block, int *retry, uint32_t *pairs_out,
                           struct sw_err *err);
const struct gs_fwd_bufs *gs_fwd_bufs(const gs_fwd_t *f);

/* An iteration in flight, as the trainer keeps up to two (pipeline/gs_train.c) and iter_bench
 * does as it does: its job, the timer's query set its command buffer records into, and its
 * readback block (above, at offset 0 of rb). The caller records it and submits it with
 * gs_fwd_flight_submit (which sets `submitted` and counts `tries`; the caller sets tries to 0
 * before the first submission), and clears `submitted` when it is done with the iteration. */
struct gs_fwd_flight {
  gs_vk_job_t *job;
  struct gs_vk_buf *rb;
  uint32_t set;   /* the timer's query set */
  uint32_t iter;  /* for messages */
  uint32_t tries; /* submissions of this iteration */
  int submitted;
};
/* Submits the flight's recorded command buffer on its job (*cmd is consumed, as by
 * gs_vk_job_submit); on success it is `submitted` and one more of its `tries`. */
int gs_fwd_flight_submit(struct gs_fwd_flight *fl, VkCommandBuffer *cmd, struct sw_err *err);
/* Records and submits a flight's iteration again (the caller's function, with its ctx). */
typedef int (*gs_fwd_submit_fn)(void *ctx, struct gs_fwd_flight *fl, struct sw_err *err);
/* Waits for the flight's submission, if one is pending, and adds its stage times to timer (may
 * be NULL). */
int gs_fwd_flight_wait(struct gs_fwd_flight *fl, gs_vk_timer_t *timer, struct sw_err *err);
/* Completes the flight's iteration. When its frame overflowed the pair arena, nothing it or
 * `behind` (submitted after it; NULL or not submitted: none) did reached the model
 * (GS_CTR_STALE): both are waited for, the arena grows, and both are submitted again through
 * submit, in order, so the iterations are the ones without the overflow; *redone (may be NULL)
 * adds those submissions. An iteration submitted 8 times fails. pairs_out (may be NULL) gets the
 * frame's pair count. */
int gs_fwd_flight_complete(gs_fwd_t *f, gs_vk_timer_t *timer, struct gs_fwd_flight *fl,
                           struct gs_fwd_flight *behind, gs_fwd_submit_fn submit, void *ctx,
                           uint64_t *redone, uint32_t *pairs_out, struct sw_err *err);

/* Convenience: prepare, record, submit, wait, finish, retrying on overflow. timer may be NULL;
 * per_kernel = 1 submits each stage on its own (exact per-stage times). */
int gs_fwd_run(gs_fwd_t *f, gs_vk_timer_t *timer, const struct gs_fwd_input *in, int per_kernel,
               struct sw_err *err);

/* Uploads a host model into new GPU buffers (released with gs_fwd_model_release). */
int gs_fwd_model_upload(gs_vk_t *vk, const struct gs_model *m, struct gs_fwd_model *out,
                        struct sw_err *err);
void gs_fwd_model_release(struct gs_fwd_model *m);

/* Reads the last frame's outputs (each may be NULL): rgb 3 w h, final_t w h, last w h. */
int gs_fwd_read_image(gs_fwd_t *f, float *rgb, float *final_t, uint32_t *last, struct sw_err *err);

#endif
