/* sw_gate_plan.c: planning a gate before it starts. The gate simulator (the scheduler's loop
 * around sw_gate_eval on a noise model: pairs round-robin over machines, alternating orders, one
 * replacement pair per contaminated pair, a look after every pair), the forecast of runs and
 * verdicts it gives for a spec and a machine noise level, and the per-machine noise memory that
 * supplies that level from earlier gates and spots a machine whose noise jumped. Pure: the
 * numbers come in as arguments, nothing is read or written; the simulator is seeded.
 * docs/gate-rules.md section 5 is the reader's version. */
#include "sw_gate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_randist.h>

double sw_gate_sim_run(const struct sw_gate_sim_model *m, gsl_rng *r, int machine, int on,
                       int second, int *contaminated) {
  double t = 100.0 * (1.0 + m->offset[machine]) * (on ? 1.0 + m->effect : 1.0);
  t *= second ? 1.0 + m->drift : 1.0;
  t *= 1.0 + gsl_ran_gaussian(r, m->cv);
  *contaminated = gsl_rng_uniform(r) < m->contam;
  if (*contaminated) t *= 1.0 + m->spike_lo + m->spike_span * gsl_rng_uniform(r);
  return t;
}

void sw_gate_sim_model_default(struct sw_gate_sim_model *m) {
  memset(m, 0, sizeof *m);
  m->machines = 1;
  m->cv = 0.01;
  m->contam = 0.10;
  m->spike_lo = 0.05;
  m->spike_span = 0.15;
}

int sw_gate_sim_gate(const struct sw_gate_sim_model *m, const struct sw_gate_config *cfg,
                     int n_pairs, gsl_rng *r, int clean_only, struct sw_gate_result *res,
                     int *runs_out, struct sw_err *err) {
  if (!m || !cfg || !r || !res || !runs_out)
    return sw_err_set(err, SW_EINVAL, "gate simulation: missing argument");
  if (m->machines < 1 || m->machines > SW_GATE_SIM_MACHINES)
    return sw_err_set(err, SW_EINVAL, "gate simulation: %d machines, 1 to %d", m->machines,
                      SW_GATE_SIM_MACHINES);
  if (!(m->cv >= 0.0 && m->cv < 1.0) || !(m->contam >= 0.0 && m->contam < 1.0))
    return sw_err_set(err, SW_EINVAL,
                      "gate simulation: cv %g and contamination %g must be in "
                      "[0, 1)",
                      m->cv, m->contam);
  /* Contaminated pairs do not count towards a look, so a gate may run more pairs than max. */
  int cap = SW_GATE_SIM_MAX_PAIRS;
  if (n_pairs < 1 || 2 * (cfg->sequential ? cfg->max_pairs : n_pairs) > cap)
    return sw_err_set(err, SW_EINVAL, "gate simulation: %d pairs (max %d) out of range", n_pairs,
                      cfg->max_pairs);
  struct sw_gate_pair p[SW_GATE_SIM_MAX_PAIRS], clean[SW_GATE_SIM_MAX_PAIRS];
  int queue[SW_GATE_SIM_MAX_PAIRS], nq = 0; /* contaminated pairs waiting for a replacement */
  int n = 0, runs = 0, fresh = 0;
  int next_machine = (int)gsl_rng_uniform_int(r, (unsigned long)m->machines);
  struct sw_gate_input in = {.pairs = p, .baseline_cv = NAN, .baseline_guard_mean = NAN};
  for (;;) {
    if (n >= cap)
      return sw_err_set(err, SW_EINVAL, "gate simulation: the gate ran past %d pairs", cap);
    struct sw_gate_pair *q = &p[n];
    memset(q, 0, sizeof *q);
    q->off_guard = q->on_guard = NAN;
    q->replaces = -1;
    if (nq > 0) {
      q->replaces = queue[--nq];
      q->order = p[q->replaces].order;
    } else {
      q->order = fresh % 2 ? SW_GATE_ON_OFF : SW_GATE_OFF_ON; /* alternate: off-on, on-off */
      fresh++;
    }
    int machine = next_machine;
    next_machine = (next_machine + 1) % m->machines;
    snprintf(q->machine, sizeof q->machine, "m%d", machine);
    int c1, c2;
    q->off = sw_gate_sim_run(m, r, machine, 0, q->order == SW_GATE_ON_OFF, &c1);
    q->on = sw_gate_sim_run(m, r, machine, 1, q->order == SW_GATE_OFF_ON, &c2);
    runs += 2;
    q->contaminated = c1 || c2;
    if (q->contaminated && q->replaces < 0) queue[nq++] = n; /* one replacement per original pair */
    n++;
    /* A fixed-n gate is judged once its n pairs and their replacements are in. */
    if (!cfg->sequential && (fresh < n_pairs || nq > 0)) continue;
    in.n_pairs = (size_t)n;
    struct sw_gate_input cin = in;
    if (clean_only) {
      size_t nc = 0;
      for (int i = 0; i < n; i++)
        if (!p[i].contaminated) {
          clean[nc] = p[i];
          clean[nc++].replaces = -1;
        }
      cin.pairs = clean;
      cin.n_pairs = nc;
    }
    int rc = sw_gate_eval(&cin, cfg, res, err);
    if (rc) return rc;
    if (res->seq.decision != SW_GATE_SEQ_CONTINUE) break;
  }
  *runs_out = runs;
  return 0;
}

