/* sw_spec_view.c: what is derived from a loaded spec: ordered trainer config lists and their
 * overlay (arm / grid point resolution), the grid expansion, the normalised JSON the store
 * keeps, the trainer / scene JSON and contamination settings an Assign carries, the grid
 * point label, worker eligibility (placement), and `check`.
 * Loading and validation live in sw_spec.c. */
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "sw_spec.h"

static void kv_free(struct sw_spec_kv *kv) {
  free(kv->key);
  json_decref(kv->value);
  free(kv->text);
}

void sw_spec_config_clear(struct sw_spec_config *cfg) {
  if (!cfg) return;
  for (size_t i = 0; i < cfg->n; i++) kv_free(&cfg->items[i]);
  free(cfg->items);
  cfg->items = NULL;
  cfg->n = 0;
}

const struct sw_spec_kv *sw_spec_config_get(const struct sw_spec_config *cfg, const char *key) {
  for (size_t i = 0; cfg && i < cfg->n; i++)
    if (!strcmp(cfg->items[i].key, key)) return &cfg->items[i];
  return NULL;
}

/* Sets key (replacing in place or appending) to copies of value / text. */
int sw_spec_config_set(struct sw_spec_config *cfg, const char *key, json_t *value,
                       const char *text) {
  for (size_t i = 0; i < cfg->n; i++) {
    if (!strcmp(cfg->items[i].key, key)) {
      char *t = strdup(text);
      json_t *v = json_deep_copy(value);
      if (!t || !v) {
        free(t);
        json_decref(v);
        return SW_ENOMEM;
      }
      free(cfg->items[i].text);
      json_decref(cfg->items[i].value);
      cfg->items[i].text = t;
      cfg->items[i].value = v;
      return 0;
    }
  }
  struct sw_spec_kv *grown = realloc(cfg->items, (cfg->n + 1) * sizeof *grown);
  if (!grown) return SW_ENOMEM;
  cfg->items = grown;
  struct sw_spec_kv *kv = &grown[cfg->n];
  kv->key = strdup(key);
  kv->text = strdup(text);
  kv->value = json_deep_copy(value);
  if (!kv->key || !kv->text || !kv->value) {
    kv_free(kv);
    return SW_ENOMEM;
  }
  cfg->n++;
  return 0;
}

int sw_spec_config_copy(struct sw_spec_config *dst, const struct sw_spec_config *src) {
  memset(dst, 0, sizeof *dst);
  for (size_t i = 0; src && i < src->n; i++) {
    if (sw_spec_config_set(dst, src->items[i].key, src->items[i].value, src->items[i].text)) {
      sw_spec_config_clear(dst);
      return SW_ENOMEM;
    }
  }
  return 0;
}

json_t *sw_spec_config_to_json(const struct sw_spec_config *cfg) {
  json_t *o = json_object();
  for (size_t i = 0; o && cfg && i < cfg->n; i++) {
    if (json_object_set(o, cfg->items[i].key, cfg->items[i].value)) {
      json_decref(o);
      return NULL;
    }
  }
  return o;
}

/* ---- derived views ------------------------------------------------------------------- */

/* json_object_set_new that tolerates a NULL value by failing the whole object. */
static int put(json_t *o, const char *k, json_t *v) {
  return v ? json_object_set_new(o, k, v) : -1;
}

