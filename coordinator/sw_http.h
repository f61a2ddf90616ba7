/* sw_http.h: the read-only HTTP dashboard (DESIGN.md section 3; docs/pareto-audit.md).
 *
 * libmicrohttpd serves from one internal thread that owns its own read-only SQLite connection
 * (WAL lets it read while the coordinator writes), so a slow page never blocks the
 * coordinator's poll loop and the coordinator's store is never touched from another thread.
 * The connection is opened on the first request (and again after a failure), so the dashboard
 * may start before the coordinator has created the database.
 *
 * Routes (GET or HEAD; anything else 405, unknown paths 404):
 *   /                 HTML list of sweeps with status, progress and verdicts, and the workers
 *   /sweep/ID         the sweep's HTML report (sw_report)
 *   /pareto/ID        the sweep's Pareto page (sw_pareto, HTML)
 *   /api/status       JSON: sweeps (status, pair counts, gates), workers, active leases
 *   /api/report/ID    the report JSON of DESIGN.md section 10
 *   /api/pareto/ID    the Pareto JSON
 *   /api/audit/ID     the audit JSON (sw_audit)
 *   /api/artifacts/ID the sweep's artifacts; /artifact/RUN/ATTEMPT/NAME one stored file
 *                     (sw_artifact_serve: with its sha256 in X-Content-SHA256)
 * A store that cannot be opened gives 503; an unknown sweep 404. */
#ifndef SW_HTTP_H
#define SW_HTTP_H

#include "sw_err.h"

#define SW_HTTP_DEFAULT_PORT 7780

typedef struct sw_http sw_http_t;

struct sw_http_opts {
  const char *db_path; /* the coordinator's database (borrowed; copied) */
  const char *bind;    /* IPv4 address to bind; NULL = 127.0.0.1 (loopback only) */
  int port;            /* 0 = an ephemeral port (see sw_http_port) */
};

/* Starts the server thread. Returns 0, SW_EINVAL (bad address or port), SW_ENET (cannot
 * bind). On success stop it with sw_http_stop. */
int sw_http_start(const struct sw_http_opts *opts, sw_http_t **out, struct sw_err *err);
/* Stops the thread, closes the connection; NULL-safe, nulls *self_p. */
void sw_http_stop(sw_http_t **self_p);
/* The port actually bound. */
int sw_http_port(const sw_http_t *self);

/* For the `coordinator` and `local` commands: removes `--http PORT` and `--http-bind ADDR` from
 * argv (updating *argc) and, when --http was given, starts the dashboard on the database named
 * by --db (left in argv) or default_db. *out stays NULL without --http. Returns 0, or a
 * negative code with the reason in err (bad port, bind failure). */
int sw_http_from_args(int *argc, char **argv, const char *default_db, sw_http_t **out,
                      struct sw_err *err);

#endif
