/* sw_gate_json.c: the gate engine's JSON: the `gate eval` input format (DESIGN.md section 10,
 * every key listed in docs/gate-rules.md), the gate object that reports embed, and the whole
 * `splatsweep gate eval FILE.json` command. Unknown keys are errors, as in sweep specs, so that a
 * misspelt option never silently falls back to a default. */
#include "sw_gate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sw_json.h"

/* ---- output ----------------------------------------------------------------------------- */

/* Non-finite numbers have no JSON form: they mean "not computed" and become null, alone
 * (sw_json_real_or_null) or as an interval with either end missing. */
static json_t *pair_of(double a, double b) {
  if (!isfinite(a) || !isfinite(b)) return json_null();
  return json_pack("[o o]", json_real(a), json_real(b));
}

static json_t *analysis_json(const struct sw_gate_analysis *a, const struct sw_gate_config *cfg) {
  json_t *o = json_object();
  json_object_set_new(o, "n", json_integer(a->n));
  json_object_set_new(o, "verdict", json_string(sw_gate_verdict_name(a->verdict)));
  json_object_set_new(o, "machines", json_integer(a->n_machines));
  json_t *lab = json_object();
  json_object_set_new(lab, "mean_off", sw_json_real_or_null(a->mean_off));
  json_object_set_new(lab, "mean_on", sw_json_real_or_null(a->mean_on));
  json_object_set_new(lab, "cv_off", sw_json_real_or_null(a->cv_off));
  json_object_set_new(lab, "cv_on", sw_json_real_or_null(a->cv_on));
  json_object_set_new(lab, "delta", sw_json_real_or_null(a->delta));
  json_object_set_new(lab, "threshold", sw_json_real_or_null(a->threshold));
  json_object_set_new(lab, "k", json_real(cfg->k));
  json_object_set_new(lab, "floor", json_real(cfg->floor));
  json_object_set_new(lab, "significant", json_boolean(a->lab_significant));
  json_object_set_new(lab, "sigma_ratio", sw_json_real_or_null(a->sigma_ratio));
  json_object_set_new(lab, "sigma_asymmetry", json_boolean(a->sigma_asymmetry));
  json_object_set_new(o, "lab", lab);
  json_t *pr = json_object();
  json_object_set_new(pr, "log_ratio_mean", sw_json_real_or_null(a->lr_mean));
  json_object_set_new(pr, "log_ratio_sd", sw_json_real_or_null(a->lr_sd));
  json_object_set_new(pr, "log_ratio_se", sw_json_real_or_null(a->lr_se));
  json_object_set_new(pr, "effect_pct", sw_json_real_or_null(a->effect_pct));
  json_object_set_new(pr, "t", sw_json_real_or_null(a->t_stat));
  json_object_set_new(pr, "df", sw_json_real_or_null(a->t_df));
  json_object_set_new(pr, "p", sw_json_real_or_null(a->t_p));
  json_object_set_new(pr, "t_interval_log", pair_of(a->t_lo, a->t_hi));
  json_object_set_new(pr, "t_interval_pct", pair_of(a->effect_lo_pct, a->effect_hi_pct));
  json_object_set_new(pr, "wilcoxon",
                      json_pack("{s:o s:o s:b}", "v", sw_json_real_or_null(a->wilcox_v), "p",
                                sw_json_real_or_null(a->wilcox_p), "exact", a->wilcox_exact));
  json_object_set_new(pr, "bootstrap_pct", pair_of(a->boot_lo_pct, a->boot_hi_pct));
  json_object_set_new(pr, "robust",
                      json_pack("{s:o s:o s:o s:o s:o s:b}", "median_pct",
                                sw_json_real_or_null(a->median_pct), "hodges_lehmann_pct",
                                sw_json_real_or_null(a->hl_pct), "signed_rank_interval_pct",
                                pair_of(a->hl_lo_pct, a->hl_hi_pct), "interval_level",
                                sw_json_real_or_null(a->hl_conf), "clipped_mean_pct",
                                sw_json_real_or_null(a->clipped_pct), "holds", a->robust_holds));
  json_object_set_new(pr, "significant", json_boolean(a->paired_significant));
  json_object_set_new(pr, "order",
                      json_pack("{s:i s:i s:o s:o}", "off_on", a->n_off_on, "on_off", a->n_on_off,
                                "second_run_pct", sw_json_real_or_null(a->order_pct), "welch_p",
                                sw_json_real_or_null(a->order_p)));
  json_object_set_new(o, "paired", pr);
  json_t *ms = json_array();
  for (int m = 0; m < a->n_machines; m++) {
    const struct sw_gate_machine *mc = &a->machines[m];
    json_array_append_new(
        ms, json_pack("{s:s s:i s:o s:o s:o s:o}", "id", mc->id, "n", mc->n, "effect_pct",
                      sw_json_real_or_null(mc->pct), "log_effect", sw_json_real_or_null(mc->effect),
                      "variance", sw_json_real_or_null(mc->var), "weight", json_real(mc->weight)));
  }
  json_object_set_new(o, "per_machine", ms);
  if (a->re_k >= 2)
    json_object_set_new(
        o, "random_effects",
        json_pack("{s:s s:i s:o s:o s:o s:o s:o s:o s:o}", "method", "DerSimonian-Laird", "k",
                  a->re_k, "log_effect", sw_json_real_or_null(a->re_mu), "se",
                  sw_json_real_or_null(a->re_se), "effect_pct", sw_json_real_or_null(a->re_pct),
                  "interval_pct", pair_of(a->re_lo_pct, a->re_hi_pct), "q",
                  sw_json_real_or_null(a->re_q), "tau2", sw_json_real_or_null(a->re_tau2), "i2",
                  sw_json_real_or_null(a->re_i2)));
  else
    json_object_set_new(o, "random_effects", json_null());
  json_object_set_new(o, "sign_disagree", json_boolean(a->sign_disagree));
  json_t *g = json_object();
  json_object_set_new(g, "evaluated", json_boolean(a->guard_evaluated));
  json_object_set_new(g, "pass", json_boolean(a->guard_pass));
  json_object_set_new(g, "off_mean", sw_json_real_or_null(a->guard_off));
  json_object_set_new(g, "on_mean", sw_json_real_or_null(a->guard_on));
  json_object_set_new(g, "diff", sw_json_real_or_null(a->guard_diff));
  json_object_set_new(g, "max_drop", json_real(cfg->max_drop));
  json_object_set_new(g, "band", cfg->has_band ? pair_of(cfg->band_lo, cfg->band_hi) : json_null());
  json_object_set_new(g, "band_pass", json_boolean(a->band_pass));
  /* The guard's resolution (docs/gate-rules.md, "The guard's resolution"). */
  json_object_set_new(g, "n", json_integer(a->guard_n));
  json_object_set_new(g, "sd", sw_json_real_or_null(a->guard_sd));
  json_object_set_new(g, "se", sw_json_real_or_null(a->guard_se));
  json_object_set_new(g, "ci", pair_of(a->guard_lo, a->guard_hi));
  json_object_set_new(g, "resolution", sw_json_real_or_null(a->guard_mde));
  json_object_set_new(g, "uncertain", json_boolean(a->guard_uncertain));
  json_object_set_new(o, "guard", g);
  json_object_set_new(o, "resolution",
                      json_pack("{s:o s:o}", "mde_pct", sw_json_real_or_null(a->mde_pct),
                                "pairs_needed",
                                a->pairs_needed > 0 ? json_integer(a->pairs_needed) : json_null()));
  return o;
}

