/* gs_cmd_train.c: `splat-train train --scene DIR --out DIR [--config FILE] [--set key=value ...]
 * [--progress]`, the trainer contract of DESIGN.md section 7: resolves the configuration
 * (defaults, file, --set in order), trains (gs_train), writes OUT/result.json atomically and maps
 * errors to the contract's exit codes: 2 bad input, 3 device error, 4 diverged, 143 SIGTERM (the
 * current iteration finishes, nothing is written, so no half result is ever left behind). A
 * result.json already in OUT from an earlier run is removed before training starts, so a failed
 * run never leaves a result that looks like its own. A finished run prints one closing line:
 * held-out PSNR and SSIM, splats, training time and where result.json is. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gs_cmd.h"
#include "gs_config.h"
#include "gs_result.h"
#include "gs_train.h"
#include "sw_fs.h"

static volatile sig_atomic_t stop_flag;

static void on_term(int sig) {
  (void)sig;
  stop_flag = 1;
}

static void usage(FILE *f) {
  fprintf(f, "usage: splat-train train --scene DIR --out DIR [--config FILE] [--set key=value ...] "
             "[--progress]\n(splat-train config lists every key)\n");
}

static int exit_code(int rc) {
  switch (rc) {
  case 0: return GS_EXIT_OK;
  case GS_TRAIN_STOPPED: return GS_EXIT_SIGTERM;
  case SW_EINVAL:
  case SW_ENOTFOUND:
  case SW_EIO: return GS_EXIT_USAGE;
  case SW_EDIVERGED: return GS_EXIT_DIVERGED;
  default: return GS_EXIT_DEVICE;
  }
}

int gs_cmd_train(int argc, char **argv) {
  const char *scene = NULL, *out = NULL;
  int progress = 0;
  struct gs_config cfg;
  gs_config_defaults(&cfg);
  struct sw_err err = {0};
  /* The file is applied before any --set, wherever it appears, so --set always wins. */
  for (int i = 1; i < argc; i++)
    if (!strcmp(argv[i], "--config") && i + 1 < argc &&
        gs_config_load_yaml(&cfg, argv[i + 1], &err))
      goto bad_config;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--progress")) {
      progress = 1;
    } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      usage(stdout);
      return GS_EXIT_OK;
    } else if (i + 1 < argc && !strcmp(a, "--scene")) {
      scene = argv[++i];
    } else if (i + 1 < argc && !strcmp(a, "--out")) {
      out = argv[++i];
    } else if (i + 1 < argc && !strcmp(a, "--config")) {
      i++;
    } else if (i + 1 < argc && !strcmp(a, "--set")) {
      if (gs_config_set_kv(&cfg, argv[++i], &err)) goto bad_config;
    } else {
      fprintf(stderr, "splat-train train: unknown or incomplete argument '%s'\n", a);
      usage(stderr);
      return GS_EXIT_USAGE;
    }
  }
  if (!scene || !out) {
    fprintf(stderr, "splat-train train: --scene and --out are required\n");
    usage(stderr);
    return GS_EXIT_USAGE;
  }
  if (gs_config_validate(&cfg, &err)) goto bad_config;
  if (sw_fs_mkdir_p(out, &err)) {
    fprintf(stderr, "splat-train train: output directory: %s\n", err.msg);
    return GS_EXIT_USAGE;
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/result.json", out);
  if (unlink(path) != 0 && errno != ENOENT) {
    fprintf(stderr, "splat-train train: cannot remove the earlier %s: %s\n", path, strerror(errno));
    return GS_EXIT_USAGE;
  }
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_term;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, NULL);

  char *cfg_json = gs_config_to_json(&cfg);
  struct gs_result *res = calloc(1, sizeof *res);
  if (!cfg_json || !res) {
    free(cfg_json);
    free(res);
    fprintf(stderr, "splat-train train: out of memory\n");
    return GS_EXIT_DEVICE;
  }
  res->config_json = cfg_json;
  struct gs_train_io io = {
      .stop = &stop_flag, .progress = progress ? stdout : NULL, .out_dir = out, .warn = stderr};
  int rc = gs_train_run(&cfg, scene, &io, res, &err);
  if (rc == 0) rc = gs_result_write(path, res, &err);
  if (rc == 0)
    printf("splat-train train: %s: held-out PSNR %.2f dB, SSIM %.4f over %lld %s views, %lld "
           "splats, %lld iterations in %.1f s; result in %s\n",
           res->scene_path, res->psnr_db, res->ssim,
           (long long)(res->test_views ? res->test_views : res->train_views),
           res->test_views ? "test" : "training", (long long)res->splats_final,
           (long long)res->iterations, res->train_s, path);
  if (rc == GS_TRAIN_STOPPED)
    fprintf(stderr, "splat-train train: stopped by SIGTERM after %lld iterations\n",
            (long long)res->iterations);
  else if (rc)
    fprintf(stderr, "splat-train train: %s\n", err.msg);
  free(cfg_json);
  free(res);
  return exit_code(rc);
bad_config:
  fprintf(stderr, "splat-train train: %s\n", err.msg);
  return GS_EXIT_USAGE;
}
