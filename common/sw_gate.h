/* sw_gate.h: the gate engine (DESIGN.md section 6): given off/on run pairs of one A/B gate, decide
 * adopt / reject / inconclusive with every number behind the verdict and the reasons in words.
 *
 * What it computes (docs/gate-rules.md explains each rule and why):
 *  - the lab's rule: delta = (mean_on - mean_off) / mean_off, significant when
 *    |delta| > max(k * CV_off, floor); across several machines delta is the pooled within-machine
 *    effect and CV_off the pooled within-machine CV, so machine offsets cancel;
 *  - the quality guard: mean(on_guard) >= mean(off_guard) - max_drop, optional absolute band,
 *    and its resolution: the t interval of the paired guard differences and the smallest drop
 *    this n and noise can detect; a sequential gate extends rather than reject on a guard
 *    failure that lies within that noise;
 *  - the sigma-asymmetry warning (CV ratio between arms >= 3);
 *  - the paired analysis of per-pair log ratios log(on/off): mean with a t interval, the Wilcoxon
 *    signed-rank test (exact for small n without ties), a seeded bootstrap percentile interval;
 *  - per-machine effects and a DerSimonian-Laird random-effects pool with Q, tau^2 and I^2;
 *  - the model-size check: a run whose model size (splats_final) lies more than size_tol from
 *    its arm's median trained another model than its arm's other runs, so its time measures
 *    another workload: its pair is treated as contaminated (evidence independent of the metric);
 *  - sensitivity: the verdict on contaminated pairs kept / replaced / both kept; a decisive verdict
 *    that does not hold in all three becomes inconclusive ("fragile"). The kept and both sets are
 *    judged on their mean log ratio with each contaminated pair limited to the range of the clean
 *    pairs, against the primary's threshold, so that one contaminated run's spike cannot flip
 *    them (SW_GATE_SENS_ROBUST, the default); SW_GATE_SENS_MEAN judges them with the lab rule and
 *    the paired test, as the lab's rule 6 reads;
 *  - the median and the Hodges-Lehmann estimate of the log ratios with the exact signed-rank
 *    interval, for every set;
 *  - resolution: the minimal detectable effect at the current n and noise, pairs needed;
 *  - sequential looks (Lan-DeMets alpha spending, O'Brien-Fleming type) with futility stopping on
 *    the paired test's and the lab rule's conditional power;
 *  - planning (sw_gate_plan.c): the scheduler's loop simulated on a noise model, the forecast of
 *    runs and verdicts before a gate starts, and a machine's noise memory from earlier gates.
 *
 * The engine is pure: no I/O (except sw_gate_eval_file), no global state, deterministic for a
 * given bootstrap seed, and it allocates only scratch arrays that it frees before returning.
 * The result is a plain struct with fixed-size arrays, so callers may keep it on the stack. */
#ifndef SW_GATE_H
#define SW_GATE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <gsl/gsl_rng.h>
#include <jansson.h>

#include "sw_err.h"

#define SW_GATE_NAME_MAX 64     /* gate name and machine id, NUL included */
#define SW_GATE_MAX_MACHINES 64 /* distinct machines per gate; more is refused (SW_EINVAL) */
#define SW_GATE_MAX_REASONS 24  /* reasons + warnings kept in a result */
#define SW_GATE_REASON_MAX 240  /* one reason, NUL included */
#define SW_GATE_MAX_PAIRS 4096  /* input larger than this is refused with SW_EINVAL */
#define SW_GATE_SIZE_TOL 0.05   /* default size_tol of the model-size check (the spec's too) */

enum sw_gate_direction {
  SW_GATE_LOWER = 0, /* lower metric is better (wallclock) */
  SW_GATE_HIGHER = 1 /* higher metric is better (throughput) */
};

enum sw_gate_order {
  SW_GATE_OFF_ON = 0, /* off run first, then on run */
  SW_GATE_ON_OFF = 1
};

enum sw_gate_verdict { SW_GATE_INCONCLUSIVE = 0, SW_GATE_ADOPT = 1, SW_GATE_REJECT = 2 };

