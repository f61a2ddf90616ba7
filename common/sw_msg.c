/* sw_msg.c: lifecycle of the plain message structs (init, clear, list helpers, names) and the
 * validator that both directions of the codec run: a message is checked field by field against
 * the limits and rules of docs/protocol.md, and the first violation is reported with the field's
 * path ("Assign.runs[1].config_json: not a JSON object"). */
#include "sw_msg.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const type_names[SW_MSG_TYPE_COUNT] = {
    [SW_MSG_NONE] = "None",
    [SW_MSG_HELLO] = "Hello",
    [SW_MSG_WELCOME] = "Welcome",
    [SW_MSG_READY] = "Ready",
    [SW_MSG_ASSIGN] = "Assign",
    [SW_MSG_RUN_STARTED] = "RunStarted",
    [SW_MSG_PROGRESS] = "Progress",
    [SW_MSG_RUN_FINISHED] = "RunFinished",
    [SW_MSG_LEASE_DONE] = "LeaseDone",
    [SW_MSG_ACK] = "Ack",
    [SW_MSG_CANCEL] = "Cancel",
    [SW_MSG_HEARTBEAT] = "Heartbeat",
    [SW_MSG_REJECT] = "Reject",
    [SW_MSG_SUBMIT_REQ] = "SubmitRequest",
    [SW_MSG_SUBMIT_REP] = "SubmitReply",
    [SW_MSG_STATUS_REQ] = "StatusRequest",
    [SW_MSG_STATUS_REP] = "StatusReply",
    [SW_MSG_REPORT_REQ] = "ReportRequest",
    [SW_MSG_REPORT_REP] = "ReportReply",
    [SW_MSG_CANCEL_REQ] = "CancelRequest",
    [SW_MSG_CANCEL_REP] = "CancelReply",
    [SW_MSG_ERROR] = "Error",
};

const char *sw_msg_type_name(enum sw_msg_type type) {
  if ((int)type < 0 || type >= SW_MSG_TYPE_COUNT) return "?";
  return type_names[type];
}

static const char *const gpu_kind_names[SW_GPU_KIND_COUNT] = {"unknown", "discrete", "integrated",
                                                              "cpu", "none"};

const char *sw_gpu_kind_name(enum sw_gpu_kind kind) {
  if ((int)kind < 0 || kind >= SW_GPU_KIND_COUNT) return "unknown";
  return gpu_kind_names[kind];
}

enum sw_gpu_kind sw_gpu_kind_parse(const char *name) {
  for (int i = 0; name && i < SW_GPU_KIND_COUNT; i++)
    if (strcmp(name, gpu_kind_names[i]) == 0) return (enum sw_gpu_kind)i;
  return SW_GPU_UNKNOWN;
}

static const char *const format_names[SW_FMT_COUNT] = {"text", "md", "json", "html"};

const char *sw_msg_format_name(enum sw_msg_format fmt) {
  if ((int)fmt < 0 || fmt >= SW_FMT_COUNT) return "?";
  return format_names[fmt];
}

int sw_msg_format_parse(const char *name, enum sw_msg_format *out) {
  for (int i = 0; name && i < SW_FMT_COUNT; i++) {
    if (strcmp(name, format_names[i]) == 0) {
      *out = (enum sw_msg_format)i;
      return 0;
    }
  }
  return SW_EINVAL;
}

void sw_msg_init(struct sw_msg *msg, enum sw_msg_type type) {
  memset(msg, 0, sizeof *msg);
  msg->protocol = SW_PROTOCOL_VERSION;
  msg->type = type;
}

