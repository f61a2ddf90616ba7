/* sw_codec.c: struct sw_msg <-> protobuf Envelope frames. The only file that includes the
 * protobuf-c generated header. Encode validates the plain struct first, then builds a temporary
 * protobuf tree that borrows the struct's strings; decode unpacks, copies into the plain struct
 * (refusing over-long fixed fields as it goes), frees the protobuf tree in one place and then
 * runs the same validator, so both directions enforce one set of rules (docs/protocol.md). */
#include "sw_codec.h"

#include <stdlib.h>
#include <string.h>

#include "splatsweep.pb-c.h"

/* ---- encode -------------------------------------------------------------------------- */

/* Every allocation made while building the temporary protobuf tree, freed together. */
struct pool {
  void **ptrs;
  size_t n, cap;
  int oom;
};

static void *pool_alloc(struct pool *p, size_t size) {
  if (p->oom) return NULL;
  if (p->n == p->cap) {
    size_t cap = p->cap ? p->cap * 2 : 32;
    void **grown = realloc(p->ptrs, cap * sizeof *grown);
    if (!grown) {
      p->oom = 1;
      return NULL;
    }
    p->ptrs = grown;
    p->cap = cap;
  }
  void *mem = calloc(1, size ? size : 1);
  if (!mem) {
    p->oom = 1;
    return NULL;
  }
  p->ptrs[p->n++] = mem;
  return mem;
}

static void pool_free(struct pool *p) {
  for (size_t i = 0; i < p->n; i++) free(p->ptrs[i]);
  free(p->ptrs);
}

/* protobuf-c never writes through string pointers while packing; the casts only drop const. */
static char *str_or_empty(const char *s) { return (char *)(s ? s : ""); }

static Splatsweep__KeyValue **enc_kvs(struct pool *p, const struct sw_msg_kv *kv, size_t n) {
  if (n == 0) return NULL;
  Splatsweep__KeyValue *items = pool_alloc(p, n * sizeof *items);
  Splatsweep__KeyValue **ptrs = pool_alloc(p, n * sizeof *ptrs);
  if (!items || !ptrs) return NULL;
  for (size_t i = 0; i < n; i++) {
    splatsweep__key_value__init(&items[i]);
    items[i].key = (char *)kv[i].key;
    items[i].value = (char *)kv[i].value;
    ptrs[i] = &items[i];
  }
  return ptrs;
}

static char **enc_names(struct pool *p, const struct sw_msg_name *l, size_t n) {
  if (n == 0) return NULL;
  char **ptrs = pool_alloc(p, n * sizeof *ptrs);
  if (!ptrs) return NULL;
  for (size_t i = 0; i < n; i++) ptrs[i] = (char *)l[i].name;
  return ptrs;
}

static Splatsweep__Sample **enc_samples(struct pool *p, const struct sw_msg_sample *s, size_t n) {
  if (n == 0) return NULL;
  Splatsweep__Sample *items = pool_alloc(p, n * sizeof *items);
  Splatsweep__Sample **ptrs = pool_alloc(p, n * sizeof *ptrs);
  if (!items || !ptrs) return NULL;
  for (size_t i = 0; i < n; i++) {
    splatsweep__sample__init(&items[i]);
    items[i].t_ms = s[i].t_ms;
    items[i].load1 = s[i].load1;
    items[i].cpu_other = s[i].cpu_other;
    items[i].cpu_total = s[i].cpu_total;
    items[i].mem_avail = s[i].mem_avail;
    items[i].cpu_trainer = s[i].cpu_trainer;
    items[i].cpu_self = s[i].cpu_self;
    items[i].has_gpu = s[i].has_gpu;
    items[i].gpu_util = s[i].gpu_util;
    items[i].gpu_sm_mhz = s[i].gpu_sm_mhz;
    items[i].gpu_temp_c = s[i].gpu_temp_c;
    items[i].gpu_power_w = s[i].gpu_power_w;
    items[i].gpu_throttle = s[i].gpu_throttle;
    items[i].gpu_foreign = s[i].gpu_foreign;
    ptrs[i] = &items[i];
  }
  return ptrs;
}

static void enc_hello(struct pool *p, Splatsweep__Envelope *env, const struct sw_msg_hello *h) {
  Splatsweep__Hello *o = pool_alloc(p, sizeof *o);
  Splatsweep__Fingerprint *fp = pool_alloc(p, sizeof *fp);
  if (!o || !fp) return;
  splatsweep__hello__init(o);
  splatsweep__fingerprint__init(fp);
  fp->hostname = (char *)h->fp.hostname;
  fp->os = (char *)h->fp.os;
  fp->arch = (char *)h->fp.arch;
  fp->cpu_model = (char *)h->fp.cpu_model;
  fp->cores = h->fp.cores;
  fp->mem_bytes = h->fp.mem_bytes;
  fp->gpu_name = (char *)h->fp.gpu_name;
  fp->gpu_driver = (char *)h->fp.gpu_driver;
  fp->gpu_api = (char *)h->fp.gpu_api;
  fp->gpu_kind = (Splatsweep__GpuKind)h->fp.gpu_kind;
  fp->machine_id = (char *)h->fp.machine_id;
  fp->n_extra = h->fp.n_extra;
  fp->extra = enc_kvs(p, h->fp.extra, h->fp.n_extra);
  o->worker_id = (char *)h->worker_id;
  o->fingerprint = fp;
  o->n_labels = h->n_labels;
  o->labels = enc_kvs(p, h->labels, h->n_labels);
  o->n_capabilities = h->n_capabilities;
  o->capabilities = enc_names(p, h->capabilities, h->n_capabilities);
  o->trainer_sha256 = (char *)h->trainer_sha256;
  o->n_features = h->n_features;
  o->features = enc_names(p, h->features, h->n_features);
  env->body_case = SPLATSWEEP__ENVELOPE__BODY_HELLO;
  env->hello = o;
}

