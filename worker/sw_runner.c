/* sw_runner.c: fork/exec of the trainer, progress parsing, stop escalation, result reading. */
#include "sw_runner.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sw_fs.h"

#define LINE_MAX_BYTES 65536

struct sw_runner {
  pid_t pid; /* 0 once reaped */
  pid_t pgid;
  int out_fd; /* stdout pipe, -1 at EOF */
  char *line; /* partial stdout line */
  size_t line_len;
  int64_t start_ms, end_ms, stop_ms, timeout_ms, grace_ms;
  int stopping, killed, finished, status;
  char *out_dir, *result_path, *log_path;
  json_t *map;
};

json_t *sw_json_pointer(json_t *root, const char *pointer) {
  if (!root || !pointer) return NULL;
  if (!*pointer) return root;
  if (*pointer != '/') return NULL;
  json_t *cur = root;
  const char *p = pointer;
  char tok[512];
  while (*p == '/' && cur) {
    p++;
    size_t n = 0;
    while (*p && *p != '/') {
      char c = *p++;
      if (c == '~') {
        if (*p == '0')
          c = '~';
        else if (*p == '1')
          c = '/';
        else
          return NULL;
        p++;
      }
      if (n + 1 >= sizeof tok) return NULL;
      tok[n++] = c;
    }
    tok[n] = '\0';
    if (json_is_object(cur)) {
      cur = json_object_get(cur, tok);
    } else if (json_is_array(cur)) {
      char *end;
      if (!n || (n > 1 && tok[0] == '0')) return NULL;
      unsigned long idx = strtoul(tok, &end, 10);
      if (*end) return NULL;
      cur = json_array_get(cur, idx);
    } else {
      return NULL;
    }
  }
  return cur;
}

/* A config value as the text after `key=`: strings raw, numbers and booleans as JSON writes them.
 */
static char *value_text(json_t *v) {
  if (json_is_string(v)) return strdup(json_string_value(v));
  if (json_is_true(v)) return strdup("true");
  if (json_is_false(v)) return strdup("false");
  if (json_is_null(v)) return strdup("");
  return json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_REAL_PRECISION(15));
}

/* Replaces every {scene} {out} {config} in s. Caller frees. */
static char *expand(const char *s, const char *scene, const char *out, const char *config) {
  size_t cap = strlen(s) + 1;
  const char *names[3] = {"{scene}", "{out}", "{config}"};
  const char *vals[3] = {scene, out, config};
  for (int i = 0; i < 3; i++) cap += strlen(vals[i]) * 8;
  char *r = malloc(cap + 1);
  if (!r) return NULL;
  size_t n = 0;
  while (*s) {
    int hit = 0;
    for (int i = 0; i < 3; i++) {
      size_t l = strlen(names[i]);
      if (!strncmp(s, names[i], l)) {
        size_t vl = strlen(vals[i]);
        if (n + vl >= cap) {
          free(r);
          return NULL;
        }
        memcpy(r + n, vals[i], vl);
        n += vl;
        s += l;
        hit = 1;
        break;
      }
    }
    if (!hit) {
      if (n + 1 >= cap) {
        free(r);
        return NULL;
      }
      r[n++] = *s++;
    }
  }
  r[n] = '\0';
  return r;
}

static int argv_push(char ***argv, size_t *n, size_t *cap, char *s) {
  if (!s) return -1;
  if (*n + 2 > *cap) {
    size_t nc = *cap ? *cap * 2 : 16;
    char **na = realloc(*argv, nc * sizeof *na);
    if (!na) {
      free(s);
      return -1;
    }
    *argv = na;
    *cap = nc;
  }
  (*argv)[(*n)++] = s;
  (*argv)[*n] = NULL;
  return 0;
}

static void argv_free(char **argv, size_t n) {
  for (size_t i = 0; i < n; i++) free(argv[i]);
  free(argv);
}