/* The sequential decision after a look. For non-sequential gates it is SW_GATE_SEQ_NONE and the
 * scheduler runs the spec's fixed n pairs (plus replacements). */
enum sw_gate_seq_decision {
  SW_GATE_SEQ_NONE = 0,          /* gate is not sequential */
  SW_GATE_SEQ_CONTINUE = 1,      /* run another pair, then look again */
  SW_GATE_SEQ_STOP_DECISIVE = 2, /* boundary crossed: verdict is adopt or reject */
  SW_GATE_SEQ_STOP_FUTILE = 3,   /* effect cannot plausibly resolve by max pairs: inconclusive */
  SW_GATE_SEQ_STOP_MAX = 4       /* max pairs reached: verdict is final whatever it is */
};

/* One pair: an off run and an on run back to back on one machine. */
struct sw_gate_pair {
  double off, on;                 /* metric values (> 0); off is ignored in baseline form */
  double off_guard, on_guard;     /* guard metric values; NAN when not measured */
  char machine[SW_GATE_NAME_MAX]; /* worker / machine id; "" counts as one unnamed machine */
  enum sw_gate_order order;
  int contaminated; /* 1 when a load window of either run flagged contamination (evidence) */
  int replaces;     /* index in the input array of the pair this one replaces, or -1 */
  int invalid;      /* 1 when a run had no window samples or failed: never used at all */
  /* The runs' model sizes (splats_final: the trained model's splat count); <= 0 or NAN when
   * not known, which leaves the pair out of the model-size check. */
  double off_size, on_size;
};

/* The input of one gate. Two forms:
 *  - paired (has_baseline == 0): pairs[i].off and .on are both measured;
 *  - baseline (has_baseline == 1): only on runs were measured against a known baseline mean, as in
 *    LAB-PRACTICE's warp-skip example; pairs[i].off is ignored, the log ratio of a pair is
 *    log(on / baseline_mean), and CV_off is baseline_cv when given, else the on arm's CV (stated
 *    in the reasons). The baseline's own uncertainty is not modelled; the result says so. */
struct sw_gate_input {
  const struct sw_gate_pair *pairs; /* borrowed */
  size_t n_pairs;
  int has_baseline;
  double baseline_mean;       /* metric mean of the baseline (> 0) */
  double baseline_cv;         /* CV of the baseline runs; NAN when unknown */
  double baseline_guard_mean; /* guard metric mean of the baseline; NAN when unknown */
  /* LAB-PRACTICE rule 7: how many workers ran more than one trainer binary within the pairs
   * (0 = the binary held). When > 0 the pairs no longer compare one change: the engine holds
   * any verdict at inconclusive, says why, and stops a sequential gate (more pairs cannot unmix
   * the builds). The scheduler counts it from the stored attempts. */
  int binary_changed;
};

struct sw_gate_plan; /* below */

/* How the sensitivity sets `kept` and `both` are judged (docs/gate-rules.md section 3). */
enum sw_gate_sens {
  SW_GATE_SENS_ROBUST = 0, /* default: the set's clipped mean log ratio (contaminated pairs
                            * limited to the range of its clean pairs) must lie beyond the
                            * primary's lab threshold on the primary's side, the guard holding */
  SW_GATE_SENS_MEAN = 1    /* each set by the lab rule and the paired test on its own means, as
                            * the lab's rule 6 reads; one +5..20% spike flips it */
};

