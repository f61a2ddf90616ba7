/* sw_artifact_files.c: where a run's artifacts lie beside the database, and their downloads
 * (sw_artifact_files.h). */
#include "sw_artifact_files.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sw_fs.h"
#include "sw_msg.h"
#include "sw_report.h"
#include "sw_store.h"

/* ---- places -------------------------------------------------------------------------------- */

void sw_artifact_dir(const char *db_path, char *buf, size_t cap) {
  const char *slash = strrchr(db_path, '/');
  if (slash)
    snprintf(buf, cap, "%.*s/artifacts", (int)(slash - db_path), db_path);
  else
    snprintf(buf, cap, "artifacts");
}

/* The file of a row: DIR/artifacts/SWEEP/RUN-aATTEMPT/NAME. */
void sw_artifact_path(const char *db_path, int64_t sweep, int64_t run, int attempt,
                      const char *name, char *buf, size_t cap) {
  char dir[4096];
  sw_artifact_dir(db_path, dir, sizeof dir);
  snprintf(buf, cap, "%s/%lld/%lld-a%d/%s", dir, (long long)sweep, (long long)run, attempt, name);
}

int sw_artifact_parse_target(const char *p, int64_t *run, int *attempt, char *name, size_t cap) {
  char *end;
  errno = 0;
  long long r = strtoll(p, &end, 10);
  if (errno || end == p || *end != '/' || r <= 0) return -1;
  const char *q = end + 1;
  long a = strtol(q, &end, 10);
  if (end == q || *end != '/' || a <= 0 || a > 1000000) return -1;
  if (strlen(end + 1) >= cap || !sw_msg_artifact_name_ok(end + 1)) return -1;
  snprintf(name, cap, "%s", end + 1);
  *run = r;
  *attempt = (int)a;
  return 0;
}

/* ---- answers ------------------------------------------------------------------------------- */

enum MHD_Result sw_artifact_answer(struct MHD_Connection *conn, unsigned status, const char *fmt,
                                   ...) {
  char *text = malloc(1024);
  va_list ap;
  va_start(ap, fmt);
  if (text) vsnprintf(text, 1024, fmt, ap);
  va_end(ap);
  struct MHD_Response *r =
      MHD_create_response_from_buffer(text ? strlen(text) : 0, text ? text : (void *)"",
                                      text ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
  if (!r) {
    free(text);
    return MHD_NO;
  }
  MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
  enum MHD_Result ret = MHD_queue_response(conn, status, r);
  MHD_destroy_response(r);
  return ret;
}

/* ---- downloads (the dashboard's thread) ---------------------------------------------------- */

int sw_artifact_serve(struct MHD_Connection *conn, const char *db_path, const char *url) {
  static const char *const SQL =
      "SELECT ar.size, ar.sha256, p.sweep_id FROM artifacts ar JOIN attempts a ON a.id = "
      "ar.attempt_id JOIN runs r ON r.id = a.run_id JOIN pairs p ON p.id = r.pair_id WHERE "
      "a.run_id = ?1 AND a.attempt = ?2 AND ar.name = ?3 AND ar.state = 'stored'";
  sw_store_t *store = NULL;
  struct sw_err err = {0};
  struct sw_store_opts so;
  sw_store_opts_default(&so);
  so.read_only = 1;
  if (!sw_fs_exists(db_path) || sw_store_open(db_path, &so, &store, &err))
    return sw_artifact_answer(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "no database at %s\n", db_path);
  enum MHD_Result ret;
  if (!strncmp(url, "/api/artifacts/", 15)) {
    char *end;
    long long id = strtoll(url + 15, &end, 10);
    json_t *list =
        end != url + 15 && !*end && id > 0 ? sw_report_artifacts_json(store, id, &err) : NULL;
    char *text = list ? json_dumps(list, JSON_INDENT(2)) : NULL;
    json_decref(list);
    if (!text) {
      ret = sw_artifact_answer(
          conn, end == url + 15 || *end ? MHD_HTTP_NOT_FOUND : MHD_HTTP_INTERNAL_SERVER_ERROR,
          "%s\n", err.msg[0] ? err.msg : "expected /api/artifacts/SWEEP");
    } else {
      struct MHD_Response *r =
          MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE);
      MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
      ret = MHD_queue_response(conn, MHD_HTTP_OK, r);
      MHD_destroy_response(r);
    }
    sw_store_close(&store);
    return ret;
  }
  int64_t run;
  int attempt;
  char name[SW_MSG_ARTIFACT_NAME_MAX + 1];
  if (strncmp(url, "/artifact/", 10) ||
      sw_artifact_parse_target(url + 10, &run, &attempt, name, sizeof name)) {
    sw_store_close(&store);
    return sw_artifact_answer(conn, MHD_HTTP_NOT_FOUND, "expected /artifact/RUN/ATTEMPT/NAME\n");
  }
  sqlite3_stmt *st;
  if (sw_store_stmt(store, SQL, &st, &err)) {
    sw_store_close(&store);
    return sw_artifact_answer(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "%s\n", err.msg);
  }
  sqlite3_bind_int64(st, 1, run);
  sqlite3_bind_int64(st, 2, attempt);
  sqlite3_bind_text(st, 3, name, -1, SQLITE_STATIC);
  int rc = sqlite3_step(st);
  uint64_t size = rc == SQLITE_ROW ? (uint64_t)sqlite3_column_int64(st, 0) : 0;
  char sha[65] = "";
  int64_t sweep = 0;
  if (rc == SQLITE_ROW) {
    snprintf(sha, sizeof sha, "%s", (const char *)sqlite3_column_text(st, 1));
    sweep = sqlite3_column_int64(st, 2);
  }
  sqlite3_reset(st);
  sw_store_close(&store);
  if (rc != SQLITE_ROW)
    return sw_artifact_answer(conn, MHD_HTTP_NOT_FOUND, "no stored artifact %s\n", url);
  char path[4700];
  sw_artifact_path(db_path, sweep, run, attempt, name, path, sizeof path);
  int fd = open(path, O_RDONLY);
  struct stat sb;
  if (fd < 0 || fstat(fd, &sb) != 0 || (uint64_t)sb.st_size != size) {
    if (fd >= 0) close(fd);
    return sw_artifact_answer(conn, MHD_HTTP_GONE, "%s: missing or changed on disk\n", path);
  }
  struct MHD_Response *r = MHD_create_response_from_fd((uint64_t)sb.st_size, fd);
  if (!r) {
    close(fd);
    return MHD_NO;
  }
  const char *dot = strrchr(name, '.');
  const char *type = !dot                    ? "application/octet-stream"
                     : !strcmp(dot, ".json") ? "application/json"
                     : !strcmp(dot, ".log")  ? "text/plain; charset=utf-8"
                     : !strcmp(dot, ".png")  ? "image/png"
                                             : "application/octet-stream";
  MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
  MHD_add_response_header(r, "X-Content-SHA256", sha);
  ret = MHD_queue_response(conn, MHD_HTTP_OK, r);
  MHD_destroy_response(r);
  return ret;
}