json_t *sw_spec_trainer_to_json(const struct sw_spec *s) {
  json_t *root = json_object(), *t = json_object();
  int bad = !root || !t;
  if (!bad && s->trainer.kind == SW_TRAINER_BUILTIN) {
    if (s->trainer.device) bad |= put(t, "device", json_string(s->trainer.device));
    for (size_t i = 0; i < s->trainer.options.n; i++)
      bad |= json_object_set(t, s->trainer.options.items[i].key, s->trainer.options.items[i].value);
    bad |= json_object_set(root, "builtin", t);
  } else if (!bad) {
    json_t *cmd = json_array();
    for (size_t i = 0; cmd && i < s->trainer.n_command; i++)
      bad |= json_array_append_new(cmd, json_string(s->trainer.command[i]));
    bad |= put(t, "command", cmd);
    bad |= put(t, "result", json_string(s->trainer.result));
    bad |= put(t, "env", sw_spec_config_to_json(&s->trainer.env));
    bad |= put(t, "timeout_s", json_real(s->trainer.timeout_s));
    json_t *map = json_object();
    for (size_t i = 0; map && i < s->trainer.n_map; i++)
      bad |= put(map, s->trainer.map[i].metric, json_string(s->trainer.map[i].pointer));
    bad |= put(t, "map", map);
    bad |= json_object_set(root, "exec", t);
  }
  json_decref(t);
  if (bad) {
    json_decref(root);
    return NULL;
  }
  return root;
}

json_t *sw_spec_scene_to_json(const struct sw_spec *s) {
  json_t *root = json_object();
  if (!root) return NULL;
  int bad = 0;
  const struct sw_spec_scene *sc = &s->scene;
  if (sc->kind == SW_SCENE_GENERATE) {
    bad |= put(root, "generate",
               json_pack("{s:s, s:I, s:I, s:I, s:I}", "kind", sc->gen_kind, "train_views",
                         (json_int_t)sc->train_views, "test_views", (json_int_t)sc->test_views,
                         "resolution", (json_int_t)sc->resolution, "seed", (json_int_t)sc->seed));
  } else if (sc->kind == SW_SCENE_PATH) {
    bad |= put(root, "path", json_string(sc->path));
  } else if (sc->kind == SW_SCENE_URL) {
    bad |= put(root, "url", json_string(sc->url));
    bad |= put(root, "sha256", json_string(sc->sha256));
  }
  if (bad) {
    json_decref(root);
    return NULL;
  }
  return root;
}