void sw_msg_clear(struct sw_msg *msg) {
  if (!msg) return;
  switch (msg->type) {
  case SW_MSG_HELLO:
    free(msg->u.hello.fp.extra);
    free(msg->u.hello.labels);
    free(msg->u.hello.capabilities);
    free(msg->u.hello.features);
    break;
  case SW_MSG_ASSIGN:
    for (size_t i = 0; msg->u.assign.runs && i < msg->u.assign.n_runs; i++) {
      free(msg->u.assign.runs[i].config_json);
      free(msg->u.assign.runs[i].trainer_json);
      free(msg->u.assign.runs[i].scene_json);
    }
    free(msg->u.assign.runs);
    break;
  case SW_MSG_RUN_FINISHED:
    free(msg->u.run_finished.result_json);
    free(msg->u.run_finished.error);
    free(msg->u.run_finished.samples);
    free(msg->u.run_finished.pre_samples);
    free(msg->u.run_finished.env_before);
    free(msg->u.run_finished.env_after);
    free(msg->u.run_finished.artifacts);
    break;
  case SW_MSG_CANCEL: free(msg->u.cancel.reason); break;
  case SW_MSG_REJECT: free(msg->u.reject.reason); break;
  case SW_MSG_SUBMIT_REQ: free(msg->u.submit_req.spec_yaml); break;
  case SW_MSG_SUBMIT_REP: free(msg->u.submit_rep.error); break;
  case SW_MSG_STATUS_REP: free(msg->u.status_rep.body); break;
  case SW_MSG_REPORT_REP: free(msg->u.report_rep.body); break;
  case SW_MSG_CANCEL_REQ: free(msg->u.cancel_req.reason); break;
  case SW_MSG_ERROR: free(msg->u.error.message); break;
  default: break;
  }
  memset(msg, 0, sizeof *msg);
}

/* Copies src into a fixed field of capacity cap (including the NUL); refuses truncation. */
static int copy_fixed(char *dst, size_t cap, const char *src) {
  size_t n = strlen(src);
  if (n >= cap) return SW_EINVAL;
  memcpy(dst, src, n + 1);
  return 0;
}

int sw_msg_kv_add(struct sw_msg_kv **list, size_t *n, const char *key, const char *value) {
  if (*n >= SW_MSG_KV_MAX) return SW_EINVAL;
  if (strlen(key) > SW_MSG_KEY_MAX || strlen(value) > SW_MSG_KV_VALUE_MAX) return SW_EINVAL;
  struct sw_msg_kv *grown = realloc(*list, (*n + 1) * sizeof **list);
  if (!grown) return SW_ENOMEM;
  *list = grown;
  struct sw_msg_kv *kv = &grown[*n];
  memset(kv, 0, sizeof *kv);
  copy_fixed(kv->key, sizeof kv->key, key);
  copy_fixed(kv->value, sizeof kv->value, value);
  (*n)++;
  return 0;
}

int sw_msg_name_add(struct sw_msg_name **list, size_t *n, const char *name) {
  if (*n >= SW_MSG_LIST_MAX || strlen(name) > SW_MSG_KEY_MAX) return SW_EINVAL;
  struct sw_msg_name *grown = realloc(*list, (*n + 1) * sizeof **list);
  if (!grown) return SW_ENOMEM;
  *list = grown;
  memset(&grown[*n], 0, sizeof grown[*n]);
  copy_fixed(grown[*n].name, sizeof grown[*n].name, name);
  (*n)++;
  return 0;
}

/* ---- validation ---------------------------------------------------------------------- */

/* Strict UTF-8 (RFC 3629): no overlong forms, no surrogates, nothing above U+10FFFF. Control
 * characters other than tab/newline/CR are refused as well when ctl is set. */
