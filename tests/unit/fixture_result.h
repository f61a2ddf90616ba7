/* fixture_result.h: results for the scheduler, store, report and audit tests, made to match
 * docs/result.schema.json (the coordinator stores a result that does not as invalid, out of
 * every verdict). A test writes only the fields it is about; fixture_result() fills the rest of
 * the contract with plain values (one default per field), gives every kernel and checkpoint its
 * required fields, and turns a short hash name ("b1", "scene1") into the sha256 of that name, so
 * that equal names stay equal hashes and different names different ones. */
#ifndef FIXTURE_RESULT_H
#define FIXTURE_RESULT_H

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "sw_result.h"
#include "sw_sha256.h"

/* The sha256 (hex) a fixture's short hash name stands for. */
static inline void fixture_sha(const char *name, char hex[SW_SHA256_HEX_LEN]) {
  sw_sha256_buf(name, strlen(name), hex);
}

static inline int fixture_is_sha(const char *s) {
  if (strlen(s) != 64) return 0;
  for (; *s; s++)
    if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f'))) return 0;
  return 1;
}

/* Fills obj's missing keys from def (recursively for objects); hash names become hashes. */
static inline void fixture_fill(json_t *obj, const json_t *def) {
  const char *k;
  json_t *d;
  json_object_foreach((json_t *)def, k, d) {
    json_t *v = json_object_get(obj, k);
    if (!v) json_object_set_new(obj, k, v = json_deep_copy(d));
    if (json_is_object(v) && json_is_object(d) && strcmp(k, "config") != 0) fixture_fill(v, d);
  }
  json_object_foreach(obj, k, d) {
    size_t n = strlen(k);
    if (n >= 6 && !strcmp(k + n - 6, "sha256") && json_is_string(d) &&
        !fixture_is_sha(json_string_value(d))) {
      char hex[SW_SHA256_HEX_LEN];
      fixture_sha(json_string_value(d), hex);
      json_object_set_new(obj, k, json_string(hex));
    }
  }
}

/* The whole result for a partial one (JSON object text). A partial with "foreign" is a mapped
 * result (a foreign trainer's, built by the worker) and is returned as it is. Caller frees; NULL
 * when partial does not parse or the whole does not match the schema (said on stderr; the test
 * then fails on the NULL), so a fixture cannot feed the tests a result the coordinator refuses. */
static inline char *fixture_result(const char *partial) {
  static const char *const DEF =
      "{\"schema\":\"splatsweep.result/1\",\"status\":\"ok\",\"trainer\":{\"name\":"
      "\"splat-train\",\"version\":\"test\",\"binary_sha256\":\"bin\",\"shaders_sha256\":"
      "\"shaders\"},\"config\":{},\"config_sha256\":\"config\",\"scene\":{\"path\":\"scene\","
      "\"sha256\":\"scene\",\"train_views\":4,\"test_views\":1,\"width\":8,\"height\":8,"
      "\"held_out_split\":false},\"device\":{\"name\":\"llvmpipe\",\"driver\":\"mesa\",\"api\":"
      "\"vulkan 1.3\",\"kind\":\"cpu\"},\"metrics\":{\"train_s\":1,\"wall_s\":1.5,\"iterations\":"
      "100,\"psnr_db\":25,\"ssim\":0.9,\"splats_final\":1000,\"splats_mean\":800,"
      "\"gpu_busy_frac\":0.7},\"kernels\":[],\"checkpoints\":[]}";
  static const char *const KERNEL = "{\"name\":\"adam\",\"calls\":1,\"gpu_ms\":1,\"share\":0.1}";
  static const char *const CHECKPOINT = "{\"iter\":0,\"train_s\":0,\"psnr_db\":0,\"splats\":0}";
  json_t *doc = json_loads(partial, 0, NULL);
  if (!json_is_object(doc)) {
    json_decref(doc);
    return NULL;
  }
  if (json_object_get(doc, "foreign")) {
    struct sw_err err = {0};
    char *text = sw_result_check(doc, &err) ? NULL : json_dumps(doc, JSON_COMPACT);
    if (!text) fprintf(stderr, "fixture_result: %s\n", err.msg);
    json_decref(doc);
    return text;
  }
  json_t *def = json_loads(DEF, 0, NULL), *kdef = json_loads(KERNEL, 0, NULL),
         *cdef = json_loads(CHECKPOINT, 0, NULL);
  fixture_fill(doc, def);
  size_t i;
  json_t *item;
  json_array_foreach(json_object_get(doc, "kernels"), i, item) fixture_fill(item, kdef);
  json_array_foreach(json_object_get(doc, "checkpoints"), i, item) fixture_fill(item, cdef);
  struct sw_err err = {0};
  char *text = sw_result_check(doc, &err) ? NULL : json_dumps(doc, JSON_COMPACT);
  if (!text) fprintf(stderr, "fixture_result: %s\n", err.msg);
  json_decref(def);
  json_decref(kdef);
  json_decref(cdef);
  json_decref(doc);
  return text;
}

#endif
