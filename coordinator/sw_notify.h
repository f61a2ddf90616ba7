/* sw_notify.h: webhook notifications (docs/spec.md "notify", docs/operations.md).
 *
 * A queue drained by one thread of its own with libcurl, so the coordinator's poll loop only
 * ever appends to a list under a mutex: a slow or dead webhook never delays a frame.
 *
 * Delivery: each notification is POSTed (Content-Type: application/json) until the server
 * answers 2xx. A network failure, a timeout, 408, 429 or 5xx is retried with exponential backoff
 * (first_backoff_ms, doubling, at most max_attempts tries); any other answer (a 4xx: the URL or
 * the payload is wrong) is not retried. What cannot be delivered is logged and dropped: at most
 * once per event, never blocking. The queue holds at most queue_max notifications; beyond that
 * the new one is dropped and counted. sw_notify_stop ends the thread at once (a transfer in
 * flight is aborted) and drops what is still queued, counting it.
 *
 * Lifecycle: a successful sw_notify_start must be paired with sw_notify_stop. sw_notify_post
 * may be called from one thread (the poll loop) while the notifier's thread runs. */
#ifndef SW_NOTIFY_H
#define SW_NOTIFY_H

#include <stdint.h>

#include "sw_err.h"

typedef struct sw_notify sw_notify_t;

struct sw_notify_opts {
  int max_attempts;     /* 0 = 6 (retries after 1, 2, 4, 8, 16 s with the default backoff) */
  int first_backoff_ms; /* 0 = 1000 */
  int timeout_ms;       /* per POST, connect included; 0 = 10000 */
  int queue_max;        /* 0 = 256 */
};

struct sw_notify_counts {
  uint64_t sent, failed, dropped; /* delivered, given up after retries or refused, queue full */
  uint64_t queued;                /* waiting now (first try or a retry) */
};

/* Starts the thread (opts may be NULL). Returns 0, SW_ENOMEM or SW_EIO (thread, libcurl). */
int sw_notify_start(const struct sw_notify_opts *opts, sw_notify_t **out, struct sw_err *err);
/* Stops the thread, aborting a transfer in flight; drops the queue. NULL-safe, nulls *self_p. */
void sw_notify_stop(sw_notify_t **self_p);

/* Queues a POST of body (copied) to url (copied). Returns 0, SW_ENOMEM, or SW_ESTATE when the
 * queue is full (the notification is dropped and counted). Never blocks on the network. */
int sw_notify_post(sw_notify_t *self, const char *url, const char *body);

void sw_notify_get_counts(sw_notify_t *self, struct sw_notify_counts *out);

/* The coordinator's side: reads the store's events after *last_event (a gate's "verdict", a
 * sweep's "finish") and, for each whose sweep's spec names notify.webhook, queues the JSON summary
 * of docs/spec.md "notify" (event "verdict", "sweep_done" or "sweep_failed"; the gate's verdict,
 * reasons and numbers; link = link_base + "/sweep/ID" when link_base is set). *last_event advances
 * past what was read. Returns 0 or SW_EDB. */
struct sw_store;
int sw_notify_scan(sw_notify_t *self, struct sw_store *store, int64_t *last_event,
                   const char *link_base, struct sw_err *err);
/* The newest event id in the store (where a coordinator starting up begins its scan). */
int sw_notify_last_event(struct sw_store *store, int64_t *out, struct sw_err *err);

#endif