json_t *sw_spec_to_json(const struct sw_spec *s) {
  json_t *o = json_object();
  if (!o) return NULL;
  int bad = 0;
  const int gate = s->kind == SW_SPEC_GATE;
  bad |= put(o, "name", json_string(s->name));
  bad |= put(o, "kind", json_string(gate ? "gate" : "grid"));
  if (s->description) bad |= put(o, "description", json_string(s->description));
  bad |= put(o, "priority", json_integer(s->priority));
  bad |= put(o, "trainer", sw_spec_trainer_to_json(s));
  bad |= put(o, "scene", sw_spec_scene_to_json(s));
  bad |= put(o, "base", sw_spec_config_to_json(&s->base));
  if (gate) {
    bad |= put(o, "arms",
               json_pack("{s:o?, s:o?}", "off", sw_spec_config_to_json(&s->arm_off), "on",
                         sw_spec_config_to_json(&s->arm_on)));
    bad |=
        put(o, "pairs",
            json_pack("{s:I, s:I, s:s, s:I, s:b}", "n", (json_int_t)s->pairs.n, "max",
                      (json_int_t)s->pairs.max, "order", sw_spec_order_name(s->pairs.order), "seed",
                      (json_int_t)s->pairs.seed, "sequential", (int)s->pairs.sequential));
    json_t *guard =
        json_pack("{s:s, s:f}", "metric", s->gate.guard.metric, "max_drop", s->gate.guard.max_drop);
    if (guard && s->gate.guard.has_band)
      bad |= put(guard, "band", json_pack("[f, f]", s->gate.guard.band_lo, s->gate.guard.band_hi));
    bad |= put(o, "gate",
               json_pack("{s:s, s:s, s:{s:f, s:f}, s:o?, s:f, s:f}", "metric", s->gate.metric,
                         "direction", sw_spec_direction_name(s->gate.direction), "rule", "k",
                         s->gate.k, "floor", s->gate.floor, "guard", guard, "alpha", s->gate.alpha,
                         "size_tolerance", s->gate.size_tolerance));
  } else {
    json_t *params = json_object();
    for (size_t i = 0; params && i < s->n_params; i++) {
      json_t *vals = json_array();
      for (size_t j = 0; vals && j < s->params[i].n_values; j++)
        bad |= json_array_append(vals, s->params[i].values[j].value);
      bad |= put(params, s->params[i].key, vals);
    }
    bad |= put(o, "parameters", params);
    bad |= put(o, "repeats", json_integer(s->repeats));
    json_t *cps = json_array();
    for (size_t i = 0; cps && i < s->n_checkpoints; i++)
      bad |= json_array_append_new(cps, json_integer(s->checkpoints[i]));
    bad |= put(o, "checkpoints", cps);
  }
  json_t *match = json_object();
  for (size_t i = 0; match && i < s->placement.n_match; i++)
    bad |= put(match, s->placement.match[i].key, json_string(s->placement.match[i].glob));
  json_t *pl = json_pack("{s:b, s:o?}", "spread", (int)s->placement.spread, "match", match);
  if (pl && s->placement.pin) bad |= put(pl, "pin", json_string(s->placement.pin));
  bad |= put(o, "placement", pl);
  /* Every contamination value is written, so the scheduler and the coordinator, which read
   * this JSON back, apply what the spec said when it was submitted, not today's defaults. */
  const struct sw_spec_contamination *c = &s->contamination;
  bad |=
      put(o, "contamination",
          json_pack("{s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:b, s:b, s:b, s:b}", "load1_max",
                    c->load1_max, "cpu_other_max", c->cpu_other_max, "cpu_other_mean_max",
                    c->cpu_other_mean_max, "over_max_s", c->over_max_s, "settle_s", c->settle_s,
                    "max_wait_s", c->max_wait_s, "sample_interval_s", c->sample_interval_s,
                    "gpu_foreign", (int)c->gpu_foreign, "shared_host", (int)c->shared_host,
                    "require_windows", (int)c->require_windows, "rerun_once", (int)c->rerun_once));
  if (s->notify.webhook) bad |= put(o, "notify", json_pack("{s:s}", "webhook", s->notify.webhook));
  const struct sw_spec_artifacts *a = &s->artifacts;
  bad |= put(o, "artifacts",
             json_pack("{s:b, s:b, s:I, s:I, s:f}", "upload", (int)a->upload, "final_ply",
                       (int)a->final_ply, "max_file_mb", (json_int_t)a->max_file_mb, "keep_sweeps",
                       (json_int_t)a->keep_sweeps, "keep_days", a->keep_days));
  if (bad) {
    json_decref(o);
    return NULL;
  }
  return o;
}

int sw_spec_resolve_arm(const struct sw_spec *s, const char *arm, struct sw_spec_config *out,
                        struct sw_err *err) {
  memset(out, 0, sizeof *out);
  if (s->kind != SW_SPEC_GATE)
    return sw_err_set(err, SW_EINVAL, "spec %s: arms exist only in gates", s->name);
  const struct sw_spec_config *a;
  if (arm && !strcmp(arm, "off"))
    a = &s->arm_off;
  else if (arm && !strcmp(arm, "on"))
    a = &s->arm_on;
  else
    return sw_err_set(err, SW_EINVAL, "spec %s: no arm '%s' (off | on)", s->name, arm ? arm : "");
  if (sw_spec_config_copy(out, &s->base)) return sw_err_set(err, SW_ENOMEM, "out of memory");
  for (size_t i = 0; i < a->n; i++) {
    if (sw_spec_config_set(out, a->items[i].key, a->items[i].value, a->items[i].text)) {
      sw_spec_config_clear(out);
      return sw_err_set(err, SW_ENOMEM, "out of memory");
    }
  }
  return 0;
}

