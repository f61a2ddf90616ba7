/* fake_trainer.c: a test fixture that honours the trainer contract of DESIGN.md section 7
 * (arguments, exit codes, --progress lines, OUT/result.json with the full schema) without
 * training anything. Its metrics are drawn from a seeded normal distribution chosen by --set
 * arguments, so integration tests get realistic, reproducible A/B data in milliseconds.
 *
 *   fake_trainer [train] --scene DIR --out DIR [--config FILE] [--set key=value ...] [--progress]
 *
 * Keys read from --set (all others are accepted and echoed into "config"):
 *   arm=off|on          which arm this run is (the effect applies to "on")
 *   seed=N              seeds the draw together with the arm and the run (fake_run=N, or else
 *                       the name of the --out directory, which differs for every run)
 *   fake_base=S         mean train_s of the off arm (default 100)
 *   fake_effect=F       relative effect of the on arm on train_s (e.g. -0.05 = 5% faster)
 *   fake_cv=F           coefficient of variation of train_s (default 0.005)
 *   fake_psnr=D         mean PSNR (default 36.2), fake_psnr_effect=D (on arm), fake_psnr_sd=D
 *   fake_sleep_s=S      really sleep this long (progress lines meanwhile)
 *   fake_crash=1        die by SIGSEGV after sleeping; fake_hang=1 sleep forever;
 *   fake_ignore_term=1  ignore SIGTERM (so the runner must escalate to SIGKILL)
 *   fake_nan=1          report divergence: exit 4 without result.json
 *   fake_exit=N         exit with code N after writing nothing (bad input = 2, device = 3)
 *   fake_ply_kb=N       also write OUT/final.ply (N KiB of bytes drawn from the run's seed) and
 *                       OUT/renders/test-000.png (a few bytes): artifacts to upload
 *   fake_foreign=1      write a foreign result layout {"timing":{"seconds":..},"quality":{..}}
 *   fake_splats=N       the model size it reports (metrics.splats_final; default 5000)
 *   fake_runaway_file=P the first run to create P (exclusively) runs away as issue 12's float
 *                       runs did: a model 30% larger (splats_final) and 12% more train_s
 * It is never the product's trainer. */
#include <errno.h>
#include <fcntl.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sw_clock.h"
#include "sw_fs.h"
#include "sw_sha256.h"

static volatile sig_atomic_t got_term;

static void on_term(int sig) {
  (void)sig;
  got_term = 1;
}

static const char *get(json_t *cfg, const char *key, const char *def) {
  json_t *v = json_object_get(cfg, key);
  return json_is_string(v) ? json_string_value(v) : def;
}

static double getd(json_t *cfg, const char *key, double def) {
  const char *s = get(cfg, key, NULL);
  if (!s) return def;
  char *end;
  double v = strtod(s, &end);
  return (end == s) ? def : v;
}

/* Sleeps in small steps so SIGTERM is honoured promptly; prints progress lines meanwhile.
 * Returns 1 when stopped by SIGTERM. */
static int fake_sleep(double seconds, int progress, int forever, double train_s) {
  int64_t start = sw_clock_mono_ms();
  int64_t last = start;
  long iter = 0;
  if (progress) {
    /* One line at the start, so every run has at least two (this one and the final one). */
    printf("{\"iter\":0,\"train_s\":0,\"loss\":0.2,\"splats\":1000}\n");
    fflush(stdout);
  }
  for (;;) {
    if (got_term) return 1;
    int64_t now = sw_clock_mono_ms();
    if (!forever && now - start >= (int64_t)(seconds * 1000.0)) return 0;
    if (progress && now - last >= 200) {
      last = now;
      iter += 100;
      double frac = seconds > 0 ? (double)(now - start) / (seconds * 1000.0) : 0;
      printf("{\"iter\":%ld,\"train_s\":%.3f,\"loss\":%.5f,\"splats\":%ld}\n", iter, frac * train_s,
             0.1 / (1.0 + (double)iter / 100.0), 1000 + iter);
      fflush(stdout);
    }
    struct timespec ts = {0, 20 * 1000 * 1000};
    nanosleep(&ts, NULL);
  }
}

