/* sw_err.h: error codes and the caller-owned error struct used by every splatsweep module.
 *
 * Functions return 0 on success or a negative SW_E* code. Detail goes into an optional
 * struct sw_err that the caller owns; the first error recorded wins, so the innermost, most
 * specific cause is what the user reads. Every API accepts err == NULL. */
#ifndef SW_ERR_H
#define SW_ERR_H

#include <stdarg.h>

enum sw_errcode {
  SW_OK = 0,
  SW_EINVAL = -1,    /* bad input from a user or a file: spec, config, scene, CLI */
  SW_EIO = -2,       /* file system or I/O failure (includes a full disk) */
  SW_ENOMEM = -3,    /* out of memory */
  SW_EPROTO = -4,    /* malformed or out-of-contract message from the network */
  SW_ENOTFOUND = -5, /* a named thing does not exist */
  SW_ESTATE = -6,    /* operation not valid in the current state */
  SW_EDB = -7,       /* SQLite failure */
  SW_ETIMEOUT = -8,  /* deadline passed */
  SW_EDEVICE = -9,   /* GPU / Vulkan failure */
  SW_ENET = -10,     /* ZeroMQ or curl failure */
  SW_ECHILD = -11,   /* a child process failed */
  SW_EDIVERGED = -12 /* training produced NaN / Inf */
};

#define SW_ERR_MSG_MAX 512

struct sw_err {
  int code;                 /* 0 until the first error is recorded */
  char msg[SW_ERR_MSG_MAX]; /* one line of text, no trailing newline */
};

/* Records an error unless one is already recorded (first error wins). err may be NULL.
 * Returns code, so callers can write `return sw_err_set(err, SW_EINVAL, "...")`. */
int sw_err_set(struct sw_err *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int sw_err_vset(struct sw_err *err, int code, const char *fmt, va_list ap);

/* Prefixes an already recorded message with context ("loading spec: ..."). No-op without error. */
void sw_err_prefix(struct sw_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Clears err so that it can be reused. */
void sw_err_clear(struct sw_err *err);

/* Static name of a code, e.g. "invalid input". */
const char *sw_strerror(int code);

#endif