static json_t *strings(const char (*lines)[SW_GATE_REASON_MAX], int n) {
  json_t *arr = json_array();
  for (int i = 0; i < n; i++) json_array_append_new(arr, json_string(lines[i]));
  return arr;
}

json_t *sw_gate_result_to_json(const struct sw_gate_result *res) {
  if (!res) return NULL;
  const struct sw_gate_config *cfg = &res->config;
  const struct sw_gate_analysis *a = &res->set[SW_GATE_SET_REPLACED];
  json_t *o = json_object();
  if (!o) return NULL;
  json_object_set_new(o, "name", json_string(res->name));
  json_object_set_new(o, "verdict", json_string(sw_gate_verdict_name(res->verdict)));
  json_object_set_new(o, "reasons", strings(res->reasons, res->n_reasons));
  json_object_set_new(o, "warnings", strings(res->warnings, res->n_warnings));
  json_object_set_new(o, "delta", sw_json_real_or_null(a->delta));
  json_object_set_new(o, "threshold", sw_json_real_or_null(a->threshold));
  json_t *primary = analysis_json(a, cfg);
  /* The section-10 keys at top level; the full primary analysis beside them. */
  json_object_set(o, "guard", json_object_get(primary, "guard"));
  json_object_set(o, "lab", json_object_get(primary, "lab"));
  json_object_set(o, "paired", json_object_get(primary, "paired"));
  json_object_set(o, "machines", json_object_get(primary, "per_machine"));
  json_object_set(o, "random_effects", json_object_get(primary, "random_effects"));
  json_object_set(o, "resolution", json_object_get(primary, "resolution"));
  json_object_set_new(o, "counts",
                      json_pack("{s:i s:i s:i s:i s:i}", "input", res->n_input, "used", a->n,
                                "invalid", res->n_invalid, "contaminated", res->n_contaminated,
                                "replacements", res->n_replacements));
  json_object_set_new(o, "binary_changed", json_integer(res->binary_changed));
  /* The model-size check (docs/gate-rules.md section 3). */
  const struct sw_gate_size *z = &res->size;
  json_t *flags = json_array();
  for (int k = 0; k < z->n_runs && k < SW_GATE_MAX_SIZE_FLAGS; k++)
    json_array_append_new(flags,
                          json_pack("{s:i s:s s:f s:f s:f}", "pair", z->flags[k].pair, "arm",
                                    z->flags[k].on ? "on" : "off", "size", z->flags[k].size,
                                    "median", z->flags[k].median, "deviation", z->flags[k].dev));
  json_object_set_new(o, "model_size",
                      json_pack("{s:f s:i s:i s:o s:o s:i s:i s:o}", "tolerance", cfg->size_tol,
                                "known_off", z->n_off, "known_on", z->n_on, "median_off",
                                sw_json_real_or_null(z->median_off), "median_on",
                                sw_json_real_or_null(z->median_on), "pairs_flagged", z->n_pairs,
                                "runs_flagged", z->n_runs, "flagged", flags));
  json_decref(primary);
  json_t *sens = json_object();
  json_object_set_new(sens, "fragile", json_boolean(res->fragile));
  json_t *sets = json_array();
  for (int s = 0; s < SW_GATE_NSETS; s++) {
    if (!res->set_present[s]) continue;
    json_t *one = analysis_json(&res->set[s], cfg);
    json_object_set_new(one, "set", json_string(sw_gate_set_name((enum sw_gate_set)s)));
    json_array_append_new(sets, one);
  }
  json_object_set_new(sens, "sets", sets);
  json_object_set_new(o, "sensitivity", sens);
  const struct sw_gate_sequential *sq = &res->seq;
  json_t *seq = json_object();
  json_object_set_new(seq, "decision", json_string(sw_gate_seq_name(sq->decision)));
  if (sq->decision != SW_GATE_SEQ_NONE) {
    json_object_set_new(seq, "look", json_integer(sq->look));
    json_object_set_new(seq, "min_pairs", json_integer(cfg->min_pairs));
    json_object_set_new(seq, "max_pairs", json_integer(cfg->max_pairs));
    json_object_set_new(seq, "info_frac", sw_json_real_or_null(sq->info_frac));
    json_object_set_new(seq, "alpha_spent", sw_json_real_or_null(sq->alpha_spent));
    json_object_set_new(seq, "z_bound", sw_json_real_or_null(sq->z_bound));
    json_object_set_new(seq, "nominal_p", sw_json_real_or_null(sq->nominal_p));
    json_object_set_new(seq, "z", sw_json_real_or_null(sq->z_stat));
    json_object_set_new(seq, "conditional_power", sw_json_real_or_null(sq->cond_power));
    json_object_set_new(seq, "lab_conditional_power", sw_json_real_or_null(sq->lab_cond_power));
    json_object_set_new(seq, "alpha", json_real(cfg->seq_alpha));
    json_object_set_new(seq, "pairs_more", json_integer(sq->pairs_more));
    json_object_set_new(seq, "guard_extended", json_boolean(sq->guard_extended));
  }
  json_object_set_new(o, "sequential", seq);
  json_t *c = json_object();
  json_object_set_new(c, "direction",
                      json_string(cfg->direction == SW_GATE_LOWER ? "lower" : "higher"));
  json_object_set_new(c, "rule", json_pack("{s:f s:f}", "k", cfg->k, "floor", cfg->floor));
  json_object_set_new(c, "alpha", json_real(cfg->alpha));
  json_object_set_new(c, "power", json_real(cfg->power));
  json_object_set_new(c, "sigma_ratio_warn", json_real(cfg->sigma_ratio_warn));
  json_object_set_new(c, "size_tolerance", json_real(cfg->size_tol));
  json_object_set_new(
      c, "bootstrap",
      json_pack("{s:I s:i}", "seed", (json_int_t)cfg->boot_seed, "reps", cfg->boot_reps));
  json_object_set_new(c, "guard_required", json_boolean(cfg->guard_required));
  json_object_set_new(c, "sequential", json_boolean(cfg->sequential));
  json_object_set_new(c, "sensitivity",
                      json_string(cfg->sens == SW_GATE_SENS_MEAN ? "mean" : "robust"));
  json_object_set_new(c, "baseline_form", json_boolean(res->has_baseline));
  json_object_set_new(o, "config", c);
  return o;
}