struct sw_gate_config {
  char name[SW_GATE_NAME_MAX]; /* gate name for the JSON; may be "" */
  enum sw_gate_direction direction;
  double k;                            /* lab rule multiplier of CV_off (default 2) */
  double floor;                        /* lab rule floor as a fraction (default 0.01) */
  int has_guard;                       /* 1: apply the quality guard (needs guard values) */
  char guard_metric[SW_GATE_NAME_MAX]; /* the guard metric's name for the reasons; may be "" */
  int guard_required; /* 1: without guard values on every pair a faster change is not adopted
                       * (inconclusive): the lab adopts nothing whose quality was not checked.
                       * The scheduler sets it for every gate (a spec's guard always exists);
                       * default 0 so hand-given `gate eval` data without guard values works */
  double max_drop;    /* allowed drop of the guard mean (default 0.05, e.g. dB) */
  int guard_higher;   /* 1 (default): higher guard metric is better (PSNR); 0: lower is better */
  int has_band;       /* 1: every arm's guard mean must lie inside [band_lo, band_hi] */
  double band_lo, band_hi;
  double sigma_ratio_warn; /* CV ratio between arms that triggers the warning (default 3) */
  double alpha;            /* two-sided level of the paired tests and intervals (default 0.05) */
  double power;            /* power used for resolution figures (default 0.8) */
  /* Sequential looks (DESIGN section 5): */
  int sequential;     /* 1: look after each pair with alpha spending */
  int min_pairs;      /* first look: the spec's pairs.n when sequential (default 3) */
  int max_pairs;      /* last look: the spec's pairs.max (default 8) */
  double seq_alpha;   /* two-sided level the sequential paired test spends across the looks
                       * (default 0.09). The lab rule must pass as well, so the procedure's
                       * false-adopt rate is far below seq_alpha / 2: bench/gate_mc measures it
                       * (docs/gate-rules.md section 5). Intervals and fixed-n tests use alpha */
  double futility_cp; /* stop futile when conditional power (current trend) < this (default 0.2) */
  double futility_lab_cp; /* stop futile when the lab rule's conditional power (seq.lab_cond_power)
                           * < this (default 0.07) */
  enum sw_gate_sens sens; /* how the kept and both sets are judged (default robust) */
  /* The model-size check (docs/gate-rules.md section 3): a run whose size lies more than
   * size_tol (a fraction) from the median of its arm's known sizes, when the arm has at least
   * SW_GATE_SIZE_MIN of them, flags its pair as contaminated. Default SW_GATE_SIZE_TOL; 0 turns
   * it off. */
  double size_tol;
  /* Bootstrap: */
  uint64_t boot_seed; /* default 1 */
  int boot_reps;      /* default 2000; 0 skips the bootstrap */
  /* Optional precomputed boundaries (sw_gate_plan_make) for callers that look many times, such
   * as the scheduler or the Monte Carlo benchmark; borrowed; NULL computes them on each call. */
  const struct sw_gate_plan *plan;
};

#define SW_GATE_MAX_LOOKS 64

/* The sequential plan: looks after min_pairs, min_pairs + 1, ..., max_pairs pairs, information
 * fraction n / max_pairs, two-sided boundaries spending cfg.seq_alpha by the Lan-DeMets
 * O'Brien-Fleming-type function. bound[j] and spent[j] belong to the look at min_pairs + j;
 * alpha is the seq_alpha they spend. */
struct sw_gate_plan {
  int min_pairs, max_pairs;
  double alpha;
  int n_looks;
  double bound[SW_GATE_MAX_LOOKS];
  double spent[SW_GATE_MAX_LOOKS];
};

/* Computes the plan for cfg's min_pairs, max_pairs and seq_alpha. SW_EINVAL when they are out of
 * range (1 <= min_pairs <= max_pairs, at most SW_GATE_MAX_LOOKS looks). */
int sw_gate_plan_make(const struct sw_gate_config *cfg, struct sw_gate_plan *plan,
                      struct sw_err *err);

/* Fills cfg with the defaults listed above (lower is better, k 2, floor 0.01, guard on with
 * max_drop 0.05 and higher-is-better, no band, alpha 0.05, sequential off, min 3, max 8,
 * seq_alpha 0.09, futility 0.2 and 0.07, robust sensitivity). */
void sw_gate_config_default(struct sw_gate_config *cfg);

/* Which pairs an analysis used (section "sensitivity" of docs/gate-rules.md). */
enum sw_gate_set {
  SW_GATE_SET_REPLACED = 0, /* contaminated pairs replaced by their reruns (the primary set) */
  SW_GATE_SET_KEPT = 1,     /* contaminated pairs kept, replacements left out */
  SW_GATE_SET_BOTH = 2,     /* contaminated pairs and their replacements (n+1) */
  SW_GATE_NSETS = 3
};

