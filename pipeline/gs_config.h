/* gs_config.h: the trainer's configuration (every key `splat-train train` accepts), its defaults
 * and meanings, and how it is resolved: defaults, then a YAML file (--config), then each
 * `--set key=value` in order. An unknown key or a bad value is an SW_EINVAL error that names the
 * key (and the file position for YAML), which `splat-train train` turns into exit 2.
 *
 * The key table in gs_config.c is the single source of truth: `splat-train config` prints it,
 * result.json's "config" object is written from it, and docs/trainer.md describes it. */
#ifndef GS_CONFIG_H
#define GS_CONFIG_H

#include <stdint.h>
#include <stdio.h>

#include "sw_err.h"

#define GS_CONFIG_MAX_CHECKPOINTS 64
#define GS_CONFIG_STR_MAX 128

/* Variant switches. Each is a real code path (specialization constant or host path). */
enum gs_timing { GS_TIMING_PRODUCTION = 0, GS_TIMING_PER_KERNEL = 1 };
enum gs_binning { GS_BINNING_RESIDENT = 0, GS_BINNING_TRANSIENT = 1 };
enum gs_radix_passes { GS_RADIX_PASSES_SKIP = 0, GS_RADIX_PASSES_FULL = 1 };
enum gs_radix_scatter { GS_RADIX_SCATTER_SERIAL = 0, GS_RADIX_SCATTER_BALLOT = 1 };
enum gs_onoff { GS_OFF = 0, GS_ON = 1 };
enum gs_fwd_accum { GS_FWD_ACCUM_F32 = 0, GS_FWD_ACCUM_F16 = 1 };
enum gs_ssim_walk {
  GS_SSIM_WALK_SCALAR = 0,
  GS_SSIM_WALK_FLOAT4 = 1,
  GS_SSIM_WALK_FLOAT4_RECIP = 2
};
enum gs_atomic_spread { GS_ATOMIC_SPREAD_LANE0 = 0, GS_ATOMIC_SPREAD_LANES = 1 };
enum gs_adam_mode { GS_ADAM_ALL = 0, GS_ADAM_VISIBLE = 1 };
/* auto: splat where the device has what it needs (gs_tk_splat_bucket), else pixel. */
enum gs_raster_bwd { GS_RASTER_BWD_PIXEL = 0, GS_RASTER_BWD_SPLAT = 1, GS_RASTER_BWD_AUTO = 2 };
enum gs_tile_cull { GS_TILE_CULL_BOX = 0, GS_TILE_CULL_ELLIPSE = 1 };
enum gs_ssim_layout { GS_SSIM_LAYOUT_INTERLEAVED = 0, GS_SSIM_LAYOUT_PLANAR = 1 };
enum gs_sort_order { GS_SORT_PAIRS = 0, GS_SORT_DEPTH_FIRST = 1 };
enum gs_bwd_run_pixels {
  GS_RUN_PIXELS_ROWS = 0,
  GS_RUN_PIXELS_ACTIVE = 1,
  GS_RUN_PIXELS_COVERED = 2
};
enum gs_bwd_step {
  GS_BWD_STEP_BRANCH = 0,
  GS_BWD_STEP_SELECT = 1,
  GS_BWD_STEP_LEAN = 2,
  GS_BWD_STEP_DOT = 3
};
enum gs_fwd_step {
  GS_FWD_STEP_BRANCH = 0,
  GS_FWD_STEP_SELECT = 1,
  GS_FWD_STEP_GROUP = 2,
  GS_FWD_STEP_GROUP8 = 3
};
enum gs_fwd_cull { GS_FWD_CULL_OFF = 0, GS_FWD_CULL_ROWS = 1 };
enum gs_fwd_stage_mode { GS_FWD_STAGE_DIRECT = 0, GS_FWD_STAGE_PREFETCH = 1 };
enum gs_fwd_order { GS_FWD_ORDER_ROWS = 0, GS_FWD_ORDER_DENSE_FIRST = 1 };
enum gs_project_sh { GS_PROJECT_SH_SCALAR = 0, GS_PROJECT_SH_VEC4 = 1 };
enum gs_bwd_drain { GS_BWD_DRAIN_FULL = 0, GS_BWD_DRAIN_TRIM = 1 };
enum gs_bwd_state { GS_BWD_STATE_SHARED = 0, GS_BWD_STATE_GLOBAL = 1 };
/* bwd_chain: runs a subgroup walks back to back, 1 << value */
enum gs_bwd_chain { GS_BWD_CHAIN_1 = 0, GS_BWD_CHAIN_2 = 1, GS_BWD_CHAIN_4 = 2 };
enum gs_project_adam { GS_PROJECT_ADAM_SEPARATE = 0, GS_PROJECT_ADAM_FUSED = 1 };
/* Recipe switches. */
enum gs_init_box { GS_INIT_BOX_AABB = 0, GS_INIT_BOX_EXTENT = 1 };
enum gs_init_kind { GS_INIT_AUTO = 0, GS_INIT_RANDOM = 1, GS_INIT_POINTS = 2 };
enum gs_missing_frames { GS_MISSING_SKIP = 0, GS_MISSING_ERROR = 1 };
enum gs_densify_visible { GS_DENSIFY_VISIBLE_RADII = 0, GS_DENSIFY_VISIBLE_TILES = 1 };
enum gs_clone_opacity { GS_CLONE_OPACITY_COPY = 0, GS_CLONE_OPACITY_SHARE = 1 };