static int write_result(const char *out, json_t *cfg, const char *scene, double train_s,
                        double wall_s, double psnr, double splats, int foreign) {
  json_t *root;
  char cfg_sha[SW_SHA256_HEX_LEN], bin_sha[SW_SHA256_HEX_LEN] = "";
  /* The binary's own hash, as a real trainer reports it, so trainer checks see a real value. */
  if (sw_sha256_file("/proc/self/exe", bin_sha, NULL)) bin_sha[0] = '\0';
  char *cfg_text = json_dumps(cfg, JSON_SORT_KEYS | JSON_COMPACT);
  sw_sha256_buf(cfg_text, strlen(cfg_text), cfg_sha);
  free(cfg_text);
  /* It reads no scene: the hash of the scene's path stands in for the scene's hash, and a spec
   * without a scene (an empty {scene}) is named "(none)": the schema wants a path. */
  char scene_sha[SW_SHA256_HEX_LEN];
  sw_sha256_buf(scene, strlen(scene), scene_sha);
  if (foreign) {
    root = json_pack("{s:{s:f},s:{s:f,s:f},s:s}", "timing", "seconds", train_s, "quality", "psnr",
                     psnr, "ssim", 0.98, "tool", "fake-foreign");
  } else {
    double share[3] = {0.5, 0.3, 0.2};
    const char *names[3] = {"rasterize_fwd", "rasterize_bwd", "adam"};
    json_t *kernels = json_array();
    for (int i = 0; i < 3; i++)
      json_array_append_new(kernels, json_pack("{s:s,s:i,s:f,s:f}", "name", names[i], "calls", 1000,
                                               "gpu_ms", train_s * 1000.0 * share[i] * 0.7, "share",
                                               share[i]));
    /* Checkpoints every 250 iterations, quality rising towards the final PSNR as a real
     * trainer's does (iteration 0 is the initial model), for the report's curve chart. */
    json_t *checkpoints = json_array();
    for (int it = 0; it <= 1000; it += 250) {
      double f = it / 1000.0;
      json_array_append_new(
          checkpoints, json_pack("{s:i,s:f,s:f,s:i}", "iter", it, "train_s", f * train_s, "psnr_db",
                                 psnr - 12.0 * (1 - f) * (1 - f), "splats", 1000 + 4 * it));
    }
    root =
        json_pack("{s:s,s:s,s:{s:s,s:s,s:s,s:s},s:O,s:s,s:{s:s,s:s,s:i,s:i,s:i,s:i,s:b},"
                  "s:{s:s,s:s,s:s,s:s},s:{s:f,s:f,s:i,s:f,s:f,s:i,s:i,s:f},s:o,s:o}",
                  "schema", "splatsweep.result/1", "status", "ok", "trainer", "name",
                  "fake_trainer", "version", "1", "binary_sha256", bin_sha, "shaders_sha256",
                  "0000000000000000000000000000000000000000000000000000000000000000", "config", cfg,
                  "config_sha256", cfg_sha, "scene", "path", scene[0] ? scene : "(none)", "sha256",
                  scene_sha, "train_views", 1, "test_views", 0, "width", 1, "height", 1,
                  "held_out_split", 0, "device", "name", "fake", "driver", "none", "api", "none",
                  "kind", "cpu", "metrics", "train_s", train_s, "wall_s", wall_s, "iterations",
                  1000, "psnr_db", psnr, "ssim", 0.98, "splats_final", (int)splats, "splats_mean",
                  3000, "gpu_busy_frac", 0.7, "kernels", kernels, "checkpoints", checkpoints);
  }
  if (!root) {
    fprintf(stderr, "fake_trainer: cannot build result JSON\n");
    return 2;
  }
  /* Echo of the environment the runner set (exec.env), so tests can see it arrived. */
  if (getenv("FAKE_ECHO")) json_object_set_new(root, "fake_echo", json_string(getenv("FAKE_ECHO")));
  char *text = json_dumps(root, JSON_INDENT(2));
  json_decref(root);
  char path[4096];
  snprintf(path, sizeof path, "%s/result.json", out);
  struct sw_err err = {0};
  int rc = sw_fs_write_atomic(path, text, strlen(text), &err);
  free(text);
  if (rc) {
    fprintf(stderr, "fake_trainer: %s\n", err.msg);
    return 2;
  }
  return 0;
}