struct sw_gate_machine {
  char id[SW_GATE_NAME_MAX];
  int n;         /* pairs on this machine */
  double effect; /* mean log ratio on this machine */
  double var;    /* variance of that mean (s^2 / n); NAN when n < 2 */
  double pct;    /* effect as a percentage: 100 * (exp(effect) - 1) */
  double weight; /* random-effects weight share in the pool (0 when not pooled) */
};

/* Everything computed on one set of pairs. Log-scale numbers are natural logs of on/off. */
struct sw_gate_analysis {
  int n; /* pairs used */
  int n_machines;
  /* Lab rule */
  double mean_off, mean_on; /* arm means (off = baseline_mean in baseline form) */
  double cv_off, cv_on;     /* arm CVs (single machine) or pooled within-machine CVs */
  double delta;             /* relative delta (fraction), pooled within machines if > 1 */
  double threshold;         /* max(k * cv_off, floor) */
  int lab_significant;      /* |delta| > threshold */
  double sigma_ratio;       /* max(cv)/min(cv) */
  int sigma_asymmetry;      /* sigma_ratio >= sigma_ratio_warn */
  /* Guard */
  int guard_evaluated;        /* 0 when no guard values were given */
  double guard_off, guard_on; /* guard means */
  double guard_diff;          /* guard_on - guard_off (sign as measured) */
  int guard_pass;             /* drop within max_drop and inside the band when one is set */
  int band_pass;
  /* Guard resolution, from the paired differences d = on_guard - off_guard (on_guard minus the
   * baseline guard mean in baseline form) of the pairs the guard rule used. NAN with fewer than
   * 2 pairs or no guard values (guard_n is then the pairs used, or 0 without guard values). */
  int guard_n;
  double guard_sd, guard_se; /* sd (n - 1) of d and its standard error sd / sqrt(n) */
  double guard_lo, guard_hi; /* t interval of mean(d) at level 1 - alpha */
  double guard_mde;          /* smallest drop detectable at this n and noise, in guard units:
                              * (t_{1-alpha/2} + t_{power}) sd / sqrt(n), as mde_pct */
  int guard_uncertain;       /* the drop rule's threshold (-max_drop, +max_drop when lower is
                              * better) lies strictly inside [guard_lo, guard_hi]: the data cannot
                              * tell a drop beyond max_drop from one within it */
  /* Paired log ratios */
  double lr_mean, lr_sd, lr_se;
  double t_stat, t_df, t_p; /* two-sided p of the one-sample t test of log ratios */
  double t_lo, t_hi;        /* t interval of the mean log ratio at level 1 - alpha */
  double effect_pct, effect_lo_pct, effect_hi_pct; /* the same as percentages */
  double wilcox_v;                                 /* V = sum of positive ranks (R's statistic) */
  double wilcox_p;                                 /* two-sided p */
  int wilcox_exact;                /* 1: exact null distribution; 0: normal approximation */
  double boot_lo_pct, boot_hi_pct; /* seeded bootstrap percentile interval; NAN when skipped */
  /* Robust location of the log ratios. In the kept and both sets the clipped mean decides
   * (SW_GATE_SENS_ROBUST; docs/gate-rules.md section 3 says why not the median: at the same
   * false-adopt rate it cost 2.4 points of power at a 2% effect). The median and the
   * Hodges-Lehmann estimate with its exact signed-rank interval (which cannot exclude 0 below
   * n = 6) are reported for every set. */
  double lr_clipped, clipped_pct; /* mean log ratio, each contaminated pair's value limited to
                                   * [min, max] of the set's clean pairs; the median when the set
                                   * has no clean pair */
  double lr_median, median_pct;
  double hl, hl_pct;           /* Hodges-Lehmann estimate (log scale, and as a percentage) */
  double hl_lo_pct, hl_hi_pct; /* exact signed-rank interval as percentages */
  double hl_conf;              /* its attained level (0.75 at n = 3, 0.875 at n = 4, ...) */
  int robust_holds;            /* kept / both under SW_GATE_SENS_ROBUST: the clipped mean
                                * lies beyond the primary's threshold on the primary's side */
  /* Order (drift) estimate from counterbalanced pairs: in an off-on pair the on run is second, in
   * an on-off pair the off run is, so half the difference of their mean log ratios is how much
   * slower (+) a second run is. Needs >= 2 pairs of each order; NAN otherwise. */
  int n_off_on, n_on_off;
  double order_pct; /* second-run effect as a percentage */
  double order_p;   /* Welch two-sample t test of the two orders' log ratios */
  /* Random-effects pool over machines with >= 2 pairs (DerSimonian-Laird) */
  int re_k; /* machines pooled; the pool exists when re_k >= 2 */
  double re_mu, re_se, re_lo, re_hi, re_pct, re_lo_pct, re_hi_pct;
  double re_q, re_tau2, re_i2;
  int sign_disagree; /* machines' effects have opposite signs */
  struct sw_gate_machine machines[SW_GATE_MAX_MACHINES];
  /* Resolution */
  double mde_pct;   /* minimal detectable effect (%) at this n and noise, power cfg.power */
  int pairs_needed; /* pairs to resolve the observed effect; -1 when unresolvable */
  /* Decision on this set alone */
  enum sw_gate_verdict verdict;
  int paired_significant; /* paired test agrees (level alpha, or the sequential boundary) */
};

