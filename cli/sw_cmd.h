/* sw_cmd.h: the commands of `splatsweep` (DESIGN.md section 10; docs/cli.md) and what they
 * share. splatsweep.c only dispatches; each command family lives in its own file:
 *   sw_cmd_args.c     the one option table every command parses, signals, small helpers
 *   sw_cmd_client.c   the control endpoint's client: open, one request and its reply, close
 *   sw_cmd_control.c  clients of a running coordinator: submit, status, report, watch, cancel
 *   sw_cmd_spec.c     offline tools: check, check-result, gate eval, keygen (and the spec check
 *                     submit and local run first, with the builtin trainer's key table)
 *   sw_cmd_daemon.c   the daemons: coordinator, worker
 *   sw_cmd_local.c    local: the coordinator's loop in this process and N worker processes
 *   sw_cmd_read.c     the read side straight from a database: pareto, audit (library sw_cli)
 *   sw_cmd_serve.c    the servers --http and --artifacts start beside coordinator and local
 *                     (library sw_cli)
 * Each command returns the process exit code: 0 ok, 1 failure, 2 bad usage or bad spec (watch
 * and audit add their own, named in docs/cli.md). Libraries below never see argv: the commands
 * turn options into the libraries' option structs. */
#ifndef SW_CMD_H
#define SW_CMD_H

#include <signal.h>
#include <stdint.h>
#include <stdio.h>

#include "sw_artifact.h"
#include "sw_err.h"
#include "sw_http.h"
#include "sw_msg.h"

#define SW_CMD_EXIT_USAGE 2
#define SW_CMD_DEFAULT_CONTROL "tcp://127.0.0.1:7711"

/* Set by SIGTERM / SIGINT (sw_cmd_install_signals); the daemons' and clients' loops end on it. */
extern volatile sig_atomic_t sw_cmd_stop;

/* Every option of every command, parsed once by sw_cmd_parse_args. */
struct sw_cmd_args {
  int64_t workers, heartbeat_ms, liveness, lease_ttl_ms, max_attempts, timeout_ms;
  int64_t workers_from, workers_shown; /* status: the page of workers listed */
  int64_t interval_ms;                 /* watch: between status requests */
  const char *db, *bind_work, *bind_control, *keys, *coordinator, *id, *work_dir, *trainer, *output,
      *format, *host_lock, *dashboard_url, *artifact_url;
  int insecure, insecure_anywhere, keep_runs, shared_host;
  struct sw_msg_kv *labels;
  size_t n_labels;
  char *pos[4];
  int n_pos;
  /* coordinator, local: the servers beside the daemon (sw_cmd_serve_start); a port of -1 means
   * the option was not given. artifacts_url is the URL asked for (--artifacts-url); artifact_url
   * (above) is the one workers are told, set once the artifact store runs. */
  int64_t http_port, artifacts_port;
  const char *http_bind, *artifacts_bind, *artifacts_url;
  sw_http_t *http; /* the dashboard started by --http (NULL without) */
};

/* Parses argv (argv[0] is the command's name) into *a. Returns 0, or -1 after printing the
 * problem to stderr. -h prints the usage and exits. a->labels is the caller's to free. */
int sw_cmd_parse_args(int argc, char **argv, struct sw_cmd_args *a);
/* The usage text of every command (splatsweep.c). */
void sw_cmd_usage(FILE *f);
void sw_cmd_install_signals(void);
/* A non-negative decimal integer: 0, or -1. */
int sw_cmd_parse_i64(const char *s, int64_t *out);
/* --format: 0, or -1 after printing the accepted names. */
int sw_cmd_parse_format(const char *s, enum sw_msg_format *out);
/* Writes text to path atomically, or to stdout (ending it with a newline) when path is NULL.
 * Returns the exit code: 0, or 1 after printing the error. */
int sw_cmd_write_out(const char *path, const char *text);
/* This executable's path: 0 or -1. */
int sw_cmd_self_path(char *buf, size_t cap);
/* splat-train next to splatsweep, else on PATH; NULL when neither exists. Caller frees. */
char *sw_cmd_find_splat_train(void);