int main(int argc, char **argv) {
  int64_t t0 = sw_clock_mono_ms();
  const char *scene = "", *out = NULL;
  int progress = 0;
  json_t *cfg = json_object();
  int i = 1;
  if (i < argc && !strcmp(argv[i], "train")) i++;
  for (; i < argc; i++) {
    if (!strcmp(argv[i], "--scene") && i + 1 < argc) {
      scene = argv[++i];
    } else if (!strcmp(argv[i], "--out") && i + 1 < argc) {
      out = argv[++i];
    } else if (!strcmp(argv[i], "--config") && i + 1 < argc) {
      i++; /* The resolved config also arrives through --set; the file is not needed. */
    } else if (!strcmp(argv[i], "--set") && i + 1 < argc) {
      const char *kv = argv[++i];
      const char *eq = strchr(kv, '=');
      if (!eq || eq == kv) {
        fprintf(stderr, "fake_trainer: --set %s: expected key=value\n", kv);
        return 2;
      }
      char key[256];
      snprintf(key, sizeof key, "%.*s", (int)(eq - kv), kv);
      json_object_set_new(cfg, key, json_string(eq + 1));
    } else if (!strcmp(argv[i], "--progress")) {
      progress = 1;
    } else {
      fprintf(stderr, "fake_trainer: unknown argument '%s'\n", argv[i]);
      return 2;
    }
  }
  if (!out) {
    fprintf(stderr, "fake_trainer: --out DIR is required\n");
    return 2;
  }
  struct sw_err err = {0};
  if (sw_fs_mkdir_p(out, &err)) {
    fprintf(stderr, "fake_trainer: %s\n", err.msg);
    return 2;
  }
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = getd(cfg, "fake_ignore_term", 0) != 0 ? SIG_IGN : on_term;
  sigaction(SIGTERM, &sa, NULL);

  int on = !strcmp(get(cfg, "arm", "off"), "on");
  unsigned long seed = (unsigned long)getd(cfg, "seed", 1);
  /* The run directory's name (the worker names it after lease, run and attempt) and the arm make
   * each run's draw distinct but reproducible; fake_run overrides the directory. */
  const char *base_name = strrchr(out, '/') ? strrchr(out, '/') + 1 : out;
  char hex[SW_SHA256_HEX_LEN];
  sw_sha256_buf(base_name, strlen(base_name), hex);
  unsigned long run_key =
      strtoul(get(cfg, "fake_run", NULL) ? get(cfg, "fake_run", "0") : "0", NULL, 10);
  if (!get(cfg, "fake_run", NULL)) {
    hex[8] = '\0';
    run_key = strtoul(hex, NULL, 16);
  }
  seed = seed * 1000003UL + run_key * 7919UL + (on ? 1 : 0);
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(rng, seed);
  double base = getd(cfg, "fake_base", 100.0);
  double cv = getd(cfg, "fake_cv", 0.005);
  double mean = base * (1.0 + (on ? getd(cfg, "fake_effect", 0.0) : 0.0));
  double train_s = mean + gsl_ran_gaussian(rng, cv * mean);
  double psnr = getd(cfg, "fake_psnr", 36.2) + (on ? getd(cfg, "fake_psnr_effect", 0.0) : 0.0) +
                gsl_ran_gaussian(rng, getd(cfg, "fake_psnr_sd", 0.03));
  gsl_rng_free(rng);

  int forever = getd(cfg, "fake_hang", 0) != 0;
  if (fake_sleep(getd(cfg, "fake_sleep_s", 0.0), progress, forever, train_s)) {
    json_decref(cfg);
    return 143;
  }
  if (getd(cfg, "fake_crash", 0) != 0) {
    fflush(NULL);
    /* The default action, even under a sanitizer that would otherwise catch the signal. */
    signal(SIGSEGV, SIG_DFL);
    raise(SIGSEGV);
  }
  if (getd(cfg, "fake_nan", 0) != 0) {
    fprintf(stderr, "fake_trainer: loss is NaN at iteration 1000 (fake_nan)\n");
    json_decref(cfg);
    return 4;
  }
  int code = (int)getd(cfg, "fake_exit", 0);
  if (code) {
    fprintf(stderr, "fake_trainer: exiting with %d as asked (fake_exit)\n", code);
    json_decref(cfg);
    return code;
  }
  if (progress) {
    printf("{\"iter\":1000,\"train_s\":%.3f,\"loss\":0.01,\"splats\":5000}\n", train_s);
    fflush(stdout);
  }
  long ply_kb = (long)getd(cfg, "fake_ply_kb", 0);
  if (ply_kb > 0) {
    char path[4200];
    snprintf(path, sizeof path, "%s/final.ply", out);
    FILE *f = fopen(path, "wb");
    snprintf(path, sizeof path, "%s/renders", out);
    struct sw_err ferr = {0};
    sw_fs_mkdir_p(path, &ferr);
    snprintf(path, sizeof path, "%s/renders/test-000.png", out);
    FILE *r = fopen(path, "wb");
    if (!f || !r) {
      fprintf(stderr, "fake_trainer: cannot write final.ply or renders/ under %s\n", out);
      if (f) fclose(f);
      if (r) fclose(r);
      json_decref(cfg);
      return 3;
    }
    fprintf(f, "ply\nformat binary_little_endian 1.0\nend_header\n");
    unsigned long x = seed | 1;
    for (long b = 0; b < ply_kb * 1024; b++) {
      x = x * 6364136223846793005UL + 1442695040888963407UL;
      fputc((int)((x >> 33) & 0xff), f);
    }
    fprintf(r, "\x89PNG fake render of run %s\n", base_name);
    fclose(f);
    fclose(r);
  }
  double wall_s = (double)(sw_clock_mono_ms() - t0) / 1000.0;
  double splats = getd(cfg, "fake_splats", 5000);
  const char *runaway = get(cfg, "fake_runaway_file", NULL);
  if (runaway) {
    int fd = open(runaway, O_CREAT | O_EXCL | O_WRONLY, 0644);
    if (fd >= 0) { /* this run is the one */
      close(fd);
      splats *= 1.3;
      train_s *= 1.12;
      wall_s *= 1.12;
      fprintf(stderr, "fake_trainer: this run runs away (fake_runaway_file)\n");
    }
  }
  int rc = write_result(out, cfg, scene, train_s, wall_s, psnr, splats,
                        getd(cfg, "fake_foreign", 0) != 0);
  json_decref(cfg);
  return rc;
}