static void enc_assign(struct pool *p, Splatsweep__Envelope *env, const struct sw_msg_assign *a) {
  Splatsweep__Assign *o = pool_alloc(p, sizeof *o);
  Splatsweep__Contamination *c = pool_alloc(p, sizeof *c);
  Splatsweep__Run *runs = pool_alloc(p, a->n_runs * sizeof *runs);
  Splatsweep__Run **ptrs = pool_alloc(p, a->n_runs * sizeof *ptrs);
  if (!o || !c || !runs || !ptrs) return;
  splatsweep__assign__init(o);
  splatsweep__contamination__init(c);
  o->lease_id = a->lease_id;
  o->epoch = a->epoch;
  o->deadline_ms = a->deadline_ms;
  o->sweep_id = a->sweep_id;
  o->gate_id = a->gate_id;
  o->pair_id = a->pair_id;
  o->attempt = a->attempt;
  for (size_t i = 0; i < a->n_runs; i++) {
    splatsweep__run__init(&runs[i]);
    runs[i].run_id = a->runs[i].run_id;
    runs[i].arm = (char *)a->runs[i].arm;
    runs[i].config_json = str_or_empty(a->runs[i].config_json);
    runs[i].trainer_json = str_or_empty(a->runs[i].trainer_json);
    runs[i].scene_json = str_or_empty(a->runs[i].scene_json);
    runs[i].artifact_token = (char *)a->runs[i].artifact_token;
    ptrs[i] = &runs[i];
  }
  o->n_runs = a->n_runs;
  o->runs = ptrs;
  c->load1_max = a->contamination.load1_max;
  c->cpu_other_max = a->contamination.cpu_other_max;
  c->settle_s = a->contamination.settle_s;
  c->max_wait_s = a->contamination.max_wait_s;
  c->sample_interval_s = a->contamination.sample_interval_s;
  c->require_windows = a->contamination.require_windows;
  c->rerun_once = a->contamination.rerun_once;
  c->cpu_other_mean_max = a->contamination.cpu_other_mean_max;
  c->over_max_s = a->contamination.over_max_s;
  c->gpu_foreign = a->contamination.gpu_foreign;
  c->shared_host = a->contamination.shared_host;
  o->contamination = c;
  o->artifact_url = (char *)a->artifact_url;
  o->artifact_max_bytes = a->artifact_max_bytes;
  o->artifact_ply = a->artifact_ply;
  env->body_case = SPLATSWEEP__ENVELOPE__BODY_ASSIGN;
  env->assign = o;
}

static void enc_run_finished(struct pool *p, Splatsweep__Envelope *env,
                             const struct sw_msg_run_finished *f) {
  Splatsweep__RunFinished *o = pool_alloc(p, sizeof *o);
  if (!o) return;
  splatsweep__run_finished__init(o);
  o->lease_id = f->lease_id;
  o->epoch = f->epoch;
  o->run_id = f->run_id;
  o->attempt = f->attempt;
  o->exit_status = f->exit_status;
  o->wall_s = f->wall_s;
  o->waited_s = f->waited_s;
  o->quiet = f->quiet;
  o->has_result = f->result_json != NULL;
  o->result_json = str_or_empty(f->result_json);
  o->has_error = f->error != NULL;
  o->error = str_or_empty(f->error);
  o->n_samples = f->n_samples;
  o->samples = enc_samples(p, f->samples, f->n_samples);
  o->n_pre_samples = f->n_pre_samples;
  o->pre_samples = enc_samples(p, f->pre_samples, f->n_pre_samples);
  o->env_before = str_or_empty(f->env_before);
  o->env_after = str_or_empty(f->env_after);
  o->run_start_wall_ms = f->run_start_wall_ms;
  o->run_end_wall_ms = f->run_end_wall_ms;
  if (f->n_artifacts) {
    Splatsweep__Artifact *items = pool_alloc(p, f->n_artifacts * sizeof *items);
    Splatsweep__Artifact **ptrs = pool_alloc(p, f->n_artifacts * sizeof *ptrs);
    if (!items || !ptrs) return;
    for (size_t i = 0; i < f->n_artifacts; i++) {
      splatsweep__artifact__init(&items[i]);
      items[i].name = (char *)f->artifacts[i].name;
      items[i].size = f->artifacts[i].size;
      items[i].sha256 = (char *)f->artifacts[i].sha256;
      ptrs[i] = &items[i];
    }
    o->n_artifacts = f->n_artifacts;
    o->artifacts = ptrs;
  }
  env->body_case = SPLATSWEEP__ENVELOPE__BODY_RUN_FINISHED;
  env->run_finished = o;
}

