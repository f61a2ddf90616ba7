/* fuzz_config.c: libFuzzer target for the trainer's config file loader (gs_config_load_yaml_text,
 * pipeline/gs_config.c: `splat-train train --config FILE`). Any text applies to the defaults or is
 * refused with SW_EINVAL and a FILE:LINE:COLUMN message; an applied config turns into JSON and back
 * through gs_config_set unchanged. Seeds: tests/fuzz/corpus/config. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "gs_config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *yaml = fuzz_text(data, size);
  struct gs_config c;
  gs_config_defaults(&c);
  struct sw_err err = {0};
  int rc = gs_config_load_yaml_text(&c, "f.yaml", yaml, size, &err);
  fuzz_note("config: %d: %s", rc, err.msg);
  if (rc == 0) {
    char *j = gs_config_to_json(&c);
    FUZZ_CHECK(j != NULL, "no JSON for an applied config");
    json_t *o = json_loads(j, 0, NULL);
    FUZZ_CHECK(o != NULL, "config JSON does not parse: %s", j);
    /* Every key's value, set again, gives the same config. */
    struct gs_config d;
    gs_config_defaults(&d);
    const char *k;
    json_t *v;
    json_object_foreach(o, k, v) {
      char *vs = json_is_string(v)
                     ? strdup(json_string_value(v))
                     : json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_REAL_PRECISION(17));
      FUZZ_CHECK(vs != NULL, "key %s", k);
      FUZZ_CHECK(gs_config_set(&d, k, vs, &err) == 0, "%s=%s: %s", k, vs, err.msg);
      free(vs);
    }
    char *j2 = gs_config_to_json(&d);
    FUZZ_CHECK(j2 != NULL && !strcmp(j, j2), "config JSON changes when set again:\n%s\n%s", j, j2);
    free(j2);
    json_decref(o);
    free(j);
  } else {
    FUZZ_CHECK(rc == SW_EINVAL || rc == SW_ENOMEM, "returned %d: %s", rc, err.msg);
    int line = 0, col = 0;
    FUZZ_CHECK(rc != SW_EINVAL ||
                   (sscanf(err.msg, "f.yaml:%d:%d: ", &line, &col) == 2 && line >= 1 && col >= 1),
               "unpositioned error '%s'", err.msg);
  }
  free(yaml);
  return 0;
}
