/* sw_msg.h: every message of the splatsweep wire protocol as plain C structs.
 *
 * The wire format is protobuf (proto/splatsweep.proto), but no code outside the codec
 * (sw_codec.c) sees protobuf-c types: daemons build and read these structs, and
 * sw_codec_encode / sw_codec_decode convert. docs/protocol.md is the grammar and the state
 * machine; DESIGN.md section 4 the contract.
 *
 * Memory: short strings (ids, names, fingerprint fields) are fixed NUL-terminated arrays, so
 * most messages are built without allocation. Long text (JSON, YAML, report bodies, reasons)
 * and lists are heap pointers. sw_msg_clear() frees every non-NULL pointer in the message and
 * zeroes it: call it on what sw_codec_decode() filled, and on messages you built with
 * malloc'd pointers (strdup, sw_msg_kv_add...). A message built with borrowed pointers may be
 * encoded but must not be cleared.
 *
 * Ids: numeric ids (sweep, gate, pair, run, lease) are the store's 64-bit row ids and 0 means
 * "none". Worker and session ids are text of at most SW_MSG_ID_MAX bytes. */
#ifndef SW_MSG_H
#define SW_MSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sw_err.h"

#define SW_PROTOCOL_VERSION 1u

/* Limits the codec enforces on both encode and decode (bytes, excluding the NUL). */
#define SW_MSG_ID_MAX 128           /* worker id, session id, arm / grid point label */
#define SW_MSG_NAME_MAX 256         /* fingerprint fields, file names, kv keys, capability names */
#define SW_MSG_VALUE_MAX 1024       /* kv values */
#define SW_MSG_TEXT_MAX 65536       /* reasons, error text */
#define SW_MSG_JSON_MAX (8u << 20)  /* every JSON text field (config, result, specs, status) */
#define SW_MSG_BODY_MAX (12u << 20) /* report bodies (html with charts) */
#define SW_MSG_YAML_MAX (1u << 20)  /* a submitted spec */
#define SW_MSG_RUNS_MAX 64          /* runs in one Assign */
/* What one worker's Hello may carry. The coordinator keeps every Hello and echoes labels,
 * extras and capabilities in status replies, so these bound what 30 workers can make a status
 * reply cost (a Hello stays under ~40 KiB). */
#define SW_MSG_LABELS_MAX 32    /* labels in a Hello */
#define SW_MSG_EXTRA_MAX 64     /* fingerprint extra entries */
#define SW_MSG_KV_MAX 64        /* any kv list (the larger of the two above) */
#define SW_MSG_KEY_MAX 64       /* a label / extra key, a capability / feature name */
#define SW_MSG_KV_VALUE_MAX 256 /* a label / extra value */
#define SW_MSG_LIST_MAX 16      /* capabilities, features */
/* Window samples per RunFinished (each list): the worker keeps at most this many (one a second
 * for 5.5 hours); 200,000 samples in one frame stalled the coordinator's loop for 1.2 s. */
#define SW_MSG_SAMPLES_MAX 20000
/* Epochs count a pair's attempts; anything above this is refused so that no peer can send a
 * value that a narrower integer would wrap (2^32 + 1 read as 1): it fits int32 and uint32. */
#define SW_MSG_EPOCH_MAX ((1ull << 31) - 1)
#define SW_MSG_ENV_MAX 4096          /* bytes of one environment JSON in RunFinished */
#define SW_MSG_FRAME_MAX (16u << 20) /* = ZMQ_MAXMSGSIZE the daemons set */
#define SW_MSG_URL_MAX 256           /* the artifact store's URL in Assign */
#define SW_MSG_TOKEN_LEN 64          /* an upload token: hex digits */
#define SW_MSG_ARTIFACTS_MAX 64      /* artifacts in one RunFinished */
#define SW_MSG_ARTIFACT_NAME_MAX 128 /* "renders/NAME.png" */