/* Allocates the body message of type T from the pool, initialises it and hangs it on env. */
#define ENC_BODY(T, init, field, CASE)                                                             \
  T *o = pool_alloc(p, sizeof *o);                                                                 \
  if (!o) return;                                                                                  \
  init(o);                                                                                         \
  env->body_case = SPLATSWEEP__ENVELOPE__BODY_##CASE;                                              \
  env->field = o

static void enc_body(struct pool *p, Splatsweep__Envelope *env, const struct sw_msg *m) {
  switch (m->type) {
  case SW_MSG_HELLO: enc_hello(p, env, &m->u.hello); return;
  case SW_MSG_ASSIGN: enc_assign(p, env, &m->u.assign); return;
  case SW_MSG_RUN_FINISHED: enc_run_finished(p, env, &m->u.run_finished); return;
  case SW_MSG_WELCOME: {
    ENC_BODY(Splatsweep__Welcome, splatsweep__welcome__init, welcome, WELCOME);
    o->session_id = (char *)m->u.welcome.session_id;
    o->heartbeat_ms = m->u.welcome.heartbeat_ms;
    o->liveness = m->u.welcome.liveness;
    o->lease_ttl_ms = m->u.welcome.lease_ttl_ms;
    return;
  }
  case SW_MSG_READY: {
    ENC_BODY(Splatsweep__Ready, splatsweep__ready__init, ready, READY);
    return;
  }
  case SW_MSG_RUN_STARTED: {
    ENC_BODY(Splatsweep__RunStarted, splatsweep__run_started__init, run_started, RUN_STARTED);
    o->lease_id = m->u.run_started.lease_id;
    o->epoch = m->u.run_started.epoch;
    o->run_id = m->u.run_started.run_id;
    o->attempt = m->u.run_started.attempt;
    o->waited_s = m->u.run_started.waited_s;
    return;
  }
  case SW_MSG_PROGRESS: {
    ENC_BODY(Splatsweep__Progress, splatsweep__progress__init, progress, PROGRESS);
    o->lease_id = m->u.progress.lease_id;
    o->epoch = m->u.progress.epoch;
    o->run_id = m->u.progress.run_id;
    o->attempt = m->u.progress.attempt;
    o->iter = m->u.progress.iter;
    o->train_s = m->u.progress.train_s;
    o->loss = m->u.progress.loss;
    o->splats = m->u.progress.splats;
    return;
  }
  case SW_MSG_LEASE_DONE: {
    ENC_BODY(Splatsweep__LeaseDone, splatsweep__lease_done__init, lease_done, LEASE_DONE);
    o->lease_id = m->u.lease_done.lease_id;
    o->epoch = m->u.lease_done.epoch;
    return;
  }
  case SW_MSG_ACK: {
    ENC_BODY(Splatsweep__Ack, splatsweep__ack__init, ack, ACK);
    o->ack_seq = m->u.ack.ack_seq;
    o->run_id = m->u.ack.run_id;
    o->attempt = m->u.ack.attempt;
    return;
  }
  case SW_MSG_CANCEL: {
    ENC_BODY(Splatsweep__Cancel, splatsweep__cancel__init, cancel, CANCEL);
    o->lease_id = m->u.cancel.lease_id;
    o->reason = str_or_empty(m->u.cancel.reason);
    return;
  }
  case SW_MSG_HEARTBEAT: {
    ENC_BODY(Splatsweep__Heartbeat, splatsweep__heartbeat__init, heartbeat, HEARTBEAT);
    o->lease_id = m->u.heartbeat.lease_id;
    o->epoch = m->u.heartbeat.epoch;
    return;
  }
  case SW_MSG_REJECT: {
    ENC_BODY(Splatsweep__Reject, splatsweep__reject__init, reject, REJECT);
    o->code = (Splatsweep__RejectCode)m->u.reject.code;
    o->reason = str_or_empty(m->u.reject.reason);
    return;
  }
  case SW_MSG_SUBMIT_REQ: {
    ENC_BODY(Splatsweep__SubmitRequest, splatsweep__submit_request__init, submit_request,
             SUBMIT_REQUEST);
    o->file_name = (char *)m->u.submit_req.file_name;
    o->spec_yaml = str_or_empty(m->u.submit_req.spec_yaml);
    return;
  }
  case SW_MSG_SUBMIT_REP: {
    ENC_BODY(Splatsweep__SubmitReply, splatsweep__submit_reply__init, submit_reply, SUBMIT_REPLY);
    o->sweep_id = m->u.submit_rep.sweep_id;
    o->has_error = m->u.submit_rep.error != NULL;
    o->error = str_or_empty(m->u.submit_rep.error);
    return;
  }
  case SW_MSG_STATUS_REQ: {
    ENC_BODY(Splatsweep__StatusRequest, splatsweep__status_request__init, status_request,
             STATUS_REQUEST);
    o->sweep_id = m->u.status_req.sweep_id;
    o->format = (Splatsweep__Format)m->u.status_req.format;
    o->workers_offset = m->u.status_req.workers_offset;
    o->workers_limit = m->u.status_req.workers_limit;
    return;
  }
  case SW_MSG_STATUS_REP: {
    ENC_BODY(Splatsweep__StatusReply, splatsweep__status_reply__init, status_reply, STATUS_REPLY);
    o->format = (Splatsweep__Format)m->u.status_rep.format;
    o->body = str_or_empty(m->u.status_rep.body);
    return;
  }
  case SW_MSG_REPORT_REQ: {
    ENC_BODY(Splatsweep__ReportRequest, splatsweep__report_request__init, report_request,
             REPORT_REQUEST);
    o->sweep_id = m->u.report_req.sweep_id;
    o->format = (Splatsweep__Format)m->u.report_req.format;
    return;
  }
  case SW_MSG_REPORT_REP: {
    ENC_BODY(Splatsweep__ReportReply, splatsweep__report_reply__init, report_reply, REPORT_REPLY);
    o->format = (Splatsweep__Format)m->u.report_rep.format;
    o->body = str_or_empty(m->u.report_rep.body);
    return;
  }
  case SW_MSG_CANCEL_REQ: {
    ENC_BODY(Splatsweep__CancelRequest, splatsweep__cancel_request__init, cancel_request,
             CANCEL_REQUEST);
    o->sweep_id = m->u.cancel_req.sweep_id;
    o->reason = str_or_empty(m->u.cancel_req.reason);
    return;
  }
  case SW_MSG_CANCEL_REP: {
    ENC_BODY(Splatsweep__CancelReply, splatsweep__cancel_reply__init, cancel_reply, CANCEL_REPLY);
    o->sweep_id = m->u.cancel_rep.sweep_id;
    o->runs_cancelled = m->u.cancel_rep.runs_cancelled;
    return;
  }
  case SW_MSG_ERROR: {
    ENC_BODY(Splatsweep__Error, splatsweep__error__init, error, ERROR);
    o->code = m->u.error.code;
    o->message = str_or_empty(m->u.error.message);
    return;
  }
  default: return;
  }
}

