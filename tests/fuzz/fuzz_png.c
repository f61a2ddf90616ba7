/* fuzz_png.c: libFuzzer target for the PNG reader (pipeline/gs_png.c, libspng underneath). Any
 * file decodes to width x height RGBA floats in [0, 1] or is refused with SW_EINVAL; the size
 * reader agrees with the full decode. Seeds: the test fixtures and small images of each colour
 * type and depth (tests/fuzz/corpus/png). */
#include <math.h>
#include <stdlib.h>

#include "fuzz_util.h"
#include "gs_png.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *path = fuzz_write("in.png", data, size);
  struct sw_err err = {0};
  float *rgba = NULL;
  uint32_t w = 0, h = 0, sw = 0, sh = 0;
  int depth = 0;
  int rc = gs_png_read_rgba(path, &rgba, &w, &h, &depth, &err);
  fuzz_note("png: %d %ux%u depth %d: %s", rc, w, h, depth, err.msg);
  if (rc) {
    FUZZ_CHECK(rc == SW_EINVAL || rc == SW_ENOMEM, "returned %d: %s", rc, err.msg);
    FUZZ_CHECK(rgba == NULL, "pixels after an error");
    return 0;
  }
  FUZZ_CHECK(w > 0 && h > 0 && depth >= 1 && depth <= 16, "%ux%u depth %d", w, h, depth);
  for (size_t i = 0; i < (size_t)w * h * 4; i++)
    FUZZ_CHECK(rgba[i] >= 0.0f && rgba[i] <= 1.0f, "sample %zu is %g", i, rgba[i]);
  free(rgba);
  sw_err_clear(&err);
  rc = gs_png_read_size(path, &sw, &sh, &err);
  FUZZ_CHECK(rc == 0 && sw == w && sh == h, "size reader: %d %ux%u: %s", rc, sw, sh, err.msg);
  return 0;
}
