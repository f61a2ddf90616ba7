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

/* The spec's limits (docs/spec.md): the loader enforces them, and everyone who works from a
 * loaded spec (the scheduler's submit, `check`, `local`) relies on that instead of checking
 * again. The only copy. */
#define SW_SPEC_PAIRS_MAX 1000        /* pairs.n and pairs.max */
#define SW_SPEC_REPEATS_MAX 1000      /* a grid's repeats */
#define SW_SPEC_PARAM_VALUES_MAX 1000 /* values of one grid parameter */
#define SW_SPEC_GRID_RUNS_MAX 10000   /* a grid's runs: product of the value counts x repeats */
#define SW_SPEC_METRIC_MAX 63         /* bytes of gate.metric / guard.metric ([A-Za-z0-9_]) */
/* A grid point's label, NUL included ("k=v,k=v", each value cut to SW_SPEC_LABEL_VALUE_MAX). */
#define SW_SPEC_LABEL_MAX 512
#define SW_SPEC_LABEL_VALUE_MAX 95

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
  char *device;                  /* NULL = first suitable */
  struct sw_spec_config options; /* other builtin keys, in order */
  /* exec */
  char **command; /* argv template: {scene} {out} {config} {set} expand at run time */
  size_t n_command;
  char *result; /* result file template, default "{out}/result.json" */
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
  uint32_t n;               /* pairs to run before the first look; default 5 */
  uint32_t max;             /* cap while inconclusive (sequential); default 8, >= n */
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
  char *metric;                     /* default "train_s" */
  enum sw_spec_direction direction; /* default lower */
  double k;                         /* default 2.0 */
  double floor;                     /* default 0.01 */
  struct sw_spec_guard guard;
  double alpha;          /* default 0.05 */
  double size_tolerance; /* the gate engine's model-size check (sw_gate_config.size_tol):
                          * default SW_GATE_SIZE_TOL, 0 = off */
};

/* The contamination rules (docs/spec.md "contamination", docs/gate-rules.md "Contamination: what
 * flags a run"). The worker waits for quiet and samples; the scheduler (sched_classify) judges
 * the windows it sends. Defaults: sw_spec_contamination_defaults() below, the only copy. */
struct sw_spec_contamination {
  double load1_max;          /* 0 = not checked; else the last pre-run load1 must not exceed it */
  double cpu_other_max;      /* cores busy outside the trainer: the per-sample limit */
  double cpu_other_mean_max; /* limit on a window's mean cpu_other, cores */
  double over_max_s;         /* time a window may spend above cpu_other_max, seconds */
  double settle_s;           /* quiet time required before a run; the pre window judged */
  double max_wait_s;         /* bound on waiting for quiet */
  double sample_interval_s;  /* sampler period */
  bool gpu_foreign;          /* a foreign process on the trainer's GPU during the run flags it */
  bool shared_host;          /* the worker may run beside other workers on one host (worker) */
  bool require_windows;      /* a run without during-run samples is invalid */
  bool rerun_once;           /* a contaminated or invalid pair gets one replacement */
};

/* The contamination defaults: the one table of them. The spec loader starts from it (the
 * scheduler classifies with the loaded spec's values), and the coordinator falls back to it for
 * a key a lease's stored contamination object lacks (Assign). */
static inline struct sw_spec_contamination sw_spec_contamination_defaults(void) {
  return (struct sw_spec_contamination){.load1_max = 0,
                                        .cpu_other_max = 0.5,
                                        .cpu_other_mean_max = 0.2,
                                        .over_max_s = 2,
                                        .settle_s = 5,
                                        .max_wait_s = 300,
                                        .sample_interval_s = 1,
                                        .gpu_foreign = true,
                                        .shared_host = false,
                                        .require_windows = true,
                                        .rerun_once = true};
}

/* Contamination settings from the `contamination` object of a normalised spec (as
 * sw_spec_to_json writes it; NULL or not an object gives the defaults): each key present with
 * the right type replaces its default; a mistyped or negative value keeps the default, because
 * the stored spec was validated when it was submitted. The coordinator reads a lease's
 * contamination object through this (Assign). */
static inline void sw_spec_contamination_from_json(const json_t *obj,
                                                   struct sw_spec_contamination *out) {
  *out = sw_spec_contamination_defaults();
  if (!json_is_object(obj)) return;
  const char *const num_keys[] = {"load1_max", "cpu_other_max", "cpu_other_mean_max", "over_max_s",
                                  "settle_s",  "max_wait_s",    "sample_interval_s"};
  double *const nums[] = {&out->load1_max,        &out->cpu_other_max, &out->cpu_other_mean_max,
                          &out->over_max_s,       &out->settle_s,      &out->max_wait_s,
                          &out->sample_interval_s};
  const char *const bool_keys[] = {"gpu_foreign", "shared_host", "require_windows", "rerun_once"};
  bool *const bools[] = {&out->gpu_foreign, &out->shared_host, &out->require_windows,
                         &out->rerun_once};
  _Static_assert(sizeof num_keys / sizeof *num_keys == sizeof nums / sizeof *nums, "numbers");
  _Static_assert(sizeof bool_keys / sizeof *bool_keys == sizeof bools / sizeof *bools, "flags");
  for (size_t i = 0; i < sizeof nums / sizeof *nums; i++) {
    const json_t *v = json_object_get(obj, num_keys[i]);
    if (json_is_number(v) && json_number_value(v) >= 0) *nums[i] = json_number_value(v);
  }
  for (size_t i = 0; i < sizeof bools / sizeof *bools; i++) {
    const json_t *v = json_object_get(obj, bool_keys[i]);
    if (json_is_boolean(v)) *bools[i] = json_is_true(v);
  }
}

