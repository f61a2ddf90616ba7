/* sw_noise.h: the fleet's noise memory, read from the store. For each machine (its fingerprint's
 * machine_id) the within-machine CV of the off arm's runs of a metric in each of its last
 * finished gates, assessed by the gate engine (sw_gate_noise_assess): the CV to plan with, and
 * whether the machine's noise jumped in its latest gate (reported, never silently used). The
 * planning CV of the fleet (root mean square of the machines') feeds sw_gate_forecast, so
 * `splatsweep check SPEC --db DB` forecasts a gate on the machines' recorded noise. */
#ifndef SW_NOISE_H
#define SW_NOISE_H

#include <jansson.h>

#include "sw_err.h"
#include "sw_store.h"

#define SW_NOISE_GATES 10 /* the last gates per machine taken into account */

/* {"metric": M, "machines": [{machine, gates, cv_recent, cv_history, ratio, p, jumped, cv_plan}],
 * "cv_plan": fleet planning CV or null, "jumped": [machine...]} for the metric's finished gates.
 * New reference, NULL on a store failure (err set). */
json_t *sw_noise_json(sw_store_t *store, const char *metric, struct sw_err *err);

#endif
