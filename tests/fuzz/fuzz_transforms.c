/* fuzz_transforms.c: libFuzzer target for the instant-ngp / nerfstudio reader
 * (pipeline/gs_scene_transforms.c) through gs_scene_load: the input is transforms.json of a scene
 * folder whose images/ holds three real 8x8 RGBA images (f0.png .. f2.png, made once per
 * process), so global and per-frame intrinsics, distortion (undistorted at load), camera models,
 * aabb_scale, missing frames and the split all run. Any input loads or is refused with a clean
 * error; a loaded scene has finite cameras of positive size. Seeds:
 * tests/fuzz/corpus/transforms. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_util.h"
#include "gs_png.h"
#include "gs_scene.h"

static void make_images(void) {
  static int done;
  if (done) return;
  char path[4200];
  snprintf(path, sizeof path, "%s/images", fuzz_dir());
  mkdir(path, 0755);
  uint8_t px[8 * 8 * 4];
  for (size_t i = 0; i < sizeof px; i++) px[i] = (uint8_t)(i * 53);
  for (int k = 0; k < 3; k++) {
    struct sw_err err = {0};
    snprintf(path, sizeof path, "%s/images/f%d.png", fuzz_dir(), k);
    if (gs_png_write8(path, px, 8, 8, 4, &err)) {
      fprintf(stderr, "fuzz_transforms: %s\n", err.msg);
      abort();
    }
  }
  done = 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  make_images();
  fuzz_write("transforms.json", data, size);
  struct gs_scene *sc = NULL;
  struct sw_err err = {0};
  int rc = gs_scene_load(fuzz_dir(), NULL, &sc, &err);
  fuzz_note("transforms: %d: %s", rc, err.msg);
  if (rc) {
    FUZZ_CHECK(rc == SW_EINVAL || rc == SW_ENOTFOUND || rc == SW_ENOMEM || rc == SW_EIO,
               "returned %d: %s", rc, err.msg);
    FUZZ_CHECK(sc == NULL, "scene after an error");
    return 0;
  }
  FUZZ_CHECK(sc->n_train > 0 && sc->width > 0 && sc->height > 0, "%u views of %ux%u", sc->n_train,
             sc->width, sc->height);
  for (uint32_t i = 0; i < sc->n_train; i++) {
    const struct gs_camera *c = &sc->train[i].cam;
    FUZZ_CHECK(c->width > 0 && isfinite(c->fx) && c->fx > 0 && isfinite(c->cy) &&
                   sc->train[i].rgb != NULL,
               "view %u", i);
  }
  gs_scene_destroy(&sc);
  return 0;
}
