/* splat_train.c: entry point of `splat-train`, the trainer run by workers (DESIGN.md section 7).
 * Dispatches to one subcommand; the subcommands live in gs_cmd_*.c. */
#include <stdio.h>
#include <string.h>

#include "gs_cmd.h"

static void usage(FILE *f) {
  fprintf(f, "usage: splat-train COMMAND [ARGS]\n"
             "  train   --scene DIR --out DIR [--config FILE] [--set key=value ...] [--progress]\n"
             "  config  print every configuration key with its default and meaning\n"
             "  scene   --kind K --out DIR [--train-views N] [--test-views M] [--resolution R] "
             "[--seed S]\n"
             "  render  --ply FILE --scene DIR --out DIR\n"
             "  devices list the Vulkan devices this machine offers\n");
}

int main(int argc, char **argv) {
  if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
    usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? GS_EXIT_USAGE : GS_EXIT_OK;
  }
  const char *cmd = argv[1];
  if (!strcmp(cmd, "train")) return gs_cmd_train(argc - 1, argv + 1);
  if (!strcmp(cmd, "config")) return gs_cmd_config(argc - 1, argv + 1);
  if (!strcmp(cmd, "scene")) return gs_cmd_scene(argc - 1, argv + 1);
  if (!strcmp(cmd, "render")) return gs_cmd_render(argc - 1, argv + 1);
  if (!strcmp(cmd, "devices")) return gs_cmd_devices(argc - 1, argv + 1);
  fprintf(stderr, "splat-train: unknown command '%s'\n", cmd);
  usage(stderr);
  return GS_EXIT_USAGE;
}