int sw_spec_resolve_point(const struct sw_spec *s, const struct sw_spec_point *pt,
                          struct sw_spec_config *out, struct sw_err *err) {
  memset(out, 0, sizeof *out);
  if (s->kind != SW_SPEC_GRID)
    return sw_err_set(err, SW_EINVAL, "spec %s: grid points exist only in grids", s->name);
  int rc = sw_spec_config_copy(out, &s->base);
  for (size_t i = 0; !rc && i < pt->values.n; i++)
    rc = sw_spec_config_set(out, pt->values.items[i].key, pt->values.items[i].value,
                            pt->values.items[i].text);
  if (!rc && s->n_checkpoints) {
    /* A checkpoint past the run's own budget can never be reached: it is dropped, so one
     * checkpoint list serves every iteration budget of a Pareto grid. */
    const struct sw_spec_kv *it = sw_spec_config_get(out, "iterations");
    json_int_t limit = it && json_is_integer(it->value) ? json_integer_value(it->value) : -1;
    json_t *arr = json_array();
    char text[64 * 12] = "";
    for (size_t i = 0; arr && i < s->n_checkpoints; i++) {
      if (limit >= 0 && (json_int_t)s->checkpoints[i] > limit) continue;
      json_array_append_new(arr, json_integer(s->checkpoints[i]));
      size_t used = strlen(text);
      snprintf(text + used, sizeof text - used, "%s%u", used ? "," : "", s->checkpoints[i]);
    }
    if (!arr)
      rc = SW_ENOMEM;
    else if (json_array_size(arr))
      rc = sw_spec_config_set(out, "checkpoints", arr, text);
    json_decref(arr);
  }
  if (rc) {
    sw_spec_config_clear(out);
    return sw_err_set(err, SW_ENOMEM, "out of memory");
  }
  return 0;
}

void sw_spec_points_free(struct sw_spec_point **points, size_t n) {
  if (!points || !*points) return;
  for (size_t i = 0; i < n; i++) sw_spec_config_clear(&(*points)[i].values);
  free(*points);
  *points = NULL;
}

int sw_spec_grid_expand(const struct sw_spec *s, struct sw_spec_point **points, size_t *n,
                        struct sw_err *err) {
  *points = NULL;
  *n = 0;
  if (s->kind != SW_SPEC_GRID)
    return sw_err_set(err, SW_EINVAL, "spec %s: only grids expand into points", s->name);
  size_t combos = 1;
  for (size_t i = 0; i < s->n_params; i++) combos *= s->params[i].n_values;
  size_t total = combos * s->repeats;
  struct sw_spec_point *pts = calloc(total ? total : 1, sizeof *pts);
  size_t *idx = calloc(s->n_params ? s->n_params : 1, sizeof *idx);
  if (!pts || !idx) {
    free(pts);
    free(idx);
    return sw_err_set(err, SW_ENOMEM, "out of memory");
  }
  /* Repeats outermost: every point runs once before any runs twice, so a machine's slow drift
   * spreads over all points instead of biasing the last ones (the scheduler's order too). */
  size_t k = 0;
  for (uint32_t r = 0; r < s->repeats; r++) {
    for (size_t c = 0; c < combos; c++, k++) {
      /* Mixed-radix decomposition of c: the last parameter varies fastest. */
      size_t rem = c;
      for (size_t i = s->n_params; i-- > 0;) {
        idx[i] = rem % s->params[i].n_values;
        rem /= s->params[i].n_values;
      }
      struct sw_spec_point *pt = &pts[k];
      pt->index = k;
      pt->repeat = r;
      int bad = 0;
      for (size_t i = 0; i < s->n_params && !bad; i++) {
        const struct sw_spec_kv *v = &s->params[i].values[idx[i]];
        bad = sw_spec_config_set(&pt->values, s->params[i].key, v->value, v->text) != 0;
      }
      json_t *values = bad ? NULL : sw_spec_config_to_json(&pt->values);
      if (!values) {
        free(idx);
        sw_spec_points_free(&pts, total);
        return sw_err_set(err, SW_ENOMEM, "out of memory");
      }
      sw_spec_label(values, pt->label, sizeof pt->label);
      json_decref(values);
    }
  }
  free(idx);
  *points = pts;
  *n = total;
  return 0;
}