enum sw_msg_type {
  SW_MSG_NONE = 0,
  /* worker endpoint */
  SW_MSG_HELLO,        /* worker -> coordinator */
  SW_MSG_WELCOME,      /* coordinator -> worker */
  SW_MSG_READY,        /* worker -> coordinator: idle, give me work */
  SW_MSG_ASSIGN,       /* coordinator -> worker: a lease with its runs in order */
  SW_MSG_RUN_STARTED,  /* worker -> coordinator */
  SW_MSG_PROGRESS,     /* worker -> coordinator */
  SW_MSG_RUN_FINISHED, /* worker -> coordinator: result, resent until acknowledged */
  SW_MSG_LEASE_DONE,   /* worker -> coordinator */
  SW_MSG_ACK,          /* coordinator -> worker: result committed */
  SW_MSG_CANCEL,       /* coordinator -> worker: abort the lease */
  SW_MSG_HEARTBEAT,    /* both ways */
  SW_MSG_REJECT,       /* coordinator -> worker (or either way): refused, with a reason */
  /* control endpoint */
  SW_MSG_SUBMIT_REQ,
  SW_MSG_SUBMIT_REP,
  SW_MSG_STATUS_REQ,
  SW_MSG_STATUS_REP,
  SW_MSG_REPORT_REQ,
  SW_MSG_REPORT_REP,
  SW_MSG_CANCEL_REQ,
  SW_MSG_CANCEL_REP,
  SW_MSG_ERROR, /* control endpoint: the request failed */
  SW_MSG_TYPE_COUNT
};

enum sw_gpu_kind {
  SW_GPU_UNKNOWN = 0,
  SW_GPU_DISCRETE = 1,
  SW_GPU_INTEGRATED = 2,
  SW_GPU_CPU = 3, /* lavapipe, swiftshader */
  SW_GPU_NONE = 4,
  SW_GPU_KIND_COUNT
};

enum sw_reject_code {
  SW_REJECT_UNSPECIFIED = 0,
  SW_REJECT_PROTOCOL = 1,     /* unknown protocol version */
  SW_REJECT_MALFORMED = 2,    /* frame failed validation */
  SW_REJECT_UNKNOWN = 3,      /* no session: say Hello first */
  SW_REJECT_STALE_LEASE = 4,  /* lease expired / epoch moved on: abort it */
  SW_REJECT_INCOMPATIBLE = 5, /* missing capability or feature */
  SW_REJECT_SHUTDOWN = 6,     /* coordinator is going away */
  SW_REJECT_CODE_COUNT
};

enum sw_msg_format {
  SW_FMT_TEXT = 0,
  SW_FMT_MD = 1,
  SW_FMT_JSON = 2,
  SW_FMT_HTML = 3,
  SW_FMT_COUNT
};

/* A key/value pair (fingerprint extras, labels). The arrays are sized for the older, wider
 * limits; validation holds keys to SW_MSG_KEY_MAX and values to SW_MSG_KV_VALUE_MAX bytes. */
struct sw_msg_kv {
  char key[SW_MSG_NAME_MAX + 1];
  char value[SW_MSG_VALUE_MAX + 1];
};

/* A short name (capability, protocol feature): at most SW_MSG_KEY_MAX bytes on the wire. */
struct sw_msg_name {
  char name[SW_MSG_NAME_MAX + 1];
};

struct sw_msg_fingerprint {
  char hostname[SW_MSG_NAME_MAX + 1];
  char os[SW_MSG_NAME_MAX + 1];   /* e.g. "Linux 6.1.0" */
  char arch[SW_MSG_NAME_MAX + 1]; /* e.g. "x86_64", "arm64" */
  char cpu_model[SW_MSG_NAME_MAX + 1];
  uint32_t cores;
  uint64_t mem_bytes;
  char gpu_name[SW_MSG_NAME_MAX + 1];
  char gpu_driver[SW_MSG_NAME_MAX + 1];
  char gpu_api[SW_MSG_NAME_MAX + 1]; /* e.g. "vulkan 1.3" */
  enum sw_gpu_kind gpu_kind;
  char machine_id[SW_MSG_NAME_MAX + 1]; /* host identity; "" from old workers */
  struct sw_msg_kv *extra;              /* free-form, e.g. {"kernel": "..."} */
  size_t n_extra;
};

