/* fuzz_spec.c: libFuzzer target for the sweep spec loader (common/sw_spec.c) and what is derived
 * from a loaded spec (sw_spec_view.c). Any text loads or is refused with SW_EINVAL and a
 * FILE:LINE:COLUMN message (docs/spec.md "Errors"); a loaded spec writes its normalised JSON,
 * resolves both arms of a gate and every point of a grid. Seeds: the shipped sweeps, the test
 * fixtures and an alias bomb (tests/fuzz/corpus/spec). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "sw_spec.h"

static void use(const struct sw_spec *s) {
  struct sw_err err = {0};
  json_t *j = sw_spec_to_json(s);
  FUZZ_CHECK(j != NULL, "no JSON for a loaded spec");
  char *text = json_dumps(j, JSON_COMPACT);
  FUZZ_CHECK(text != NULL, "JSON of a loaded spec does not dump");
  free(text);
  json_decref(j);
  if (s->kind == SW_SPEC_GATE) {
    struct sw_spec_config off, on;
    FUZZ_CHECK(sw_spec_resolve_arm(s, "off", &off, &err) == 0, "arm off: %s", err.msg);
    FUZZ_CHECK(sw_spec_resolve_arm(s, "on", &on, &err) == 0, "arm on: %s", err.msg);
    sw_spec_config_clear(&off);
    sw_spec_config_clear(&on);
    return;
  }
  struct sw_spec_point *pts = NULL;
  size_t n = 0;
  FUZZ_CHECK(sw_spec_grid_expand(s, &pts, &n, &err) == 0 && n > 0, "grid: %s", err.msg);
  for (size_t i = 0; i < n && i < 64; i++) {
    struct sw_spec_config c;
    FUZZ_CHECK(sw_spec_resolve_point(s, &pts[i], &c, &err) == 0, "point %zu: %s", i, err.msg);
    sw_spec_config_clear(&c);
  }
  sw_spec_points_free(&pts, n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *yaml = fuzz_text(data, size);
  struct sw_spec *s = NULL;
  struct sw_err err = {0};
  int rc = sw_spec_load_string(yaml, "f.yaml", &s, &err);
  fuzz_note("spec: %d: %s", rc, err.msg);
  if (rc == 0) {
    FUZZ_CHECK(s != NULL, "loaded without a spec");
    use(s);
    sw_spec_destroy(&s);
  } else {
    FUZZ_CHECK(s == NULL, "a refused spec was returned");
    FUZZ_CHECK(rc == SW_EINVAL || rc == SW_ENOMEM, "returned %d: %s", rc, err.msg);
    int line = 0, col = 0;
    FUZZ_CHECK(rc != SW_EINVAL || sscanf(err.msg, "f.yaml:%d:%d: ", &line, &col) == 2,
               "unpositioned error '%s'", err.msg);
  }
  free(yaml);
  return 0;
}
