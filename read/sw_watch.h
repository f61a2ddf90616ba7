/* sw_watch.h: `splatsweep watch [SWEEP]` (docs/cli.md): follows a running sweep through the
 * control endpoint's status JSON until it ends.
 *
 * The module never talks to the network itself: the command line hands it a fetch function (the
 * same Status request `splatsweep status --format json` sends), so what watch shows is exactly
 * what status says. Each turn fetches the status, renders it, sleeps interval_ms and repeats.
 *
 * On a terminal (tty set) every turn redraws one screen in place: the sweep, a progress bar per
 * gate (pairs done of the planned n) with the verdict as it forms at the sequential looks (the
 * engine's verdict at the pairs so far, the paired effect and interval, the lab rule's delta and
 * threshold), and a bar per worker busy on the sweep (iterations of its current run out of the
 * iterations its config asks for). Elsewhere (a pipe, a log) it prints plain lines, one per
 * change: a gate's pairs done, look or forming verdict, a worker starting a run or crossing a
 * quarter of it, the sweep's end.
 *
 * Exit codes (sw_watch_outcome): 0 the sweep finished and every gate adopted (a grid: finished),
 * 3 a gate rejected, 4 no gate rejected but one is inconclusive, 1 the sweep failed or was
 * cancelled, or the coordinator could not be asked (the reason in err).
 *
 * The status JSON has one builder, the scheduler's (coordinator/sw_sched_status.c, through
 * sw_coord_status_json); `status --format json` sends it as it is, and this module renders it:
 * watch's screen and lines, and the text of plain `status` (sw_watch_status_text). */
#ifndef SW_WATCH_H
#define SW_WATCH_H

#include <signal.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "sw_err.h"

#define SW_WATCH_EXIT_ADOPT 0
#define SW_WATCH_EXIT_FAILED 1
#define SW_WATCH_EXIT_REJECT 3
#define SW_WATCH_EXIT_INCONCLUSIVE 4

/* Fetches the status JSON for sweep_id (0: the recent sweeps). Returns 0 and a new reference in
 * *status, or a negative code with the reason in err. */
typedef int (*sw_watch_fetch_fn)(void *ctx, int64_t sweep_id, json_t **status, struct sw_err *err);

struct sw_watch_opts {
  int64_t sweep_id;                  /* 0: the newest running sweep (else the newest sweep) */
  int interval_ms;                   /* between fetches; 0 = 1000 */
  int tty;                           /* 1: redraw one screen with bars; 0: plain lines on change */
  int width;                         /* terminal columns for the bars; 0 = 80 */
  const volatile sig_atomic_t *stop; /* non-zero ends the watch (exit 1); may be NULL */
};

/* Runs until the sweep ends, writing to out. Returns the exit code above; on SW_WATCH_EXIT_FAILED
 * err says why when the reason is not the sweep's own status. */
int sw_watch_run(const struct sw_watch_opts *o, sw_watch_fetch_fn fetch, void *ctx, FILE *out,
                 struct sw_err *err);

/* The sweep object with id sweep_id in a status JSON, or with sweep_id 0 the newest running one
 * (else the newest). Borrowed from status; NULL when there is none. */
const json_t *sw_watch_pick(const json_t *status, int64_t sweep_id);

/* The exit code a finished sweep object gives (above), or -1 while it runs. */
int sw_watch_outcome(const json_t *sweep);

/* One screen for a terminal: the sweep's lines with bars of the given width. Caller frees; NULL
 * when out of memory. */
char *sw_watch_render(const json_t *status, const json_t *sweep, int width);

/* The text form of `splatsweep status` (the coordinator answers a text StatusRequest with it):
 * the store's health, each sweep with its pairs and gates, each worker session. Caller frees;
 * NULL when out of memory. */
char *sw_watch_status_text(const json_t *status);

#endif