struct sw_gate_sequential {
  enum sw_gate_seq_decision decision;
  int look;              /* pairs at this look */
  double info_frac;      /* look / max_pairs */
  double alpha_spent;    /* cumulative alpha spent up to this look */
  double z_bound;        /* two-sided boundary on the z scale at this look */
  double nominal_p;      /* nominal two-sided p the paired t test must beat now */
  double z_stat;         /* the t statistic mapped to z through its p-value, signed */
  double cond_power;     /* conditional power under the current trend */
  double lab_cond_power; /* probability under the current trend that the lab rule passes at max
                          * pairs: the mean log ratio's remaining pairs drawn around the current
                          * estimate with the current sd, the threshold held at its current value */
  int pairs_more;        /* more pairs that would resolve the observed effect; -1 unknown */
  int guard_extended;    /* 1: continue instead of a reject that rests on the guard alone,
                          * because the guard's failure lies within its own noise */
};

#define SW_GATE_SIZE_MIN 3        /* known sizes an arm needs for its median to judge a run */
#define SW_GATE_MAX_SIZE_FLAGS 32 /* flagged runs listed in a result (all are counted) */

/* The model-size rule, for every reader that judges model sizes (the engine's check, `splatsweep
 * audit`): the median of the known sizes (> 0, finite) among n (kept and sorted at the front of
 * the array; *n_known, may be NULL, gets how many; NAN when fewer than SW_GATE_SIZE_MIN), and
 * whether a known size lies more than tol from a median (*dev gets size / median - 1). */
double sw_gate_size_median(double *sizes, size_t n, int *n_known);
int sw_gate_size_off(double size, double median, double tol, double *dev);

/* One run the model-size check flagged. */
struct sw_gate_size_flag {
  int pair;      /* index in the input */
  int on;        /* 1: the on run, 0: the off run */
  double size;   /* its model size */
  double median; /* its arm's median */
  double dev;    /* size / median - 1 */
};

struct sw_gate_size {
  int n_off, n_on;              /* valid pairs whose off / on run has a known size */
  double median_off, median_on; /* NAN when the arm has fewer than SW_GATE_SIZE_MIN */
  int n_pairs;                  /* pairs flagged (once each, whichever runs) */
  int n_runs;                   /* runs flagged */
  struct sw_gate_size_flag flags[SW_GATE_MAX_SIZE_FLAGS]; /* the first n_runs (at most 32) */
};

