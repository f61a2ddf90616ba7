/* fuzz_scene.c: libFuzzer target for the NeRF-synthetic scene loader (pipeline/gs_scene.c): the
 * input is transforms_train.json, and after a line "=====" transforms_test.json, of a scene folder
 * that holds three real 4x4 RGBA images (train/r_0.png .. r_2.png, made once per process), so
 * the JSON reader, the frame paths, the camera conversion, the held-out split and the hash all
 * run. Any input loads or is refused with SW_EINVAL / SW_ENOTFOUND; a loaded scene has views of
 * one size. Seeds: tests/fuzz/corpus/scene. */
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
  snprintf(path, sizeof path, "%s/train", fuzz_dir());
  mkdir(path, 0755);
  uint8_t px[4 * 4 * 4];
  for (size_t i = 0; i < sizeof px; i++) px[i] = (uint8_t)(i * 37);
  for (int k = 0; k < 3; k++) {
    struct sw_err err = {0};
    snprintf(path, sizeof path, "%s/train/r_%d.png", fuzz_dir(), k);
    if (gs_png_write8(path, px, 4, 4, 4, &err)) {
      fprintf(stderr, "fuzz_scene: %s\n", err.msg);
      abort();
    }
  }
  done = 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  make_images();
  static const char sep[] = "\n=====\n";
  const uint8_t *cut = NULL;
  for (size_t i = 0; !cut && i + (sizeof sep - 1) <= size; i++)
    if (!memcmp(data + i, sep, sizeof sep - 1)) cut = data + i;
  size_t train_len = cut ? (size_t)(cut - data) : size;
  fuzz_write("transforms_train.json", data, train_len);
  char test_path[4200];
  snprintf(test_path, sizeof test_path, "%s/transforms_test.json", fuzz_dir());
  if (cut)
    fuzz_write("transforms_test.json", cut + sizeof sep - 1, size - train_len - (sizeof sep - 1));
  else
    remove(test_path);
  struct gs_scene *sc = NULL;
  struct sw_err err = {0};
  int rc = gs_scene_load(fuzz_dir(), NULL, &sc, &err);
  fuzz_note("scene: %d: %s", rc, err.msg);
  if (rc) {
    FUZZ_CHECK(rc == SW_EINVAL || rc == SW_ENOTFOUND || rc == SW_ENOMEM || rc == SW_EIO,
               "returned %d: %s", rc, err.msg);
    FUZZ_CHECK(sc == NULL, "scene after an error");
    return 0;
  }
  FUZZ_CHECK(sc->n_train > 0 && sc->width > 0 && sc->height > 0, "%u views of %ux%u", sc->n_train,
             sc->width, sc->height);
  for (uint32_t i = 0; i < sc->n_train; i++)
    FUZZ_CHECK(sc->train[i].cam.width == sc->width && sc->train[i].rgb != NULL, "view %u", i);
  gs_scene_destroy(&sc);
  return 0;
}