/* Writes the resolved config as a YAML mapping; JSON scalars are valid YAML flow scalars. */
static int write_config(const char *path, json_t *cfg, struct sw_err *err) {
  size_t cap = 4096, n = 0;
  char *buf = malloc(cap);
  if (!buf) return sw_err_set(err, SW_ENOMEM, "runner: out of memory");
  buf[0] = '\0';
  const char *key;
  json_t *v;
  json_object_foreach(cfg, key, v) {
    json_t *ks = json_string(key);
    char *kt = json_dumps(ks, JSON_ENCODE_ANY);
    char *vt = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_REAL_PRECISION(15));
    json_decref(ks);
    if (!kt || !vt) {
      free(kt);
      free(vt);
      free(buf);
      return sw_err_set(err, SW_ENOMEM, "runner: out of memory");
    }
    size_t need = strlen(kt) + strlen(vt) + 4;
    if (n + need + 1 > cap) {
      cap = (n + need + 1) * 2;
      char *nb = realloc(buf, cap);
      if (!nb) {
        free(kt);
        free(vt);
        free(buf);
        return sw_err_set(err, SW_ENOMEM, "runner: out of memory");
      }
      buf = nb;
    }
    n += (size_t)snprintf(buf + n, cap - n, "%s: %s\n", kt, vt);
    free(kt);
    free(vt);
  }
  int rc = sw_fs_write_atomic(path, buf, n, err);
  free(buf);
  return rc;
}

/* Builds argv from the trainer spec. Returns 0 or SW_EINVAL. */
static int build_argv(const struct sw_runner_opts *o, json_t *trainer, json_t *cfg,
                      const char *config_path, char ***argv_out, size_t *argc_out,
                      json_t **exec_out, struct sw_err *err) {
  char **argv = NULL;
  size_t n = 0, cap = 0;
  json_t *exec = json_object_get(trainer, "exec");
  json_t *tmpl = NULL;
  static const char *builtin[] = {"train",    "--scene",  "{scene}", "--out",     "{out}",
                                  "--config", "{config}", "{set}",   "--progress"};
  *exec_out = exec;
  if (json_is_object(exec)) {
    tmpl = json_object_get(exec, "command");
    if (!json_is_array(tmpl) || json_array_size(tmpl) == 0)
      return sw_err_set(err, SW_EINVAL, "trainer.exec.command: expected a non-empty list");
  } else if (json_object_get(trainer, "builtin")) {
    if (!o->splat_train || !*o->splat_train)
      return sw_err_set(err, SW_EINVAL,
                        "builtin trainer: splat-train not found beside "
                        "splatsweep or on PATH");
    if (argv_push(&argv, &n, &cap, strdup(o->splat_train))) goto oom;
  } else {
    return sw_err_set(err, SW_EINVAL, "trainer: expected 'builtin' or 'exec'");
  }
  size_t count = tmpl ? json_array_size(tmpl) : sizeof builtin / sizeof builtin[0];
  for (size_t i = 0; i < count; i++) {
    const char *a;
    if (tmpl) {
      json_t *e = json_array_get(tmpl, i);
      if (!json_is_string(e)) {
        argv_free(argv, n);
        return sw_err_set(err, SW_EINVAL, "trainer.exec.command[%zu]: expected a string", i);
      }
      a = json_string_value(e);
    } else {
      a = builtin[i];
    }
    if (!strcmp(a, "{set}")) {
      const char *key;
      json_t *v;
      json_object_foreach(cfg, key, v) {
        char *vt = value_text(v);
        if (!vt) goto oom;
        size_t l = strlen(key) + strlen(vt) + 2;
        char *kv = malloc(l);
        if (kv) snprintf(kv, l, "%s=%s", key, vt);
        free(vt);
        if (argv_push(&argv, &n, &cap, strdup("--set")) || argv_push(&argv, &n, &cap, kv)) goto oom;
      }
    } else if (argv_push(&argv, &n, &cap, expand(a, o->scene_dir, o->out_dir, config_path))) {
      goto oom;
    }
  }
  *argv_out = argv;
  *argc_out = n;
  return 0;
oom:
  argv_free(argv, n);
  return sw_err_set(err, SW_ENOMEM, "runner: out of memory building the command line");
}