int sw_codec_encode(const struct sw_msg *msg, uint8_t **buf, size_t *len, struct sw_err *err) {
  *buf = NULL;
  *len = 0;
  int rc = sw_msg_validate(msg, err);
  if (rc) return rc;
  struct pool p = {0};
  Splatsweep__Envelope env = SPLATSWEEP__ENVELOPE__INIT;
  env.protocol = msg->protocol ? msg->protocol : SW_PROTOCOL_VERSION;
  env.seq = msg->seq;
  enc_body(&p, &env, msg);
  if (p.oom || env.body_case == SPLATSWEEP__ENVELOPE__BODY__NOT_SET) {
    pool_free(&p);
    return sw_err_set(err, SW_ENOMEM, "encoding %s: out of memory", sw_msg_type_name(msg->type));
  }
  size_t size = splatsweep__envelope__get_packed_size(&env);
  if (size > SW_MSG_FRAME_MAX) {
    pool_free(&p);
    return sw_err_set(err, SW_EPROTO, "encoding %s: frame of %zu bytes exceeds %u",
                      sw_msg_type_name(msg->type), size, SW_MSG_FRAME_MAX);
  }
  uint8_t *out = malloc(size ? size : 1);
  if (!out) {
    pool_free(&p);
    return sw_err_set(err, SW_ENOMEM, "encoding %s: out of memory", sw_msg_type_name(msg->type));
  }
  size_t packed = splatsweep__envelope__pack(&env, out);
  pool_free(&p);
  *buf = out;
  *len = packed;
  return 0;
}

/* ---- decode -------------------------------------------------------------------------- */

/* protobuf-c unpacks a `string` field into a NUL-terminated copy and drops its length, so a
 * string with a NUL inside would reach the checks cut short ("a\0<anything>" read as "a").
 * Before unpacking, this walks the raw frame with the message descriptors and refuses any
 * string field whose bytes contain a NUL; nested messages are walked in turn and unknown
 * fields are skipped. Returns 1 when the frame holds such a string, 0 when not or when the
 * frame is malformed (left to the unpacker to refuse); *field names the string. */
static int read_varint(const uint8_t **p, const uint8_t *end, uint64_t *v) {
  *v = 0;
  for (int shift = 0; shift < 64 && *p < end; shift += 7) {
    uint8_t b = *(*p)++;
    *v |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) return 0;
  }
  return -1;
}

static int has_embedded_nul(const ProtobufCMessageDescriptor *d, const uint8_t *p, size_t n,
                            int depth, const char **field) {
  const uint8_t *end = p + n;
  if (depth > 16) return 0;
  while (p < end) {
    uint64_t tag, len;
    if (read_varint(&p, end, &tag)) return 0;
    switch (tag & 7) {
    case 0:
      if (read_varint(&p, end, &len)) return 0;
      break;
    case 1:
      if ((size_t)(end - p) < 8) return 0;
      p += 8;
      break;
    case 5:
      if ((size_t)(end - p) < 4) return 0;
      p += 4;
      break;
    case 2: {
      if (read_varint(&p, end, &len) || len > (uint64_t)(end - p)) return 0;
      const ProtobufCFieldDescriptor *f =
          tag >> 3 <= UINT32_MAX ? protobuf_c_message_descriptor_get_field(d, (unsigned)(tag >> 3))
                                 : NULL;
      if (f && f->type == PROTOBUF_C_TYPE_STRING && memchr(p, 0, (size_t)len)) {
        *field = f->name;
        return 1;
      }
      if (f && f->type == PROTOBUF_C_TYPE_MESSAGE &&
          has_embedded_nul(f->descriptor, p, (size_t)len, depth + 1, field))
        return 1;
      p += len;
      break;
    }
    default: return 0; /* groups and bad wire types: the unpacker refuses them */
    }
  }
  return 0;
}

