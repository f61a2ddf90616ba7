/* sw_spec.h: a sweep spec (YAML, DESIGN.md section 9, docs/spec.md) loaded into plain structs.
 *
 * Loading is strict: an unknown key, a wrong type, an out-of-range value, a missing required
 * key or bad YAML is an SW_EINVAL error whose message starts with FILE:LINE:COLUMN. Every
 * optional key gets its documented default, so the struct is complete after loading, and
 * sw_spec_to_json() writes that normalised form for the store.
 *
 * Trainer configuration (base, arms, grid parameters) is kept as ordered key/value lists of
 * scalars: order matters because `{set}` expands to `--set key=value` in that order. */
#ifndef SW_SPEC_H
#define SW_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "sw_err.h"
#include "sw_msg.h"

enum sw_spec_kind { SW_SPEC_GATE = 1, SW_SPEC_GRID = 2 };
enum sw_spec_trainer_kind { SW_TRAINER_BUILTIN = 1, SW_TRAINER_EXEC = 2 };
enum sw_spec_scene_kind {
  SW_SCENE_NONE = 0, /* exec trainers that take no scene */
  SW_SCENE_GENERATE = 1,
  SW_SCENE_PATH = 2,
  SW_SCENE_URL = 3
};
enum sw_spec_order { SW_ORDER_ALTERNATE = 0, SW_ORDER_FIXED = 1, SW_ORDER_RANDOM = 2 };
enum sw_spec_direction { SW_DIR_LOWER = 0, SW_DIR_HIGHER = 1 };

/* One trainer config entry. value is a JSON scalar (string, integer, real, true/false) or,
 * for `checkpoints`, an array of integers; text is its `--set` form (the YAML scalar as
 * written for numbers, "true"/"false", "1000,2000" for checkpoints). Both owned. */
struct sw_spec_kv {
  char *key;
  json_t *value;
  char *text;
};

/* An ordered list of unique keys. */
struct sw_spec_config {
  struct sw_spec_kv *items;
  size_t n;
};

struct sw_spec_metric_map {
  char *metric;  /* result metric name, e.g. "train_s" */
  char *pointer; /* JSON pointer into the external trainer's result, e.g. "/timing/total" */
};

struct sw_spec_trainer {
  enum sw_spec_trainer_kind kind;
  /* builtin: device and options are also folded into the front of spec->base (base, arms and
   * grid points override them), so the resolved configs carry them */
  char *device;             /* NULL = first suitable */
  struct sw_spec_config options; /* other builtin keys, in order */
  /* exec */
  char **command; /* argv template: {scene} {out} {config} {set} expand at run time */
  size_t n_command;
  char *result;   /* result file template, default "{out}/result.json" */
  struct sw_spec_config env;
  double timeout_s; /* 0 = none */
  struct sw_spec_metric_map *map;
  size_t n_map;
};

struct sw_spec_scene {
  enum sw_spec_scene_kind kind;
  /* generate */
  char *gen_kind; /* generator scene name, e.g. "bricks" */
  uint32_t train_views, test_views, resolution;
  uint64_t seed;
  /* path */
  char *path;
  /* url */
  char *url;
  char sha256[65]; /* lowercase hex, required with url */
};

struct sw_spec_pairs {
  uint32_t n;   /* pairs to run before the first look; default 5 */
  uint32_t max; /* cap while inconclusive (sequential); default 8, >= n */
  enum sw_spec_order order; /* default alternate */
  uint64_t seed;            /* for order: random; default 1 */
  bool sequential;          /* default false */
};

/* One matcher: key is a fingerprint field (hostname, os, arch, cpu_model, cores, mem_bytes,
 * gpu_name, gpu_driver, gpu_api, gpu_kind, worker_id, trainer_sha256) or "label.NAME"; glob is
 * fnmatch(3). */
struct sw_spec_match {
  char *key;
  char *glob;
};

struct sw_spec_placement {
  bool spread; /* default true */
  struct sw_spec_match *match;
  size_t n_match;
  char *pin; /* worker id (an fnmatch glob), NULL = any */
};

struct sw_spec_guard {
  char *metric;    /* default "psnr_db" */
  double max_drop; /* default 0.05 */
  bool has_band;
  double band_lo, band_hi;
};

struct sw_spec_gate {
  char *metric; /* default "train_s" */
  enum sw_spec_direction direction; /* default lower */
  double k;     /* default 2.0 */
  double floor; /* default 0.01 */
  struct sw_spec_guard guard;
  double alpha; /* default 0.05 */
};

struct sw_spec_contamination {
  double load1_max;         /* default 1.5 */
  double cpu_other_max;     /* default 0.5 cores */
  double settle_s;          /* default 10 */
  double max_wait_s;        /* default 300 */
  double sample_interval_s; /* default 1 */
  bool require_windows;     /* default true */
  bool rerun_once;          /* default true */
};

/* One grid parameter and its values, in spec order. */
struct sw_spec_param {
  char *key;
  struct sw_spec_kv *values; /* values[i].key == key */
  size_t n_values;
};

