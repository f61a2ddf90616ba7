/* gs_train_diag.h: what the densification does, described, for hunting splat-count runaways
 * (issue 12; docs/trainer.md "The runaway"). Off unless SW_LOG=debug: the trainer then keeps each
 * splat's lineage (the iteration it was born, how many times it has been a clone or split source,
 * the last grow step that picked it) through every densification, and logs one line per grow
 * step describing the splats picked for cloning and splitting against the whole model. Nothing
 * here changes a decision; the plan is gs_densify_plan's alone. */
#ifndef GS_TRAIN_DIAG_H
#define GS_TRAIN_DIAG_H

#include <stdint.h>

#include "gs_train_densify.h"
#include "sw_err.h"

struct gs_lineage {
  uint32_t n, cap;
  uint32_t *born;   /* iteration the splat appeared (0: initial model) */
  uint32_t *picked; /* times the splat itself was a clone source (a new splat starts at 0) */
  uint32_t *last;   /* the last grow step that picked it (0: never) */
};
int gs_lineage_init(struct gs_lineage *l, uint32_t n, struct sw_err *err);
/* Carries the lineage through one plan applied at iteration iter: survivors keep theirs (a
 * clone source counts one more pick), clones and children start a new line born at iter. */
int gs_lineage_apply(struct gs_lineage *l, const struct gs_densify_plan *plan, uint32_t iter,
                     struct sw_err *err);
void gs_lineage_free(struct gs_lineage *l);

/* The inputs of one grow step, as the trainer read them back (n splats). */
struct gs_densify_view {
  uint32_t n, iter;
  const float *dens, *log_scales, *opacity, *means; /* 3n, 3n, n, 3n */
  const struct gs_densify_opts *opts;
  const float *center; /* the scene centre; distances are in units of opts->extent */
};
/* Logs (debug) one line for the step's clone sources and one for its split sources: count,
 * mean-gradient / threshold, visible views, opacity, largest scale / (percent_dense extent),
 * screen radius, distance from the centre, age, share picked at the previous grow step
 * (`again`) and picked three times or more, and the share of the busiest cell of an 8^3 grid
 * over the model's bounding box; then the same figures over all splats. */
void gs_densify_describe(const struct gs_densify_view *v, const struct gs_densify_plan *plan,
                         const struct gs_lineage *l, uint32_t prev_grow);

#endif