static int utf8_ok(const unsigned char *s, size_t n, int ctl) {
  size_t i = 0;
  while (i < n) {
    unsigned c = s[i];
    if (c < 0x80) {
      if (ctl && (c < 0x20 || c == 0x7f) && c != '\t' && c != '\n' && c != '\r') return 0;
      i++;
      continue;
    }
    size_t len;
    unsigned cp, min;
    if ((c & 0xe0) == 0xc0) {
      len = 2, cp = c & 0x1f, min = 0x80;
    } else if ((c & 0xf0) == 0xe0) {
      len = 3, cp = c & 0x0f, min = 0x800;
    } else if ((c & 0xf8) == 0xf0) {
      len = 4, cp = c & 0x07, min = 0x10000;
    } else {
      return 0;
    }
    if (n - i < len) return 0;
    for (size_t k = 1; k < len; k++) {
      if ((s[i + k] & 0xc0) != 0x80) return 0;
      cp = (cp << 6) | (s[i + k] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
    i += len;
  }
  return 1;
}

/* A fixed field: NUL-terminated within cap, valid UTF-8 without control characters, and
 * non-empty when required. */
static int v_fixed(const char *s, size_t cap, int required, const char *path, const char *field,
                   struct sw_err *err) {
  size_t n = strnlen(s, cap);
  if (n == cap)
    return sw_err_set(err, SW_EPROTO, "%s.%s: longer than %zu bytes", path, field, cap - 1);
  if (required && n == 0) return sw_err_set(err, SW_EPROTO, "%s.%s: empty", path, field);
  if (!utf8_ok((const unsigned char *)s, n, 1))
    return sw_err_set(err, SW_EPROTO, "%s.%s: not UTF-8 text", path, field);
  return 0;
}

/* A heap text field of at most max bytes; NULL allowed unless required. */
static int v_text(const char *s, size_t max, int required, const char *path, const char *field,
                  struct sw_err *err) {
  if (!s) {
    if (required) return sw_err_set(err, SW_EPROTO, "%s.%s: missing", path, field);
    return 0;
  }
  size_t n = strnlen(s, (size_t)max + 1);
  if (n > max) return sw_err_set(err, SW_EPROTO, "%s.%s: longer than %zu bytes", path, field, max);
  if (!utf8_ok((const unsigned char *)s, n, 0))
    return sw_err_set(err, SW_EPROTO, "%s.%s: not UTF-8 text", path, field);
  return 0;
}

/* A JSON text field that must hold one JSON object. */
static int v_json(const char *s, int required, const char *path, const char *field,
                  struct sw_err *err) {
  int rc = v_text(s, SW_MSG_JSON_MAX, required, path, field, err);
  if (rc || !s) return rc;
  json_error_t je;
  json_t *j = json_loads(s, JSON_REJECT_DUPLICATES, &je);
  if (!j)
    return sw_err_set(err, SW_EPROTO, "%s.%s: bad JSON at line %d column %d: %s", path, field,
                      je.line, je.column, je.text);
  int is_obj = json_is_object(j);
  json_decref(j);
  if (!is_obj) return sw_err_set(err, SW_EPROTO, "%s.%s: not a JSON object", path, field);
  return 0;
}

static int v_num(double v, int nonneg, const char *path, const char *field, struct sw_err *err) {
  if (!isfinite(v)) return sw_err_set(err, SW_EPROTO, "%s.%s: not a finite number", path, field);
  if (nonneg && v < 0) return sw_err_set(err, SW_EPROTO, "%s.%s: negative (%g)", path, field, v);
  return 0;
}

static int v_nonzero(uint64_t v, const char *path, const char *field, struct sw_err *err) {
  if (v == 0) return sw_err_set(err, SW_EPROTO, "%s.%s: must be non-zero", path, field);
  return 0;
}

/* A fixed field that must also stay within max bytes (tighter than its array). */
static int v_short(const char *s, size_t cap, size_t max, int required, const char *path,
                   const char *field, struct sw_err *err) {
  int rc = v_fixed(s, cap, required, path, field, err);
  if (!rc && strlen(s) > max)
    rc = sw_err_set(err, SW_EPROTO, "%s.%s: longer than %zu bytes", path, field, max);
  return rc;
}

/* A kv list of at most max entries, keys SW_MSG_KEY_MAX and values SW_MSG_KV_VALUE_MAX. */
static int v_kvs(const struct sw_msg_kv *kv, size_t n, size_t max, const char *path,
                 const char *field, struct sw_err *err) {
  if (n > max)
    return sw_err_set(err, SW_EPROTO, "%s.%s: %zu entries, more than %zu", path, field, n, max);
  if (n && !kv) return sw_err_set(err, SW_EPROTO, "%s.%s: missing list", path, field);
  char sub[96];
  for (size_t i = 0; i < n; i++) {
    snprintf(sub, sizeof sub, "%s[%zu].key", field, i);
    int rc = v_short(kv[i].key, sizeof kv[i].key, SW_MSG_KEY_MAX, 1, path, sub, err);
    snprintf(sub, sizeof sub, "%s[%zu].value", field, i);
    if (!rc) rc = v_short(kv[i].value, sizeof kv[i].value, SW_MSG_KV_VALUE_MAX, 0, path, sub, err);
    if (rc) return rc;
  }
  return 0;
}

static int v_names(const struct sw_msg_name *l, size_t n, const char *path, const char *field,
                   struct sw_err *err) {
  if (n > SW_MSG_LIST_MAX)
    return sw_err_set(err, SW_EPROTO, "%s.%s: %zu entries, more than %d", path, field, n,
                      SW_MSG_LIST_MAX);
  if (n && !l) return sw_err_set(err, SW_EPROTO, "%s.%s: missing list", path, field);
  char sub[96];
  for (size_t i = 0; i < n; i++) {
    snprintf(sub, sizeof sub, "%s[%zu]", field, i);
    int rc = v_short(l[i].name, sizeof l[i].name, SW_MSG_KEY_MAX, 1, path, sub, err);
    if (rc) return rc;
  }
  return 0;
}

static int v_samples(const struct sw_msg_sample *s, size_t n, const char *field,
                     struct sw_err *err) {
  const char *path = "RunFinished";
  if (n > SW_MSG_SAMPLES_MAX)
    return sw_err_set(err, SW_EPROTO, "%s.%s: %zu samples, more than %d", path, field, n,
                      SW_MSG_SAMPLES_MAX);
  if (n && !s) return sw_err_set(err, SW_EPROTO, "%s.%s: missing list", path, field);
  /* The path text is built only for a bad sample: a window can hold many thousands. */
  char sub[96];
  for (size_t i = 0; i < n; i++) {
    const double v[9] = {s[i].load1,
                         s[i].cpu_other,
                         s[i].cpu_total,
                         s[i].cpu_trainer,
                         s[i].cpu_self,
                         s[i].has_gpu ? s[i].gpu_util : 0,
                         s[i].has_gpu ? s[i].gpu_sm_mhz : 0,
                         s[i].has_gpu ? s[i].gpu_temp_c : 0,
                         s[i].has_gpu ? s[i].gpu_power_w : 0};
    static const char *const names[9] = {"load1",       "cpu_other",  "cpu_total",
                                         "cpu_trainer", "cpu_self",   "gpu_util",
                                         "gpu_sm_mhz",  "gpu_temp_c", "gpu_power_w"};
    if (s[i].gpu_foreign < -1) {
      snprintf(sub, sizeof sub, "%s[%zu].gpu_foreign", field, i);
      return sw_err_set(err, SW_EPROTO, "%s.%s: below -1", path, sub);
    }
    for (int k = 0; k < 9; k++) {
      if (isfinite(v[k]) && v[k] >= 0) continue;
      snprintf(sub, sizeof sub, "%s[%zu].%s", field, i, names[k]);
      return v_num(v[k], 1, path, sub, err);
    }
  }
  return 0;
}

static int v_hex64(const char *s, const char *path, const char *field, struct sw_err *err) {
  size_t n = strnlen(s, 65);
  if (n == 0) return 0;
  if (n != 64) return sw_err_set(err, SW_EPROTO, "%s.%s: not 64 hex digits", path, field);
  for (size_t i = 0; i < n; i++)
    if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
      return sw_err_set(err, SW_EPROTO, "%s.%s: not lowercase hex", path, field);
  return 0;
}

static int v_format(enum sw_msg_format f, const char *path, struct sw_err *err) {
  if ((int)f < 0 || f >= SW_FMT_COUNT)
    return sw_err_set(err, SW_EPROTO, "%s.format: unknown format %d", path, (int)f);
  return 0;
}

/* An epoch above SW_MSG_EPOCH_MAX is refused here, once, so that no value a narrower integer
 * would wrap ever reaches the scheduler. */
static int v_epoch(uint64_t epoch, const char *path, struct sw_err *err) {
  if (epoch > SW_MSG_EPOCH_MAX)
    return sw_err_set(err, SW_EPROTO, "%s.epoch: %llu is above the limit %llu", path,
                      (unsigned long long)epoch, (unsigned long long)SW_MSG_EPOCH_MAX);
  return 0;
}

static int v_attempt(uint32_t attempt, const char *path, struct sw_err *err) {
  if (attempt == 0) return sw_err_set(err, SW_EPROTO, "%s.attempt: must be >= 1", path);
  return 0;
}

static int v_hello(const struct sw_msg_hello *h, struct sw_err *err) {
  const char *p = "Hello";
  const struct sw_msg_fingerprint *fp = &h->fp;
  int rc = v_fixed(h->worker_id, sizeof h->worker_id, 1, p, "worker_id", err);
  if (!rc) rc = v_fixed(fp->hostname, sizeof fp->hostname, 0, p, "fingerprint.hostname", err);
  if (!rc) rc = v_fixed(fp->os, sizeof fp->os, 0, p, "fingerprint.os", err);
  if (!rc) rc = v_fixed(fp->arch, sizeof fp->arch, 0, p, "fingerprint.arch", err);
  if (!rc) rc = v_fixed(fp->cpu_model, sizeof fp->cpu_model, 0, p, "fingerprint.cpu_model", err);
  if (!rc) rc = v_fixed(fp->gpu_name, sizeof fp->gpu_name, 0, p, "fingerprint.gpu_name", err);
  if (!rc) rc = v_fixed(fp->gpu_driver, sizeof fp->gpu_driver, 0, p, "fingerprint.gpu_driver", err);
  if (!rc) rc = v_fixed(fp->gpu_api, sizeof fp->gpu_api, 0, p, "fingerprint.gpu_api", err);
  if (!rc && ((int)fp->gpu_kind < 0 || fp->gpu_kind >= SW_GPU_KIND_COUNT))
    rc = sw_err_set(err, SW_EPROTO, "Hello.fingerprint.gpu_kind: unknown kind %d",
                    (int)fp->gpu_kind);
  if (!rc) rc = v_kvs(fp->extra, fp->n_extra, SW_MSG_EXTRA_MAX, p, "fingerprint.extra", err);
  if (!rc) rc = v_kvs(h->labels, h->n_labels, SW_MSG_LABELS_MAX, p, "labels", err);
  if (!rc) rc = v_names(h->capabilities, h->n_capabilities, p, "capabilities", err);
  if (!rc) rc = v_names(h->features, h->n_features, p, "features", err);
  if (!rc) rc = v_hex64(h->trainer_sha256, p, "trainer_sha256", err);
  return rc;
}

static int v_welcome(const struct sw_msg_welcome *w, struct sw_err *err) {
  const char *p = "Welcome";
  int rc = v_fixed(w->session_id, sizeof w->session_id, 1, p, "session_id", err);
  if (!rc) rc = v_nonzero(w->heartbeat_ms, p, "heartbeat_ms", err);
  if (!rc) rc = v_nonzero(w->liveness, p, "liveness", err);
  if (!rc) rc = v_nonzero(w->lease_ttl_ms, p, "lease_ttl_ms", err);
  return rc;
}

int sw_msg_artifact_name_ok(const char *name) {
  size_t n = strnlen(name, SW_MSG_ARTIFACT_NAME_MAX + 1), part = 0;
  int slashes = 0;
  if (n == 0 || n > SW_MSG_ARTIFACT_NAME_MAX) return 0;
  for (size_t i = 0; i <= n; i++) {
    char c = name[i];
    if (c == '/' || c == '\0') {
      if (part == 0 || (c == '/' && ++slashes > 1)) return 0;
      part = 0;
      continue;
    }
    if (part == 0 && c == '.') return 0;
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
          c == '_' || c == '-'))
      return 0;
    part++;
  }
  return 1;
}