struct sw_msg_hello {
  char worker_id[SW_MSG_ID_MAX + 1]; /* non-empty */
  struct sw_msg_fingerprint fp;
  struct sw_msg_kv *labels; /* from --label k=v */
  size_t n_labels;
  struct sw_msg_name *capabilities; /* runner names: "exec", "builtin" */
  size_t n_capabilities;
  char trainer_sha256[65];      /* lowercase hex of splat-train, or "" when none */
  struct sw_msg_name *features; /* protocol features the worker speaks */
  size_t n_features;
};

struct sw_msg_welcome {
  char session_id[SW_MSG_ID_MAX + 1]; /* non-empty */
  uint32_t heartbeat_ms;              /* > 0 */
  uint32_t liveness;                  /* intervals of silence before a peer is offline, > 0 */
  uint32_t lease_ttl_ms;              /* > 0 */
};

/* Contamination rules the worker applies around each run (spec `contamination`). */
struct sw_msg_contamination {
  double load1_max;     /* 0 = load1 not checked */
  double cpu_other_max; /* cores busy outside the trainer */
  double settle_s;      /* quiet time required before a run */
  double max_wait_s;    /* bound on waiting for quiet */
  double sample_interval_s;
  bool require_windows;
  bool rerun_once;
  double cpu_other_mean_max; /* limit on a window's mean cpu_other (0 from an older peer) */
  double over_max_s;         /* time a window may spend above cpu_other_max, seconds */
  bool gpu_foreign;          /* a foreign process on the trainer's GPU flags the run */
  bool shared_host;          /* the spec accepts a host shared with other workers */
};

/* One run of a lease. The JSON texts are objects (validated). */
struct sw_msg_run {
  uint64_t run_id;             /* non-zero */
  char arm[SW_MSG_ID_MAX + 1]; /* "off" / "on" (gate: non-empty), or a grid point label */
  char *config_json;           /* resolved trainer config */
  char *trainer_json;          /* trainer spec: {"builtin":{..}} or {"exec":{..}} */
  char *scene_json;            /* scene spec, "{}" when none */
  char artifact_token[SW_MSG_TOKEN_LEN + 1]; /* "" or 64 hex digits */
};

struct sw_msg_assign {
  uint64_t lease_id; /* non-zero */
  uint64_t epoch;
  int64_t deadline_ms;                 /* unix ms at which the lease expires unless renewed */
  uint64_t sweep_id, gate_id, pair_id; /* gate_id is 0 for grid runs */
  uint32_t attempt;                    /* >= 1 */
  struct sw_msg_run *runs;             /* in the order to run them; 1..SW_MSG_RUNS_MAX */
  size_t n_runs;
  struct sw_msg_contamination contamination;
  char artifact_url[SW_MSG_URL_MAX + 1]; /* "" or http(s)://...: the artifact store */
  uint64_t artifact_max_bytes;           /* the largest file the store takes */
  bool artifact_ply;                     /* final.ply wanted */
};

struct sw_msg_run_started {
  uint64_t lease_id, epoch, run_id;
  uint32_t attempt;
  double waited_s; /* time spent waiting for a quiet machine */
};

struct sw_msg_progress {
  uint64_t lease_id, epoch, run_id;
  uint32_t attempt;
  uint64_t iter;
  double train_s;
  double loss;
  uint64_t splats;
};

