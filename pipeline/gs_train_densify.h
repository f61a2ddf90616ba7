/* gs_train_densify.h: adaptive density control of the 3DGS recipe (Kerbl et al. 2023), run on the
 * host over the model and its Adam moments (the trainer brings them from the GPU and back, and
 * times the whole round trip as the `densify` kernel):
 *  - a splat whose mean 2D gradient norm (sum / visible count, from project_bwd's statistics) is
 *    at least grad_threshold is cloned when its largest scale is <= percent_dense * extent, else
 *    split into 2 children sampled from its Gaussian (means R diag(s) n + mean, n ~ N(0, I)),
 *    with scales s / 1.6; the parent is removed;
 *  - then splats with opacity < prune_opacity are removed, and, once opacities have been reset at
 *    least once, splats whose screen radius exceeded prune_screen pixels or whose largest scale
 *    exceeds prune_world * extent;
 *  - new splats start with zero moments; survivors keep theirs;
 *  - the opacity reset lowers every opacity to at most 0.01 and zeroes their moments. */
#ifndef GS_TRAIN_DENSIFY_H
#define GS_TRAIN_DENSIFY_H

#include <stdint.h>

#include "gs_model.h"
#include "gs_train_gpu.h"

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
  int prune_big;      /* screen / world pruning active (after the first opacity reset) */
  float prune_screen; /* pixels; 0 = off */
  float prune_world;  /* fraction of extent; 0 = off */
  uint32_t max_splats; /* 0 = no limit */
};

struct gs_densify_report {
  uint32_t before, cloned, split, pruned, after;
};

/* One densification step. dens: 3 floats per splat (sum of 2D gradient norms, visible count,
 * max radius) for the model's count splats. Grows model and moments as needed. */
int gs_densify(struct gs_model *m, struct gs_moments *mo, const float *dens,
               const struct gs_densify_opts *opts, struct gs_rng *rng,
               struct gs_densify_report *rep, struct sw_err *err);

/* Opacity reset: opacity = min(opacity, 0.01) (as logits) and its moments zeroed. */
void gs_densify_reset_opacity(struct gs_model *m, struct gs_moments *mo);

#endif