/* The fully resolved configuration. Plain data: copy it freely. */
struct gs_config {
  /* schedule */
  int32_t iterations;
  int64_t seed;
  int32_t sh_degree;
  int32_t sh_every;         /* iterations per unlocked SH degree */
  int32_t resolution_scale; /* integer downscale factor of the images (1 = full) */
  int32_t background;       /* enum gs_background of gs_scene.h: 0 white, 1 black */
  int32_t init_points;
  double scene_extent;     /* 0: from the cameras; else the extent everything scale-relative uses */
  double init_extent;      /* random init box: times the content bounds (aabb) or the extent */
  int32_t init_box;        /* enum gs_init_box */
  int32_t init;            /* enum gs_init_kind */
  int32_t scene_normalize; /* enum gs_scene_normalize of gs_scene.h: auto, on, off */
  int32_t missing_frames;  /* enum gs_missing_frames */
  /* loss */
  double lambda_dssim;
  int32_t ssim_padding; /* enum gs_ssim_padding (gs_types.h): same | valid */
  /* rendering */
  double alpha_max; /* alpha = min(alpha_max, o exp(-sigma)), forward and backward */
  /* optimiser */
  double lr_means;        /* initial position lr, multiplied by the scene extent */
  double lr_means_final;  /* final position lr, multiplied by the scene extent */
  int32_t lr_means_steps; /* decay length in iterations (0 = iterations) */
  double lr_sh_dc;
  double lr_sh_rest;
  double lr_opacity;
  double lr_scales;
  double lr_quats;
  double adam_beta1;
  double adam_beta2;
  double adam_eps;
  /* densification */
  int32_t densify_from;
  int32_t densify_until;
  int32_t densify_every;
  double grad_threshold;
  double percent_dense; /* clone when max scale <= percent_dense * extent, else split */
  double prune_opacity;
  int32_t prune_screen;         /* prune radius in pixels after prune_big_after (0 = off) */
  double prune_world;           /* prune max scale > prune_world * extent after prune_big_after */
  int32_t prune_big_after;      /* world/screen-size pruning only after this iteration */
  int32_t opacity_reset_every;  /* 0 = never (gsplat 1.5.3) */
  int32_t opacity_reset_margin; /* no reset with fewer iterations than this left */
  int32_t densify_visible;      /* enum gs_densify_visible: which views count in the statistics */
  int32_t white_reset;          /* 1: reset at densify_from on white backgrounds (Inria) */
  int32_t max_splats;           /* densification stops growing beyond this (0 = no limit) */
  int32_t clone_opacity;        /* enum gs_clone_opacity: a clone copies or shares the opacity */
  /* evaluation */
  int32_t test_every; /* hold out every Nth view when a scene has no test split */
  int32_t checkpoints[GS_CONFIG_MAX_CHECKPOINTS];
  int32_t n_checkpoints;
  int32_t progress_every;
  int32_t save_ply;       /* write OUT/final.ply */
  int32_t checkpoint_ply; /* write OUT/checkpoint-ITER.ply at every checkpoint */
  /* device and timing */
  char device[GS_CONFIG_STR_MAX]; /* name substring or index; "" = first suitable */
  int32_t timing;                 /* enum gs_timing */
  int32_t in_flight;              /* iterations submitted before the host waits (1 or 2) */
  /* variants */
  int32_t binning;
  int32_t radix_passes;
  int32_t radix_scatter;
  int32_t sigma_skip;
  int32_t fwd_accum;
  int32_t fwd_step;   /* enum gs_fwd_step */
  int32_t fwd_cull;   /* enum gs_fwd_cull */
  int32_t fwd_stage;  /* enum gs_fwd_stage_mode */
  int32_t fwd_order;  /* enum gs_fwd_order */
  int32_t project_sh; /* enum gs_project_sh */
  int32_t bwd_warp_skip;
  int32_t ssim_walk;
  int32_t atomic_spread;
  int32_t adam;
  int32_t deterministic;  /* 1: bit-identical runs (fixed-point rasterize backward) */
  int32_t rasterize_bwd;  /* enum gs_raster_bwd */
  int32_t tile_cull;      /* enum gs_tile_cull */
  int32_t ssim_layout;    /* enum gs_ssim_layout */
  int32_t sort;           /* enum gs_sort_order */
  int32_t bwd_run_pixels; /* enum gs_bwd_run_pixels */
  int32_t bwd_step;       /* enum gs_bwd_step */
  int32_t bwd_drain;      /* enum gs_bwd_drain */
  int32_t bwd_state;      /* enum gs_bwd_state */
  int32_t bwd_chain;      /* enum gs_bwd_chain */
  int32_t project_adam;   /* enum gs_project_adam */
};