/* Copies an unpacked string into a fixed field; an over-long one is a protocol error. */
static int dec_fixed(char *dst, size_t cap, const char *src, const char *what, struct sw_err *err) {
  if (!src) src = "";
  size_t n = strlen(src);
  if (n >= cap) return sw_err_set(err, SW_EPROTO, "%s: longer than %zu bytes", what, cap - 1);
  memcpy(dst, src, n + 1);
  return 0;
}

/* Heap copy of an unpacked string; *dst stays NULL when present is false. */
static int dec_text(char **dst, const char *src, int present, struct sw_err *err) {
  if (!present) return 0;
  *dst = strdup(src ? src : "");
  if (!*dst) return sw_err_set(err, SW_ENOMEM, "decoding: out of memory");
  return 0;
}

static int dec_kvs(struct sw_msg_kv **dst, size_t *n_dst, Splatsweep__KeyValue **src, size_t n,
                   const char *what, struct sw_err *err) {
  if (n > SW_MSG_KV_MAX)
    return sw_err_set(err, SW_EPROTO, "%s: %zu entries, more than %d", what, n, SW_MSG_KV_MAX);
  if (n == 0) return 0;
  *dst = calloc(n, sizeof **dst);
  if (!*dst) return sw_err_set(err, SW_ENOMEM, "decoding: out of memory");
  *n_dst = n;
  for (size_t i = 0; i < n; i++) {
    int rc = dec_fixed((*dst)[i].key, sizeof(*dst)[i].key, src[i]->key, what, err);
    if (!rc) rc = dec_fixed((*dst)[i].value, sizeof(*dst)[i].value, src[i]->value, what, err);
    if (rc) return rc;
  }
  return 0;
}

static int dec_names(struct sw_msg_name **dst, size_t *n_dst, char **src, size_t n,
                     const char *what, struct sw_err *err) {
  if (n > SW_MSG_LIST_MAX)
    return sw_err_set(err, SW_EPROTO, "%s: %zu entries, more than %d", what, n, SW_MSG_LIST_MAX);
  if (n == 0) return 0;
  *dst = calloc(n, sizeof **dst);
  if (!*dst) return sw_err_set(err, SW_ENOMEM, "decoding: out of memory");
  *n_dst = n;
  for (size_t i = 0; i < n; i++) {
    int rc = dec_fixed((*dst)[i].name, sizeof(*dst)[i].name, src[i], what, err);
    if (rc) return rc;
  }
  return 0;
}

static int dec_samples(struct sw_msg_sample **dst, size_t *n_dst, Splatsweep__Sample **src,
                       size_t n, const char *what, struct sw_err *err) {
  if (n > SW_MSG_SAMPLES_MAX)
    return sw_err_set(err, SW_EPROTO, "%s: %zu samples, more than %d", what, n, SW_MSG_SAMPLES_MAX);
  if (n == 0) return 0;
  *dst = calloc(n, sizeof **dst);
  if (!*dst) return sw_err_set(err, SW_ENOMEM, "decoding: out of memory");
  *n_dst = n;
  for (size_t i = 0; i < n; i++) {
    (*dst)[i].t_ms = src[i]->t_ms;
    (*dst)[i].load1 = src[i]->load1;
    (*dst)[i].cpu_other = src[i]->cpu_other;
    (*dst)[i].cpu_total = src[i]->cpu_total;
    (*dst)[i].mem_avail = src[i]->mem_avail;
    (*dst)[i].cpu_trainer = src[i]->cpu_trainer;
    (*dst)[i].cpu_self = src[i]->cpu_self;
    (*dst)[i].has_gpu = src[i]->has_gpu;
    (*dst)[i].gpu_util = src[i]->gpu_util;
    (*dst)[i].gpu_sm_mhz = src[i]->gpu_sm_mhz;
    (*dst)[i].gpu_temp_c = src[i]->gpu_temp_c;
    (*dst)[i].gpu_power_w = src[i]->gpu_power_w;
    (*dst)[i].gpu_throttle = src[i]->gpu_throttle;
    (*dst)[i].gpu_foreign = src[i]->gpu_foreign;
  }
  return 0;
}