/* ---- input ------------------------------------------------------------------------------ */

static int only_keys(const json_t *obj, const char *where, const char *const *keys,
                     struct sw_err *err) {
  const char *key;
  json_t *val;
  json_object_foreach((json_t *)obj, key, val) {
    int ok = 0;
    for (const char *const *k = keys; *k; k++)
      if (strcmp(*k, key) == 0) ok = 1;
    if (!ok) return sw_err_set(err, SW_EINVAL, "%s: unknown key \"%s\"", where, key);
  }
  return 0;
}

/* Reads an optional number; absent or null leaves *out unchanged. */
static int get_num(const json_t *obj, const char *key, const char *where, double *out,
                   struct sw_err *err) {
  json_t *v = json_object_get(obj, key);
  if (!v || json_is_null(v)) return 0;
  if (!json_is_number(v)) return sw_err_set(err, SW_EINVAL, "%s.%s: expected a number", where, key);
  *out = json_number_value(v);
  return 0;
}

static int get_bool(const json_t *obj, const char *key, const char *where, int *out,
                    struct sw_err *err) {
  json_t *v = json_object_get(obj, key);
  if (!v || json_is_null(v)) return 0;
  if (!json_is_boolean(v))
    return sw_err_set(err, SW_EINVAL, "%s.%s: expected true or false", where, key);
  *out = json_is_true(v);
  return 0;
}

