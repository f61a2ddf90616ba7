/* fuzz_colmap.c: libFuzzer target for the COLMAP reader (pipeline/gs_scene_colmap.c) through
 * gs_scene_load. The input's first byte picks the form ('B' binary, anything else text); the rest
 * is cameras, images and points3D, separated by lines "=====", written into sparse/0/ of a scene
 * folder whose images/ holds three real 8x8 RGBA images (img_00000.png .. img_00002.png, made
 * once per process), so the parsers, the camera models, the pose conversion, the undistortion
 * and the split all run. Any input loads or is refused with a clean error; a loaded scene has
 * finite cameras of positive size. Seeds: tests/fuzz/corpus/colmap (the generator's colmap-bin
 * and colmap-txt scenes of 3 views at 8x8). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz_util.h"
#include "gs_png.h"
#include "gs_scene.h"

static void make_images(void) {
  static int done;
  if (done) return;
  char path[4200];
  snprintf(path, sizeof path, "%s/images", fuzz_dir());
  mkdir(path, 0755);
  snprintf(path, sizeof path, "%s/sparse", fuzz_dir());
  mkdir(path, 0755);
  snprintf(path, sizeof path, "%s/sparse/0", fuzz_dir());
  mkdir(path, 0755);
  uint8_t px[8 * 8 * 4];
  for (size_t i = 0; i < sizeof px; i++) px[i] = (uint8_t)(i * 37);
  for (int k = 0; k < 3; k++) {
    struct sw_err err = {0};
    snprintf(path, sizeof path, "%s/images/img_%05d.png", fuzz_dir(), k);
    if (gs_png_write8(path, px, 8, 8, 4, &err)) {
      fprintf(stderr, "fuzz_colmap: %s\n", err.msg);
      abort();
    }
  }
  done = 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  make_images();
  if (size < 1) return 0;
  const char *ext = data[0] == 'B' ? "bin" : "txt";
  const char *other = data[0] == 'B' ? "txt" : "bin";
  data++;
  size--;
  static const char sep[] = "\n=====\n";
  static const char *names[3] = {"cameras", "images", "points3D"};
  char rel[64];
  for (int f = 0; f < 3; f++) {
    const uint8_t *cut = NULL;
    for (size_t i = 0; !cut && i + (sizeof sep - 1) <= size; i++)
      if (!memcmp(data + i, sep, sizeof sep - 1)) cut = data + i;
    size_t len = cut && f < 2 ? (size_t)(cut - data) : size;
    snprintf(rel, sizeof rel, "sparse/0/%s.%s", names[f], ext);
    fuzz_write(rel, data, len);
    snprintf(rel, sizeof rel, "%s/sparse/0/%s.%s", fuzz_dir(), names[f], other);
    remove(rel);
    if (len + (sizeof sep - 1) <= size) {
      data += len + (sizeof sep - 1);
      size -= len + (sizeof sep - 1);
    } else {
      size = 0;
    }
  }
  struct gs_scene *sc = NULL;
  struct sw_err err = {0};
  int rc = gs_scene_load(fuzz_dir(), NULL, &sc, &err);
  fuzz_note("colmap: %d: %s", rc, err.msg);
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
    FUZZ_CHECK(c->width > 0 && c->height > 0 && isfinite(c->fx) && c->fx > 0 && isfinite(c->cx) &&
                   isfinite(c->viewmat[3]) && sc->train[i].rgb != NULL,
               "view %u", i);
  }
  gs_scene_destroy(&sc);
  return 0;
}
