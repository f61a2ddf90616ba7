/* fuzz_ply.c: libFuzzer target for the PLY reader (pipeline/gs_ply.c): ascii and both binary
 * layouts, any property order, other elements. Any file gives a model of the declared count or
 * SW_EINVAL. Seeds: the test fixtures and small 3DGS files of each format and SH degree
 * (tests/fuzz/corpus/ply). */
#include <stdlib.h>

#include "fuzz_util.h"
#include "gs_model.h"
#include "gs_ply.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *path = fuzz_write("in.ply", data, size);
  struct sw_err err = {0};
  struct gs_model *m = NULL;
  int degree = -1;
  int rc = gs_ply_read(path, &m, &degree, &err);
  fuzz_note("ply: %d degree %d: %s", rc, degree, err.msg);
  if (rc) {
    FUZZ_CHECK(rc == SW_EINVAL || rc == SW_ENOMEM, "returned %d: %s", rc, err.msg);
    FUZZ_CHECK(m == NULL, "model after an error");
    return 0;
  }
  FUZZ_CHECK(m != NULL && degree >= 0 && degree <= 3, "degree %d", degree);
  gs_model_destroy(&m);
  return 0;
}
