/* splatsweep.c: the `splatsweep` command line (DESIGN.md section 10; docs/cli.md).
 *
 * Daemons: `coordinator` and `worker`. Embedded mode: `local` runs the coordinator's loop in this
 * process and N worker processes (this same executable) over ipc. Clients of the control
 * endpoint: submit, status, report (or report --db straight from the file), cancel. Offline
 * tools: check, gate eval, keygen. Exit codes: 0 ok, 1 failure, 2 bad usage or bad spec. */
#ifdef __APPLE__
/* The build defines _POSIX_C_SOURCE, which hides getloadavg, sysctlbyname and friends. */
#define _DARWIN_C_SOURCE 1
#endif
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "sw_artifact.h"
#include "sw_audit.h"
#include "sw_clock.h"
#include "sw_codec.h"
#include "sw_coord.h"
#include "sw_fs.h"
#include "sw_gate.h"
#include "sw_http.h"
#include "sw_keys.h"
#include "sw_log.h"
#include "sw_noise.h"
#include "sw_pareto.h"
#include "sw_report.h"
#include "sw_result.h"
#include "sw_spec.h"
#include "sw_store.h"
#include "sw_watch.h"
#include "sw_worker.h"
#ifdef SW_HAVE_TRAINER_KEYS
#include "gs_config.h"
#endif

#define EXIT_USAGE 2
#define DEFAULT_CONTROL "tcp://127.0.0.1:7711"

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig) {
  (void)sig;
  stop_flag = 1;
}

static void install_signals(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  signal(SIGPIPE, SIG_IGN);
}

