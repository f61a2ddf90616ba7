/* sw_cmd_args.c: what every `splatsweep` command shares (sw_cmd.h): the one option table,
 * the stop flag and its signals, small parsers and the output helper. */
#include "sw_cmd.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sw_fs.h"
#include "sw_log.h"

volatile sig_atomic_t sw_cmd_stop;

static void on_signal(int sig) {
  (void)sig;
  sw_cmd_stop = 1;
}

void sw_cmd_install_signals(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  signal(SIGPIPE, SIG_IGN);
}

/* This executable's path (for splat-train beside it and for spawning workers); 0 or -1. */
int sw_cmd_self_path(char *buf, size_t cap) { return sw_fs_self_exe(buf, cap, NULL) ? -1 : 0; }

/* splat-train next to splatsweep, else on PATH; NULL when neither exists. Caller frees. */
char *sw_cmd_find_splat_train(void) {
  char self[PATH_MAX];
  if (sw_cmd_self_path(self, sizeof self) == 0) {
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

int sw_cmd_parse_i64(const char *s, int64_t *out) {
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (errno || end == s || *end || v < 0) return -1;
  *out = v;
  return 0;
}

int sw_cmd_parse_format(const char *s, enum sw_msg_format *out) {
  if (sw_msg_format_parse(s, out)) {
    fprintf(stderr, "splatsweep: unknown format '%s' (text, md, json, html)\n", s);
    return -1;
  }
  return 0;
}

/* ---- the option table -------------------------------------------------------------------- */

/* The addresses given to people and workers (--dashboard-url, --artifacts-url) are web URLs. */
static int is_web_url(const char *s) {
  return strncmp(s, "http://", 7) == 0 || strncmp(s, "https://", 8) == 0;
}

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
  OPT_DASHBOARD_URL,
  OPT_HTTP,
  OPT_HTTP_BIND,
  OPT_ARTIFACTS,
  OPT_ARTIFACTS_BIND,
  OPT_ARTIFACTS_URL
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
    {"http", required_argument, 0, OPT_HTTP},
    {"http-bind", required_argument, 0, OPT_HTTP_BIND},
    {"artifacts", required_argument, 0, OPT_ARTIFACTS},
    {"artifacts-bind", required_argument, 0, OPT_ARTIFACTS_BIND},
    {"artifacts-url", required_argument, 0, OPT_ARTIFACTS_URL},
    {"output", required_argument, 0, 'o'},
    {"help", no_argument, 0, 'h'},
    {0, 0, 0, 0}};

int sw_cmd_parse_args(int argc, char **argv, struct sw_cmd_args *a) {
  memset(a, 0, sizeof *a);
  a->timeout_ms = 10000;
  a->http_port = a->artifacts_port = -1;
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
      if (sw_cmd_parse_i64(optarg, &v) || v > INT32_MAX) {
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
      if (sw_cmd_parse_i64(optarg, &v) || v < 100 || v > 3600000) {
        fprintf(stderr, "splatsweep: --interval-ms: expected 100 to 3600000, got '%s'\n", optarg);
        return -1;
      }
      a->interval_ms = v;
      break;
    case OPT_WORKERS_FROM:
    case OPT_WORKERS_SHOWN:
      if (sw_cmd_parse_i64(optarg, &v) || v > INT32_MAX) {
        fprintf(stderr, "splatsweep: --%s: expected a non-negative integer, got '%s'\n",
                c == OPT_WORKERS_FROM ? "workers-from" : "workers-shown", optarg);
        return -1;
      }
      *(c == OPT_WORKERS_FROM ? &a->workers_from : &a->workers_shown) = v;
      break;
    case OPT_DB: a->db = optarg; break;
    case OPT_DASHBOARD_URL:
      if (!is_web_url(optarg)) {
        fprintf(stderr, "splatsweep: --dashboard-url %s: expected an http:// or https:// URL\n",
                optarg);
        return -1;
      }
      a->dashboard_url = optarg;
      break;
    case OPT_HTTP:
    case OPT_ARTIFACTS:
      if (sw_cmd_parse_i64(optarg, &v) || v > 65535) {
        fprintf(stderr, "splatsweep: --%s %s: expected a port number (default %d)\n",
                c == OPT_HTTP ? "http" : "artifacts", optarg,
                c == OPT_HTTP ? SW_HTTP_DEFAULT_PORT : SW_ARTIFACT_DEFAULT_PORT);
        return -1;
      }
      *(c == OPT_HTTP ? &a->http_port : &a->artifacts_port) = v;
      break;
    case OPT_HTTP_BIND: a->http_bind = optarg; break;
    case OPT_ARTIFACTS_BIND: a->artifacts_bind = optarg; break;
    case OPT_ARTIFACTS_URL:
      if (!is_web_url(optarg)) {
        fprintf(stderr, "splatsweep: --artifacts-url %s: expected an http:// or https:// URL\n",
                optarg);
        return -1;
      }
      if (strlen(optarg) > SW_MSG_URL_MAX) {
        fprintf(stderr, "splatsweep: --artifacts-url: longer than %d bytes\n", SW_MSG_URL_MAX);
        return -1;
      }
      a->artifacts_url = optarg;
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
    case 'h': sw_cmd_usage(stdout); exit(0);
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

int sw_cmd_write_out(const char *path, const char *text) {
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
