/* sw_report.h: reports of sweeps rendered from the store alone (DESIGN.md sections 10-11;
 * docs/report.md). Formats: text for terminals, Markdown, JSON (the contract of section 10:
 * {"sweeps":[{"id","name","gates":[{gate engine object ..., "pairs":[...]}]}]}) and a
 * self-contained HTML page (sw_html.h) whose charts are drawn by the embedded Chart.js. */
#ifndef SW_REPORT_H
#define SW_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "sw_err.h"
#include "sw_store.h"

enum sw_report_format {
  SW_REPORT_TEXT = 0,
  SW_REPORT_MD = 1,
  SW_REPORT_JSON = 2,
  SW_REPORT_HTML = 3
};

/* Parses "text", "md", "json", "html"; SW_EINVAL otherwise. */
int sw_report_format_parse(const char *name, enum sw_report_format *out, struct sw_err *err);

/* The report as JSON (section 10 shape). sweep_id 0 = every sweep. New reference or NULL. */
json_t *sw_report_json(sw_store_t *store, int64_t sweep_id, struct sw_err *err);

/* The sweep's artifacts: [{run, attempt, arm, pair, worker, name, size, sha256, state, reason,
 * url}] (url: the dashboard route /artifact/RUN/ATTEMPT/NAME when stored, else null); the
 * report's "artifacts" of each sweep. NULL with err on a store failure. */
json_t *sw_report_artifacts_json(sw_store_t *store, int64_t sweep_id, struct sw_err *err);

/* Renders the report of one sweep (sweep_id > 0) or all (0) to out. SW_ENOTFOUND for an unknown
 * sweep, SW_EDB, SW_EIO (write failed). */
int sw_report_render(sw_store_t *store, int64_t sweep_id, enum sw_report_format format, FILE *out,
                     struct sw_err *err);

/* Same into a malloc'd NUL-terminated string the caller frees (for the control endpoint). */
int sw_report_render_string(sw_store_t *store, int64_t sweep_id, enum sw_report_format format,
                            char **text_out, struct sw_err *err);

#endif