/* Notifications (docs/spec.md "notify"): where the coordinator POSTs a JSON summary when one of
 * the sweep's gates reaches its verdict or the sweep fails. */
struct sw_spec_notify {
  char *webhook; /* http:// or https:// URL; NULL = no notifications */
};

/* The artifact store (docs/spec.md "artifacts"): what the workers upload of each run and how
 * long the coordinator keeps it. Defaults: sw_spec_artifacts_defaults(), the only copy. */
struct sw_spec_artifacts {
  bool upload;          /* upload result.json, trainer.log, renders (and final.ply) at all */
  bool final_ply;       /* include final.ply (the largest file by far) */
  uint32_t max_file_mb; /* a larger file is not uploaded (the worker skips it, the store refuses) */
  uint32_t
      keep_sweeps;  /* kept while fewer than this many newer sweeps have finished; 0 = no limit */
  double keep_days; /* kept this long after the sweep finished; 0 = no limit */
};

static inline struct sw_spec_artifacts sw_spec_artifacts_defaults(void) {
  return (struct sw_spec_artifacts){
      .upload = true, .final_ply = true, .max_file_mb = 1024, .keep_sweeps = 20, .keep_days = 0};
}

/* Artifact settings from the `artifacts` object of a normalised spec (NULL: the defaults); a key
 * missing or mistyped keeps its default, as for sw_spec_contamination_from_json. */
static inline void sw_spec_artifacts_from_json(const json_t *obj, struct sw_spec_artifacts *out) {
  *out = sw_spec_artifacts_defaults();
  if (!json_is_object(obj)) return;
  const json_t *v;
  if (json_is_boolean(v = json_object_get(obj, "upload"))) out->upload = json_is_true(v);
  if (json_is_boolean(v = json_object_get(obj, "final_ply"))) out->final_ply = json_is_true(v);
  if (json_is_integer(v = json_object_get(obj, "max_file_mb")) && json_integer_value(v) > 0 &&
      json_integer_value(v) <= 65536)
    out->max_file_mb = (uint32_t)json_integer_value(v);
  if (json_is_integer(v = json_object_get(obj, "keep_sweeps")) && json_integer_value(v) >= 0 &&
      json_integer_value(v) <= 100000)
    out->keep_sweeps = (uint32_t)json_integer_value(v);
  if (json_is_number(v = json_object_get(obj, "keep_days")) && json_number_value(v) >= 0)
    out->keep_days = json_number_value(v);
}

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
  uint32_t repeats;      /* default 1 */
  uint32_t *checkpoints; /* ascending iterations; n_checkpoints may be 0 */
  size_t n_checkpoints;
  /* both */
  struct sw_spec_placement placement;
  struct sw_spec_contamination contamination;
  struct sw_spec_notify notify;
  struct sw_spec_artifacts artifacts;
};

/* One grid run: a point of the cartesian product of parameters, and its repeat. */
struct sw_spec_point {
  size_t index;                  /* 0-based, in expansion order */
  uint32_t repeat;               /* 0-based */
  char label[SW_SPEC_LABEL_MAX]; /* sw_spec_label of values: "binning=resident,..." or "base" */
  struct sw_spec_config values;  /* one entry per parameter, in parameter order */
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
 * the last fastest. A grid without parameters gives `repeats` points of the base config
 * labelled "base". *points is an array the caller frees with sw_spec_points_free. The
 * scheduler stores exactly these points; nobody else expands a grid. */
int sw_spec_grid_expand(const struct sw_spec *spec, struct sw_spec_point **points, size_t *n,
                        struct sw_err *err);
void sw_spec_points_free(struct sw_spec_point **points, size_t n);

/* The label of a grid point (or of a series of points) from its parameter values, a JSON
 * object in parameter order: "key=value" joined by commas, a string value as it is, any other
 * value as compact JSON, each value cut to SW_SPEC_LABEL_VALUE_MAX bytes; "base" for no values.
 * The one label format: grid expansion, the store's grid points and the Pareto series use it.
 * buf gets at most len bytes (len >= 5), NUL-terminated. */
void sw_spec_label(const json_t *values, char *buf, size_t len);

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
/* The same conversion for settings read back from JSON (sw_spec_contamination_from_json). */
void sw_spec_contamination_msg(const struct sw_spec_contamination *c,
                               struct sw_msg_contamination *out);

/* 1 when a worker is eligible under the placement (pin and every match glob, fnmatch(3)),
 * else 0: the one placement rule, which the scheduler applies. fingerprint is the worker's
 * fingerprint as a JSON object (the Hello's fields by their spec names, worker_id and
 * trainer_sha256 included; the coordinator builds it), labels its labels (label -> string).
 * A field or label the worker lacks does not match; a number matches as its decimal text
 * (integers without a point), a boolean as true / false. Either object may be NULL. */
int sw_spec_placement_eligible(const struct sw_spec_placement *placement, const char *worker_id,
                               const json_t *fingerprint, const json_t *labels);

/* "alternate" / "fixed" / "random"; "lower" / "higher". */
const char *sw_spec_order_name(enum sw_spec_order order);
const char *sw_spec_direction_name(enum sw_spec_direction dir);

/* What `splatsweep check SPEC` runs: loads path, prints "ok: NAME (gate|grid, N runs)" or the
 * FILE:LINE:COLUMN error to out. Returns 0, or SW_EINVAL / SW_ENOTFOUND / SW_EIO (the CLI
 * exits 2 on any error). */
int sw_spec_check_file(const char *path, FILE *out);

#endif
