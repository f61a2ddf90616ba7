/* gs_cmd.h: the subcommands of `splat-train`. Each lives in its own file (gs_cmd_<name>.c);
 * splat_train.c only dispatches. Each returns the process exit code of the trainer contract
 * (DESIGN.md section 7): 0 ok, 2 bad input, 3 device error, 4 diverged, 143 SIGTERM. */
#ifndef GS_CMD_H
#define GS_CMD_H

enum gs_exit {
  GS_EXIT_OK = 0,
  GS_EXIT_USAGE = 2,    /* bad input: config, scene, arguments */
  GS_EXIT_DEVICE = 3,   /* Vulkan / GPU failure */
  GS_EXIT_DIVERGED = 4, /* NaN or Inf in training */
  GS_EXIT_SIGTERM = 143
};

int gs_cmd_train(int argc, char **argv);   /* splat-train train ... */
int gs_cmd_config(int argc, char **argv);  /* splat-train config: every key, default, meaning */
int gs_cmd_scene(int argc, char **argv);   /* splat-train scene: generate an analytic scene */
int gs_cmd_render(int argc, char **argv);  /* splat-train render: PLY -> test-view PNGs + PSNR */
int gs_cmd_devices(int argc, char **argv); /* splat-train devices: list Vulkan devices */

#endif
