/* gs_result.c: result.json serialisation (jansson), the atomic write, the executable's sha256 and
 * a validator for the subset of JSON Schema that docs/result.schema.json uses. */
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
      "schema", GS_RESULT_SCHEMA, "status", r->status[0] ? r->status : "ok",
      "trainer", "name", "splat-train", "version", r->version, "binary_sha256", r->binary_sha256,
      "shaders_sha256", r->shaders_sha256,
      "config", cfg, "config_sha256", cfg_sha,
      "scene", "path", r->scene_path, "sha256", r->scene_sha256, "train_views",
      (json_int_t)r->train_views, "test_views", (json_int_t)r->test_views, "width",
      (json_int_t)r->width, "height", (json_int_t)r->height, "held_out_split", r->held_out_split,
      "device", "name", r->device_name, "driver", r->device_driver, "api", r->device_api, "kind",
      r->device_kind,
      "metrics", "train_s", num(r->train_s), "wall_s", num(r->wall_s), "iterations",
      (json_int_t)r->iterations, "psnr_db", num(r->psnr_db), "ssim", num(r->ssim),
      "splats_final", (json_int_t)r->splats_final, "splats_mean", num(r->splats_mean),
      "gpu_busy_frac", num(r->gpu_busy_frac),
      "kernels", kernels, "checkpoints", cps);
  if (!o) {
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

/* ---- JSON Schema subset ---------------------------------------------------------------------- */

static int fail(struct sw_err *err, const char *ptr, const char *fmt, const char *a) {
  char what[256];
  snprintf(what, sizeof what, fmt, a);
  return sw_err_set(err, SW_EINVAL, "%s: %s", ptr[0] ? ptr : "/", what);
}

static int type_ok(const json_t *v, const char *t) {
  if (!strcmp(t, "object")) return json_is_object(v);
  if (!strcmp(t, "array")) return json_is_array(v);
  if (!strcmp(t, "string")) return json_is_string(v);
  if (!strcmp(t, "integer"))
    return json_is_integer(v) || (json_is_real(v) && json_real_value(v) == floor(json_real_value(v)));
  if (!strcmp(t, "number")) return json_is_number(v);
  if (!strcmp(t, "boolean")) return json_is_boolean(v);
  if (!strcmp(t, "null")) return json_is_null(v);
  return -1;
}

/* Only anchored patterns of hex digits with a fixed count are needed (sha256 fields). */
static int pattern_ok(const char *pat, const char *s, int *supported) {
  unsigned n;
  char tail[8];
  *supported = 0;
  if (sscanf(pat, "^[0-9a-f]{%u}%7s", &n, tail) == 2 && !strcmp(tail, "$")) {
    *supported = 1;
    if (strlen(s) != n) return 0;
    for (const char *p = s; *p; p++)
      if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f'))) return 0;
    return 1;
  }
  return 0;
}

static int validate(const json_t *v, const json_t *sch, const char *ptr, struct sw_err *err) {
  if (!json_is_object(sch)) return fail(err, ptr, "%s", "schema node is not an object");
  const char *kw;
  json_t *arg;
  /* Reject keywords outside the supported subset, so the schema cannot promise checks that the
   * validator does not make. */
  static const char *known[] = {"$schema", "$id", "title", "description", "type", "required",
                                "properties", "additionalProperties", "items", "enum", "const",
                                "minimum", "maximum", "minLength", "pattern", "minItems", NULL};
  json_object_foreach((json_t *)sch, kw, arg) {
    int ok = 0;
    for (int i = 0; known[i]; i++)
      if (!strcmp(known[i], kw)) ok = 1;
    if (!ok) return fail(err, ptr, "schema keyword '%s' is not supported by this validator", kw);
  }
  json_t *t = json_object_get(sch, "type");
  if (t) {
    int ok = 0;
    if (json_is_string(t)) {
      ok = type_ok(v, json_string_value(t));
      if (ok < 0) return fail(err, ptr, "unknown schema type '%s'", json_string_value(t));
    } else if (json_is_array(t)) {
      size_t i;
      json_t *e;
      json_array_foreach(t, i, e) if (json_is_string(e) && type_ok(v, json_string_value(e)) == 1)
          ok = 1;
    }
    if (ok != 1) {
      char *ts = json_dumps(t, JSON_ENCODE_ANY | JSON_COMPACT);
      int rc = fail(err, ptr, "expected type %s", ts ? ts : "?");
      free(ts);
      return rc;
    }
  }
  json_t *c = json_object_get(sch, "const");
  if (c && !json_equal((json_t *)v, c)) return fail(err, ptr, "%s", "value differs from const");
  json_t *en = json_object_get(sch, "enum");
  if (en) {
    size_t i;
    json_t *e;
    int ok = 0;
    json_array_foreach(en, i, e) if (json_equal((json_t *)v, e)) ok = 1;
    if (!ok) return fail(err, ptr, "%s", "value not in enum");
  }
  if (json_is_number(v)) {
    double x = json_number_value(v);
    json_t *mn = json_object_get(sch, "minimum"), *mx = json_object_get(sch, "maximum");
    if (mn && x < json_number_value(mn)) return fail(err, ptr, "%s", "below minimum");
    if (mx && x > json_number_value(mx)) return fail(err, ptr, "%s", "above maximum");
  }
  if (json_is_string(v)) {
    json_t *ml = json_object_get(sch, "minLength"), *pat = json_object_get(sch, "pattern");
    if (ml && (json_int_t)strlen(json_string_value(v)) < json_integer_value(ml))
      return fail(err, ptr, "%s", "string shorter than minLength");
    if (pat) {
      int sup;
      int ok = pattern_ok(json_string_value(pat), json_string_value(v), &sup);
      if (!sup) return fail(err, ptr, "pattern '%s' is not supported", json_string_value(pat));
      if (!ok) return fail(err, ptr, "does not match %s", json_string_value(pat));
    }
  }
  if (json_is_object(v)) {
    json_t *req = json_object_get(sch, "required");
    size_t i;
    json_t *e;
    json_array_foreach(req, i, e) {
      if (json_is_string(e) && !json_object_get(v, json_string_value(e)))
        return fail(err, ptr, "missing required property '%s'", json_string_value(e));
    }
    json_t *props = json_object_get(sch, "properties");
    json_t *addl = json_object_get(sch, "additionalProperties");
    const char *k;
    json_t *pv;
    json_object_foreach((json_t *)v, k, pv) {
      char sub[1024];
      snprintf(sub, sizeof sub, "%s/%s", ptr, k);
      json_t *ps = props ? json_object_get(props, k) : NULL;
      if (ps) {
        int rc = validate(pv, ps, sub, err);
        if (rc) return rc;
      } else if (addl && json_is_false(addl)) {
        return fail(err, ptr, "unexpected property '%s'", k);
      } else if (addl && json_is_object(addl)) {
        int rc = validate(pv, addl, sub, err);
        if (rc) return rc;
      }
    }
  }
  if (json_is_array(v)) {
    json_t *mi = json_object_get(sch, "minItems");
    if (mi && (json_int_t)json_array_size(v) < json_integer_value(mi))
      return fail(err, ptr, "%s", "fewer items than minItems");
    json_t *items = json_object_get(sch, "items");
    if (items) {
      size_t i;
      json_t *e;
      json_array_foreach(v, i, e) {
        char sub[1024];
        snprintf(sub, sizeof sub, "%s/%zu", ptr, i);
        int rc = validate(e, items, sub, err);
        if (rc) return rc;
      }
    }
  }
  return 0;
}

int gs_result_validate(const char *doc_text, const char *schema_text, struct sw_err *err) {
  json_error_t je;
  json_t *doc = json_loads(doc_text, 0, &je);
  if (!doc) return sw_err_set(err, SW_EINVAL, "result: not JSON (line %d: %s)", je.line, je.text);
  json_t *sch = json_loads(schema_text, 0, &je);
  if (!sch) {
    json_decref(doc);
    return sw_err_set(err, SW_EINVAL, "schema: not JSON (line %d: %s)", je.line, je.text);
  }
  int rc = validate(doc, sch, "", err);
  json_decref(doc);
  json_decref(sch);
  return rc;
}

int gs_result_validate_files(const char *doc_path, const char *schema_path, struct sw_err *err) {
  char *doc = NULL, *sch = NULL;
  int rc = sw_fs_read_all(doc_path, &doc, NULL, err);
  if (!rc) rc = sw_fs_read_all(schema_path, &sch, NULL, err);
  if (!rc) {
    rc = gs_result_validate(doc, sch, err);
    if (rc) sw_err_prefix(err, "%s", doc_path);
  }
  free(doc);
  free(sch);
  return rc;
}