/* "" or exactly len lowercase hex digits (len 64: a sha256, an upload token). */
static int hex_ok(const char *s, size_t len, int allow_empty) {
  size_t n = strlen(s);
  if (n == 0) return allow_empty;
  if (n != len) return 0;
  for (size_t i = 0; i < n; i++)
    if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return 0;
  return 1;
}

static int v_assign(const struct sw_msg_assign *a, struct sw_err *err) {
  const char *p = "Assign";
  int rc = v_nonzero(a->lease_id, p, "lease_id", err);
  if (!rc) rc = v_epoch(a->epoch, p, err);
  if (!rc) rc = v_nonzero(a->sweep_id, p, "sweep_id", err);
  if (!rc) rc = v_attempt(a->attempt, p, err);
  if (rc) return rc;
  if (a->n_runs == 0 || a->n_runs > SW_MSG_RUNS_MAX || !a->runs)
    return sw_err_set(err, SW_EPROTO, "Assign.runs: %zu runs, need 1..%d", a->n_runs,
                      SW_MSG_RUNS_MAX);
  const struct sw_msg_contamination *c = &a->contamination;
  rc = v_num(c->load1_max, 1, p, "contamination.load1_max", err);
  if (!rc) rc = v_num(c->cpu_other_max, 1, p, "contamination.cpu_other_max", err);
  if (!rc) rc = v_num(c->settle_s, 1, p, "contamination.settle_s", err);
  if (!rc) rc = v_num(c->max_wait_s, 1, p, "contamination.max_wait_s", err);
  if (!rc) rc = v_num(c->sample_interval_s, 1, p, "contamination.sample_interval_s", err);
  if (!rc) rc = v_num(c->cpu_other_mean_max, 1, p, "contamination.cpu_other_mean_max", err);
  if (!rc) rc = v_num(c->over_max_s, 1, p, "contamination.over_max_s", err);
  char path[64];
  for (size_t i = 0; !rc && i < a->n_runs; i++) {
    const struct sw_msg_run *r = &a->runs[i];
    snprintf(path, sizeof path, "Assign.runs[%zu]", i);
    rc = v_nonzero(r->run_id, path, "run_id", err);
    /* A gate run's arm is "off" or "on"; a grid run's is its point label, which is empty for a
     * grid without parameters (an audit re-measuring the base config). */
    if (!rc) rc = v_fixed(r->arm, sizeof r->arm, a->gate_id != 0, path, "arm", err);
    if (!rc) rc = v_json(r->config_json, 1, path, "config_json", err);
    if (!rc) rc = v_json(r->trainer_json, 1, path, "trainer_json", err);
    if (!rc) rc = v_json(r->scene_json, 1, path, "scene_json", err);
    if (!rc && !hex_ok(r->artifact_token, SW_MSG_TOKEN_LEN, 1))
      rc = sw_err_set(err, SW_EPROTO, "%s.artifact_token: not 64 lowercase hex digits", path);
  }
  if (!rc && a->artifact_url[0] && strncmp(a->artifact_url, "http://", 7) &&
      strncmp(a->artifact_url, "https://", 8))
    rc = sw_err_set(err, SW_EPROTO, "Assign.artifact_url: not an http:// or https:// URL");
  for (const char *u = a->artifact_url; !rc && *u; u++)
    if ((unsigned char)*u <= ' ' || *u == 0x7f)
      rc = sw_err_set(err, SW_EPROTO, "Assign.artifact_url: a space or control character");
  return rc;
}