struct sw_gate_result {
  char name[SW_GATE_NAME_MAX];
  enum sw_gate_verdict verdict;
  int fragile; /* the sets disagree on a decisive verdict */
  int n_reasons;
  char reasons[SW_GATE_MAX_REASONS][SW_GATE_REASON_MAX]; /* why, in the lab's words */
  int n_warnings;
  char warnings[SW_GATE_MAX_REASONS][SW_GATE_REASON_MAX]; /* asymmetry, sign disagreement, ... */
  int n_input, n_invalid, n_contaminated, n_replacements; /* n_contaminated: on load-window
                                                           * evidence or model size */
  struct sw_gate_size size; /* the model-size check (all zero / NAN when it did not run) */
  int has_baseline;
  int binary_changed; /* the input's: workers whose trainer binary changed (0 = none) */
  struct sw_gate_analysis set[SW_GATE_NSETS]; /* [SW_GATE_SET_REPLACED] is the primary analysis */
  int set_present[SW_GATE_NSETS]; /* KEPT / BOTH are present only when something is contaminated */
  struct sw_gate_sequential seq;
  struct sw_gate_config config; /* the configuration used, for the report */
};

/* Evaluates one gate. Returns 0, or SW_EINVAL with the reason in err when the input cannot be
 * judged (no valid pairs, a non-positive or non-finite metric, a bad replaces index, a config
 * out of range). SW_ENOMEM when scratch memory fails. res is fully written on success. */
int sw_gate_eval(const struct sw_gate_input *in, const struct sw_gate_config *cfg,
                 struct sw_gate_result *res, struct sw_err *err);

/* The gate object of DESIGN.md section 10: name, verdict, reasons, delta, threshold, guard {...},
 * plus "warnings", "lab", "paired", "machines", "random_effects", "sensitivity", "resolution",
 * "sequential", "config". Returns a new reference (caller json_decref's), NULL on out of memory. */
json_t *sw_gate_result_to_json(const struct sw_gate_result *res);

/* Parses the `gate eval` input of DESIGN section 10 (docs/gate-rules.md lists every key) into a
 * config and a pair array. *pairs_out is malloc'd (caller frees), in->pairs points at it.
 * Returns 0 or SW_EINVAL naming the offending key / pair index. */
int sw_gate_input_from_json(const json_t *root, struct sw_gate_input *in,
                            struct sw_gate_pair **pairs_out, struct sw_gate_config *cfg,
                            struct sw_err *err);

/* The whole `splatsweep gate eval FILE.json` command: reads path, evaluates, prints the gate
 * JSON (indented, one trailing newline) to out. Returns 0, SW_ENOTFOUND / SW_EIO for the file,
 * SW_EINVAL for bad JSON or bad content (message names the file, line and key). */
int sw_gate_eval_file(const char *path, FILE *out, struct sw_err *err);

/* ---- planning (sw_gate_plan.c) ------------------------------------------------------------
 * Before a gate starts: what it will cost and how likely each verdict is, from the spec's design
 * and the machines' recorded noise; and the per-machine noise memory that supplies that noise. */

#define SW_GATE_SIM_MACHINES 16   /* machines a simulated gate spreads over */
#define SW_GATE_SIM_MAX_PAIRS 256 /* pairs, replacements included */

/* The noise model of a simulated gate (bench/gate_mc's, issue 5's): a run's time is
 * 100 (1 + offset[machine]) (1 + effect if on) (1 + drift if second in its pair) (1 + N(0, cv)),
 * and with probability contam its load window flags it and it is slower by a further
 * spike_lo + spike_span U(0, 1). */
struct sw_gate_sim_model {
  int machines;
  double offset[SW_GATE_SIM_MACHINES];
  double cv, contam, spike_lo, spike_span, drift, effect;
};

/* One machine, cv 1%, 10% contaminated by +5..20%, no drift, no effect. */
void sw_gate_sim_model_default(struct sw_gate_sim_model *m);

/* One run of the model: returns its time, *contaminated whether its window flags it. Draws, in
 * this order, one Gaussian, one uniform, and one more uniform when contaminated. */
double sw_gate_sim_run(const struct sw_gate_sim_model *m, gsl_rng *r, int machine, int on,
                       int second, int *contaminated);

/* One simulated gate, as the scheduler runs it: pairs round-robin over the machines from a random
 * first one, orders alternating off-on / on-off, one replacement pair (same order) for each
 * contaminated pair, sw_gate_eval after every pair until the sequential decision is not
 * `continue` (a fixed-n gate: once after n_pairs pairs and their replacements). clean_only feeds
 * the engine the uncontaminated pairs alone (no sensitivity sets; for comparison). res holds the
 * last evaluation, *runs the runs spent, reruns included. SW_EINVAL for a model or design out of
 * range, or an engine error. */
