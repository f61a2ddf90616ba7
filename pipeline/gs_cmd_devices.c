/* gs_cmd_devices.c: `splat-train devices [--json]`: lists the Vulkan devices of this machine with
 * what the pipeline cares about (kind, driver, API, subgroup size, float atomics), marking the one
 * gs_vk_open() would choose (GS_DEVICE honoured). */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gs_cmd.h"
#include "gs_vk.h"

static void usage(FILE *f) { fprintf(f, "usage: splat-train devices [--json]\n"); }

int gs_cmd_devices(int argc, char **argv) {
  int json = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--json")) {
      json = 1;
    } else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
      usage(stdout);
      return GS_EXIT_OK;
    } else {
      fprintf(stderr, "splat-train devices: unknown argument '%s'\n", argv[i]);
      usage(stderr);
      return GS_EXIT_USAGE;
    }
  }
  struct sw_err err = {0};
  struct gs_vk_device_info *devs = NULL;
  uint32_t n = 0;
  if (gs_vk_list_devices(&devs, &n, &err)) {
    fprintf(stderr, "splat-train devices: %s\n", err.msg);
    return GS_EXIT_DEVICE;
  }
  /* Which one would be chosen: open it (cheap) and compare indices. */
  int64_t chosen = -1;
  gs_vk_t *vk = NULL;
  struct gs_vk_opts opts = {.pipeline_cache = ""};
  struct sw_err oerr = {0};
  if (gs_vk_open(&vk, &opts, &oerr) == 0) {
    chosen = gs_vk_info(vk)->index;
    gs_vk_close(&vk);
  }
  if (json) {
    json_t *arr = json_array();
    for (uint32_t i = 0; i < n; i++) {
      const struct gs_vk_device_info *d = &devs[i];
      json_array_append_new(
          arr,
          json_pack("{s:i, s:s, s:s, s:s, s:s, s:i, s:i, s:b, s:b, s:b, s:b, s:b, s:b, s:b}",
                    "index", (int)d->index, "name", d->name, "driver", d->driver, "api", d->api,
                    "kind", gs_vk_kind_name(d->kind), "subgroup_size", (int)d->subgroup_size,
                    "min_subgroup_size", (int)d->min_subgroup_size, "subgroup_shuffle_up",
                    d->subgroup_shuffle_up, "subgroup_shuffle", d->subgroup_shuffle,
                    "float_atomic_add", d->float_atomic_add, "shared_float_atomic_add",
                    d->shared_float_atomic_add, "subgroup_ballot", d->subgroup_ballot,
                    "unified_memory", d->unified_memory, "chosen", (int64_t)i == chosen));
    }
    json_t *root = json_pack("{s:o}", "devices", arr);
    if (chosen < 0) json_object_set_new(root, "open_error", json_string(oerr.msg));
    char *s = json_dumps(root, JSON_INDENT(2));
    if (s) printf("%s\n", s);
    free(s);
    json_decref(root);
  } else {
    for (uint32_t i = 0; i < n; i++) {
      const struct gs_vk_device_info *d = &devs[i];
      printf("%c %u: %s\n    kind %s, %s, driver %s\n    subgroup size %u (min %u), ballot %s, "
             "shuffle up %s, indexed shuffle %s, float atomic add %s (shared %s), %s memory\n",
             (int64_t)i == chosen ? '*' : ' ', d->index, d->name, gs_vk_kind_name(d->kind), d->api,
             d->driver, d->subgroup_size, d->min_subgroup_size, d->subgroup_ballot ? "yes" : "no",
             d->subgroup_shuffle_up ? "yes" : "no", d->subgroup_shuffle ? "yes" : "no",
             d->float_atomic_add ? "yes" : "no", d->shared_float_atomic_add ? "yes" : "no",
             d->unified_memory ? "unified" : "device-local");
    }
    if (chosen < 0)
      printf("no device can be opened: %s\n", oerr.msg);
    else
      printf("(* = chosen; override with GS_DEVICE=<index or name>)\n");
  }
  free(devs);
  return chosen < 0 ? GS_EXIT_DEVICE : GS_EXIT_OK;
}