static void usage(FILE *f) {
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

/* ---- helpers ------------------------------------------------------------------------------- */

/* This executable's path (for splat-train beside it and for spawning workers); 0 or -1. */
static int self_path(char *buf, size_t cap) { return sw_fs_self_exe(buf, cap, NULL) ? -1 : 0; }

/* splat-train next to splatsweep, else on PATH; NULL when neither exists. Caller frees. */
static char *find_splat_train(void) {
  char self[PATH_MAX];
  if (self_path(self, sizeof self) == 0) {
    char *slash = strrchr(self, '/');
    if (slash) {
      char cand[PATH_MAX + 16];
      snprintf(cand, sizeof cand, "%.*s/splat-train", (int)(slash - self), self);
      if (access(cand, X_OK) == 0) return strdup(cand);
    }
  }
  char cand[PATH_MAX + 16];
  return sw_fs_find_in(getenv("PATH"), "splat-train", SW_FS_FIND_EXEC, cand, sizeof cand)
             ? strdup(cand)
             : NULL;
}

static int parse_i64(const char *s, int64_t *out) {
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (errno || end == s || *end || v < 0) return -1;
  *out = v;
  return 0;
}

static int parse_format(const char *s, enum sw_msg_format *out) {
  if (sw_msg_format_parse(s, out)) {
    fprintf(stderr, "splatsweep: unknown format '%s' (text, md, json, html)\n", s);
    return -1;
  }
  return 0;
}

/* ---- control client ------------------------------------------------------------------------ */

struct client {
  void *ctx, *sock;
};

static int client_open(struct client *cl, const char *ep, const char *keys_dir,
                       struct sw_err *err) {
  cl->ctx = zmq_ctx_new();
  cl->sock = zmq_socket(cl->ctx, ZMQ_DEALER);
  int zero = 0;
  int64_t maxmsg = SW_MSG_FRAME_MAX;
  zmq_setsockopt(cl->sock, ZMQ_LINGER, &zero, sizeof zero);
  zmq_setsockopt(cl->sock, ZMQ_MAXMSGSIZE, &maxmsg, sizeof maxmsg);
  if (keys_dir) {
    char pub[41], sec[41], srv[41];
    int rc = sw_keys_load(keys_dir, pub, sec, srv, err);
    if (rc) return rc;
    zmq_setsockopt(cl->sock, ZMQ_CURVE_SERVERKEY, srv, 40);
    zmq_setsockopt(cl->sock, ZMQ_CURVE_PUBLICKEY, pub, 40);
    zmq_setsockopt(cl->sock, ZMQ_CURVE_SECRETKEY, sec, 40);
  }
  if (zmq_connect(cl->sock, ep) != 0)
    return sw_err_set(err, SW_ENET, "connect %s: %s", ep, zmq_strerror(errno));
  return 0;
}

static void client_close(struct client *cl) {
  if (cl->sock) zmq_close(cl->sock);
  if (cl->ctx) zmq_ctx_term(cl->ctx);
}

/* Sends req and waits for one reply (timeout_ms). Returns 0 and *rep, or SW_ETIMEOUT/SW_EPROTO. */
static int client_call(struct client *cl, struct sw_msg *req, struct sw_msg *rep, int timeout_ms,
                       const char *ep, struct sw_err *err) {
  uint8_t *buf = NULL;
  size_t len = 0;
  req->seq = 1;
  int rc = sw_codec_encode(req, &buf, &len, err);
  if (rc) return rc;
  rc = zmq_send(cl->sock, buf, len, 0);
  free(buf);
  if (rc < 0) return sw_err_set(err, SW_ENET, "send to %s: %s", ep, zmq_strerror(errno));
  zmq_pollitem_t it = {cl->sock, 0, ZMQ_POLLIN, 0};
  int64_t deadline = sw_clock_mono_ms() + timeout_ms;
  while (!stop_flag) {
    int64_t left = deadline - sw_clock_mono_ms();
    if (left <= 0) break;
    int n = zmq_poll(&it, 1, (long)left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    zmq_msg_t f;
    zmq_msg_init(&f);
    if (zmq_msg_recv(&f, cl->sock, 0) < 0) {
      zmq_msg_close(&f);
      continue;
    }
    rc = sw_codec_decode(zmq_msg_data(&f), zmq_msg_size(&f), rep, err);
    zmq_msg_close(&f);
    if (rc) return rc;
    if (rep->type == SW_MSG_ERROR) {
      rc = sw_err_set(err, rep->u.error.code < 0 ? rep->u.error.code : SW_EINVAL, "%s",
                      rep->u.error.message ? rep->u.error.message : "request failed");
      sw_msg_clear(rep);
      return rc;
    }
    if (rep->type == SW_MSG_REJECT) {
      rc = sw_err_set(err, SW_EPROTO, "rejected: %s",
                      rep->u.reject.reason ? rep->u.reject.reason : "");
      sw_msg_clear(rep);
      return rc;
    }
    return 0;
  }
  return sw_err_set(err, SW_ETIMEOUT, "no answer from the coordinator at %s within %d ms", ep,
                    timeout_ms);
}

/* ---- commands ------------------------------------------------------------------------------ */

enum {
  OPT_WORKERS = 1000,
  OPT_DB,
  OPT_BIND_WORK,
  OPT_BIND_CONTROL,
  OPT_KEYS,
  OPT_INSECURE,
  OPT_HEARTBEAT,
  OPT_LIVENESS,
  OPT_LEASE_TTL,
  OPT_MAX_ATTEMPTS,
  OPT_COORD,
  OPT_ID,
  OPT_LABEL,
  OPT_WORK_DIR,
  OPT_TRAINER,
  OPT_FORMAT,
  OPT_KEEP_RUNS,
  OPT_TIMEOUT,
  OPT_LOG,
  OPT_HOST_LOCK,
  OPT_SHARED_HOST,
  OPT_INSECURE_ANYWHERE,
  OPT_WORKERS_FROM,
  OPT_WORKERS_SHOWN,
  OPT_INTERVAL,
  OPT_DASHBOARD_URL
};

static const struct option long_opts[] = {
    {"workers", required_argument, 0, OPT_WORKERS},
    {"db", required_argument, 0, OPT_DB},
    {"bind-work", required_argument, 0, OPT_BIND_WORK},
    {"bind-control", required_argument, 0, OPT_BIND_CONTROL},
    {"keys", required_argument, 0, OPT_KEYS},
    {"insecure", no_argument, 0, OPT_INSECURE},
    {"heartbeat-ms", required_argument, 0, OPT_HEARTBEAT},
    {"liveness", required_argument, 0, OPT_LIVENESS},
    {"lease-ttl-ms", required_argument, 0, OPT_LEASE_TTL},
    {"max-attempts", required_argument, 0, OPT_MAX_ATTEMPTS},
    {"coordinator", required_argument, 0, OPT_COORD},
    {"id", required_argument, 0, OPT_ID},
    {"label", required_argument, 0, OPT_LABEL},
    {"work-dir", required_argument, 0, OPT_WORK_DIR},
    {"trainer", required_argument, 0, OPT_TRAINER},
    {"format", required_argument, 0, OPT_FORMAT},
    {"keep-runs", no_argument, 0, OPT_KEEP_RUNS},
    {"timeout-ms", required_argument, 0, OPT_TIMEOUT},
    {"log", required_argument, 0, OPT_LOG},
    {"host-lock", required_argument, 0, OPT_HOST_LOCK},
    {"shared-host", no_argument, 0, OPT_SHARED_HOST},
    {"insecure-anywhere", no_argument, 0, OPT_INSECURE_ANYWHERE},
    {"workers-from", required_argument, 0, OPT_WORKERS_FROM},
    {"workers-shown", required_argument, 0, OPT_WORKERS_SHOWN},
    {"interval-ms", required_argument, 0, OPT_INTERVAL},
    {"dashboard-url", required_argument, 0, OPT_DASHBOARD_URL},
    {"output", required_argument, 0, 'o'},
    {"help", no_argument, 0, 'h'},
    {0, 0, 0, 0}};

struct args {
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
  sw_http_t *http; /* coordinator, local: the dashboard started by --http (NULL without) */
};

static int parse_args(int argc, char **argv, struct args *a) {
  memset(a, 0, sizeof *a);
  a->timeout_ms = 10000;
  optind = 1;
  opterr = 1;
  int c;
  int64_t v;
  while ((c = getopt_long(argc, argv, "o:h", long_opts, NULL)) != -1) {
    switch (c) {
    case OPT_WORKERS:
    case OPT_HEARTBEAT:
    case OPT_LIVENESS:
    case OPT_LEASE_TTL:
    case OPT_MAX_ATTEMPTS:
    case OPT_TIMEOUT:
      if (parse_i64(optarg, &v) || v > INT32_MAX) {
        fprintf(stderr, "splatsweep: --%s: expected a non-negative integer, got '%s'\n",
                long_opts[c - OPT_WORKERS].name, optarg);
        return -1;
      }
      if (c == OPT_WORKERS) a->workers = v;
      if (c == OPT_HEARTBEAT) a->heartbeat_ms = v;
      if (c == OPT_LIVENESS) a->liveness = v;
      if (c == OPT_LEASE_TTL) a->lease_ttl_ms = v;
      if (c == OPT_MAX_ATTEMPTS) a->max_attempts = v;
      if (c == OPT_TIMEOUT) a->timeout_ms = v;
      break;
    case OPT_INTERVAL:
      if (parse_i64(optarg, &v) || v < 100 || v > 3600000) {
        fprintf(stderr, "splatsweep: --interval-ms: expected 100 to 3600000, got '%s'\n", optarg);
        return -1;
      }
      a->interval_ms = v;
      break;
    case OPT_WORKERS_FROM:
    case OPT_WORKERS_SHOWN:
      if (parse_i64(optarg, &v) || v > INT32_MAX) {
        fprintf(stderr, "splatsweep: --%s: expected a non-negative integer, got '%s'\n",
                c == OPT_WORKERS_FROM ? "workers-from" : "workers-shown", optarg);
        return -1;
      }
      *(c == OPT_WORKERS_FROM ? &a->workers_from : &a->workers_shown) = v;
      break;
    case OPT_DB: a->db = optarg; break;
    case OPT_DASHBOARD_URL:
      if (strncmp(optarg, "http://", 7) && strncmp(optarg, "https://", 8)) {
        fprintf(stderr, "splatsweep: --dashboard-url %s: expected an http:// or https:// URL\n",
                optarg);
        return -1;
      }
      a->dashboard_url = optarg;
      break;
    case OPT_BIND_WORK: a->bind_work = optarg; break;
    case OPT_BIND_CONTROL: a->bind_control = optarg; break;
    case OPT_KEYS: a->keys = optarg; break;
    case OPT_INSECURE: a->insecure = 1; break;
    case OPT_INSECURE_ANYWHERE: a->insecure_anywhere = 1; break;
    case OPT_COORD: a->coordinator = optarg; break;
    case OPT_ID: a->id = optarg; break;
    case OPT_WORK_DIR: a->work_dir = optarg; break;
    case OPT_TRAINER: a->trainer = optarg; break;
    case OPT_FORMAT: a->format = optarg; break;
    case OPT_KEEP_RUNS: a->keep_runs = 1; break;
    case OPT_HOST_LOCK: a->host_lock = optarg; break;
    case OPT_SHARED_HOST: a->shared_host = 1; break;
    case OPT_LOG:
      if (!strcmp(optarg, "debug"))
        sw_log_set_level(SW_LOG_DEBUG);
      else if (!strcmp(optarg, "warn"))
        sw_log_set_level(SW_LOG_WARN);
      else if (!strcmp(optarg, "error"))
        sw_log_set_level(SW_LOG_ERROR);
      else
        sw_log_set_level(SW_LOG_INFO);
      break;
    case 'o': a->output = optarg; break;
    case OPT_LABEL: {
      const char *eq = strchr(optarg, '=');
      if (!eq || eq == optarg) {
        fprintf(stderr, "splatsweep: --label %s: expected key=value\n", optarg);
        return -1;
      }
      /* The limits a Hello is validated against, checked here so that a worker with too many
       * or too long labels stops at start instead of being refused by every coordinator. */
      if (eq - optarg > SW_MSG_KEY_MAX || strlen(eq + 1) > SW_MSG_KV_VALUE_MAX ||
          a->n_labels >= SW_MSG_LABELS_MAX) {
        fprintf(stderr,
                "splatsweep: --label %s: at most %d labels, keys of at most %d bytes and values "
                "of at most %d\n",
                optarg, SW_MSG_LABELS_MAX, SW_MSG_KEY_MAX, SW_MSG_KV_VALUE_MAX);
        return -1;
      }
      char key[SW_MSG_KEY_MAX + 1];
      snprintf(key, sizeof key, "%.*s", (int)(eq - optarg), optarg);
      if (sw_msg_kv_add(&a->labels, &a->n_labels, key, eq + 1)) {
        fprintf(stderr, "splatsweep: --label %s: out of memory\n", optarg);
        return -1;
      }
      break;
    }
    case 'h': usage(stdout); exit(0);
    default: return -1;
    }
  }
  for (int i = optind; i < argc; i++) {
    if (a->n_pos == 4) {
      fprintf(stderr, "splatsweep: too many arguments\n");
      return -1;
    }
    a->pos[a->n_pos++] = argv[i];
  }
  return 0;
}

static int check_trainer_keys(const char *path, const struct sw_spec *s);

/* check-result FILE...: each file against docs/result.schema.json, as the coordinator checks
 * every result it is sent. Exit 0 when all match, 1 when one does not, 2 when one is unreadable. */
static int cmd_check_result(int n, char **files) {
  if (n < 1) {
    fprintf(stderr, "usage: splatsweep check-result RESULT.json...\n");
    return EXIT_USAGE;
  }
  int rc = 0;
  for (int i = 0; i < n; i++) {
    char *text = NULL;
    struct sw_err err = {0};
    if (sw_fs_read_all(files[i], &text, NULL, &err)) {
      fprintf(stderr, "%s: %s\n", files[i], err.msg);
      rc = EXIT_USAGE;
      continue;
    }
    if (sw_result_check_text(text, &err)) {
      printf("%s: %s\n", files[i], err.msg);
      if (!rc) rc = 1;
    } else {
      printf("%s: ok\n", files[i]);
    }
    free(text);
  }
  return rc;
}

/* What a gate spec will cost, before it starts (docs/gate-rules.md section 5): the gate
 * engine's forecast for the spec's design at three assumed machine CVs, 10% of runs flagged, the
 * pairs on one machine. `check` has no store; the machines' recorded noise (sw_gate_noise_assess)
 * is the coordinator's to supply at submit. The design is the spec's: k, floor, alpha,
 * direction, pairs.n / max / sequential; everything else the engine's defaults. */
static void print_forecast(const struct sw_spec *s, double recorded_cv, int machines) {
  struct sw_gate_config cfg;
  sw_gate_config_default(&cfg);
  cfg.direction = s->gate.direction == SW_DIR_HIGHER ? SW_GATE_HIGHER : SW_GATE_LOWER;
  cfg.k = s->gate.k;
  cfg.floor = s->gate.floor;
  cfg.alpha = s->gate.alpha;
  cfg.sequential = s->pairs.sequential;
  cfg.min_pairs = (int)s->pairs.n;
  cfg.max_pairs = (int)s->pairs.max;
  /* The machines' recorded noise first, when there is a store to read it from. */
  double cvs[4] = {recorded_cv, 0.005, 0.01, 0.015};
  int first = isfinite(recorded_cv) && recorded_cv > 0 ? 0 : 1;
  if (cfg.sequential)
    printf("forecast (gate engine, 400 simulated gates per figure, looks from %d to %d pairs, "
           "10%% of runs flagged, machine CV assumed):\n",
           cfg.min_pairs, cfg.max_pairs);
  else
    printf("forecast (gate engine, 400 simulated gates per figure, %d pairs, 10%% of runs "
           "flagged, machine CV assumed):\n",
           cfg.min_pairs);
  for (int i = first; i < 4; i++) {
    if (i == 0) printf("  recorded noise of %d machine(s):", machines);
    struct sw_gate_forecast f;
    struct sw_err err = {0};
    if (sw_gate_forecast(&cfg, (int)s->pairs.n, cvs[i], 0.10, 1, 400, 1, &f, &err)) {
      printf("  CV %.1f%%: no forecast: %s\n", 100 * cvs[i], err.msg);
      continue;
    }
    printf("  CV %.1f%% (threshold %.2f%%): null change adopted %.1f%%, %.1f runs;", 100 * cvs[i],
           100 * f.threshold, 100 * f.row[0].p_adopt, f.row[0].runs_mean);
    for (int k = 1; k < SW_GATE_FORECAST_ROWS; k++)
      printf(" %.2f%% better: adopted %.0f%%, %.1f runs%s", 100 * f.row[k].effect,
             100 * f.row[k].p_adopt, f.row[k].runs_mean, k + 1 < SW_GATE_FORECAST_ROWS ? ";" : "");
    printf(" (at most %d runs)\n", f.row[1].runs_max);
  }
}

/* The machines' noise on the gate's metric from the store at db (sw_noise.h): prints each
 * machine whose noise jumped, and gives the fleet's planning CV (NAN when nothing is recorded). */
static void recorded_noise(const char *db, const struct sw_spec *spec, double *cv, int *machines) {
  struct sw_store_opts so;
  sw_store_opts_default(&so);
  so.read_only = 1;
  sw_store_t *store = NULL;
  struct sw_err err = {0};
  if (sw_store_open(db, &so, &store, &err)) {
    printf("recorded noise: none (%s)\n", err.msg);
    return;
  }
  json_t *nz = sw_noise_json(store, spec->gate.metric, &err);
  sw_store_close(&store);
  if (!nz) {
    printf("recorded noise: none (%s)\n", err.msg);
    return;
  }
  size_t i;
  json_t *m;
  json_array_foreach(json_object_get(nz, "machines"), i, m) {
    if (!json_is_true(json_object_get(m, "jumped"))) continue;
    printf("noise jumped on machine %s: CV %.2f%% in its latest gate, %.2f%% before (F test p = "
           "%.2g); planning with the latest\n",
           json_string_value(json_object_get(m, "machine")),
           100 * json_number_value(json_object_get(m, "cv_recent")),
           100 * json_number_value(json_object_get(m, "cv_history")),
           json_number_value(json_object_get(m, "p")));
  }
  *machines = (int)json_array_size(json_object_get(nz, "machines"));
  if (json_is_number(json_object_get(nz, "cv_plan")))
    *cv = json_number_value(json_object_get(nz, "cv_plan"));
  else
    printf("recorded noise: no finished gate on %s in %s\n", spec->gate.metric, db);
  json_decref(nz);
}

static int cmd_check(struct args *a) {
  if (a->n_pos != 1) {
    fprintf(stderr, "usage: splatsweep check SPEC [--db PATH]\n");
    return EXIT_USAGE;
  }
  /* The "ok" line is held back until the trainer keys have been checked too. */
  char *said = NULL;
  size_t said_len = 0;
  FILE *mem = open_memstream(&said, &said_len);
  if (!mem) {
    fprintf(stderr, "splatsweep check: out of memory\n");
    return 1;
  }
  int rc = sw_spec_check_file(a->pos[0], mem);
  fclose(mem);
  struct sw_spec *spec = NULL;
  struct sw_err err = {0};
  if (rc) {
    fputs(said ? said : "", stdout); /* the spec's own error, where it always went */
  } else if (sw_spec_load_file(a->pos[0], &spec, &err)) { /* a race with an edit */
    fprintf(stderr, "%s\n", err.msg);
    rc = -1;
  } else if (!(rc = check_trainer_keys(a->pos[0], spec))) {
    fputs(said ? said : "", stdout);
    if (spec->kind == SW_SPEC_GATE) {
      double cv = NAN;
      int machines = 0;
      if (a->db) /* --db: plan on the machines' recorded noise too, and name jumps */
        recorded_noise(a->db, spec, &cv, &machines);
      print_forecast(spec, cv, machines);
    }
  }
  sw_spec_destroy(&spec);
  free(said);
  return rc ? EXIT_USAGE : 0;
}

static int cmd_gate(struct args *a) {
  if (a->n_pos != 2 || strcmp(a->pos[0], "eval")) {
    fprintf(stderr, "usage: splatsweep gate eval FILE.json\n");
    return EXIT_USAGE;
  }
  struct sw_err err = {0};
  if (sw_gate_eval_file(a->pos[1], stdout, &err)) {
    fprintf(stderr, "splatsweep gate eval: %s\n", err.msg);
    return err.code == SW_EINVAL || err.code == SW_ENOTFOUND ? EXIT_USAGE : 1;
  }
  return 0;
}

static int cmd_keygen(struct args *a) {
  if (a->n_pos != 1) {
    fprintf(stderr, "usage: splatsweep keygen DIR\n");
    return EXIT_USAGE;
  }
  char pub[41], sec[41];
  if (zmq_curve_keypair(pub, sec) != 0) {
    fprintf(stderr, "splatsweep keygen: %s (libzmq built without CURVE?)\n", zmq_strerror(errno));
    return 1;
  }
  struct sw_err err = {0};
  char p[4200], line[64];
  if (sw_fs_mkdir_p(a->pos[0], &err)) {
    fprintf(stderr, "splatsweep keygen: %s\n", err.msg);
    return 1;
  }
  snprintf(p, sizeof p, "%s/secret.key", a->pos[0]);
  if (sw_fs_exists(p)) {
    fprintf(stderr, "splatsweep keygen: %s exists; refusing to overwrite a key\n", p);
    return 1;
  }
  snprintf(line, sizeof line, "%s\n", sec);
  mode_t old = umask(077); /* the secret key is readable by its owner only */
  int rc = sw_fs_write_atomic(p, line, strlen(line), &err);
  umask(old);
  if (!rc) chmod(p, 0600);
  snprintf(p, sizeof p, "%s/public.key", a->pos[0]);
  snprintf(line, sizeof line, "%s\n", pub);
  if (!rc) rc = sw_fs_write_atomic(p, line, strlen(line), &err);
  if (rc) {
    fprintf(stderr, "splatsweep keygen: %s\n", err.msg);
    return 1;
  }
  printf("%s\n", pub);
  return 0;
}

/* Whether a ZeroMQ endpoint stays on this machine: ipc://, inproc://, or tcp:// to a loopback
 * address (127.x.x.x, localhost, [::1]) with an optional port. Anything else, including
 * a wildcard bind, an interface name or the source;destination form, is not. */
static int endpoint_is_local(const char *ep) {
  if (strncmp(ep, "ipc://", 6) == 0 || strncmp(ep, "inproc://", 9) == 0) return 1;
  if (strncmp(ep, "tcp://", 6) != 0 || strchr(ep, ';')) return 0;
  const char *host = ep + 6, *end;
  if (*host == '[') {
    end = strchr(host, ']');
    if (!end || (end[1] != 0 && end[1] != ':')) return 0;
    return end - host == 4 && strncmp(host, "[::1", 4) == 0;
  }
  end = strchr(host, ':');
  size_t n = end ? (size_t)(end - host) : strlen(host);
  if (n == 9 && strncasecmp(host, "localhost", 9) == 0) return 1;
  /* 127.a.b.c: four decimal parts of at most three digits, the first 127. */
  if (n < 9 || strncmp(host, "127.", 4) != 0) return 0;
  int parts = 2, digits = 0; /* "127" and the part being read */
  for (size_t i = 4; i < n; i++) {
    if (host[i] == '.') {
      if (digits == 0) return 0;
      parts++, digits = 0;
    } else if (host[i] >= '0' && host[i] <= '9' && digits < 3) {
      digits++;
    } else {
      return 0;
    }
  }
  return parts == 4 && digits > 0;
}

/* --insecure sends plain text: refuse it on an endpoint that leaves the machine unless
 * --insecure-anywhere says so. Returns 0, or EXIT_USAGE after saying why. */
static int check_insecure(const struct args *a, const char *cmd, const char *ep) {
  if (!a->insecure || a->insecure_anywhere || !ep || endpoint_is_local(ep)) return 0;
  fprintf(stderr,
          "splatsweep %s: --insecure with %s, which is not ipc:// or loopback: refused (use "
          "--keys, or add --insecure-anywhere to send plain text over the network)\n",
          cmd, ep);
  return EXIT_USAGE;
}

static int cmd_coordinator(struct args *a) {
  const char *work = a->bind_work ? a->bind_work : "tcp://*:7710";
  const char *control = a->bind_control ? a->bind_control : "tcp://*:7711";
  int bad = check_insecure(a, "coordinator", work);
  if (!bad) bad = check_insecure(a, "coordinator", control);
  if (bad) return bad;
  install_signals();
  sw_log_set_component("coordinator");
  struct sw_coord_opts o = {.bind_work = a->bind_work,
                            .bind_control = a->bind_control,
                            .db_path = a->db,
                            .keys_dir = a->keys,
                            .insecure = a->insecure,
                            .heartbeat_ms = (int)a->heartbeat_ms,
                            .liveness = (int)a->liveness,
                            .lease_ttl_ms = a->lease_ttl_ms,
                            .max_attempts = (int)a->max_attempts,
                            .stop = &stop_flag,
                            .on_status = a->http ? sw_http_publish : NULL,
                            .on_status_arg = a->http,
                            .dashboard_url = a->dashboard_url,
                            .artifact_url = a->artifact_url};
  void *ctx = zmq_ctx_new();
  sw_coord_t *c = NULL;
  struct sw_err err = {0};
  int rc = sw_coord_new(ctx, &o, &c, &err);
  if (!rc) {
    sw_log_info(
        "serving workers on %s, control on %s%s", a->bind_work ? a->bind_work : "tcp://*:7710",
        a->bind_control ? a->bind_control : "tcp://*:7711", a->insecure ? " (insecure)" : "");
    rc = sw_coord_run(c, &err);
  }
  sw_coord_destroy(&c);
  zmq_ctx_term(ctx);
  if (rc) {
    fprintf(stderr, "splatsweep coordinator: %s\n", err.msg);
    return rc == SW_EINVAL ? EXIT_USAGE : 1;
  }
  return 0;
}

static int cmd_worker(struct args *a) {
  int bad = check_insecure(a, "worker", a->coordinator);
  if (bad) return bad;
  install_signals();
  char comp[200];
  char host[128] = "";
  gethostname(host, sizeof host - 1);
  const char *id = a->id ? a->id : host;
  snprintf(comp, sizeof comp, "worker %s", id);
  sw_log_set_component(comp);
  char *trainer = a->trainer ? strdup(a->trainer) : find_splat_train();
  char wd[4200];
  if (a->work_dir) {
    snprintf(wd, sizeof wd, "%s", a->work_dir);
  } else {
    const char *base = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    if (base)
      snprintf(wd, sizeof wd, "%s/splatsweep/worker-%s", base, id);
    else
      snprintf(wd, sizeof wd, "%s/.cache/splatsweep/worker-%s", home ? home : "/tmp", id);
  }
  struct sw_worker_opts o = {.endpoint = a->coordinator,
                             .worker_id = id,
                             .labels = a->labels,
                             .n_labels = a->n_labels,
                             .keys_dir = a->keys,
                             .insecure = a->insecure,
                             .work_dir = wd,
                             .splat_train = trainer,
                             .heartbeat_ms = (int)a->heartbeat_ms,
                             .keep_runs = a->keep_runs,
                             .host_lock = a->host_lock,
                             .shared_host = a->shared_host,
                             .stop = &stop_flag};
  void *ctx = zmq_ctx_new();
  struct sw_err err = {0};
  int rc = sw_worker_run(ctx, &o, &err);
  zmq_ctx_term(ctx);
  free(trainer);
  if (rc) {
    fprintf(stderr, "splatsweep worker: %s\n", err.msg);
    return rc == SW_EINVAL ? EXIT_USAGE : 1;
  }
  return 0;
}

/* LAB-PRACTICE rule 7: configs are validated before the series starts. For the builtin trainer,
 * every run's resolved config (both arms of a gate, every grid point) goes through the
 * trainer's own key table (pipeline/gs_config.c, compiled in) the way the worker passes it,
 * `--set key=value` in order, then the trainer's cross-key validation. A typo in an arm is then
 * refused here rather than failing every run of the series. Returns 0, or -1 after printing.
 * Without the pipeline in the build (or for exec trainers) there is no table to check against. */
#ifdef SW_HAVE_TRAINER_KEYS
static int check_run_config(const char *path, const char *what, const struct sw_spec_config *c) {
  struct gs_config g;
  gs_config_defaults(&g);
  struct sw_err err = {0};
  for (size_t i = 0; i < c->n; i++) {
    if (gs_config_set(&g, c->items[i].key, c->items[i].text, &err)) {
      fprintf(stderr, "%s: %s: trainer key %s=%s: %s\n", path, what, c->items[i].key,
              c->items[i].text, err.msg);
      return -1;
    }
  }
  if (gs_config_validate(&g, &err)) {
    fprintf(stderr, "%s: %s: trainer config: %s\n", path, what, err.msg);
    return -1;
  }
  return 0;
}
#endif

static int check_trainer_keys(const char *path, const struct sw_spec *s) {
#ifdef SW_HAVE_TRAINER_KEYS
  if (s->trainer.kind != SW_TRAINER_BUILTIN) return 0;
  struct sw_err err = {0};
  struct sw_spec_config c;
  int bad = 0;
  if (s->kind == SW_SPEC_GATE) {
    const char *arms[] = {"off", "on"};
    for (int a = 0; a < 2 && !bad; a++) {
      char what[32];
      snprintf(what, sizeof what, "arm '%s'", arms[a]);
      if (sw_spec_resolve_arm(s, arms[a], &c, &err)) {
        fprintf(stderr, "%s: %s\n", path, err.msg);
        return -1;
      }
      bad = check_run_config(path, what, &c);
      sw_spec_config_clear(&c);
    }
    return bad ? -1 : 0;
  }
  struct sw_spec_point *pts = NULL;
  size_t n = 0;
  if (sw_spec_grid_expand(s, &pts, &n, &err)) {
    fprintf(stderr, "%s: %s\n", path, err.msg);
    return -1;
  }
  for (size_t i = 0; i < n && !bad; i++) {
    char what[300];
    snprintf(what, sizeof what, "grid point '%s'", pts[i].label);
    if (sw_spec_resolve_point(s, &pts[i], &c, &err)) {
      fprintf(stderr, "%s: %s\n", path, err.msg);
      bad = 1;
      break;
    }
    bad = check_run_config(path, what, &c);
    sw_spec_config_clear(&c);
  }
  sw_spec_points_free(&pts, n);
  return bad ? -1 : 0;
#else
  (void)path;
  (void)s;
  return 0;
#endif
}

/* Validates the spec at path and reads its text into *yaml_out (caller frees). A bad spec is
 * checked here, before anything leaves this process or reaches a store, and reported with its
 * file:line:column. *builtin (may be NULL) is set to 1 when the spec runs the builtin trainer.
 * Returns 0, or -1 after printing the error. */
static int read_checked_spec(const char *cmd, const char *path, char **yaml_out, int *builtin) {
  struct sw_err err = {0};
  struct sw_spec *spec = NULL;
  *yaml_out = NULL;
  if (sw_spec_load_file(path, &spec, &err)) {
    fprintf(stderr, "%s\n", err.msg);
    return -1;
  }
  if (builtin) *builtin = spec->trainer.kind == SW_TRAINER_BUILTIN;
  int keys_bad = check_trainer_keys(path, spec);
  sw_spec_destroy(&spec);
  if (keys_bad) return -1;
  if (sw_fs_read_all(path, yaml_out, NULL, &err)) {
    fprintf(stderr, "splatsweep %s: %s\n", cmd, err.msg);
    return -1;
  }
  return 0;
}

static int cmd_submit(struct args *a) {
  if (a->n_pos != 1) {
    fprintf(stderr, "usage: splatsweep submit SPEC [--coordinator EP]\n");
    return EXIT_USAGE;
  }
  struct sw_err err = {0};
  char *yaml = NULL;
  if (read_checked_spec("submit", a->pos[0], &yaml, NULL)) return EXIT_USAGE;
  const char *ep = a->coordinator ? a->coordinator : DEFAULT_CONTROL;
  struct client cl = {0};
  struct sw_msg req, rep;
  memset(&rep, 0, sizeof rep);
  sw_msg_init(&req, SW_MSG_SUBMIT_REQ);
  const char *base = strrchr(a->pos[0], '/');
  snprintf(req.u.submit_req.file_name, sizeof req.u.submit_req.file_name, "%s",
           base ? base + 1 : a->pos[0]);
  req.u.submit_req.spec_yaml = yaml;
  int rc = client_open(&cl, ep, a->keys, &err);
  if (!rc) rc = client_call(&cl, &req, &rep, (int)a->timeout_ms, ep, &err);
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
    code = EXIT_USAGE;
  } else {
    printf("%" PRIu64 "\n", rep.u.submit_rep.sweep_id);
  }
  sw_msg_clear(&rep);
  client_close(&cl);
  return code;
}

static int write_out(const char *path, const char *text) {
  if (!path) {
    fputs(text, stdout);
    size_t n = strlen(text);
    if (n && text[n - 1] != '\n') fputc('\n', stdout);
    return 0;
  }
  struct sw_err err = {0};
  if (sw_fs_write_atomic(path, text, strlen(text), &err)) {
    fprintf(stderr, "splatsweep: %s\n", err.msg);
    return 1;
  }
  return 0;
}

static int cmd_status(struct args *a) {
  int64_t sweep = 0;
  if (a->n_pos > 1 || (a->n_pos == 1 && parse_i64(a->pos[0], &sweep))) {
    fprintf(stderr, "usage: splatsweep status [SWEEP] [--coordinator EP] [--format text|json] "
                    "[--workers-from N] [--workers-shown N]\n");
    return EXIT_USAGE;
  }
  enum sw_msg_format fmt = SW_FMT_TEXT;
  if (a->format && parse_format(a->format, &fmt)) return EXIT_USAGE;
  const char *ep = a->coordinator ? a->coordinator : DEFAULT_CONTROL;
  struct client cl = {0};
  struct sw_msg req, rep;
  memset(&rep, 0, sizeof rep);
  sw_msg_init(&req, SW_MSG_STATUS_REQ);
  req.u.status_req.sweep_id = (uint64_t)sweep;
  req.u.status_req.format = fmt;
  req.u.status_req.workers_offset = (uint64_t)a->workers_from;
  req.u.status_req.workers_limit = (uint32_t)a->workers_shown;
  struct sw_err err = {0};
  int rc = client_open(&cl, ep, a->keys, &err);
  if (!rc) rc = client_call(&cl, &req, &rep, (int)a->timeout_ms, ep, &err);
  int code = 0;
  if (rc || rep.type != SW_MSG_STATUS_REP) {
    fprintf(stderr, "splatsweep status: %s\n", rc ? err.msg : "unexpected reply");
    code = 1;
  } else {
    code = write_out(a->output, rep.u.status_rep.body ? rep.u.status_rep.body : "");
  }
  sw_msg_clear(&rep);
  client_close(&cl);
  return code;
}

static int cmd_report(struct args *a) {
  int64_t sweep = 0;
  if (a->n_pos > 1 || (a->n_pos == 1 && parse_i64(a->pos[0], &sweep))) {
    fprintf(stderr, "usage: splatsweep report [SWEEP] [--db PATH | --coordinator EP] "
                    "[--format text|md|json|html] [-o FILE]\n");
    return EXIT_USAGE;
  }
  enum sw_msg_format fmt = SW_FMT_TEXT;
  if (a->format && parse_format(a->format, &fmt)) return EXIT_USAGE;
  struct sw_err err = {0};
  char *text = NULL;
  int rc;
  if (a->coordinator) {
    struct client cl = {0};
    struct sw_msg req, rep;
    memset(&rep, 0, sizeof rep);
    sw_msg_init(&req, SW_MSG_REPORT_REQ);
    req.u.report_req.sweep_id = (uint64_t)sweep;
    req.u.report_req.format = fmt;
    rc = client_open(&cl, a->coordinator, a->keys, &err);
    if (!rc) rc = client_call(&cl, &req, &rep, (int)a->timeout_ms, a->coordinator, &err);
    if (!rc && rep.type == SW_MSG_REPORT_REP && rep.u.report_rep.body)
      text = strdup(rep.u.report_rep.body);
    else if (!rc)
      rc = sw_err_set(&err, SW_EPROTO, "unexpected reply");
    sw_msg_clear(&rep);
    client_close(&cl);
  } else {
    const char *db = a->db ? a->db : "results/splatsweep.db";
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
  int code = write_out(a->output, text ? text : "");
  free(text);
  return code;
}

/* watch: the status JSON through the same client path as `status --format json`. */
struct watch_ctx {
  struct client cl;
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
  int rc = client_call(&w->cl, &req, &rep, w->timeout_ms, w->ep, err);
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

static int cmd_watch(struct args *a) {
  int64_t sweep = 0;
  if (a->n_pos > 1 || (a->n_pos == 1 && (parse_i64(a->pos[0], &sweep) || sweep == 0))) {
    fprintf(stderr, "usage: splatsweep watch [SWEEP] [--coordinator EP] [--interval-ms N]\n");
    return EXIT_USAGE;
  }
  install_signals();
  struct watch_ctx w = {.ep = a->coordinator ? a->coordinator : DEFAULT_CONTROL,
                        .timeout_ms = (int)a->timeout_ms};
  const char *term = getenv("TERM");
  struct sw_watch_opts o = {.sweep_id = sweep,
                            .interval_ms = (int)a->interval_ms,
                            .tty = isatty(STDOUT_FILENO) && !(term && !strcmp(term, "dumb")),
                            .stop = &stop_flag};
  struct winsize ws;
  if (o.tty && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) o.width = ws.ws_col;
  struct sw_err err = {0};
  int code = SW_WATCH_EXIT_FAILED;
  if (client_open(&w.cl, w.ep, a->keys, &err) == 0)
    code = sw_watch_run(&o, watch_fetch, &w, stdout, &err);
  client_close(&w.cl);
  if (err.code) {
    fprintf(stderr, "splatsweep watch: %s\n", err.msg);
    if (err.code == SW_ENOTFOUND) code = 1;
  }
  return code;
}

static int cmd_cancel(struct args *a) {
  int64_t sweep = 0;
  if (a->n_pos != 1 || parse_i64(a->pos[0], &sweep) || sweep == 0) {
    fprintf(stderr, "usage: splatsweep cancel SWEEP [--coordinator EP]\n");
    return EXIT_USAGE;
  }
  const char *ep = a->coordinator ? a->coordinator : DEFAULT_CONTROL;
  struct client cl = {0};
  struct sw_msg req, rep;
  memset(&rep, 0, sizeof rep);
  sw_msg_init(&req, SW_MSG_CANCEL_REQ);
  req.u.cancel_req.sweep_id = (uint64_t)sweep;
  struct sw_err err = {0};
  int rc = client_open(&cl, ep, a->keys, &err);
  if (!rc) rc = client_call(&cl, &req, &rep, (int)a->timeout_ms, ep, &err);
  int code = 0;
  if (rc || rep.type != SW_MSG_CANCEL_REP) {
    fprintf(stderr, "splatsweep cancel: %s\n", rc ? err.msg : "unexpected reply");
    code = 1;
  } else {
    printf("sweep %" PRIu64 " cancelled (%u active lease(s) stopped)\n", rep.u.cancel_rep.sweep_id,
           rep.u.cancel_rep.runs_cancelled);
  }
  sw_msg_clear(&rep);
  client_close(&cl);
  return code;
}

/* ---- local mode ---------------------------------------------------------------------------- */

static pid_t spawn_worker(const char *self, const char *ep, int k, const char *work_root,
                          const struct args *a) {
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

static int cmd_local(struct args *a) {
  if (a->n_pos != 1) {
    fprintf(stderr, "usage: splatsweep local SPEC [--workers N] [--db PATH]\n");
    return EXIT_USAGE;
  }
  struct sw_err err = {0};
  char *yaml = NULL;
  int builtin = 0;
  if (read_checked_spec("local", a->pos[0], &yaml, &builtin)) return EXIT_USAGE;
  /* Local workers offer the builtin runner only with splat-train at hand; without it the
   * sweep would wait for a capable worker forever. */
  char *trainer = builtin ? find_splat_train() : NULL;
  if (builtin && !trainer) {
    fprintf(stderr,
            "splatsweep local: %s uses the builtin trainer, but splat-train is neither "
            "beside splatsweep nor on PATH (build the splat-train target)\n",
            a->pos[0]);
    free(yaml);
    return 1;
  }
  free(trainer);
  install_signals();
  sw_log_set_component("local");
  int n = a->workers > 0 ? (int)a->workers : 1;
  if (n > 256) {
    fprintf(stderr, "splatsweep local: --workers %d: at most 256\n", n);
    free(yaml);
    return EXIT_USAGE;
  }
  const char *db = a->db ? a->db : "results/splatsweep.db";
  char self[PATH_MAX], work_ep[128], ctl_ep[128], work_root[4200];
  if (self_path(self, sizeof self)) {
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
  struct sw_coord_opts o = {.bind_work = work_ep,
                            .bind_control = ctl_ep,
                            .db_path = a->db,
                            .insecure = 1,
                            .heartbeat_ms = (int)a->heartbeat_ms,
                            .liveness = (int)a->liveness,
                            .lease_ttl_ms = a->lease_ttl_ms,
                            .max_attempts = (int)a->max_attempts,
                            .stop = &stop_flag,
                            .on_status = a->http ? sw_http_publish : NULL,
                            .on_status_arg = a->http,
                            .dashboard_url = a->dashboard_url,
                            .artifact_url = a->artifact_url};
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
    return rc == SW_EINVAL ? EXIT_USAGE : 1;
  }
  fprintf(stderr,
          "splatsweep local: sweep %" PRId64 " with %d worker(s); status: splatsweep "
          "status --coordinator %s\n",
          sweep, n, ctl_ep);
  pid_t *pids = calloc((size_t)n, sizeof *pids);
  for (int k = 0; k < n && pids; k++) pids[k] = spawn_worker(self, work_ep, k + 1, work_root, a);
  int finished = 0;
  while (!rc && !stop_flag && pids) {
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
  write_out(NULL, text ? text : "");
  free(text);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return EXIT_USAGE;
  }
  const char *cmd = argv[1];
  if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
    usage(stdout);
    return 0;
  }
  if (!strcmp(cmd, "check-result")) return cmd_check_result(argc - 2, argv + 2);
  /* pareto, audit and the dashboard live in sw_analysis (sw_pareto.h, sw_audit.h, sw_http.h). */
  if (!strcmp(cmd, "pareto")) return sw_pareto_cli(argc - 1, argv + 1);
  if (!strcmp(cmd, "audit")) return sw_audit_cli(argc - 1, argv + 1);
  sw_http_t *http = NULL;
  sw_artifact_t *store_srv = NULL;
  const char *artifact_url = NULL;
  if (!strcmp(cmd, "coordinator") || !strcmp(cmd, "local")) {
    struct sw_err herr = {0};
    if (sw_http_from_args(&argc, argv, "results/splatsweep.db", &http, &herr) ||
        sw_artifact_from_args(&argc, argv, "results/splatsweep.db", &store_srv, &artifact_url,
                              &herr)) {
      fprintf(stderr, "splatsweep %s: %s\n", cmd, herr.msg);
      sw_http_stop(&http);
      return herr.code == SW_EINVAL ? EXIT_USAGE : 1;
    }
  }
  struct args a;
  if (parse_args(argc - 1, argv + 1, &a)) {
    sw_artifact_stop(&store_srv);
    sw_http_stop(&http);
    free(a.labels);
    return EXIT_USAGE;
  }
  a.artifact_url = artifact_url;
  /* Webhooks link to the dashboard: by default this host's name and the --http port. */
  char dash[320];
  if (http && !a.dashboard_url) {
    char host[256] = "localhost";
    gethostname(host, sizeof host - 1);
    host[sizeof host - 1] = '\0';
    snprintf(dash, sizeof dash, "http://%s:%d", host, sw_http_port(http));
    a.dashboard_url = dash;
  }
  int rc;
  a.http = http;
  if (!strcmp(cmd, "check"))
    rc = cmd_check(&a);
  else if (!strcmp(cmd, "gate"))
    rc = cmd_gate(&a);
  else if (!strcmp(cmd, "keygen"))
    rc = cmd_keygen(&a);
  else if (!strcmp(cmd, "coordinator"))
    rc = cmd_coordinator(&a);
  else if (!strcmp(cmd, "worker"))
    rc = cmd_worker(&a);
  else if (!strcmp(cmd, "submit"))
    rc = cmd_submit(&a);
  else if (!strcmp(cmd, "status"))
    rc = cmd_status(&a);
  else if (!strcmp(cmd, "report"))
    rc = cmd_report(&a);
  else if (!strcmp(cmd, "cancel"))
    rc = cmd_cancel(&a);
  else if (!strcmp(cmd, "watch"))
    rc = cmd_watch(&a);
  else if (!strcmp(cmd, "local"))
    rc = cmd_local(&a);
  else {
    fprintf(stderr, "splatsweep: unknown command '%s'\n", cmd);
    usage(stderr);
    rc = EXIT_USAGE;
  }
  sw_artifact_stop(&store_srv);
  sw_http_stop(&http);
  free(a.labels);
  return rc;
}