static int v_run_ids(uint64_t lease, uint64_t epoch, uint64_t run, uint32_t attempt, const char *p,
                     struct sw_err *err) {
  int rc = v_nonzero(lease, p, "lease_id", err);
  if (!rc) rc = v_epoch(epoch, p, err);
  if (!rc) rc = v_nonzero(run, p, "run_id", err);
  if (!rc) rc = v_attempt(attempt, p, err);
  return rc;
}

static int v_run_finished(const struct sw_msg_run_finished *f, struct sw_err *err) {
  const char *p = "RunFinished";
  int rc = v_run_ids(f->lease_id, f->epoch, f->run_id, f->attempt, p, err);
  if (!rc) rc = v_num(f->wall_s, 1, p, "wall_s", err);
  if (!rc) rc = v_num(f->waited_s, 1, p, "waited_s", err);
  if (!rc) rc = v_json(f->result_json, 0, p, "result_json", err);
  if (!rc) rc = v_text(f->error, SW_MSG_TEXT_MAX, 0, p, "error", err);
  if (!rc) rc = v_samples(f->samples, f->n_samples, "samples", err);
  if (!rc) rc = v_samples(f->pre_samples, f->n_pre_samples, "pre_samples", err);
  if (!rc && f->env_before && strlen(f->env_before) > SW_MSG_ENV_MAX)
    rc = sw_err_set(err, SW_EPROTO, "%s.env_before: longer than %d bytes", p, SW_MSG_ENV_MAX);
  if (!rc && f->env_after && strlen(f->env_after) > SW_MSG_ENV_MAX)
    rc = sw_err_set(err, SW_EPROTO, "%s.env_after: longer than %d bytes", p, SW_MSG_ENV_MAX);
  if (!rc) rc = v_json(f->env_before, 0, p, "env_before", err);
  if (!rc) rc = v_json(f->env_after, 0, p, "env_after", err);
  if (!rc && f->n_artifacts > SW_MSG_ARTIFACTS_MAX)
    rc = sw_err_set(err, SW_EPROTO, "%s.artifacts: more than %d", p, SW_MSG_ARTIFACTS_MAX);
  for (size_t i = 0; !rc && i < f->n_artifacts; i++) {
    const struct sw_msg_artifact *a = &f->artifacts[i];
    if (!sw_msg_artifact_name_ok(a->name))
      rc = sw_err_set(err, SW_EPROTO, "%s.artifacts[%zu].name: '%.*s' is not an artifact name", p,
                      i, 64, a->name);
    else if (!hex_ok(a->sha256, 64, 0))
      rc =
          sw_err_set(err, SW_EPROTO, "%s.artifacts[%zu].sha256: not 64 lowercase hex digits", p, i);
    for (size_t j = 0; !rc && j < i; j++)
      if (!strcmp(f->artifacts[j].name, a->name))
        rc = sw_err_set(err, SW_EPROTO, "%s.artifacts: '%s' twice", p, a->name);
  }
  return rc;
}

