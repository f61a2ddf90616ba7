/* sw_reader.h: the coordinator's slow reads, off its poll loop.
 *
 * A report over a large store takes seconds; rendered on the poll loop it would stop heartbeats
 * and every worker would look offline. The reader is one thread with its own read-only store
 * connection (WAL lets it read while the loop writes), fed over an inproc PAIR socket: the loop
 * hands it a request with the control client's routing id and goes on; the rendered reply comes
 * back on the same socket, which the loop polls, and the loop sends it (only the loop touches
 * the control socket). Requests are answered in order; at most SW_READER_QUEUE wait, more are
 * refused at once with a message. */
#ifndef SW_READER_H
#define SW_READER_H

#include <stddef.h>
#include <stdint.h>

#include "sw_err.h"

#define SW_READER_QUEUE 64
#define SW_READER_RID_MAX 256

typedef struct sw_reader sw_reader_t;

/* A finished request: the client's routing id, and the body (malloc'd, the caller frees) or the
 * error (code != 0, msg). */
struct sw_reader_reply {
  unsigned char rid[SW_READER_RID_MAX];
  size_t rid_len;
  int format; /* the request's report format (sw_report_format) */
  int code;   /* 0 or an SW_E* code */
  char *body;
  char msg[256];
};

/* Starts the thread; db_path is copied. The store is opened on the first request (and again
 * after a failure). Returns 0, SW_ENOMEM or SW_ENET (inproc sockets). */
int sw_reader_start(void *zmq_ctx, const char *db_path, sw_reader_t **out, struct sw_err *err);
/* The socket to poll for ZMQ_POLLIN (replies ready). */
void *sw_reader_socket(sw_reader_t *self);
/* Queues a report of sweep_id (0 = every sweep) in format for the client rid. Returns 0,
 * SW_ESTATE (SW_READER_QUEUE requests wait already), SW_EINVAL (rid too long), SW_ENET. */
int sw_reader_submit(sw_reader_t *self, const void *rid, size_t rid_len, int64_t sweep_id,
                     int format, struct sw_err *err);
/* Takes one finished reply without waiting: 1 (out filled), 0 (none ready). */
int sw_reader_take(sw_reader_t *self, struct sw_reader_reply *out);
/* Requests queued or being rendered. */
int sw_reader_pending(const sw_reader_t *self);
/* Stops the thread after the request in hand, closes its store; NULL-safe, nulls *self_p. */
void sw_reader_stop(sw_reader_t **self_p);

#endif