static int dec_hello(struct sw_msg_hello *h, const Splatsweep__Hello *o, struct sw_err *err) {
  int rc = dec_fixed(h->worker_id, sizeof h->worker_id, o->worker_id, "Hello.worker_id", err);
  const Splatsweep__Fingerprint *fp = o->fingerprint;
  if (!rc && fp) {
    rc = dec_fixed(h->fp.hostname, sizeof h->fp.hostname, fp->hostname,
                   "Hello.fingerprint.hostname", err);
    if (!rc) rc = dec_fixed(h->fp.os, sizeof h->fp.os, fp->os, "Hello.fingerprint.os", err);
    if (!rc) rc = dec_fixed(h->fp.arch, sizeof h->fp.arch, fp->arch, "Hello.fingerprint.arch", err);
    if (!rc)
      rc = dec_fixed(h->fp.cpu_model, sizeof h->fp.cpu_model, fp->cpu_model,
                     "Hello.fingerprint.cpu_model", err);
    if (!rc)
      rc = dec_fixed(h->fp.gpu_name, sizeof h->fp.gpu_name, fp->gpu_name,
                     "Hello.fingerprint.gpu_name", err);
    if (!rc)
      rc = dec_fixed(h->fp.gpu_driver, sizeof h->fp.gpu_driver, fp->gpu_driver,
                     "Hello.fingerprint.gpu_driver", err);
    if (!rc)
      rc = dec_fixed(h->fp.machine_id, sizeof h->fp.machine_id, fp->machine_id,
                     "Hello.fingerprint.machine_id", err);
    if (!rc)
      rc = dec_fixed(h->fp.gpu_api, sizeof h->fp.gpu_api, fp->gpu_api, "Hello.fingerprint.gpu_api",
                     err);
    h->fp.cores = fp->cores;
    h->fp.mem_bytes = fp->mem_bytes;
    h->fp.gpu_kind = (enum sw_gpu_kind)fp->gpu_kind;
    if (!rc)
      rc = dec_kvs(&h->fp.extra, &h->fp.n_extra, fp->extra, fp->n_extra, "Hello.fingerprint.extra",
                   err);
  }
  if (!rc) rc = dec_kvs(&h->labels, &h->n_labels, o->labels, o->n_labels, "Hello.labels", err);
  if (!rc)
    rc = dec_names(&h->capabilities, &h->n_capabilities, o->capabilities, o->n_capabilities,
                   "Hello.capabilities", err);
  if (!rc)
    rc = dec_names(&h->features, &h->n_features, o->features, o->n_features, "Hello.features", err);
  if (!rc)
    rc = dec_fixed(h->trainer_sha256, sizeof h->trainer_sha256, o->trainer_sha256,
                   "Hello.trainer_sha256", err);
  return rc;
}

static int dec_assign(struct sw_msg_assign *a, const Splatsweep__Assign *o, struct sw_err *err) {
  a->lease_id = o->lease_id;
  a->epoch = o->epoch;
  a->deadline_ms = o->deadline_ms;
  a->sweep_id = o->sweep_id;
  a->gate_id = o->gate_id;
  a->pair_id = o->pair_id;
  a->attempt = o->attempt;
  if (o->contamination) {
    a->contamination.load1_max = o->contamination->load1_max;
    a->contamination.cpu_other_max = o->contamination->cpu_other_max;
    a->contamination.settle_s = o->contamination->settle_s;
    a->contamination.max_wait_s = o->contamination->max_wait_s;
    a->contamination.sample_interval_s = o->contamination->sample_interval_s;
    a->contamination.require_windows = o->contamination->require_windows;
    a->contamination.rerun_once = o->contamination->rerun_once;
    a->contamination.cpu_other_mean_max = o->contamination->cpu_other_mean_max;
    a->contamination.over_max_s = o->contamination->over_max_s;
    a->contamination.gpu_foreign = o->contamination->gpu_foreign;
    a->contamination.shared_host = o->contamination->shared_host;
  }
  a->artifact_max_bytes = o->artifact_max_bytes;
  a->artifact_ply = o->artifact_ply;
  int urc = dec_fixed(a->artifact_url, sizeof a->artifact_url, o->artifact_url,
                      "Assign.artifact_url", err);
  if (urc) return urc;
  if (o->n_runs > SW_MSG_RUNS_MAX)
    return sw_err_set(err, SW_EPROTO, "Assign.runs: %zu runs, more than %d", o->n_runs,
                      SW_MSG_RUNS_MAX);
  if (o->n_runs == 0) return 0; /* the validator names the missing runs */
  a->runs = calloc(o->n_runs, sizeof *a->runs);
  if (!a->runs) return sw_err_set(err, SW_ENOMEM, "decoding: out of memory");
  a->n_runs = o->n_runs;
  for (size_t i = 0; i < o->n_runs; i++) {
    struct sw_msg_run *r = &a->runs[i];
    const Splatsweep__Run *s = o->runs[i];
    r->run_id = s->run_id;
    int rc = dec_fixed(r->arm, sizeof r->arm, s->arm, "Assign.runs.arm", err);
    if (!rc) rc = dec_text(&r->config_json, s->config_json, 1, err);
    if (!rc) rc = dec_text(&r->trainer_json, s->trainer_json, 1, err);
    if (!rc) rc = dec_text(&r->scene_json, s->scene_json, 1, err);
    if (!rc)
      rc = dec_fixed(r->artifact_token, sizeof r->artifact_token, s->artifact_token,
                     "Assign.runs.artifact_token", err);
    if (rc) return rc;
  }
  return 0;
}

