/* sw_artifact.h: the coordinator's artifact store (docs/protocol.md "Artifacts", docs/store.md,
 * docs/operations.md).
 *
 * What a run leaves besides its result (result.json, trainer.log, final.ply, the PNGs under
 * renders/) is uploaded by its worker over HTTP once the result is acknowledged, and kept in files
 * beside the database: DIR/artifacts/SWEEP/RUN-aATTEMPT/NAME, where DIR is the database's
 * directory. The `artifacts` table (schema v5) has one row per file the RunFinished named, with its
 * size and sha256; a file is stored only when its upload has exactly that size and hash.
 *
 * Authentication: every run of an Assign carries an upload token, HMAC-SHA256 of "RUN:ATTEMPT"
 * under a 32-byte key kept in DIR/artifacts/upload.key (mode 0600, made on first start). The
 * Assign travels over the authenticated ZeroMQ channel, so only the worker holding the lease
 * learns it; a token opens that run attempt's uploads and nothing else, and only once the
 * coordinator stored the result that named them.
 *
 * Threads: the upload server is a libmicrohttpd daemon on its own internal thread with its own
 * read-write SQLite connection (WAL); the coordinator's poll loop only inserts the expected rows
 * (sw_artifact_expect) in a short transaction and computes tokens. The same thread applies the
 * retention rule of each sweep's spec (artifacts.keep_sweeps, keep_days) at start and every
 * minute.
 *
 * Upload route: PUT /upload/RUN/ATTEMPT/NAME with "Authorization: Bearer TOKEN" and a
 * Content-Length equal to the announced size. Answers: 201 stored; 200 already stored; 400 bad
 * path; 401 no or wrong token; 404 no such expected artifact (result not stored yet, or never
 * named); 409 refused (over the size limit, not wanted, deleted); 411 no Content-Length; 413 a
 * length other than announced; 422 the body's sha256 differs (nothing is kept); 500 disk. */
#ifndef SW_ARTIFACT_H
#define SW_ARTIFACT_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "sw_artifact_files.h"
#include "sw_err.h"
#include "sw_msg.h"
#include "sw_spec.h"
#include "sw_store.h"

#define SW_ARTIFACT_KEY_LEN 32
#define SW_ARTIFACT_DEFAULT_PORT 7790

typedef struct sw_artifact sw_artifact_t;

struct sw_artifact_opts {
  const char *db_path; /* the coordinator's database (borrowed; copied) */
  const char *bind;    /* IPv4 address; NULL = 0.0.0.0 (workers upload from other machines) */
  int port;            /* 0 = ephemeral (sw_artifact_port) */
  const char *url;     /* the URL workers are told (at most SW_MSG_URL_MAX bytes); NULL =
                        * http://HOSTNAME:PORT, or http://BIND:PORT when bound to 127.x */
};

/* Loads the key DIR/artifacts/upload.key of the database at db_path, creating the folder and a
 * random key when absent. Returns 0, SW_EIO (unreadable, wrong size, cannot create). */
int sw_artifact_key_load(const char *db_path, uint8_t key[SW_ARTIFACT_KEY_LEN], struct sw_err *err);
/* The upload token of (run, attempt): 64 lowercase hex digits and a NUL. */
void sw_artifact_token(const uint8_t key[SW_ARTIFACT_KEY_LEN], uint64_t run_id, uint32_t attempt,
                       char out[SW_MSG_TOKEN_LEN + 1]);
/* DIR/artifacts of the database at db_path: sw_artifact_dir (read/sw_artifact_files.h). */

/* Records the artifacts a stored result named (idempotent: a resent result changes nothing), in
 * its own transaction. Files over rules->max_file_mb, or final.ply when rules->final_ply is
 * false, are recorded as refused with the reason. Returns 0, SW_ENOTFOUND (no such attempt),
 * SW_EDB. */
int sw_artifact_expect(sw_store_t *store, int64_t run_id, uint32_t attempt,
                       const struct sw_msg_artifact *a, size_t n,
                       const struct sw_spec_artifacts *rules, struct sw_err *err);

/* The sweep's artifacts as a list: sw_report_artifacts_json (the read side owns it). */

/* Applies every finished sweep's retention rule: deletes the files and marks the rows deleted.
 * now_wall_ms is the wall clock. Returns the number of files deleted, or a negative code. */
int sw_artifact_retain(sw_store_t *store, const char *db_path, int64_t now_wall_ms,
                       struct sw_err *err);

/* Starts the upload server. Returns 0, SW_EINVAL (address, port), SW_EIO (key), SW_ENET. */
int sw_artifact_start(const struct sw_artifact_opts *opts, sw_artifact_t **out, struct sw_err *err);
void sw_artifact_stop(sw_artifact_t **self_p);
int sw_artifact_port(const sw_artifact_t *self);
/* The URL workers are told (borrowed, owned by the server; sw_artifact_opts.url). */
const char *sw_artifact_url(const sw_artifact_t *self);

/* The dashboard's downloads: sw_artifact_serve (read/sw_artifact_files.h). */

#endif