int sw_gate_sim_gate(const struct sw_gate_sim_model *m, const struct sw_gate_config *cfg,
                     int n_pairs, gsl_rng *r, int clean_only, struct sw_gate_result *res, int *runs,
                     struct sw_err *err);

#define SW_GATE_FORECAST_ROWS 4

struct sw_gate_forecast_row {
  double effect;    /* true improvement (fraction, in the better direction): 0, 1, 1.5 and 3 times
                     * the lab threshold max(k cv, floor) */
  double p_adopt;   /* share of simulated gates adopted */
  double p_reject;  /* share rejected (a regression verdict on an improvement or a null) */
  double runs_mean; /* mean runs to the verdict, reruns included */
  int runs_max;     /* most runs any simulated gate took */
};

struct sw_gate_forecast {
  double cv, contam, threshold;
  int machines, sims, n_pairs, max_pairs, sequential;
  struct sw_gate_forecast_row row[SW_GATE_FORECAST_ROWS];
};

/* The expected runs and verdicts of a gate with design cfg (n_pairs = the spec's pairs.n; the
 * sequential keys of cfg) on machines with per-run CV cv, a share contam of runs flagged, pairs
 * spread over `machines` machines: sims simulated gates per row through sw_gate_sim_gate, seeded
 * with seed (the same arguments give the same forecast). The guard is left out: it is judged on
 * its own metric. SW_EINVAL for arguments out of range. About sims x 4 x max_pairs engine
 * evaluations (400 sims of a 5..8 design: about 0.3 s). */
int sw_gate_forecast(const struct sw_gate_config *cfg, int n_pairs, double cv, double contam,
                     int machines, int sims, uint64_t seed, struct sw_gate_forecast *out,
                     struct sw_err *err);

/* One earlier gate's noise on one machine: the within-machine CV of its runs of the metric (off
 * arm, machine mean removed) and its degrees of freedom (runs - 1). */
struct sw_gate_noise_obs {
  double cv;
  int df;
};

struct sw_gate_noise {
  int n_obs;
  double cv_recent; /* the latest gate's CV; NAN without observations */
  int df_recent;
  double cv_history; /* the pooled CV of the gates before it; NAN with fewer than 2 gates */
  int df_history;
  double ratio;   /* cv_recent / cv_history */
  double p;       /* F test of the latest variance against the history's, upper tail */
  int jumped;     /* the noise rose: ratio > 1 and p < jump_p. The caller reports it */
  double cv_plan; /* the CV to plan with: everything pooled, or cv_recent when it jumped (the
                   * machine as it is now; never the calmer past silently) */
};

/* The noise memory of one machine: obs[0..n-1] oldest first (the store's earlier gates of that
 * worker and metric). jump_p: the F test's level for a jump (0.01 is a good default).
 * Wiring (the coordinator's, not done here): for each worker machine of a gate's placement, the
 * store's finished gates on that metric give one observation each: the off runs' within-machine
 * CV sd(off) / mean(off) and df = runs - 1 (the last ~10 gates); a jumped machine goes into the
 * submit / check output and the gate's log, and the fleet's planning CV, the root mean square of
 * the machines' cv_plan, goes to sw_gate_forecast. */
int sw_gate_noise_assess(const struct sw_gate_noise_obs *obs, size_t n, double jump_p,
                         struct sw_gate_noise *out, struct sw_err *err);

/* Names for JSON and logs: "adopt" / "reject" / "inconclusive"; "continue" / "stop-decisive" /
 * "stop-futile" / "stop-max" / "none"; "off-on" / "on-off"; "replaced" / "kept" / "both". */
const char *sw_gate_verdict_name(enum sw_gate_verdict v);
const char *sw_gate_seq_name(enum sw_gate_seq_decision d);
const char *sw_gate_order_name(enum sw_gate_order o);
const char *sw_gate_set_name(enum sw_gate_set s);

#endif