struct sw_spec {
  char *source; /* file name used in error messages */
  char *name;   /* required; [A-Za-z0-9._-], <= SW_MSG_ID_MAX */
  enum sw_spec_kind kind;
  char *description; /* NULL when absent */
  int32_t priority;  /* default 0; higher runs first among sweeps */
  struct sw_spec_trainer trainer;
  struct sw_spec_scene scene;
  struct sw_spec_config base;
  /* gate */
  struct sw_spec_config arm_off, arm_on;
  struct sw_spec_pairs pairs;
  struct sw_spec_gate gate;
  /* grid */
  struct sw_spec_param *params;
  size_t n_params;
  uint32_t repeats;       /* default 1 */
  uint32_t *checkpoints;  /* ascending iterations; n_checkpoints may be 0 */
  size_t n_checkpoints;
  /* both */
  struct sw_spec_placement placement;
  struct sw_spec_contamination contamination;
};

/* One grid run: a point of the cartesian product of parameters, and its repeat. */
struct sw_spec_point {
  size_t index;                      /* 0-based, in expansion order */
  uint32_t repeat;                   /* 0-based */
  char label[SW_MSG_ID_MAX + 1];     /* "binning=resident,radix_passes=skip" (truncated); "" */
  struct sw_spec_config values;      /* one entry per parameter, in parameter order */
};

/* Loads and validates a spec file. *out is NULL on error. Returns 0, SW_EINVAL (message starts
 * with FILE:LINE:COLUMN), SW_ENOTFOUND / SW_EIO (file), SW_ENOMEM. */
int sw_spec_load_file(const char *path, struct sw_spec **out, struct sw_err *err);

/* Same for YAML text; name_for_errors is used as FILE in messages (and as source). */
int sw_spec_load_string(const char *yaml, const char *name_for_errors, struct sw_spec **out,
                        struct sw_err *err);

void sw_spec_destroy(struct sw_spec **spec);

/* The normalised spec (every default filled) as a new JSON object, or NULL when out of memory. */
json_t *sw_spec_to_json(const struct sw_spec *spec);

/* The resolved trainer config for arm "off" or "on" of a gate: base overlaid by the arm (keys
 * new to base append in the arm's order). out is overwritten; free with sw_spec_config_clear.
 * Returns 0, SW_EINVAL (not a gate, unknown arm), SW_ENOMEM. */
int sw_spec_resolve_arm(const struct sw_spec *spec, const char *arm, struct sw_spec_config *out,
                        struct sw_err *err);

/* The resolved config for a grid point: base overlaid by the point's values, then
 * `checkpoints` ("1000,2000") when the grid has any, less those beyond the run's integer
 * `iterations` (none left: no checkpoints key). */
int sw_spec_resolve_point(const struct sw_spec *spec, const struct sw_spec_point *point,
                          struct sw_spec_config *out, struct sw_err *err);

/* The cartesian product of the grid's parameters times repeats, in a deterministic order:
 * repeats outermost (every point once before any twice), then the first parameter slowest and
 * the last fastest. A grid without parameters gives `repeats` points of the base config with
 * an empty label. *points is an array the caller frees with sw_spec_points_free. */
int sw_spec_grid_expand(const struct sw_spec *spec, struct sw_spec_point **points, size_t *n,
                        struct sw_err *err);
void sw_spec_points_free(struct sw_spec_point **points, size_t n);

/* Sets key to copies of value (a JSON scalar) and text, replacing in place when present (order
 * kept) or appending. Returns 0 or SW_ENOMEM. */
int sw_spec_config_set(struct sw_spec_config *cfg, const char *key, json_t *value,
                       const char *text);
/* A config as a JSON object (keys in order) / freeing one / deep copy. */
json_t *sw_spec_config_to_json(const struct sw_spec_config *cfg);
void sw_spec_config_clear(struct sw_spec_config *cfg);
int sw_spec_config_copy(struct sw_spec_config *dst, const struct sw_spec_config *src);
/* The entry for key, or NULL. */
const struct sw_spec_kv *sw_spec_config_get(const struct sw_spec_config *cfg, const char *key);

/* The trainer / scene sections as JSON objects, as Assign carries them (trainer_json,
 * scene_json). New references, NULL when out of memory. */
json_t *sw_spec_trainer_to_json(const struct sw_spec *spec);
json_t *sw_spec_scene_to_json(const struct sw_spec *spec);

/* The contamination settings in the form Assign carries. */
void sw_spec_contamination_to_msg(const struct sw_spec *spec, struct sw_msg_contamination *out);

/* 1 when a worker (its Hello) is eligible under the spec's placement (match globs and pin),
 * else 0. */
int sw_spec_worker_eligible(const struct sw_spec *spec, const struct sw_msg_hello *hello);

/* "alternate" / "fixed" / "random"; "lower" / "higher". */
const char *sw_spec_order_name(enum sw_spec_order order);
const char *sw_spec_direction_name(enum sw_spec_direction dir);

/* What `splatsweep check SPEC` runs: loads path, prints "ok: NAME (gate|grid, N runs)" or the
 * FILE:LINE:COLUMN error to out. Returns 0, or SW_EINVAL / SW_ENOTFOUND / SW_EIO (the CLI
 * exits 2 on any error). */
int sw_spec_check_file(const char *path, FILE *out);

#endif
