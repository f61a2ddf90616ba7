/* sw_pareto.h: Pareto data from the store (LAB-PRACTICE.md item 9; docs/pareto-audit.md).
 *
 * A configuration is one grid series (a grid point's parameters without `iterations`, so the
 * runs of the lab's 6k / 12.5k / 13.3k / 30k budgets form one curve) or one arm of a gate.
 * Its points are (iteration budget, train_s, psnr_db) aggregated over repeats (mean, sd, n):
 * at a budget where runs end, their final metrics; at other budgets, the checkpoints that
 * longer runs recorded there (a run's learning-rate schedule depends on its length, so a run
 * that ends at a budget is preferred to a checkpoint of a longer one). Only attempts with
 * status `ok` count. The front is the set of points no other point beats on both axes (lower
 * train_s, higher psnr_db). Comparisons between two configurations A and B:
 *   matched iteration: at every budget both have, time ratio B/A and PSNR difference B - A;
 *   matched wallclock: at each point of one, the PSNR the other reaches at that time, by
 *                      linear interpolation along its points (no extrapolation);
 *   matched PSNR:      at each point of one, the time the other needs to reach that PSNR, by
 *                      interpolation at its first crossing.
 * Values that would need extrapolation are null with a note saying why.
 *
 * Formats: text, Markdown, JSON, CSV (the points table) and a self-contained HTML page with a
 * Chart.js scatter (the page frame and embedded Chart.js of sw_html.h, as the reports use). */
#ifndef SW_PARETO_H
#define SW_PARETO_H

#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "sw_err.h"
#include "sw_store.h"

enum sw_pareto_format {
  SW_PARETO_TEXT = 0,
  SW_PARETO_MD = 1,
  SW_PARETO_JSON = 2,
  SW_PARETO_CSV = 3,
  SW_PARETO_HTML = 4
};

/* Parses "text", "md", "json", "csv", "html"; SW_EINVAL otherwise. */
int sw_pareto_format_parse(const char *name, enum sw_pareto_format *out, struct sw_err *err);

struct sw_pareto_opts {
  int64_t sweep_id;      /* 0 = every sweep in the store */
  const char *compare_a; /* configuration ids (or unique suffixes) to compare; both NULL = the */
  const char
      *compare_b; /* defaults: off vs on of every gate, and a grid selection of exactly two */
};

/* One point of a configuration's curve, in iteration order. */
struct sw_pareto_pt {
  double iter, train_s, psnr_db;
};

/* Interpolation along a curve of n points (iteration order). Both return 0 with *out set,
 * 1 when the value lies beyond the curve's first point, 2 beyond its last, SW_EINVAL for n < 1.
 * psnr_at_time: PSNR at train_s t (linear between the two points around t).
 * time_to_psnr: train_s when the curve first reaches psnr (linear between the last point
 * below and the first at or above it); 1 means the first point already reaches it. */
int sw_pareto_psnr_at_time(const struct sw_pareto_pt *curve, int n, double t, double *out);
int sw_pareto_time_to_psnr(const struct sw_pareto_pt *curve, int n, double psnr, double *out);

/* The Pareto JSON (shape in docs/pareto-audit.md): {"configurations":[...],"front":[...],
 * "comparisons":[...]}. New reference, or NULL with err set: SW_ENOTFOUND (unknown sweep),
 * SW_EINVAL (unknown or ambiguous --compare id), SW_EDB. */
json_t *sw_pareto_json(sw_store_t *store, const struct sw_pareto_opts *opts, struct sw_err *err);

/* Renders to out / into a malloc'd string (caller frees). Same errors, plus SW_EIO. */
int sw_pareto_render(sw_store_t *store, const struct sw_pareto_opts *opts,
                     enum sw_pareto_format format, FILE *out, struct sw_err *err);
int sw_pareto_render_string(sw_store_t *store, const struct sw_pareto_opts *opts,
                            enum sw_pareto_format format, char **text_out, struct sw_err *err);

/* A sweep named on the command line: a decimal id, or a name (its latest sweep). Returns 0,
 * SW_ENOTFOUND or SW_EDB. Shared with the audit. */
int sw_pareto_resolve_sweep(sw_store_t *store, const char *arg, int64_t *id, struct sw_err *err);

#endif