void sw_spec_label(const json_t *values, char *buf, size_t len) {
  buf[0] = '\0';
  const char *k;
  const json_t *v;
  json_object_foreach((json_t *)values, k, v) {
    char val[SW_SPEC_LABEL_VALUE_MAX + 1];
    if (json_is_string(v)) {
      snprintf(val, sizeof val, "%s", json_string_value(v));
    } else {
      char *d = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
      snprintf(val, sizeof val, "%s", d ? d : "?");
      free(d);
    }
    size_t used = strlen(buf);
    snprintf(buf + used, len - used, "%s%s=%s", used ? "," : "", k, val);
  }
  if (!buf[0]) snprintf(buf, len, "base");
}

void sw_spec_contamination_msg(const struct sw_spec_contamination *c,
                               struct sw_msg_contamination *out) {
  *out = (struct sw_msg_contamination){.load1_max = c->load1_max,
                                       .cpu_other_max = c->cpu_other_max,
                                       .settle_s = c->settle_s,
                                       .max_wait_s = c->max_wait_s,
                                       .sample_interval_s = c->sample_interval_s,
                                       .require_windows = c->require_windows,
                                       .rerun_once = c->rerun_once,
                                       .cpu_other_mean_max = c->cpu_other_mean_max,
                                       .over_max_s = c->over_max_s,
                                       .gpu_foreign = c->gpu_foreign,
                                       .shared_host = c->shared_host};
}

void sw_spec_contamination_to_msg(const struct sw_spec *s, struct sw_msg_contamination *out) {
  sw_spec_contamination_msg(&s->contamination, out);
}

/* The value a placement matcher tests as text: "label.NAME" a label, any other key a
 * fingerprint field. NULL when the worker lacks it. */
static const char *match_value(const char *key, const json_t *fingerprint, const json_t *labels,
                               char *buf, size_t len) {
  const json_t *v = strncmp(key, "label.", 6) == 0 ? json_object_get(labels, key + 6)
                                                   : json_object_get(fingerprint, key);
  if (json_is_string(v)) return json_string_value(v);
  if (json_is_integer(v)) {
    snprintf(buf, len, "%lld", (long long)json_integer_value(v));
    return buf;
  }
  if (json_is_real(v)) {
    snprintf(buf, len, "%g", json_real_value(v));
    return buf;
  }
  if (json_is_boolean(v)) return json_is_true(v) ? "true" : "false";
  return NULL;
}

int sw_spec_placement_eligible(const struct sw_spec_placement *pl, const char *worker_id,
                               const json_t *fingerprint, const json_t *labels) {
  if (pl->pin && pl->pin[0] && fnmatch(pl->pin, worker_id, 0) != 0) return 0;
  for (size_t i = 0; i < pl->n_match; i++) {
    char buf[64];
    const char *key = pl->match[i].key;
    const char *v = strcmp(key, "worker_id") == 0
                        ? worker_id
                        : match_value(key, fingerprint, labels, buf, sizeof buf);
    if (!v || fnmatch(pl->match[i].glob, v, 0) != 0) return 0;
  }
  return 1;
}

int sw_spec_check_file(const char *path, FILE *out) {
  struct sw_err err = {0};
  struct sw_spec *s = NULL;
  int rc = sw_spec_load_file(path, &s, &err);
  if (rc) {
    fprintf(out, "%s\n", err.msg);
    return rc;
  }
  if (s->kind == SW_SPEC_GATE) {
    fprintf(out, "ok: %s (gate, %u-%u pairs, metric %s %s is better, guard %s)\n", s->name,
            s->pairs.n, s->pairs.max, s->gate.metric, sw_spec_direction_name(s->gate.direction),
            s->gate.guard.metric);
  } else {
    size_t runs = s->repeats;
    for (size_t i = 0; i < s->n_params; i++) runs *= s->params[i].n_values;
    fprintf(out, "ok: %s (grid, %zu parameter%s, %zu runs)\n", s->name, s->n_params,
            s->n_params == 1 ? "" : "s", runs);
  }
  sw_spec_destroy(&s);
  return 0;
}
