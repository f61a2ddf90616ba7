/* sw_cmd_serve.c: the HTTP servers `coordinator` and `local` may start beside the daemon
 * (sw_cmd.h): the read-only dashboard (--http, sw_http.h) and the artifact store (--artifacts,
 * sw_artifact.h). Their options are parsed with every other option (sw_cmd_args.c); this file
 * only turns them into the servers' option structs. */
#include "sw_cmd.h"

#include "sw_log.h"

int sw_cmd_serve_asked(const struct sw_cmd_args *a) {
  return a->http_port >= 0 || a->http_bind || a->artifacts_port >= 0 || a->artifacts_bind ||
         a->artifacts_url;
}

/* The dashboard, with the address it is reached at and its token in the log. */
static int start_http(struct sw_cmd_args *a, const char *db, struct sw_err *err) {
  if (a->http_port < 0)
    return a->http_bind
               ? sw_err_set(err, SW_EINVAL, "--http-bind %s needs --http PORT", a->http_bind)
               : 0;
  struct sw_http_opts o = {.db_path = db, .bind = a->http_bind, .port = (int)a->http_port};
  int rc = sw_http_start(&o, &a->http, err);
  if (rc) return rc;
  if (sw_http_token_required(a->http))
    sw_log_info("dashboard on http://%s:%d/?token=%s (the token is required off loopback; it "
                "is kept in %s.http-token)",
                a->http_bind, sw_http_port(a->http), sw_http_token(a->http), db);
  else
    sw_log_info("dashboard on http://%s:%d/ (token %s, needed only off loopback)",
                a->http_bind ? a->http_bind : "127.0.0.1", sw_http_port(a->http),
                sw_http_token(a->http));
  return 0;
}

/* The artifact store; a->artifact_url becomes the URL workers are told. */
static int start_artifacts(struct sw_cmd_args *a, const char *db, sw_artifact_t **out,
                           struct sw_err *err) {
  if (a->artifacts_port < 0) {
    if (a->artifacts_bind || a->artifacts_url)
      return sw_err_set(err, SW_EINVAL, "%s needs --artifacts PORT",
                        a->artifacts_bind ? "--artifacts-bind" : "--artifacts-url");
    return 0;
  }
  struct sw_artifact_opts o = {.db_path = db,
                               .bind = a->artifacts_bind,
                               .port = (int)a->artifacts_port,
                               .url = a->artifacts_url};
  int rc = sw_artifact_start(&o, out, err);
  if (rc) return rc;
  a->artifact_url = sw_artifact_url(*out);
  sw_log_info("artifact store on %s:%d (workers told %s), files under the database's artifacts/",
              a->artifacts_bind ? a->artifacts_bind : "0.0.0.0", sw_artifact_port(*out),
              a->artifact_url);
  return 0;
}

int sw_cmd_serve_start(struct sw_cmd_args *a, const char *default_db, sw_artifact_t **artifacts,
                       struct sw_err *err) {
  *artifacts = NULL;
  a->http = NULL;
  const char *db = a->db ? a->db : default_db;
  int rc = start_http(a, db, err);
  if (!rc) rc = start_artifacts(a, db, artifacts, err);
  if (rc) sw_cmd_serve_stop(a, artifacts);
  return rc;
}

void sw_cmd_serve_stop(struct sw_cmd_args *a, sw_artifact_t **artifacts) {
  sw_artifact_stop(artifacts);
  sw_http_stop(&a->http);
  a->artifact_url = NULL;
}