/* The control endpoint's client (sw_cmd_client.c): a DEALER socket with CURVE keys from
 * keys_dir (NULL: plain text). open then close, whatever open returned. */
struct sw_cmd_client {
  void *ctx, *sock;
};
int sw_cmd_client_open(struct sw_cmd_client *cl, const char *ep, const char *keys_dir,
                       struct sw_err *err);
void sw_cmd_client_close(struct sw_cmd_client *cl);
/* Sends req and waits for one reply (timeout_ms). Returns 0 and *rep (the caller clears it),
 * or SW_ETIMEOUT / SW_EPROTO / SW_ENET; an Error or Reject reply is returned as its error. */
int sw_cmd_client_call(struct sw_cmd_client *cl, struct sw_msg *req, struct sw_msg *rep,
                       int timeout_ms, const char *ep, struct sw_err *err);
/* One request on its own connection: open, call, close. Same returns as sw_cmd_client_call. */
int sw_cmd_request(const char *ep, const char *keys_dir, struct sw_msg *req, struct sw_msg *rep,
                   int timeout_ms, struct sw_err *err);

/* Validates the spec at path (and, for the builtin trainer, every run's config against the
 * trainer's key table) and reads its text into *yaml_out (caller frees). *builtin (may be
 * NULL) is set to 1 when the spec runs the builtin trainer. 0, or -1 after printing. */
int sw_cmd_read_checked_spec(const char *cmd, const char *path, char **yaml_out, int *builtin);

/* sw_cmd_daemon.c: the coordinator's options as the command line gives them (binds, keys,
 * tuning, the dashboard's status hook, the artifact URL), for `coordinator` and for `local`,
 * which then names its own private endpoints. Borrows from a: o is valid while a is. */
struct sw_coord_opts;
void sw_cmd_coord_opts(const struct sw_cmd_args *a, struct sw_coord_opts *o);

/* The commands; each returns the exit code. */
int sw_cmd_check(struct sw_cmd_args *a);
int sw_cmd_check_result(int n, char **files);
int sw_cmd_gate(struct sw_cmd_args *a);
int sw_cmd_keygen(struct sw_cmd_args *a);
int sw_cmd_coordinator(struct sw_cmd_args *a);
int sw_cmd_worker(struct sw_cmd_args *a);
int sw_cmd_submit(struct sw_cmd_args *a);
int sw_cmd_status(struct sw_cmd_args *a);
int sw_cmd_report(struct sw_cmd_args *a);
int sw_cmd_watch(struct sw_cmd_args *a);
int sw_cmd_cancel(struct sw_cmd_args *a);
int sw_cmd_local(struct sw_cmd_args *a);

/* sw_cmd_read.c: `pareto` and `audit` on a database; argv[0] is the command's name. Exit
 * codes: 0, 1 (store failure; audit: problems found), 2 (bad input). */
int sw_cmd_pareto(int argc, char **argv);
int sw_cmd_audit(int argc, char **argv);

/* sw_cmd_serve.c: starts the servers `coordinator` and `local` run beside the daemon, from the
 * parsed options: with --http the dashboard on a->db (or default_db) into a->http, with
 * --artifacts the artifact store into *artifacts and the URL workers are told into
 * a->artifact_url (owned by the store). A bind address or URL without its port is SW_EINVAL; on
 * any failure nothing is left running and a->http, *artifacts are NULL. Stop them with
 * sw_cmd_serve_stop. */
int sw_cmd_serve_start(struct sw_cmd_args *a, const char *default_db, sw_artifact_t **artifacts,
                       struct sw_err *err);
/* Stops both (NULL-safe). */
void sw_cmd_serve_stop(struct sw_cmd_args *a, sw_artifact_t **artifacts);
/* 1 when any --http or --artifacts option was given (they belong to coordinator and local). */
int sw_cmd_serve_asked(const struct sw_cmd_args *a);

#endif