int sw_runner_start(const struct sw_runner_opts *o, int64_t now_ms, sw_runner_t **out,
                    struct sw_err *err) {
  *out = NULL;
  json_error_t je;
  json_t *trainer = json_loads(o->trainer_json ? o->trainer_json : "", 0, &je);
  if (!json_is_object(trainer)) {
    json_decref(trainer);
    return sw_err_set(err, SW_EINVAL, "trainer spec is not a JSON object: %s", je.text);
  }
  json_t *cfg = json_loads(o->config_json ? o->config_json : "{}", JSON_PRESERVE_ORDER, &je);
  if (!json_is_object(cfg)) {
    json_decref(trainer);
    json_decref(cfg);
    return sw_err_set(err, SW_EINVAL, "run config is not a JSON object: %s", je.text);
  }
  int rc = sw_fs_mkdir_p(o->out_dir, err);
  char config_path[4096], log_path[4096];
  snprintf(config_path, sizeof config_path, "%s/config.yaml", o->out_dir);
  snprintf(log_path, sizeof log_path, "%s/trainer.log", o->out_dir);
  if (!rc) rc = write_config(config_path, cfg, err);
  char **argv = NULL;
  size_t argc = 0;
  json_t *exec = NULL;
  if (!rc) rc = build_argv(o, trainer, cfg, config_path, &argv, &argc, &exec, err);
  json_decref(cfg);
  if (rc) {
    json_decref(trainer);
    return rc;
  }
  sw_runner_t *r = calloc(1, sizeof *r);
  if (!r) {
    argv_free(argv, argc);
    json_decref(trainer);
    return sw_err_set(err, SW_ENOMEM, "runner: out of memory");
  }
  r->out_fd = -1;
  r->grace_ms = o->grace_ms > 0 ? o->grace_ms : 5000;
  r->start_ms = now_ms;
  r->out_dir = strdup(o->out_dir);
  r->log_path = strdup(log_path);
  const char *res_tmpl = "{out}/result.json";
  if (exec) {
    json_t *res = json_object_get(exec, "result");
    if (json_is_string(res)) res_tmpl = json_string_value(res);
    json_t *t = json_object_get(exec, "timeout_s");
    /* The spec loader bounds timeout_s, but this JSON arrived over the network: clamp it to a
     * year before the conversion, which is undefined for values out of int64 range. */
    if (json_is_number(t) && json_number_value(t) > 0) {
      double secs = json_number_value(t);
      r->timeout_ms = (int64_t)((secs < 3.15e7 ? secs : 3.15e7) * 1000.0);
    }
    json_t *map = json_object_get(exec, "map");
    if (json_is_object(map) && json_object_size(map) > 0) r->map = json_incref(map);
  }
  r->result_path = expand(res_tmpl, o->scene_dir, o->out_dir, config_path);

  int pfd[2];
  if (pipe(pfd) != 0) {
    rc = sw_err_set(err, SW_ECHILD, "runner: pipe: %s", strerror(errno));
    goto fail;
  }
  int logfd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (logfd < 0) {
    close(pfd[0]);
    close(pfd[1]);
    rc = sw_err_set(err, SW_EIO, "runner: %s: %s", log_path, strerror(errno));
    goto fail;
  }
  json_t *env = exec ? json_object_get(exec, "env") : NULL;
  pid_t pid = fork();
  if (pid < 0) {
    close(pfd[0]);
    close(pfd[1]);
    close(logfd);
    rc = sw_err_set(err, SW_ECHILD, "runner: fork: %s", strerror(errno));
    goto fail;
  }
  if (pid == 0) {
    /* Child: own process group, so SIGTERM/SIGKILL reach everything the trainer starts. */
    setpgid(0, 0);
    signal(SIGPIPE, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGINT, SIG_DFL);
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, 0);
    dup2(pfd[1], 1);
    dup2(logfd, 2);
    close(pfd[0]);
    if (json_is_object(env)) {
      const char *k;
      json_t *v;
      json_object_foreach(env, k, v) {
        char *val = value_text(v); /* numbers and booleans as their text, like {set} */
        if (val) setenv(k, val, 1);
      }
    }
    execvp(argv[0], argv);
    fprintf(stderr, "cannot execute %s: %s\n", argv[0], strerror(errno));
    _exit(127);
  }
  setpgid(pid, pid); /* also in the parent, so a stop right after fork reaches the group */
  close(pfd[1]);
  close(logfd);
  fcntl(pfd[0], F_SETFL, fcntl(pfd[0], F_GETFL) | O_NONBLOCK);
  fcntl(pfd[0], F_SETFD, FD_CLOEXEC);
  r->pid = pid;
  r->pgid = pid;
  r->out_fd = pfd[0];
  argv_free(argv, argc);
  json_decref(trainer);
  *out = r;
  return 0;
