/* sw_gate.c: the gate engine's decision: pair sets for the sensitivity analysis, the lab rule, the
 * quality guard, paired and multi-machine analysis, resolution, sequential looks and the reasons
 * written in the lab's words. JSON in and out lives in sw_gate_json.c; the statistics in
 * sw_stats.c. docs/gate-rules.md is the reader's version of this file. */
#include "sw_gate.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

#include "sw_stats.h"

void sw_gate_config_default(struct sw_gate_config *cfg) {
  memset(cfg, 0, sizeof *cfg);
  cfg->direction = SW_GATE_LOWER;
  cfg->k = 2.0;
  cfg->floor = 0.01;
  cfg->has_guard = 1;
  cfg->max_drop = 0.05;
  cfg->guard_higher = 1;
  cfg->sigma_ratio_warn = 3.0;
  cfg->alpha = 0.05;
  cfg->power = 0.8;
  cfg->min_pairs = 3;
  cfg->max_pairs = 8;
  cfg->seq_alpha = 0.09;
  cfg->futility_cp = 0.2;
  cfg->size_tol = SW_GATE_SIZE_TOL;
  cfg->futility_lab_cp = 0.07;
  cfg->boot_seed = 1;
  cfg->boot_reps = 2000;
}

const char *sw_gate_verdict_name(enum sw_gate_verdict v) {
  switch (v) {
  case SW_GATE_ADOPT: return "adopt";
  case SW_GATE_REJECT: return "reject";
  default: return "inconclusive";
  }
}

const char *sw_gate_seq_name(enum sw_gate_seq_decision d) {
  switch (d) {
  case SW_GATE_SEQ_CONTINUE: return "continue";
  case SW_GATE_SEQ_STOP_DECISIVE: return "stop-decisive";
  case SW_GATE_SEQ_STOP_FUTILE: return "stop-futile";
  case SW_GATE_SEQ_STOP_MAX: return "stop-max";
  default: return "none";
  }
}

const char *sw_gate_order_name(enum sw_gate_order o) {
  return o == SW_GATE_ON_OFF ? "on-off" : "off-on";
}

const char *sw_gate_set_name(enum sw_gate_set s) {
  switch (s) {
  case SW_GATE_SET_KEPT: return "kept";
  case SW_GATE_SET_BOTH: return "both";
  default: return "replaced";
  }
}

int sw_gate_plan_make(const struct sw_gate_config *cfg, struct sw_gate_plan *plan,
                      struct sw_err *err) {
  if (!cfg || !plan) return sw_err_set(err, SW_EINVAL, "gate plan: no config");
  if (cfg->min_pairs < 1 || cfg->max_pairs < cfg->min_pairs)
    return sw_err_set(err, SW_EINVAL, "gate plan: sequential pairs need 1 <= min (%d) <= max (%d)",
                      cfg->min_pairs, cfg->max_pairs);
  int looks = cfg->max_pairs - cfg->min_pairs + 1;
  if (looks > SW_GATE_MAX_LOOKS)
    return sw_err_set(err, SW_EINVAL, "gate plan: %d looks, at most %d", looks, SW_GATE_MAX_LOOKS);
  if (!(cfg->seq_alpha > 0.0 && cfg->seq_alpha < 0.5))
    return sw_err_set(err, SW_EINVAL, "gate plan: sequential alpha %g is not in (0, 0.5)",
                      cfg->seq_alpha);
  memset(plan, 0, sizeof *plan);
  plan->min_pairs = cfg->min_pairs;
  plan->max_pairs = cfg->max_pairs;
  plan->alpha = cfg->seq_alpha;
  plan->n_looks = looks;
  double t[SW_GATE_MAX_LOOKS];
  for (int j = 0; j < looks; j++) {
    t[j] = (double)(cfg->min_pairs + j) / (double)cfg->max_pairs;
    plan->spent[j] = sw_stats_obf_spend(t[j], cfg->seq_alpha);
  }
  return sw_stats_gs_bounds(t, (size_t)looks, cfg->seq_alpha, plan->bound, err);
}

/* ---- reasons ---------------------------------------------------------------------------- */

static void add_line(char (*lines)[SW_GATE_REASON_MAX], int *n, const char *fmt, va_list ap) {
  if (*n >= SW_GATE_MAX_REASONS) return;
  vsnprintf(lines[*n], SW_GATE_REASON_MAX, fmt, ap);
  (*n)++;
}

