/* fuzz_result.c: libFuzzer target for the result check (sw_result_check_text, generated from
 * docs/result.schema.json). Any text is valid or refused with SW_EINVAL and a message; seeds are
 * real results of the H200 benchmark and a generated-scene run (tests/fuzz/corpus/result). */
#include <stdio.h>
#include <stdlib.h>

#include "fuzz_util.h"
#include "sw_result.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct sw_err err = {0};
  char *doc = fuzz_text(data, size);
  int rc = sw_result_check_text(doc, &err);
  fuzz_note("result: %d: %s", rc, err.msg);
  FUZZ_CHECK(rc == 0 || (rc == SW_EINVAL && err.msg[0]) || rc == SW_ENOMEM, "returned %d: '%s'", rc,
             err.msg);
  free(doc);
  return 0;
}