static int get_int(const json_t *obj, const char *key, const char *where, int *out,
                   struct sw_err *err) {
  json_t *v = json_object_get(obj, key);
  if (!v || json_is_null(v)) return 0;
  if (!json_is_integer(v) || json_integer_value(v) < -1000000000 ||
      json_integer_value(v) > 1000000000)
    return sw_err_set(err, SW_EINVAL, "%s.%s: expected an integer", where, key);
  *out = (int)json_integer_value(v);
  return 0;
}

static int parse_pair(const json_t *p, size_t i, int baseline, struct sw_gate_pair *out,
                      struct sw_err *err) {
  static const char *const keys[] = {"off",     "on",       "off_guard",    "on_guard",
                                     "machine", "order",    "contaminated", "replaces",
                                     "invalid", "off_size", "on_size",      NULL};
  char where[48];
  snprintf(where, sizeof where, "pairs[%zu]", i);
  if (!json_is_object(p)) return sw_err_set(err, SW_EINVAL, "%s: expected an object", where);
  int rc = only_keys(p, where, keys, err);
  if (rc) return rc;
  memset(out, 0, sizeof *out);
  out->off = out->on = out->off_guard = out->on_guard = NAN;
  out->off_size = out->on_size = NAN;
  out->replaces = -1;
  if ((rc = get_num(p, "off_size", where, &out->off_size, err)) ||
      (rc = get_num(p, "on_size", where, &out->on_size, err)) ||
      (rc = get_num(p, "off", where, &out->off, err)) ||
      (rc = get_num(p, "on", where, &out->on, err)) ||
      (rc = get_num(p, "off_guard", where, &out->off_guard, err)) ||
      (rc = get_num(p, "on_guard", where, &out->on_guard, err)) ||
      (rc = get_bool(p, "contaminated", where, &out->contaminated, err)) ||
      (rc = get_bool(p, "invalid", where, &out->invalid, err)) ||
      (rc = get_int(p, "replaces", where, &out->replaces, err)))
    return rc;
  if (!out->invalid && !isfinite(out->on))
    return sw_err_set(err, SW_EINVAL, "%s.on: missing (a valid pair needs its on value)", where);
  if (baseline && isfinite(out->off))
    return sw_err_set(err, SW_EINVAL,
                      "%s.off: pairs carry no off value in baseline form (\"baseline\" is given)",
                      where);
  if (!baseline && !out->invalid && !isfinite(out->off))
    return sw_err_set(err, SW_EINVAL, "%s.off: missing (a valid pair needs its off value)", where);
  json_t *m = json_object_get(p, "machine");
  if (m && !json_is_null(m)) {
    if (!json_is_string(m) || strlen(json_string_value(m)) >= SW_GATE_NAME_MAX)
      return sw_err_set(err, SW_EINVAL, "%s.machine: expected a string under %d bytes", where,
                        SW_GATE_NAME_MAX);
    snprintf(out->machine, sizeof out->machine, "%s", json_string_value(m));
  }
  json_t *o = json_object_get(p, "order");
  if (o && !json_is_null(o)) {
    const char *s = sw_json_str(o, "");
    if (strcmp(s, "off-on") == 0)
      out->order = SW_GATE_OFF_ON;
    else if (strcmp(s, "on-off") == 0)
      out->order = SW_GATE_ON_OFF;
    else
      return sw_err_set(err, SW_EINVAL, "%s.order: expected \"off-on\" or \"on-off\"", where);
  }
  return 0;
}