int sw_gate_forecast(const struct sw_gate_config *cfg, int n_pairs, double cv, double contam,
                     int machines, int sims, uint64_t seed, struct sw_gate_forecast *out,
                     struct sw_err *err) {
  if (!cfg || !out) return sw_err_set(err, SW_EINVAL, "gate forecast: missing argument");
  if (!(cv > 0.0 && cv < 0.5) || !(contam >= 0.0 && contam < 0.5))
    return sw_err_set(err, SW_EINVAL,
                      "gate forecast: cv %g must be in (0, 0.5) and "
                      "contamination %g in [0, 0.5)",
                      cv, contam);
  if (sims < 10 || sims > 100000)
    return sw_err_set(err, SW_EINVAL, "gate forecast: %d simulations, 10 to 100000", sims);
  if (machines < 1 || machines > SW_GATE_SIM_MACHINES)
    machines = machines < 1 ? 1 : SW_GATE_SIM_MACHINES;
  memset(out, 0, sizeof *out);
  out->cv = cv;
  out->contam = contam;
  out->machines = machines;
  out->sims = sims;
  out->n_pairs = n_pairs;
  out->max_pairs = cfg->sequential ? cfg->max_pairs : n_pairs;
  out->sequential = cfg->sequential;
  struct sw_gate_config c = *cfg;
  c.boot_reps = 0; /* never enters a decision */
  c.has_guard = 0; /* the forecast is about the metric; the guard is judged on its own */
  struct sw_gate_plan plan;
  if (c.sequential) {
    int rc = sw_gate_plan_make(&c, &plan, err);
    if (rc) return rc;
    c.plan = &plan;
  }
  double thr = fmax(c.k * cv, c.floor);
  const double mult[SW_GATE_FORECAST_ROWS] = {0.0, 1.0, 1.5, 3.0};
  struct sw_gate_result *res = malloc(sizeof *res);
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  int rc = 0;
  if (!res || !r) {
    rc = sw_err_set(err, SW_ENOMEM, "gate forecast: out of memory");
    goto out;
  }
  out->threshold = thr;
  for (int k = 0; k < SW_GATE_FORECAST_ROWS && rc == 0; k++) {
    struct sw_gate_forecast_row *row = &out->row[k];
    double effect = mult[k] * thr; /* an improvement of this size, in the better direction */
    row->effect = effect;
    struct sw_gate_sim_model m;
    sw_gate_sim_model_default(&m);
    m.machines = machines;
    m.cv = cv;
    m.contam = contam;
    m.effect = c.direction == SW_GATE_LOWER ? -effect : effect;
    gsl_rng_set(r, (unsigned long)(seed + (uint64_t)k));
    long adopt = 0, reject = 0, runs = 0;
    int most = 0;
    for (int s = 0; s < sims && rc == 0; s++) {
      int nr = 0;
      rc = sw_gate_sim_gate(&m, &c, n_pairs, r, 0, res, &nr, err);
      adopt += res->verdict == SW_GATE_ADOPT;
      reject += res->verdict == SW_GATE_REJECT;
      runs += nr;
      most = nr > most ? nr : most;
    }
    row->p_adopt = (double)adopt / sims;
    row->p_reject = (double)reject / sims;
    row->runs_mean = (double)runs / sims;
    row->runs_max = most;
  }
out:
  free(res);
  if (r) gsl_rng_free(r);
  return rc;
}

int sw_gate_noise_assess(const struct sw_gate_noise_obs *obs, size_t n, double jump_p,
                         struct sw_gate_noise *out, struct sw_err *err) {
  if (!out || (n > 0 && !obs)) return sw_err_set(err, SW_EINVAL, "noise memory: missing argument");
  if (!(jump_p > 0.0 && jump_p < 0.5))
    return sw_err_set(err, SW_EINVAL, "noise memory: jump level %g is not in (0, 0.5)", jump_p);
  memset(out, 0, sizeof *out);
  out->cv_recent = out->cv_history = out->cv_plan = out->ratio = out->p = NAN;
  /* Pooled CV: sqrt(sum df cv^2 / sum df), each observation a within-machine CV with df
   * degrees of freedom (runs minus machine means removed). */
  double ss_hist = 0.0, df_hist = 0.0;
  for (size_t i = 0; i < n; i++) {
    if (!(obs[i].cv >= 0.0 && isfinite(obs[i].cv)) || obs[i].df < 1)
      return sw_err_set(err, SW_EINVAL, "noise memory: observation %zu has cv %g, df %d", i,
                        obs[i].cv, obs[i].df);
    if (i + 1 < n) {
      ss_hist += obs[i].df * obs[i].cv * obs[i].cv;
      df_hist += obs[i].df;
    }
  }
  out->n_obs = (int)n;
  if (n == 0) return 0;
  const struct sw_gate_noise_obs *last = &obs[n - 1];
  out->cv_recent = last->cv;
  out->df_recent = last->df;
  out->df_history = (int)df_hist;
  if (df_hist < 1) {
    out->cv_plan = last->cv;
    return 0;
  }
  out->cv_history = sqrt(ss_hist / df_hist);
  /* The latest gate's variance against the history's: F with (df_recent, df_history). */
  if (out->cv_history > 0.0) {
    out->ratio = last->cv / out->cv_history;
    out->p = gsl_cdf_fdist_Q(out->ratio * out->ratio, last->df, df_hist);
    out->jumped = out->ratio > 1.0 && out->p < jump_p;
  }
  /* Planning: the pooled CV of everything, unless the noise jumped; then the recent CV, which is
   * the machine as it is now, and the caller reports the jump. */
  out->cv_plan = out->jumped
                     ? last->cv
                     : sqrt((ss_hist + last->df * last->cv * last->cv) / (df_hist + last->df));
  return 0;
}
