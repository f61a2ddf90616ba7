/* sw_audit.h: reproducibility audits from the store (LAB-PRACTICE.md item 7; docs/pareto-audit.md).
 *
 * A series is one sweep. Its audit checks, over every stored attempt that produced a result:
 *   trainer      one trainer binary sha256 per machine (worker), and on each machine the first
 *                run's equals the last's (the lab's before/after check of a series); how many
 *                builds the fleet ran is information (trainer_fleet);
 *   shaders      one shaders sha256 (when the trainer reports one);
 *   scene        one scene sha256 (when the trainer reports one);
 *   config       one config sha256 within each arm (a gate's off / on, a grid point);
 *   windows      every run used (status ok) has load-sampler records during its run;
 *   contamination  how many attempts were contaminated or invalid (information, not a problem:
 *                the scheduler re-ran them);
 *   devices      one device name and driver per machine (worker).
 * With a reference gate sweep, the series is a re-measurement of that gate's on arm: its mean
 * of the gate's metric must reproduce the gate's on-arm mean within a relative tolerance
 * (default 0.005; the lab got within 0.33%), and ran the gate's on-arm configuration (check
 * reference_config: the same config_sha256 on every re-measured run).
 *
 * Each check is {"check","status":"pass|fail|info","detail","runs":[...]}: a failing check lists
 * the runs it concerns (run id, attempt, worker, value). */
#ifndef SW_AUDIT_H
#define SW_AUDIT_H

#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "sw_err.h"
#include "sw_store.h"

#define SW_AUDIT_DEFAULT_TOLERANCE 0.005

struct sw_audit_opts {
  int64_t sweep_id;           /* 0 = every sweep, each audited as its own series */
  int64_t reference_id;       /* a gate sweep re-measured by sweep_id; 0 = none */
  const char *reference_gate; /* the gate of the reference sweep; NULL = its only gate */
  double tolerance;           /* relative; 0 = SW_AUDIT_DEFAULT_TOLERANCE */
};

/* The audit as JSON: {"pass":bool,"problems":n,"series":[{"sweep_id","name","kind","runs",
 * "checks":[...]}],"reference":{...}|null}. *problems (may be NULL) gets the number of failed
 * checks. New reference, or NULL with err: SW_ENOTFOUND (unknown sweep or gate), SW_EINVAL
 * (a reference without a sweep, a reference that is not a gate sweep, a bad tolerance,
 * a re-measurement with several configurations), SW_EDB. */
json_t *sw_audit_json(sw_store_t *store, const struct sw_audit_opts *opts, int *problems,
                      struct sw_err *err);

/* Renders as text (json = 0) or JSON (json = 1). Same errors plus SW_EIO. */
int sw_audit_render(sw_store_t *store, const struct sw_audit_opts *opts, int json, FILE *out,
                    int *problems, struct sw_err *err);

#endif
