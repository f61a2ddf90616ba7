/* gs_result.h: the trainer's result.json (DESIGN.md section 7, schema "splatsweep.result/1",
 * documented in docs/result-schema.md and docs/result.schema.json): a plain struct the trainer
 * fills, and a writer that serialises it with jansson and writes it atomically (sw_fs_write_atomic,
 * so a reader never sees a half-written file). What it writes is checked against the schema by
 * sw_result_check (common/sw_result.h), generated from docs/result.schema.json. */
#ifndef GS_RESULT_H
#define GS_RESULT_H

#include <stdint.h>

#include "sw_err.h"
#include "sw_sha256.h"

#define GS_RESULT_SCHEMA "splatsweep.result/1"
#define GS_RESULT_MAX_KERNELS 32
#define GS_RESULT_MAX_CHECKPOINTS 64

struct gs_result_kernel {
  char name[32];
  uint64_t calls;
  double gpu_ms;
  double share;
};

struct gs_result_checkpoint {
  int64_t iter;
  double train_s;
  double psnr_db;
  int64_t splats;
};

struct gs_result {
  char status[16]; /* "ok" */
  /* trainer */
  char version[32];
  char binary_sha256[SW_SHA256_HEX_LEN];
  char shaders_sha256[SW_SHA256_HEX_LEN];
  /* config: the resolved configuration as JSON object text (borrowed) */
  const char *config_json;
  /* scene */
  char scene_path[4096];
  char scene_sha256[SW_SHA256_HEX_LEN];
  int64_t train_views, test_views, width, height;
  int held_out_split;
  /* device */
  char device_name[256];
  char device_driver[256];
  char device_api[32];
  char device_kind[16]; /* discrete | integrated | virtual | cpu | other */
  char raster_bwd[8];   /* the rasterize backward that ran: pixel | splat ("" = not known) */
  /* metrics */
  double train_s, wall_s;
  int64_t iterations;
  double psnr_db, ssim;
  int64_t splats_final;
  double splats_mean;
  double gpu_busy_frac;
  /* Iterations recorded and submitted again after a pair-arena overflow, the one submitted
   * behind an overflowed one included (not in result.json: the training is the same without). */
  uint64_t redone;
  /* kernels and checkpoints */
  struct gs_result_kernel kernels[GS_RESULT_MAX_KERNELS];
  uint32_t n_kernels;
  struct gs_result_checkpoint checkpoints[GS_RESULT_MAX_CHECKPOINTS];
  uint32_t n_checkpoints;
};

/* The result as JSON text (caller frees), or NULL with SW_EINVAL (config_json not an object) /
 * SW_ENOMEM in err. config_sha256 is the sha256 of config_json exactly as given. */
char *gs_result_to_json(const struct gs_result *r, struct sw_err *err);

/* Serialises and writes path atomically. Returns 0, SW_EIO, SW_EINVAL or SW_ENOMEM. */
int gs_result_write(const char *path, const struct gs_result *r, struct sw_err *err);

/* sha256 of the running executable (/proc/self/exe). */
int gs_result_self_sha256(char hex[SW_SHA256_HEX_LEN], struct sw_err *err);

#endif
