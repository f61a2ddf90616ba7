/* gs_result.c: result.json serialisation (jansson), the atomic write and the executable's sha256.
 * (The check against docs/result.schema.json is sw_result_check, generated from the schema.) */
#include "gs_result.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sw_fs.h"

/* jansson refuses NaN and Inf; a result must never carry them, and a metric that could not be
 * measured is written as 0 rather than failing the whole write. */
static json_t *num(double v) { return json_real(isfinite(v) ? v : 0.0); }

char *gs_result_to_json(const struct gs_result *r, struct sw_err *err) {
  json_error_t jerr;
  const char *cfg_text = r->config_json ? r->config_json : "{}";
  json_t *cfg = json_loads(cfg_text, 0, &jerr);
  if (!cfg || !json_is_object(cfg)) {
    json_decref(cfg);
    sw_err_set(err, SW_EINVAL, "result: config is not a JSON object: %s", jerr.text);
    return NULL;
  }
  char cfg_sha[SW_SHA256_HEX_LEN];
  sw_sha256_buf(cfg_text, strlen(cfg_text), cfg_sha);

  json_t *kernels = json_array();
  for (uint32_t i = 0; i < r->n_kernels; i++) {
    const struct gs_result_kernel *k = &r->kernels[i];
    json_array_append_new(kernels, json_pack("{s:s, s:I, s:o, s:o}", "name", k->name, "calls",
                                             (json_int_t)k->calls, "gpu_ms", num(k->gpu_ms),
                                             "share", num(k->share)));
  }
  json_t *cps = json_array();
  for (uint32_t i = 0; i < r->n_checkpoints; i++) {
    const struct gs_result_checkpoint *c = &r->checkpoints[i];
    json_array_append_new(cps, json_pack("{s:I, s:o, s:o, s:I}", "iter", (json_int_t)c->iter,
                                         "train_s", num(c->train_s), "psnr_db", num(c->psnr_db),
                                         "splats", (json_int_t)c->splats));
  }
  json_t *o = json_pack(
      "{s:s, s:s,"
      " s:{s:s, s:s, s:s, s:s},"
      " s:o, s:s,"
      " s:{s:s, s:s, s:I, s:I, s:I, s:I, s:b},"
      " s:{s:s, s:s, s:s, s:s},"
      " s:{s:o, s:o, s:I, s:o, s:o, s:I, s:o, s:o},"
      " s:o, s:o}",
      "schema", GS_RESULT_SCHEMA, "status", r->status[0] ? r->status : "ok", "trainer", "name",
      "splat-train", "version", r->version, "binary_sha256", r->binary_sha256, "shaders_sha256",
      r->shaders_sha256, "config", cfg, "config_sha256", cfg_sha, "scene", "path", r->scene_path,
      "sha256", r->scene_sha256, "train_views", (json_int_t)r->train_views, "test_views",
      (json_int_t)r->test_views, "width", (json_int_t)r->width, "height", (json_int_t)r->height,
      "held_out_split", r->held_out_split, "device", "name", r->device_name, "driver",
      r->device_driver, "api", r->device_api, "kind", r->device_kind, "metrics", "train_s",
      num(r->train_s), "wall_s", num(r->wall_s), "iterations", (json_int_t)r->iterations, "psnr_db",
      num(r->psnr_db), "ssim", num(r->ssim), "splats_final", (json_int_t)r->splats_final,
      "splats_mean", num(r->splats_mean), "gpu_busy_frac", num(r->gpu_busy_frac), "kernels",
      kernels, "checkpoints", cps);
  if (!o) {
    sw_err_set(err, SW_ENOMEM, "result: building the JSON object failed");
    return NULL;
  }
  if (r->raster_bwd[0] && json_object_set_new(json_object_get(o, "device"), "rasterize_bwd",
                                              json_string(r->raster_bwd))) {
    json_decref(o);
    sw_err_set(err, SW_ENOMEM, "result: building the JSON object failed");
    return NULL;
  }
  char *s = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
  json_decref(o);
  if (!s) sw_err_set(err, SW_ENOMEM, "result: serialising JSON failed");
  return s;
}

int gs_result_write(const char *path, const struct gs_result *r, struct sw_err *err) {
  char *s = gs_result_to_json(r, err);
  if (!s) return err && err->code ? err->code : SW_ENOMEM;
  size_t l = strlen(s);
  s[l] = '\n'; /* replace the NUL: the file ends with a newline */
  int rc = sw_fs_write_atomic(path, s, l + 1, err);
  free(s);
  return rc;
}

int gs_result_self_sha256(char hex[SW_SHA256_HEX_LEN], struct sw_err *err) {
  char self[4096];
  int rc = sw_fs_self_exe(self, sizeof self, err);
  return rc ? rc : sw_sha256_file(self, hex, err);
}