/* One load-sampler record. All values finite and >= 0. */
struct sw_msg_sample {
  int64_t t_ms; /* offset from the run's start (negative in the pre-run window) */
  double load1;
  double cpu_other;   /* cores busy outside the trainer */
  double cpu_total;   /* cores busy in all */
  uint64_t mem_avail; /* bytes */
  double cpu_trainer; /* cores busy in the trainer's process tree */
  double cpu_self;    /* cores busy in splatsweep's own processes (worker, local coordinator) */
  bool has_gpu;       /* the gpu_* figures below were sampled */
  double gpu_util;    /* percent, 0..100 */
  double gpu_sm_mhz;
  double gpu_temp_c;
  double gpu_power_w;
  uint64_t gpu_throttle; /* NVML clock-event reason bits */
  int32_t gpu_foreign;   /* processes on the trainer's GPU that are not ours; -1 unknown */
};

/* One artifact named in RunFinished (sw_msg_artifact_name_ok says which names are valid). */
struct sw_msg_artifact {
  char name[SW_MSG_ARTIFACT_NAME_MAX + 1];
  uint64_t size;
  char sha256[65];
};

/* 1 when name is a valid artifact name: one or two '/'-separated parts of [A-Za-z0-9._-], none
 * empty or starting with '.', at most SW_MSG_ARTIFACT_NAME_MAX bytes (never a path outside). */
int sw_msg_artifact_name_ok(const char *name);

struct sw_msg_run_finished {
  uint64_t lease_id, epoch, run_id;
  uint32_t attempt;
  int32_t exit_status; /* trainer exit code (section 7), or 128+signal */
  double wall_s;
  double waited_s;   /* time spent waiting for quiet before the run */
  bool quiet;        /* the machine reached quiet before max_wait_s */
  char *result_json; /* result.json as a JSON object, or NULL when the run produced none */
  char *error;       /* why it failed, NULL when it did not */
  struct sw_msg_sample *samples; /* during the run */
  size_t n_samples;
  struct sw_msg_sample *pre_samples; /* the pre-run (settle) window */
  size_t n_pre_samples;
  char *env_before; /* the worker's environment JSON object before the run; NULL when not sent */
  char *env_after;  /* ... and after it (SW_MSG_ENV_MAX bytes at most each) */
  int64_t run_start_wall_ms, run_end_wall_ms; /* the trainer's start / end, ms since epoch */
  struct sw_msg_artifact *artifacts;          /* owned; n_artifacts <= SW_MSG_ARTIFACTS_MAX */
  size_t n_artifacts;
};

struct sw_msg_lease_done {
  uint64_t lease_id, epoch;
};

struct sw_msg_ack {
  uint64_t ack_seq; /* seq of the RunFinished acknowledged */
  uint64_t run_id;
  uint32_t attempt;
};

struct sw_msg_cancel {
  uint64_t lease_id;
  char *reason; /* may be NULL */
};

struct sw_msg_heartbeat {
  uint64_t lease_id; /* 0 = idle */
  uint64_t epoch;
};

struct sw_msg_reject {
  enum sw_reject_code code;
  char *reason; /* may be NULL */
};

struct sw_msg_submit_req {
  char file_name[SW_MSG_NAME_MAX + 1]; /* for error positions; may be "" */
  char *spec_yaml;                     /* non-NULL */
};

struct sw_msg_submit_rep {
  uint64_t sweep_id; /* 0 when error is set */
  char *error;       /* NULL on success; FILE:LINE:COLUMN: message lines on a bad spec */
};

struct sw_msg_status_req {
  uint64_t sweep_id; /* 0 = every sweep */
  enum sw_msg_format format;
  uint64_t workers_offset; /* the page of workers (and sessions) listed: first index, */
  uint32_t workers_limit;  /* and how many (0 = the coordinator's default page) */
};

struct sw_msg_status_rep {
  enum sw_msg_format format;
  char *body; /* JSON object text when format is SW_FMT_JSON (validated), else text */
};

struct sw_msg_report_req {
  uint64_t sweep_id; /* 0 = the latest sweep */
  enum sw_msg_format format;
};