static void reason(struct sw_gate_result *res, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void reason(struct sw_gate_result *res, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  add_line(res->reasons, &res->n_reasons, fmt, ap);
  va_end(ap);
}

static void warning(struct sw_gate_result *res, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void warning(struct sw_gate_result *res, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  add_line(res->warnings, &res->n_warnings, fmt, ap);
  va_end(ap);
}

/* ---- validation ------------------------------------------------------------------------- */

static int check_config(const struct sw_gate_config *c, struct sw_err *err) {
  if (!(c->k >= 0.0) || !isfinite(c->k))
    return sw_err_set(err, SW_EINVAL, "gate config: rule.k %g must be >= 0", c->k);
  if (!(c->floor >= 0.0 && c->floor < 1.0))
    return sw_err_set(err, SW_EINVAL, "gate config: rule.floor %g must be in [0, 1)", c->floor);
  if (c->has_guard && !(c->max_drop >= 0.0 && isfinite(c->max_drop)))
    return sw_err_set(err, SW_EINVAL, "gate config: guard.max_drop %g must be >= 0", c->max_drop);
  if (c->has_band && !(c->band_lo <= c->band_hi && isfinite(c->band_lo) && isfinite(c->band_hi)))
    return sw_err_set(err, SW_EINVAL, "gate config: guard.band [%g, %g] is not an interval",
                      c->band_lo, c->band_hi);
  if (!(c->alpha > 0.0 && c->alpha < 0.5))
    return sw_err_set(err, SW_EINVAL, "gate config: alpha %g must be in (0, 0.5)", c->alpha);
  if (!(c->power > 0.0 && c->power < 1.0))
    return sw_err_set(err, SW_EINVAL, "gate config: power %g must be in (0, 1)", c->power);
  if (!(c->sigma_ratio_warn > 1.0))
    return sw_err_set(err, SW_EINVAL, "gate config: sigma ratio warning %g must be > 1",
                      c->sigma_ratio_warn);
  if (c->boot_reps < 0 || (c->boot_reps > 0 && c->boot_reps < 10) || c->boot_reps > 1000000)
    return sw_err_set(err, SW_EINVAL, "gate config: bootstrap reps %d must be 0 or 10..1000000",
                      c->boot_reps);
  if (!(c->size_tol >= 0.0 && c->size_tol < 1.0))
    return sw_err_set(err, SW_EINVAL, "gate config: size tolerance %g must be in [0, 1)",
                      c->size_tol);
  if (c->sequential && !(c->futility_cp >= 0.0 && c->futility_cp < 1.0))
    return sw_err_set(err, SW_EINVAL, "gate config: futility %g must be in [0, 1)", c->futility_cp);
  if (c->sequential && !(c->futility_lab_cp >= 0.0 && c->futility_lab_cp < 1.0))
    return sw_err_set(err, SW_EINVAL, "gate config: lab-rule futility %g must be in [0, 1)",
                      c->futility_lab_cp);
  return 0;
}

static int check_input(const struct sw_gate_input *in, struct sw_err *err) {
  if (in->n_pairs > SW_GATE_MAX_PAIRS)
    return sw_err_set(err, SW_EINVAL, "gate input: %zu pairs, at most %d", in->n_pairs,
                      SW_GATE_MAX_PAIRS);
  if (in->n_pairs > 0 && !in->pairs) return sw_err_set(err, SW_EINVAL, "gate input: no pair array");
  if (in->binary_changed < 0)
    return sw_err_set(err, SW_EINVAL, "gate input: binary_changed %d must be >= 0",
                      in->binary_changed);
  if (in->has_baseline) {
    if (!(in->baseline_mean >= 1e-100 && in->baseline_mean <= 1e100))
      return sw_err_set(err, SW_EINVAL, "gate input: baseline mean %g must be > 0",
                        in->baseline_mean);
    if (isfinite(in->baseline_cv) && in->baseline_cv < 0.0)
      return sw_err_set(err, SW_EINVAL, "gate input: baseline cv %g must be >= 0", in->baseline_cv);
  }
  for (size_t i = 0; i < in->n_pairs; i++) {
    const struct sw_gate_pair *p = &in->pairs[i];
    if (p->replaces < -1 || p->replaces >= (int)in->n_pairs || p->replaces == (int)i)
      return sw_err_set(err, SW_EINVAL, "gate input: pair %zu replaces %d, not another pair", i,
                        p->replaces);
    if (p->invalid) continue;
    /* Metric values are times, rates, dB: a value outside [1e-100, 1e100] is a unit or parsing
     * error upstream, and would overflow the arm sums or underflow a ratio. */
    double lo = 1e-100, hi = 1e100;
    if ((p->on > 0.0 && (p->on < lo || p->on > hi)) ||
        (!in->has_baseline && p->off > 0.0 && (p->off < lo || p->off > hi)))
      return sw_err_set(err, SW_EINVAL,
                        "gate input: pair %zu has a value outside [1e-100, 1e100] (off %g, on %g)",
                        i, p->off, p->on);
    if (!(p->on > 0.0 && isfinite(p->on)))
      return sw_err_set(err, SW_EINVAL, "gate input: pair %zu has on value %g (needs > 0)", i,
                        p->on);
    if (!in->has_baseline && !(p->off > 0.0 && isfinite(p->off)))
      return sw_err_set(err, SW_EINVAL, "gate input: pair %zu has off value %g (needs > 0)", i,
                        p->off);
  }
  return 0;
}

/* ---- the model-size check ----------------------------------------------------------------- */

static int known_size(double v) { return v > 0.0 && isfinite(v); }

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double sw_gate_size_median(double *sizes, size_t n, int *n_known) {
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (known_size(sizes[i])) sizes[k++] = sizes[i];
  n = k;
  if (n_known) *n_known = (int)n;
  if (n < SW_GATE_SIZE_MIN) return NAN;
  qsort(sizes, n, sizeof *sizes, cmp_double);
  return n % 2 ? sizes[n / 2] : 0.5 * (sizes[n / 2 - 1] + sizes[n / 2]);
}

int sw_gate_size_off(double size, double median, double tol, double *dev) {
  if (!known_size(size) || !known_size(median)) return 0;
  double d = size / median - 1.0;
  if (dev) *dev = d;
  return fabs(d) > tol;
}

/* The median of the known sizes of one arm's valid runs (scratch: n_pairs doubles), as
 * sw_gate_size_median. */
static double arm_size_median(const struct sw_gate_input *in, int on, double *scratch,
                              int *n_known) {
  size_t n = 0;
  for (size_t i = 0; i < in->n_pairs; i++)
    if (!in->pairs[i].invalid) scratch[n++] = on ? in->pairs[i].on_size : in->pairs[i].off_size;
  return sw_gate_size_median(scratch, n, n_known);
}

/* Flags (flag[i] = 1) the valid pairs with a run whose known size lies more than cfg->size_tol
 * from its arm's median, and records the check in res->size. A run that trained a model of
 * another size ran another workload (the float-mode runaway of issue 12 grew one run 16% past
 * its siblings at the same config): the evidence is the model, not the measured metric, so the
 * lab's rule that exclusion needs evidence holds. In baseline form only the on arm is checked. */
static void size_check(const struct sw_gate_input *in, const struct sw_gate_config *cfg,
                       double *scratch, int *flag, struct sw_gate_result *res) {
  struct sw_gate_size *z = &res->size;
  z->median_off = z->median_on = NAN;
  if (!(cfg->size_tol > 0.0)) return;
  double med[2];
  med[0] = in->has_baseline ? NAN : arm_size_median(in, 0, scratch, &z->n_off);
  med[1] = arm_size_median(in, 1, scratch, &z->n_on);
  z->median_off = med[0];
  z->median_on = med[1];
  for (size_t i = 0; i < in->n_pairs; i++) {
    const struct sw_gate_pair *p = &in->pairs[i];
    if (p->invalid) continue;
    for (int on = 0; on < 2; on++) {
      double v = on ? p->on_size : p->off_size, dev = 0.0;
      if (!sw_gate_size_off(v, med[on], cfg->size_tol, &dev)) continue;
      if (z->n_runs < SW_GATE_MAX_SIZE_FLAGS)
        z->flags[z->n_runs] = (struct sw_gate_size_flag){
            .pair = (int)i, .on = on, .size = v, .median = med[on], .dev = dev};
      z->n_runs++;
      z->n_pairs += !flag[i];
      flag[i] = 1;
    }
  }
}

/* ---- pair sets -------------------------------------------------------------------------- */

/* Selects the pairs of one sensitivity set into idx; returns how many.
 *  replaced: every valid pair without a contamination flag (contaminated pairs are excluded on
 *            the evidence of their load windows; their replacements stand in for them);
 *  kept:     every valid pair except replacements of valid contaminated pairs;
 *  both:     every valid pair (n + 1 for each replaced pair). */
static size_t select_set(const struct sw_gate_input *in, enum sw_gate_set set, size_t *idx) {
  size_t n = 0;
  for (size_t i = 0; i < in->n_pairs; i++) {
    const struct sw_gate_pair *p = &in->pairs[i];
    if (p->invalid) continue;
    int use = 1;
    if (set == SW_GATE_SET_REPLACED) {
      use = !p->contaminated;
    } else if (set == SW_GATE_SET_KEPT && p->replaces >= 0) {
      const struct sw_gate_pair *orig = &in->pairs[p->replaces];
      use = !(orig->contaminated && !orig->invalid);
    }
    if (use) idx[n++] = i;
  }
  return n;
}

/* ---- one analysis ----------------------------------------------------------------------- */

static double pct(double lr) { return 100.0 * expm1(lr); }

static double sq(double x) { return x * x; }

/* The smallest mean difference a paired t test at two-sided level alpha detects with probability
 * `power` from n >= 2 pairs of per-pair sd: (t_{1-alpha/2, n-1} + t_{power, n-1}) sd / sqrt(n).
 * The one owner of the resolution formula: the metric's MDE, pairs_for and the guard's resolution
 * all call it. */
static double detectable(double sd, int n, double alpha, double power) {
  double df = n - 1;
  return (gsl_cdf_tdist_Pinv(1.0 - alpha / 2.0, df) + gsl_cdf_tdist_Pinv(power, df)) * sd /
         sqrt((double)n);
}

/* Smallest n >= 2 whose paired t test at level alpha and power `power` resolves a difference of
 * |lr| (a log ratio, or guard units) with per-pair sd; -1 when none below SW_GATE_MAX_PAIRS. */
static int pairs_for(double lr, double sd, double alpha, double power) {
  if (!(fabs(lr) > 0.0) || !isfinite(sd)) return -1;
  if (sd == 0.0) return 2;
  for (int n = 2; n <= SW_GATE_MAX_PAIRS; n++) {
    double need = detectable(sd, n, alpha, power);
    if (need <= fabs(lr)) return n;
  }
  return -1;
}

/* Drift between the first and second run of a pair, from the two orders' log ratios (Welch). */
static void order_effect(const struct sw_gate_pair *P, const size_t *idx, size_t n,
                         const double *lr, struct sw_gate_analysis *an) {
  double s[2] = {0, 0}, ss[2] = {0, 0};
  int c[2] = {0, 0};
  for (size_t j = 0; j < n; j++) {
    int o = P[idx[j]].order == SW_GATE_ON_OFF;
    s[o] += lr[j];
    c[o]++;
  }
  an->n_off_on = c[0];
  an->n_on_off = c[1];
  if (c[0] < 2 || c[1] < 2) return;
  double m[2] = {s[0] / c[0], s[1] / c[1]};
  for (size_t j = 0; j < n; j++) {
    int o = P[idx[j]].order == SW_GATE_ON_OFF;
    ss[o] += sq(lr[j] - m[o]);
  }
  double v0 = ss[0] / (c[0] - 1) / c[0], v1 = ss[1] / (c[1] - 1) / c[1];
  double diff = m[0] - m[1];
  an->order_pct = pct(diff / 2.0);
  double se2 = v0 + v1;
  if (se2 > 0.0) {
    double df = se2 * se2 / (v0 * v0 / (c[0] - 1) + v1 * v1 / (c[1] - 1));
    an->order_p = fmin(1.0, 2.0 * gsl_cdf_tdist_Q(fabs(diff) / sqrt(se2), df));
  } else {
    an->order_p = diff != 0.0 ? 0.0 : 1.0;
  }
}

/* The median and the Hodges-Lehmann estimate of the log ratios lr[0..n-1], with the exact
 * signed-rank interval at level 1 - alpha (or the highest this n attains). */
static int robust_location(const double *lr, size_t n, double alpha, struct sw_gate_analysis *an,
                           struct sw_err *err) {
  int rc = sw_stats_median(lr, n, &an->lr_median, err);
  if (rc) return rc;
  an->median_pct = pct(an->lr_median);
  if (n > SW_STATS_HL_MAX) return 0;
  int nonzero = 0;
  for (size_t j = 0; j < n; j++) nonzero += lr[j] != 0.0;
  if (nonzero == 0) return 0;
  struct sw_stats_hl hl;
  rc = sw_stats_hodges_lehmann(lr, n, 1.0 - alpha, &hl, err);
  if (rc) return rc;
  an->hl = hl.est;
  an->hl_pct = pct(hl.est);
  an->hl_lo_pct = pct(hl.lo);
  an->hl_hi_pct = pct(hl.hi);
  an->hl_conf = hl.conf;
  return 0;
}

/* The mean log ratio with each contaminated pair's value limited to the range of the set's clean
 * pairs: a contaminated pair counts at most as much as the most extreme clean pair on its side,
 * whatever its spike. Without contaminated pairs it is the plain mean; with no clean pair the
 * median stands in. */
static double clipped_mean(const struct sw_gate_pair *P, const size_t *idx, size_t n,
                           const double *lr, double median) {
  double lo = INFINITY, hi = -INFINITY, s = 0.0;
  for (size_t j = 0; j < n; j++)
    if (!P[idx[j]].contaminated) {
      lo = fmin(lo, lr[j]);
      hi = fmax(hi, lr[j]);
    }
  if (!isfinite(lo)) return median;
  for (size_t j = 0; j < n; j++) s += P[idx[j]].contaminated ? fmin(hi, fmax(lo, lr[j])) : lr[j];
  return s / (double)n;
}

struct scratch {
  double *lr, *a, *b; /* log ratios, and two work arrays of n_pairs values */
};

static int machine_index(struct sw_gate_analysis *an, const char *id, struct sw_err *err) {
  for (int m = 0; m < an->n_machines; m++)
    if (strcmp(an->machines[m].id, id) == 0) return m;
  if (an->n_machines >= SW_GATE_MAX_MACHINES)
    return sw_err_set(err, SW_EINVAL, "gate input: more than %d machines in one gate",
                      SW_GATE_MAX_MACHINES);
  struct sw_gate_machine *mc = &an->machines[an->n_machines];
  memset(mc, 0, sizeof *mc);
  snprintf(mc->id, sizeof mc->id, "%s", id);
  return an->n_machines++;
}

static void arm_stats(const double *x, size_t n, double *mean, double *cv) {
  double s = 0.0;
  for (size_t i = 0; i < n; i++) s += x[i];
  *mean = n ? s / (double)n : NAN;
  if (n < 2) {
    *cv = NAN;
    return;
  }
  double ss = 0.0;
  for (size_t i = 0; i < n; i++) ss += sq(x[i] - *mean);
  *cv = sqrt(ss / (double)(n - 1)) / *mean;
}

/* The drop rule's threshold on guard_on - guard_off: -max_drop, or +max_drop when lower is
 * better. */
static double guard_threshold(const struct sw_gate_config *cfg) {
  return cfg->guard_higher ? -cfg->max_drop : cfg->max_drop;
}

/* The guard's resolution on the pairs idx[0..n-1], d[] being scratch for n values: the t interval
 * of the mean paired difference, the smallest drop this n and noise detects, and whether the drop
 * rule's threshold lies inside the interval (the decision is then within the guard's noise). */
static int guard_resolution(const struct sw_gate_input *in, const struct sw_gate_config *cfg,
                            const size_t *idx, size_t n, double *d, struct sw_gate_analysis *an,
                            struct sw_err *err) {
  an->guard_n = (int)n;
  if (n < 2) return 0;
  for (size_t j = 0; j < n; j++) {
    const struct sw_gate_pair *p = &in->pairs[idx[j]];
    d[j] = p->on_guard - (in->has_baseline ? in->baseline_guard_mean : p->off_guard);
  }
  struct sw_stats_t t;
  int rc = sw_stats_t_test(d, n, 0.0, 1.0 - cfg->alpha, &t, err);
  if (rc) return rc;
  an->guard_sd = t.sd;
  an->guard_se = t.se;
  an->guard_lo = t.lo;
  an->guard_hi = t.hi;
  an->guard_mde = detectable(t.sd, (int)n, cfg->alpha, cfg->power);
  double thr = guard_threshold(cfg);
  an->guard_uncertain = t.lo < thr && thr < t.hi;
  return 0;
}

/* The verdict of the lab rule and the paired test alone, the quality guard's pass or fail aside:
 * adopt a significant improvement (inconclusive when a required guard could not be judged),
 * reject a significant regression, else inconclusive. */
static enum sw_gate_verdict speed_verdict(const struct sw_gate_config *cfg,
                                          const struct sw_gate_analysis *an) {
  int better = cfg->direction == SW_GATE_LOWER ? an->delta < 0.0 : an->delta > 0.0;
  int agree = (an->delta < 0.0) == (an->lr_mean < 0.0);
  if (!(an->lab_significant && an->paired_significant && agree)) return SW_GATE_INCONCLUSIVE;
  if (!better) return SW_GATE_REJECT;
  /* A required guard that could not be judged blocks adoption only: a significant regression
   * is rejected whatever its quality. */
  int unguarded = cfg->has_guard && cfg->guard_required && !an->guard_evaluated;
  return unguarded ? SW_GATE_INCONCLUSIVE : SW_GATE_ADOPT;
}

/* Analyses the pairs idx[0..n-1]. p_crit is the two-sided level the paired test must beat (alpha,
 * or the sequential look's nominal level). */
static int analyze(const struct sw_gate_input *in, const struct sw_gate_config *cfg,
                   const size_t *idx, size_t n, double p_crit, struct scratch *sc,
                   struct sw_gate_analysis *an, struct sw_err *err) {
  memset(an, 0, sizeof *an);
  an->n = (int)n;
  double nan = NAN;
  an->mean_off = an->mean_on = an->cv_off = an->cv_on = an->delta = an->threshold = nan;
  an->sigma_ratio = an->guard_off = an->guard_on = an->guard_diff = nan;
  an->lr_mean = an->lr_sd = an->lr_se = an->t_stat = an->t_df = an->t_p = nan;
  an->t_lo = an->t_hi = an->effect_pct = an->effect_lo_pct = an->effect_hi_pct = nan;
  an->wilcox_v = an->wilcox_p = an->boot_lo_pct = an->boot_hi_pct = nan;
  an->lr_median = an->median_pct = an->hl = an->hl_pct = an->hl_lo_pct = an->hl_hi_pct = nan;
  an->hl_conf = an->lr_clipped = an->clipped_pct = nan;
  an->re_mu = an->re_se = an->re_lo = an->re_hi = an->re_pct = an->re_lo_pct = an->re_hi_pct = nan;
  an->re_q = an->re_tau2 = an->re_i2 = an->mde_pct = nan;
  an->order_pct = an->order_p = nan;
  an->guard_sd = an->guard_se = an->guard_lo = an->guard_hi = an->guard_mde = nan;
  an->pairs_needed = -1;
  an->guard_pass = 1;
  an->band_pass = 1;
  an->verdict = SW_GATE_INCONCLUSIVE;
  if (n == 0) return 0;

  const struct sw_gate_pair *P = in->pairs;
  int base = in->has_baseline;
  /* Machines (one unnamed machine in baseline form: the baseline has no machine). */
  int mach[SW_GATE_MAX_PAIRS];
  for (size_t j = 0; j < n; j++) {
    int m = machine_index(an, base ? "" : P[idx[j]].machine, err);
    if (m < 0) return m;
    mach[j] = m;
    an->machines[m].n++;
    double off = base ? in->baseline_mean : P[idx[j]].off;
    sc->lr[j] = log(P[idx[j]].on / off);
  }

  /* Lab rule: arm means and CVs; across machines, within-machine deltas and CVs. */
  for (size_t j = 0; j < n; j++) {
    sc->a[j] = base ? in->baseline_mean : P[idx[j]].off;
    sc->b[j] = P[idx[j]].on;
  }
  double cv_off_raw;
  arm_stats(sc->a, n, &an->mean_off, &cv_off_raw);
  arm_stats(sc->b, n, &an->mean_on, &an->cv_on);
  an->cv_off = cv_off_raw;
  an->delta = (an->mean_on - an->mean_off) / an->mean_off;
  if (base) {
    an->mean_off = in->baseline_mean;
    an->cv_off = isfinite(in->baseline_cv) ? in->baseline_cv : an->cv_on;
  } else if (an->n_machines >= 2) {
    double moff[SW_GATE_MAX_MACHINES] = {0}, mon[SW_GATE_MAX_MACHINES] = {0};
    for (size_t j = 0; j < n; j++) {
      moff[mach[j]] += sc->a[j];
      mon[mach[j]] += sc->b[j];
    }
    double d = 0.0;
    for (int m = 0; m < an->n_machines; m++) {
      moff[m] /= an->machines[m].n;
      mon[m] /= an->machines[m].n;
      d += an->machines[m].n * (mon[m] - moff[m]) / moff[m];
    }
    an->delta = d / (double)n;
    double ssoff = 0.0, sson = 0.0;
    for (size_t j = 0; j < n; j++) {
      ssoff += sq(sc->a[j] / moff[mach[j]] - 1.0);
      sson += sq(sc->b[j] / mon[mach[j]] - 1.0);
    }
    int df = (int)n - an->n_machines;
    if (df >= 1) {
      an->cv_off = sqrt(ssoff / df);
      an->cv_on = sqrt(sson / df);
    } else {
      an->cv_off = an->cv_on = NAN; /* filled from the log ratios below when n >= 2 */
    }
  }

  /* Paired log ratios. */
  if (n >= 2) {
    struct sw_stats_t t;
    int rc = sw_stats_t_test(sc->lr, n, 0.0, 1.0 - cfg->alpha, &t, err);
    if (rc) return rc;
    an->lr_mean = t.mean;
    an->lr_sd = t.sd;
    an->lr_se = t.se;
    an->t_stat = t.t;
    an->t_df = t.df;
    an->t_p = t.p;
    an->t_lo = t.lo;
    an->t_hi = t.hi;
    an->effect_lo_pct = pct(t.lo);
    an->effect_hi_pct = pct(t.hi);
    struct sw_stats_wilcoxon w;
    rc = sw_stats_wilcoxon(sc->lr, n, &w, err);
    if (rc) return rc;
    an->wilcox_v = w.v;
    an->wilcox_p = w.p;
    an->wilcox_exact = w.exact;
    if (cfg->boot_reps > 0) {
      double lo, hi;
      rc = sw_stats_bootstrap_mean(sc->lr, n, cfg->boot_reps, cfg->boot_seed, 1.0 - cfg->alpha, &lo,
                                   &hi, err);
      if (rc) return rc;
      an->boot_lo_pct = pct(lo);
      an->boot_hi_pct = pct(hi);
    }
    if (!base && an->n_machines >= 2 && !isfinite(an->cv_off)) {
      /* Every machine ran one pair: no within-machine spread of an arm exists, but a pair's log
       * ratio carries two runs' noise free of machine offsets, so sd / sqrt(2) is one run's CV. */
      an->cv_off = an->cv_on = t.sd / sqrt(2.0);
    }
  } else {
    an->lr_mean = sc->lr[0];
  }
  an->effect_pct = pct(an->lr_mean);
  int rc = robust_location(sc->lr, n, cfg->alpha, an, err);
  if (rc) return rc;
  an->lr_clipped = clipped_mean(P, idx, n, sc->lr, an->lr_median);
  an->clipped_pct = pct(an->lr_clipped);
  if (!base) order_effect(P, idx, n, sc->lr, an);

  if (isfinite(an->cv_off)) {
    an->threshold = fmax(cfg->k * an->cv_off, cfg->floor);
    an->lab_significant = fabs(an->delta) > an->threshold;
  }
  if (!base || isfinite(in->baseline_cv)) {
    double lo = fmin(an->cv_off, an->cv_on), hi = fmax(an->cv_off, an->cv_on);
    if (lo > 0.0 && isfinite(hi)) {
      an->sigma_ratio = hi / lo;
      an->sigma_asymmetry = an->sigma_ratio >= cfg->sigma_ratio_warn;
    }
  }

  /* Per-machine effects and the random-effects pool over machines with >= 2 pairs. */
  double y[SW_GATE_MAX_MACHINES], v[SW_GATE_MAX_MACHINES];
  int pooled[SW_GATE_MAX_MACHINES];
  int k = 0, pos = 0, neg = 0;
  for (int m = 0; m < an->n_machines; m++) {
    struct sw_gate_machine *mc = &an->machines[m];
    double s = 0.0;
    for (size_t j = 0; j < n; j++)
      if (mach[j] == m) s += sc->lr[j];
    mc->effect = s / mc->n;
    mc->pct = pct(mc->effect);
    mc->var = NAN;
    if (mc->n >= 2) {
      double ss = 0.0;
      for (size_t j = 0; j < n; j++)
        if (mach[j] == m) ss += sq(sc->lr[j] - mc->effect);
      mc->var = ss / (mc->n - 1) / mc->n;
      if (mc->var > 0.0) {
        y[k] = mc->effect;
        v[k] = mc->var;
        pooled[k++] = m;
      }
    }
    pos += mc->effect > 0.0;
    neg += mc->effect < 0.0;
  }
  an->sign_disagree = an->n_machines >= 2 && pos > 0 && neg > 0;
  if (!base && k >= 2) {
    struct sw_stats_dl dl;
    rc = sw_stats_dersimonian_laird(y, v, (size_t)k, 1.0 - cfg->alpha, &dl, err);
    if (rc) return rc;
    an->re_k = k;
    an->re_mu = dl.mu;
    an->re_se = dl.se;
    an->re_lo = dl.lo;
    an->re_hi = dl.hi;
    an->re_pct = pct(dl.mu);
    an->re_lo_pct = pct(dl.lo);
    an->re_hi_pct = pct(dl.hi);
    an->re_q = dl.q;
    an->re_tau2 = dl.tau2;
    an->re_i2 = dl.i2;
    double wsum = 0.0;
    for (int i = 0; i < k; i++) wsum += 1.0 / (v[i] + dl.tau2);
    for (int i = 0; i < k; i++) an->machines[pooled[i]].weight = 1.0 / (v[i] + dl.tau2) / wsum;
  }

  /* Quality guard, on means only (float atomics make single runs scatter). */
  int have_guard = 1;
  double gs_off = 0.0, gs_on = 0.0;
  for (size_t j = 0; j < n; j++) {
    const struct sw_gate_pair *p = &P[idx[j]];
    if (!isfinite(p->on_guard) || (!base && !isfinite(p->off_guard))) have_guard = 0;
    gs_on += p->on_guard;
    gs_off += base ? 0.0 : p->off_guard;
  }
  if (base && !isfinite(in->baseline_guard_mean)) have_guard = 0;
  if (cfg->has_guard && have_guard) {
    an->guard_evaluated = 1;
    an->guard_on = gs_on / (double)n;
    an->guard_off = base ? in->baseline_guard_mean : gs_off / (double)n;
    an->guard_diff = an->guard_on - an->guard_off;
    /* A tolerance of 1e-9 keeps a drop that equals max_drop in decimal from failing on rounding. */
    double worse = cfg->guard_higher ? -an->guard_diff : an->guard_diff;
    an->guard_pass = worse <= cfg->max_drop + 1e-9;
    if (cfg->has_band) {
      an->band_pass = an->guard_on >= cfg->band_lo && an->guard_on <= cfg->band_hi &&
                      an->guard_off >= cfg->band_lo && an->guard_off <= cfg->band_hi;
      an->guard_pass = an->guard_pass && an->band_pass;
    }
    rc = guard_resolution(in, cfg, idx, n, sc->a, an, err);
    if (rc) return rc;
  }

  /* Resolution: the effect this n and noise can detect, and the pairs the observed one needs. */
  if (n >= 2 && isfinite(an->lr_sd)) {
    double mde = detectable(an->lr_sd, (int)n, cfg->alpha, cfg->power);
    an->mde_pct = 100.0 * expm1(mde);
    if (isfinite(an->threshold) && fabs(an->delta) > an->threshold)
      an->pairs_needed = pairs_for(an->lr_mean, an->lr_sd, cfg->alpha, cfg->power);
  }

  /* Decision on this set. */
  if (n >= 2 && isfinite(an->t_p)) {
    int sig = an->t_p < p_crit;
    if (sig && an->re_k >= 2) {
      double z = gsl_cdf_ugaussian_Qinv(p_crit / 2.0);
      double lo = an->re_mu - z * an->re_se, hi = an->re_mu + z * an->re_se;
      sig = (lo > 0.0 && an->lr_mean > 0.0) || (hi < 0.0 && an->lr_mean < 0.0);
    }
    an->paired_significant = sig;
  }
  an->verdict = an->guard_evaluated && !an->guard_pass ? SW_GATE_REJECT : speed_verdict(cfg, an);
  return 0;
}

/* ---- the whole gate --------------------------------------------------------------------- */

/* The verdict of a kept or both set under SW_GATE_SENS_ROBUST. The primary (replaced set) has
 * already shown significance by the lab rule and the paired test; what a sensitivity set asks is
 * whether the effect still stands when the contaminated pairs are counted. Its clipped mean log
 * ratio answers that without letting one pair's spike decide: it must lie beyond the primary's
 * threshold (whose CV comes from clean runs) on the primary's side. The guard is judged on the
 * set's means as in every set. */
static enum sw_gate_verdict robust_verdict(const struct sw_gate_config *cfg,
                                           const struct sw_gate_analysis *primary,
                                           struct sw_gate_analysis *an) {
  an->robust_holds = 0;
  if (an->guard_evaluated && !an->guard_pass) return SW_GATE_REJECT;
  if (an->n < 1 || !isfinite(primary->threshold) || !isfinite(an->lr_median))
    return SW_GATE_INCONCLUSIVE;
  double e = expm1(an->lr_clipped);
  if (!(fabs(e) > primary->threshold)) return SW_GATE_INCONCLUSIVE;
  an->robust_holds = (e < 0.0) == (primary->delta < 0.0);
  int better = cfg->direction == SW_GATE_LOWER ? e < 0.0 : e > 0.0;
  if (!better) return SW_GATE_REJECT;
  int unguarded = cfg->has_guard && cfg->guard_required && !an->guard_evaluated;
  return unguarded ? SW_GATE_INCONCLUSIVE : SW_GATE_ADOPT;
}

static const char *better_word(const struct sw_gate_config *cfg, double delta) {
  if (cfg->direction == SW_GATE_LOWER) return delta < 0.0 ? "faster (lower)" : "slower (higher)";
  return delta > 0.0 ? "better (higher)" : "worse (lower)";
}

/* The guard's resolution in one reason: its difference, interval and the smallest drop it can
 * detect, and where the drop rule's threshold lies against the interval. */
static void explain_guard_resolution(const struct sw_gate_config *cfg,
                                     const struct sw_gate_analysis *a, struct sw_gate_result *res) {
  const char *name = cfg->guard_metric, *sep = cfg->guard_metric[0] ? " " : "";
  if (!isfinite(a->guard_mde)) {
    reason(res, "guard: %s%son - off = %+.3g at n = %d; resolution unknown (needs 2 pairs)", name,
           sep, a->guard_diff, a->guard_n);
    return;
  }
  reason(res,
         "guard: %s%son - off = %+.3g (%g%% CI %+.3g .. %+.3g), resolution %.3g at n = %d; the "
         "threshold %+g lies %s the interval",
         name, sep, a->guard_diff, 100 * (1 - cfg->alpha), a->guard_lo, a->guard_hi, a->guard_mde,
         a->guard_n, guard_threshold(cfg), a->guard_uncertain ? "inside" : "outside");
}

/* Writes the reasons a reader of LAB-PRACTICE.md recognises, from the primary analysis. */
static void explain(const struct sw_gate_input *in, const struct sw_gate_config *cfg,
                    struct sw_gate_result *res, double p_crit) {
  const struct sw_gate_analysis *a = &res->set[SW_GATE_SET_REPLACED];
  if (a->n == 0) {
    reason(res, "no usable pairs: every pair is invalid or contaminated");
    return;
  }
  if (a->n_machines >= 2)
    reason(res,
           "lab rule across %d machines: within-machine delta %+.2f%% vs threshold %.2f%% = "
           "max(%g x %s %.2f%%, floor %.2f%%): %s",
           a->n_machines, 100 * a->delta, 100 * a->threshold, cfg->k,
           a->n_machines == a->n ? "CV from the pairs' log ratios (one pair per machine)"
                                 : "pooled within-machine CV_off",
           100 * a->cv_off, 100 * cfg->floor,
           a->lab_significant ? "significant" : "not significant");
  else if (isfinite(a->threshold))
    reason(res,
           "lab rule: delta %+.2f%% (mean off %.6g, on %.6g) vs threshold %.2f%% = "
           "max(%g x CV_off %.3f%%, floor %.2f%%): %s",
           100 * a->delta, a->mean_off, a->mean_on, 100 * a->threshold, cfg->k, 100 * a->cv_off,
           100 * cfg->floor, a->lab_significant ? "significant" : "not significant");
  else
    reason(res, "lab rule: delta %+.2f%% but CV_off needs at least 2 pairs", 100 * a->delta);
  if (in->has_baseline)
    reason(res,
           "baseline form: on runs against a baseline mean of %.6g; CV_off is %s; the "
           "baseline's own run-to-run noise is not in the intervals",
           in->baseline_mean,
           isfinite(in->baseline_cv) ? "the given baseline CV" : "the on arm's CV");
  if (a->n >= 2)
    reason(res,
           "paired (%d pairs): effect %+.2f%%, %g%% t interval [%+.2f%%, %+.2f%%], t p = %.3g "
           "(needs < %.3g); Wilcoxon %s p = %.3g; bootstrap [%+.2f%%, %+.2f%%]",
           a->n, a->effect_pct, 100 * (1 - cfg->alpha), a->effect_lo_pct, a->effect_hi_pct, a->t_p,
           p_crit, a->wilcox_exact ? "exact" : "normal-approx.", a->wilcox_p, a->boot_lo_pct,
           a->boot_hi_pct);
  if (a->re_k >= 2)
    reason(res,
           "random effects over %d machines: %+.2f%% [%+.2f%%, %+.2f%%], I^2 = %.0f%%, "
           "tau^2 = %.3g",
           a->re_k, a->re_pct, a->re_lo_pct, a->re_hi_pct, 100 * a->re_i2, a->re_tau2);
  if (a->guard_evaluated) {
    reason(res, "quality guard: mean on %.5g vs off %.5g (%+.4g, allowed drop %g)%s: %s",
           a->guard_on, a->guard_off, a->guard_diff, cfg->max_drop,
           cfg->has_band ? (a->band_pass ? ", both arms inside the band" : ", outside the band")
                         : "",
           a->guard_pass ? "pass" : "FAIL");
    explain_guard_resolution(cfg, a, res);
  }
  /* The verdict sentence. A decisive verdict over pairs of mixed builds is written as what the
   * numbers say, set aside: set_aside_mixed_builds then holds the verdict and says why. */
  const struct sw_gate_analysis *p = a;
  const char *aside = in->binary_changed > 0 ? "set aside (binary changed): " : "";
  if (res->verdict == SW_GATE_ADOPT) {
    reason(res, "%sadopted: significant change, %s, %s", aside, better_word(cfg, p->delta),
           p->guard_evaluated ? "with quality held" : "quality not guarded (no guard values)");
  } else if (res->verdict == SW_GATE_REJECT) {
    if (p->guard_evaluated && !p->guard_pass)
      reason(res, "%srejected: the quality guard failed", aside);
    else
      reason(res, "%srejected: significant regression, %s by %.2f%%", aside,
             better_word(cfg, p->delta), 100 * fabs(p->delta));
  } else if (res->fragile) {
    reason(res, "inconclusive (fragile): the verdict does not hold with contaminated pairs "
                "kept, replaced and both kept");
    if (cfg->sens == SW_GATE_SENS_ROBUST)
      for (int s = 1; s < SW_GATE_NSETS; s++)
        if (res->set_present[s] && res->set[s].verdict != res->set[0].verdict)
          reason(res,
                 "sensitivity: the %s set's effect is %+.2f%% with each contaminated pair "
                 "limited to the range of the clean pairs (median %+.2f%%), against the "
                 "threshold %.2f%%: the verdict rests on those pairs",
                 sw_gate_set_name((enum sw_gate_set)s), res->set[s].clipped_pct,
                 res->set[s].median_pct, 100 * p->threshold);
  } else {
    if (res->seq.guard_extended)
      reason(res,
             "inconclusive for now: the quality guard fails on its mean (on - off %+.3g, "
             "threshold %+g) but within its own noise, so more pairs come before a reject",
             p->guard_diff, guard_threshold(cfg));
    else if (cfg->has_guard && cfg->guard_required && !p->guard_evaluated && p->lab_significant &&
             p->paired_significant)
      reason(res,
             "inconclusive: significant and %s, but the quality guard is required and "
             "guard values are missing, so it cannot be adopted",
             better_word(cfg, p->delta));
    else if (!p->lab_significant && isfinite(p->threshold))
      reason(res, "inconclusive: |delta| %.2f%% is within the threshold %.2f%%",
             100 * fabs(p->delta), 100 * p->threshold);
    else if (p->lab_significant && !p->paired_significant)
      reason(res,
             "inconclusive: the lab rule passes but the paired test does not (p = %.3g, "
             "needs < %.3g)",
             p->t_p, p_crit);
    else if (p->lab_significant)
      reason(res, "inconclusive: the lab rule and the paired effect disagree in sign");
    else
      reason(res, "inconclusive: not enough pairs to judge");
    if (isfinite(p->mde_pct) && p->pairs_needed > 0)
      reason(res,
             "resolution: at n = %d the minimal detectable effect is %.2f%% (paired t, power %g), "
             "the lab threshold %.2f%%; about %d pairs would resolve the observed %+.2f%%",
             p->n, p->mde_pct, cfg->power, 100 * p->threshold, p->pairs_needed, p->effect_pct);
    else if (isfinite(p->mde_pct))
      reason(res,
             "resolution: at n = %d the minimal detectable effect is %.2f%% (paired t, power %g), "
             "the lab threshold %.2f%%; the observed delta is inside the threshold, which does "
             "not shrink with n, so more pairs alone will not resolve it",
             p->n, p->mde_pct, cfg->power, 100 * p->threshold);
  }
}

/* Valid contaminated pairs that no pair replaces yet: the scheduler still owes their rerun. */
static int pending_replacements(const struct sw_gate_input *in) {
  int n = 0;
  for (size_t i = 0; i < in->n_pairs; i++) {
    const struct sw_gate_pair *p = &in->pairs[i];
    if (!p->contaminated || p->invalid || p->replaces >= 0) continue;
    int replaced = 0;
    for (size_t j = 0; j < in->n_pairs; j++) replaced |= in->pairs[j].replaces == (int)i;
    n += !replaced;
  }
  return n;
}

/* A reject that rests on the guard alone and whose failure lies within the guard's own noise:
 * the drop rule failed (not the band), its threshold lies inside the guard's interval, and the
 * lab rule with the paired test would not reject the change on its speed. */
static int guard_reject_in_noise(const struct sw_gate_config *cfg,
                                 const struct sw_gate_analysis *a) {
  return a->guard_evaluated && !a->guard_pass && a->band_pass && a->guard_uncertain &&
         speed_verdict(cfg, a) != SW_GATE_REJECT;
}

/* The lab rule's prospects at max pairs under the current trend: the final mean log ratio is the
 * current one plus the remaining pairs' mean, those drawn around the current estimate with the
 * current sd; the threshold is held where it is (it scales with CV, not with n). The probability
 * that the final |effect| exceeds it. NAN when it cannot be computed or n >= max. */
static double lab_cond_power(const struct sw_gate_analysis *a, int max_pairs) {
  if (a->n < 2 || a->n >= max_pairs || !isfinite(a->threshold) || !isfinite(a->lr_sd)) return NAN;
  double rest = max_pairs - a->n;
  double sd = a->lr_sd * sqrt(rest) / max_pairs;
  double gap = fabs(a->lr_mean) - log1p(a->threshold);
  if (!(sd > 0.0)) return gap > 0.0 ? 1.0 : 0.0;
  return gsl_cdf_ugaussian_P(gap / sd);
}

/* The sequential decision on the primary set (result.seq); returns the two-sided level the
 * primary's paired test had to beat. */
static double sequential_decide(const struct sw_gate_input *in, const struct sw_gate_config *cfg,
                                const struct sw_gate_plan *plan, int look_j,
                                struct sw_gate_result *res) {
  const struct sw_gate_analysis *a = &res->set[SW_GATE_SET_REPLACED];
  struct sw_gate_sequential *sq = &res->seq;
  sq->decision = SW_GATE_SEQ_NONE;
  sq->pairs_more = -1;
  sq->z_bound = sq->nominal_p = sq->z_stat = sq->cond_power = sq->info_frac = sq->alpha_spent = NAN;
  sq->lab_cond_power = NAN;
  double p_crit_primary = cfg->alpha;
  if (plan) {
    sq->look = a->n;
    sq->info_frac = (double)a->n / plan->max_pairs;
    if (isfinite(a->t_p) && a->t_p < 1.0) {
      double z = a->t_p > 0.0 ? gsl_cdf_ugaussian_Qinv(a->t_p / 2.0) : 40.0;
      sq->z_stat = a->lr_mean < 0.0 ? -z : z;
    } else if (isfinite(a->t_p)) {
      sq->z_stat = 0.0;
    }
    if (look_j < 0) {
      sq->decision = SW_GATE_SEQ_CONTINUE;
      sq->alpha_spent = 0.0;
      if (res->verdict != SW_GATE_INCONCLUSIVE)
        reason(res, "sequential: %s at %d pairs is held back until the first look at %d pairs",
               sw_gate_verdict_name(res->verdict), a->n, plan->min_pairs);
      res->verdict = SW_GATE_INCONCLUSIVE;
      sq->pairs_more = plan->min_pairs - a->n;
    } else {
      int j = look_j;
      sq->z_bound = plan->bound[j];
      sq->alpha_spent = plan->spent[j];
      sq->nominal_p = 2.0 * gsl_cdf_ugaussian_Q(sq->z_bound);
      p_crit_primary = sq->nominal_p;
      double t = fmin(1.0, sq->info_frac);
      double c_end = plan->bound[plan->n_looks - 1];
      if (t < 1.0 && isfinite(sq->z_stat))
        sq->cond_power = gsl_cdf_ugaussian_Q((c_end - fabs(sq->z_stat) / sqrt(t)) / sqrt(1.0 - t));
      sq->lab_cond_power = lab_cond_power(a, plan->max_pairs);
      /* Effect shown smaller than the floor: the interval lies inside +-floor. */
      int inside_floor =
          isfinite(a->t_lo) && a->t_lo > log1p(-cfg->floor) && a->t_hi < log1p(cfg->floor);
      if (res->verdict == SW_GATE_REJECT && a->n < plan->max_pairs &&
          guard_reject_in_noise(cfg, a)) {
        /* A guard that rejects on a difference smaller than its own noise rejects at random:
         * run more pairs; at max pairs the lab's mean rule decides as always. */
        sq->decision = SW_GATE_SEQ_CONTINUE;
        sq->guard_extended = 1;
        res->verdict = SW_GATE_INCONCLUSIVE;
        int need =
            pairs_for(a->guard_diff - guard_threshold(cfg), a->guard_sd, cfg->alpha, cfg->power);
        need = need > 0 ? need - a->n : 1;
        if (need < 1) need = 1;
        if (need > plan->max_pairs - a->n) need = plan->max_pairs - a->n;
        sq->pairs_more = need;
      } else if (res->verdict != SW_GATE_INCONCLUSIVE) {
        sq->decision = SW_GATE_SEQ_STOP_DECISIVE;
        sq->pairs_more = 0;
      } else if (a->n >= plan->max_pairs) {
        sq->decision = SW_GATE_SEQ_STOP_MAX;
        sq->pairs_more = 0;
      } else if (cfg->has_guard && cfg->guard_required && !a->guard_evaluated) {
        /* The runs do not carry the guard metric: more pairs will not bring it. */
        sq->decision = SW_GATE_SEQ_STOP_FUTILE;
        sq->pairs_more = 0;
      } else if (res->fragile && pending_replacements(in) > 0) {
        sq->decision = SW_GATE_SEQ_CONTINUE; /* the replacement may settle it */
        sq->pairs_more = pending_replacements(in);
      } else if (res->fragile && cfg->sens == SW_GATE_SENS_MEAN) {
        /* Every contaminated pair has been rerun and the verdict still depends on leaving them
         * out. Judged by means, further clean pairs dilute a +5..20% spike in the kept set only
         * as 1/sqrt(n), far slower than max pairs allows (bench/gate_mc measured no gain): stop.
         * Judged by the median (the default), a clean pair moves the kept set's median towards
         * the clean pairs', so the gate goes on below. */
        sq->decision = SW_GATE_SEQ_STOP_FUTILE;
        sq->pairs_more = 0;
      } else if ((isfinite(sq->cond_power) && sq->cond_power < cfg->futility_cp) ||
                 (isfinite(sq->lab_cond_power) && sq->lab_cond_power < cfg->futility_lab_cp) ||
                 inside_floor) {
        sq->decision = SW_GATE_SEQ_STOP_FUTILE;
        sq->pairs_more = 0;
      } else {
        sq->decision = SW_GATE_SEQ_CONTINUE;
        int need = a->pairs_needed > 0 ? a->pairs_needed - a->n : 1;
        if (need < 1) need = 1;
        if (need > plan->max_pairs - a->n) need = plan->max_pairs - a->n;
        sq->pairs_more = need;
      }
    }
  }

  return p_crit_primary;
}

/* The sequential decision in words. */
static void explain_sequential(const struct sw_gate_config *cfg, const struct sw_gate_plan *plan,
                               struct sw_gate_result *res) {
  const struct sw_gate_analysis *a = &res->set[SW_GATE_SET_REPLACED];
  const struct sw_gate_sequential *sq = &res->seq;
  if (plan && sq->decision != SW_GATE_SEQ_NONE) {
    if (sq->decision == SW_GATE_SEQ_CONTINUE && a->n < plan->min_pairs)
      reason(res, "sequential: continue; the first look is at %d pairs (now %d)", plan->min_pairs,
             a->n);
    else if (sq->decision == SW_GATE_SEQ_CONTINUE && sq->guard_extended)
      reason(res,
             "sequential: continue after the look at %d of at most %d pairs instead of "
             "rejecting: the guard's failure lies within its own noise (resolution %.3g); "
             "about %d more pair(s)",
             a->n, plan->max_pairs, a->guard_mde, sq->pairs_more);
    else if (sq->decision == SW_GATE_SEQ_CONTINUE)
      reason(res,
             "sequential: continue after the look at %d of at most %d pairs: |z| %.2f "
             "below the boundary %.2f, conditional power %.2f",
             a->n, plan->max_pairs, fabs(sq->z_stat), sq->z_bound, sq->cond_power);
    else if (sq->decision == SW_GATE_SEQ_STOP_FUTILE && res->fragile)
      reason(res,
             "sequential: stopped at %d pairs: every contaminated pair has been rerun and "
             "the verdict still depends on excluding them (fragile)",
             a->n);
    else if (sq->decision == SW_GATE_SEQ_STOP_FUTILE)
      reason(res,
             "sequential: stopped for futility at %d pairs: conditional power %.2f under the "
             "current trend (stops below %.2f), or the effect is shown inside +-%.2f%%",
             a->n, sq->cond_power, cfg->futility_cp, 100 * cfg->floor);
    else if (sq->decision == SW_GATE_SEQ_STOP_DECISIVE)
      reason(res,
             "sequential: stopped at %d pairs, |z| %.2f crosses the boundary %.2f "
             "(alpha spent %.4f of %.4f)",
             a->n, fabs(sq->z_stat), sq->z_bound, sq->alpha_spent, plan->alpha);
    else
      reason(res, "sequential: stopped at the maximum of %d pairs", plan->max_pairs);
  }
}

/* LAB-PRACTICE rule 7 (the trainer binary is the same before and after a series): when some
 * machine's runs carry more than one trainer binary the pairs no longer compare one change. Any
 * verdict is held at inconclusive with the reason, and a sequential gate stops: more pairs
 * cannot unmix the builds. Runs after the other explanations, so they say what the numbers
 * alone would have decided. */
static void set_aside_mixed_builds(const struct sw_gate_input *in, struct sw_gate_result *res) {
  if (in->binary_changed <= 0) return;
  res->verdict = SW_GATE_INCONCLUSIVE;
  reason(res,
         "inconclusive: the trainer binary changed during the series on %d worker(s) (more than "
         "one trainer sha256): rerun the gate with one build",
         in->binary_changed);
  if (res->seq.decision != SW_GATE_SEQ_NONE) {
    res->seq.decision = SW_GATE_SEQ_STOP_FUTILE;
    res->seq.pairs_more = 0;
  }
}

/* Warnings: what a careful reader of the lab's write-ups would flag. */
static void add_warnings(const struct sw_gate_input *in, const struct sw_gate_config *cfg,
                         struct sw_gate_result *res) {
  const struct sw_gate_analysis *a = &res->set[SW_GATE_SET_REPLACED];
  if (a->sigma_asymmetry)
    warning(res,
            "sigma asymmetry: CV ratio %.1f between arms (off %.2f%%, on %.2f%%) is the "
            "signature of contamination",
            a->sigma_ratio, 100 * a->cv_off, 100 * a->cv_on);
  if (a->sign_disagree)
    warning(res, "machines disagree in sign: per-machine effects point both ways");
  if (isfinite(a->order_p) && a->order_p < cfg->alpha)
    warning(res,
            "order effect: a pair's second run is %+.2f%% slower (off-on %d vs on-off %d "
            "pairs, Welch p = %.3g); counterbalanced orders cancel it only when balanced",
            a->order_pct, a->n_off_on, a->n_on_off, a->order_p);
  if (cfg->has_guard && !a->guard_evaluated && a->n > 0)
    warning(res, "quality guard not evaluated: guard values missing");
  if (a->guard_evaluated && a->guard_uncertain)
    warning(res,
            "quality guard within its own noise: the threshold %+g lies inside the %g%% CI "
            "%+.3g .. %+.3g of on - off (resolution %.3g at n = %d); %s",
            guard_threshold(cfg), 100 * (1 - cfg->alpha), a->guard_lo, a->guard_hi, a->guard_mde,
            a->guard_n,
            res->seq.guard_extended ? "the sequential gate runs more pairs before rejecting"
            : a->guard_pass         ? "its pass stands by the lab's mean rule"
                                    : "its failure stands by the lab's mean rule");
  for (size_t i = 0; i < in->n_pairs; i++)
    if (in->pairs[i].replaces >= 0 && in->pairs[i].contaminated)
      warning(res, "pair %zu, the replacement of pair %d, is contaminated too", i,
              in->pairs[i].replaces);
  const struct sw_gate_size *z = &res->size;
  for (int k = 0; k < z->n_runs && k < SW_GATE_MAX_SIZE_FLAGS; k++)
    warning(res,
            "model size: pair %d's %s run trained %.0f, %+.1f%% from its arm's median %.0f "
            "(tolerance %.1f%%): another model, so another workload; the pair counts as "
            "contaminated",
            z->flags[k].pair, z->flags[k].on ? "on" : "off", z->flags[k].size,
            100.0 * z->flags[k].dev, z->flags[k].median, 100.0 * cfg->size_tol);
  if (res->n_contaminated > 0)
    warning(res,
            "%d contaminated pair(s) excluded from the primary analysis on %s "
            "evidence; sensitivity: replaced %s (n=%d), kept %s (n=%d), both %s (n=%d)",
            res->n_contaminated,
            z->n_pairs == 0                     ? "load-window"
            : z->n_pairs == res->n_contaminated ? "model-size"
                                                : "load-window or model-size",
            sw_gate_verdict_name(res->set[0].verdict), res->set[0].n,
            sw_gate_verdict_name(res->set[1].verdict), res->set[1].n,
            sw_gate_verdict_name(res->set[2].verdict), res->set[2].n);
  if (res->n_invalid > 0)
    warning(res, "%d invalid pair(s) (no load-window samples or failed runs) not used",
            res->n_invalid);
}

int sw_gate_eval(const struct sw_gate_input *in, const struct sw_gate_config *cfg,
                 struct sw_gate_result *res, struct sw_err *err) {
  if (!in || !cfg || !res)
    return sw_err_set(err, SW_EINVAL, "gate: missing input, config or result");
  int rc = check_config(cfg, err);
  if (rc == 0) rc = check_input(in, err);
  if (rc) return rc;
  memset(res, 0, sizeof *res);
  res->config = *cfg;
  res->config.plan = NULL;
  snprintf(res->name, sizeof res->name, "%s", cfg->name);
  res->has_baseline = in->has_baseline;
  res->binary_changed = in->binary_changed;
  res->n_input = (int)in->n_pairs;

  /* The model-size check first: everything below sees a flagged pair as contaminated, in a
   * copy of the input (the caller's pairs are borrowed). */
  size_t cap = in->n_pairs ? in->n_pairs : 1;
  struct sw_gate_pair *work_pairs = malloc(cap * sizeof *work_pairs);
  int *size_flag = calloc(cap, sizeof *size_flag);
  size_t *idx = malloc(cap * sizeof *idx);
  struct scratch sc = {malloc(cap * sizeof(double)), malloc(cap * sizeof(double)),
                       malloc(cap * sizeof(double))};
  if (!work_pairs || !size_flag || !idx || !sc.lr || !sc.a || !sc.b) {
    rc = sw_err_set(err, SW_ENOMEM, "gate: out of memory");
    goto out;
  }
  if (in->n_pairs) memcpy(work_pairs, in->pairs, in->n_pairs * sizeof *work_pairs);
  size_check(in, cfg, sc.lr, size_flag, res);
  for (size_t i = 0; i < in->n_pairs; i++) work_pairs[i].contaminated |= size_flag[i];
  struct sw_gate_input work = *in;
  work.pairs = work_pairs;
  in = &work;
  for (size_t i = 0; i < in->n_pairs; i++) {
    res->n_invalid += in->pairs[i].invalid != 0;
    res->n_contaminated += in->pairs[i].contaminated && !in->pairs[i].invalid;
    res->n_replacements += in->pairs[i].replaces >= 0;
  }

  /* Sequential plan, when looking. */
  struct sw_gate_plan local;
  const struct sw_gate_plan *plan = NULL;
  if (cfg->sequential) {
    plan = cfg->plan;
    if (!plan || plan->min_pairs != cfg->min_pairs || plan->max_pairs != cfg->max_pairs ||
        plan->alpha != cfg->seq_alpha) {
      rc = sw_gate_plan_make(cfg, &local, err);
      if (rc) goto out;
      plan = &local;
    }
  }

  int look_j[SW_GATE_NSETS];
  for (int s = 0; s < SW_GATE_NSETS; s++) {
    res->set_present[s] = s == SW_GATE_SET_REPLACED || res->n_contaminated > 0;
    if (!res->set_present[s]) continue;
    size_t n = select_set(in, (enum sw_gate_set)s, idx);
    double p_crit = cfg->alpha;
    look_j[s] = -1;
    if (plan && (int)n >= plan->min_pairs) {
      int j = (int)n > plan->max_pairs ? plan->n_looks - 1 : (int)n - plan->min_pairs;
      look_j[s] = j;
      p_crit = 2.0 * gsl_cdf_ugaussian_Q(plan->bound[j]);
    }
    rc = analyze(in, cfg, idx, n, p_crit, &sc, &res->set[s], err);
    if (rc) goto out;
  }

  /* Sensitivity: a decisive verdict must hold in every set. */
  struct sw_gate_analysis *a = &res->set[SW_GATE_SET_REPLACED];
  if (cfg->sens == SW_GATE_SENS_ROBUST)
    for (int s = 1; s < SW_GATE_NSETS; s++)
      if (res->set_present[s]) res->set[s].verdict = robust_verdict(cfg, a, &res->set[s]);
  res->verdict = a->verdict;
  for (int s = 1; s < SW_GATE_NSETS; s++)
    if (res->set_present[s] && res->set[s].verdict != a->verdict &&
        (a->verdict != SW_GATE_INCONCLUSIVE || res->set[s].verdict != SW_GATE_INCONCLUSIVE))
      res->fragile = 1;
  if (res->fragile && res->verdict != SW_GATE_INCONCLUSIVE)
    res->verdict = SW_GATE_INCONCLUSIVE;
  else
    res->fragile = res->fragile && a->verdict != SW_GATE_INCONCLUSIVE;

  double p_crit_primary = sequential_decide(in, cfg, plan, look_j[SW_GATE_SET_REPLACED], res);
  explain(in, cfg, res, p_crit_primary);
  explain_sequential(cfg, plan, res);
  set_aside_mixed_builds(in, res);
  add_warnings(in, cfg, res);
  rc = 0;
out:
  free(work_pairs);
  free(size_flag);
  free(idx);
  free(sc.lr);
  free(sc.a);
  free(sc.b);
  return rc;
}
