/* sw_artifact_files.h: the artifact store's files as the read side sees them (docs/protocol.md
 * "Artifacts", docs/store.md): their place beside the database and the dashboard's downloads.
 * The upload server that writes them and the retention rule that deletes them are the daemon's
 * (coordinator/sw_artifact.h); both use the places named here.
 *
 * A run's file is DIR/artifacts/SWEEP/RUN-aATTEMPT/NAME, where DIR is the database's directory;
 * a URL names it RUN/ATTEMPT/NAME. */
#ifndef SW_ARTIFACT_FILES_H
#define SW_ARTIFACT_FILES_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <microhttpd.h>

/* DIR/artifacts of the database at db_path into buf. */
void sw_artifact_dir(const char *db_path, char *buf, size_t cap);
/* The file of one artifact row: DIR/artifacts/SWEEP/RUN-aATTEMPT/NAME into buf. */
void sw_artifact_path(const char *db_path, int64_t sweep, int64_t run, int attempt,
                      const char *name, char *buf, size_t cap);
/* "RUN/ATTEMPT/NAME" of a URL -> its parts (name checked by sw_msg_artifact_name_ok); 0 or -1. */
int sw_artifact_parse_target(const char *p, int64_t *run, int *attempt, char *name, size_t cap);

/* A plain-text answer of at most 1 KiB on conn with the given HTTP status. */
enum MHD_Result sw_artifact_answer(struct MHD_Connection *conn, unsigned status, const char *fmt,
                                   ...) __attribute__((format(printf, 3, 4)));

/* For the dashboard (sw_http.c): answers GET /artifact/RUN/ATTEMPT/NAME (the stored file,
 * with its sha256 in an X-Content-SHA256 header) and GET /api/artifacts/SWEEP (the list,
 * sw_report_artifacts_json) on conn, reading the database at db_path. Returns libmicrohttpd's
 * MHD_Result as an int. */
int sw_artifact_serve(struct MHD_Connection *conn, const char *db_path, const char *url);

#endif
