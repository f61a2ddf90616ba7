/* sw_cmd_control.c: the clients of a running coordinator (sw_cmd.h): submit, status, report
 * (or report --db straight from the file), watch and cancel. */
#include "sw_cmd.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "sw_fs.h"
#include "sw_report.h"
#include "sw_store.h"
#include "sw_watch.h"

int sw_cmd_submit(struct sw_cmd_args *a) {
  if (a->n_pos != 1) {
    fprintf(stderr, "usage: splatsweep submit SPEC [--coordinator EP]\n");
    return SW_CMD_EXIT_USAGE;
  }
  struct sw_err err = {0};
  char *yaml = NULL;
  if (sw_cmd_read_checked_spec("submit", a->pos[0], &yaml, NULL)) return SW_CMD_EXIT_USAGE;
  const char *ep = a->coordinator ? a->coordinator : SW_CMD_DEFAULT_CONTROL;
  struct sw_msg req, rep;
  memset(&rep, 0, sizeof rep);
  sw_msg_init(&req, SW_MSG_SUBMIT_REQ);
  const char *base = strrchr(a->pos[0], '/');
  snprintf(req.u.submit_req.file_name, sizeof req.u.submit_req.file_name, "%s",
           base ? base + 1 : a->pos[0]);
  req.u.submit_req.spec_yaml = yaml;
  int rc = sw_cmd_request(ep, a->keys, &req, &rep, (int)a->timeout_ms, &err);
  free(yaml);
  int code = 0;
  if (rc) {
    fprintf(stderr, "splatsweep submit: %s\n", err.msg);
    code = 1;
  } else if (rep.type != SW_MSG_SUBMIT_REP) {
    fprintf(stderr, "splatsweep submit: unexpected %s\n", sw_msg_type_name(rep.type));
    code = 1;
  } else if (rep.u.submit_rep.error) {
    fprintf(stderr, "%s\n", rep.u.submit_rep.error);
    code = SW_CMD_EXIT_USAGE;
  } else {
    printf("%" PRIu64 "\n", rep.u.submit_rep.sweep_id);
  }
  sw_msg_clear(&rep);
  return code;
}

int sw_cmd_status(struct sw_cmd_args *a) {
  int64_t sweep = 0;
  if (a->n_pos > 1 || (a->n_pos == 1 && sw_cmd_parse_i64(a->pos[0], &sweep))) {
    fprintf(stderr, "usage: splatsweep status [SWEEP] [--coordinator EP] [--format text|json] "
                    "[--workers-from N] [--workers-shown N]\n");
    return SW_CMD_EXIT_USAGE;
  }
  enum sw_msg_format fmt = SW_FMT_TEXT;
  if (a->format && sw_cmd_parse_format(a->format, &fmt)) return SW_CMD_EXIT_USAGE;
  const char *ep = a->coordinator ? a->coordinator : SW_CMD_DEFAULT_CONTROL;
  struct sw_msg req, rep;
  memset(&rep, 0, sizeof rep);
  sw_msg_init(&req, SW_MSG_STATUS_REQ);
  req.u.status_req.sweep_id = (uint64_t)sweep;
  req.u.status_req.format = fmt;
  req.u.status_req.workers_offset = (uint64_t)a->workers_from;
  req.u.status_req.workers_limit = (uint32_t)a->workers_shown;
  struct sw_err err = {0};
  int rc = sw_cmd_request(ep, a->keys, &req, &rep, (int)a->timeout_ms, &err);
  int code = 0;
  if (rc || rep.type != SW_MSG_STATUS_REP) {
    fprintf(stderr, "splatsweep status: %s\n", rc ? err.msg : "unexpected reply");
    code = 1;
  } else {
    code = sw_cmd_write_out(a->output, rep.u.status_rep.body ? rep.u.status_rep.body : "");
  }
  sw_msg_clear(&rep);
  return code;
}

int sw_cmd_report(struct sw_cmd_args *a) {
  int64_t sweep = 0;
  if (a->n_pos > 1 || (a->n_pos == 1 && sw_cmd_parse_i64(a->pos[0], &sweep))) {
    fprintf(stderr, "usage: splatsweep report [SWEEP] [--db PATH | --coordinator EP] "
                    "[--format text|md|json|html] [-o FILE]\n");
    return SW_CMD_EXIT_USAGE;
  }
  enum sw_msg_format fmt = SW_FMT_TEXT;
  if (a->format && sw_cmd_parse_format(a->format, &fmt)) return SW_CMD_EXIT_USAGE;
  struct sw_err err = {0};
  char *text = NULL;
  int rc;
  if (a->coordinator) {
    struct sw_msg req, rep;
    memset(&rep, 0, sizeof rep);
    sw_msg_init(&req, SW_MSG_REPORT_REQ);
    req.u.report_req.sweep_id = (uint64_t)sweep;
    req.u.report_req.format = fmt;
    rc = sw_cmd_request(a->coordinator, a->keys, &req, &rep, (int)a->timeout_ms, &err);
    if (!rc && rep.type == SW_MSG_REPORT_REP && rep.u.report_rep.body)
      text = strdup(rep.u.report_rep.body);
    else if (!rc)
      rc = sw_err_set(&err, SW_EPROTO, "unexpected reply");
    sw_msg_clear(&rep);
  } else {
    const char *db = a->db ? a->db : SW_STORE_DEFAULT_PATH;
    if (!sw_fs_exists(db)) {
      fprintf(stderr, "splatsweep report: %s: no such database\n", db);
      return 1;
    }
    sw_store_t *store = NULL;
    struct sw_store_opts so;
    sw_store_opts_default(&so);
    so.read_only = 1;
    rc = sw_store_open(db, &so, &store, &err);
    if (!rc) rc = sw_report_render_string(store, sweep, (enum sw_report_format)fmt, &text, &err);
    sw_store_close(&store);
  }
  if (rc) {
    fprintf(stderr, "splatsweep report: %s\n", err.msg);
    free(text);
    return 1;
  }
  int code = sw_cmd_write_out(a->output, text ? text : "");
  free(text);
  return code;
}

