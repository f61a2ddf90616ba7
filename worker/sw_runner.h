/* sw_runner.h: runs one trainer process per run (DESIGN.md section 7, the trainer contract).
 *
 * Two runners share this code: `exec` runs a command template from the spec
 * (["./my-trainer", "--scene", "{scene}", "--out", "{out}", "{set}"]), `builtin` runs
 * `splat-train train --scene {scene} --out {out} --config {config} {set} --progress`. In a
 * template, {scene}, {out} and {config} are replaced inside any argument, and an argument that
 * is exactly "{set}" expands to `--set key=value` for every key of the resolved config;
 * {config} names a YAML file holding that config, written into the run directory.
 *
 * The child gets its own process group (so a cancel reaches its children too), stdin from
 * /dev/null, stdout on a pipe the worker polls (progress lines), stderr into OUT/trainer.log.
 * Stopping sends SIGTERM to the group, then SIGKILL after a grace period. Nothing here blocks:
 * the worker's poll loop calls sw_runner_read / sw_runner_check. */
#ifndef SW_RUNNER_H
#define SW_RUNNER_H

#include <stdint.h>
#include <sys/types.h>

#include "sw_err.h"

typedef struct sw_runner sw_runner_t;

struct sw_runner_progress {
  uint64_t iter;
  double train_s, loss;
  uint64_t splats;
};

struct sw_runner_opts {
  const char *trainer_json; /* {"builtin":{...}} or {"exec":{"command":[..],"result":..,
                               "timeout_s":..,"env":{..},"map":{metric: json-pointer}}} */
  const char *config_json;  /* resolved config, a JSON object */
  const char *scene_dir;    /* "" when the trainer takes no scene */
  const char *out_dir;      /* run directory, created */
  const char *splat_train;  /* path of splat-train for the builtin runner */
  int64_t grace_ms;         /* SIGTERM -> SIGKILL delay; 0 = 5000 */
};

/* Writes the config file, forks and execs the trainer. Returns 0, SW_EINVAL (bad trainer spec
 * or config: message says which key), SW_EIO, SW_ECHILD (fork failed). A program that cannot
 * be executed shows up later as exit status 127 with the reason in the error text. */
int sw_runner_start(const struct sw_runner_opts *opts, int64_t now_ms, sw_runner_t **out,
                    struct sw_err *err);
/* Kills what is left of the process group (SIGKILL), reaps, frees. NULL-safe. */
void sw_runner_destroy(sw_runner_t **self_p);

/* The read end of the child's stdout, -1 once it reached EOF (for zmq_poll). */
int sw_runner_fd(const sw_runner_t *self);
/* Reads what stdout has; calls cb for each complete progress line. Non-blocking. */
void sw_runner_read(sw_runner_t *self, void (*cb)(void *ctx, const struct sw_runner_progress *p),
                    void *ctx);
/* Asks the trainer to stop: SIGTERM to the group now, SIGKILL once grace_ms has passed (done by
 * sw_runner_check). Idempotent. */
void sw_runner_stop(sw_runner_t *self, int64_t now_ms);
/* Reaps the child if it exited and escalates a pending stop or an exec timeout_s. Returns 1 when
 * the trainer has finished (exit status available), 0 while it runs. */
int sw_runner_check(sw_runner_t *self, int64_t now_ms);
/* Process group of the trainer (for the load sampler); 0 when it has finished. */
pid_t sw_runner_pgid(const sw_runner_t *self);

/* After sw_runner_check returned 1: exit status (code, or 128+signal), wall seconds, the result
 * JSON text (caller frees; NULL when none or unusable) and an error text (caller frees; NULL when
 * the run succeeded). A result mapped through the exec spec's "map" becomes a result of the
 * contract's schema whose metrics are the mapped values, with the original under "foreign". */
void sw_runner_outcome(sw_runner_t *self, int *exit_status, double *wall_s, char **result_json,
                       char **error);

/* RFC 6901 JSON pointer lookup (borrowed reference, NULL when absent or malformed). */
struct json_t;
struct json_t *sw_json_pointer(struct json_t *root, const char *pointer);

#endif