static int dec_run_finished(struct sw_msg_run_finished *f, const Splatsweep__RunFinished *o,
                            struct sw_err *err) {
  f->lease_id = o->lease_id;
  f->epoch = o->epoch;
  f->run_id = o->run_id;
  f->attempt = o->attempt;
  f->exit_status = o->exit_status;
  f->wall_s = o->wall_s;
  f->waited_s = o->waited_s;
  f->quiet = o->quiet;
  f->run_start_wall_ms = o->run_start_wall_ms;
  f->run_end_wall_ms = o->run_end_wall_ms;
  int rc = dec_text(&f->result_json, o->result_json, o->has_result, err);
  if (!rc) rc = dec_text(&f->error, o->error, o->has_error, err);
  if (!rc)
    rc = dec_samples(&f->samples, &f->n_samples, o->samples, o->n_samples, "RunFinished.samples",
                     err);
  if (!rc)
    rc = dec_samples(&f->pre_samples, &f->n_pre_samples, o->pre_samples, o->n_pre_samples,
                     "RunFinished.pre_samples", err);
  /* An empty environment string means the worker sent none (older workers). */
  if (!rc) rc = dec_text(&f->env_before, o->env_before, o->env_before && *o->env_before, err);
  if (!rc) rc = dec_text(&f->env_after, o->env_after, o->env_after && *o->env_after, err);
  if (!rc && o->n_artifacts > SW_MSG_ARTIFACTS_MAX)
    rc = sw_err_set(err, SW_EPROTO, "RunFinished.artifacts: %zu, more than %d", o->n_artifacts,
                    SW_MSG_ARTIFACTS_MAX);
  if (!rc && o->n_artifacts) {
    f->artifacts = calloc(o->n_artifacts, sizeof *f->artifacts);
    if (!f->artifacts) return sw_err_set(err, SW_ENOMEM, "decoding: out of memory");
    f->n_artifacts = o->n_artifacts;
    for (size_t i = 0; !rc && i < o->n_artifacts; i++) {
      struct sw_msg_artifact *a = &f->artifacts[i];
      rc = dec_fixed(a->name, sizeof a->name, o->artifacts[i]->name, "RunFinished.artifacts.name",
                     err);
      if (!rc)
        rc = dec_fixed(a->sha256, sizeof a->sha256, o->artifacts[i]->sha256,
                       "RunFinished.artifacts.sha256", err);
      a->size = o->artifacts[i]->size;
    }
  }
  return rc;
}

static int dec_body(struct sw_msg *m, const Splatsweep__Envelope *env, struct sw_err *err) {
  switch (env->body_case) {
  case SPLATSWEEP__ENVELOPE__BODY_HELLO:
    m->type = SW_MSG_HELLO;
    return dec_hello(&m->u.hello, env->hello, err);
  case SPLATSWEEP__ENVELOPE__BODY_WELCOME:
    m->type = SW_MSG_WELCOME;
    m->u.welcome.heartbeat_ms = env->welcome->heartbeat_ms;
    m->u.welcome.liveness = env->welcome->liveness;
    m->u.welcome.lease_ttl_ms = env->welcome->lease_ttl_ms;
    return dec_fixed(m->u.welcome.session_id, sizeof m->u.welcome.session_id,
                     env->welcome->session_id, "Welcome.session_id", err);
  case SPLATSWEEP__ENVELOPE__BODY_READY: m->type = SW_MSG_READY; return 0;
  case SPLATSWEEP__ENVELOPE__BODY_ASSIGN:
    m->type = SW_MSG_ASSIGN;
    return dec_assign(&m->u.assign, env->assign, err);
  case SPLATSWEEP__ENVELOPE__BODY_RUN_STARTED: {
    const Splatsweep__RunStarted *o = env->run_started;
    m->type = SW_MSG_RUN_STARTED;
    m->u.run_started =
        (struct sw_msg_run_started){o->lease_id, o->epoch, o->run_id, o->attempt, o->waited_s};
    return 0;
  }
  case SPLATSWEEP__ENVELOPE__BODY_PROGRESS: {
    const Splatsweep__Progress *o = env->progress;
    m->type = SW_MSG_PROGRESS;
    m->u.progress = (struct sw_msg_progress){o->lease_id, o->epoch,   o->run_id, o->attempt,
                                             o->iter,     o->train_s, o->loss,   o->splats};
    return 0;
  }
  case SPLATSWEEP__ENVELOPE__BODY_RUN_FINISHED:
    m->type = SW_MSG_RUN_FINISHED;
    return dec_run_finished(&m->u.run_finished, env->run_finished, err);
  case SPLATSWEEP__ENVELOPE__BODY_LEASE_DONE:
    m->type = SW_MSG_LEASE_DONE;
    m->u.lease_done.lease_id = env->lease_done->lease_id;
    m->u.lease_done.epoch = env->lease_done->epoch;
    return 0;
  case SPLATSWEEP__ENVELOPE__BODY_ACK:
    m->type = SW_MSG_ACK;
    m->u.ack.ack_seq = env->ack->ack_seq;
    m->u.ack.run_id = env->ack->run_id;
    m->u.ack.attempt = env->ack->attempt;
    return 0;
  case SPLATSWEEP__ENVELOPE__BODY_CANCEL:
    m->type = SW_MSG_CANCEL;
    m->u.cancel.lease_id = env->cancel->lease_id;
    return dec_text(&m->u.cancel.reason, env->cancel->reason, env->cancel->reason[0] != 0, err);
  case SPLATSWEEP__ENVELOPE__BODY_HEARTBEAT:
    m->type = SW_MSG_HEARTBEAT;
    m->u.heartbeat.lease_id = env->heartbeat->lease_id;
    m->u.heartbeat.epoch = env->heartbeat->epoch;
    return 0;
  case SPLATSWEEP__ENVELOPE__BODY_REJECT:
    m->type = SW_MSG_REJECT;
    m->u.reject.code = (enum sw_reject_code)env->reject->code;
    return dec_text(&m->u.reject.reason, env->reject->reason, env->reject->reason[0] != 0, err);
  case SPLATSWEEP__ENVELOPE__BODY_SUBMIT_REQUEST:
    m->type = SW_MSG_SUBMIT_REQ;
    if (dec_fixed(m->u.submit_req.file_name, sizeof m->u.submit_req.file_name,
                  env->submit_request->file_name, "SubmitRequest.file_name", err))
      return SW_EPROTO;
    return dec_text(&m->u.submit_req.spec_yaml, env->submit_request->spec_yaml, 1, err);
  case SPLATSWEEP__ENVELOPE__BODY_SUBMIT_REPLY:
    m->type = SW_MSG_SUBMIT_REP;
    m->u.submit_rep.sweep_id = env->submit_reply->sweep_id;
    return dec_text(&m->u.submit_rep.error, env->submit_reply->error, env->submit_reply->has_error,
                    err);
  case SPLATSWEEP__ENVELOPE__BODY_STATUS_REQUEST:
    m->type = SW_MSG_STATUS_REQ;
    m->u.status_req.sweep_id = env->status_request->sweep_id;
    m->u.status_req.format = (enum sw_msg_format)env->status_request->format;
    m->u.status_req.workers_offset = env->status_request->workers_offset;
    m->u.status_req.workers_limit = env->status_request->workers_limit;
    return 0;
  case SPLATSWEEP__ENVELOPE__BODY_STATUS_REPLY:
    m->type = SW_MSG_STATUS_REP;
    m->u.status_rep.format = (enum sw_msg_format)env->status_reply->format;
    return dec_text(&m->u.status_rep.body, env->status_reply->body, 1, err);
  case SPLATSWEEP__ENVELOPE__BODY_REPORT_REQUEST:
    m->type = SW_MSG_REPORT_REQ;
    m->u.report_req.sweep_id = env->report_request->sweep_id;
    m->u.report_req.format = (enum sw_msg_format)env->report_request->format;
    return 0;
  case SPLATSWEEP__ENVELOPE__BODY_REPORT_REPLY:
    m->type = SW_MSG_REPORT_REP;
    m->u.report_rep.format = (enum sw_msg_format)env->report_reply->format;
    return dec_text(&m->u.report_rep.body, env->report_reply->body, 1, err);
  case SPLATSWEEP__ENVELOPE__BODY_CANCEL_REQUEST:
    m->type = SW_MSG_CANCEL_REQ;
    m->u.cancel_req.sweep_id = env->cancel_request->sweep_id;
    return dec_text(&m->u.cancel_req.reason, env->cancel_request->reason,
                    env->cancel_request->reason[0] != 0, err);
  case SPLATSWEEP__ENVELOPE__BODY_CANCEL_REPLY:
    m->type = SW_MSG_CANCEL_REP;
    m->u.cancel_rep.sweep_id = env->cancel_reply->sweep_id;
    m->u.cancel_rep.runs_cancelled = env->cancel_reply->runs_cancelled;
    return 0;
  case SPLATSWEEP__ENVELOPE__BODY_ERROR:
    m->type = SW_MSG_ERROR;
    m->u.error.code = env->error->code;
    return dec_text(&m->u.error.message, env->error->message, 1, err);
  default: return sw_err_set(err, SW_EPROTO, "envelope has no body");
  }
}

