/* sw_cmd_local.c: `splatsweep local` (sw_cmd.h): the coordinator's loop in this process and N
 * worker processes (this same executable) over ipc, supervised until the sweep finishes. */
#include "sw_cmd.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "sw_clock.h"
#include "sw_coord.h"
#include "sw_log.h"
#include "sw_report.h"
#include "sw_store.h"

static pid_t spawn_worker(const char *self, const char *ep, int k, const char *work_root,
                          const struct sw_cmd_args *a) {
  char id[32], wd[4200], hb[32];
  snprintf(id, sizeof id, "local-%d", k);
  snprintf(wd, sizeof wd, "%s/%s", work_root, id);
  snprintf(hb, sizeof hb, "%" PRId64, a->heartbeat_ms > 0 ? a->heartbeat_ms : 1000);
  pid_t pid = fork();
  if (pid == 0) {
    char *argv[16];
    int n = 0;
    argv[n++] = (char *)self;
    argv[n++] = "worker";
    argv[n++] = "--coordinator";
    argv[n++] = (char *)ep;
    argv[n++] = "--insecure";
    argv[n++] = "--id";
    argv[n++] = id;
    argv[n++] = "--work-dir";
    argv[n++] = wd;
    argv[n++] = "--heartbeat-ms";
    argv[n++] = hb;
    if (a->trainer) {
      argv[n++] = "--trainer";
      argv[n++] = (char *)a->trainer;
    }
    argv[n] = NULL;
    /* Local workers share one machine, so they take the host measurement lock in turn and each
     * run has every core. This process (the coordinator) and every local worker are
     * splatsweep's own processes: the workers' load samplers count them as "self". */
    char root[32];
    snprintf(root, sizeof root, "%d", (int)getppid());
    setenv("SW_SELF_ROOT_PID", root, 1);
    execv(self, argv);
    fprintf(stderr, "splatsweep local: cannot start a worker: %s\n", strerror(errno));
    _exit(127);
  }
  return pid;
}

static void stop_workers(pid_t *pids, int n) {
  for (int i = 0; i < n; i++)
    if (pids[i] > 0) kill(pids[i], SIGTERM);
  int64_t deadline = sw_clock_mono_ms() + 8000;
  for (int i = 0; i < n; i++) {
    while (pids[i] > 0) {
      pid_t w = waitpid(pids[i], NULL, WNOHANG);
      if (w == pids[i] || (w < 0 && errno == ECHILD)) {
        pids[i] = 0;
        break;
      }
      if (sw_clock_mono_ms() > deadline) {
        kill(pids[i], SIGKILL);
        waitpid(pids[i], NULL, 0);
        pids[i] = 0;
        break;
      }
      struct timespec ts = {0, 20 * 1000000L};
      nanosleep(&ts, NULL);
    }
  }
}

