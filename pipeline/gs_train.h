/* gs_train.h: the 3DGS trainer behind `splat-train train` (DESIGN.md sections 7 and 8): loads a
 * scene, initialises random Gaussians, and runs the iteration loop on the GPU (forward of gs_fwd,
 * then loss / SSIM backward / rasterize backward / projection backward / Adam of gs_train_gpu),
 * with densification, SH degree unlocking, a seeded camera order, checkpoints on the test views,
 * a final evaluation, final.ply, and the figures of result.json.
 *
 * Timing: train_s is the wallclock of the iteration loop (densification included; checkpoint
 * evaluations excluded); kernel times come from timestamp queries around every stage, in one
 * submission per iteration (`timing: production`) or one per stage (`per_kernel`); densify runs
 * on the host and is reported with its wallclock as the `densify` kernel. */
#ifndef GS_TRAIN_H
#define GS_TRAIN_H

#include <signal.h>
#include <stdio.h>

#include "gs_config.h"
#include "gs_result.h"
#include "sw_err.h"

/* Positive return of gs_train_run: stopped on request (the stop flag) before the end. */
#define GS_TRAIN_STOPPED 1

struct gs_train_io {
  volatile sig_atomic_t *stop; /* polled once per iteration; NULL = never stops early */
  FILE *progress;              /* one JSON line every progress_every iterations; NULL = none */
  const char *out_dir;         /* final.ply is written here when cfg->save_ply; NULL = nowhere */
  FILE *warn;                  /* the scene loader's warning (missing frames) line; NULL = none */
};

/* Trains on the scene at scene_path with cfg (validated by the caller) and fills res (config_json
 * is left to the caller). Returns 0, GS_TRAIN_STOPPED (also while the scene loads), or a negative
 * code: SW_EINVAL / SW_ENOTFOUND (scene), SW_EDEVICE (Vulkan), SW_EDIVERGED (NaN or Inf: err says
 * in which buffer, at which stage and iteration), SW_ENOMEM, SW_EIO. */
int gs_train_run(const struct gs_config *cfg, const char *scene_path, const struct gs_train_io *io,
                 struct gs_result *res, struct sw_err *err);

#endif
