/* sw_http.h: the read-only HTTP dashboard (DESIGN.md section 3; docs/dashboard.md).
 *
 * libmicrohttpd serves from one internal thread that owns its own read-only SQLite connection
 * (WAL lets it read while the coordinator writes), so a slow page never blocks the
 * coordinator's poll loop and the coordinator's store is never touched from another thread.
 * The connection is opened on the first request (and again after a failure), so the dashboard
 * may start before the coordinator has created the database. What only the coordinator knows
 * live (sessions: current run, iteration; the scheduler's worker states) arrives as a status
 * snapshot the coordinator publishes from its loop (sw_http_publish); the HTTP thread never
 * asks the loop anything.
 *
 * Token: a random 64-hex-digit token is kept beside the database (DB.http-token, mode 0600,
 * made on first start) and printed at start. Listening on anything but loopback, every request
 * must carry it (?token=, then a cookie; or "Authorization: Bearer"); else 401.
 *
 * Routes (GET or HEAD; anything else 405, unknown paths 404):
 *   /                 the live dashboard page (sw_dash.h): sweeps, gates, workers, charts
 *   /sweep/ID         the sweep's HTML report (sw_report)
 *   /pareto/ID        the sweep's Pareto page (sw_pareto, HTML)
 *   /api/dashboard    JSON the dashboard page polls (sw_dash_json; docs/dashboard.md)
 *   /api/status       the coordinator's status JSON as it last published it (sw_http_publish:
 *                     the document `splatsweep status --format json` prints, one builder);
 *                     503 until a coordinator has published one
 *   /api/report/ID    the report JSON of DESIGN.md section 10
 *   /api/pareto/ID    the Pareto JSON
 *   /api/audit/ID     the audit JSON (sw_audit)
 *   /api/artifacts/ID the sweep's artifacts; /artifact/RUN/ATTEMPT/NAME one stored file
 *                     (sw_artifact_serve: with its sha256 in X-Content-SHA256)
 * A store that cannot be opened gives 503; an unknown sweep 404. */
#ifndef SW_HTTP_H
#define SW_HTTP_H

#include <netinet/in.h>
#include <stdarg.h>

#include "sw_err.h"

#define SW_HTTP_DEFAULT_PORT 7780
#define SW_HTTP_TOKEN_LEN 64

typedef struct sw_http sw_http_t;

struct sw_http_opts {
  const char *db_path; /* the coordinator's database (borrowed; copied) */
  const char *bind;    /* IPv4 address to bind; NULL = 127.0.0.1 (loopback only) */
  int port;            /* 0 = an ephemeral port (see sw_http_port) */
};

/* Starts the server thread. Returns 0, SW_EINVAL (bad address or port, a token file that is not
 * a token), SW_EIO (the token cannot be written), SW_ENET (cannot bind). On success stop it
 * with sw_http_stop. */
int sw_http_start(const struct sw_http_opts *opts, sw_http_t **out, struct sw_err *err);
/* Stops the thread, closes the connection; NULL-safe, nulls *self_p. */
void sw_http_stop(sw_http_t **self_p);
/* The port actually bound. */
int sw_http_port(const sw_http_t *self);
/* The dashboard's token (borrowed; SW_HTTP_TOKEN_LEN hex digits), and whether requests need it
 * (1 when bound beyond loopback). */
const char *sw_http_token(const sw_http_t *self);
int sw_http_token_required(const sw_http_t *self);
/* Hands the dashboard the coordinator's latest status JSON (copied; self is the sw_http_t).
 * The signature is sw_coord_opts.on_status's: called on the coordinator's thread, it only
 * swaps a pointer under a mutex. NULL-safe. */
void sw_http_publish(void *self, const char *status_json);

/* What the tree's two libmicrohttpd servers (this dashboard and the artifact store, sw_artifact.h)
 * share. sw_http_listen_addr: the IPv4 address to listen on, from bind (dotted quad) and port
 * (0-65535; 0 = an ephemeral port). Returns 0, or SW_EINVAL with who ("http", "artifacts")
 * opening the message. sw_http_mhd_log: libmicrohttpd's error logger
 * (MHD_OPTION_EXTERNAL_LOGGER) for them, one warning line each; cls is the server's name, a
 * string that outlives it. */
int sw_http_listen_addr(const char *who, const char *bind, int port, struct sockaddr_in *out,
                        struct sw_err *err);
void sw_http_mhd_log(void *cls, const char *fmt, va_list ap);
/* The URL others reach a server of this host on: "http://HOST:PORT" with this host's name
 * ("localhost" when it has none), into out (truncated to cap). */
void sw_http_host_url(int port, char *out, size_t cap);

#endif