int sw_cmd_local(struct sw_cmd_args *a) {
  if (a->n_pos != 1) {
    fprintf(stderr, "usage: splatsweep local SPEC [--workers N] [--db PATH]\n");
    return SW_CMD_EXIT_USAGE;
  }
  struct sw_err err = {0};
  char *yaml = NULL;
  int builtin = 0;
  if (sw_cmd_read_checked_spec("local", a->pos[0], &yaml, &builtin)) return SW_CMD_EXIT_USAGE;
  /* Local workers offer the builtin runner only with splat-train at hand; without it the
   * sweep would wait for a capable worker forever. */
  char *trainer = builtin ? sw_cmd_find_splat_train() : NULL;
  if (builtin && !trainer) {
    fprintf(stderr,
            "splatsweep local: %s uses the builtin trainer, but splat-train is neither "
            "beside splatsweep nor on PATH (build the splat-train target)\n",
            a->pos[0]);
    free(yaml);
    return 1;
  }
  free(trainer);
  sw_cmd_install_signals();
  sw_log_set_component("local");
  int n = a->workers > 0 ? (int)a->workers : 1;
  if (n > 256) {
    fprintf(stderr, "splatsweep local: --workers %d: at most 256\n", n);
    free(yaml);
    return SW_CMD_EXIT_USAGE;
  }
  const char *db = a->db ? a->db : SW_STORE_DEFAULT_PATH;
  char self[PATH_MAX], work_ep[128], ctl_ep[128], work_root[4200];
  if (sw_cmd_self_path(self, sizeof self)) {
    fprintf(stderr, "splatsweep local: cannot find this executable\n");
    free(yaml);
    return 1;
  }
  /* ipc endpoints private to this run: loopback only, nothing listens on the network. */
  snprintf(work_ep, sizeof work_ep, "ipc:///tmp/splatsweep-%d-work.ipc", (int)getpid());
  snprintf(ctl_ep, sizeof ctl_ep, "ipc:///tmp/splatsweep-%d-control.ipc", (int)getpid());
  {
    char dbdir[4096];
    snprintf(dbdir, sizeof dbdir, "%s", db);
    char *slash = strrchr(dbdir, '/');
    snprintf(work_root, sizeof work_root, "%s/local-workers", slash ? (*slash = '\0', dbdir) : ".");
  }
  /* The coordinator's options as `coordinator` takes them, on endpoints private to this
   * process, in plain text (they never leave the machine). */
  struct sw_coord_opts o;
  sw_cmd_coord_opts(a, &o);
  o.bind_work = work_ep;
  o.bind_control = ctl_ep;
  o.keys_dir = NULL;
  o.insecure = 1;
  void *ctx = zmq_ctx_new();
  sw_coord_t *c = NULL;
  int64_t sweep = 0;
  int rc = sw_coord_new(ctx, &o, &c, &err);
  if (!rc) rc = sw_coord_submit(c, yaml, a->pos[0], &sweep, &err);
  free(yaml);
  if (rc) {
    fprintf(stderr, "splatsweep local: %s\n", err.msg);
    sw_coord_destroy(&c);
    zmq_ctx_term(ctx);
    return rc == SW_EINVAL ? SW_CMD_EXIT_USAGE : 1;
  }
  fprintf(stderr,
          "splatsweep local: sweep %" PRId64 " with %d worker(s); status: splatsweep "
          "status --coordinator %s\n",
          sweep, n, ctl_ep);
  pid_t *pids = calloc((size_t)n, sizeof *pids);
  for (int k = 0; k < n && pids; k++) pids[k] = spawn_worker(self, work_ep, k + 1, work_root, a);
  int finished = 0;
  while (!rc && !sw_cmd_stop && pids) {
    rc = sw_coord_poll(c, 100, &err);
    int f = sw_coord_sweep_finished(c, sweep, &err);
    if (f < 0) {
      rc = f;
      break;
    }
    if (f == 1) {
      finished = 1;
      break;
    }
    /* A worker that died (crash, OOM) is restarted: the sweep must still finish. */
    for (int k = 0; k < n; k++) {
      int st;
      if (pids[k] > 0 && waitpid(pids[k], &st, WNOHANG) == pids[k]) {
        sw_log_warn("worker local-%d exited (status %d); restarting it", k + 1,
                    WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
        pids[k] = spawn_worker(self, work_ep, k + 1, work_root, a);
      }
    }
  }
  if (pids) stop_workers(pids, n);
  free(pids);
  sw_coord_destroy(&c);
  zmq_ctx_term(ctx);
  char path[200];
  snprintf(path, sizeof path, "/tmp/splatsweep-%d-work.ipc", (int)getpid());
  unlink(path);
  snprintf(path, sizeof path, "/tmp/splatsweep-%d-control.ipc", (int)getpid());
  unlink(path);
  if (rc) {
    fprintf(stderr, "splatsweep local: %s\n", err.msg);
    return 1;
  }
  if (!finished) {
    fprintf(stderr, "splatsweep local: interrupted; sweep %" PRId64 " is kept in %s\n", sweep, db);
    return 1;
  }
  /* The verdicts, read back from the store like any report. */
  sw_store_t *store = NULL;
  char *text = NULL;
  rc = sw_store_open(db, NULL, &store, &err);
  if (!rc) rc = sw_report_render_string(store, sweep, SW_REPORT_TEXT, &text, &err);
  sw_store_close(&store);
  if (rc) {
    fprintf(stderr, "splatsweep local: report: %s\n", err.msg);
    free(text);
    return 1;
  }
  sw_cmd_write_out(NULL, text ? text : "");
  free(text);
  return 0;
}