int sw_msg_validate(const struct sw_msg *m, struct sw_err *err) {
  if (!m) return sw_err_set(err, SW_EPROTO, "no message");
  switch (m->type) {
  case SW_MSG_HELLO: return v_hello(&m->u.hello, err);
  case SW_MSG_WELCOME: return v_welcome(&m->u.welcome, err);
  case SW_MSG_READY: return 0;
  case SW_MSG_ASSIGN: return v_assign(&m->u.assign, err);
  case SW_MSG_RUN_STARTED: {
    const struct sw_msg_run_started *s = &m->u.run_started;
    int rc = v_run_ids(s->lease_id, s->epoch, s->run_id, s->attempt, "RunStarted", err);
    return rc ? rc : v_num(s->waited_s, 1, "RunStarted", "waited_s", err);
  }
  case SW_MSG_PROGRESS: {
    const struct sw_msg_progress *s = &m->u.progress;
    int rc = v_run_ids(s->lease_id, s->epoch, s->run_id, s->attempt, "Progress", err);
    if (!rc) rc = v_num(s->train_s, 1, "Progress", "train_s", err);
    if (!rc) rc = v_num(s->loss, 0, "Progress", "loss", err);
    return rc;
  }
  case SW_MSG_RUN_FINISHED: return v_run_finished(&m->u.run_finished, err);
  case SW_MSG_LEASE_DONE: {
    int rc = v_nonzero(m->u.lease_done.lease_id, "LeaseDone", "lease_id", err);
    return rc ? rc : v_epoch(m->u.lease_done.epoch, "LeaseDone", err);
  }
  case SW_MSG_ACK: {
    int rc = v_nonzero(m->u.ack.run_id, "Ack", "run_id", err);
    return rc ? rc : v_attempt(m->u.ack.attempt, "Ack", err);
  }
  case SW_MSG_CANCEL: {
    int rc = v_nonzero(m->u.cancel.lease_id, "Cancel", "lease_id", err);
    return rc ? rc : v_text(m->u.cancel.reason, SW_MSG_TEXT_MAX, 0, "Cancel", "reason", err);
  }
  case SW_MSG_HEARTBEAT: return v_epoch(m->u.heartbeat.epoch, "Heartbeat", err);
  case SW_MSG_REJECT:
    if ((int)m->u.reject.code < 0 || m->u.reject.code >= SW_REJECT_CODE_COUNT)
      return sw_err_set(err, SW_EPROTO, "Reject.code: unknown code %d", (int)m->u.reject.code);
    return v_text(m->u.reject.reason, SW_MSG_TEXT_MAX, 0, "Reject", "reason", err);
  case SW_MSG_SUBMIT_REQ: {
    const struct sw_msg_submit_req *s = &m->u.submit_req;
    int rc = v_fixed(s->file_name, sizeof s->file_name, 0, "SubmitRequest", "file_name", err);
    return rc ? rc : v_text(s->spec_yaml, SW_MSG_YAML_MAX, 1, "SubmitRequest", "spec_yaml", err);
  }
  case SW_MSG_SUBMIT_REP: {
    const struct sw_msg_submit_rep *s = &m->u.submit_rep;
    if ((s->sweep_id == 0) == (s->error == NULL))
      return sw_err_set(err, SW_EPROTO, "SubmitReply: needs exactly one of sweep_id and error");
    return v_text(s->error, SW_MSG_TEXT_MAX, 0, "SubmitReply", "error", err);
  }
  case SW_MSG_STATUS_REQ: return v_format(m->u.status_req.format, "StatusRequest", err);
  case SW_MSG_REPORT_REQ: return v_format(m->u.report_req.format, "ReportRequest", err);
  case SW_MSG_STATUS_REP:
  case SW_MSG_REPORT_REP: {
    const char *p = m->type == SW_MSG_STATUS_REP ? "StatusReply" : "ReportReply";
    enum sw_msg_format f =
        m->type == SW_MSG_STATUS_REP ? m->u.status_rep.format : m->u.report_rep.format;
    const char *body = m->type == SW_MSG_STATUS_REP ? m->u.status_rep.body : m->u.report_rep.body;
    int rc = v_format(f, p, err);
    if (rc) return rc;
    if (f == SW_FMT_JSON) return v_json(body, 1, p, "body", err);
    return v_text(body, SW_MSG_BODY_MAX, 1, p, "body", err);
  }
  case SW_MSG_CANCEL_REQ: {
    int rc = v_nonzero(m->u.cancel_req.sweep_id, "CancelRequest", "sweep_id", err);
    return rc ? rc
              : v_text(m->u.cancel_req.reason, SW_MSG_TEXT_MAX, 0, "CancelRequest", "reason", err);
  }
  case SW_MSG_CANCEL_REP:
    return v_nonzero(m->u.cancel_rep.sweep_id, "CancelReply", "sweep_id", err);
  case SW_MSG_ERROR:
    if (m->u.error.code >= 0)
      return sw_err_set(err, SW_EPROTO, "Error.code: must be a negative error code");
    return v_text(m->u.error.message, SW_MSG_TEXT_MAX, 1, "Error", "message", err);
  default: return sw_err_set(err, SW_EPROTO, "envelope has no body (type %d)", (int)m->type);
  }
}
