/* gs_train_densify.h: adaptive density control of the 3DGS recipe (Kerbl et al. 2023), run on the
 * host over the model and its Adam moments (the trainer brings them from the GPU and back, and
 * times the whole round trip as the `densify` kernel):
 *  - a splat whose mean 2D gradient norm (sum / visible count, from project_bwd's statistics) is
 *    above grad_threshold (strictly, as gsplat) is cloned when its largest scale is <=
 * percent_dense * extent, else split into 2 children sampled from its Gaussian (means R diag(s) n +
 * mean, n ~ N(0, I)), with scales s / 1.6; the parent is removed;
 *  - then splats with opacity < prune_opacity are removed, and, when prune_big is set (after
 *    prune_big_after iterations), splats whose screen radius exceeded prune_screen pixels or whose
 * largest scale exceeds prune_world * extent;
 *  - new splats start with zero moments; survivors keep theirs;
 *  - a clone is an exact copy of its parent (clone_opacity = copy, gsplat and the Inria code), or
 *    the two share the parent's opacity a as 1 - sqrt(1 - a) each (clone_opacity = share: the
 *    pair composites to a where they overlap, so neither hides the other);
 *  - the opacity reset lowers every opacity to at most 0.01 and zeroes their moments.
 * When each of these happens is gs_densify_schedule's alone. */
#ifndef GS_TRAIN_DENSIFY_H
#define GS_TRAIN_DENSIFY_H

#include <stdint.h>

#include "gs_config.h"
#include "gs_model.h"
#include "gs_train_gpu.h"

/* What densification does at iteration `iter` (1-based, as the Inria code counts) of a training
 * configured by cfg: the one owner of the schedule, asked by the training loop, the densify step
 * and the tests. */
struct gs_densify_when {
  int accumulate; /* this iteration's 2D gradients feed the statistics (iter < densify_until) */
  int grow;       /* after the iteration: clone / split / prune (iter in (densify_from,
                     densify_until), every densify_every) */
  int reset;      /* after the iteration: opacity reset (every opacity_reset_every before
                     densify_until with opacity_reset_margin iterations left; with white_reset
                     also at densify_from on white backgrounds, the Inria code's rule) */
  int prune_big;  /* a grow also prunes big splats (iter > prune_big_after) */
};
/* Neither grow nor reset at the last iteration: nothing trains after it, so either would only
 * spoil the final model (a reset at iteration 3000 of a 3000-iteration run). */
void gs_densify_schedule(const struct gs_config *cfg, uint32_t iter, struct gs_densify_when *out);

/* Adam moments on the host, interleaved (m, v) per parameter float, capacity splats per group. */
struct gs_moments {
  uint32_t capacity;
  float *g[GS_P_COUNT]; /* 2 * gs_pgroup_floats[g] * capacity floats */
};
int gs_moments_reserve(struct gs_moments *mo, uint32_t capacity, struct sw_err *err);
void gs_moments_free(struct gs_moments *mo);

struct gs_densify_opts {
  float grad_threshold;
  float percent_dense;
  float extent;
  float prune_opacity;
  int prune_big;       /* screen / world pruning active (after prune_big_after) */
  float prune_screen;  /* pixels; 0 = off */
  float prune_world;   /* fraction of extent; 0 = off */
  uint32_t max_splats; /* 0 = no limit */
  int share_opacity;   /* clone_opacity = share: a clone and its parent take 1 - sqrt(1 - a) */
};

struct gs_densify_report {
  uint32_t before, cloned, split, pruned, after;
};

/* The outcome of one densification step as a gather: new splat k comes from old splat src[k],
 * as kind[k]: GS_DENSIFY_KEEP (parameters and moments), GS_DENSIFY_CLONE (parameters, zero
 * moments) or GS_DENSIFY_CHILD (parameters with the mean moved by off[3k..3k+2] and the scales
 * divided by 1.6, zero moments); an entry flagged GS_PLAN_OPACITY takes the opacity logit off[3k]
 * (with share_opacity: a clone and its parent). Survivors come first in their order, then clones
 * and children in
 * the order of their parents. Both the host (gs_densify) and the GPU (densify_gather.comp) apply
 * it, so the decisions are made once, in one place. */
enum gs_densify_kind { GS_DENSIFY_KEEP = 0, GS_DENSIFY_CLONE = 1, GS_DENSIFY_CHILD = 2 };
static inline uint32_t gs_plan_index(uint32_t e) { return e & GS_PLAN_INDEX_MASK; }
static inline uint32_t gs_plan_kind(uint32_t e) { return e >> GS_PLAN_KIND_SHIFT; }

struct gs_densify_plan {
  uint32_t count, capacity;
  uint32_t *src; /* count: old index | GS_PLAN_OPACITY | kind << GS_PLAN_KIND_SHIFT */
  float *off;    /* 3 * count: mean offsets of children, the opacity logit of a GS_PLAN_OPACITY
                    entry at [3k], 0 otherwise */
};
void gs_densify_plan_free(struct gs_densify_plan *p);

/* Plans one step from the statistics and the few parameters the decisions need (n splats:
 * dens 3n, log_scales 3n, quats 4n, opacity n). */
int gs_densify_plan(uint32_t n, const float *dens, const float *log_scales, const float *quats,
                    const float *opacity, const struct gs_densify_opts *opts, struct gs_rng *rng,
                    struct gs_densify_plan *plan, struct gs_densify_report *rep,
                    struct sw_err *err);

/* One densification step. dens: 3 floats per splat (sum of 2D gradient norms, visible count,
 * max radius) for the model's count splats. Grows model and moments as needed. */
int gs_densify(struct gs_model *m, struct gs_moments *mo, const float *dens,
               const struct gs_densify_opts *opts, struct gs_rng *rng,
               struct gs_densify_report *rep, struct sw_err *err);

/* Opacity reset: opacity = min(opacity, 0.01) (as logits) and its moments zeroed. */
void gs_densify_reset_opacity(struct gs_model *m, struct gs_moments *mo);

#endif
