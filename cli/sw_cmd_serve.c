/* sw_cmd_serve.c: the HTTP servers `coordinator` and `local` may start beside the daemon
 * (sw_cmd.h): the read-only dashboard (--http, sw_http.h) and the artifact store (--artifacts,
 * sw_artifact.h). Their options are taken out of argv before the daemon's own parser runs. */
#include "sw_cmd.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sw_log.h"

/* ---- --http -------------------------------------------------------------------------------- */

int sw_cmd_http_from_args(int *argc, char **argv, const char *default_db, sw_http_t **out,
                          struct sw_err *err) {
  *out = NULL;
  const char *port_arg = NULL, *bind = NULL, *db = default_db;
  int w = 0;
  for (int i = 0; i < *argc; i++) {
    const char *a = argv[i];
    const char **slot = !strcmp(a, "--http") ? &port_arg : !strcmp(a, "--http-bind") ? &bind : NULL;
    if (slot) {
      if (i + 1 >= *argc) return sw_err_set(err, SW_EINVAL, "%s needs a value", a);
      *slot = argv[++i];
      continue;
    }
    if (!strncmp(a, "--http=", 7) || !strncmp(a, "--http-bind=", 12)) {
      *(a[6] == '=' ? &port_arg : &bind) = strchr(a, '=') + 1;
      continue;
    }
    if (!strcmp(a, "--db") && i + 1 < *argc) db = argv[i + 1];
    if (!strncmp(a, "--db=", 5)) db = a + 5;
    argv[w++] = argv[i];
  }
  for (int i = w; i < *argc; i++) argv[i] = NULL;
  *argc = w;
  if (!port_arg) {
    if (bind) return sw_err_set(err, SW_EINVAL, "--http-bind %s needs --http PORT", bind);
    return 0;
  }
  char *end;
  errno = 0;
  long port = strtol(port_arg, &end, 10);
  if (errno || end == port_arg || *end || port < 0 || port > 65535)
    return sw_err_set(err, SW_EINVAL, "--http %s: expected a port number (default %d)", port_arg,
                      SW_HTTP_DEFAULT_PORT);
  struct sw_http_opts o = {.db_path = db, .bind = bind, .port = (int)port};
  int rc = sw_http_start(&o, out, err);
  if (!rc && sw_http_token_required(*out))
    sw_log_info("dashboard on http://%s:%d/?token=%s (the token is required off loopback; it "
                "is kept in %s.http-token)",
                bind, sw_http_port(*out), sw_http_token(*out), db);
  else if (!rc)
    sw_log_info("dashboard on http://%s:%d/ (token %s, needed only off loopback)",
                bind ? bind : "127.0.0.1", sw_http_port(*out), sw_http_token(*out));
  return rc;
}

/* ---- --artifacts --------------------------------------------------------------------------- */

int sw_cmd_artifacts_from_args(int *argc, char **argv, const char *default_db, sw_artifact_t **out,
                               const char **url_out, struct sw_err *err) {
  *out = NULL;
  *url_out = NULL;
  const char *port_arg = NULL, *bind = NULL, *url = NULL, *db = default_db;
  int w = 0;
  for (int i = 0; i < *argc; i++) {
    const char *a = argv[i];
    const char **slot = !strcmp(a, "--artifacts")        ? &port_arg
                        : !strcmp(a, "--artifacts-bind") ? &bind
                        : !strcmp(a, "--artifacts-url")  ? &url
                                                         : NULL;
    if (slot) {
      if (i + 1 >= *argc) return sw_err_set(err, SW_EINVAL, "%s needs a value", a);
      *slot = argv[++i];
      continue;
    }
    if (!strcmp(a, "--db") && i + 1 < *argc) db = argv[i + 1];
    if (!strncmp(a, "--db=", 5)) db = a + 5;
    argv[w++] = argv[i];
  }
  for (int i = w; i < *argc; i++) argv[i] = NULL;
  *argc = w;
  if (!port_arg) {
    if (bind || url)
      return sw_err_set(err, SW_EINVAL, "%s needs --artifacts PORT",
                        bind ? "--artifacts-bind" : "--artifacts-url");
    return 0;
  }
  if (url && strncmp(url, "http://", 7) && strncmp(url, "https://", 8))
    return sw_err_set(err, SW_EINVAL, "--artifacts-url %s: expected an http:// or https:// URL",
                      url);
  if (url && strlen(url) > SW_MSG_URL_MAX)
    return sw_err_set(err, SW_EINVAL, "--artifacts-url: longer than %d bytes", SW_MSG_URL_MAX);
  char *end;
  errno = 0;
  long port = strtol(port_arg, &end, 10);
  if (errno || end == port_arg || *end || port < 0 || port > 65535)
    return sw_err_set(err, SW_EINVAL, "--artifacts %s: expected a port number (default %d)",
                      port_arg, SW_ARTIFACT_DEFAULT_PORT);
  struct sw_artifact_opts o = {.db_path = db, .bind = bind, .port = (int)port, .url = url};
  int rc = sw_artifact_start(&o, out, err);
  if (rc) return rc;
  *url_out = sw_artifact_url(*out);
  sw_log_info("artifact store on %s:%d (workers told %s), files under the database's artifacts/",
              bind ? bind : "0.0.0.0", sw_artifact_port(*out), *url_out);
  return 0;
}
