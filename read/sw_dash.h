/* sw_dash.h: the live dashboard's data and page (served by sw_http.h; docs/dashboard.md).
 *
 * The dashboard JSON joins two sources: the store (sweeps, gates with the verdict of their
 * latest look, pair and run counts, run durations, the workers' last load windows), read on the
 * HTTP thread through its own read-only connection, and the coordinator's live status snapshot
 * (sessions: current run, iteration, train_s; the scheduler's worker states), which the
 * coordinator publishes from its poll loop once per heartbeat (sw_coord_opts.on_status). Without
 * a snapshot (a dashboard on a database no coordinator serves) the workers are the store's.
 *
 * Shape (docs/dashboard.md has every key):
 *   {"t_ms", "live": {"age_ms"} | null,
 *    "sweeps": [{"id","name","kind","status","created_ms","finished_ms",
 *                "runs": {"total","done","left","running"}, "progress", "mean_run_s",
 *                "eta_s", "gates": [{"name","status","verdict","final","delta","threshold",
 *                "interval_pct","n","max","looks","pairs_done","sequential"}]}],
 *    "workers": [{"id","state","lease","run","sweep","iter","iterations","progress",
 *                 "train_s","silent_ms","runs_finished","last_window"}]} */
#ifndef SW_DASH_H
#define SW_DASH_H

#include <stdint.h>

#include <jansson.h>

#include "sw_err.h"
#include "sw_store.h"

/* The dashboard JSON. live is the coordinator's last status snapshot (borrowed; NULL when none),
 * live_age_ms how old it is. New reference, or NULL with err set (SW_EDB). */
json_t *sw_dash_json(sw_store_t *store, const json_t *live, int64_t live_age_ms,
                     struct sw_err *err);

/* The dashboard page: the shared frame (sw_html.h) and dashboard.js, which polls
 * /api/dashboard and draws a sweep's report charts from /api/report/ID. malloc'd, or NULL
 * when out of memory. */
char *sw_dash_page(void);

#endif