int sw_codec_decode(const void *buf, size_t len, struct sw_msg *out, struct sw_err *err) {
  memset(out, 0, sizeof *out);
  if (!buf && len) return sw_err_set(err, SW_EPROTO, "frame: no data");
  if (len > SW_MSG_FRAME_MAX)
    return sw_err_set(err, SW_EPROTO, "frame: %zu bytes exceeds %u", len, SW_MSG_FRAME_MAX);
  const char *nul_field = "?";
  if (len && has_embedded_nul(&splatsweep__envelope__descriptor, buf, len, 0, &nul_field))
    return sw_err_set(err, SW_EPROTO, "frame: string field %s with an embedded NUL", nul_field);
  Splatsweep__Envelope *env =
      splatsweep__envelope__unpack(NULL, len, len ? (const uint8_t *)buf : (const uint8_t *)"");
  if (!env) return sw_err_set(err, SW_EPROTO, "frame: not a protobuf Envelope (%zu bytes)", len);
  out->protocol = env->protocol;
  out->seq = env->seq;
  if (env->protocol != SW_PROTOCOL_VERSION) {
    out->bad_protocol = true;
    splatsweep__envelope__free_unpacked(env, NULL);
    return sw_err_set(err, SW_EPROTO, "frame: protocol version %u, this side speaks %u",
                      out->protocol, SW_PROTOCOL_VERSION);
  }
  int rc = dec_body(out, env, err);
  splatsweep__envelope__free_unpacked(env, NULL);
  if (!rc) rc = sw_msg_validate(out, err);
  if (rc) {
    /* Keep the caller's view simple: after an error there is nothing to use but it is still
     * safe (and a no-op) to clear. The seq stays for a Reject that echoes it. */
    uint64_t seq = out->seq;
    sw_msg_clear(out);
    out->seq = seq;
    out->protocol = SW_PROTOCOL_VERSION;
  }
  return rc;
}
