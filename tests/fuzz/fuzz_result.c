/* fuzz_result.c: libFuzzer target for the result.json validator (gs_result_validate in
 * pipeline/gs_result.h) against the real schema, docs/result.schema.json. Any text is valid or
 * refused with SW_EINVAL and a message; seeds are real results of the H200 benchmark and a
 * generated-scene run (tests/fuzz/corpus/result). */
#include <stdio.h>
#include <stdlib.h>

#include "fuzz_util.h"
#include "gs_result.h"
#include "sw_fs.h"

static char *schema;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct sw_err err = {0};
  if (!schema && sw_fs_read_all(SW_RESULT_SCHEMA_PATH, &schema, NULL, &err)) {
    fprintf(stderr, "fuzz_result: %s\n", err.msg);
    abort();
  }
  char *doc = fuzz_text(data, size);
  int rc = gs_result_validate(doc, schema, &err);
  fuzz_note("result: %d: %s", rc, err.msg);
  FUZZ_CHECK(rc == 0 || (rc == SW_EINVAL && err.msg[0]) || rc == SW_ENOMEM,
             "returned %d: '%s'", rc, err.msg);
  free(doc);
  return 0;
}