int sw_gate_input_from_json(const json_t *root, struct sw_gate_input *in,
                            struct sw_gate_pair **pairs_out, struct sw_gate_config *cfg,
                            struct sw_err *err) {
  static const char *const top_keys[] = {"name",
                                         "metric",
                                         "metric_direction",
                                         "rule",
                                         "guard",
                                         "pairs",
                                         "baseline",
                                         "alpha",
                                         "power",
                                         "sigma_ratio_warn",
                                         "sequential",
                                         "bootstrap",
                                         "sensitivity",
                                         "binary_changed",
                                         "size_tolerance",
                                         NULL};
  if (!in || !pairs_out || !cfg) return sw_err_set(err, SW_EINVAL, "gate input: missing output");
  *pairs_out = NULL;
  memset(in, 0, sizeof *in);
  sw_gate_config_default(cfg);
  if (!json_is_object(root))
    return sw_err_set(err, SW_EINVAL, "gate input: expected a JSON object at the top");
  int rc = only_keys(root, "gate input", top_keys, err);
  if (rc) return rc;
  json_t *v = json_object_get(root, "name");
  if (v && !json_is_null(v)) {
    if (!json_is_string(v)) return sw_err_set(err, SW_EINVAL, "name: expected a string");
    snprintf(cfg->name, sizeof cfg->name, "%s", json_string_value(v));
  }
  v = json_object_get(root, "metric_direction");
  if (v && !json_is_null(v)) {
    const char *s = sw_json_str(v, "");
    if (strcmp(s, "lower") == 0)
      cfg->direction = SW_GATE_LOWER;
    else if (strcmp(s, "higher") == 0)
      cfg->direction = SW_GATE_HIGHER;
    else
      return sw_err_set(err, SW_EINVAL, "metric_direction: expected \"lower\" or \"higher\"");
  }
  v = json_object_get(root, "metric");
  if (v && !json_is_null(v) && !json_is_string(v))
    return sw_err_set(err, SW_EINVAL, "metric: expected a string (the metric's name)");
  if ((rc = get_num(root, "alpha", "gate input", &cfg->alpha, err)) ||
      (rc = get_num(root, "power", "gate input", &cfg->power, err)) ||
      (rc = get_num(root, "sigma_ratio_warn", "gate input", &cfg->sigma_ratio_warn, err)) ||
      (rc = get_num(root, "size_tolerance", "gate input", &cfg->size_tol, err)))
    return rc;
  v = json_object_get(root, "sensitivity");
  if (v && !json_is_null(v)) {
    const char *s = sw_json_str(v, "");
    if (strcmp(s, "robust") == 0)
      cfg->sens = SW_GATE_SENS_ROBUST;
    else if (strcmp(s, "mean") == 0)
      cfg->sens = SW_GATE_SENS_MEAN;
    else
      return sw_err_set(err, SW_EINVAL, "sensitivity: expected \"robust\" or \"mean\"");
  }
  v = json_object_get(root, "rule");
  if (v && !json_is_null(v)) {
    static const char *const k[] = {"k", "floor", NULL};
    if (!json_is_object(v))
      return sw_err_set(err, SW_EINVAL, "rule: expected an object {k, floor}");
    if ((rc = only_keys(v, "rule", k, err)) || (rc = get_num(v, "k", "rule", &cfg->k, err)) ||
        (rc = get_num(v, "floor", "rule", &cfg->floor, err)))
      return rc;
  }
  v = json_object_get(root, "guard");
  if (v && !json_is_null(v)) {
    static const char *const k[] = {"metric",  "max_drop", "band", "higher_is_better",
                                    "enabled", "required", NULL};
    if (!json_is_object(v)) return sw_err_set(err, SW_EINVAL, "guard: expected an object");
    if ((rc = only_keys(v, "guard", k, err)) ||
        (rc = get_num(v, "max_drop", "guard", &cfg->max_drop, err)) ||
        (rc = get_bool(v, "higher_is_better", "guard", &cfg->guard_higher, err)) ||
        (rc = get_bool(v, "enabled", "guard", &cfg->has_guard, err)) ||
        (rc = get_bool(v, "required", "guard", &cfg->guard_required, err)))
      return rc;
    json_t *gm = json_object_get(v, "metric");
    if (gm && !json_is_null(gm)) {
      if (!json_is_string(gm))
        return sw_err_set(err, SW_EINVAL, "guard.metric: expected a string (the metric's name)");
      snprintf(cfg->guard_metric, sizeof cfg->guard_metric, "%s", json_string_value(gm));
    }
    json_t *band = json_object_get(v, "band");
    if (band && !json_is_null(band)) {
      if (!json_is_array(band) || json_array_size(band) != 2 ||
          !json_is_number(json_array_get(band, 0)) || !json_is_number(json_array_get(band, 1)))
        return sw_err_set(err, SW_EINVAL, "guard.band: expected [low, high]");
      cfg->has_band = 1;
      cfg->band_lo = json_number_value(json_array_get(band, 0));
      cfg->band_hi = json_number_value(json_array_get(band, 1));
    }
  }
  v = json_object_get(root, "sequential");
  if (v && !json_is_null(v)) {
    static const char *const k[] = {"enabled",      "min_pairs", "max_pairs", "futility",
                                    "futility_lab", "alpha",     NULL};
    if (!json_is_object(v)) return sw_err_set(err, SW_EINVAL, "sequential: expected an object");
    cfg->sequential = 1;
    if ((rc = only_keys(v, "sequential", k, err)) ||
        (rc = get_bool(v, "enabled", "sequential", &cfg->sequential, err)) ||
        (rc = get_int(v, "min_pairs", "sequential", &cfg->min_pairs, err)) ||
        (rc = get_int(v, "max_pairs", "sequential", &cfg->max_pairs, err)) ||
        (rc = get_num(v, "futility", "sequential", &cfg->futility_cp, err)) ||
        (rc = get_num(v, "futility_lab", "sequential", &cfg->futility_lab_cp, err)) ||
        (rc = get_num(v, "alpha", "sequential", &cfg->seq_alpha, err)))
      return rc;
  }
  v = json_object_get(root, "bootstrap");
  if (v && !json_is_null(v)) {
    static const char *const k[] = {"seed", "reps", NULL};
    int seed = (int)cfg->boot_seed;
    if (!json_is_object(v))
      return sw_err_set(err, SW_EINVAL, "bootstrap: expected an object {seed, reps}");
    if ((rc = only_keys(v, "bootstrap", k, err)) ||
        (rc = get_int(v, "seed", "bootstrap", &seed, err)) ||
        (rc = get_int(v, "reps", "bootstrap", &cfg->boot_reps, err)))
      return rc;
    if (seed < 0) return sw_err_set(err, SW_EINVAL, "bootstrap.seed: expected an integer >= 0");
    cfg->boot_seed = (uint64_t)seed;
  }
  v = json_object_get(root, "baseline");
  if (v && !json_is_null(v)) {
    static const char *const k[] = {"mean", "cv", "guard_mean", NULL};
    if (!json_is_object(v))
      return sw_err_set(err, SW_EINVAL, "baseline: expected an object {mean, cv, guard_mean}");
    in->has_baseline = 1;
    in->baseline_mean = NAN;
    in->baseline_cv = NAN;
    in->baseline_guard_mean = NAN;
    if ((rc = only_keys(v, "baseline", k, err)) ||
        (rc = get_num(v, "mean", "baseline", &in->baseline_mean, err)) ||
        (rc = get_num(v, "cv", "baseline", &in->baseline_cv, err)) ||
        (rc = get_num(v, "guard_mean", "baseline", &in->baseline_guard_mean, err)))
      return rc;
    if (!isfinite(in->baseline_mean)) return sw_err_set(err, SW_EINVAL, "baseline.mean: missing");
  }
  if ((rc = get_int(root, "binary_changed", "gate input", &in->binary_changed, err))) return rc;
  if (in->binary_changed < 0)
    return sw_err_set(err, SW_EINVAL, "binary_changed: expected an integer >= 0 (workers)");
  json_t *pairs = json_object_get(root, "pairs");
  if (!json_is_array(pairs))
    return sw_err_set(err, SW_EINVAL, "pairs: expected an array of pair objects");
  size_t n = json_array_size(pairs);
  if (n > SW_GATE_MAX_PAIRS)
    return sw_err_set(err, SW_EINVAL, "pairs: %zu pairs, at most %d", n, SW_GATE_MAX_PAIRS);
  struct sw_gate_pair *arr = calloc(n ? n : 1, sizeof *arr);
  if (!arr) return sw_err_set(err, SW_ENOMEM, "gate input: out of memory");
  for (size_t i = 0; i < n; i++) {
    rc = parse_pair(json_array_get(pairs, i), i, in->has_baseline, &arr[i], err);
    if (rc) {
      free(arr);
      return rc;
    }
  }
  in->pairs = arr;
  in->n_pairs = n;
  *pairs_out = arr;
  return 0;
}

