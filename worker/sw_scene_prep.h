/* sw_scene_prep.h: turns an Assign's scene spec into a scene directory on this worker.
 *
 *   {"generate": {kind, train_views, test_views, resolution, seed}}  -> `splat-train scene ...`
 *                                                                        into CACHE/gen-<sha>/
 *   {"path": DIR}                                                     -> DIR (must exist)
 *   {"url": URL, "sha256": HEX}                                       -> download (libcurl) to
 *       CACHE/<sha>.dl, verify the sha256, unpack archives (libarchive) into CACHE/<sha>/
 *   {}                                                                -> "" (no scene)
 *
 * Results are cached by the sha256 of the spec (generate) or of the content (url), and marked
 * complete only after they are, so an interrupted preparation is redone, never half used.
 * This call blocks (a download, a generation): the worker runs it in a child process. */
#ifndef SW_SCENE_PREP_H
#define SW_SCENE_PREP_H

#include <stddef.h>

#include "sw_err.h"

/* Writes the scene directory into path_out (cap bytes). splat_train may be NULL unless the spec
 * generates. Returns 0, SW_EINVAL (bad spec), SW_ENOTFOUND (path), SW_ENET (download),
 * SW_EIO, SW_ECHILD (generator failed). */
int sw_scene_prepare(const char *scene_json, const char *cache_dir, const char *splat_train,
                     char *path_out, size_t cap, struct sw_err *err);

#endif