fail:
  argv_free(argv, argc);
  json_decref(trainer);
  sw_runner_destroy(&r);
  return rc;
}

void sw_runner_destroy(sw_runner_t **self_p) {
  if (!self_p || !*self_p) return;
  sw_runner_t *r = *self_p;
  if (r->pgid > 0) killpg(r->pgid, SIGKILL);
  if (r->pid > 0) waitpid(r->pid, NULL, 0);
  if (r->out_fd >= 0) close(r->out_fd);
  free(r->line);
  free(r->out_dir);
  free(r->result_path);
  free(r->log_path);
  json_decref(r->map);
  free(r);
  *self_p = NULL;
}

int sw_runner_fd(const sw_runner_t *self) { return self->out_fd; }

pid_t sw_runner_pgid(const sw_runner_t *self) { return self->finished ? 0 : self->pgid; }

static void handle_line(const char *line, void (*cb)(void *, const struct sw_runner_progress *),
                        void *ctx) {
  if (line[0] != '{' || !cb) return;
  json_t *o = json_loads(line, 0, NULL);
  if (!json_is_object(o)) {
    json_decref(o);
    return;
  }
  json_t *it = json_object_get(o, "iter");
  if (json_is_integer(it) && json_integer_value(it) >= 0) {
    struct sw_runner_progress p = {0};
    p.iter = (uint64_t)json_integer_value(it);
    p.train_s = json_number_value(json_object_get(o, "train_s"));
    p.loss = json_number_value(json_object_get(o, "loss"));
    json_t *sp = json_object_get(o, "splats");
    p.splats =
        json_is_integer(sp) && json_integer_value(sp) > 0 ? (uint64_t)json_integer_value(sp) : 0;
    cb(ctx, &p);
  }
  json_decref(o);
}

