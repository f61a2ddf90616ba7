/* splatsweep.c: entry point of `splatsweep` (DESIGN.md section 10; docs/cli.md).
 *
 * Daemons: `coordinator` and `worker`. Embedded mode: `local` runs the coordinator's loop in this
 * process and N worker processes (this same executable) over ipc. Clients of the control
 * endpoint: submit, status, report (or report --db straight from the file), cancel, watch. The
 * read side on a database: pareto, audit. Offline tools: check, check-result, gate eval, keygen.
 * This file only dispatches; the commands live in sw_cmd_*.c (sw_cmd.h). Exit codes: 0 ok,
 * 1 failure, 2 bad usage or bad spec. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sw_cmd.h"
#include "sw_store.h"

void sw_cmd_usage(FILE *f) {
  fprintf(
      f,
      "usage: splatsweep COMMAND ...\n"
      "  local SPEC [--workers N] [--db PATH]          run a sweep on this machine\n"
      "  coordinator [--bind-work EP] [--bind-control EP] [--db PATH] [--keys DIR | --insecure]\n"
      "              [--heartbeat-ms N] [--liveness N] [--lease-ttl-ms N] [--max-attempts N]\n"
      "  worker --coordinator EP [--id ID] [--label k=v]... [--keys DIR | --insecure]\n"
      "         [--work-dir DIR] [--trainer PATH] [--host-lock FILE] [--shared-host]\n"
      "         --insecure (both): ipc:// and loopback endpoints only, unless --insecure-anywhere\n"
      "  submit SPEC [--coordinator EP] [--keys DIR]     prints the sweep id\n"
      "  status [SWEEP] [--coordinator EP] [--format text|json] [--workers-from N]\n"
      "         [--workers-shown N]                     workers listed: 200 from 0 by default\n"
      "  report [SWEEP] [--db PATH | --coordinator EP] [--format text|md|json|html] [-o FILE]\n"
      "  watch [SWEEP] [--coordinator EP] [--interval-ms N]  follow a sweep to its end (exit\n"
      "                                                  0 adopt, 3 reject, 4 inconclusive)\n"
      "  cancel SWEEP [--coordinator EP]\n"
      "  check SPEC [--db PATH]                          validate a spec (exit 2 when bad); a\n"
      "                                                  gate's forecast, on recorded noise too\n"
      "  check-result RESULT.json...                     against docs/result.schema.json\n"
      "  gate eval FILE.json                             the gate engine on given pairs\n"
      "  keygen DIR                                      CurveZMQ key pair for a daemon\n"
      "  pareto [SWEEP] [--db PATH] [--format text|md|json|csv|html] [-o FILE]\n"
      "         [--compare CONFIG --against CONFIG]   Pareto points, front, matched comparisons\n"
      "  audit [SWEEP] [--db PATH] [--format text|json] [--reference SWEEP [--gate NAME]\n"
      "        [--tolerance 0.005]]                     reproducibility audit (exit 1: problems)\n"
      "  coordinator and local also take --http PORT [--http-bind ADDR]: read-only dashboard,\n"
      "  and --dashboard-url URL: the dashboard's address in webhook notifications, and\n"
      "  --artifacts PORT [--artifacts-bind ADDR] [--artifacts-url URL]: the artifact store\n"
      "docs/cli.md has the details.\n");
}

int main(int argc, char **argv) {
  if (argc < 2) {
    sw_cmd_usage(stderr);
    return SW_CMD_EXIT_USAGE;
  }
  const char *cmd = argv[1];
  if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
    sw_cmd_usage(stdout);
    return 0;
  }
  if (!strcmp(cmd, "check-result")) return sw_cmd_check_result(argc - 2, argv + 2);
  /* pareto and audit parse their own options (sw_cmd_read.c). */
  if (!strcmp(cmd, "pareto")) return sw_cmd_pareto(argc - 1, argv + 1);
  if (!strcmp(cmd, "audit")) return sw_cmd_audit(argc - 1, argv + 1);
  struct sw_cmd_args a;
  if (sw_cmd_parse_args(argc - 1, argv + 1, &a)) {
    free(a.labels);
    return SW_CMD_EXIT_USAGE;
  }
  /* The dashboard and the artifact store run beside the daemon of coordinator and local. */
  sw_artifact_t *artifacts = NULL;
  if (sw_cmd_serve_asked(&a) && strcmp(cmd, "coordinator") && strcmp(cmd, "local")) {
    fprintf(stderr, "splatsweep %s: --http and --artifacts belong to coordinator and local\n", cmd);
    free(a.labels);
    return SW_CMD_EXIT_USAGE;
  }
  struct sw_err serr = {0};
  if (sw_cmd_serve_start(&a, SW_STORE_DEFAULT_PATH, &artifacts, &serr)) {
    fprintf(stderr, "splatsweep %s: %s\n", cmd, serr.msg);
    free(a.labels);
    return serr.code == SW_EINVAL ? SW_CMD_EXIT_USAGE : 1;
  }
  /* Webhooks link to the dashboard: by default this host's name and the --http port. */
  char dash[320];
  if (a.http && !a.dashboard_url) {
    sw_http_host_url(sw_http_port(a.http), dash, sizeof dash);
    a.dashboard_url = dash;
  }
  int rc;
  if (!strcmp(cmd, "check"))
    rc = sw_cmd_check(&a);
  else if (!strcmp(cmd, "gate"))
    rc = sw_cmd_gate(&a);
  else if (!strcmp(cmd, "keygen"))
    rc = sw_cmd_keygen(&a);
  else if (!strcmp(cmd, "coordinator"))
    rc = sw_cmd_coordinator(&a);
  else if (!strcmp(cmd, "worker"))
    rc = sw_cmd_worker(&a);
  else if (!strcmp(cmd, "submit"))
    rc = sw_cmd_submit(&a);
  else if (!strcmp(cmd, "status"))
    rc = sw_cmd_status(&a);
  else if (!strcmp(cmd, "report"))
    rc = sw_cmd_report(&a);
  else if (!strcmp(cmd, "cancel"))
    rc = sw_cmd_cancel(&a);
  else if (!strcmp(cmd, "watch"))
    rc = sw_cmd_watch(&a);
  else if (!strcmp(cmd, "local"))
    rc = sw_cmd_local(&a);
  else {
    fprintf(stderr, "splatsweep: unknown command '%s'\n", cmd);
    sw_cmd_usage(stderr);
    rc = SW_CMD_EXIT_USAGE;
  }
  sw_cmd_serve_stop(&a, &artifacts);
  free(a.labels);
  return rc;
}