/* Fills cfg with every default. */
void gs_config_defaults(struct gs_config *cfg);

/* Sets one key from its textual value (as in `--set key=value`). Lists (checkpoints) take
 * "1000,2000" or "[1000, 2000]". Unknown key or bad value -> SW_EINVAL naming it. */
int gs_config_set(struct gs_config *cfg, const char *key, const char *value, struct sw_err *err);

/* Parses "key=value" and calls gs_config_set. */
int gs_config_set_kv(struct gs_config *cfg, const char *kv, struct sw_err *err);

/* Largest config file gs_config_load_yaml reads (bytes). */
#define GS_CONFIG_FILE_MAX (256u * 1024u)

/* YAML nodes a config file may hold (sw_yaml limits; it has a few dozen keys). */
#define GS_CONFIG_NODES_MAX 4096

/* Applies a YAML file: a mapping of key: value (checkpoints may be a sequence). Errors name the
 * file, line and column. A file over GS_CONFIG_FILE_MAX is refused before it is parsed; text that
 * is not UTF-8, a second document, a key twice or more than GS_CONFIG_NODES_MAX nodes are refused
 * by sw_yaml_load. Returns 0, SW_EINVAL, SW_ENOTFOUND, SW_EIO or SW_ENOMEM. */
int gs_config_load_yaml(struct gs_config *cfg, const char *path, struct sw_err *err);
/* The same for text[0, len) already in memory (no NUL needed), errors naming path. */
int gs_config_load_yaml_text(struct gs_config *cfg, const char *path, const char *text, size_t len,
                             struct sw_err *err);

/* Cross-key checks (densify_from <= densify_until, sh_degree range, ...). */
int gs_config_validate(const struct gs_config *cfg, struct sw_err *err);

/* The configuration as a JSON object text (keys sorted, compact; caller frees), which is what
 * result.json embeds and what config_sha256 hashes. Returns NULL when out of memory. */
char *gs_config_to_json(const struct gs_config *cfg);

/* Prints every key with its type, default and meaning (for `splat-train config`). */
void gs_config_print_help(FILE *f);

/* Prints the resolved configuration as YAML, loadable by gs_config_load_yaml. */
void gs_config_print_yaml(const struct gs_config *cfg, FILE *f);

/* Name of enum value v of the key (e.g. "ballot" for radix_scatter 1), or NULL. */
const char *gs_config_enum_name(const char *key, int v);

#endif