struct sw_msg_report_rep {
  enum sw_msg_format format;
  char *body; /* JSON object text when format is SW_FMT_JSON (validated) */
};

struct sw_msg_cancel_req {
  uint64_t sweep_id; /* non-zero */
  char *reason;      /* may be NULL */
};

struct sw_msg_cancel_rep {
  uint64_t sweep_id;
  uint32_t runs_cancelled;
};

struct sw_msg_error {
  int32_t code; /* a negative SW_E* code */
  char *message;
};

struct sw_msg {
  uint32_t protocol; /* SW_PROTOCOL_VERSION; 0 on encode means "the current version" */
  uint64_t seq;      /* per-sender counter, echoed in Ack */
  enum sw_msg_type type;
  /* Set by sw_codec_decode when the frame parsed but spoke another protocol version: the
   * caller answers Reject(SW_REJECT_PROTOCOL). protocol and seq hold what was received. */
  bool bad_protocol;
  union {
    struct sw_msg_hello hello;
    struct sw_msg_welcome welcome;
    struct sw_msg_assign assign;
    struct sw_msg_run_started run_started;
    struct sw_msg_progress progress;
    struct sw_msg_run_finished run_finished;
    struct sw_msg_lease_done lease_done;
    struct sw_msg_ack ack;
    struct sw_msg_cancel cancel;
    struct sw_msg_heartbeat heartbeat;
    struct sw_msg_reject reject;
    struct sw_msg_submit_req submit_req;
    struct sw_msg_submit_rep submit_rep;
    struct sw_msg_status_req status_req;
    struct sw_msg_status_rep status_rep;
    struct sw_msg_report_req report_req;
    struct sw_msg_report_rep report_rep;
    struct sw_msg_cancel_req cancel_req;
    struct sw_msg_cancel_rep cancel_rep;
    struct sw_msg_error error;
  } u; /* Ready has no body fields */
};

/* Zeroes msg and sets its type and the current protocol version. */
void sw_msg_init(struct sw_msg *msg, enum sw_msg_type type);

/* Frees every heap pointer of msg (strings, lists) and zeroes it. NULL is a no-op. */
void sw_msg_clear(struct sw_msg *msg);

/* Static name of a type, e.g. "RunFinished"; "?" when out of range. */
const char *sw_msg_type_name(enum sw_msg_type type);

/* Name of a gpu kind ("discrete", "integrated", "cpu", "none", "unknown") and back.
 * sw_gpu_kind_parse returns SW_GPU_UNKNOWN for anything else. */
const char *sw_gpu_kind_name(enum sw_gpu_kind kind);
enum sw_gpu_kind sw_gpu_kind_parse(const char *name);

/* Name of a format ("text", "md", "json", "html") and back: returns 0 and sets *out, or
 * SW_EINVAL for an unknown name. */
const char *sw_msg_format_name(enum sw_msg_format fmt);
int sw_msg_format_parse(const char *name, enum sw_msg_format *out);

/* Appends one entry to a kv list (labels, fingerprint extras) or a name list, growing it with
 * realloc. Returns 0, SW_EINVAL when a text is too long (keys and names SW_MSG_KEY_MAX, values
 * SW_MSG_KV_VALUE_MAX) or the list holds SW_MSG_KV_MAX / SW_MSG_LIST_MAX entries, SW_ENOMEM.
 * (Labels are bounded tighter by validation: SW_MSG_LABELS_MAX.) */
int sw_msg_kv_add(struct sw_msg_kv **list, size_t *n, const char *key, const char *value);
int sw_msg_name_add(struct sw_msg_name **list, size_t *n, const char *name);

/* Checks every field of msg against the rules the codec enforces (limits, UTF-8, JSON
 * objects, enums, finite numbers, required fields). Returns 0 or SW_EPROTO with the field
 * named in err ("Assign.runs[1].config_json: not a JSON object"). */
int sw_msg_validate(const struct sw_msg *msg, struct sw_err *err);

#endif
