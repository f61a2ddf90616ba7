/* gs_cmd_pending.c: TRANSITIONAL. Weak definitions of subcommands whose modules have not landed
 * yet, so that splat-train links while the pipeline is assembled. A real gs_cmd_<name>.c overrides
 * each one; this file is deleted once all have landed. */
#include <stdio.h>

#include "gs_cmd.h"

static int pending(const char *name) {
  fprintf(stderr, "splat-train %s: not available in this build\n", name);
  return GS_EXIT_USAGE;
}

__attribute__((weak)) int gs_cmd_train(int argc, char **argv) { return pending("train"); }
__attribute__((weak)) int gs_cmd_config(int argc, char **argv) { return pending("config"); }
__attribute__((weak)) int gs_cmd_scene(int argc, char **argv) { return pending("scene"); }
__attribute__((weak)) int gs_cmd_render(int argc, char **argv) { return pending("render"); }
__attribute__((weak)) int gs_cmd_devices(int argc, char **argv) { return pending("devices"); }