/* watch: the status JSON through the same client path as `status --format json`. */
struct watch_ctx {
  struct sw_cmd_client cl;
  const char *ep;
  int timeout_ms;
};

static int watch_fetch(void *ctx, int64_t sweep_id, json_t **status, struct sw_err *err) {
  struct watch_ctx *w = ctx;
  struct sw_msg req, rep;
  memset(&rep, 0, sizeof rep);
  sw_msg_init(&req, SW_MSG_STATUS_REQ);
  req.u.status_req.sweep_id = (uint64_t)sweep_id;
  req.u.status_req.format = SW_FMT_JSON;
  int rc = sw_cmd_client_call(&w->cl, &req, &rep, w->timeout_ms, w->ep, err);
  if (!rc && rep.type != SW_MSG_STATUS_REP)
    rc = sw_err_set(err, SW_EPROTO, "unexpected reply to a status request");
  if (!rc) {
    json_error_t je;
    *status = json_loads(rep.u.status_rep.body ? rep.u.status_rep.body : "", 0, &je);
    if (!*status) rc = sw_err_set(err, SW_EPROTO, "status reply is not JSON: %s", je.text);
  }
  sw_msg_clear(&rep);
  return rc;
}

int sw_cmd_watch(struct sw_cmd_args *a) {
  int64_t sweep = 0;
  if (a->n_pos > 1 || (a->n_pos == 1 && (sw_cmd_parse_i64(a->pos[0], &sweep) || sweep == 0))) {
    fprintf(stderr, "usage: splatsweep watch [SWEEP] [--coordinator EP] [--interval-ms N]\n");
    return SW_CMD_EXIT_USAGE;
  }
  sw_cmd_install_signals();
  struct watch_ctx w = {.ep = a->coordinator ? a->coordinator : SW_CMD_DEFAULT_CONTROL,
                        .timeout_ms = (int)a->timeout_ms};
  const char *term = getenv("TERM");
  struct sw_watch_opts o = {.sweep_id = sweep,
                            .interval_ms = (int)a->interval_ms,
                            .tty = isatty(STDOUT_FILENO) && !(term && !strcmp(term, "dumb")),
                            .stop = &sw_cmd_stop};
  struct winsize ws;
  if (o.tty && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) o.width = ws.ws_col;
  struct sw_err err = {0};
  int code = SW_WATCH_EXIT_FAILED;
  if (sw_cmd_client_open(&w.cl, w.ep, a->keys, &err) == 0)
    code = sw_watch_run(&o, watch_fetch, &w, stdout, &err);
  sw_cmd_client_close(&w.cl);
  if (err.code) {
    fprintf(stderr, "splatsweep watch: %s\n", err.msg);
    if (err.code == SW_ENOTFOUND) code = 1;
  }
  return code;
}

int sw_cmd_cancel(struct sw_cmd_args *a) {
  int64_t sweep = 0;
  if (a->n_pos != 1 || sw_cmd_parse_i64(a->pos[0], &sweep) || sweep == 0) {
    fprintf(stderr, "usage: splatsweep cancel SWEEP [--coordinator EP]\n");
    return SW_CMD_EXIT_USAGE;
  }
  const char *ep = a->coordinator ? a->coordinator : SW_CMD_DEFAULT_CONTROL;
  struct sw_msg req, rep;
  memset(&rep, 0, sizeof rep);
  sw_msg_init(&req, SW_MSG_CANCEL_REQ);
  req.u.cancel_req.sweep_id = (uint64_t)sweep;
  struct sw_err err = {0};
  int rc = sw_cmd_request(ep, a->keys, &req, &rep, (int)a->timeout_ms, &err);
  int code = 0;
  if (rc || rep.type != SW_MSG_CANCEL_REP) {
    fprintf(stderr, "splatsweep cancel: %s\n", rc ? err.msg : "unexpected reply");
    code = 1;
  } else {
    printf("sweep %" PRIu64 " cancelled (%u active lease(s) stopped)\n", rep.u.cancel_rep.sweep_id,
           rep.u.cancel_rep.runs_cancelled);
  }
  sw_msg_clear(&rep);
  return code;
}