void sw_runner_read(sw_runner_t *self, void (*cb)(void *ctx, const struct sw_runner_progress *p),
                    void *ctx) {
  if (self->out_fd < 0) return;
  char buf[8192];
  for (;;) {
    ssize_t n = read(self->out_fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return; /* EAGAIN: nothing more now */
    if (n == 0) {
      close(self->out_fd);
      self->out_fd = -1;
      return;
    }
    for (ssize_t i = 0; i < n; i++) {
      if (buf[i] == '\n') {
        if (self->line) {
          self->line[self->line_len] = '\0';
          handle_line(self->line, cb, ctx);
        }
        self->line_len = 0;
        continue;
      }
      /* Lines longer than the bound are not progress lines; keep only their start. */
      if (self->line_len + 1 >= LINE_MAX_BYTES) continue;
      if (!self->line) {
        self->line = malloc(LINE_MAX_BYTES);
        if (!self->line) return;
      }
      self->line[self->line_len++] = buf[i];
    }
  }
}

void sw_runner_stop(sw_runner_t *self, int64_t now_ms) {
  if (self->finished || self->stopping) return;
  self->stopping = 1;
  self->stop_ms = now_ms;
  killpg(self->pgid, SIGTERM);
}

int sw_runner_check(sw_runner_t *self, int64_t now_ms) {
  if (self->finished) return 1;
  int st;
  pid_t w = waitpid(self->pid, &st, WNOHANG);
  if (w == self->pid) {
    self->finished = 1;
    self->status = WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : 1;
    self->end_ms = now_ms;
    self->pid = 0;
    /* Whatever the trainer left behind in its group goes with it. */
    killpg(self->pgid, SIGKILL);
    /* Drain the last progress lines: the pipe may still hold them. */
    return 1;
  }
  if (self->timeout_ms > 0 && !self->stopping && now_ms - self->start_ms > self->timeout_ms)
    sw_runner_stop(self, now_ms);
  if (self->stopping && !self->killed && now_ms - self->stop_ms >= self->grace_ms) {
    self->killed = 1;
    killpg(self->pgid, SIGKILL);
  }
  return 0;
}

/* The last bytes of the trainer's stderr, as one line of context for an error. */
static char *log_tail(const char *path) {
  char *data = NULL;
  size_t len = 0;
  if (sw_fs_read_all(path, &data, &len, NULL)) return strdup("");
  size_t keep = 1024;
  char *start = len > keep ? data + len - keep : data;
  char *r = strdup(start);
  free(data);
  /* One line of plain ASCII: the wire wants valid UTF-8, and a cut through a multi-byte
   * character (or a trainer printing binary) must not make the whole result unsendable. */
  for (unsigned char *p = (unsigned char *)r; p && *p; p++)
    if (*p < 0x20 || *p >= 0x7f) *p = (*p == '\n' || *p == '\r' || *p == '\t') ? ' ' : '?';
  return r;
}

/* Builds a contract-shaped result from a foreign one through the JSON pointers of "map". */
static json_t *apply_map(json_t *foreign, json_t *map, char *why, size_t why_len) {
  json_t *metrics = json_object();
  const char *metric;
  json_t *ptr;
  json_object_foreach(map, metric, ptr) {
    json_t *v = json_is_string(ptr) ? sw_json_pointer(foreign, json_string_value(ptr)) : NULL;
    if (!json_is_number(v)) {
      snprintf(why, why_len, "map.%s: JSON pointer %s does not name a number in the result", metric,
               json_is_string(ptr) ? json_string_value(ptr) : "(not a string)");
      json_decref(metrics);
      return NULL;
    }
    json_object_set_new(metrics, metric, json_real(json_number_value(v)));
  }
  return json_pack("{s:s,s:s,s:o,s:O}", "schema", "splatsweep.result/1", "status", "ok", "metrics",
                   metrics, "foreign", foreign);
}

void sw_runner_outcome(sw_runner_t *self, int *exit_status, double *wall_s, char **result_json,
                       char **error) {
  *exit_status = self->status;
  *wall_s = (double)(self->end_ms - self->start_ms) / 1000.0;
  *result_json = NULL;
  *error = NULL;
  char why[1400] = "";
  if (self->status == 0) {
    json_error_t je;
    json_t *res = json_load_file(self->result_path, 0, &je);
    if (!res) {
      snprintf(why, sizeof why, "%s: %s", self->result_path, je.text);
    } else if (!json_is_object(res)) {
      snprintf(why, sizeof why, "%s: not a JSON object", self->result_path);
    } else {
      json_t *final = res;
      if (self->map) {
        final = apply_map(res, self->map, why, sizeof why);
      } else {
        json_incref(final);
      }
      if (final) {
        *result_json = json_dumps(final, JSON_COMPACT);
        json_decref(final);
      }
    }
    json_decref(res);
  } else {
    char *tail = log_tail(self->log_path);
    const char *what = self->status == 2     ? "bad input"
                       : self->status == 3   ? "device error"
                       : self->status == 4   ? "diverged"
                       : self->status == 143 ? "stopped by SIGTERM"
                       : self->status == 127 ? "cannot execute"
                       : self->status > 128  ? "killed by a signal"
                                             : "failed";
    snprintf(why, sizeof why, "trainer exit %d (%s)%s%s", self->status, what,
             tail && *tail ? ": " : "", tail ? tail : "");
    free(tail);
  }
  if (why[0]) *error = strdup(why);
}
