/* gs_cmd_config.c: `splat-train config [--yaml] [--config FILE] [--set key=value ...]`: prints
 * every configuration key with its type, default and meaning; with --yaml, prints the resolved
 * configuration (defaults, file, --set applied) as a YAML file that --config accepts. */
#include <stdio.h>
#include <string.h>

#include "gs_cmd.h"
#include "gs_config.h"

int gs_cmd_config(int argc, char **argv) {
  struct gs_config cfg;
  gs_config_defaults(&cfg);
  int yaml = 0;
  struct sw_err err = {0};
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--yaml")) {
      yaml = 1;
    } else if (!strcmp(argv[i], "--config") && i + 1 < argc) {
      if (gs_config_load_yaml(&cfg, argv[++i], &err)) goto bad;
      yaml = 1;
    } else if (!strcmp(argv[i], "--set") && i + 1 < argc) {
      if (gs_config_set_kv(&cfg, argv[++i], &err)) goto bad;
      yaml = 1;
    } else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
      printf("usage: splat-train config [--yaml] [--config FILE] [--set key=value ...]\n");
      return GS_EXIT_OK;
    } else {
      fprintf(stderr, "splat-train config: unknown argument '%s'\n", argv[i]);
      return GS_EXIT_USAGE;
    }
  }
  if (gs_config_validate(&cfg, &err)) goto bad;
  if (yaml)
    gs_config_print_yaml(&cfg, stdout);
  else
    gs_config_print_help(stdout);
  return GS_EXIT_OK;
bad:
  fprintf(stderr, "splat-train config: %s\n", err.msg);
  return GS_EXIT_USAGE;
}