int sw_gate_eval_file(const char *path, FILE *out, struct sw_err *err) {
  if (!path || !out) return sw_err_set(err, SW_EINVAL, "gate eval: no file");
  json_error_t jerr;
  json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
  if (!root) {
    FILE *probe = fopen(path, "r");
    if (!probe) return sw_err_set(err, SW_ENOTFOUND, "gate eval: cannot open %s", path);
    fclose(probe);
    return sw_err_set(err, SW_EINVAL, "%s:%d:%d: %s", path, jerr.line, jerr.column, jerr.text);
  }
  struct sw_gate_input in;
  struct sw_gate_pair *pairs = NULL;
  struct sw_gate_config cfg;
  struct sw_gate_result *res = malloc(sizeof *res);
  int rc = res ? 0 : sw_err_set(err, SW_ENOMEM, "gate eval: out of memory");
  if (rc == 0) rc = sw_gate_input_from_json(root, &in, &pairs, &cfg, err);
  if (rc == 0) rc = sw_gate_eval(&in, &cfg, res, err);
  if (rc == 0) {
    json_t *o = sw_gate_result_to_json(res);
    if (!o)
      rc = sw_err_set(err, SW_ENOMEM, "gate eval: out of memory");
    else if (json_dumpf(o, out, JSON_INDENT(2) | JSON_REAL_PRECISION(10)) != 0 ||
             fputc('\n', out) == EOF)
      rc = sw_err_set(err, SW_EIO, "gate eval: cannot write the result");
    json_decref(o);
  }
  if (rc && rc != SW_ENOMEM && rc != SW_EIO) sw_err_prefix(err, "%s", path);
  json_decref(root);
  free(pairs);
  free(res);
  return rc;
}
